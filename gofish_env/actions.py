"""Discrete actions: (target, rank) with targets relative to the acting seat.

With P players and A things to ask for (13 ranks, 14 with jokers, or 52/53 cards with
exact-card asks) there are (P - 1) * A actions. Action ``a`` by seat ``s`` asks seat
``(s + 1 + a // A) % P`` for rank (or card index) ``a % A``: actions 0..A-1 ask the seat to
the left, the next A the seat after it, and so on. One policy therefore fits every seat.
"""

from __future__ import annotations

import numpy as np

from gofish_env.rules import Rules


class ActionCodec:
    """Maps actions to asks and back, and legal asks to a mask."""

    def __init__(self, rules: Rules):
        self.players = rules.players
        self.ask_count = rules.ask_count
        self.size = (self.players - 1) * self.ask_count

    def to_ask(self, seat: int, action: int) -> tuple[int, int]:
        """The (target seat, wanted) that ``action`` by ``seat`` asks for; ``wanted`` is a
        rank index, or a card index with exact-card asks."""
        self._check_seat(seat)
        if isinstance(action, bool) or not 0 <= action < self.size:
            raise ValueError(f"action: got {action!r}; allowed: 0 to {self.size - 1}")
        offset, wanted = divmod(int(action), self.ask_count)
        return (seat + 1 + offset) % self.players, wanted

    def to_action(self, seat: int, target: int, wanted: int) -> int:
        """The action by ``seat`` that asks ``target`` for ``wanted`` (a rank or card index)."""
        self._check_seat(seat)
        if target == seat or not 0 <= target < self.players:
            raise ValueError(
                f"target: got {target!r}; allowed: a seat from 0 to {self.players - 1} other "
                f"than the asking seat {seat}"
            )
        if not 0 <= wanted < self.ask_count:
            raise ValueError(f"wanted: got {wanted!r}; allowed: 0 to {self.ask_count - 1}")
        return ((target - seat - 1) % self.players) * self.ask_count + wanted

    def _check_seat(self, seat: int) -> None:
        # A seat out of range would wrap round to a plausible but wrong ask.
        if isinstance(seat, bool) or not 0 <= seat < self.players:
            raise ValueError(f"seat: got {seat!r}; allowed: 0 to {self.players - 1}")

    def mask(self, seat: int, legal_asks) -> np.ndarray:
        """int8 mask over actions with a 1 for each of ``legal_asks`` (asks by ``seat``)."""
        mask = np.zeros(self.size, dtype=np.int8)
        players, count = self.players, self.ask_count
        for target, wanted in legal_asks:
            mask[((target - seat - 1) % players) * count + wanted] = 1
        return mask
