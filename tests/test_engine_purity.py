"""The rules engine imports nothing from gymnasium, pettingzoo or torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import sys
for blocked in ("gymnasium", "pettingzoo", "torch", "stable_baselines3", "sb3_contrib"):
    sys.modules[blocked] = None  # any import of it now raises ImportError

import random
from gofish_env import Game, Match, Rules
from gofish_env.cards import parse_card
from gofish_env.events import GameOver

game = Game(Rules.preset("bicycle", players=3), seed=4)
chooser = random.Random(4)
while not game.is_over:
    game.ask(*chooser.choice(game.legal_asks()))
match = Match(Rules(players=2, match_target=8), seed=1)
while not match.is_over:
    match.ask(*chooser.choice(match.legal_asks()))
assert isinstance(game.events[-1], GameOver) and match.winners
roots = ("gymnasium", "pettingzoo", "torch")
loaded = sorted(name for name in sys.modules if name.split(".")[0] in roots)
print("ok", loaded)
"""


def test_engine_plays_whole_games_with_the_rl_libraries_blocked():
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr
    # Only the blocked placeholders are in sys.modules: nothing was really imported.
    assert result.stdout.strip() == "ok ['gymnasium', 'pettingzoo', 'torch']"
