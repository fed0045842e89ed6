#!/usr/bin/env bash
# Command (2) of the README: install dependencies, build, run every test:
# the Release suite (unit, CLI, golden, install, >4 GiB stream, fuzz corpora),
# then the unit and CLI tests again under AddressSanitizer +
# UndefinedBehaviorSanitizer, then the threaded tests under ThreadSanitizer,
# then each libFuzzer target for a bounded time.
# .ci/run calls exactly this.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
BUILD_DIR="$build" "$root/scripts/build.sh" -DMANS_BUILD_TESTS=ON -DMANS_BUILD_BENCH=ON
(cd "$build" && ctest --output-on-failure --timeout 900 -j"$(nproc)")
BUILD_DIR="${SANITIZER_BUILD_DIR:-$root/build-asan}" "$root/scripts/run-sanitizers.sh"
BUILD_DIR="${TSAN_BUILD_DIR:-$root/build-tsan}" "$root/scripts/run-tsan.sh"
BUILD_DIR="${FUZZ_BUILD_DIR:-$root/build-fuzz}" "$root/scripts/run-fuzzers.sh"
