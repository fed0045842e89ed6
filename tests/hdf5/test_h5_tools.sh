#!/usr/bin/env bash
# test_h5_tools.sh MANS_CLI PLUGIN_DIR DATA_DIR TMP
# The mans filter through HDF5's own command-line tools, as a user runs them:
# h5import real fields, h5repack -f "$(mans h5-args ...)", h5dump -p -H shows
# the filter, h5diff compares values (lossless: none differ; lossy: within
# -d bound, and really lossy), binary dumps equal the original bytes; h5repack
# re-chunks a filtered file; with the plugin missing, reads fail loudly
# (h5diff exits 2, h5dump -b fails) rather than giving empty data, and
# h5repack's silently unfiltered copy shows FILTERS NONE.
set -uo pipefail
id=${MANS_H5_FILTER_ID:-36731}  # the build's filter ID (ctest passes it)
mans=$(realpath "$1") plugins=$(realpath "$2") data=$(realpath "$3") tmp=$4
rm -rf "$tmp" && mkdir -p "$tmp/no-plugins" && tmp=$(realpath "$tmp") && cd "$tmp" || exit 1
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
check() { local what=$1; shift; if "$@" >"$tmp/last.log" 2>&1; then ok "$what"; else bad "$what"; cat "$tmp/last.log"; fi; }
expect_rc() { local want=$1 what=$2; shift 2; "$@" >"$tmp/last.log" 2>&1; local rc=$?
  if [ "$rc" = "$want" ]; then ok "$what"; else bad "$what (exit $rc, expected $want)"; tail -5 "$tmp/last.log"; fi; }

# h5import: raw little-endian arrays -> an unfiltered chunked source file.
import() {  # PATH CLASS SIZE RAWFILE DIMS... (slowest first)
  local path=$1 cls=$2 size=$3 raw=$4; shift 4
  { echo "PATH $path"; echo "INPUT-CLASS $cls"; echo "INPUT-SIZE $size"; echo "RANK $#"
    echo "DIMENSION-SIZES $*"; echo "OUTPUT-CLASS $cls"; echo "OUTPUT-SIZE $size"
    [ "$cls" = FP ] && echo "OUTPUT-ARCHITECTURE IEEE" || echo "OUTPUT-ARCHITECTURE STD"
    echo "OUTPUT-BYTE-ORDER LE"; } > "$path.cfg"
  h5import "$data/$raw" -c "$path.cfg" -o src.h5
}
import t FP 32 echam5_t_17x96x192.f32 17 96 192 &&
import lev FP 32 levitus_temp_20x180x360.f32 20 180 360 &&
import e UIN 16 exafel_1024kB.u16 1024 512 &&
import sst IN 16 oisst_sst_1x1x90x180.i16 90 180 || { echo "FAIL: h5import"; exit 1; }
ok "h5import of 4 real fields"

export HDF5_PLUGIN_PATH="$plugins"
lossless=$("$mans" h5-args --lossless)
abs=$("$mans" h5-args --error-bound 0.01)
rel=$("$mans" h5-args --error-bound 1e-4 --rel)
[ "$lossless" = "UD=$id,0,2,1,0" ] && ok "h5-args --lossless: $lossless" || bad "h5-args --lossless printed $lossless"
[ "$("$mans" h5-args --error-bound 0.01 --dataset t)" = "t:$abs" ] && ok "h5-args --dataset" || bad "h5-args --dataset"
check "h5repack with the mans filter" h5repack -f "e:$lossless" -f "sst:$lossless" -f "t:$abs" -f "lev:$rel" \
  -l e:CHUNK=100x300 -l sst:CHUNK=32x50 -l t:CHUNK=5x40x100 -l lev:CHUNK=7x64x100 src.h5 out.h5

for d in e sst t lev; do
  h5dump -p -H -d "/$d" out.h5 > "hdr_$d.txt" 2>&1
  if grep -q "FILTER_ID $id" "hdr_$d.txt" && grep -q "COMMENT mans" "hdr_$d.txt" &&
     grep -Eq "PARAMS \{( -?[0-9]+){15} \}" "hdr_$d.txt"; then ok "h5dump -p -H shows the filter on /$d"
  else bad "h5dump -p -H on /$d"; cat "hdr_$d.txt"; fi
done
grep -q "PARAMS { 1296564481 1 2 2 0 2 100 300 0 0 0" hdr_e.txt && ok "/e cd_values: MANS u16, chunk 100x300" ||
  { bad "/e cd_values"; grep PARAMS hdr_e.txt; }

expect_rc 0 "h5diff: /e lossless, 0 differences" h5diff src.h5 out.h5 /e /e
expect_rc 0 "h5diff: /sst lossless, 0 differences" h5diff src.h5 out.h5 /sst /sst
expect_rc 0 "h5diff -d 0.01: /t within the absolute bound" h5diff -d 0.01 src.h5 out.h5 /t /t
expect_rc 1 "h5diff: /t really is lossy" h5diff src.h5 out.h5 /t /t
# levitus: range of the real values 31.4, 1e-4 relative -> 0.00314 absolute (each
# chunk's range is inside that); the -1e10 land fill comes back exactly.
expect_rc 0 "h5diff -d 0.00314: /lev within the relative bound" h5diff -d 0.00314 src.h5 out.h5 /lev /lev
for d in e sst; do
  h5dump -d "/$d" -b LE -o "$d.bin" out.h5 >/dev/null 2>&1
done
check "binary dump of /e equals exafel_1024kB.u16" cmp e.bin "$data/exafel_1024kB.u16"
check "binary dump of /sst equals oisst_sst_1x1x90x180.i16" cmp sst.bin "$data/oisst_sst_1x1x90x180.i16"
src_size=$(stat -c %s src.h5) out_size=$(stat -c %s out.h5 2>/dev/null || echo 0)
if [ "$out_size" -gt 0 ] && [ $((out_size * 2)) -lt "$src_size" ]; then ok "file size $src_size -> $out_size bytes"
else bad "file size $src_size -> $out_size bytes (expected at least 2:1)"; fi

# h5repack copies a filtered dataset into new chunks: set_local re-runs on the
# stored cd_values and records the new chunk shape.
check "h5repack re-chunks a filtered file" h5repack -l t:CHUNK=17x96x64 -l e:CHUNK=1024x128 out.h5 rechunked.h5
h5dump -p -H -d /t rechunked.h5 | grep -q "PARAMS { 1296564481 2 8 4 0 3 17 96 64 0 1" &&
  ok "re-chunked /t keeps the bound with the new chunk shape" || bad "re-chunked /t cd_values"
expect_rc 0 "h5diff -d 0.01: re-chunked /t vs its source" h5diff -d 0.01 out.h5 rechunked.h5 /t /t
expect_rc 0 "h5diff: re-chunked /e lossless" h5diff src.h5 rechunked.h5 /e /e

# Without the plugin: errors, never silently empty or wrong data.
export HDF5_PLUGIN_PATH="$tmp/no-plugins"
expect_rc 2 "no plugin: h5diff exits 2" h5diff src.h5 out.h5 /e /e
h5dump -d /e -b LE -o missing.bin out.h5 >/dev/null 2>&1 && bad "no plugin: h5dump -b succeeded" ||
  ok "no plugin: h5dump -b fails"
# h5repack 1.10.8 quietly writes an UNFILTERED copy (exit 0) when the plugin
# is missing: only h5dump -p -H tells (formats/hdf5/README.md warns about it).
h5repack -f "e:$lossless" src.h5 unfiltered.h5 >/dev/null 2>&1
h5dump -p -H -d /e unfiltered.h5 2>/dev/null | grep -A1 FILTERS | grep -q NONE &&
  ok "no plugin: h5repack's copy shows FILTERS NONE (the pitfall is visible)" || bad "no plugin: h5repack copy"

echo "h5_tools: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
