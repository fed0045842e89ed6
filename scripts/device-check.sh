#!/usr/bin/env bash
# device-check.sh - the checks that need a GPU, prepared for a machine that
# has one (needs only nvcc, CMake, a C++17 compiler and this repository's
# build dependencies; no apt, no network).
#
#   scripts/device-check.sh            # summary in $OUT, or ./device-check-out
#
# Builds libmans, the CUDA backend module and the tests (Release, no HIP,
# no benchmarks), then runs:
#   1. the module probe as libmans sees it (mans --backend auto --json),
#   2. ctest 'gpu': the GPU module tests ([gpu]); without a device they skip
#      themselves and say so,
#   3. the loader tests ([backend]).
# Without a device everything still passes (exit 0) and the summary says
# "no device". Exit status: 0 all passed (or skipped), 1 a check failed,
# 2 the build failed.
#
# Not here yet (not implemented): GPU MANS/PRISM encode/decode, byte
# equality of GPU and CPU streams, GPU benchmarks.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-$PWD/device-check-out}"
build="${DEVICE_CHECK_BUILD:-$here/build-device-check}"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
say() { echo "device-check: $*" | tee -a "$summary"; }

nvcc_bin="$(command -v nvcc || true)"
[ -z "$nvcc_bin" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc_bin=/usr/local/cuda/bin/nvcc
say "host $(hostname), $(date -u +%FT%TZ), commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/device-check: gpu: /' | tee -a "$summary"
else
  say "nvidia-smi not found"
fi
if [ -z "$nvcc_bin" ]; then
  say "nvcc not found: the CUDA module cannot be built"
  cuda_opt=-DMANS_WITH_CUDA=OFF
else
  say "nvcc: $("$nvcc_bin" --version | tail -1)"
  cuda_opt="-DMANS_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER=$nvcc_bin"
fi

t0=$(date +%s)
# shellcheck disable=SC2086
if ! cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release $cuda_opt -DMANS_WITH_HIP=OFF \
      -DMANS_BUILD_BENCH=OFF -DMANS_WITH_HDF5=OFF -DMANS_BUILD_FUZZERS=OFF >"$out/configure.log" 2>&1; then
  say "FAIL: configure (see configure.log)"; tail -20 "$out/configure.log"; exit 2
fi
if ! cmake --build "$build" -j "$jobs" --target mans_tests mans_cli >"$out/build.log" 2>&1; then
  say "FAIL: build (see build.log)"; grep -m 20 -E "error" "$out/build.log"; exit 2
fi
say "build: $(( $(date +%s) - t0 )) s (-j $jobs)"
[ -f "$build/lib/libmans_backend_cuda.so" ] && say "module: $build/lib/libmans_backend_cuda.so" || say "module: not built"

status=0
# 1. What libmans makes of the module (a one-line reason when not used).
printf 'device-check %s\n' "$(seq 1 1000)" >"$out/probe.u8"
if "$build/cli/mans" compress -i "$out/probe.u8" -o "$out/probe.mans" -t u8 --json \
     >"$out/probe.json" 2>&1; then
  say "backend report: $(sed -n 's/.*"backend":"\([^"]*\)".*/\1/p' "$out/probe.json")"
else
  say "FAIL: mans compress --backend auto"; status=1
fi
rm -f "$out/probe.u8" "$out/probe.mans"

# 2. + 3. GPU module and loader tests.
for spec in "gpu:[gpu]" "backend:[backend]"; do
  name="${spec%%:*}"; tags="${spec#*:}"
  if "$build/tests/mans_tests" "$tags" --success --reporter compact >"$out/test-$name.log" 2>&1; then
    say "PASS: tests $tags"
  else
    say "FAIL: tests $tags (see test-$name.log)"; status=1
  fi
  # Skips are warnings that name the reason: pass them on.
  grep -E "skipped|testing on" "$out/test-$name.log" | sed 's/^/device-check:   /' | sort -u | tee -a "$summary"
done
if grep -q "device checks skipped" "$out"/test-gpu.log 2>/dev/null; then
  say "no usable device: device checks skipped (not a failure)"
fi
say "done: exit $status"
exit $status
