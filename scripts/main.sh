#!/usr/bin/env bash
# The main job: set up .venv, train a fresh agent (about 9 minutes on 2 cores) and print its
# win-rate table against the CPUs. Extra arguments go to `python -m gofish_training.train`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_venv.sh "train"
.venv/bin/python -m gofish_training.train "$@"
