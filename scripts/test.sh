#!/usr/bin/env bash
# The test command: set up .venv with everything the tests need, lint, then run every test;
# then run the tests that need no torch in .venv-notorch, which has only the dev extra, as a
# user without the train extra would (tests/conftest.py: the torch marker).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_venv.sh "train,dev,ecosystem,rllib"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -n 2 -q "$@"
VENV=.venv-notorch bash scripts/setup_venv.sh dev
.venv-notorch/bin/python -m pytest -n 2 -q -m "not torch"
