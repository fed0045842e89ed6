#!/usr/bin/env bash
# Command (1) of the README: install dependencies, build, obtain real fields
# from Debian data packages (datasets/fetch.sh), then compress, decompress and
# verify each with the mans CLI, printing ratio and speed; then PRISM
# progressive lossy archives of the float fields with coarse retrievals
# checked against the originals; then the HDF5 filter plugin through
# h5repack, h5dump and h5diff on a real field.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
data="${MANS_DATA_DIR:-$root/datasets/cache}"
"$root/scripts/install-deps.sh"
BUILD_DIR="$build" "$root/scripts/build.sh" -DMANS_BUILD_TESTS=OFF -DMANS_BUILD_BENCH=OFF
"$root/datasets/fetch.sh" "$data"
mans="$build/cli/mans"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo
echo "== mans $("$mans" --version | head -1)"
run() {  # file dtype
  local f="$data/$1" t="$2"
  [ -f "$f" ] || { echo "(skip $1: not fetched)"; return; }
  "$mans" compress -i "$f" -o "$work/x.mans" -t "$t" --verify --stats
  "$mans" decompress -i "$work/x.mans" -o "$work/x.raw" --stats
  cmp -s "$f" "$work/x.raw" || { echo "demo: round trip of $1 differs" >&2; exit 3; }
}
# Quantization codes of a real temperature field (u16), real integers (i16),
# and real float fields compressed losslessly as their 32-bit patterns.
run echam5_t_quant_1e-4_17x96x192.u16 u16
run oisst_sst_1x1x90x180.i16 i16
run levitus_temp_20x180x360.f32 u32
run navy_uwnd_132x73x144.f32 u32
echo "== all lossless round trips verified byte for byte"

# Lossy, progressive (PRISM): one archive at 1e-6 x value range per field,
# then retrievals at coarser bounds that read only part of it, each checked
# against the original (exit 3 if a bound were missed).
prism() {  # file
  local f="$data/$1" dims
  [ -f "$f" ] || { echo "(skip $1: not fetched)"; return; }
  dims=$(basename "$1" .f32); dims=${dims##*_}
  echo "-- $1"
  "$mans" compress -t f32 --dims "$dims" --error-bound 1e-6 --rel -i "$f" -o "$work/x.prism" --verify --stats
  for rel in 1e-2 1e-4; do
    "$mans" decompress -i "$work/x.prism" -o "$work/x.f32" --error-bound "$rel" --rel --original "$f" --stats
  done
}
prism echam5_t_17x96x192.f32
prism levitus_temp_20x180x360.f32
prism etopo20_rose_540x1081.f32
echo "== every lossy retrieval met its error bound"

# HDF5: the same codecs as an HDF5 filter plugin, through HDF5's own tools.
plugin="$build/plugins/serial"
if [ -f "$plugin/libh5z_mans.so" ] && command -v h5repack >/dev/null && [ -f "$data/levitus_temp_20x180x360.f32" ]; then
  echo "-- HDF5 filter ($plugin)"
  printf 'PATH temp\nINPUT-CLASS FP\nINPUT-SIZE 32\nRANK 3\nDIMENSION-SIZES 20 180 360\nOUTPUT-CLASS FP\nOUTPUT-SIZE 32\nOUTPUT-ARCHITECTURE IEEE\nOUTPUT-BYTE-ORDER LE\n' > "$work/t.cfg"
  h5import "$data/levitus_temp_20x180x360.f32" -c "$work/t.cfg" -o "$work/levitus.h5"
  lossy=$("$mans" h5-args --error-bound 0.01 --dataset temp)
  echo "h5repack -f $lossy -l temp:CHUNK=4x90x180"
  HDF5_PLUGIN_PATH="$plugin" h5repack -f "$lossy" -l temp:CHUNK=4x90x180 "$work/levitus.h5" "$work/levitus_mans.h5"
  h5dump -p -H -d /temp "$work/levitus_mans.h5" | grep -E "FILTER_ID|COMMENT|SIZE [0-9]"
  HDF5_PLUGIN_PATH="$plugin" h5diff -d 0.01 "$work/levitus.h5" "$work/levitus_mans.h5" /temp /temp ||
    { echo "demo: HDF5 values outside the bound" >&2; exit 3; }
  echo "== HDF5: $(stat -c %s "$work/levitus.h5") -> $(stat -c %s "$work/levitus_mans.h5") bytes, h5diff -d 0.01: no value outside the bound"
fi
