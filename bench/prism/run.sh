#!/usr/bin/env bash
# run.sh [compare_peers.py options...]
#
# One command for the PRISM vs SZ3/ZFP benchmark: installs the Python venv
# (scripts/install-bench-deps.sh), runs compare_peers.py and plot_rd.py, and
# writes everything to build/bench-prism/ (not into the repository):
#   prism_vs_peers.csv  summary.md  rate_distortion.png  bytes_vs_bound.png
# The Markdown summary is also printed on stdout. Extra options go to
# compare_peers.py, e.g. --peers-only, --mans PATH, --fields echam5, --reps 5.
#
#   MANS_BENCH_VENV  venv folder, default: <repo>/build/bench-venv
#   MANS_BENCH_OUT   output folder, default: <repo>/build/bench-prism
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${MANS_BENCH_VENV:-$root/build/bench-venv}"
out="${MANS_BENCH_OUT:-$root/build/bench-prism}"

MANS_BENCH_VENV="$venv" "$root/scripts/install-bench-deps.sh" >&2

status=0
rm -f "$out/prism_vs_peers.csv"   # never plot a previous run's results
"$venv/bin/python" "$root/bench/prism/compare_peers.py" --out "$out" "$@" || status=$?
# compare_peers.py writes the rows it measured even when the mans CLI fails midway.
if [[ -f "$out/prism_vs_peers.csv" && " $* " != *" --dry-run "* ]]; then
  "$venv/bin/python" "$root/bench/prism/plot_rd.py" --out "$out" >&2
fi
exit "$status"
