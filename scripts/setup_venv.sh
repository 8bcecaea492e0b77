#!/usr/bin/env bash
# Make a venv (if missing) and install the project with the extras named in $1 (e.g. "train,dev").
# The venv is .venv, or the folder named by $VENV (e.g. VENV=.venv-notorch ... dev).
# torch's CPU build is installed first: a bare torch requirement would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
venv="${VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
if [[ "$extras" == *train* || "$extras" == *ecosystem* || "$extras" == *rllib* ]]; then
    "$venv/bin/python" -m pip install --quiet "torch==2.13.0"
fi
"$venv/bin/python" -m pip install --quiet -e ".${extras:+[$extras]}"
