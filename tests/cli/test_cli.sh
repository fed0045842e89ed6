#!/usr/bin/env bash
# test_cli.sh - end-to-end tests of the `mans` command-line tool.
#
#   tests/cli/test_cli.sh [MANS_BINARY] [DATA_DIR]
#
# MANS_BINARY defaults to build/cli/mans, DATA_DIR to ../shared/data (both from
# the repository root), else datasets/cache. Missing data files are replaced by
# small synthetic ones. Prints "N passed, M failed" last; exits 1 if M > 0.
# Sections: lossless MANS round trips, pipes, reports, errors; then PRISM (lossy,
# progressive): compress/decompress/info on echam5, levitus (fill -1e10), sdo
# (f64) and a 1D file, SZ-style options, retrieval targets, exit codes 1/2/3.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MANS="${1:-$ROOT/build/cli/mans}"
if [[ $# -ge 2 ]]; then
  DATA="$2"
elif [[ -d "$ROOT/../shared/data" ]]; then
  DATA="$ROOT/../shared/data"
else
  DATA="$ROOT/datasets/cache"
fi
if [[ ! -x "$MANS" ]]; then
  echo "test_cli.sh: mans binary not found or not executable: $MANS" >&2
  exit 2
fi
MANS="$(cd "$(dirname "$MANS")" && pwd)/$(basename "$MANS")"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mans-cli-test.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

PASS=0
FAIL=0
HAVE_PY=0
command -v python3 >/dev/null 2>&1 && HAVE_PY=1

ok()  { PASS=$((PASS + 1)); echo "ok   $1"; }
# bad NAME [LOG]: count a failure and show LOG (default last.err).
bad() {
  FAIL=$((FAIL + 1)); echo "FAIL $1" >&2
  local log="${2:-last.err}"
  if [[ -s "$log" ]]; then sed 's/^/     | /' "$log" >&2; fi
}

# expect RC NAME CMD...: run CMD (stdout -> last.out, stderr -> last.err), expect exit code RC.
expect() {
  local want="$1" name="$2"; shift 2
  local rc=0
  "$@" >last.out 2>last.err || rc=$?
  if [[ "$rc" == "$want" ]]; then ok "$name"; else bad "$name (exit $rc, expected $want)"; fi
}

# check NAME CMD...: CMD must succeed (a shell test or comparison). It may read
# last.out/last.err of the previous expect; its own stderr goes to check.err.
check() {
  local name="$1"; shift
  if "$@" >/dev/null 2>check.err; then ok "$name"; else bad "$name" check.err; fi
}

# no_leftover NAME OUT: neither OUT nor a temp file OUT.tmp.* exists.
no_leftover() {
  local name="$1" out="$2"
  if [[ -e "$out" ]] || compgen -G "$out.tmp.*" >/dev/null; then
    bad "$name: output left behind" /dev/null; ls -la "$out"* >&2 || true
  else
    ok "$name: no output left behind"
  fi
}

flip_byte() {  # flip_byte FILE OFFSET: xor one byte with 0x5a
  local f="$1" off="$2"
  if [[ $HAVE_PY == 1 ]]; then
    python3 - "$f" "$off" <<'EOF'
import sys
p, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read())
b[off] ^= 0x5A
open(p, "wb").write(b)
EOF
  else
    local v
    v=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
    printf "\\$(printf '%03o' $((v ^ 0x5a)))" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
  fi
}

json_ok() {  # json_ok FILE: one valid JSON object
  if [[ $HAVE_PY == 1 ]]; then python3 -m json.tool "$1" >/dev/null; else grep -q '^{.*}$' "$1"; fi
}

json_field() {  # json_field FILE KEY -> value printed
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# ------------------------------------------------------------------ data
synth_u16() {  # synth_u16 OUT BYTES: detector-like u16 samples
  if [[ $HAVE_PY == 1 ]]; then
    python3 - "$1" "$2" <<'EOF'
import random, struct, sys
random.seed(1)
n = int(sys.argv[2]) // 2
vals = [max(0, min(65535, int(random.gauss(1500, 30)) + (random.random() < 0.02) * random.randint(0, 9000))) for _ in range(n)]
open(sys.argv[1], "wb").write(struct.pack("<%dH" % n, *vals))
EOF
  else
    head -c "$2" /dev/urandom >"$1"
  fi
}

U16="$DATA/exafel_1024kB.u16"
I16="$DATA/oisst_sst_1x1x90x180.i16"
F32="$DATA/echam5_t_17x96x192.f32"
F32_DIMS="17x96x192"
if [[ ! -f "$F32" ]]; then
  F32="$(ls "$DATA"/*.f32 2>/dev/null | head -n1 || true)"
  F32_DIMS=""
fi
if [[ ! -f "$U16" ]]; then U16="$WORK/synth.u16"; synth_u16 "$U16" 262144; echo "note: using synthetic u16 data"; fi
if [[ ! -f "$I16" ]]; then I16="$WORK/synth.i16"; synth_u16 "$I16" 32400; echo "note: using synthetic i16 data"; fi
if [[ -z "$F32" || ! -f "$F32" ]]; then F32="$WORK/synth.f32"; head -c 65536 /dev/urandom >"$F32"; F32_DIMS=""; echo "note: using random f32 data"; fi
echo "binary: $MANS"
echo "data:   $U16, $I16, $F32"

# ------------------------------------------------------------------ basics
expect 0 "--version" "$MANS" --version
check "--version names library and format" grep -q "stream format" last.out
expect 0 "--help" "$MANS" --help
expect 0 "compress --help" "$MANS" compress --help

# ------------------------------------------------------------------ round trips
roundtrip() {  # roundtrip NAME FILE DTYPE [extra compress args...]
  local name="$1" in="$2" dt="$3"; shift 3
  rm -f rt.mans rt.out
  expect 0 "$name: compress" "$MANS" compress -i "$in" -o rt.mans -t "$dt" "$@"
  expect 0 "$name: decompress" "$MANS" decompress -i rt.mans -o rt.out
  check "$name: bytes identical" cmp "$in" rt.out
}
roundtrip "u16 exafel" "$U16" u16
roundtrip "i16 oisst" "$I16" i16
roundtrip "f32 as u32" "$F32" u32
roundtrip "u16 long name uint16" "$U16" uint16
roundtrip "u8" "$U16" u8
roundtrip "u64" "$U16" u64
roundtrip "i32 long name int32" "$F32" int32
roundtrip "i64" "$U16" i64
roundtrip "u16 --scalar --threads 1" "$U16" u16 --scalar --threads 1
roundtrip "u16 --block-size 16K" "$U16" u16 --block-size 16K
head -c 0 /dev/null >empty.bin
roundtrip "empty input" empty.bin u16

# Output bytes do not depend on threads or SIMD.
"$MANS" compress -i "$U16" -o a.mans -t u16 --threads 1 --scalar 2>last.err || true
"$MANS" compress -i "$U16" -o b.mans -t u16 --threads 0 2>last.err || true
touch a.mans b.mans  # keep later redirects valid even when compress failed
check "stream independent of --threads/--scalar" cmp a.mans b.mans

# ------------------------------------------------------------------ pipes
cat "$U16" | "$MANS" compress -i - -o - -t u16 >pipe.mans 2>last.err || true
check "stdin -> stdout compress equals file compress" cmp pipe.mans a.mans
"$MANS" decompress -i - -o - <pipe.mans >pipe.out 2>last.err || true
check "stdin -> stdout decompress" cmp pipe.out "$U16"
if cat "$I16" | "$MANS" compress -i - -o - -t i16 2>last.err | "$MANS" decompress -i - -o - 2>>last.err | cmp - "$I16" 2>>last.err; then
  ok "compress | decompress pipeline"
else
  bad "compress | decompress pipeline"
fi

# ------------------------------------------------------------------ --verify, --stats, --json
expect 0 "--verify" "$MANS" compress -i "$U16" -o v.mans -t u16 --verify
expect 0 "--stats" "$MANS" compress -i "$U16" -o s.mans -t u16 --stats
check "--stats line on stderr" grep -Eq '^mans: compress .*: [0-9]+ -> [0-9]+ B, ratio [0-9.]+, [0-9.]+ bits/value, [0-9.]+ MB/s, backend .*, [0-9]+ thread\(s\)$' last.err
check "--stats prints nothing on stdout" test ! -s last.out

expect 0 "compress --json --verify" "$MANS" compress -i "$U16" -o j.mans -t u16 --json --verify
cp last.out c.json
check "compress --json parses" json_ok c.json
if [[ $HAVE_PY == 1 ]]; then
  check "compress --json fields" python3 -c '
import json, sys
d = json.load(open("c.json"))
need = ["command","input","output","dtype","elements","raw_bytes","compressed_bytes","ratio",
        "bits_per_value","compress_MBps","seconds","threads","backend","verified"]
missing = [k for k in need if k not in d]
assert not missing, missing
assert d["command"] == "compress" and d["dtype"] == "u16" and d["verified"] is True
assert d["raw_bytes"] == 2 * d["elements"]
'
  check "compress --json compressed_bytes = file size" \
    test "$(json_field c.json compressed_bytes 2>/dev/null)" = "$(wc -c <j.mans 2>/dev/null | tr -d ' ')"
fi
expect 0 "decompress --json" "$MANS" decompress -i j.mans -o j.out --json
cp last.out d.json
check "decompress --json parses" json_ok d.json
if [[ $HAVE_PY == 1 ]]; then
  check "decompress --json has decompress_MBps" python3 -c '
import json; d = json.load(open("d.json")); assert d["command"] == "decompress" and "decompress_MBps" in d and d["dtype"] == "u16"'
fi
"$MANS" compress -i "$U16" -o - -t u16 --json >jo.mans 2>jo.json || true
check "--json goes to stderr with -o -" json_ok jo.json
check "stdout stays pure data with -o - --json" cmp jo.mans a.mans

# ------------------------------------------------------------------ info, --dims
if [[ -n "$F32_DIMS" ]]; then
  expect 0 "compress --dims $F32_DIMS" "$MANS" compress -i "$F32" -o d.mans -t u32 --dims "$F32_DIMS"
  expect 0 "info with shape" "$MANS" info d.mans
  check "info shows shape" grep -q "shape *$F32_DIMS" last.out
  expect 0 "decompress dims stream" "$MANS" decompress -i d.mans -o d.out
  check "dims stream round trip" cmp d.out "$F32"
fi
expect 0 "info" "$MANS" info a.mans
for field in "format version" "codec" "dtype *u16" "elements" "raw bytes" "block size" "block count" "compressed bytes" "ratio"; do
  check "info shows '$field'" grep -q "$field" last.out
done
expect 0 "info --json" "$MANS" info --json a.mans
cp last.out i.json
check "info --json parses" json_ok i.json
expect 0 "info from stdin" "$MANS" info - <a.mans

# ------------------------------------------------------------------ usage errors (exit 1)
expect 1 "unknown dtype" "$MANS" compress -i "$U16" -o e1.out -t q12
no_leftover "unknown dtype" e1.out
expect 1 "missing -t" "$MANS" compress -i "$U16" -o e1.out
expect 1 "missing -o" "$MANS" compress -i "$U16" -t u16
expect 1 "no subcommand" "$MANS"
expect 1 "unknown subcommand" "$MANS" frobnicate
expect 1 "unknown option" "$MANS" compress -i "$U16" -o e1.out -t u16 --bogus
expect 1 "bad --dims format" "$MANS" compress -i "$U16" -o e1.out -t u16 --dims 3xx4
expect 2 "--dims product mismatch (known after reading: the input is at fault)" "$MANS" compress -i "$U16" -o e1.out -t u16 --dims 3x4
expect 1 "bad --block-size" "$MANS" compress -i "$U16" -o e1.out -t u16 --block-size 12Q
expect 1 "negative --threads" "$MANS" compress -i "$U16" -o e1.out -t u16 --threads -1
expect 1 "unknown backend" "$MANS" compress -i "$U16" -o e1.out -t u16 --backend foo
no_leftover "usage errors" e1.out

# ------------------------------------------------------------------ I/O and format errors (exit 2)
expect 2 "unavailable backend cuda" "$MANS" compress -i "$U16" -o e2.out -t u16 --backend cuda
check "backend message" grep -q "backend 'cuda' is unavailable: cuda: " last.err
expect 2 "unavailable backend hip" "$MANS" compress -i "$U16" -o e2.out -t u16 --backend hip
check "hip backend message" grep -q "backend 'hip' is unavailable: hip: " last.err
# auto falls back to the CPU and says why the GPU modules were not used.
expect 0 "auto backend with --json" "$MANS" compress -i "$U16" -o e2b.out -t u16 --backend auto --json
check "json backend gives the reasons" grep -Eq '"backend":"cpu \([a-z0-9]+\); cuda: [^"]+; hip: [^"]+"' last.out
rm -f e2b.out
# auto keeps inputs under 16 MiB on the CPU, so it opens no GPU module for
# them (opening HIP's starts the ROCm runtime: ~14 ms per call); the
# --stats line names the modules' reasons, so it opens them.
# With the stand-in module (ctest sets MANS_TEST_FIXTURE_MODULE_DIR) first
# in the search path there is always a module to open; glibc's
# LD_DEBUG=files lists what the dynamic loader opens.
# modules_opened CMD...: CMD must succeed; prints how many modules it opened.
modules_opened() {
  env -u LD_DEBUG_OUTPUT LD_DEBUG=files MANS_BACKEND_PATH="$MANS_TEST_FIXTURE_MODULE_DIR" "$@" >/dev/null 2>ld.err || { echo failed; return; }
  grep -c 'file=.*libmans_backend_[a-z]*\.so .*dynamically loaded' ld.err || true
}
if [[ -z "${MANS_TEST_FIXTURE_MODULE_DIR:-}" ]]; then
  echo "note: MANS_TEST_FIXTURE_MODULE_DIR not set: the module-opening checks are skipped"
elif env -u LD_DEBUG_OUTPUT LD_DEBUG=files "$MANS" --version >/dev/null 2>ld.err; ! grep -q 'file=' ld.err; then
  echo "note: LD_DEBUG=files prints nothing here (not glibc?): the module-opening checks are skipped"
else
  check "auto: no GPU module opened for a small input" test "$(modules_opened "$MANS" compress -i "$U16" -o e2c.out -t u16)" = 0
  check "auto: none opened to decompress it" test "$(modules_opened "$MANS" decompress -i e2c.out -o e2d.out)" = 0
  check "auto --stats: the modules opened for their reasons" test "$(modules_opened "$MANS" decompress -i e2c.out -o e2d.out --stats)" -gt 0
fi
rm -f e2c.out e2d.out ld.err
expect 2 "missing input (compress)" "$MANS" compress -i does-not-exist.u16 -o e2.out -t u16
check "missing input message" grep -q "^mans: error: does-not-exist.u16: " last.err
no_leftover "missing input (compress)" e2.out
expect 2 "missing input (decompress)" "$MANS" decompress -i does-not-exist.mans -o e2.out
no_leftover "missing input (decompress)" e2.out
expect 2 "input is a directory" "$MANS" compress -i . -o e2.out -t u16

head -c 1025 "$U16" >odd.bin
expect 2 "odd-size input as u16" "$MANS" compress -i odd.bin -o e2.out -t u16
check "odd-size message" grep -q "input size 1025 bytes is not a multiple of the u16 element size (2 bytes)" last.err
no_leftover "odd-size input" e2.out

SIZE=$(wc -c <a.mans 2>/dev/null | tr -d ' ' || true)
[[ -n "$SIZE" && "$SIZE" -gt 0 ]] || SIZE=64
head -c $((SIZE / 2)) a.mans >trunc.mans
expect 2 "truncated stream" "$MANS" decompress -i trunc.mans -o e2.out
check "truncated message names path and status" grep -Eq '^mans: error: trunc.mans: .* \(MANS_ERR_[A-Z_]+\)$' last.err
no_leftover "truncated stream" e2.out
head -c 20 a.mans >short.mans
expect 2 "stream cut inside the header" "$MANS" decompress -i short.mans -o e2.out
expect 2 "info on truncated stream" "$MANS" info trunc.mans

cp a.mans flip.mans 2>/dev/null || head -c "$SIZE" /dev/zero >flip.mans
flip_byte flip.mans $((SIZE / 2)) || true
expect 2 "bit-flipped stream" "$MANS" decompress -i flip.mans -o e2.out
check "bit-flip message names status" grep -Eq '\(MANS_ERR_[A-Z_]+\)$' last.err
no_leftover "bit-flipped stream" e2.out
expect 2 "bit-flipped stream via stdin" "$MANS" decompress -i - -o - <flip.mans
expect 2 "not a mans stream" "$MANS" decompress -i "$U16" -o e2.out
check "bad magic message" grep -q "MANS_ERR_BAD_MAGIC" last.err
no_leftover "not a mans stream" e2.out

# A failed run must not touch an existing output file.
echo "precious" >keep.out
expect 2 "failed decompress over existing file" "$MANS" decompress -i flip.mans -o keep.out
check "existing output untouched" grep -qx precious keep.out
check "no temp file left next to it" bash -c '! compgen -G "keep.out.tmp.*"'
expect 2 "unwritable output directory" "$MANS" decompress -i a.mans -o no-such-dir/x.out
expect 0 "output to /dev/null" "$MANS" decompress -i a.mans -o /dev/null
check "/dev/null still a device" test -c /dev/null

# ------------------------------------------------------------------ PRISM (lossy, progressive)
# f32/f64 with an error bound select PRISM. Real fields from the shared data
# (smooth synthetic stand-ins when a file is missing). JSON checks use python3.
fsize() { wc -c <"$1" 2>/dev/null | tr -d ' '; }

# jcheck NAME FILE EXPR: the Python expression EXPR (d = the JSON object in FILE) is true.
jcheck() {
  local name="$1" f="$2" expr="$3"
  [[ $HAVE_PY == 1 ]] || return 0
  check "$name" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
if not eval(sys.argv[2]):
    sys.exit("false: %s\n%s" % (sys.argv[2], json.dumps(d, indent=1)))' "$f" "$expr"
}

synth_float() {  # synth_float OUT f|d DIMS [FILL]: smooth field, FILL on a quarter of each row
  if [[ $HAVE_PY == 1 ]]; then
    python3 - "$@" <<'EOF'
import math, struct, sys
out, code, dims = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split("x")]
fill = float(sys.argv[4]) if len(sys.argv) > 4 else None
n = 1
for d in dims: n *= d
fast = dims[-1]
vals = []
for i in range(n):
    x, y = i % fast, i // fast
    v = 250 + 30 * math.sin(x * 0.05) * math.cos(y * 0.013) + 0.01 * ((i * 7919) % 101)
    vals.append(fill if fill is not None and x < fast // 4 else v)
open(out, "wb").write(struct.pack("<%d%s" % (n, code), *vals))
EOF
  else
    local n=1 d
    for d in ${3//x/ }; do n=$((n * d)); done
    head -c $((n * ($2 == d ? 8 : 4))) /dev/urandom >"$1"
  fi
}

E5="$DATA/echam5_t_17x96x192.f32"; E5_DIMS=17x96x192; E5_SZ="192 96 17"
LEV="$DATA/levitus_temp_20x180x360.f32"; LEV_DIMS=20x180x360
SDO="$DATA/sdo_aia171_128x128.f64"; SDO_DIMS=128x128; SDO_SZ="128 128"
ONE_D="$DATA/navy_uwnd_132x73x144.f32"
if [[ ! -f "$E5" ]]; then E5="$WORK/e5.f32"; synth_float "$E5" f $E5_DIMS; echo "note: synthetic stand-in for echam5"; fi
if [[ ! -f "$LEV" ]]; then LEV="$WORK/lev.f32"; LEV_DIMS=10x40x60; synth_float "$LEV" f $LEV_DIMS -1e10; echo "note: synthetic stand-in for levitus"; fi
if [[ ! -f "$SDO" ]]; then SDO="$WORK/sdo.f64"; synth_float "$SDO" d $SDO_DIMS; echo "note: synthetic stand-in for sdo"; fi
if [[ ! -f "$ONE_D" ]]; then ONE_D="$E5"; fi
ONE_D_N=$(( $(fsize "$ONE_D") / 4 ))
E5_RAW=$(fsize "$E5")

# --- compress: long options, --json, --verify
expect 0 "prism: compress echam5 --rel 1e-6 --verify --json" \
  "$MANS" compress -t f32 --dims $E5_DIMS --error-bound 1e-6 --rel -i "$E5" -o e6.prism --verify --json
cp last.out pc.json
check "prism: compress --json parses" json_ok pc.json
check "prism: compress --json bound_met (grep)" grep -q '"bound_met":true' pc.json
jcheck "prism: compress --json fields" pc.json 'all(k in d for k in ["command","input","output","codec","dtype","dims","elements","raw_bytes","compressed_bytes","ratio","bits_per_value","error_bound","error_mode","requested_bound","value_min","value_max","masked","outliers","seconds","mb_per_s","max_abs_error","max_rel_error","psnr","nrmse","verified","bound_met"])'
jcheck "prism: compress --json values" pc.json 'd["codec"] == "prism" and d["dtype"] == "f32" and d["dims"] == [int(x) for x in "'$E5_DIMS'".split("x")] and d["error_mode"] == "rel" and d["requested_bound"] == 1e-6 and d["raw_bytes"] == 4 * d["elements"]'
jcheck "prism: compress error_bound = rel x range" pc.json 'abs(d["error_bound"] - 1e-6 * (d["value_max"] - d["value_min"])) <= 1e-12 * d["error_bound"] + 1e-300'
jcheck "prism: --verify max_abs_error within bound" pc.json 'd["verified"] is True and d["bound_met"] is True and d["max_abs_error"] <= d["error_bound"] and d["max_rel_error"] <= 1e-6'
jcheck "prism: compressed_bytes = file size" pc.json 'd["compressed_bytes"] == '"$(fsize e6.prism)"
E6_SIZE=$(fsize e6.prism)

expect 0 "prism: compress echam5 --rel 1e-3 --stats" \
  "$MANS" compress -t f32 --dims $E5_DIMS --error-bound 1e-3 --rel -i "$E5" -o e3.prism --stats
check "prism: compress --stats line" grep -Eq '^mans: compress .*: [0-9]+ -> [0-9]+ B, ratio [0-9.]+, [0-9.]+ bits/value, [0-9.]+ MB/s, prism f32 [0-9x]+, bound rel 0.001 = abs [0-9.e+-]+, max error [0-9.e+-]+, backend (cpu|cuda|hip) \(.+, [0-9]+ thread\(s\)$' last.err
check "prism: --stats prints nothing on stdout" test ! -s last.out
check "prism: 1e-3 archive smaller than 1e-6 archive" test "$(fsize e3.prism)" -lt "$E6_SIZE"
check "prism: archive starts with the mans magic" cmp -n 4 e6.prism a.mans

# --- SZ-style options give the identical archive
expect 0 "prism: SZ-style -f -3 nx ny nz -M REL -R" \
  "$MANS" compress -f -3 $E5_SZ -M REL -R 1e-6 -i "$E5" -o e6sz.prism
check "prism: SZ-style flags = long flags (cmp)" cmp e6.prism e6sz.prism
expect 0 "prism: SZ-style -R alone, --dims" "$MANS" compress -f --dims $E5_DIMS -R 1e-3 -i "$E5" -o e3sz.prism
check "prism: -R alone = --error-bound --rel (cmp)" cmp e3.prism e3sz.prism
expect 0 "prism: -M ABS -A 0.01" "$MANS" compress -t float32 -3 $E5_SZ -M ABS -A 0.01 -i "$E5" -o abs1.prism
expect 0 "prism: --error-bound 0.01" "$MANS" compress -t f32 --dims $E5_DIMS --error-bound 0.01 -i "$E5" -o abs2.prism
check "prism: -M ABS -A = --error-bound (cmp)" cmp abs1.prism abs2.prism
expect 0 "prism: compress to stdout" "$MANS" compress -t f32 --dims $E5_DIMS --error-bound 1e-6 --rel -i "$E5" -o -
cp last.out e6pipe.prism
check "prism: stdout archive = file archive" cmp e6.prism e6pipe.prism
"$MANS" compress -t f32 --dims $E5_DIMS --error-bound 1e-6 --rel -i - -o e6stdin.prism <"$E5" 2>last.err || true
check "prism: stdin archive = file archive" cmp e6.prism e6stdin.prism
expect 0 "prism: --threads 1 archive" "$MANS" compress -t f32 --dims $E5_DIMS --error-bound 1e-6 --rel --threads 1 -i "$E5" -o e6t1.prism
check "prism: archive independent of --threads" cmp e6.prism e6t1.prism

# --- decompress: full, then coarser targets reading fewer bytes
expect 0 "prism: decompress full --original --json" \
  "$MANS" decompress -i e6.prism -o full.f32 --original "$E5" --json
cp last.out pf.json
check "prism: decompress --json parses" json_ok pf.json
check "prism: full retrieval bound_met (grep)" grep -q '"bound_met":true' pf.json
jcheck "prism: decompress --json fields" pf.json 'all(k in d for k in ["command","input","output","codec","dtype","dims","elements","raw_bytes","archive_bytes","bytes_read","max_abs_error_bound","psnr_estimate","complete","seconds","mb_per_s","max_abs_error","max_rel_error","psnr","nrmse","rmse","value_range","bound_met"])'
jcheck "prism: full retrieval reads everything, complete" pf.json 'd["complete"] is True and d["bytes_read"] == d["archive_bytes"] == '"$E6_SIZE"' and d["codec"] == "prism" and d["target"] == "full"'
jcheck "prism: full retrieval error within its bound" pf.json 'd["bound_met"] is True and d["max_abs_error"] <= d["max_abs_error_bound"] and d["max_rel_error"] <= 1e-6'
check "prism: full output has the raw size" test "$(fsize full.f32)" = "$E5_RAW"

prev_read=$E6_SIZE
for rel in 1e-3 1e-2 1e-1; do
  expect 0 "prism: decompress --error-bound $rel --rel --original" \
    "$MANS" decompress -i e6.prism -o r$rel.f32 --error-bound $rel --rel --original "$E5" --json
  cp last.out r$rel.json
  check "prism: rel $rel bound_met (grep)" grep -q '"bound_met":true' r$rel.json
  jcheck "prism: rel $rel error within requested and rigorous bound" r$rel.json 'd["bound_met"] is True and d["max_abs_error"] <= d["requested_bound"] and d["max_abs_error"] <= d["max_abs_error_bound"] <= d["requested_bound"] and d["max_rel_error"] <= '$rel
  jcheck "prism: rel $rel reads less than the archive" r$rel.json 'd["bytes_read"] < d["archive_bytes"] and d["complete"] is False'
  jcheck "prism: rel $rel reads less than the finer bound" r$rel.json 'd["bytes_read"] < '"$prev_read"
  check "prism: rel $rel output has the raw size" test "$(fsize r$rel.f32)" = "$E5_RAW"
  [[ $HAVE_PY == 1 ]] && prev_read=$(json_field r$rel.json bytes_read)
done

expect 0 "prism: decompress --stats" "$MANS" decompress -i e6.prism -o st.f32 --error-bound 1e-3 --rel --original "$E5" --stats
check "prism: decompress --stats line" grep -Eq '^mans: decompress e6.prism: read [0-9]+ of [0-9]+ B \([0-9.]+%\) -> [0-9]+ B, prism f32 [0-9x]+, target rel 0.001, max error bound [0-9.e+-]+, psnr estimate [0-9.e+-]+ dB, partial, [0-9.]+ MB/s, backend (cpu|cuda|hip) \(.+, [0-9]+ thread\(s\); vs original: max_abs_error .*, bound met$' last.err
check "prism: the same target gives the same output" cmp st.f32 r1e-3.f32

expect 2 "prism: decompress --backend cuda when unavailable" \
  "$MANS" decompress -i e6.prism -o gb.f32 --error-bound 1e-3 --rel --backend cuda
check "prism: decompress backend message" grep -q "backend 'cuda' is unavailable: cuda: " last.err
no_leftover "prism: unavailable backend" gb.f32
# With a stand-in GPU module (MANS_TEST_FIXTURE_MODULE_DIR, set by ctest):
# the module's retrieval is the CPU's, and --stats names where it ran.
if [[ -n "${MANS_TEST_FIXTURE_MODULE_DIR:-}" ]]; then
  MANS_BACKEND_PATH="$MANS_TEST_FIXTURE_MODULE_DIR" "$MANS" decompress -i e6.prism -o gpu.f32 --error-bound 1e-3 \
    --rel --backend cuda --stats 2>last.err && ok "prism: decompress --backend cuda (stand-in module)" ||
    bad "prism: decompress --backend cuda (stand-in module)"
  check "prism: module retrieval = CPU retrieval (cmp)" cmp gpu.f32 st.f32
  check "prism: --stats names the module" grep -q ", backend cuda (" last.err
fi

# Absolute bound, SZ-style on decompress too; the 1e-3 archive read at 1e-2.
expect 0 "prism: decompress --error-bound 0.5 (abs)" "$MANS" decompress -i e6.prism -o ab.f32 --error-bound 0.5 --original "$E5" --json
cp last.out ab.json
jcheck "prism: abs 0.5 within bound, partial read" ab.json 'd["bound_met"] is True and d["requested_bound"] == 0.5 and d["max_abs_error"] <= 0.5 and d["bytes_read"] < d["archive_bytes"]'
expect 0 "prism: decompress -M ABS -A 0.5" "$MANS" decompress -i e6.prism -o ab2.f32 -M ABS -A 0.5
check "prism: -M ABS -A = --error-bound on decompress" cmp ab.f32 ab2.f32
expect 0 "prism: 1e-3 archive at rel 1e-2" "$MANS" decompress -i e3.prism -o e3r2.f32 --error-bound 1e-2 --rel --original "$E5" --json
cp last.out e3r2.json
jcheck "prism: 1e-3 archive at 1e-2: bound met, partial" e3r2.json 'd["bound_met"] is True and d["bytes_read"] < d["archive_bytes"]'
expect 0 "prism: archive read at its own bound" "$MANS" decompress -i e3.prism -o own.f32 --error-bound 1e-3 --rel --original "$E5"

# --psnr and --bytes targets.
expect 0 "prism: decompress --psnr 60" "$MANS" decompress -i e6.prism -o p60.f32 --psnr 60 --original "$E5" --json
cp last.out p60.json
jcheck "prism: --psnr 60 estimate reached, partial read" p60.json 'd["target"] == "psnr" and d["psnr_estimate"] >= 60 and d["bytes_read"] < d["archive_bytes"] and d["bound_met"] is True'
jcheck "prism: --psnr 60 measured psnr near 60" p60.json 'd["psnr"] >= 57'
# Budgets between header+base (read by every retrieval) and the whole archive.
json_int() { sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$1"; }  # json_int FILE KEY (no python needed)
"$MANS" info --json e6.prism >pi0.json 2>last.err || true
HB=$(( $(json_int pi0.json header_bytes || echo 0) + $(json_int pi0.json base_bytes || echo 0) ))
BUDGET_K=$(( (HB + (E6_SIZE - HB) / 3) / 1024 ))
BUDGET_SMALL=$(( HB + (E6_SIZE - HB) / 8 ))
expect 0 "prism: decompress --bytes ${BUDGET_K}K" "$MANS" decompress -i e6.prism -o bk.f32 --bytes ${BUDGET_K}K --original "$E5" --json
cp last.out bk.json
jcheck "prism: --bytes ${BUDGET_K}K reads at most $((BUDGET_K * 1024)) bytes" bk.json 'd["target"] == "bytes" and 0 < d["bytes_read"] <= '$((BUDGET_K * 1024))' and d["bytes_read"] < d["archive_bytes"] and d["bound_met"] is True'
check "prism: --bytes budget respected (no python)" test "$(json_int bk.json bytes_read)" -le $((BUDGET_K * 1024))
expect 0 "prism: decompress --bytes $BUDGET_SMALL" "$MANS" decompress -i e6.prism -o bs.f32 --bytes $BUDGET_SMALL --json
cp last.out bs.json
check "prism: --bytes $BUDGET_SMALL budget respected" test "$(json_int bs.json bytes_read)" -le $BUDGET_SMALL
jcheck "prism: a larger budget gives a tighter bound" bs.json 'd["max_abs_error_bound"] >= '"$(json_field bk.json max_abs_error_bound 2>/dev/null || echo 0)"

# Pipes: the archive from stdin (read whole), data to stdout, --json to stderr.
"$MANS" decompress -i - -o - --error-bound 1e-3 --rel --json <e6.prism >pipe.f32 2>pipe.json || true
check "prism: stdin -> stdout retrieval = file retrieval" cmp pipe.f32 r1e-3.f32
check "prism: --json goes to stderr with -o -" json_ok pipe.json
jcheck "prism: stdin retrieval reads the same bytes" pipe.json 'd["bytes_read"] < d["archive_bytes"] and d["input"] == "<stdin>"'
"$MANS" decompress -i - -o - <e6.prism >pipefull.f32 2>last.err || true
check "prism: stdin full retrieval = file full retrieval" cmp pipefull.f32 full.f32
if cat "$E5" | "$MANS" compress -t f32 --dims $E5_DIMS -R 1e-6 -i - -o - 2>last.err | "$MANS" decompress -i - -o - 2>>last.err | cmp - full.f32 2>>last.err; then
  ok "prism: compress | decompress pipeline"
else
  bad "prism: compress | decompress pipeline"
fi

# --- info
expect 0 "prism: info" "$MANS" info e6.prism
for field in "codec *prism" "dtype *f32" "dims *$E5_DIMS" "elements" "error mode *relative" "requested bound *1e-06" \
             "absolute bound" "value range" "plane coding *negabinary" "levels" "archive bytes *$E6_SIZE" "header bytes" \
             "base bytes" "masked values" "outliers" "full max error" "requested bound -> bytes to read" \
             "^ *rel 0.1 " "^ *rel 0.01 " "^ *rel 0.001 " "^ *rel 1e-06 " "^ *full .* $E6_SIZE *100.00%"; do
  check "prism: info shows '$field'" grep -q -- "$field" last.out
done
expect 0 "prism: info --json" "$MANS" info --json e6.prism
cp last.out pi.json
check "prism: info --json parses" json_ok pi.json
jcheck "prism: info --json fields" pi.json 'd["codec"] == "prism" and d["dims"] == [int(x) for x in "'$E5_DIMS'".split("x")] and d["error_mode"] == "rel" and d["archive_bytes"] == '"$E6_SIZE"' and all(k in d for k in ["header_bytes","base_bytes","masked","outliers","full_max_error","value_min","value_max","planes","levels","error_bound","requested_bound"])'
jcheck "prism: info retrieval_table rows 1e-1 .. 1e-6, full" pi.json '[r["rel_bound"] for r in d["retrieval_table"]] == [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, None] and d["retrieval_table"][-1]["requested"] == "full"'
jcheck "prism: info table bytes grow, bounds shrink" pi.json 'all(a["bytes"] <= b["bytes"] and a["max_abs_error_bound"] >= b["max_abs_error_bound"] for a, b in zip(d["retrieval_table"], d["retrieval_table"][1:])) and d["retrieval_table"][-1]["bytes"] == d["archive_bytes"]'
if [[ $HAVE_PY == 1 ]]; then
  RT3=$(python3 -c 'import json; print([r["bytes"] for r in json.load(open("pi.json"))["retrieval_table"] if r["rel_bound"] == 1e-3][0])')
  jcheck "prism: info table row = bytes a retrieval reads" r1e-3.json 'd["bytes_read"] == '"$RT3"
fi
expect 0 "prism: info from stdin" "$MANS" info - <e6.prism
check "prism: info from stdin shows the table" grep -q "^ *full " last.out

# --- levitus: fill value -1e10 on land, kept exactly
expect 0 "prism: levitus --rel 1e-3 --verify --json" \
  "$MANS" compress -t f32 --dims $LEV_DIMS --error-bound 1e-3 --rel -i "$LEV" -o lev.prism --verify --json
cp last.out lev.json
jcheck "prism: levitus fill detected and masked" lev.json 'd["masked"] > 0 and -1e10 in d["fill_values"] and d["value_min"] > -1e9 and d["bound_met"] is True'
expect 0 "prism: levitus explicit --fill -1e10 --no-detect-fill" \
  "$MANS" compress -t f32 --dims $LEV_DIMS --error-bound 1e-3 --rel --fill -1e10 --no-detect-fill -i "$LEV" -o lev2.prism
check "prism: explicit fill = detected fill (cmp)" cmp lev.prism lev2.prism
expect 0 "prism: levitus at rel 1e-2 --original" \
  "$MANS" decompress -i lev.prism -o lev.out --error-bound 1e-2 --rel --original "$LEV" --json
cp last.out levd.json
jcheck "prism: levitus bound met, no fill mismatch" levd.json 'd["bound_met"] is True and d["mismatches"] == 0 and d["max_rel_error"] <= 1e-2'
if [[ $HAVE_PY == 1 ]]; then
  check "prism: levitus fill values bit-exact in the output" python3 - "$LEV" lev.out <<'EOF'
import struct, sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
assert len(a) == len(b)
fill = struct.pack("<f", -1e10)
n = 0
for i in range(0, len(a), 4):
    if a[i:i + 4] == fill:
        n += 1
        assert b[i:i + 4] == fill, i
assert n > 0
EOF
fi

# --- sdo: float64, 2D
expect 0 "prism: sdo f64 --error-bound 0.5 --verify --json" \
  "$MANS" compress -t f64 --dims $SDO_DIMS --error-bound 0.5 -i "$SDO" -o sdo.prism --verify --json
cp last.out sdo.json
jcheck "prism: sdo f64 fields" sdo.json 'd["dtype"] == "f64" and d["error_mode"] == "abs" and d["error_bound"] == 0.5 and d["raw_bytes"] == 8 * d["elements"] and d["bound_met"] is True and d["max_abs_error"] <= 0.5'
expect 0 "prism: sdo SZ-style -d -2 nx ny -A" "$MANS" compress -d -2 $SDO_SZ -A 0.5 -i "$SDO" -o sdo2.prism
check "prism: sdo SZ-style = long flags (cmp)" cmp sdo.prism sdo2.prism
expect 0 "prism: sdo at abs 4 --original" "$MANS" decompress -i sdo.prism -o sdo.out --error-bound 4 --original "$SDO" --json
cp last.out sdod.json
jcheck "prism: sdo bound met, partial read" sdod.json 'd["bound_met"] is True and d["max_abs_error"] <= 4 and d["bytes_read"] < d["archive_bytes"] and d["dtype"] == "f64"'

# --- one-dimensional: no --dims, or SZ -1 n
expect 0 "prism: 1D without --dims" "$MANS" compress -t f32 --error-bound 1e-4 --rel -i "$ONE_D" -o oned.prism --json
cp last.out oned.json
jcheck "prism: 1D dims = [file length]" oned.json 'd["dims"] == ['"$ONE_D_N"']'
expect 0 "prism: 1D SZ-style -1 n" "$MANS" compress -f -1 "$ONE_D_N" -M REL -R 1e-4 -i "$ONE_D" -o oned2.prism
check "prism: 1D -1 n = no --dims (cmp)" cmp oned.prism oned2.prism
expect 0 "prism: 1D at rel 1e-2 --original" "$MANS" decompress -i oned.prism -o oned.out --error-bound 1e-2 --rel --original "$ONE_D" --json
cp last.out onedd.json
jcheck "prism: 1D bound met, partial read" onedd.json 'd["bound_met"] is True and d["bytes_read"] < d["archive_bytes"]'
expect 0 "prism: info on a 1D archive" "$MANS" info oned.prism
check "prism: 1D info dims" grep -q "dims *$ONE_D_N (slowest to fastest, rank 1)" last.out

# --- sign-magnitude planes
expect 0 "prism: --planes sign-magnitude" "$MANS" compress -t f32 --dims $E5_DIMS --error-bound 1e-4 --rel --planes sign-magnitude -i "$E5" -o sm.prism --json
cp last.out sm.json
jcheck "prism: planes recorded" sm.json 'd["planes"] == "sign-magnitude"'
expect 0 "prism: sign-magnitude at rel 1e-2" "$MANS" decompress -i sm.prism -o sm.out --error-bound 1e-2 --rel --original "$E5" --json
cp last.out smd.json
jcheck "prism: sign-magnitude bound met" smd.json 'd["bound_met"] is True'
expect 0 "prism: info sign-magnitude" "$MANS" info sm.prism
check "prism: info shows sign-magnitude" grep -q "plane coding *sign-magnitude" last.out

# --- usage errors (exit 1)
expect 1 "prism: error bound with an integer dtype" "$MANS" compress -i "$U16" -o pe1.out -t u16 --error-bound 1e-3
check "prism: integer-dtype message" grep -q "applies to f32/f64" last.err
expect 1 "prism: SZ -A with an integer dtype" "$MANS" compress -i "$U16" -o pe1.out -t i16 -A 1
expect 1 "prism: f32 without a bound" "$MANS" compress -i "$E5" -o pe1.out -t f32
check "prism: no-bound message" grep -q "needs an error bound" last.err
expect 1 "prism: -f without a bound" "$MANS" compress -i "$E5" -o pe1.out -f --dims $E5_DIMS
expect 1 "prism: f64 without a bound" "$MANS" compress -i "$SDO" -o pe1.out -t f64
expect 1 "prism: --rel without --error-bound" "$MANS" compress -i "$E5" -o pe1.out -t f32 --rel
expect 1 "prism: --error-bound 0" "$MANS" compress -i "$E5" -o pe1.out -t f32 --error-bound 0
expect 1 "prism: --error-bound -1" "$MANS" compress -i "$E5" -o pe1.out -t f32 --error-bound -1
expect 1 "prism: --error-bound abc" "$MANS" compress -i "$E5" -o pe1.out -t f32 --error-bound abc
expect 1 "prism: --error-bound nan" "$MANS" compress -i "$E5" -o pe1.out -t f32 --error-bound nan
expect 1 "prism: bad --planes" "$MANS" compress -i "$E5" -o pe1.out -t f32 --error-bound 1 --planes gray
expect 1 "prism: bad --fill" "$MANS" compress -i "$E5" -o pe1.out -t f32 --error-bound 1 --fill lots
expect 1 "prism: --fill with an integer dtype" "$MANS" compress -i "$U16" -o pe1.out -t u16 --fill 3
expect 1 "prism: --block-size with f32" "$MANS" compress -i "$E5" -o pe1.out -t f32 --error-bound 1 --block-size 64K
expect 2 "prism: --dims product mismatch (known after reading)" "$MANS" compress -i "$E5" -o pe1.out -t f32 --error-bound 1 --dims 3x4
expect 1 "prism: -M ABS without -A" "$MANS" compress -i "$E5" -o pe1.out -f -M ABS -R 1e-3
expect 1 "prism: -M REL without -R" "$MANS" compress -i "$E5" -o pe1.out -f -M REL -A 1e-3
expect 1 "prism: unsupported -M" "$MANS" compress -i "$E5" -o pe1.out -f -M PW_REL -R 1e-3
expect 1 "prism: -A and -R without -M" "$MANS" compress -i "$E5" -o pe1.out -f -A 1 -R 1e-3
expect 1 "prism: -3 with two dims" "$MANS" compress -i "$E5" -o pe1.out -f -R 1e-3 -3 192 96
expect 1 "prism: -A without a value" "$MANS" compress -i "$E5" -o pe1.out -f -A
expect 1 "prism: two targets" "$MANS" decompress -i e6.prism -o pe1.out --error-bound 1 --psnr 40
expect 1 "prism: --rel alone on decompress" "$MANS" decompress -i e6.prism -o pe1.out --rel
expect 1 "prism: bad --bytes" "$MANS" decompress -i e6.prism -o pe1.out --bytes 12Q
expect 1 "prism: bad --psnr" "$MANS" decompress -i e6.prism -o pe1.out --psnr loud
# Lossy options on a lossless MANS stream: a usage error (exit 1), file or stdin.
expect 1 "prism: --error-bound on a MANS stream" "$MANS" decompress -i a.mans -o pe1.out --error-bound 1
check "prism: MANS stream message" grep -q "apply to PRISM (lossy) archives only" last.err
expect 1 "prism: --psnr on a MANS stream via stdin" "$MANS" decompress -i - -o pe1.out --psnr 40 <a.mans
expect 1 "prism: --original on a MANS stream" "$MANS" decompress -i a.mans -o pe1.out --original "$U16"
no_leftover "prism: usage errors" pe1.out

# --- unreachable targets, damaged archives, I/O (exit 2)
expect 2 "prism: bound tighter than the archive" "$MANS" decompress -i e6.prism -o pe2.out --error-bound 1e-7 --rel
check "prism: tighter-bound message names the archive's bound" grep -q "tighter than the archive's bound rel 1e-06" last.err
check "prism: tighter-bound message names the status" grep -q "(MANS_ERR_TARGET_UNREACHABLE)$" last.err
no_leftover "prism: bound tighter than the archive" pe2.out
expect 2 "prism: abs bound tighter than the archive" "$MANS" decompress -i e3.prism -o pe2.out -A 1e-6
expect 2 "prism: --psnr above the archive" "$MANS" decompress -i e3.prism -o pe2.out --psnr 300
check "prism: psnr message" grep -q "MANS_ERR_TARGET_UNREACHABLE" last.err
expect 2 "prism: --bytes below header and base" "$MANS" decompress -i e6.prism -o pe2.out --bytes $((HB - 1))
check "prism: bytes message" grep -q "bytes of header and base" last.err

head -c $((E6_SIZE / 2)) e6.prism >ptrunc.prism
expect 2 "prism: truncated archive" "$MANS" decompress -i ptrunc.prism -o pe2.out
check "prism: truncated message names path and status" grep -Eq '^mans: error: ptrunc.prism: .* \(MANS_ERR_TRUNCATED\)$' last.err
no_leftover "prism: truncated archive" pe2.out
expect 2 "prism: truncated archive via stdin" "$MANS" decompress -i - -o pe2.out <ptrunc.prism
expect 2 "prism: truncated archive, coarse target" "$MANS" decompress -i ptrunc.prism -o pe2.out --error-bound 1e-1 --rel
expect 2 "prism: info on a truncated archive" "$MANS" info ptrunc.prism
head -c 40 e6.prism >pshort.prism
expect 2 "prism: archive cut inside the header" "$MANS" decompress -i pshort.prism -o pe2.out
cp e6.prism pflip.prism
flip_byte pflip.prism $((E6_SIZE - 100)) || true
expect 2 "prism: bit-flipped plane data" "$MANS" decompress -i pflip.prism -o pe2.out
check "prism: bit-flip message names status" grep -Eq '\(MANS_ERR_[A-Z_]+\)$' last.err
no_leftover "prism: bit-flipped plane data" pe2.out
expect 0 "prism: coarse retrieval skips the damaged last bytes" "$MANS" decompress -i pflip.prism -o pe2.out --error-bound 1e-1 --rel
rm -f pe2.out
head -c 1000 "$E5" >pshort.f32
expect 2 "prism: --original of the wrong size" "$MANS" decompress -i e6.prism -o pe2.out --original pshort.f32
no_leftover "prism: --original of the wrong size" pe2.out
expect 2 "prism: missing --original" "$MANS" decompress -i e6.prism -o pe2.out --original does-not-exist.f32
head -c 1001 "$E5" >podd.f32
expect 2 "prism: odd-size f32 input" "$MANS" compress -t f32 --error-bound 1 -i podd.f32 -o pe2.out
check "prism: odd-size message" grep -q "not a multiple of the f32 element size" last.err
expect 2 "prism: missing input" "$MANS" compress -t f32 --error-bound 1 -i does-not-exist.f32 -o pe2.out
no_leftover "prism: I/O errors" pe2.out

# --- the bound is checked against --original (exit 3, nothing written)
cp "$E5" perturbed.f32
flip_byte perturbed.f32 1003 || true
expect 3 "prism: --original that differs beyond the bound" \
  "$MANS" decompress -i e6.prism -o pe3.out --error-bound 1e-3 --rel --original perturbed.f32 --json
cp last.out pe3.json
check "prism: failed check still reports JSON" json_ok pe3.json
check "prism: failed check reports bound_met false" grep -q '"bound_met":false' pe3.json
check "prism: failed check message" grep -q "exceeds the bound" last.err
no_leftover "prism: failed check" pe3.out

# ------------------------------------------------------------------ summary
echo "$PASS passed, $FAIL failed"
[[ $FAIL -eq 0 ]]
