#!/usr/bin/env bash
# Build the benchmark file set (integer inputs for the compressor).
#
#   datasets/make_bench_set.sh [SRC] [DEST]
#
# SRC   folder of raw arrays named like ../shared/data (default: <repo>/../shared/data
#       if it exists, else <repo>/datasets/cache, filled by fetch.sh when empty)
# DEST  output folder (default: <repo>/build/bench-data)
# env MANS_QUANTGEN  mans-quantgen binary (default: <repo>/build/datasets/mans-quantgen;
#       compiled from datasets/quantgen.cpp into DEST if that does not exist)
#
# Output: quant_<field>_1e-3.u16, quant_<field>_1e-4.u16 for every *_DIMS.f32 in SRC,
# quant_<field>_1e-6.u32 for every 3D f32 field, exafel_{4,64,1024}kB.u16 prefixes
# (if exafel_1024kB.u16 is in SRC), *.i16 copies, DEST/files.tsv (name, dtype, bytes)
# and DEST/quantgen.log (one quantgen summary line per file).
set -euo pipefail
shopt -s nullglob

START=$(date +%s%N)
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
log() { printf '[bench-set] %s\n' "$*" >&2; }

if [[ $# -ge 1 && -n $1 ]]; then
  SRC=$1
elif [[ -d $REPO_ROOT/../shared/data ]]; then
  SRC=$REPO_ROOT/../shared/data
else
  SRC=$REPO_ROOT/datasets/cache
  f32s=("$SRC"/*.f32)
  if ((${#f32s[@]} == 0)); then
    log "$SRC is empty, running fetch.sh"
    "$SCRIPT_DIR/fetch.sh" "$SRC" >&2
  fi
fi
[[ -d $SRC ]] || { log "ERROR: source folder $SRC does not exist"; exit 1; }
SRC=$(cd "$SRC" && pwd)
DEST=${2:-$REPO_ROOT/build/bench-data}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)

QG=${MANS_QUANTGEN:-$REPO_ROOT/build/datasets/mans-quantgen}
if [[ ! -x $QG ]]; then
  CXX_BIN=${CXX:-$(command -v c++ || command -v g++ || true)}
  [[ -n $CXX_BIN ]] || { log "ERROR: $QG missing and no C++ compiler found"; exit 1; }
  log "$QG not found, compiling datasets/quantgen.cpp with $CXX_BIN"
  QG=$DEST/.mans-quantgen
  "$CXX_BIN" -std=c++17 -O2 -o "$QG" "$SCRIPT_DIR/quantgen.cpp"
fi
log "SRC=$SRC DEST=$DEST quantgen=$QG"

# start from a clean set (only files this script makes)
rm -f "$DEST"/quant_*.u16 "$DEST"/quant_*.u32 "$DEST"/exafel_*.u16 "$DEST"/*.i16 \
  "$DEST/files.tsv" "$DEST/quantgen.log"

quant() { # field-file dims rel out [--u32]
  local line
  line=$("$QG" "$1" "$2" "$DEST/$4" --rel "$3" "${@:5}")
  printf '%s\t%s\n' "$4" "$line" >>"$DEST/quantgen.log"
}

for f in "$SRC"/*.f32; do
  stem=$(basename "$f" .f32)
  dims=${stem##*_}
  if [[ ! $dims =~ ^[0-9]+(x[0-9]+)*$ ]]; then
    log "skipping $f (no dims in name)"
    continue
  fi
  quant "$f" "$dims" 1e-3 "quant_${stem}_1e-3.u16"
  quant "$f" "$dims" 1e-4 "quant_${stem}_1e-4.u16"
  IFS=x read -r -a parts <<<"$dims"
  if ((${#parts[@]} == 3)); then
    quant "$f" "$dims" 1e-6 "quant_${stem}_1e-6.u32" --u32
  fi
done

if [[ -f $SRC/exafel_1024kB.u16 ]]; then
  head -c 4096 "$SRC/exafel_1024kB.u16" >"$DEST/exafel_4kB.u16"
  head -c 65536 "$SRC/exafel_1024kB.u16" >"$DEST/exafel_64kB.u16"
  cp "$SRC/exafel_1024kB.u16" "$DEST/exafel_1024kB.u16"
else
  log "no exafel_1024kB.u16 in $SRC (it is not in any Debian package); skipping exafel prefixes"
fi
for f in "$SRC"/*.i16; do cp "$f" "$DEST/"; done
chmod u+w "$DEST"/*.u16 "$DEST"/*.i16 2>/dev/null || true

{
  printf 'name\tdtype\tbytes\n'
  for f in "$DEST"/*.u16 "$DEST"/*.u32 "$DEST"/*.i16; do
    b=$(basename "$f")
    printf '%s\t%s\t%s\n' "$b" "${b##*.}" "$(stat -c %s "$f")"
  done
} >"$DEST/files.tsv"

n=$(($(wc -l <"$DEST/files.tsv") - 1))
total=$(awk -F'\t' 'NR > 1 {s += $3} END {print s + 0}' "$DEST/files.tsv")
ms=$((($(date +%s%N) - START) / 1000000))
log "wrote $n files, $total bytes, to $DEST in $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s"
