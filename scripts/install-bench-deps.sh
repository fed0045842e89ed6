#!/usr/bin/env bash
# Creates the Python virtual environment for the PRISM benchmark harness
# (bench/prism/) and installs numpy, matplotlib and the peer codecs SZ3 (pysz)
# and ZFP (zfpy) from PyPI, pinned in bench/prism/requirements.txt.
#
#   MANS_BENCH_VENV  venv folder, default: <repo>/build/bench-venv
#   PYTHON           interpreter that creates the venv, default: python3
#
# Idempotent: reuses an existing venv and only installs what is missing.
# Prints the installed versions at the end.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${MANS_BENCH_VENV:-$root/build/bench-venv}"
python="${PYTHON:-python3}"
requirements="$root/bench/prism/requirements.txt"

if [[ ! -x "$venv/bin/python" ]]; then
  echo "install-bench-deps: creating venv $venv"
  "$python" -m venv "$venv"
fi

# Exact pins that are already satisfied need no index access, so a second run is quick.
if ! "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$requirements"; then
  echo "install-bench-deps: pip install -r $requirements failed" >&2
  exit 1
fi

"$venv/bin/python" - <<'PY'
import sys
from importlib.metadata import version

import numpy, matplotlib, pysz, zfpy  # noqa: F401  (fails loudly if a wheel is broken)

print(f"install-bench-deps: python {sys.version.split()[0]} at {sys.executable}")
for pkg in ("numpy", "matplotlib", "pysz", "zfpy"):
    print(f"install-bench-deps: {pkg} {version(pkg)}")
PY
