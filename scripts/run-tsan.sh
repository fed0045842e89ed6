#!/usr/bin/env bash
# Builds the library and the Catch2 suite with ThreadSanitizer into BUILD_DIR
# (default build-tsan) and runs the tests that run threads or OpenMP: all of
# them but the >4 GiB test, the single-threaded corruption sweeps
# ([corruption], [zero_elim], one small stream at a time), the team tests
# played on one thread ([one_thread]) and the round trips
# ([roundtrip]: the same threaded block loops as [determinism], which runs
# them at 1, 2, 3 and 8 threads over every dtype; 47 s of the 151 here).
#
# libgomp is not instrumented (every barrier would look like a race), so this
# build uses clang with LLVM's libomp and its OMPT tool Archer (libomp-14-dev),
# which tells TSan about OpenMP's synchronisation (fork/join, barriers,
# reductions, locks). TSAN_OPTIONS=ignore_noninstrumented_modules=1 makes TSan
# skip memory accesses made inside uninstrumented libraries (the OpenMP runtime's
# own bookkeeping, libstdc++.so); every access in our code and in the headers
# it inlines is still checked. No suppressions are used. A deliberate race
# (tests/tsan/race_canary.cpp) must be reported, else the setup is hiding races
# and the job fails. Any report in the suite fails the job (TSan exit code 66).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build-tsan}"
flags="-fsanitize=thread -fno-omit-frame-pointer -g -O1"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMANS_BUILD_BENCH=OFF -DMANS_BUILD_CLI=OFF -DMANS_WITH_CUDA=OFF -DMANS_WITH_HIP=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null
cmake --build "$build" -j"$(nproc)" --target mans_tests

# Archer sits next to the libomp that CMake found.
libomp="$(sed -n 's/^OpenMP_omp_LIBRARY:FILEPATH=//p' "$build/CMakeCache.txt")"
archer="$(dirname "$(readlink -f "$libomp")")/libarcher.so"
if [ ! -f "$archer" ]; then
  echo "run-tsan: $archer not found (libomp-14-dev provides it; scripts/install-deps.sh)" >&2
  exit 1
fi
export OMP_TOOL_LIBRARIES="$archer"
export OMP_TOOL_VERBOSE_INIT="$build/omp-tool.log"
export TSAN_OPTIONS="ignore_noninstrumented_modules=1 halt_on_error=0 exitcode=66 ${TSAN_OPTIONS:-}"
# More threads than cores: uneven splits and real interleaving on small machines too.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-4}"
# Waiting threads sleep instead of spinning, as under ctest
# (tests/CMakeLists.txt): with 4 threads on 2 cores a spinning team waits
# for its descheduled members at every barrier.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"

# 1. The canary: the same flags and runtime must report its race.
clang++ $flags -fopenmp=libomp "$root/tests/tsan/race_canary.cpp" -o "$build/race_canary" \
  -Wl,-rpath,"$(dirname "$libomp")" -L"$(dirname "$libomp")"
rc=0
"$build/race_canary" >"$build/race_canary.log" 2>&1 || rc=$?
if [ "$rc" -ne 66 ] || ! grep -q "WARNING: ThreadSanitizer: data race" "$build/race_canary.log"; then
  cat "$build/race_canary.log"
  echo "run-tsan: the deliberate race in race_canary was not reported (exit $rc): the TSan setup hides races" >&2
  exit 1
fi
grep -q "Tool was started" "$OMP_TOOL_VERBOSE_INIT" || {
  cat "$OMP_TOOL_VERBOSE_INIT"; echo "run-tsan: Archer was not loaded" >&2; exit 1; }
echo "run-tsan: canary race reported, Archer loaded"

# 2. The suite.
# Hidden [dispatch*] cases need a stand-in module (their own ctests); an
# exclusion-only spec would run them. [one_thread]: the team tests that play
# a warp on one thread (LoopTeam; 135 s here, with nothing for TSan to
# see); the teams of real threads ([team] too) run.
# First the teams of real threads ([thread_team]) alone: beside a busy
# process each of their barriers waits for the scheduler to give every
# member a turn (tests/thread_team.hpp). Then two processes side by side,
# PRISM's cases and the rest (about equal).
spec="~[large]~[corruption]~[zero_elim]~[roundtrip]~[one_thread]~[dispatch]~[dispatch_fails]~[dispatch_wrong]~[dispatch_chunks]~[dispatch_chunks_decode]"
logs=("$build/tsan-teams.log" "$build/tsan-prism.log" "$build/tsan-rest.log")
start=$SECONDS
rc_teams=0
"$build/tests/mans_tests" "$spec[thread_team]" >"${logs[0]}" 2>&1 || rc_teams=$?
teams_s=$((SECONDS - start))
"$build/tests/mans_tests" "$spec[prism]~[thread_team]" >"${logs[1]}" 2>&1 &
prism_pid=$!
rc_rest=0
"$build/tests/mans_tests" "$spec~[prism]~[thread_team]" >"${logs[2]}" 2>&1 || rc_rest=$?
rc_prism=0
wait "$prism_pid" || rc_prism=$?
reports=0
for log in "${logs[@]}"; do
  tail -3 "$log"
  reports=$((reports + $(grep -c "^WARNING: ThreadSanitizer" "$log" || true)))
done
echo "run-tsan: $reports report(s), exit $rc_teams, $rc_prism and $rc_rest, $((SECONDS - start)) s (thread teams $teams_s s) with OMP_NUM_THREADS=$OMP_NUM_THREADS"
if [ "$rc_teams" -ne 0 ] || [ "$rc_prism" -ne 0 ] || [ "$rc_rest" -ne 0 ] || [ "$reports" -ne 0 ]; then
  grep -h -A30 "^WARNING: ThreadSanitizer" "${logs[@]}" | head -200
  echo "run-tsan: FAILED (full logs: ${logs[*]})" >&2
  exit 1
fi
echo "run-tsan: no data race"
