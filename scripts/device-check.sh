#!/usr/bin/env bash
# device-check.sh - the checks that need a GPU, prepared for the lent GPU
# machine (x86-64, nvcc, CMake, a host g++; no apt, no network, none of our
# -dev packages). Run HERE first, then there:
#
#   scripts/device-carry.sh    # Debian's xxhash.h, Catch2 and CLI11 headers -> .device-deps/
#   run(command="scripts/device-check.sh", carry=[".device-deps"], timeout_s=600)
#
# Summary in $OUT/summary.txt (else ./device-check-out); 7 files in all
# (run returns at most 8): summary.txt, configure.log, build.log,
# test-gpu.log, test-backend.log, test-dispatch.log, cli.log.
#
# Builds libmans, the CUDA module (for the GPU's own architecture, from
# nvidia-smi), the tests and the CLI: Release, no HIP, HDF5, benchmarks or
# fuzzers; xxHash header-only (MANS_XXHASH_HEADER_ONLY) and Catch2/CLI11
# from .device-deps when it is there, else the system's. Then, each step
# under its own time limit (`timeout`) inside one budget:
#   1. the module probe as libmans sees it (mans compress --json);
#   2. device detection: `mans decompress --backend cuda` of a tiny
#      CPU-made stream. When it fails for want of a device (backend_status
#      says unavailable: "no CUDA device", the device count failing) and
#      nvidia-smi sees no GPU either, the checks that need one are skipped
#      and the summary says so: not a failure. Any other failure is one;
#   3. the GPU module tests ([gpu]: the warp rANS decoder against the
#      CPU's) and the loader tests ([backend], which check the module's
#      report line when it runs, the reason when it does not);
#   4. mans_tests "[dispatch]" with MANS_BACKEND_PATH=<build>/lib: the
#      cross-backend suite on the REAL CUDA module: MANS compression and
#      decompression dispatched to it (every dtype, mapping and size, real
#      fields when MANS_SHARED_DATA_DIR has them, about 6,300 damaged
#      streams): the GPU must write the CPU's bytes and give its error codes;
#   5. CLI round trips, compressed on the CPU and with --backend cuda (the
#      same bytes, cmp), decompressed with --backend cuda and --backend cpu,
#      compared with cmp: 0, 1 and 3 u16 elements, 3 u64; then 590,000,001
#      u16 values (1.18 GB = 1.10 GiB, six value shapes, from a generator
#      built here) with --stats: sizes, ratio, wall time and GB/s of each
#      compress and decompress (raw bytes / wall time, file I/O included;
#      the --stats line has the library's own MB/s).
#      The big files live in a scratch folder removed at exit. Without a
#      device only the CPU half runs;
#   6. PRISM: a smooth 512^3 f32 field (DEVICE_CHECK_PRISM_N; 0 skips)
#      compressed with --backend cpu and --backend cuda (cmp: the same
#      bytes), then the CPU's archive decompressed with both (cmp: the
#      same values), --stats and wall times of each. The PRISM
#      cross-backend suite itself is part of step 4 ([dispatch]).
#
# Budget: DEVICE_CHECK_BUDGET seconds for all of it (default 540, so that
# the summary is written inside run's 600 s); a step gets at most its own
# limit (x DEVICE_CHECK_LIMIT_SCALE) and what is left. Rehearsed with
# step 6 at 2377888 through the host stand-in module (PRISM_N 128, no big
# round trip, 2 cores shared with another build): build 341 s, checks
# 39 s, exit 0, the stand-in's PRISM archive the CPU's. Rehearsed again
# at 3f9d8a4 (2 cores, no GPU, empty build folder): configure 3 s, build
# 210 s, checks 20 s without a device (230 s of the budget); then through
# the host stand-in module into that build folder, 44 s in all ([dispatch]
# 4.4 s, the big round trip most of the rest), exit 0 both times. Measured
# before (machine shared with a CI job, e111eac): configure 3.5 s, build 188 s for sm_80 + sm_90, of which
# nvcc's one file is 166 s beside the rest (the encode kernels are new;
# 110 s at 1ecfb0c); checks 22 s without a device (the 1.1 GiB CPU round
# trip 17 s); through the host stand-in module, into the same build
# folder, 70 s in all: [dispatch] 21 s, the big round trip about 45 s (GPU
# compress, cmp, both decompresses). Expected on the 16-core H200
# machine, never run there: build 1-2 min (nvcc's file is the longest
# step), checks 1-3 min ([dispatch] makes about 6,650 small GPU calls:
# 175 streams compressed and decoded, 6,294 damaged ones decoded; the big
# compress and decode run one GPU thread per 128 KiB block), in all
# 2.5-5 min, well inside 8; a rerun on a warm machine reuses the build
# folder.
#
# Environment: OUT; DEVICE_CHECK_BUILD (build folder, default
# build-device-check); DEVICE_DEPS (default .device-deps); JOBS (default
# nproc); DEVICE_CHECK_BUDGET; DEVICE_CHECK_LIMIT_SCALE (default 1; more
# for a slow machine); DEVICE_CHECK_CMAKE_ARGS (more configure arguments);
# DEVICE_CHECK_CUDA_ARCHS (default: the GPU's compute capability, else
# the project's 80;90); DEVICE_CHECK_DATA_DIR (real fields for the tests,
# e.g. a carried copy of ../shared/data; relative to the repository);
# DEVICE_CHECK_BIG_ELEMS (0 skips the big round trip); DEVICE_CHECK_PROFILE
# (1: step 7, kernel times of the device-memory API bench under ncu); DEVICE_CHECK_PRISM_N
# (edge of the PRISM field, 0 skips); DEVICE_CHECK_WORK
# (where the scratch folder is made; default $TMPDIR, else /tmp);
# DEVICE_CHECK_MODULE_DIR (another module folder: a rehearsal without a
# GPU names the host stand-in's, <build>/tests/fixtures/coder);
# DEVICE_CHECK_COMMIT (the commit shown; default: the copy's git HEAD, which the
# device tool's copy may hold at an older commit than its files).
#
# Exit status: 0 all passed (or skipped for want of a device, as the
# summary says); 1 a check failed or hit its time limit; 2 configure or
# build failed; 3 none failed, but the budget ran out before all ran.
set -uo pipefail
ulimit -c 0 2>/dev/null || true

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
out="${OUT:-$PWD/device-check-out}"
build="${DEVICE_CHECK_BUILD:-$here/build-device-check}"
deps="${DEVICE_DEPS:-$here/.device-deps}"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
budget="${DEVICE_CHECK_BUDGET:-540}"
scale="${DEVICE_CHECK_LIMIT_SCALE:-1}"
big_elems="${DEVICE_CHECK_BIG_ELEMS:-590000001}"
prism_n="${DEVICE_CHECK_PRISM_N:-512}"
t_start=$(date +%s)
deadline=$((t_start + budget))
mkdir -p "$out" "${DEVICE_CHECK_WORK:-${TMPDIR:-/tmp}}"
work="$(mktemp -d "${DEVICE_CHECK_WORK:-${TMPDIR:-/tmp}}/mans-device-check.XXXXXX")" || exit 2
trap 'rm -rf "$work"' EXIT
summary="$out/summary.txt"
: >"$summary"
for f in configure build test-gpu test-backend test-dispatch cli; do : >"$out/$f.log"; done
cli_log="$out/cli.log"
say() { echo "device-check: $*" | tee -a "$summary"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

status=0        # 1 when a check failed
out_of_time=0   # 1 when a step could not run for want of budget
timeout_bin="$(command -v timeout || true)"

# step LIMIT LOG CMD...: runs CMD with output appended to LOG, killed after
# the smaller of LIMIT and the budget left. Sets rc (124/137: timed out; 125:
# not run, no budget left), secs (wall time), lim, and cut (1: lim is the
# budget's end, not the step's own limit).
step() {
  local want=$(($1 * scale)) log=$2 t0 left
  shift 2
  left=$((deadline - $(date +%s)))
  lim=$want; cut=0
  [ "$left" -lt "$lim" ] && { lim=$left; cut=1; }
  if [ "$lim" -lt 5 ]; then rc=125; secs=0; out_of_time=1; return 0; fi
  t0=$(now)
  if [ -n "$timeout_bin" ]; then
    "$timeout_bin" -k 10 "$lim" "$@" >>"$log" 2>&1; rc=$?
  else
    "$@" >>"$log" 2>&1; rc=$?
  fi
  secs=$(elapsed "$t0")
  return 0
}
# verdict NAME [LOG]: the PASS, FAIL, TIMEOUT, STOPPED or SKIP line of the last step.
verdict() {
  case $rc in
    0) say "PASS: $1 (${secs} s)" ;;
    125) say "SKIP: $1: time budget spent" ;;
    124|137)
      if [ "$cut" -eq 1 ]; then say "STOPPED: $1: the budget ran out (after ${lim} s)"; out_of_time=1
      else say "FAIL: $1: TIMEOUT after ${lim} s${2:+ (see $2)}"; status=1; fi ;;
    *) say "FAIL: $1: exit $rc${2:+ (see $2)}"; status=1 ;;
  esac
}

commit="${DEVICE_CHECK_COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo "?")}"
say "host $(hostname 2>/dev/null || cat /proc/sys/kernel/hostname), $(date -u +%FT%TZ), commit $commit, budget ${budget} s"
[ -z "$timeout_bin" ] && say "no timeout command: steps run without time limits"
gpu_seen=0
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/device-check: gpu: /' | tee -a "$summary"
  nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && gpu_seen=1
else
  say "nvidia-smi not found"
fi

# ---------------------------------------------------------------- tools
nvcc_bin="$(command -v nvcc || true)"
[ -z "$nvcc_bin" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc_bin=/usr/local/cuda/bin/nvcc
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DMANS_WITH_HIP=OFF -DMANS_BUILD_BENCH=OFF -DMANS_WITH_HDF5=OFF
            -DMANS_WITH_MPI=OFF -DMANS_BUILD_FUZZERS=OFF)
if [ -z "$nvcc_bin" ]; then
  say "nvcc not found: the CUDA module cannot be built"
  cmake_args+=(-DMANS_WITH_CUDA=OFF)
else
  say "nvcc: $("$nvcc_bin" --version | tail -1)"
  cmake_args+=(-DMANS_WITH_CUDA=ON "-DCMAKE_CUDA_COMPILER=$nvcc_bin")
  # Only the GPU's own architecture (nvcc is the build's longest step: 110 s
  # for sm_80 + sm_90 here, 49 s for sm_90); the default pair when nvidia-smi cannot say.
  archs="${DEVICE_CHECK_CUDA_ARCHS:-}"
  if [ -z "$archs" ] && [ "$gpu_seen" -eq 1 ]; then
    archs="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
  fi
  if [[ "$archs" =~ ^[0-9]+(\;[0-9]+)*$ ]]; then
    cmake_args+=("-DMANS_CUDA_ARCHITECTURES=$archs")
    say "CUDA architectures: $archs"
  fi
fi
if ! command -v cmake >/dev/null 2>&1; then say "FAIL: cmake not found"; exit 2; fi
say "cmake: $(cmake --version | head -1)"
# Ninja when there (also a Python venv's), else CMake's default (make).
ninja_bin="$(command -v ninja || true)"
if [ -z "$ninja_bin" ] && command -v python3 >/dev/null 2>&1; then
  py_bin_dir="$(dirname "$(command -v python3)")"
  [ -x "$py_bin_dir/ninja" ] && ninja_bin="$py_bin_dir/ninja"
fi
if [ -n "$ninja_bin" ]; then
  cmake_args+=(-G Ninja "-DCMAKE_MAKE_PROGRAM=$ninja_bin")
  gen=Ninja
else
  gen="Unix Makefiles"
fi
# A rerun on a warm machine reuses the build folder, unless it was made by
# another generator or for another source folder: then it starts over.
if [ -f "$build/CMakeCache.txt" ] && { ! grep -qx "CMAKE_GENERATOR:INTERNAL=$gen" "$build/CMakeCache.txt" ||
                                        ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$here" "$build/CMakeCache.txt"; }; then
  say "build folder $build was made for another generator or source: starting over"
  rm -rf "$build"
fi
# Header-only dependencies carried from the Debian machine (device-carry.sh).
if [ -f "$deps/include/xxhash.h" ]; then
  cmake_args+=(-DMANS_XXHASH_HEADER_ONLY=ON "-DMANS_XXHASH_INCLUDE_DIR=$deps/include" "-DCMAKE_PREFIX_PATH=$deps")
  say "deps: $deps ($(grep -h '^# [a-z]' "$deps/MANIFEST.txt" 2>/dev/null | sed 's/^# //' | paste -sd, - | sed 's/,/, /g'))"
else
  say "deps: no $deps/include/xxhash.h (scripts/device-carry.sh not run?): using the system's libxxhash, Catch2, CLI11"
fi
data_dir="${DEVICE_CHECK_DATA_DIR:-}"
[ -n "$data_dir" ] && [ "${data_dir#/}" = "$data_dir" ] && data_dir="$here/$data_dir"
[ -n "$data_dir" ] && cmake_args+=("-DMANS_SHARED_DATA_DIR=$data_dir")
# shellcheck disable=SC2206
[ -n "${DEVICE_CHECK_CMAKE_ARGS:-}" ] && cmake_args+=(${DEVICE_CHECK_CMAKE_ARGS})

# ---------------------------------------------------------------- build
step 180 "$out/configure.log" cmake -S "$here" -B "$build" "${cmake_args[@]}"
if [ "$rc" -ne 0 ]; then
  verdict configure configure.log; tail -25 "$out/configure.log"; say "done: exit 2"; exit 2
fi
t_conf=$secs
targets=(mans_tests mans_cli)
# The device-memory API check is a CUDA program: built with the CUDA module.
grep -q "^MANS_WITH_CUDA:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null && targets+=(mans_device_api_check)
step 420 "$out/build.log" cmake --build "$build" -j "$jobs" --target "${targets[@]}"
if [ "$rc" -ne 0 ]; then
  verdict build build.log; grep -m 20 -E "error|Error" "$out/build.log"; say "done: exit 2"; exit 2
fi
say "build: configure ${t_conf} s, build ${secs} s (-j $jobs, $gen)"
mans="$build/cli/mans"
tests="$build/tests/mans_tests"
# DEVICE_CHECK_MODULE_DIR: a rehearsal without a GPU points it at the host
# stand-in (<build>/tests/fixtures/coder) that compresses and decodes with
# the GPU kernels' per-block code.
module_dir="${DEVICE_CHECK_MODULE_DIR:-$build/lib}"
module="$module_dir/libmans_backend_cuda.so"
if [ -f "$module" ]; then say "module: $module"; else say "module: not built"; fi
export MANS_BACKEND_PATH="$module_dir"

# ---------------------------------------------------------------- 1. probe
printf 'device-check %s\n' "$(seq 1 1000)" >"$work/probe.u8"
step 60 "$work/probe.json" "$mans" compress -i "$work/probe.u8" -o "$work/probe.mans" -t u8 --json
{ echo "== probe: mans compress --json"; cat "$work/probe.json"; } >>"$cli_log"
if [ "$rc" -eq 0 ]; then
  say "backend report: $(sed -n 's/.*"backend":"\([^"]*\)".*/\1/p' "$work/probe.json")"
else
  verdict "probe (mans compress --backend auto)" cli.log
fi

# ---------------------------------------------------------------- 2. device detection
# A CPU-made stream decoded by the forced CUDA backend: exit 0 when a device
# decodes, exit 2 with the backend's reason when none is usable.
device=0
if [ ! -f "$module" ]; then
  say "no CUDA module: [dispatch] and GPU round trips skipped"
else
  printf '\001\002\377\177\020\040' >"$work/tiny.u16"
  step 60 "$cli_log" "$mans" compress -i "$work/tiny.u16" -o "$work/tiny.mans" -t u16 --backend cpu
  [ "$rc" -eq 0 ] || verdict "device probe: compress" cli.log
  echo "== device probe: mans decompress --backend cuda" >>"$cli_log"
  : >"$work/probe.err"
  step 120 "$work/probe.err" "$mans" decompress -i "$work/tiny.mans" -o "$work/tiny.out" --backend cuda --stats
  cat "$work/probe.err" >>"$cli_log"
  reason="$(grep -m1 'unavailable' "$work/probe.err" | sed 's/^.*unavailable: //')"
  if [ "$rc" -eq 0 ] && cmp -s "$work/tiny.u16" "$work/tiny.out"; then
    device=1
    say "device: $(grep -m1 -o 'cuda ([^)]*)' "$work/probe.err" || echo 'cuda'), decodes"
  elif [ "$rc" -eq 2 ] && grep -qE "no CUDA device|CUDA device count" "$work/probe.err" && [ "$gpu_seen" -eq 0 ]; then
    say "no usable device (backend_status says unavailable: $reason): [dispatch] and GPU round trips skipped (not a failure)"
  else
    [ "$rc" -eq 0 ] && rc=1  # decoded, but not the input
    verdict "device probe: mans decompress --backend cuda${reason:+ ($reason)}" cli.log
    [ "$gpu_seen" -eq 1 ] && say "  nvidia-smi sees a GPU, so the module should have found it"
  fi
fi

# ---------------------------------------------------------------- 3. module and loader tests
# The [backend] cases check against whatever the real module can do here
# (unavailable with a reason without a device, the module's line with one).
backend_spec="[backend]"
for spec in "gpu|[gpu]|180" "backend|$backend_spec|120"; do
  IFS='|' read -r name tags want <<<"$spec"
  step "$want" "$out/test-$name.log" "$tests" "$tags" --success --reporter compact
  verdict "tests ${tags%%~*}" "test-$name.log"
  # Skips are warnings that name the reason: pass them on.
  grep -E "skipped|testing on" "$out/test-$name.log" | sed 's/^/device-check:   /' | sort -u | tee -a "$summary"
done

# ---------------------------------------------------------------- 4. dispatch suite on the real module
if [ "$device" -eq 1 ]; then
  step 300 "$out/test-dispatch.log" "$tests" "[dispatch]" --durations yes
  verdict "tests [dispatch] on the CUDA module" test-dispatch.log
  grep -E "^(All tests passed|test cases:)" "$out/test-dispatch.log" | sed 's/^/device-check:   /' | tee -a "$summary"
  grep -E "no real data|not found" "$out/test-dispatch.log" | sed 's/^/device-check:   /' | sort -u | tee -a "$summary"
else
  echo "skipped: no usable CUDA device" >"$out/test-dispatch.log"
fi

# ---------------------------------------------------------------- 4b. device-memory API
# Chunks in device memory on a stream (mans_device.h): every dtype, 5 sizes,
# the CPU's streams; then 1 GiB of u16 timed device to device.
if [ "$device" -eq 1 ] && [ -x "$build/tests/mans_device_api_check" ]; then
  step 240 "$out/test-device-api.log" "$build/tests/mans_device_api_check" --bench
  if [ "$rc" -eq 77 ]; then  # no CUDA device (a rehearsal through the host stand-in)
    say "SKIP: device-memory API: $(grep -m1 SKIP "$out/test-device-api.log")"
  else
    verdict "device-memory API (mans_device_api_check --bench)" test-device-api.log
  fi
  grep -E "^(ok|FAIL|bench|PASS|device:)" "$out/test-device-api.log" | sed 's/^/device-check:   /' | tee -a "$summary"
fi

# ---------------------------------------------------------------- 5. CLI round trips
backends=(cpu)
[ "$device" -eq 1 ] && backends=(cuda cpu)
# roundtrip NAME DTYPE FILE: compress on the CPU (and on the GPU: the same
# bytes), decompress with each backend, cmp.
roundtrip() {
  local name=$1 dt=$2 raw=$3 b ok=1
  echo "== round trip $name" >>"$cli_log"
  step 60 "$cli_log" "$mans" compress -i "$raw" -o "$raw.mans" -t "$dt" --backend cpu
  if [ "$rc" -ne 0 ]; then verdict "round trip $name: compress" cli.log; return; fi
  if [ "$device" -eq 1 ]; then
    step 60 "$cli_log" "$mans" compress -i "$raw" -o "$raw.gpu.mans" -t "$dt" --backend cuda
    [ "$rc" -eq 0 ] && ! cmp "$raw.mans" "$raw.gpu.mans" >>"$cli_log" 2>&1 && rc=1
    [ "$rc" -eq 0 ] || { verdict "round trip $name: compress --backend cuda = cpu bytes" cli.log; ok=0; }
    rm -f "$raw.gpu.mans"
  fi
  for b in "${backends[@]}"; do
    step 60 "$cli_log" "$mans" decompress -i "$raw.mans" -o "$raw.$b" --backend "$b"
    [ "$rc" -eq 0 ] && ! cmp "$raw" "$raw.$b" >>"$cli_log" 2>&1 && rc=1
    [ "$rc" -eq 0 ] || { verdict "round trip $name --backend $b" cli.log; ok=0; }
  done
  local made=cpu
  [ "$device" -eq 1 ] && made="cpu, cuda (the same bytes)"
  [ "$ok" -eq 1 ] && say "PASS: round trip $name ($(stat -c %s "$raw") -> $(stat -c %s "$raw.mans") bytes; compressed: $made; decompressed: ${backends[*]})"
}
: >"$work/t0.u16"
printf '\064\022' >"$work/t1.u16"
printf '\000\000\377\377\001\200' >"$work/t3.u16"
printf '\001\000\000\000\000\000\000\000\377\377\377\377\377\377\377\377\011\010\007\006\005\004\003\002' >"$work/t3.u64"
roundtrip "0 x u16" u16 "$work/t0.u16"
roundtrip "1 x u16" u16 "$work/t1.u16"
roundtrip "3 x u16" u16 "$work/t3.u16"
roundtrip "3 x u64" u64 "$work/t3.u64"

# run_generator NAME SRC ARGS...: builds the generator SRC with the build's
# C++ compiler and runs it with ARGS (output in cli.log); sets rc and secs.
cxx="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"
run_generator() {
  local name=$1 src=$2
  shift 2
  echo "== $name: generator" >>"$cli_log"
  step 120 "$cli_log" "${cxx:-c++}" -O2 -std=c++17 -o "$src.bin" "$src"
  [ "$rc" -eq 0 ] && step 120 "$cli_log" "$src.bin" "$@"
}

# The big one: deterministic u16 data in 1 MiB segments of six shapes
# (detector-like, constant, random, small range, random walk, sparse), so
# that the blocks take different mappings.
if [ "$big_elems" -gt 0 ]; then
  cat >"$work/gen.cpp" <<'EOF'
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char** argv) {
    if (argc != 3) return 1;
    const unsigned long long n = std::strtoull(argv[1], nullptr, 10);
    std::FILE* f = std::fopen(argv[2], "wb");
    if (!f) return 2;
    const std::size_t seg = std::size_t{1} << 19;  // elements per 1 MiB segment
    std::vector<std::uint16_t> buf(seg);
    std::uint64_t s = 0x9E3779B97F4A7C15ull;
    std::uint16_t walk = 30000;
    for (unsigned long long done = 0, k = 0; done < n; ++k) {
        const std::size_t m = n - done < seg ? static_cast<std::size_t>(n - done) : seg;
        for (std::size_t i = 0; i < m; ++i) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;  // xorshift64
            const std::uint64_t r = s;
            std::uint16_t v;
            switch (k % 6) {
                case 0: v = static_cast<std::uint16_t>(1000 + ((i >> 6) & 255) + (r & 15)); break;
                case 1: v = 42; break;
                case 2: v = static_cast<std::uint16_t>(r >> 20); break;
                case 3: v = static_cast<std::uint16_t>(2100 + r % 2100); break;
                case 4: walk = static_cast<std::uint16_t>(walk + static_cast<int>(r & 7) - 3); v = walk; break;
                default: v = (r & 63) == 0 ? static_cast<std::uint16_t>(r >> 48) : 0; break;
            }
            buf[i] = v;
        }
        if (std::fwrite(buf.data(), 2, m, f) != m) return 3;
        done += m;
    }
    return std::fclose(f) == 0 ? 0 : 3;
}
EOF
  big="$work/big.u16"
  run_generator "big round trip" "$work/gen.cpp" "$big_elems" "$big"
  if [ "$rc" -ne 0 ]; then
    verdict "big round trip: generate $big_elems u16" cli.log
  else
    raw_bytes=$(stat -c %s "$big")
    say "big round trip: $big_elems u16 = $raw_bytes bytes ($(awk -v b="$raw_bytes" 'BEGIN { printf "%.2f GiB", b / 2^30 }')), generated in ${secs} s"
    echo "== big round trip: compress" >>"$cli_log"
    step 180 "$cli_log" "$mans" compress -i "$big" -o "$big.mans" -t u16 --backend cpu --stats
    if [ "$rc" -ne 0 ]; then
      verdict "big round trip: compress" cli.log
    else
      mans_bytes=$(stat -c %s "$big.mans")
      say "  compress (cpu): $raw_bytes -> $mans_bytes bytes, ratio $(awk -v a="$raw_bytes" -v b="$mans_bytes" 'BEGIN { printf "%.3f", a / b }'), ${secs} s wall, $(awk -v a="$raw_bytes" -v t="$secs" 'BEGIN { printf "%.2f", a / t / 1e9 }') GB/s"
      if [ "$device" -eq 1 ]; then
        # GPU compression of the same input must write the CPU's bytes.
        echo "== big round trip: compress --backend cuda" >>"$cli_log"
        : >"$work/stats.err"
        step 180 "$work/stats.err" "$mans" compress -i "$big" -o "$big.gpu.mans" -t u16 --backend cuda --stats
        cat "$work/stats.err" >>"$cli_log"
        csecs=$secs
        # A stream that differs is a failure (rc 1), not the verdict's PASS.
        [ "$rc" -eq 0 ] && step 120 "$cli_log" cmp "$big.mans" "$big.gpu.mans"
        if [ "$rc" -eq 0 ]; then
          say "PASS: big compress --backend cuda: ${csecs} s wall, $(awk -v a="$raw_bytes" -v t="$csecs" 'BEGIN { printf "%.2f", a / t / 1e9 }') GB/s (file I/O included); byte-identical to the CPU stream"
          grep -m1 -v '^$' "$work/stats.err" | sed 's/^/device-check:   stats: /' | tee -a "$summary"
        else
          verdict "big round trip: compress --backend cuda = cpu bytes" cli.log
        fi
        rm -f "$big.gpu.mans"
      fi
      for b in "${backends[@]}"; do
        echo "== big round trip: decompress --backend $b" >>"$cli_log"
        : >"$work/stats.err"
        step 180 "$work/stats.err" "$mans" decompress -i "$big.mans" -o "$big.$b" --backend "$b" --stats
        cat "$work/stats.err" >>"$cli_log"
        if [ "$rc" -ne 0 ]; then verdict "big round trip: decompress --backend $b" cli.log; rm -f "$big.$b"; continue; fi
        dsecs=$secs
        step 120 "$cli_log" cmp "$big" "$big.$b"
        if [ "$rc" -eq 0 ]; then
          say "PASS: big decompress --backend $b: ${dsecs} s wall, $(awk -v a="$raw_bytes" -v t="$dsecs" 'BEGIN { printf "%.2f", a / t / 1e9 }') GB/s (raw bytes / wall time, file I/O included); identical to the input"
        else
          verdict "big round trip: cmp after --backend $b" cli.log
        fi
        grep -m1 -v '^$' "$work/stats.err" | sed 's/^/device-check:   stats: /' | tee -a "$summary"
        rm -f "$big.$b"
      done
      [ "$device" -eq 1 ] || say "  compress and decompress --backend cuda: skipped (no usable device)"
    fi
  fi
  rm -f "$big" "$big.mans"
fi

# ---------------------------------------------------------------- 6. PRISM on the GPU
# A smooth f32 field of N^3 (N = DEVICE_CHECK_PRISM_N, default 512: 512 MiB)
# from a generator built here: compressed with --backend cpu and
# --backend cuda (the same bytes, cmp), --stats lines and wall times of
# both, then decompressed (CPU) once as a check that the archive reads.
if [ "$prism_n" -gt 0 ]; then
  cat >"$work/genf.cpp" <<'GEN'
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char** argv) {
    if (argc != 3) return 1;
    const long n = std::strtol(argv[1], nullptr, 10);
    std::FILE* f = std::fopen(argv[2], "wb");
    if (!f || n <= 0) return 2;
    std::vector<float> row(static_cast<std::size_t>(n));
    unsigned s = 12345;
    for (long z = 0; z < n; ++z)
        for (long y = 0; y < n; ++y) {
            for (long x = 0; x < n; ++x) {
                s = s * 1664525u + 1013904223u;
                row[x] = static_cast<float>(std::sin(x / 40.0) * std::cos(y / 55.0) +
                                            0.5 * std::sin(z / 30.0 + x / 90.0) + 1e-4 * (s >> 16) / 65536.0);
            }
            if (std::fwrite(row.data(), 4, row.size(), f) != row.size()) return 3;
        }
    return std::fclose(f) == 0 ? 0 : 3;
}
GEN
  field="$work/field.f32"
  dims="${prism_n}x${prism_n}x${prism_n}"
  run_generator "PRISM" "$work/genf.cpp" "$prism_n" "$field"
  if [ "$rc" -ne 0 ]; then
    verdict "PRISM: generate a $dims f32 field" cli.log
  else
    raw_bytes=$(stat -c %s "$field")
    say "PRISM: a smooth $dims f32 field, $raw_bytes bytes, --error-bound 1e-3 --rel"
    for b in cpu cuda; do
      if [ "$b" = cuda ] && [ "$device" -ne 1 ]; then
        say "  PRISM compress --backend cuda: skipped (no usable device)"
        continue
      fi
      echo "== PRISM: compress --backend $b" >>"$cli_log"
      : >"$work/stats.err"
      step 300 "$work/stats.err" "$mans" compress -i "$field" -o "$field.$b.prism" -t f32 --dims "$dims" \
        --error-bound 1e-3 --rel --backend "$b" --stats
      cat "$work/stats.err" >>"$cli_log"
      if [ "$rc" -ne 0 ]; then
        verdict "PRISM compress --backend $b" cli.log
        continue
      fi
      say "  PRISM compress --backend $b: ${secs} s wall, $(awk -v a="$raw_bytes" -v t="$secs" 'BEGIN { printf "%.2f", a / t / 1e9 }') GB/s (file I/O included), $(stat -c %s "$field.$b.prism") bytes"
      grep -m1 -v '^$' "$work/stats.err" | sed 's/^/device-check:   stats: /' | tee -a "$summary"
    done
    if [ -f "$field.cuda.prism" ] && [ -f "$field.cpu.prism" ]; then
      step 120 "$cli_log" cmp "$field.cpu.prism" "$field.cuda.prism"
      verdict "PRISM compress --backend cuda wrote the CPU's archive, byte for byte" cli.log
    fi
    if [ -f "$field.cpu.prism" ]; then
      for b in cpu cuda; do
        if [ "$b" = cuda ] && [ "$device" -ne 1 ]; then
          say "  PRISM decompress --backend cuda: skipped (no usable device)"
          continue
        fi
        echo "== PRISM: decompress --backend $b" >>"$cli_log"
        : >"$work/stats.err"
        step 300 "$work/stats.err" "$mans" decompress -i "$field.cpu.prism" -o "$field.$b.back" --backend "$b" --stats
        cat "$work/stats.err" >>"$cli_log"
        verdict "PRISM decompress --backend $b" cli.log
        if [ "$rc" -eq 0 ]; then
          say "  PRISM decompress --backend $b: ${secs} s wall, $(awk -v a="$raw_bytes" -v t="$secs" 'BEGIN { printf "%.2f", a / t / 1e9 }') GB/s (file I/O included)"
          grep -m1 -v '^$' "$work/stats.err" | sed 's/^/device-check:   stats: /' | tee -a "$summary"
        fi
      done
      if [ -f "$field.cuda.back" ] && [ -f "$field.cpu.back" ]; then
        step 120 "$cli_log" cmp "$field.cpu.back" "$field.cuda.back"
        verdict "PRISM decompress --backend cuda gave the CPU's values, byte for byte" cli.log
      fi
    fi
  fi
  rm -f "$field" "$field.cpu.prism" "$field.cuda.prism" "$field.cpu.back" "$field.cuda.back"
fi

# ---------------------------------------------------------------- 7. kernel times (DEVICE_CHECK_PROFILE=1)
# Nsight Compute over the device-memory API check with --bench: each
# kernel's launches and GPU time (gpu__time_duration), summed over the run
# and listed longest first in the summary; the raw CSV goes at the end of
# test-device-api.log. Launches are serialized, so the sums say where GPU
# time goes, not the bench's wall time.
if [ "${DEVICE_CHECK_PROFILE:-0}" = 1 ] && [ "$device" -eq 1 ] && [ -x "$build/tests/mans_device_api_check" ]; then
  ncu_bin="$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
  if [ -z "$ncu_bin" ]; then
    say "SKIP: kernel times: ncu not found"
  else
    echo "== ncu: $ncu_bin" >>"$out/test-device-api.log"
    step 240 "$work/ncu.csv" "$ncu_bin" --clock-control none --cache-control none --metrics gpu__time_duration.sum \
      --csv --page raw "$build/tests/mans_device_api_check" --bench
    verdict "kernel times (ncu over mans_device_api_check --bench)" test-device-api.log
    cat "$work/ncu.csv" >>"$out/test-device-api.log"
    python3 - "$work/ncu.csv" <<'PY' 2>&1 | sed 's/^/device-check:   /' | tee -a "$summary"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1], errors="replace")) if r]
head = next((i for i, r in enumerate(rows) if "Kernel Name" in r and "gpu__time_duration.sum" in r), None)
if head is None:
    print("no kernel rows in ncu's output"); sys.exit(0)
name, t = rows[head].index("Kernel Name"), rows[head].index("gpu__time_duration.sum")
unit = rows[head + 1][t] if head + 1 < len(rows) else "?"
scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6, "second": 1e6}.get(unit, float("nan"))
agg = {}
for r in rows[head + 2:]:
    if len(r) <= max(name, t): continue
    try: v = float(r[t].replace(",", "")) * scale
    except ValueError: continue
    k = r[name].split("(")[0][:90]
    n, s = agg.get(k, (0, 0.0))
    agg[k] = (n + 1, s + v)
total = sum(s for _, s in agg.values())
print("kernel times: %d launches, %.3f ms of GPU time in all" % (sum(n for n, _ in agg.values()), total / 1e3))
for k, (n, s) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:25]:
    print("  %10.3f ms %6d x  %s" % (s / 1e3, n, k))
PY
  fi
fi

if [ "$out_of_time" -eq 1 ] && [ "$status" -eq 0 ]; then status=3; fi
say "total: $(( $(date +%s) - t_start )) s of the ${budget} s budget"
say "done: exit $status"
exit $status
