#!/usr/bin/env bash
# bench/hdf5/run.sh - the mans HDF5 filter against gzip, Debian's LZ4/BZIP2
# plugins and hdf5plugin's Blosc/Bitshuffle/Zstd/SZ3/ZFP on real chunked
# datasets, one run, all through Debian's h5py and HDF5 1.10.8.
#
#   BUILD_DIR  build with the plugin and the CLI (default: build)
#   THREADS    OMP_NUM_THREADS / BLOSC_NTHREADS for every filter (default 1)
#   OUT        output folder (default: docs/bench)
#
# Installs hdf5plugin (pinned, without its h5py wheel: Debian's h5py must
# stay, or the Debian-built plugins would meet another HDF5) into a venv
# that sees the system packages.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
out="${OUT:-$root/docs/bench}"
threads="${THREADS:-1}"
venv="$build/h5bench-venv"
data="${MANS_SHARED_DATA_DIR:-$root/../shared/data}"
[[ -x "$venv/bin/python" ]] || /usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps hdf5plugin==7.1.0
debian_plugins="$(pkg-config --variable=PluginDir hdf5-serial)"
export HDF5_PLUGIN_PATH="$build/plugins/serial:$debian_plugins"
export OMP_NUM_THREADS="$threads" BLOSC_NTHREADS="$threads"
mkdir -p "$out"
"$venv/bin/python" "$root/bench/hdf5/bench_h5.py" --mans "$build/cli/mans" --data "$data" \
  --out "$out/hdf5_filters_t$threads.md" --csv "$out/hdf5_filters_t$threads.csv"
echo "bench/hdf5: wrote $out/hdf5_filters_t$threads.md"
