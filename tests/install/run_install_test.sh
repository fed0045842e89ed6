#!/usr/bin/env bash
# run_install_test.sh BUILD_DIR [EXPECT_CLI=1]
#
# Installs BUILD_DIR into a temporary prefix, checks the installed files,
# builds and runs tests/install/consumer against it with find_package(mans)
# (CMAKE_PREFIX_PATH) and with pkg-config (PKG_CONFIG_PATH + plain g++), and
# runs the installed CLI. Registered as the ctest `install`.
set -euo pipefail

BUILD=$(cd "${1:?usage: run_install_test.sh BUILD_DIR [EXPECT_CLI]}" && pwd)
EXPECT_CLI=${2:-1}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
EXAMPLES=$ROOT/docs/examples
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mans-install-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PREFIX=$TMP/prefix
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

echo "== cmake --install $BUILD --prefix $PREFIX"
cmake --install "$BUILD" --prefix "$PREFIX" > "$TMP/install.log" || { cat "$TMP/install.log"; echo "FAIL: install"; exit 1; }

# The library directory (lib, lib64 or lib/<multiarch>, whatever GNUInstallDirs chose).
LIB=$(find "$PREFIX" -name 'libmans.a' -o -name 'libmans.so' | head -n 1)
if [[ -z "$LIB" ]]; then fail "no libmans.a / libmans.so installed"; LIBDIR=$PREFIX/lib; else LIBDIR=$(dirname "$LIB"); fi
echo "   library: ${LIB#$PREFIX/}"
for f in include/mans/mans.h include/mans/mans.hpp include/mans/version.h \
         "${LIBDIR#$PREFIX/}/cmake/mans/mansConfig.cmake" \
         "${LIBDIR#$PREFIX/}/cmake/mans/mansConfigVersion.cmake" \
         "${LIBDIR#$PREFIX/}/cmake/mans/mansTargets.cmake" \
         "${LIBDIR#$PREFIX/}/pkgconfig/mans.pc"; do
  [[ -f "$PREFIX/$f" ]] && echo "   ok $f" || fail "missing $f"
done
[[ "${LIBDIR#$PREFIX/}" == lib ]] || echo "   note: library directory is ${LIBDIR#$PREFIX/}, not lib"
if [[ "$EXPECT_CLI" == 1 ]]; then
  [[ -x "$PREFIX/bin/mans" ]] && echo "   ok bin/mans" || fail "missing bin/mans (MANS_BUILD_CLI is ON)"
fi
# Internal headers must not leak into the installed include folder.
extra=$(find "$PREFIX/include" -type f ! -name mans.h ! -name mans.hpp ! -name prism.hpp ! -name prism.h ! -name version.h ! -name h5filter.h ! -name h5_params.h | sed "s|$PREFIX/||")
[[ -z "$extra" ]] || echo "   note: other installed headers: $extra"

# The HDF5 filter, when this build has it: installed as a plugin that HDF5's
# tools load from the installed folder, plus the link-in library and headers.
if [[ -f "$BUILD/plugins/serial/libh5z_mans.so" ]]; then
  PLUGIN=$(find "$PREFIX" -path '*hdf5/serial/plugins/libh5z_mans.so' | head -n 1)
  if [[ -z "$PLUGIN" ]]; then fail "HDF5 plugin not installed under */hdf5/serial/plugins"; else
    echo "   ok ${PLUGIN#$PREFIX/}"
    for f in include/mans/h5filter.h include/mans/h5_params.h; do
      [[ -f "$PREFIX/$f" ]] && echo "   ok $f" || fail "missing $f"
    done
    [[ -n "$(find "$PREFIX" -name 'libmans_hdf5.so*' | head -n 1)" ]] || fail "libmans_hdf5.so not installed"
    if command -v h5import >/dev/null && command -v h5repack >/dev/null && [[ "$EXPECT_CLI" == 1 ]]; then
      python3 -c "import struct,sys; sys.stdout.buffer.write(b''.join(struct.pack('<H', 1500 + (i * 7) % 97) for i in range(4096)))" > "$TMP/u16.raw"
      printf 'PATH x\nINPUT-CLASS UIN\nINPUT-SIZE 16\nRANK 2\nDIMENSION-SIZES 64 64\nOUTPUT-CLASS UIN\nOUTPUT-SIZE 16\nOUTPUT-ARCHITECTURE STD\nOUTPUT-BYTE-ORDER LE\n' > "$TMP/u16.cfg"
      if h5import "$TMP/u16.raw" -c "$TMP/u16.cfg" -o "$TMP/src.h5" >/dev/null &&
         HDF5_PLUGIN_PATH=$(dirname "$PLUGIN") h5repack -f "x:$("$PREFIX/bin/mans" h5-args)" -l x:CHUNK=32x40 "$TMP/src.h5" "$TMP/f.h5" &&
         HDF5_PLUGIN_PATH=$(dirname "$PLUGIN") h5diff "$TMP/src.h5" "$TMP/f.h5" /x /x &&
         h5dump -p -H "$TMP/f.h5" | grep -q "FILTER_ID 36731"; then
        echo "   ok installed plugin: h5repack + h5diff through it"
      else
        fail "installed HDF5 plugin does not work with h5repack/h5diff"
      fi
    fi
  fi
fi

echo "== consumer via find_package(mans) with CMAKE_PREFIX_PATH"
if cmake -S "$HERE/consumer" -B "$TMP/consumer-build" -DCMAKE_PREFIX_PATH="$PREFIX" \
         -DCMAKE_BUILD_TYPE=Release -DMANS_EXAMPLES_DIR="$EXAMPLES" > "$TMP/configure.log" 2>&1; then
  if cmake --build "$TMP/consumer-build" > "$TMP/build.log" 2>&1; then
    "$TMP/consumer-build/consumer" || fail "consumer (C++) run"
    "$TMP/consumer-build/consumer_c" || fail "consumer (C) run"
    "$TMP/consumer-build/quickstart_cpp" || fail "README example docs/examples/quickstart.cpp"
    "$TMP/consumer-build/quickstart_c" || fail "README example docs/examples/quickstart.c"
    "$TMP/consumer-build/prism_quickstart" || fail "README example docs/examples/prism_quickstart.cpp"
    "$TMP/consumer-build/prism_quickstart_c" || fail "example docs/examples/prism_quickstart.c"
  else
    cat "$TMP/build.log"; fail "consumer build (find_package)"
  fi
else
  cat "$TMP/configure.log"; fail "consumer configure (find_package)"
fi

echo "== README quotes docs/examples verbatim"
python3 - "$ROOT/README.md" "$EXAMPLES" <<'PY' || fail "README.md and docs/examples differ"
import sys, pathlib
readme = pathlib.Path(sys.argv[1]).read_text()
for name, lang in (("quickstart.cpp", "cpp"), ("quickstart.c", "c"), ("prism_quickstart.cpp", "cpp")):
    body = (pathlib.Path(sys.argv[2]) / name).read_text()
    if f"```{lang}\n{body}```" not in readme:
        sys.exit(f"README.md does not quote docs/examples/{name} verbatim")
    print(f"   ok {name} quoted in README.md")
PY

echo "== consumer via pkg-config (PKG_CONFIG_PATH=${LIBDIR#$PREFIX/}/pkgconfig, plain g++)"
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
CXX_BIN=${CXX:-g++}
if ! flags=$(pkg-config --cflags --libs mans); then
  fail "pkg-config --cflags --libs mans"
else
  echo "   pkg-config --cflags --libs mans: $flags"
  # shellcheck disable=SC2086
  if "$CXX_BIN" -std=c++17 -O1 "$HERE/consumer/main.cpp" -o "$TMP/consumer_pc" $flags > "$TMP/pc.log" 2>&1; then
    "$TMP/consumer_pc" || fail "pkg-config consumer run"
  else
    head -c 3000 "$TMP/pc.log"; echo
    fail "pkg-config consumer build with: $CXX_BIN main.cpp $flags"
    # Diagnose which of the two usual causes it is: a prefix baked in at
    # configure time (not relocatable with --prefix), or a static library
    # whose dependencies are only in Libs.private.
    try_flags() {  # label, pkg-config arguments...
      local label=$1; shift
      local f; f=$(pkg-config "$@" mans 2>/dev/null || true)
      # shellcheck disable=SC2086
      if "$CXX_BIN" -std=c++17 -O1 "$HERE/consumer/main.cpp" -o "$TMP/consumer_diag" $f > /dev/null 2>&1 \
         && "$TMP/consumer_diag" > /dev/null; then
        echo "   diagnosis: works with $label: $f"
      else
        echo "   diagnosis: fails with $label: $f"
      fi
    }
    try_flags "--static" --static --cflags --libs
    try_flags "prefix redefined" --define-variable=prefix="$PREFIX" --cflags --libs
    try_flags "prefix redefined + --static" --define-variable=prefix="$PREFIX" --static --cflags --libs
  fi
fi

if [[ -x "$PREFIX/bin/mans" ]]; then
  echo "== $PREFIX/bin/mans --version"
  "$PREFIX/bin/mans" --version || fail "installed CLI --version"
fi

if (( failures )); then
  echo "install test: $failures failure(s)" >&2
  exit 1
fi
echo "install test: ok"
