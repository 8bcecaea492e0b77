#!/usr/bin/env bash
# The main job: set up .venv, then play a game between CPU seats and print it as it goes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_venv.sh ""
.venv/bin/python -m gofish_env.demo "$@"
