#!/usr/bin/env bash
# device-profile.sh - Nsight Compute sections of the two kernels that bound
# the device-memory API's MANS throughput, on the lent GPU machine:
# chunk_encode_blocks<unsigned short> and chunk_decode_blocks of the 1 GiB
# u16 bench in tests/gpu/device_api_check.cu (the last launch of each).
# Builds only the CUDA module and that check (sm_90 unless
# DEVICE_PROFILE_ARCHS says otherwise), with the carried headers:
#
#   scripts/device-carry.sh
#   run(command="scripts/device-profile.sh", carry=[".device-deps"], timeout_s=330)
#
# Then, for the encode kernel, where its warps wait: Nsight Compute's
# warp-state sampling per source line (the module built with -lineinfo),
# the 40 lines with the most samples (DEVICE_PROFILE_SOURCE=0 skips it).
#
# Writes $OUT/build.log, $OUT/encode.txt, $OUT/decode.txt, and
# $OUT/encode_source.csv (ncu's source page) with $OUT/encode_lines.txt.
# Exit: 0 all profiled, 1 a profile failed, 2 the build failed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
out="${OUT:-$PWD/device-profile-out}"
build="${DEVICE_PROFILE_BUILD:-$here/build-device-profile}"
deps="${DEVICE_DEPS:-$here/.device-deps}"
mkdir -p "$out"
nvcc_bin="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
ncu_bin="$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
t0=$(date +%s)
cmake -S "$here" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DMANS_WITH_HIP=OFF -DMANS_BUILD_BENCH=OFF \
  -DMANS_WITH_HDF5=OFF -DMANS_WITH_MPI=OFF -DMANS_BUILD_FUZZERS=OFF -DMANS_WITH_CUDA=ON \
  "-DCMAKE_CUDA_COMPILER=$nvcc_bin" "-DMANS_CUDA_ARCHITECTURES=${DEVICE_PROFILE_ARCHS:-90}" \
  -DMANS_XXHASH_HEADER_ONLY=ON "-DMANS_XXHASH_INCLUDE_DIR=$deps/include" "-DCMAKE_PREFIX_PATH=$deps" \
  -DCMAKE_CUDA_FLAGS=-lineinfo \
  >"$out/build.log" 2>&1 &&
  cmake --build "$build" -j"$(nproc)" --target mans_backend_cuda mans_device_api_check >>"$out/build.log" 2>&1 ||
  { echo "device-profile: build failed (build.log)"; tail -20 "$out/build.log"; exit 2; }
echo "device-profile: built in $(( $(date +%s) - t0 )) s; ncu: ${ncu_bin:-none}"
[ -n "$ncu_bin" ] || exit 1
check="$build/tests/mans_device_api_check"
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis
          --section SchedulerStats --section WarpStateStats)
status=0
# profile NAME REGEX SKIP: the (SKIP+1)-th launch of kernels matching REGEX.
profile() {
  MANS_BACKEND_PATH="$build/lib" timeout -k 5 "${DEVICE_PROFILE_LIMIT:-100}" "$ncu_bin" --clock-control none \
    --kernel-name-base demangled -k "regex:$2" --launch-skip "$3" --launch-count 1 "${sections[@]}" \
    "$check" --bench >"$out/$1.txt" 2>&1
  local rc=$?
  [ "$rc" -eq 0 ] || status=1
  echo "device-profile: $1: exit $rc ($(grep -c 'Section:' "$out/$1.txt") sections)"
  grep -E "Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Local Memory|Memory Throughput|Compute \(SM\) Throughput|Block Limit|Waves Per SM|Eligible Warps|No Eligible|Warp Cycles Per Issued" \
    "$out/$1.txt" | sed "s/^/device-profile: $1: /" | head -30
}
# device_api_check's launch order: every dtype (u16 and i16 chunks are
# 2-byte: two launches), then the bench (the third); the decoder also runs
# under PRISM retrieval, and the u16 bench's is its last launch (43rd).
profile encode 'chunk_encode_blocks<unsigned short>' 2
profile decode '^.*chunk_decode_blocks' "${DEVICE_PROFILE_DECODE_SKIP:-42}"

# source_profile NAME REGEX SKIP: warp-state samples of that launch per
# CUDA source line (file:line of the inlined headers), summed over the
# line's SASS instructions; the report is kept for ncu's own viewer.
# A run of its own (the bench once more, under a minute): if these
# untried options fail on the lent machine, the sections above still come.
source_profile() {
  MANS_BACKEND_PATH="$build/lib" timeout -k 5 "${DEVICE_PROFILE_LIMIT:-100}" "$ncu_bin" --clock-control none \
    --kernel-name-base demangled -k "regex:$2" --launch-skip "$3" --launch-count 1 \
    --section SourceCounters --section WarpStateStats --import-source yes -f -o "$out/$1_source" \
    "$check" --bench >"$out/$1_source.log" 2>&1
  local rc=$?
  if [ "$rc" -eq 0 ]; then
    "$ncu_bin" --import "$out/$1_source.ncu-rep" --page source --csv --print-source cuda,sass \
      >"$out/$1_source.csv" 2>>"$out/$1_source.log"
    rc=$?
  fi
  [ "$rc" -eq 0 ] || status=1
  echo "device-profile: $1 source: exit $rc"
  [ "$rc" -eq 0 ] && python3 "$here/scripts/ncu-source-lines.py" "$out/$1_source.csv" 40 \
    | tee "$out/$1_lines.txt" | sed "s/^/device-profile: $1 line: /"
}
[ "${DEVICE_PROFILE_SOURCE:-1}" = 0 ] || source_profile encode 'chunk_encode_blocks<unsigned short>' 2
echo "device-profile: total $(( $(date +%s) - t0 )) s, exit $status"
exit $status
