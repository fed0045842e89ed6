#!/usr/bin/env bash
# Builds mans with AddressSanitizer + UndefinedBehaviorSanitizer (Debug, -O1)
# into BUILD_DIR (default build-asan) and runs under them every ctest that
# can run there: unit, unit_prism, unit_thread_teams, cli, gpu,
# backend_dispatch(_fails), the fuzz corpora and the HDF5 filter suite (unit_on_module repeats unit suites through the
# stand-in module: Release only, for time);
# any report fails the run. Left to the Release build: large and large_prism
# (several times their 11 GiB under ASan), install (builds consumers against
# the installed library), cli_faults (its LD_PRELOAD shim must come before
# the ASan runtime), h5_tools and h5py (uninstrumented HDF5 programs cannot
# load an ASan plugin) and h5_mpi (OpenMPI's own allocations show as leaks).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build-asan}"
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O1"
# No GPU modules: the Release build compiles them (about 2 min on 2 cores);
# nothing here runs GPU code, and `gpu` then checks only what needs no module.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DMANS_BUILD_BENCH=OFF \
      -DMANS_WITH_CUDA=OFF -DMANS_WITH_HIP=OFF \
      -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j"$(nproc)"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
cd "$build"
ctest --output-on-failure --timeout 1800 -j"$(nproc)" -R '^(unit|unit_prism|unit_thread_teams|cli|gpu|backend_dispatch|backend_dispatch_fails|backend_device_api|backend_device_api_decode_only|fuzz_corpus|h5_filter|fuzz_corpus_h5filter)$'
