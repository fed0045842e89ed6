#!/usr/bin/env bash
# run_compare.sh [DATA_DIR] [OUT_MD]
#
# Runs mans-compare-peers on every file listed in DATA_DIR/files.tsv (written by
# datasets/make_bench_set.sh; header "name<TAB>dtype<TAB>bytes", names relative
# to DATA_DIR unless absolute), writes the Markdown report to OUT_MD and prints it.
#
#   DATA_DIR           default: <repo>/build/bench-data
#   OUT_MD             default: <repo>/build/compare_peers.md
#   MANS_COMPARE       binary, default: <repo>/build/bench/peers/mans-compare-peers
#   MANS_COMPARE_ARGS  extra options, e.g. "--reps 5 --threads 8"
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
data_dir="${1:-$root/build/bench-data}"
out_md="${2:-$root/build/compare_peers.md}"
bin="${MANS_COMPARE:-$root/build/bench/peers/mans-compare-peers}"
list="$data_dir/files.tsv"

[[ -x "$bin" ]] || { echo "run_compare: no executable '$bin' (build target mans-compare-peers or set MANS_COMPARE)" >&2; exit 1; }
[[ -f "$list" ]] || { echo "run_compare: no '$list' (run datasets/make_bench_set.sh first)" >&2; exit 1; }

specs=()
while IFS=$'\t' read -r name dtype bytes _rest || [[ -n "${name:-}" ]]; do
  name="${name%$'\r'}"; dtype="${dtype%$'\r'}"; bytes="${bytes%$'\r'}"
  [[ -z "$name" || "$name" == \#* || "$name" == name ]] && continue
  [[ "$name" == /* ]] && path="$name" || path="$data_dir/$name"
  [[ -f "$path" ]] || { echo "run_compare: '$path' listed in $list does not exist" >&2; exit 1; }
  actual=$(stat -c %s "$path")
  if [[ -n "$bytes" && "$bytes" != "$actual" ]]; then
    echo "run_compare: warning: $path has $actual bytes, $list says $bytes" >&2
  fi
  specs+=("$path:$dtype")
done < "$list"
(( ${#specs[@]} )) || { echo "run_compare: $list lists no files" >&2; exit 1; }

mkdir -p "$(dirname "$out_md")"
tmp="$out_md.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# shellcheck disable=SC2086  # MANS_COMPARE_ARGS is a list of options
"$bin" --format md ${MANS_COMPARE_ARGS:-} "${specs[@]}" > "$tmp"
mv "$tmp" "$out_md"
cat "$out_md"
echo "run_compare: wrote $out_md" >&2
