#!/usr/bin/env bash
# Installs the Debian 12 packages that building, testing and benchmarking
# mans need. Idempotent: does nothing when everything is present.
set -euo pipefail

packages=(
  cmake g++ make pkg-config            # toolchain (OpenMP comes with g++)
  libxxhash-dev                        # checksums
  libcli11-dev                         # CLI
  catch2                               # tests (Catch2 v2)
  libbenchmark-dev                     # Google Benchmark
  libzstd-dev libhtscodecs-dev zstd    # peers in the benchmark comparison
  python3                              # test and dataset helpers
  clang libclang-rt-14-dev libomp-14-dev  # libFuzzer builds (scripts/run-fuzzers.sh)
  netcdf-bin hdf5-tools                # datasets/fetch.sh: netCDF -> raw arrays; h5repack/h5dump/h5diff tests
  libhdf5-dev                          # the HDF5 filter plugin (serial HDF5 1.10)
  libhdf5-openmpi-dev openmpi-bin      # the filter under parallel HDF5, mpiexec for its tests
  python3-h5py python3-numpy           # h5py test of the filter (Debian's h5py uses the same HDF5)
  hdf5-filter-plugin                   # LZ4 / BZIP2 HDF5 filters: peers in bench/hdf5
  ca-certificates
  # HIP backend module (backends/gpu, hipcc 5.2 for gfx90a/gfx908; no GPU needed).
  # The CUDA module needs nvcc (CUDA toolkit in /usr/local/cuda), not from apt.
  hipcc libamdhip64-dev rocm-device-libs librocprim-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
