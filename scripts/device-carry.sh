#!/usr/bin/env bash
# device-carry.sh - run HERE (the Debian machine) before a device call: copies
# the header-only build dependencies that the GPU machine lacks from this
# machine's Debian packages into <repo>/.device-deps/ (git-ignored), which the
# device call names in `carry` and scripts/device-check.sh finds there.
#
#   scripts/device-carry.sh        # then: run(command="scripts/device-check.sh",
#                                  #           carry=[".device-deps"])
#
# Copied, nothing else (25 files, 1.3 MiB; no library, no binary), and a
# MANIFEST.txt that lists them with the package versions:
#   libxxhash-dev  include/xxhash.h                  (built with XXH_INLINE_ALL)
#   catch2         include/catch2/catch.hpp          (Catch2 v2 single header)
#                  lib/cmake/Catch2/*.cmake          (package files, less
#                                                     Catch2Targets-none.cmake,
#                                                     which names the static
#                                                     libCatch2WithMain.a)
#   libcli11-dev   include/CLI/*.hpp, share/cmake/CLI11/*.cmake
# The layout is a prefix: CMAKE_PREFIX_PATH=.device-deps finds Catch2 and
# CLI11, MANS_XXHASH_INCLUDE_DIR=.device-deps/include the header. These are
# Debian's files carried to a build machine for one run; nothing of it is
# committed. Exit status: 0 copied, 1 a package or file is missing.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$here/.device-deps"
say() { echo "device-carry: $*"; }

# Entries "package|source|destination under .device-deps".
files=()
add_files() {  # add_files PKG DEST_DIR REGEX [EXCLUDE_REGEX]
  local pkg=$1 dir=$2 re=$3 ex=${4:-'^$'} list
  if ! list="$(dpkg -L "$pkg" 2>/dev/null)"; then
    say "package $pkg is not installed (apt-get install $pkg)"; exit 1
  fi
  local n=0 f
  while IFS= read -r f; do
    [ -f "$f" ] || continue
    files+=("$pkg|$f|$dir/$(basename "$f")"); n=$((n + 1))
  done < <(printf '%s\n' "$list" | grep -E "$re" | grep -vE "$ex")
  if [ "$n" -eq 0 ]; then say "$pkg: no file matches $re"; exit 1; fi
}
add_files libxxhash-dev include '^/usr/include/xxhash\.h$'
add_files catch2 include/catch2 '^/usr/include/catch2/catch\.hpp$'
add_files catch2 lib/cmake/Catch2 '^/usr/lib/cmake/Catch2/[^/]+\.cmake$' '/Catch2Targets-[^/]+\.cmake$'
add_files libcli11-dev include/CLI '^/usr/include/CLI/[^/]+\.hpp$'
add_files libcli11-dev share/cmake/CLI11 '^/usr/share/cmake/CLI11/[^/]+\.cmake$'

rm -rf "$dest"
mkdir -p "$dest"
manifest="$dest/MANIFEST.txt"
{
  echo "# Copied by scripts/device-carry.sh on $(hostname), $(date -u +%FT%TZ); not committed."
  for pkg in libxxhash-dev catch2 libcli11-dev; do
    echo "# $(dpkg-query -W -f '${Package} ${Version}' "$pkg")"
  done
} >"$manifest"
for entry in "${files[@]}"; do
  IFS='|' read -r pkg src rel <<<"$entry"
  mkdir -p "$dest/$(dirname "$rel")"
  cp -p "$src" "$dest/$rel"
  printf '%-14s %s -> .device-deps/%s\n' "$pkg" "$src" "$rel" | tee -a "$manifest"
done
for pkg in libxxhash-dev catch2 libcli11-dev; do
  say "$(dpkg-query -W -f '${Package} ${Version}' "$pkg")"
done
say "${#files[@]} files, $(du -sk "$dest" | cut -f1) KiB in $dest (name .device-deps in the run's carry)"
