#!/usr/bin/env bash
# Command (1) of the README: install dependencies, build, obtain real fields
# from Debian data packages (datasets/fetch.sh), then compress, decompress and
# verify each with the mans CLI, printing ratio and speed.
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
echo "== all round trips verified byte for byte"
