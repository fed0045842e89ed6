#!/usr/bin/env bash
# test_h5_mpi.sh MPIEXEC TEST_BINARY PLUGIN_DIR DATA_DIR TMP
# Parallel HDF5 with the mans filter: write on 2 ranks and read on 4
# (oversubscribed) and on 1, then write on 4 and read on 3 and 2; a read
# without the plugin must fail.
set -euo pipefail
mpiexec=$1 bin=$2 plugins=$3 data=$4 tmp=$5
rm -rf "$tmp" && mkdir -p "$tmp"
export HDF5_PLUGIN_PATH="$plugins"  # reads load the plugin; writes use the link-in API
export OMP_NUM_THREADS=1            # several ranks share 2 cores
# CI runs as root in a container: allow it, and use shared memory only.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
run() { "$mpiexec" --oversubscribe -n "$1" "$bin" "$2" "$3" "$data"; }
run 2 write "$tmp/np2.h5"
run 4 read "$tmp/np2.h5"
run 1 read "$tmp/np2.h5"
run 4 write "$tmp/np4.h5"
run 3 read "$tmp/np4.h5"
run 2 read "$tmp/np4.h5"
# Without the plugin the reads must fail (they never register the filter).
if HDF5_PLUGIN_PATH="$tmp/no-plugins" run 2 read "$tmp/np4.h5" >"$tmp/neg.log" 2>&1; then
  echo "reading without the plugin succeeded: the reads did not go through the plugin"; exit 1
fi
# The file is an ordinary HDF5 file: the serial tools see the filter.
if command -v h5dump >/dev/null; then
  h5dump -p -H -d /navy "$tmp/np4.h5" | grep -q "FILTER_ID ${MANS_H5_FILTER_ID:-36731}" || { echo "h5dump shows no mans filter"; exit 1; }
fi
echo "h5_mpi: 7 passed, 0 failed"
