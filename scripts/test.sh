#!/usr/bin/env bash
# The test command: set up .venv with everything the tests need, lint, then run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_venv.sh "train,dev,ecosystem"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -n 2 -q "$@"
