"""Play sampled worlds out in the vector engine: the rollouts behind the ``master`` CPU.

``rollout_values(view, worlds, asks, level, seed)`` puts every sampled world (a
``SampledWorlds`` drawn from ``view``) once for every candidate ask into one
``VectorGame``, makes the candidate ask in each, lets compiled CPUs (``level`` at every
seat) play all of them to the end in one call, and returns the viewer's share of the win
in each [world, ask].

What the rollout CPUs know. A world is a position without its history; the public history
is the same in every world, so it is read once: one world replayed from its deal gives a
batch game whose public arrays (the knowledge bounds, what the compiled CPUs remember of
the asks, catches, whose turn) are copied to every game, and each world brings only its
hidden arrays (the hands and the pool).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gofish_env.knowledge import PlayerView
from gofish_env.vector import CompiledCPUs, VectorGame
from gofish_env.worlds import SampledWorlds

# Arrays of a batch game that hold hidden cards: each world's own. Every other per-game
# array is public, the same in every world.
HIDDEN_FIELDS = ("counts", "cards", "stamps", "next_stamp", "pool")
RULE_TABLES = ("copies", "hand_cap", "rank_points")  # per rank, not per game


def world_batch(view: PlayerView, worlds: SampledWorlds, repeats: int) -> VectorGame:
    """A batch of ``len(worlds) * repeats`` games: game ``a * len(worlds) + w`` is world
    ``w`` with the public history ``view`` saw (``worlds`` sampled with ``keep_deals``)."""
    history = worlds.dealt_game(0)
    for record in view.asks:
        history.ask(record.target, record.rank)
    public = VectorGame.from_games([history])
    hidden = VectorGame.from_games([worlds.game(w) for w in range(len(worlds))])
    # A batch dealt by the compiled kernel (cheap), then every per-game array overwritten.
    batch = VectorGame(view.rules, len(worlds) * repeats, seed=0)
    for name, array in batch.state._asdict().items():
        if name in RULE_TABLES:
            continue
        if name in HIDDEN_FIELDS:
            source = getattr(hidden.state, name)
            array[:] = np.tile(source, (repeats,) + (1,) * (source.ndim - 1))
        else:
            array[:] = getattr(public.state, name)[0]
    return batch


def rollout_values(
    view: PlayerView,
    worlds: SampledWorlds,
    asks: Sequence[tuple[int, int]],
    level: str = "hard",
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(share, margin), each [worlds, asks], when the viewer makes ask ``a`` in world ``w``
    and ``level`` CPUs play every seat from there: its share of the win (1/k for k
    winners), and its catches minus the most any other seat made, over the game's sets.
    The CPUs of world ``w`` draw from the same generators whatever the ask (common random
    numbers)."""
    count = len(worlds)
    batch = world_batch(view, worlds, len(asks))
    targets = np.repeat([target for target, _ in asks], count).astype(np.int64)
    ranks = np.repeat([rank for _, rank in asks], count).astype(np.int64)
    batch.ask(targets, ranks)
    players = CompiledCPUs(batch, level, seed=seed)
    # Every ask's copy of world w gets the generators of the first copy.
    streams = players.state.rng.reshape(len(asks), count, -1)
    streams[1:] = streams[0]
    players.play()
    winners = batch.winners().astype(np.float64)
    share = winners[:, view.seat] / np.maximum(winners.sum(axis=1), 1.0)
    catches = batch.catch_counts().astype(np.float64)
    others = np.delete(catches, view.seat, axis=1).max(axis=1)
    margin = (catches[:, view.seat] - others) / view.rules.total_sets
    shape = (len(asks), count)
    return share.reshape(shape).T, margin.reshape(shape).T
