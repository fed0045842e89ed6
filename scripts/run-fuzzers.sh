#!/usr/bin/env bash
# Builds the fuzz targets with clang + libFuzzer + ASan/UBSan into BUILD_DIR
# (default build-fuzz) and runs each, one per core at a time, from the generated seeds,
# the regression inputs and (fuzz_decompress) the golden vectors. Default (CI):
# a fixed seed and a fixed number of runs per target (25-50 s each here),
# so CI runs try nearly the same inputs (not bit for bit: libFuzzer reached
# cov 865-869 in three such runs of fuzz_decompress) and a failure leaves its
# reproducer.
# MANS_FUZZ_SECONDS=N runs each target for N seconds with a random seed
# instead (longer campaigns); MANS_FUZZ_TARGETS="prism block" runs only those.
# A crash, hang (-timeout), leak or broken property fails the run; the
# reproducer is left in BUILD_DIR/fuzz-artifacts. Each target's executions
# and coverage (libFuzzer cov: edges, ft: features) go to
# BUILD_DIR/fuzz-artifacts/summary.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build-fuzz}"
seconds="${MANS_FUZZ_SECONDS:-}"

# One line per target (binary fuzz_NAME): name, CI runs with seed 1, maximum
# input length, extra corpus folders (relative to the repository). The run
# counts give 25-50 s per target on this 2-core machine (measured, see
# docs/TESTING.md). A new target is one more line here.
targets=(
  "decompress 250000 65536 tests/golden"
  "block      170000 65536"
  "roundtrip    2900  8192"   # each run compresses twice and decompresses
  "prism       21000 65536"
  "h5filter     1200 65536"   # the HDF5 filter callback (built with HDF5); PRISM encodes + decodes
)
selected="${MANS_FUZZ_TARGETS:-}"

flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -g -O1"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMANS_BUILD_FUZZERS=ON -DMANS_BUILD_BENCH=OFF -DMANS_BUILD_CLI=OFF -DMANS_WITH_CUDA=OFF -DMANS_WITH_HIP=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
binaries=()
for line in "${targets[@]}"; do
  read -r t _ <<<"$line"
  if [ -z "$selected" ] || [[ " $selected " == *" $t "* ]]; then binaries+=("fuzz_$t"); fi
done
if [ ${#binaries[@]} -eq 0 ]; then
  echo "run-fuzzers: MANS_FUZZ_TARGETS='$selected' names no target" >&2
  exit 1
fi
seed_tools=(mans_fuzz_seeds)
[[ " ${binaries[*]} " == *" fuzz_h5filter "* ]] && seed_tools+=(mans_h5_fuzz_seeds)
cmake --build "$build" -j"$(nproc)" --target "${binaries[@]}" "${seed_tools[@]}"
seeds="$build/fuzz-seeds"
rm -rf "$seeds"
for tool in "${seed_tools[@]}"; do "$build/tests/fuzz/$tool" "$seeds" >/dev/null; done
mkdir -p "$build/fuzz-artifacts"
summary="$build/fuzz-artifacts/summary.txt"
: >"$summary"
export ASAN_OPTIONS="detect_leaks=1"

# One target: its run's log, exit status and seconds in fuzz-artifacts.
run_target() {
  local t=$1 runs=$2 max_len=$3 dirs=$4
  local corpus="$build/fuzz-corpus/$t" extra=() budget d
  for d in "$seeds/$t" "$root/tests/fuzz/regressions/$t"; do [ -d "$d" ] && extra+=("$d"); done
  for d in $dirs; do extra+=("$root/$d"); done
  if [ -n "$seconds" ]; then budget=(-max_total_time="$seconds"); else budget=(-runs="$runs" -seed=1); fi
  rm -rf "$corpus" && mkdir -p "$corpus"  # start from the committed seeds every time
  local start=$SECONDS rc=0
  "$build/tests/fuzz/fuzz_$t" "$corpus" "${extra[@]}" "${budget[@]}" -timeout=10 \
    -rss_limit_mb=4096 -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$t-" > "$build/fuzz-artifacts/$t.log" 2>&1 || rc=$?
  echo "$rc $((SECONDS - start)) ${budget[*]}" > "$build/fuzz-artifacts/$t.result"
}

# The targets run side by side, one per core (each is one process; the
# fixed seeds and run counts make the inputs independent of the order).
ran=()
for line in "${targets[@]}"; do
  read -r t runs max_len dirs <<<"$line"
  if [ -n "$selected" ] && [[ " $selected " != *" $t "* ]]; then continue; fi
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  rm -f "$build/fuzz-artifacts/$t.result"
  run_target "$t" "$runs" "$max_len" "$dirs" &
  ran+=("$t")
done
wait

passed=0
for t in "${ran[@]}"; do
  log="$build/fuzz-artifacts/$t.log"
  read -r rc elapsed budget < "$build/fuzz-artifacts/$t.result" || { rc=1; elapsed=?; budget=?; }
  echo "== fuzz_$t ($budget)"
  grep -E "^(Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY)" "$log" || true
  # The last status line ("#N DONE cov: C ft: F corp: ...") has the coverage reached.
  last=$(grep -E "^#[0-9]+.*cov: [0-9]+ ft: [0-9]+" "$log" | tail -1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(sed -E -n 's/.* cov: ([0-9]+) .*/\1/p' <<<"$last")
  ft=$(sed -E -n 's/.* ft: ([0-9]+) .*/\1/p' <<<"$last")
  corp=$(sed -E -n 's/.* corp: ([0-9]+\/[0-9a-zA-Z]+) .*/\1/p' <<<"$last")
  echo "fuzz_$t: ${execs:-?} executions in ${elapsed} s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}, exit $rc" |
    tee -a "$summary"
  if [ "$rc" -ne 0 ]; then
    tail -40 "$log"
    echo "fuzz_$t FAILED (exit $rc): reproducer in $build/fuzz-artifacts"
    exit 1
  fi
  passed=$((passed + 1))
done
echo "fuzzers: no crash, hang, leak or property failure"
echo "fuzzers: $passed passed, 0 failed"
