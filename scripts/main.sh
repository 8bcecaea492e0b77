#!/usr/bin/env bash
# The main job: set up .venv, train a fresh agent (about 9 minutes on 2 cores) and print its
# win-rate table against the CPUs. Extra arguments go to `python -m gofish_training.train`.
# The defaults are the main job (280,000 steps, docs/training.md), so that
# `bash scripts/main.sh --resume runs/NAME` goes on with the run's own budget.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_venv.sh "train"
.venv/bin/python -m gofish_training.train "$@"
