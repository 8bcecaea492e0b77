#!/usr/bin/env bash
# The main job: set up .venv, train a fresh agent (about 9 minutes on 2 cores) and print its
# win-rate table against the CPUs. Extra arguments go to `python -m gofish_training.train`.
# 280,000 steps: the compiled vector env (the default --vec-env) trains them in about the
# time 250,000 took with DummyVecEnv (docs/performance.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_venv.sh "train"
.venv/bin/python -m gofish_training.train --timesteps 280000 "$@"
