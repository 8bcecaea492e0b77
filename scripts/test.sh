#!/usr/bin/env bash
# The test command: set up .venv with everything the tests need (and headless Chromium for
# the browser tests), lint, then run every test; then run the tests that need no extra in
# .venv-notorch, which has only the dev extra, as a user of the base package would
# (tests/conftest.py: the torch, web, video and browser markers).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_venv.sh "train,dev,ecosystem,rllib,video,web"
bash scripts/install_browser.sh
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -n 2 -q "$@"
VENV=.venv-notorch bash scripts/setup_venv.sh dev
.venv-notorch/bin/python -m pytest -n 2 -q -m "not torch and not web and not video and not browser"
