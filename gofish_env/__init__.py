"""gofish-env: Go Fish for reinforcement learning.

The rules engine (``Rules``, ``Game``, ``Match``) is pure Python. The environments
(``env`` and ``raw_env``: PettingZoo AEC; ``GoFishEnv``: Gymnasium) load on first use.
Importing the package registers them: ``gymnasium.make("GoFish-v0")`` and
``pettingzoo.make("aec", "gofish/GoFish-v0")`` (``gofish_env.registration``).
"""

from gofish_env.kernel_cache import prepare_kernel_cache

# Before any compiled kernel loads: a folder for numba's cache, none stale there
# (kernel_cache.py says why).
prepare_kernel_cache()

from gofish_env.game import Game, IllegalAsk  # noqa: E402
from gofish_env.match import Match  # noqa: E402
from gofish_env.registration import register as _register  # noqa: E402
from gofish_env.rules import Rules  # noqa: E402

__all__ = ["Game", "GoFishEnv", "IllegalAsk", "Match", "Rules", "env", "raw_env"]
__version__ = "0.1.0"

_LAZY = {
    "env": "gofish_env.aec_env",
    "raw_env": "gofish_env.aec_env",
    "GoFishEnv": "gofish_env.gym_env",
}

_register()


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gofish_env' has no attribute {name!r}")
