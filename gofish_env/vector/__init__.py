"""A batched engine: thousands of games in arrays, stepped by compiled (numba) kernels.

(The full description is written at the end of the work.)
"""

from gofish_env.vector.game import VectorGame
from gofish_env.vector.players import CompiledCPUs

__all__ = ["CompiledCPUs", "VectorGame"]
