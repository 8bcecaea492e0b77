"""The CPU ladder. Every CPU sees only a ``PlayerView``: its own hand and the public history.

A CPU is seeded and deterministic for a given seed and view sequence. ``choose(view)``
returns one of ``view.legal_asks`` as (target seat, rank or card index).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod

from gofish_env.knowledge import PlayerView


class CPU(ABC):
    """Base class: a named, seeded decision rule over a ``PlayerView``."""

    name = "cpu"

    def __init__(self, seed: int | None = None):
        self.rng = random.Random(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game (forget any plan), reseeding if a seed is given."""
        if seed is not None:
            self.rng = random.Random(seed)

    @abstractmethod
    def choose(self, view: PlayerView) -> tuple[int, int]:
        """One of ``view.legal_asks``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class RandomCPU(CPU):
    """A uniformly random legal ask."""

    name = "random"

    def choose(self, view: PlayerView) -> tuple[int, int]:
        return self.rng.choice(view.legal_asks)


CPU_LEVELS: dict[str, type[CPU]] = {"random": RandomCPU}


def make_cpu(name: str, seed: int | None = None) -> CPU:
    """A CPU by level name."""
    if name not in CPU_LEVELS:
        raise ValueError(f"cpu: unknown level {name!r}; allowed: {', '.join(CPU_LEVELS)}")
    return CPU_LEVELS[name](seed)
