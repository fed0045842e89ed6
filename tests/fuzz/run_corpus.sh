#!/usr/bin/env bash
# run_corpus.sh SEEDS_TOOL DECOMPRESS BLOCK ROUNDTRIP PRISM GOLDEN_DIR
# Runs every fuzz target over its seed corpus (generated), the committed
# regression inputs in tests/fuzz/regressions/<target>/ and, for whole
# streams, the golden vectors. Registered as ctest fuzz_corpus.
set -euo pipefail
seeds_tool=$1 dec=$2 blk=$3 rt=$4 prism=$5 golden=$6
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$seeds_tool" "$tmp"
"$dec" "$tmp/decompress" "$golden" "$here/regressions/decompress"
"$blk" "$tmp/block" "$here/regressions/block"
"$rt" "$tmp/roundtrip" "$here/regressions/roundtrip"
"$prism" "$tmp/prism" "$here/regressions/prism"
