"""gofish-env: Go Fish for reinforcement learning.

The rules engine (``Rules``, ``Game``) is pure Python. The PettingZoo and Gymnasium
environments (``env``, ``raw_env``, ``GoFishEnv``) are imported on first use, so the
engine works without gymnasium or pettingzoo being imported.
"""

from gofish_env.game import Game, IllegalAsk
from gofish_env.match import Match
from gofish_env.rules import Rules

__all__ = ["Game", "GoFishEnv", "IllegalAsk", "Match", "Rules", "env", "raw_env"]
__version__ = "0.1.0"

_LAZY = {
    "env": "gofish_env.aec_env",
    "raw_env": "gofish_env.aec_env",
    "GoFishEnv": "gofish_env.gym_env",
}


try:
    # gymnasium.make("GoFish-v0") works after `import gofish_env`; the engine itself
    # (cards, rules, events, game, match) imports nothing from gymnasium or pettingzoo.
    import gymnasium as _gymnasium

    if "GoFish-v0" not in _gymnasium.registry:
        _gymnasium.register(id="GoFish-v0", entry_point="gofish_env.gym_env:GoFishEnv")
except ImportError:  # the engine still works without the RL libraries
    pass


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gofish_env' has no attribute {name!r}")
