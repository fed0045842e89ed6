#!/usr/bin/env bash
# Fetch real scientific test fields from Debian data packages and write them as
# raw little-endian arrays (same names/dims as ../shared/data where possible).
#
#   datasets/fetch.sh [DEST]        (default DEST = <repo>/datasets/cache)
#
# Idempotent: fields already present in DEST with the right size are kept; the
# packages are downloaded only when something is missing.
# Needs: apt-get (Debian), netcdf-bin (nccopy, ncdump), hdf5-tools (h5dump),
# a C++17 compiler (for mans-quantgen, unless MANS_QUANTGEN points to one).
set -euo pipefail

START=$(date +%s%N)
shopt -s nullglob
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
DEST=${1:-$REPO_ROOT/datasets/cache}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
SHARED_SUMS=${MANS_SHARED_SUMS:-$REPO_ROOT/../shared/data/SHA256SUMS}

log() { printf "[fetch %5.1fs] %s\n" "$(( ($(date +%s%N) - START) / 1000000 ))e-3" "$*" >&2; }

# name | package | file name inside the package | variable | expected element type
# (dims are taken from the output name). Optional entries are marked "opt".
FIELDS=(
  "echam5_t_17x96x192.f32|libncarg-data|rectilinear_grid_3D.nc|t|float|req"
  "cosmo_hsurf_438x450.f32|libncarg-data|HSURF_regional_model_0.11deg.nc|HSURF|float|req"
  "navy_uwnd_132x73x144.f32|ferret-datasets|monthly_navy_winds.cdf|UWND|float|req"
  "levitus_temp_20x180x360.f32|ferret-datasets|levitus_climatology.cdf|TEMP|float|req"
  "etopo20_rose_540x1081.f32|ferret-datasets|etopo20.cdf|ROSE|float|req"
  "stageiv_precip_23x118x87.f32|r-cran-stars|test_stageiv_xyt.nc|Total_precipitation_surface_1_Hour_Accumulation|float|opt"
  "oisst_sst_1x1x90x180.i16|r-cran-stars|reduced.nc|sst|short|opt"
  "sdo_aia171_128x128.f64|python3-sunpy|aia_171_level1.fits|PRIMARY|fits|opt"
)
PACKAGES_REQ=(libncarg-data ferret-datasets)
PACKAGES_OPT=(r-cran-stars python3-sunpy)
QUANT_NAME=echam5_t_quant_1e-4_17x96x192.u16

elem_size() {
  case "$1" in
    *.f64) echo 8 ;; *.f32 | *.u32 | *.i32) echo 4 ;; *.u16 | *.i16) echo 2 ;; *) echo 1 ;;
  esac
}
# product of the dims embedded in a name like foo_17x96x192.f32
name_dims() { local b=${1%.*}; echo "${b##*_}"; }
expected_bytes() {
  local dims prod=1 d
  dims=$(name_dims "$1")
  IFS=x read -r -a parts <<<"$dims"
  for d in "${parts[@]}"; do prod=$((prod * d)); done
  echo $((prod * $(elem_size "$1")))
}
file_ok() { [[ -f "$DEST/$1" && $(stat -c %s "$DEST/$1") -eq $(expected_bytes "$1") ]]; }

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

ensure_tools() {
  local need=()
  command -v nccopy >/dev/null && command -v ncdump >/dev/null || need+=(netcdf-bin)
  command -v h5dump >/dev/null || need+=(hdf5-tools)
  if ((${#need[@]})); then
    log "installing ${need[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
}

# ---- 1. which outputs are missing? --------------------------------------------------
missing=0
for e in "${FIELDS[@]}"; do
  IFS='|' read -r name _ _ _ _ kind <<<"$e"
  file_ok "$name" || { [[ $kind == opt && -f "$DEST/.skip_$name" ]] || missing=1; }
done

if ((missing)); then
  ensure_tools
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/mans-fetch.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  cd "$WORK"
  apt_dl() { # apt-get download, quiet; prints nothing on success
    apt-get download -q "$@" 2>&1 | { grep -v -e "_apt" -e '^Get:' -e '^Fetched' || true; } >&2
  }
  if ! apt_dl "${PACKAGES_REQ[@]}"; then
    log "apt-get download failed; running apt-get update and retrying"
    as_root apt-get update -qq
    apt_dl "${PACKAGES_REQ[@]}"
  fi
  for p in "${PACKAGES_OPT[@]}"; do apt_dl "$p" || log "optional package $p not available"; done
  # Unpack like `dpkg -x`, but only the members we need (the data files and
  # usr/share/doc/PKG/copyright): xz decompression dominates, writing 190 MB doesn't help.
  pids=()
  for deb in ./*.deb; do
    pkg=$(dpkg-deb -f "$deb" Package)
    pats=("./usr/share/doc/$pkg/copyright")
    for e in "${FIELDS[@]}"; do
      IFS='|' read -r _ p src _ _ _ <<<"$e"
      [[ $p == "$pkg" ]] && pats+=("*/$src")
    done
    log "unpacking $(basename "$deb")"
    mkdir -p "$WORK/root"
    { dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$WORK/root" --wildcards "${pats[@]}" ||
      log "warning: not every member found in $(basename "$deb")"; } &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done # missing files are caught below
  # keep the packages' copyright files next to the data (license notes)
  mkdir -p "$DEST/licenses"
  for p in "${PACKAGES_REQ[@]}" "${PACKAGES_OPT[@]}"; do
    c="$WORK/root/usr/share/doc/$p/copyright"
    [[ -f $c ]] && cp "$c" "$DEST/licenses/$p.copyright"
  done

  for e in "${FIELDS[@]}"; do
    IFS='|' read -r name pkg src var type kind <<<"$e"
    file_ok "$name" && continue
    nc=$(find "$WORK/root" -type f -name "$src" | head -n 1)
    if [[ -z $nc ]]; then
      [[ $kind == opt ]] && { log "optional $src ($pkg) not found, skipping $name"; touch "$DEST/.skip_$name"; continue; }
      log "ERROR: $src not found in $pkg"; exit 1
    fi
    if [[ $type == fits ]]; then
      # primary HDU of a plain FITS image: 2880-byte header blocks, big-endian data
      python3 - "$nc" "$DEST/$name.tmp" "$(expected_bytes "$name")" <<'PY'
import sys
src, out, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = open(src, "rb").read()
cards, pos = {}, 0
while True:
    blk = d[pos:pos + 2880]; pos += 2880
    for i in range(0, 2880, 80):
        c = blk[i:i + 80].decode("ascii")
        if c.startswith("END") and c[3:].strip() == "": break
        if c[8:10] == "= ": cards[c[:8].strip()] = c[10:].split("/")[0].strip()
    else:
        continue
    break
assert cards["BITPIX"] == "-64" and cards.get("BSCALE", "1") in ("1", "1.0") and cards.get("BZERO", "0") in ("0", "0.0"), cards
raw = d[pos:pos + want]
assert len(raw) == want, (len(raw), want)
le = bytearray(want)
for i in range(0, want, 8): le[i:i + 8] = raw[i:i + 8][::-1]
open(out, "wb").write(le)
PY
      mv "$DEST/$name.tmp" "$DEST/$name"
      log "wrote $name ($(stat -c %s "$DEST/$name") bytes) from $pkg:${nc#"$WORK/root"}"
      continue
    fi
    # actual storage type of the variable, e.g. "float t(time, lev, lat, lon) ;"
    vtype=$(ncdump -h "$nc" | sed -n -E "s/^[[:space:]]*([a-z0-9]+) $var\(.*/\1/p" | head -n 1)
    if [[ -z $vtype ]]; then
      [[ $kind == opt ]] && { log "optional variable $var not in $src, skipping"; touch "$DEST/.skip_$name"; continue; }
      log "ERROR: variable $var not found in $src"; exit 1
    fi
    nccopy -k nc4 "$nc" "$WORK/tmp.nc"
    rm -f "$WORK/out.raw"
    h5dump -d "/$var" -b LE -o "$WORK/out.raw" "$WORK/tmp.nc" >/dev/null
    if [[ $vtype != "$type" ]]; then
      # convert to the wanted type (raw values; scale_factor/add_offset not applied
      # for the integer output, applied when converting to float)
      log "$var in $src is $vtype, converting to $type"
      python3 - "$WORK/out.raw" "$vtype" "$type" "$nc" "$var" <<'PY'
import array, subprocess, sys, re
path, src, dst, nc, var = sys.argv[1:]
codes = {"float": "f", "double": "d", "short": "h", "int": "i", "ushort": "H", "byte": "b", "ubyte": "B"}
a = array.array(codes[src]); a.frombytes(open(path, "rb").read())
if sys.byteorder == "big": a.byteswap()
hdr = subprocess.run(["ncdump", "-h", nc], capture_output=True, text=True).stdout
def attr(n, d):
    m = re.search(r"\b%s:%s = ([-0-9.eE+]+)" % (re.escape(var), n), hdr)
    return float(m.group(1)) if m else d
if dst == "float" and src != "float":
    sf, off = attr("scale_factor", 1.0), attr("add_offset", 0.0)
    fill = attr("_FillValue", None)
    b = array.array("f", [v if (fill is not None and v == fill) else v * sf + off for v in a])
else:
    b = array.array(codes[dst], [int(v) for v in a])
if sys.byteorder == "big": b.byteswap()
open(path, "wb").write(b.tobytes())
PY
    fi
    got=$(stat -c %s "$WORK/out.raw")
    want=$(expected_bytes "$name")
    if [[ $got -ne $want ]]; then
      log "ERROR: $name: got $got bytes, expected $want"; exit 1
    fi
    mv "$WORK/out.raw" "$DEST/$name"
    rm -f "$WORK/tmp.nc" "$DEST/.skip_$name"
    log "wrote $name ($got bytes) from $pkg:${nc#"$WORK/root"} $var"
  done
fi

# ---- 2. u16 quantization-code sample (the exafel u16 file is not packaged) -------------
if ! file_ok "$QUANT_NAME"; then
  QG=${MANS_QUANTGEN:-$REPO_ROOT/build/datasets/mans-quantgen}
  if [[ ! -x $QG ]]; then
    CXX_BIN=${CXX:-$(command -v c++ || command -v g++ || true)}
    [[ -n $CXX_BIN ]] || { log "ERROR: no C++ compiler to build mans-quantgen"; exit 1; }
    QG="$DEST/.mans-quantgen"
    log "building mans-quantgen with $CXX_BIN"
    "$CXX_BIN" -std=c++17 -O2 -o "$QG" "$SCRIPT_DIR/quantgen.cpp"
  fi
  log "quantgen: $("$QG" "$DEST/echam5_t_17x96x192.f32" 17x96x192 "$DEST/$QUANT_NAME" --rel 1e-4)"
fi

# ---- 3. checksums against ../shared/data ------------------------------------------------
(cd "$DEST" && files=(*.f32 *.f64 *.u16 *.i16) && sha256sum -- "${files[@]}" >SHA256SUMS)
echo "== $DEST"
for f in "$DEST"/*.f32 "$DEST"/*.f64 "$DEST"/*.i16 "$DEST"/*.u16; do
  [[ -f $f ]] || continue
  b=$(basename "$f")
  sum=$(sha256sum "$f" | cut -d' ' -f1)
  ref=""
  [[ -f $SHARED_SUMS ]] && ref=$(awk -v n="$b" '$2 == n {print $1}' "$SHARED_SUMS")
  if [[ -z $ref ]]; then st="(no reference sum)"
  elif [[ $ref == "$sum" ]]; then st="sha256 matches shared/data"
  else st="sha256 DIFFERS from shared/data"; fi
  printf '  %-42s %10s B  %s\n' "$b" "$(stat -c %s "$f")" "$st"
done
ms=$((($(date +%s%N) - START) / 1000000))
printf '[fetch] done in %d.%03d s\n' $((ms / 1000)) $((ms % 1000)) >&2
