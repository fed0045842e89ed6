#!/usr/bin/env bash
# test_faults.sh - the mans CLI under I/O faults, both codecs (MANS lossless,
# PRISM lossy), compress, decompress and info:
#   * a disk that fills while the output is written (ulimit -f with SIGXFSZ
#     ignored: writes fail with EFBIG; /dev/full: ENOSPC; stdout on /dev/full),
#   * an input that ends early or shrinks while it is read (a FIFO whose writer
#     stops early, stdin cut short or closed, a file truncated mid-read by
#     fault_shim.c through LD_PRELOAD),
#   * an output directory that cannot be written or does not exist.
# Each fault must exit 2 with "mans: error: <path>: <reason>", leave no output
# and no OUT.tmp.* behind (a previous OUT keeps its bytes) and leave the input
# unchanged (SHA-256 before and after). Also checks that complete FIFOs and a
# partly read stdin work (the fixes made for this script).
#
#   tests/cli/test_faults.sh [MANS_BINARY] [DATA_DIR]
#
# Prints "N passed, M failed" last; exits 1 if M > 0.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MANS="${1:-$ROOT/build/cli/mans}"
DATA="${2:-$ROOT/../shared/data}"
[[ -d "$DATA" ]] || DATA="$ROOT/datasets/cache"
if [[ ! -x "$MANS" ]]; then
  echo "test_faults.sh: mans binary not found or not executable: $MANS" >&2
  exit 2
fi
MANS="$(cd "$(dirname "$MANS")" && pwd)/$(basename "$MANS")"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/mans-fault-test.XXXXXX")"
FEEDERS=()  # FIFO writers still blocked in open() when their reader failed early
trap 'kill "${FEEDERS[@]}" 2>/dev/null || true; chmod -R u+w "$WORK" 2>/dev/null || true; rm -rf "$WORK"' EXIT
chmod 755 "$WORK"  # the unwritable-directory cases run as an unprivileged user
cd "$WORK"

PASS=0
FAIL=0
SKIP=0
ok()   { PASS=$((PASS + 1)); echo "ok   $1"; }
bad()  { FAIL=$((FAIL + 1)); echo "FAIL $1" >&2; [[ -s last.err ]] && sed 's/^/     | /' last.err >&2; return 0; }
skip() { SKIP=$((SKIP + 1)); echo "skip $1"; }
sum()  { sha256sum "$1" | cut -d' ' -f1; }

# fault NAME PATTERN OUT INPUT CMD...: CMD must exit 2 with a "mans: error:"
# line matching PATTERN; OUT (a path, or "" for a device) must not be created,
# or keep its bytes when it existed, and no OUT.tmp.* may remain; INPUT (a
# file, or "") must keep its bytes.
fault() {
  local name="$1" pattern="$2" out="$3" input="$4"; shift 4
  local in_sum="" out_sum="" rc=0 why=""
  [[ -n "$input" ]] && in_sum=$(sum "$input")
  [[ -n "$out" && -e "$out" ]] && out_sum=$(sum "$out")
  "$@" >last.out 2>last.err || rc=$?
  [[ $rc == 2 ]] || why+=" exit $rc, expected 2;"
  grep -Eq "^mans: error: .*$pattern" last.err || why+=" no message matching '$pattern';"
  if [[ -n "$out" ]]; then
    if [[ -n "$out_sum" ]]; then
      [[ -e "$out" && $(sum "$out") == "$out_sum" ]] || why+=" previous $out changed;"
    elif [[ -e "$out" ]]; then
      why+=" $out left behind;"
    fi
    compgen -G "$out.tmp.*" >/dev/null && why+=" temp file left behind: $(echo "$out".tmp.*);"
  fi
  [[ -n "$input" && $(sum "$input") != "$in_sum" ]] && why+=" input $input changed;"
  if [[ -z "$why" ]]; then ok "$name"; else bad "$name:$why"; fi
}

# works NAME CMD...: CMD must succeed.
works() {
  local name="$1"; shift
  if "$@" >last.out 2>last.err; then ok "$name"; else bad "$name (exit $?)"; fi
}

# disk_limit KB CMD...: runs CMD with files limited to KB KiB; SIGXFSZ is
# ignored (inherited through exec), so writes past the limit fail with EFBIG.
disk_limit() { local kb="$1"; shift; bash -c 'ulimit -f "$1"; trap "" XFSZ; shift; exec "$@"' _ "$kb" "$@"; }

# feed BYTES FILE FIFO: a writer that sends the first BYTES of FILE into FIFO
# and stops (in the background).
feed() { mkfifo "$3"; head -c "$1" "$2" >"$3" 2>/dev/null & FEEDERS+=($!); }

# ------------------------------------------------------------------ inputs
U16="$DATA/exafel_1024kB.u16"
F32="$DATA/echam5_t_17x96x192.f32"
F32_DIMS=17x96x192
if [[ ! -f "$U16" || ! -f "$F32" ]]; then  # synthetic stand-ins of the same sizes
  python3 - <<'EOF'
import math, random, struct
random.seed(1)
open("u16.raw", "wb").write(struct.pack("<524288H", *[1500 + int(abs(random.gauss(0, 40))) for _ in range(524288)]))
open("f32.raw", "wb").write(struct.pack("<313344f", *[250 + 30 * math.sin(i * 1e-3) + random.random() for i in range(313344)]))
EOF
  U16="$WORK/u16.raw" F32="$WORK/f32.raw"
fi
works "setup: MANS stream" "$MANS" compress -t u16 -i "$U16" -o ex.mans
works "setup: PRISM archive" "$MANS" compress -t f32 --dims $F32_DIMS --error-bound 1e-4 --rel -i "$F32" -o e.prism
works "setup: PRISM full retrieval" "$MANS" decompress -i e.prism -o e.f32
MANS_BYTES=$(wc -c <ex.mans)
PRISM_BYTES=$(wc -c <e.prism)

# ------------------------------------------------------------------ disk full
# 64 KiB: every output below is larger (MANS stream 0.5 MB, raw 1 MB, archive 0.2 MB).
fault "disk full: MANS compress" "File too large" full.mans "$U16" \
  disk_limit 64 "$MANS" compress -t u16 -i "$U16" -o full.mans
fault "disk full: MANS decompress" "File too large" full.u16 ex.mans \
  disk_limit 64 "$MANS" decompress -i ex.mans -o full.u16
fault "disk full: PRISM compress" "File too large" full.prism "$F32" \
  disk_limit 64 "$MANS" compress -t f32 --dims $F32_DIMS --error-bound 1e-4 --rel -i "$F32" -o full.prism
fault "disk full: PRISM full retrieval" "File too large" full.f32 e.prism \
  disk_limit 64 "$MANS" decompress -i e.prism -o full.f32
fault "disk full: PRISM coarse retrieval" "File too large" full.f32 e.prism \
  disk_limit 64 "$MANS" decompress -i e.prism -o full.f32 --error-bound 1e-2 --rel
echo "previous output" >keep.mans
fault "disk full: MANS compress keeps the previous output" "File too large" keep.mans "$U16" \
  disk_limit 64 "$MANS" compress -t u16 -i "$U16" -o keep.mans
echo "previous output" >keep.f32
fault "disk full: PRISM retrieval keeps the previous output" "File too large" keep.f32 e.prism \
  disk_limit 64 "$MANS" decompress -i e.prism -o keep.f32 --psnr 60
fault "/dev/full: MANS compress" "/dev/full: No space left on device" "" "$U16" \
  "$MANS" compress -t u16 -i "$U16" -o /dev/full
fault "/dev/full: MANS decompress" "/dev/full: No space left on device" "" ex.mans \
  "$MANS" decompress -i ex.mans -o /dev/full
fault "/dev/full: PRISM compress" "/dev/full: No space left on device" "" "$F32" \
  "$MANS" compress -t f32 --dims $F32_DIMS --error-bound 1e-4 --rel -i "$F32" -o /dev/full
fault "/dev/full: PRISM retrieval" "/dev/full: No space left on device" "" e.prism \
  "$MANS" decompress -i e.prism -o /dev/full --error-bound 1e-3 --rel
fault "stdout on /dev/full: MANS decompress -o -" "<stdout>: No space left on device" "" ex.mans \
  bash -c '"$0" decompress -i ex.mans -o - >/dev/full' "$MANS"
fault "stdout on /dev/full: PRISM compress -o -" "<stdout>: No space left on device" "" "$F32" \
  bash -c '"$0" compress -t f32 --dims '$F32_DIMS' --error-bound 1e-4 --rel -i "$1" -o - >/dev/full' "$MANS" "$F32"
fault "stdout on /dev/full: MANS info" "<stdout>: No space left on device" "" ex.mans \
  bash -c '"$0" info ex.mans >/dev/full' "$MANS"
fault "stdout on /dev/full: PRISM info --json" "<stdout>: No space left on device" "" e.prism \
  bash -c '"$0" info --json e.prism >/dev/full' "$MANS"
# The report is lost, the output itself is complete: exit 2, output valid.
rc=0; "$MANS" compress -t u16 -i "$U16" -o rep.mans --json >/dev/full 2>last.err || rc=$?
if [[ $rc == 2 ]] && grep -q "^mans: error: <stdout>: No space left on device (writing the report)" last.err &&
   "$MANS" decompress -i rep.mans -o rep.u16 2>/dev/null && cmp -s rep.u16 "$U16"; then
  ok "stdout on /dev/full: a lost --json report is exit 2 (the output is complete)"
else
  bad "stdout on /dev/full: a lost --json report (exit $rc)"
fi

# ------------------------------------------------------------------ inputs that end early
feed 1001 "$U16" f1
fault "FIFO writer stops early: MANS compress (odd size)" "not a multiple of the u16 element size" cut.mans "" \
  "$MANS" compress -t u16 -i f1 -o cut.mans
feed 100000 "$U16" f2
fault "FIFO writer stops early: MANS compress --dims" "--dims 512x1024 describes 524288 elements but f2 holds 50000" cut.mans "" \
  "$MANS" compress -t u16 --dims 512x1024 -i f2 -o cut.mans
feed 600000 "$F32" f3
fault "FIFO writer stops early: PRISM compress --dims" "--dims $F32_DIMS describes 313344 elements but f3 holds 150000" cut.prism "" \
  "$MANS" compress -t f32 --dims $F32_DIMS --error-bound 1e-4 --rel -i f3 -o cut.prism
feed $((MANS_BYTES / 2)) ex.mans f4
fault "FIFO writer stops early: MANS decompress" "f4: .*\(MANS_ERR_[A-Z_]+\)" cut.u16 "" \
  "$MANS" decompress -i f4 -o cut.u16
feed $((PRISM_BYTES / 2)) e.prism f5
fault "FIFO writer stops early: PRISM decompress" "f5: .*\(MANS_ERR_[A-Z_]+\)" cut.f32 "" \
  "$MANS" decompress -i f5 -o cut.f32
feed $((PRISM_BYTES / 2)) e.prism f6
fault "FIFO writer stops early: PRISM info" "f6: .*\(MANS_ERR_[A-Z_]+\)" "" "" "$MANS" info f6
fault "stdin cut short: MANS compress (odd size)" "<stdin>: input size 1001 bytes is not a multiple" cut.mans "$U16" \
  bash -c 'head -c 1001 "$1" | "$0" compress -t u16 -i - -o cut.mans' "$MANS" "$U16"
fault "stdin cut short: PRISM compress --dims" "describes 313344 elements but <stdin> holds 150000" cut.prism "$F32" \
  bash -c 'head -c 600000 "$1" | "$0" compress -t f32 --dims '$F32_DIMS' --error-bound 1 -i - -o cut.prism' "$MANS" "$F32"
fault "stdin cut short: MANS decompress" "<stdin>: .*\(MANS_ERR_[A-Z_]+\)" cut.u16 ex.mans \
  bash -c 'head -c 1000 ex.mans | "$0" decompress -i - -o cut.u16' "$MANS"
fault "stdin cut short: PRISM decompress" "<stdin>: .*\(MANS_ERR_[A-Z_]+\)" cut.f32 e.prism \
  bash -c 'head -c 100000 e.prism | "$0" decompress -i - -o cut.f32 --error-bound 1e-2 --rel' "$MANS"
fault "stdin closed: MANS compress" "<stdin>: Bad file descriptor" cut.mans "" \
  bash -c '"$0" compress -t u16 -i - -o cut.mans <&-' "$MANS"
fault "stdin closed: PRISM decompress" "<stdin>: Bad file descriptor" cut.f32 "" \
  bash -c '"$0" decompress -i - -o cut.f32 <&-' "$MANS"

# A file truncated by "another process" while mans reads it (LD_PRELOAD shim).
CC_BIN="${CC:-cc}"
if command -v "$CC_BIN" >/dev/null 2>&1 &&
   "$CC_BIN" -O1 -shared -fPIC -o fault_shim.so "$ROOT/tests/cli/fault_shim.c" -ldl 2>shim.err; then
  # cut_while_read AFTER CUT_TO FILE CMD...: FILE is cut to CUT_TO bytes once AFTER bytes of it were read.
  cut_while_read() {
    local after="$1" to="$2" file="$3"; shift 3
    LD_PRELOAD="$WORK/fault_shim.so" MANS_FAULT_FILE="$file" MANS_FAULT_AFTER="$after" MANS_FAULT_CUT_TO="$to" "$@"
  }
  cp "$U16" shrink.u16
  fault "file truncated while read: MANS compress" "shrink.u16: the file shrank from 1048576 to 300000 bytes" cut.mans "" \
    cut_while_read 0 300000 shrink.u16 "$MANS" compress -t u16 -i shrink.u16 -o cut.mans
  cp "$F32" shrink.f32
  fault "file truncated while read: PRISM compress" "shrink.f32: the file shrank from 1253376 to 600000 bytes" cut.prism "" \
    cut_while_read 0 600000 shrink.f32 "$MANS" compress -t f32 --dims $F32_DIMS --error-bound 1e-4 --rel -i shrink.f32 -o cut.prism
  cp ex.mans shrink.mans
  fault "file truncated while read: MANS decompress" "shrink.mans: the file shrank from $MANS_BYTES to 300000 bytes" cut.u16 "" \
    cut_while_read 16 300000 shrink.mans "$MANS" decompress -i shrink.mans -o cut.u16
  # PRISM reads the file in ranges: cut after the 16-byte type check, before
  # the header (open succeeds), and after the header (the retrieval fails).
  cp e.prism shrink.prism
  fault "file truncated after the type check: PRISM decompress" "shrink.prism: .*\(MANS_ERR_[A-Z_]+\)" cut.f32 "" \
    cut_while_read 16 $((PRISM_BYTES / 2)) shrink.prism "$MANS" decompress -i shrink.prism -o cut.f32
  cp e.prism shrink.prism
  fault "file truncated after the header: PRISM decompress" "shrink.prism: .*\(MANS_ERR_[A-Z_]+\)" cut.f32 "" \
    cut_while_read 17 $((PRISM_BYTES / 2)) shrink.prism "$MANS" decompress -i shrink.prism -o cut.f32
  cp e.prism shrink.prism
  fault "file truncated while read: PRISM info" "shrink.prism: .*\(MANS_ERR_[A-Z_]+\)" "" "" \
    cut_while_read 0 1000 shrink.prism "$MANS" info shrink.prism
else
  skip "file truncated while read: no C compiler for the LD_PRELOAD shim ($CC_BIN)"
fi

# What must keep working: complete FIFOs (decompress used to consume the first
# 16 bytes of a FIFO to tell the codecs apart), lossy options on a FIFO, and
# stdin that is a file already partly read.
feed "$MANS_BYTES" ex.mans g1
works "complete FIFO: MANS decompress" "$MANS" decompress -i g1 -o g1.u16
works "complete FIFO: MANS decompress output exact" cmp g1.u16 "$U16"
feed "$PRISM_BYTES" e.prism g2
works "complete FIFO: PRISM decompress" "$MANS" decompress -i g2 -o g2.f32
works "complete FIFO: PRISM decompress output as from the file" cmp g2.f32 e.f32
feed "$PRISM_BYTES" e.prism g3
works "complete FIFO: PRISM retrieval with --error-bound" "$MANS" decompress -i g3 -o g3.f32 --error-bound 1e-2 --rel
feed "$MANS_BYTES" ex.mans g4
works "complete FIFO: MANS info" "$MANS" info g4
feed "$PRISM_BYTES" e.prism g5
works "complete FIFO: PRISM info" "$MANS" info g5
works "stdin partly read: MANS compress takes the rest" \
  bash -c '{ head -c 1024 >/dev/null; "$0" compress -t u16 -i - -o part.mans; } <"$1"' "$MANS" "$U16"
tail -c +1025 "$U16" >part.ref
works "stdin partly read: the rest round-trips" "$MANS" decompress -i part.mans -o part.u16
works "stdin partly read: output exact" cmp part.u16 part.ref

# ------------------------------------------------------------------ unwritable / missing output directory
mkdir ro && chmod 555 ro
as_user=()
if [[ $(id -u) == 0 ]]; then  # root writes anywhere: run these as nobody
  if command -v setpriv >/dev/null 2>&1; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --); fi
fi
if [[ $(id -u) != 0 || ${#as_user[@]} -gt 0 ]]; then
  fault "unwritable directory: MANS compress" "ro/x.mans: Permission denied" ro/x.mans "$U16" \
    "${as_user[@]}" "$MANS" compress -t u16 -i "$U16" -o ro/x.mans
  fault "unwritable directory: MANS decompress" "ro/x.u16: Permission denied" ro/x.u16 ex.mans \
    "${as_user[@]}" "$MANS" decompress -i ex.mans -o ro/x.u16
  fault "unwritable directory: PRISM compress" "ro/x.prism: Permission denied" ro/x.prism "$F32" \
    "${as_user[@]}" "$MANS" compress -t f32 --dims $F32_DIMS --error-bound 1e-4 --rel -i "$F32" -o ro/x.prism
  fault "unwritable directory: PRISM retrieval" "ro/x.f32: Permission denied" ro/x.f32 e.prism \
    "${as_user[@]}" "$MANS" decompress -i e.prism -o ro/x.f32 --error-bound 1e-3 --rel
  if [[ -z "$(ls -A ro)" ]]; then ok "unwritable directory: still empty"; else bad "unwritable directory: holds $(ls -A ro)"; fi
else
  skip "unwritable directory: running as root without setpriv"
fi
fault "missing directory: MANS compress" "nodir/x.mans: No such file or directory" nodir/x.mans "$U16" \
  "$MANS" compress -t u16 -i "$U16" -o nodir/x.mans
fault "missing directory: PRISM retrieval" "nodir/x.f32: No such file or directory" nodir/x.f32 e.prism \
  "$MANS" decompress -i e.prism -o nodir/x.f32

# ------------------------------------------------------------------ summary
echo "$PASS passed, $FAIL failed, $SKIP skipped"
[[ $FAIL -eq 0 ]]
