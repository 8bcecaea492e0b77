"""Who sits where: the line-ups of a measurement, each deal's seating order and its
rotations (see docs/tournament.md, "Schedule").

- Line-ups. With as many entrants as seats there is one line-up. With more entrants, every
  combination of ``players`` entrants is a line-up and the deals cycle through them, so each
  pair meets equally often (the number of deals is rounded up to whole cycles). With fewer
  entrants the table is filled with copies: line-up k seats entrants k, k+1, ... (mod N)
  around the table, and the deals cycle through those, so every entrant gets as many seats.
- Seating order. Deal d uses its line-up's first entrant followed by one of the orders of the
  others (cycling with d), so who sits to whose left changes over the measurement.
- Duplicate deals. Each shuffled deal is played ``players`` times, once per rotation of the
  seating: every entrant of the line-up holds every seat's hand of that deal once, so the
  luck of the deal cancels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations, permutations


def make_lineups(entrants: int, players: int) -> list[tuple[int, ...]]:
    """The table line-ups (entrant indices, one per seat) the deals cycle through.

    ``entrants >= players``: every combination of ``players`` entrants. Fewer entrants: the
    table is filled with copies, line-up k being entrants k, k+1, ... mod N around the table
    (line-ups that are rotations of an earlier one are dropped).
    """
    if entrants >= players:
        return list(combinations(range(entrants), players))
    lineups: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    for start in range(entrants):
        lineup = tuple((start + i) % entrants for i in range(players))
        rotations = {lineup[k:] + lineup[:k] for k in range(players)}
        if not rotations & seen:
            lineups.append(lineup)
            seen.add(lineup)
    return lineups


def seating_order(lineups: Sequence[tuple[int, ...]], deal: int) -> tuple[int, ...]:
    """Deal ``deal``'s entrants in seat order, before rotation: its line-up's first entrant,
    then the others in the ``deal // len(lineups)``-th of their orders (mod their count)."""
    lineup = lineups[deal % len(lineups)]
    orders = _orders(lineup[1:])
    return (lineup[0], *orders[(deal // len(lineups)) % len(orders)])


_ORDER_CACHE: dict[tuple[int, ...], list[tuple[int, ...]]] = {}


def _orders(rest: tuple[int, ...]) -> list[tuple[int, ...]]:
    if rest not in _ORDER_CACHE:
        # Distinct orders only (copies of an entrant make permutations repeat).
        _ORDER_CACHE[rest] = list(dict.fromkeys(permutations(rest)))
    return _ORDER_CACHE[rest]


def rotated(order: Sequence[int], rotation: int) -> tuple[int, ...]:
    """The entrant at each seat in rotation ``rotation``: seat s holds ``order[s + rotation]``
    (mod P), so over the P rotations every entrant holds every seat once."""
    players = len(order)
    return tuple(order[(seat + rotation) % players] for seat in range(players))


def deal_count(games: int, players: int, lineups: int) -> int:
    """Deals needed for at least ``games`` games: whole deal-groups (``players`` games each),
    rounded up to whole cycles of the line-ups."""
    deals = max(1, math.ceil(games / players))
    return math.ceil(deals / lineups) * lineups
