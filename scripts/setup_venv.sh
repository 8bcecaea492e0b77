#!/usr/bin/env bash
# Make a venv (if missing) and install the project with the extras named in $1 (e.g. "train,dev").
# The venv is .venv, or the folder named by $VENV (e.g. VENV=.venv-notorch ... dev).
# The Python is $PYTHON, else python3.11, else python3 (it must be 3.11 or newer).
# torch 2.13.0 is installed first: a bare torch requirement would pull the newest CUDA build.
# From PyPI, torch==2.13.0 is itself a CUDA build (several GB; it runs on the CPU too) unless
# pip finds a CPU wheel of its own (a find-links folder); $TORCH_INDEX names an index to take
# it from instead, e.g. TORCH_INDEX=https://download.pytorch.org/whl/cpu for the CPU build.
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
    "$venv/bin/python" -m pip install --quiet "torch==2.13.0" ${TORCH_INDEX:+--index-url "$TORCH_INDEX"}
fi
"$venv/bin/python" -m pip install --quiet -e ".${extras:+[$extras]}"
