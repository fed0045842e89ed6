#!/usr/bin/env bash
# Builds the fuzz targets with clang + libFuzzer + ASan/UBSan into BUILD_DIR
# (default build-fuzz) and runs each from the generated seeds, the regression
# inputs and the golden vectors. Default (CI): a fixed seed and a fixed number
# of runs per target (about 30 s here), so every CI run tries the same inputs
# and a failure is reproducible. MANS_FUZZ_SECONDS=N runs each target for N
# seconds with a random seed instead (longer campaigns).
# A crash, hang (-timeout), leak or broken property fails the run; the
# reproducer is left in BUILD_DIR/fuzz-artifacts.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build-fuzz}"
seconds="${MANS_FUZZ_SECONDS:-}"
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -g -O1"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMANS_BUILD_FUZZERS=ON -DMANS_BUILD_BENCH=OFF -DMANS_BUILD_CLI=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j"$(nproc)" --target fuzz_decompress fuzz_block fuzz_roundtrip fuzz_prism mans_fuzz_seeds
seeds="$build/fuzz-seeds"
rm -rf "$seeds" && "$build/tests/fuzz/mans_fuzz_seeds" "$seeds"
mkdir -p "$build/fuzz-artifacts"
export ASAN_OPTIONS="detect_leaks=1"
for t in decompress block roundtrip prism; do
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus"
  extra=("$seeds/$t" "$root/tests/fuzz/regressions/$t")
  [ "$t" = decompress ] && extra+=("$root/tests/golden")
  max_len=65536
  case "$t" in  # fixed run counts: about 30 s each on 2 cores
    decompress) runs=100000 ;;
    block) runs=60000 ;;
    roundtrip) runs=1200 max_len=8192 ;;  # each run compresses twice and decompresses
    prism) runs=12000 ;;  # about 250 executions/s under ASan here
  esac
  if [ -n "$seconds" ]; then budget=(-max_total_time="$seconds"); else budget=(-runs="$runs" -seed=1); fi
  echo "== fuzz_$t (${budget[*]})"
  log="$build/fuzz-artifacts/$t.log"
  rc=0
  rm -rf "$corpus" && mkdir -p "$corpus"  # start from the committed seeds every time
  "$build/tests/fuzz/fuzz_$t" "$corpus" "${extra[@]}" "${budget[@]}" -timeout=10 \
    -rss_limit_mb=4096 -max_len="$max_len" -print_final_stats=1 \
    -artifact_prefix="$build/fuzz-artifacts/$t-" > "$log" 2>&1 || rc=$?
  grep -E "^(Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY)" "$log" || true
  if [ "$rc" -ne 0 ]; then
    tail -40 "$log"
    echo "fuzz_$t FAILED (exit $rc): reproducer in $build/fuzz-artifacts"
    exit 1
  fi
done
echo "fuzzers: no crash, hang, leak or property failure"
echo "fuzzers: 4 passed, 0 failed"
