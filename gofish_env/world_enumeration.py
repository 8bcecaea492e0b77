"""The exact distribution of hidden worlds on small positions, to measure the sampler by.

``exact_worlds(sampler)`` enumerates every filling of the others' slots (their dealt and
drawn cards, and the pool) from the cards the viewer has not seen, and keeps those whose
replay of the public asks gives the public log (an independent check: the rules engine
itself, not the sampler's constraints). A filling's weight is the number of pool orders it
stands for, so the weights are those of a uniformly shuffled deck (uniform over consistent
deals). The viewer's own slots are taken from one world of the sampler: they do not
constrain the others'. Keys: ``deal`` (the others' dealt hands as rank counts, their
drawn ranks draw by draw, and the pool's ranks as counts) and ``now`` (every hand now and
the pool as counts).

``compare`` gives the total variation distance between a sample's frequencies and the
exact probabilities, beside the same distance for as many independent draws from the
exact distribution (what a perfect sampler would show), and ``tv_to_uniform_now`` how far
the exact distribution of worlds now is from uniform over them.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from itertools import product

import numpy as np

from gofish_env import world_kernels as kernels
from gofish_env.cpus import ExpertCPU
from gofish_env.game import IllegalAsk
from gofish_env.knowledge import PublicKnowledge
from gofish_env.worlds import ENDGAME_POOL, OTHERS_GROUP, SampledWorlds, WorldSampler

MAX_FILLINGS = 200_000  # a position with more fillings is not small


@dataclass
class ExactWorlds:
    """Every consistent world of a small position with its probability."""

    deal: dict[tuple, float]  # key: ((others' dealt counts, their draws), pool counts)
    now: dict[tuple, float]  # key: (hands now, pool counts)
    fillings: int  # fillings tried
    consistent: int  # fillings whose replay gives the public log


def exact_worlds(sampler: WorldSampler) -> ExactWorlds:
    """The exact distribution of ``sampler``'s position (see the module docstring). A
    sampler that assumes how the others play (``assumes_sure_hits``, ``beta``) is measured
    against the same assumption, checked on the replayed game (``play_model``)."""
    model = sampler.model
    rules = model.rules
    base = sampler.sample(1, keep_deals=True)
    assign = base.deals[0].copy()
    others = np.flatnonzero(
        (model.slot_group == OTHERS_GROUP) & (model.slot_seat != kernels.NO_SEAT)
    )
    pool = model.pool_slots
    budget = Counter(model.group_ranks[OTHERS_GROUP].tolist())
    present = sorted(budget)
    count = len(present) ** len(others)
    if count > MAX_FILLINGS:
        raise ValueError(f"the position has {count} fillings to try; at most {MAX_FILLINGS}")
    deal: dict[tuple, float] = {}
    now: dict[tuple, float] = {}
    tried = consistent = 0
    target = model_events(base)
    for filling in product(present, repeat=len(others)):
        used = Counter(filling)
        if any(used[rank] > budget[rank] for rank in used):
            continue
        tried += 1
        rest = budget - used
        pool_ranks = sorted(rest.elements())
        assign[others] = filling
        assign[pool] = pool_ranks
        world = SampledWorlds(model, base.view, base.hands, base.pools, assign[None, :].copy())
        if replayed_events(world) != target:
            continue
        weight = math.factorial(len(pool_ranks))
        for rank_count in rest.values():
            weight //= math.factorial(rank_count)
        if sampler.assumes_sure_hits or sampler.beta:
            passed_up, energy = play_model(world)
            if passed_up and sampler.assumes_sure_hits:
                continue
            weight *= math.exp(-sampler.beta * energy)
        consistent += 1
        pool_counts = tuple(rest[rank] for rank in range(rules.ranks))
        key_deal = (deal_key(model, assign, others), pool_counts)
        deal[key_deal] = deal.get(key_deal, 0) + weight
        key_now = (hands_now(model, assign), pool_counts)
        now[key_now] = now.get(key_now, 0) + weight
    total = sum(deal.values())
    return ExactWorlds(
        {key: value / total for key, value in deal.items()},
        {key: value / total for key, value in now.items()},
        tried,
        consistent,
    )


def model_events(worlds: SampledWorlds) -> list:
    """The public log the view saw."""
    return list(worlds.view.knowledge.events)


def replayed_events(worlds: SampledWorlds, index: int = 0) -> list | None:
    """The public log of world ``index``'s deal with the view's public asks replayed (None
    if the replay refuses one of them, or the deal is not one a game can have)."""
    try:
        game = worlds.dealt_game(index)
    except ValueError:  # a dealt hand holding a full set in a position in play
        return None
    events = list(game.events)
    for record in worlds.view.asks:
        try:
            events += game.ask(record.target, record.rank)
        except IllegalAsk:
            return None
    return events


def play_model(worlds: SampledWorlds, index: int = 0) -> tuple[int, int]:
    """How far world ``index``'s deal, replayed with the public asks, strays from the
    sampler's model of how the others play (every seat but the viewer and those the view
    saw passing up a sure hit): (the asks made while holding a sure hit of another rank,
    the cards by which another rank, one some other seat could hold, outnumbered the rank
    asked at the asks that were not sure hits, outside the endgame ``ExpertCPU`` weighs)."""
    view = worlds.view
    rules = view.rules
    game = worlds.dealt_game(index)
    public = PublicKnowledge(rules)
    public.update(list(game.events))
    passed_up = energy = 0
    for record in view.asks:
        asker, target, rank = record.asker, record.target, record.rank
        if asker != view.seat and not view.knowledge.skips_sure_hits[asker]:
            held = np.array(game.hand_counts(asker))
            proved = np.delete(public.least, asker, axis=0).max(axis=0) > 0
            if not public.least[target, rank]:
                passed_up += int(
                    any(held[r] and proved[r] for r in range(rules.ranks) if r != rank)
                )
                endgame = public.pool_size <= ENDGAME_POOL and ExpertCPU.endgame_race(
                    rules, public.hand_sizes, asker
                )
                if not endgame:
                    others = [seat for seat in range(rules.players) if seat != asker]
                    may_hold = [
                        any(
                            public.hand_sizes[seat]
                            and public.most[seat, r]
                            and public.sure_hit_most[seat, r]
                            for seat in others
                        )
                        for r in range(rules.ranks)
                    ]
                    energy += sum(
                        max(int(held[r] - held[rank]), 0) for r in range(rules.ranks) if may_hold[r]
                    )
        public.update(game.ask(target, rank))
    return passed_up, energy


def deal_key(model, assign: np.ndarray, others: np.ndarray) -> tuple:
    """The others' dealt hands (rank counts: the order within a hand is no part of the
    game) and the ranks of their draws, slot by slot."""
    dealt = np.zeros((model.rules.players, model.rules.ranks), np.int64)
    draws = []
    for slot in others:
        if model.slot_dealt[slot]:
            dealt[model.slot_seat[slot], assign[slot]] += 1
        else:
            draws.append(int(assign[slot]))
    return tuple(map(tuple, dealt.tolist())), tuple(draws)


def hands_now(model, assign: np.ndarray) -> tuple:
    """Every hand now, as a tuple of rank counts per seat, for a world's slot ranks."""
    rules = model.rules
    dealt = np.zeros((rules.players, rules.ranks), np.int64)
    for slot in np.flatnonzero(model.slot_dealt):
        dealt[model.slot_seat[slot], assign[slot]] += 1
    out = np.empty_like(dealt)
    kernels.current_counts(assign, dealt, model.slot_seat, model.draw_slots, model.change, out)
    return tuple(map(tuple, out.tolist()))


def sampled_keys(worlds: SampledWorlds) -> tuple[Counter, Counter]:
    """How often each ``deal`` and ``now`` key occurs in a sample (``keep_deals``)."""
    model = worlds.model
    others = np.flatnonzero(
        (model.slot_group == OTHERS_GROUP) & (model.slot_seat != kernels.NO_SEAT)
    )
    ranks = model.rules.ranks
    deal: Counter = Counter()
    now: Counter = Counter()
    for index in range(len(worlds)):
        assign = worlds.deals[index]
        pool_counts = tuple(np.bincount(worlds.pools[index], minlength=ranks).tolist())
        deal[(deal_key(model, assign, others), pool_counts)] += 1
        now[(hands_now(model, assign), pool_counts)] += 1
    return deal, now


@dataclass
class Comparison:
    """A sample against the exact distribution."""

    samples: int
    outcomes: int  # consistent worlds (keys) with positive probability
    tv: float  # total variation distance of the sample's frequencies
    tv_perfect: float  # mean of the same for independent draws from the exact distribution
    tv_perfect_95: float  # its 95th percentile
    outside: int  # sampled keys the exact distribution does not have (inconsistent worlds)


def compare(frequencies: Counter, exact: dict[tuple, float], seed: int = 0) -> Comparison:
    """``frequencies`` (a sample's counts by key) against ``exact`` probabilities."""
    samples = sum(frequencies.values())
    keys = list(exact)
    probabilities = np.array([exact[key] for key in keys])
    observed = np.array([frequencies.get(key, 0) for key in keys], float)
    outside = sum(count for key, count in frequencies.items() if key not in exact)
    tv = 0.5 * (np.abs(observed / samples - probabilities).sum() + outside / samples)
    rng = np.random.default_rng(seed)
    perfect = [
        0.5 * np.abs(rng.multinomial(samples, probabilities) / samples - probabilities).sum()
        for _ in range(200)
    ]
    return Comparison(
        samples,
        len(keys),
        float(tv),
        float(np.mean(perfect)),
        float(np.percentile(perfect, 95)),
        outside,
    )


def tv_to_uniform_now(exact: ExactWorlds) -> float:
    """How far the exact distribution of worlds now is from uniform over them."""
    uniform = 1.0 / len(exact.now)
    return 0.5 * sum(abs(p - uniform) for p in exact.now.values())
