"""gofish-env: Go Fish for reinforcement learning.

The rules engine (``Rules``, ``Game``) is pure Python; the PettingZoo and Gymnasium
environments are imported on first use, so the engine works without them.
"""

from gofish_env.game import Game, IllegalAsk
from gofish_env.match import Match
from gofish_env.rules import Rules

__all__ = ["Game", "IllegalAsk", "Match", "Rules"]
__version__ = "0.1.0"
