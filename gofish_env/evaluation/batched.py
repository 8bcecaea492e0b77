"""The harness's deals played in batches of the vector engine, when every entrant is a
compiled CPU level (``random``, ``easy``, ``normal``, ``hard``, ``expert``).

The same measurement as the Python path: deal ``d`` is ``Game(rules, seed=derive_seed(seed,
d))``, copied exactly into the batch once per rotation of its seating; the CPU at each seat
is seeded from ``derive_seed(seed, d, rotation, seat)``; the ask limit and the scoring of
cut-off games (``leaders``) are the harness's. The CPUs are the Python levels' rules; their
random choices come from the compiled generator, so the games are not those of the Python
path (the same levels, other dice), and they do not depend on the batch size or the
worker count.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from gofish_env.cpus import COMPILED_LEVELS
from gofish_env.evaluation.schedule import rotated, seating_order
from gofish_env.evaluation.stats import derive_seed
from gofish_env.game import Game

BATCH_GAMES = 4096  # games in one batch (memory: a few KB each)
COMPILED = COMPILED_LEVELS  # the levels the vector engine plays


def is_compiled(entrant) -> bool:
    return isinstance(entrant.spec, str) and entrant.spec in COMPILED


def compiled_levels(measurement) -> list[str] | None:
    """The entrants' CPU levels when every one is a compiled level, else None."""
    if all(is_compiled(entrant) for entrant in measurement.entrants):
        return [entrant.spec for entrant in measurement.entrants]
    return None


def batched_records(measurement, deals: range, levels: list[str]) -> Iterator[list]:
    """Each deal's records (rotations in order) for the deals in ``deals``, deal by deal,
    played a batch at a time."""
    from gofish_env.evaluation.harness import GameRecord
    from gofish_env.vector import CompiledCPUs, VectorGame

    rules = measurement.rules
    players = rules.players
    per_batch = max(1, BATCH_GAMES // players)
    for first in range(deals.start, deals.stop, per_batch):
        chunk = range(first, min(deals.stop, first + per_batch))
        games, plans = [], []
        for deal in chunk:
            deal_seed = derive_seed(measurement.seed, deal)
            game = Game(rules, seed=deal_seed)
            order = seating_order(measurement.lineups, deal)
            for rotation in range(players):
                games.append(game)  # copied into the batch, not played on
                plans.append((deal, deal_seed, rotation, rotated(order, rotation)))
        batch = VectorGame.from_games(games)
        seats = [[levels[entrant] for entrant in plan[3]] for plan in plans]
        cpus = CompiledCPUs(batch, seats)
        cpus.seed_seats(
            [
                [derive_seed(measurement.seed, deal, rotation, seat) for seat in range(players)]
                for deal, _, rotation, _ in plans
            ]
        )
        cpus.play(0)  # loads the compiled kernel, so that the clock times the decisions only
        start = time.perf_counter()
        asked = cpus.play(measurement.max_asks, by_seat=True)
        seconds = time.perf_counter() - start
        per_decision = seconds / max(int(asked.sum()), 1)
        state = batch.state
        leaders = batch.leaders()
        records = []
        for index, (deal, deal_seed, rotation, seating) in enumerate(plans):
            decisions = tuple(int(count) for count in asked[index])
            records.append(
                GameRecord(
                    deal=deal,
                    rotation=rotation,
                    deal_seed=deal_seed,
                    seats=seating,
                    catches=tuple(int(c) for c in state.catch_count[index]),
                    points=tuple(int(p) for p in state.points[index]),
                    winners=tuple(int(s) for s in np.flatnonzero(leaders[index])),
                    truncated=not bool(state.over[index]),
                    asks=int(state.num_asks[index]),
                    decisions=decisions,
                    decision_seconds=tuple(count * per_decision for count in decisions),
                )
            )
        for offset in range(0, len(records), players):
            yield records[offset : offset + players]
