"""A batched engine: thousands of games in arrays, stepped by compiled (numba) kernels.

(The full description is written at the end of the work.)
"""

from gofish_env.vector.cache import drop_stale_cache

drop_stale_cache()  # before any kernel loads (cache.py says why)

from gofish_env.vector.game import VectorGame  # noqa: E402
from gofish_env.vector.players import CompiledCPUs  # noqa: E402

__all__ = ["CompiledCPUs", "VectorGame"]
