#!/usr/bin/env bash
# Builds mans with AddressSanitizer + UndefinedBehaviorSanitizer (Debug, -O1)
# into BUILD_DIR (default build-asan) and runs the unit and CLI tests under
# them, and the HDF5 filter suite (our own binaries: the HDF5 tools cannot
# load an ASan plugin); any report fails the run. The >4 GiB test is left to the Release
# build (it would need several times its 9 GiB under ASan).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build-asan}"
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O1"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DMANS_BUILD_BENCH=OFF \
      -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j"$(nproc)"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$build"
ctest --output-on-failure --timeout 1800 -R '^(unit|cli|h5_filter|fuzz_corpus_h5filter)$'
