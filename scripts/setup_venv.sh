#!/usr/bin/env bash
# Make a venv (if missing) and install the project with the extras named in $1 (e.g. "train,dev").
# The venv is .venv, or the folder named by $VENV (e.g. VENV=.venv-notorch ... dev).
# The Python is $PYTHON, else python3.11, else python3 (it must be 3.11 or newer).
# torch's CPU build is installed first: a bare torch requirement would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
venv="${VENV:-.venv}"
python="${PYTHON:-$(command -v python3.11 || command -v python3)}"
usable='import sys, pip; sys.exit(sys.version_info < (3, 11))'
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    found=$("$python" -c 'import platform; print("Python", platform.python_version())' 2>/dev/null || echo "no Python that runs")
    echo "setup_venv.sh: $python is $found; gofish-env needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)" >&2
    exit 1
fi
# A venv left half-made (an interrupted first run: no pip yet) or made by an older Python is
# made again rather than trusted.
if [ -e "$venv" ] && ! "$venv/bin/python" -c "$usable" 2>/dev/null; then
    echo "setup_venv.sh: $venv is incomplete or too old; making it again" >&2
    "$python" -m venv --clear "$venv"
elif [ ! -e "$venv" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
if [[ "$extras" == *train* || "$extras" == *ecosystem* || "$extras" == *rllib* ]]; then
    "$venv/bin/python" -m pip install --quiet "torch==2.13.0"
fi
"$venv/bin/python" -m pip install --quiet -e ".${extras:+[$extras]}"
