"""Play sampled worlds out in the vector engine: the rollouts behind the ``master`` CPU.

``rollout_values(view, worlds, asks, level, seed)`` puts every sampled world (a
``SampledWorlds`` drawn from ``view``) once for every candidate ask into one
``VectorGame``, makes the candidate ask in each, lets compiled CPUs (``level`` at every
seat, or a level per seat) play all of them to the end in one call, and returns the
viewer's share of the win in each [world, ask].

What the rollout CPUs know. The public history is the same in every world, and what the
engine and the ``hard`` CPUs read of it is the view's public knowledge (its bounds): each
batch game is a world's hands and pool with those bounds, the catches, hand sizes and the
seat to move. (Rank asks only: under them a card is its rank.)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gofish_env.knowledge import PlayerView
from gofish_env.rules import Rules
from gofish_env.vector import CompiledCPUs, VectorGame, engine
from gofish_env.vector.state import SHARED_FIELDS
from gofish_env.worlds import SampledWorlds

# What the table knows in public, the same in every world: the view's own PublicKnowledge.
PUBLIC_BOUNDS = {
    "least": "least",
    "most": "most",
    "sure": "sure_hit_most",
    "skips": "skips_sure_hits",
    "unlaid": "unlaid",
}


_BATCHES: dict[tuple[Rules, int], tuple[VectorGame, dict[str, np.ndarray]]] = {}
_KEPT_BATCHES = 8  # batch sizes kept per process (a batch's set-up costs milliseconds)


def _blank_batch(rules: Rules, games: int) -> VectorGame:
    """A batch of ``games`` games reused from call to call, every game reset to a blank
    table (the set-up of a batch, from the rules, costs more than a search's rollouts)."""
    key = (rules, games)
    if key not in _BATCHES:
        if len(_BATCHES) >= _KEPT_BATCHES:
            _BATCHES.pop(next(iter(_BATCHES)))
        batch = VectorGame(rules, games, seed=0)
        engine.clear_game(batch.kernel_state, batch.kernel_constants, 0)
        blank = {
            name: array[0].copy()
            for name, array in batch.state._asdict().items()
            if name not in SHARED_FIELDS
        }
        _BATCHES[key] = (batch, blank)
    batch, blank = _BATCHES[key]
    for name, row in blank.items():
        getattr(batch.state, name)[:] = row
    return batch


def world_batch(view: PlayerView, worlds: SampledWorlds, repeats: int) -> VectorGame:
    """A batch of ``len(worlds) * repeats`` games: game ``a * len(worlds) + w`` is world
    ``w`` now, with what ``view`` shows in public (catches, hand sizes, the seat to move)
    and its public bounds (what the engine and the ``hard`` CPUs read of the history; the
    ask log and the easy and normal CPUs' memories start empty). The batch is reused by
    the next call of the same size."""
    rules = view.rules
    count = len(worlds)
    batch = _blank_batch(rules, count * repeats)
    state = batch.state
    caught = np.zeros((rules.players, rules.ranks), np.int64)
    for seat, laid in enumerate(view.catches):
        for rank in laid:
            caught[seat, rank] += 1
    state.caught[:] = caught
    state.catch_count[:] = caught.sum(axis=1)
    state.num_caught[:] = caught.sum()
    state.points[:] = view.points
    state.sizes[:] = view.hand_sizes
    state.out[:] = view.out
    state.current[:] = view.current_player
    state.num_asks[:] = len(view.asks)
    known = view.knowledge
    for name, attribute in PUBLIC_BOUNDS.items():
        getattr(state, name)[:] = getattr(known, attribute)
    state.counts[:] = np.tile(worlds.hands, (repeats, 1, 1))
    pool = worlds.pools[:, ::-1] * 4  # bottom first; under rank asks a card is its rank
    state.pool[:, : pool.shape[1]] = np.tile(pool, (repeats, 1))
    state.pool_len[:] = view.pool_size
    return batch


def rollout_values(
    view: PlayerView,
    worlds: SampledWorlds,
    asks: Sequence[tuple[int, int]],
    level: str | Sequence[str] = "hard",
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(share, margin), each [worlds, asks], when the viewer makes ask ``a`` in world ``w``
    and ``level`` CPUs play every seat from there (one level, or one for each seat): its
    share of the win (1/k for k winners), and its catches minus the most any other seat
    made, over the game's sets.
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
