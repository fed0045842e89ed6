#!/usr/bin/env bash
# test_cli.sh - end-to-end tests of the `mans` command-line tool.
#
#   tests/cli/test_cli.sh [MANS_BINARY] [DATA_DIR]
#
# MANS_BINARY defaults to build/cli/mans, DATA_DIR to ../shared/data (both from
# the repository root), else datasets/cache. Missing data files are replaced by
# small synthetic ones. Prints "N passed, M failed" last; exits 1 if M > 0.
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
expect 1 "unknown dtype" "$MANS" compress -i "$U16" -o e1.out -t f32
no_leftover "unknown dtype" e1.out
expect 1 "missing -t" "$MANS" compress -i "$U16" -o e1.out
expect 1 "missing -o" "$MANS" compress -i "$U16" -t u16
expect 1 "no subcommand" "$MANS"
expect 1 "unknown subcommand" "$MANS" frobnicate
expect 1 "unknown option" "$MANS" compress -i "$U16" -o e1.out -t u16 --bogus
expect 1 "bad --dims format" "$MANS" compress -i "$U16" -o e1.out -t u16 --dims 3xx4
expect 1 "--dims product mismatch" "$MANS" compress -i "$U16" -o e1.out -t u16 --dims 3x4
expect 1 "bad --block-size" "$MANS" compress -i "$U16" -o e1.out -t u16 --block-size 12Q
expect 1 "negative --threads" "$MANS" compress -i "$U16" -o e1.out -t u16 --threads -1
expect 1 "unknown backend" "$MANS" compress -i "$U16" -o e1.out -t u16 --backend foo
no_leftover "usage errors" e1.out

# ------------------------------------------------------------------ I/O and format errors (exit 2)
expect 2 "unavailable backend cuda" "$MANS" compress -i "$U16" -o e2.out -t u16 --backend cuda
check "backend message" grep -q "backend 'cuda' is not available in this build" last.err
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

# ------------------------------------------------------------------ summary
echo "$PASS passed, $FAIL failed"
[[ $FAIL -eq 0 ]]
