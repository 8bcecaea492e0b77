"""The world sampler (gofish_env.worlds): every world it draws follows the public log, it
reads nothing hidden, and on positions small enough to enumerate its distribution is the
exact one (uniform over consistent deals)."""

from __future__ import annotations

import copy
import random
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import position, rank
from test_no_leak import alternative_worlds, make_scenario

from gofish_env import Game, Rules
from gofish_env import world_enumeration as enumeration
from gofish_env import worlds as worlds_module
from gofish_env.cpus import make_cpu
from gofish_env.events import Ask
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.worlds import SamplerError, WorldSampler

RULES = [
    ("table-4", Rules()),
    ("table-2", Rules(players=2)),
    ("table-6", Rules(players=6)),
    ("bicycle-3", Rules.preset("bicycle", players=3)),
    ("family-4", Rules.preset("family")),
    ("quick-3", Rules.preset("quick", players=3)),
    ("ocean-3", Rules.preset("ocean", players=3)),
    ("pairs-4", Rules.preset("pairs")),
    ("pairs-jokers-3", Rules.preset("pairs", jokers=True, players=3)),
    ("two-decks-3", Rules.preset("two_decks", players=3)),
    ("refill-3", Rules(players=3, empty_hand_draw_count=4)),
    ("asked-moves-3", Rules(players=3, after_miss="asked", off_rank_catch_asks_again=True)),
]


def played(rules: Rules, seed: int, asks: int, level: str = "hard") -> Game:
    """A game ``asks`` asks in (or over), every seat played by ``level``."""
    game = Game(rules, seed=seed)
    tracker = KnowledgeTracker(game)
    cpus = [make_cpu(level, seed * 10 + seat) for seat in range(rules.players)]
    while not game.is_over and game.num_asks < asks:
        seat = game.current_player
        game.ask(*cpus[seat].choose(tracker.view(seat)))
    return game


# (assume_sure_hits, most_held): the plain sampler, and the model of how the others play
PLAY_MODELS = [(False, 0.0), (True, 2.0)]


@pytest.mark.parametrize(("assume", "most_held"), PLAY_MODELS, ids=["plain", "play-model"])
@pytest.mark.parametrize("rules", [r for _, r in RULES], ids=[name for name, _ in RULES])
def test_every_sampled_world_replays_to_the_same_public_log(rules, assume, most_held):
    checked = 0
    for seed, asks in ((1, 8), (2, 25), (3, 60)):
        game = played(rules, seed, asks, "expert" if assume else "hard")
        tracker = KnowledgeTracker(game)
        for viewer in range(rules.players):
            view = tracker.view(viewer)
            sampler = WorldSampler(
                view, seed=seed * 7 + viewer, assume_sure_hits=assume, most_held=most_held
            )
            worlds = sampler.sample(6, keep_deals=True)
            for index in range(len(worlds)):
                assert enumeration.replayed_events(worlds, index) == list(game.events)
                replay = worlds.dealt_game(index)
                for record in view.asks:
                    replay.ask(record.target, record.rank)
                assert replay.hand_counts(viewer) == game.hand_counts(viewer)
                assert [replay.hand_size(s) for s in range(rules.players)] == view.hand_sizes
                # The world now is the replayed position, rank for rank.
                assert worlds.hands[index].tolist() == [
                    list(replay.hand_counts(s)) for s in range(rules.players)
                ]
                if not game.is_over:
                    now = worlds.game(index)
                    assert now.hand(viewer) == game.hand(viewer)
                    assert now.current_player == game.current_player
                    assert now.pool_size == view.pool_size
                checked += 1
    assert checked >= 3 * rules.players * 6


@pytest.mark.parametrize(("assume", "most_held"), PLAY_MODELS, ids=["plain", "play-model"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_worlds_the_viewer_cannot_tell_apart_give_the_same_sample(players, seed, assume, most_held):
    """Counterfactual deals sharing the public log and the viewer's hand (the no-leak
    harness) give the very same worlds for the same seed: the sampler reads nothing else."""
    rules = Rules(players=players)
    scenario = make_scenario(rules, seed, max_asks=30)
    compared = 0
    for viewer in range(players):
        worlds, controls = alternative_worlds(
            scenario, viewer, random.Random(seed * 31 + viewer), tries=600, keep=4
        )

        def sample(world, viewer=viewer):
            game = world.game()
            for ask in scenario.asks:
                game.ask(*ask)
            view = KnowledgeTracker(game).view(viewer)
            sampler = WorldSampler(view, seed=99, assume_sure_hits=assume, most_held=most_held)
            drawn = sampler.sample(20, keep_deals=True)
            return view.own_counts, drawn.hands.tobytes(), drawn.pools.tobytes()

        expected = sample(scenario.world)
        for world in worlds:
            assert sample(world) == expected
            compared += 1
        for world in controls:  # the comparison does see a different hand now
            got = sample(world)
            if got[0] != expected[0]:
                assert got[1] != expected[1]
    assert compared >= players


# (players' hands, catches laid before the first ask, seed of the random asks played)
SMALL = [
    (["2H 3H 4H 5H", "2C 3C 4C 5C"], [["6", "7", "8", "9"], ["10", "J", "Q", "K", "A"]], 2),
    (["2H 3H 4H 5H", "2C 3C 4C 5C"], [["6", "7", "8", "9"], ["10", "J", "Q", "K", "A"]], 0),
    (["2H 3H 4H", "2C 3C 5C", "4D 5D 2D"], [["6", "7", "8"], ["9", "10", "J"], ["Q", "K", "A"]], 1),
    (["2H 3H 4H", "2C 3C 5C", "4D 5D 2D"], [["6", "7", "8"], ["9", "10", "J"], ["Q", "K", "A"]], 3),
    (["2H 3H 4H", "2C 3C 5C", "4D 5D 2D"], [["6", "7", "8"], ["9", "10", "J"], ["Q", "K", "A"]], 4),
]


def small_position(hands, catches, seed) -> Game:
    game = position(hands, catches=catches, rules=Rules(players=len(hands)))
    rng = random.Random(seed)
    for _ in range(rng.choice((2, 3, 4, 5))):
        game.ask(*rng.choice(game.legal_asks()))
    assert not game.is_over
    return game


@pytest.mark.parametrize(("hands", "catches", "seed"), SMALL)
def test_on_small_positions_the_sample_follows_the_exact_distribution(hands, catches, seed):
    game = small_position(hands, catches, seed)
    sampler = WorldSampler(KnowledgeTracker(game).view(game.current_player), seed=seed)
    exact = enumeration.exact_worlds(sampler)
    assert exact.consistent >= 24 and len(exact.deal) >= 3  # something to be uncertain about
    sample = sampler.sample(5_000, keep_deals=True)
    by_deal, by_now = enumeration.sampled_keys(sample)
    for frequencies, probabilities in ((by_deal, exact.deal), (by_now, exact.now)):
        comparison = enumeration.compare(frequencies, probabilities)
        assert comparison.outside == 0  # never a world the public log rules out
        # No farther from the exact distribution than a perfect sampler's 95th percentile.
        assert comparison.tv <= comparison.tv_perfect_95, comparison
        # Every world expected 10 times or more is reached (a chain stuck in a part
        # would miss some).
        likely = {key for key, p in probabilities.items() if p * comparison.samples >= 10}
        assert likely <= set(frequencies)


def test_a_biased_sample_is_caught():
    """The comparison can fail: the same sample with one world's weight doubled."""
    hands, catches, seed = SMALL[2]
    game = small_position(hands, catches, seed)
    sampler = WorldSampler(KnowledgeTracker(game).view(game.current_player), seed=seed)
    exact = enumeration.exact_worlds(sampler)
    by_deal, _ = enumeration.sampled_keys(sampler.sample(5_000, keep_deals=True))
    likeliest = max(by_deal, key=by_deal.get)
    by_deal[likeliest] *= 2
    comparison = enumeration.compare(by_deal, exact.deal)
    assert comparison.tv > comparison.tv_perfect_95


def test_the_worlds_now_are_not_uniform_but_weighted_by_their_deals():
    """What the docs say: uniform over consistent deals, not over the worlds now."""
    hands, catches, seed = SMALL[3]
    game = small_position(hands, catches, seed)
    sampler = WorldSampler(KnowledgeTracker(game).view(game.current_player), seed=seed)
    exact = enumeration.exact_worlds(sampler)
    assert enumeration.tv_to_uniform_now(exact) > 0.1
    assert len(set(np.round(list(exact.now.values()), 9))) > 1


def three_seats_after(seat_1: str, asks) -> Game:
    """Three seats with 2s to 5s left (the rest caught), seat 1 holding ``seat_1``, after
    ``asks`` ((target, rank index), in turn)."""
    game = position(
        ["2H 3H 4H", seat_1, "4D 5D 2D"],
        catches=[["6", "7", "8"], ["9", "10", "J"], ["Q", "K", "A"]],
        rules=Rules(players=3),
    )
    for target, asked in asks:
        game.ask(target, asked)
    return game


def sure_hit_position() -> Game:
    """Seat 0 asks seat 2 for 3s and misses (it holds a 3: a sure hit for the others from
    then on); seat 1 asks seat 2 for 5s, hits, and asks seat 0 for 2s. Seat 1 passed up
    the 3s only if it held none: under the assumption, seat 2 sees fewer worlds."""
    return three_seats_after("2C 4C 5C", ((2, 1), (2, 3), (0, 0)))


@pytest.mark.parametrize("most_held", [0.0, 1.0])
def test_the_play_model_sample_follows_its_exact_distribution(most_held):
    """With the others assumed to take every sure hit (and weighted towards asking what
    they held most of), the sample follows the exact distribution under that model, which
    the enumeration checks on the replayed game itself."""
    view = KnowledgeTracker(sure_hit_position()).view(2)
    plain = enumeration.exact_worlds(WorldSampler(view, seed=3))
    # The weighting refuses more swaps, so neighbouring samples are more alike: 16 steps
    # apart (4 by default) this sample is as spread as independent draws.
    sampler = WorldSampler(view, seed=3, steps=16, assume_sure_hits=True, most_held=most_held)
    assert sampler.assumes_sure_hits
    exact = enumeration.exact_worlds(sampler)
    # The model rules out worlds (seat 1 holding a 3 when it asked for 5s).
    assert exact.consistent < plain.consistent and set(exact.deal) < set(plain.deal)
    if most_held:  # and weighs the rest
        shared = set(exact.deal)
        renormalized = {key: plain.deal[key] / sum(plain.deal[k] for k in shared) for key in shared}
        assert max(abs(exact.deal[key] - renormalized[key]) for key in shared) > 0.05
    by_deal, by_now = enumeration.sampled_keys(sampler.sample(5_000, keep_deals=True))
    for frequencies, probabilities in ((by_deal, exact.deal), (by_now, exact.now)):
        comparison = enumeration.compare(frequencies, probabilities)
        assert comparison.outside == 0
        assert comparison.tv <= comparison.tv_perfect_95, comparison


def test_the_sure_hit_assumption_is_dropped_when_the_log_rules_it_out():
    """Seat 1 asks for 5s (a hit) while seat 0 is proved to hold a 3, then asks seat 0 for
    3s with no draw between: it held a 3 and passed the sure hit up. No world fits the
    assumption, so the sampler drops it and samples the plain worlds."""
    game = three_seats_after("2C 3C 5C", ((2, 1), (2, 3), (0, 1)))
    view = KnowledgeTracker(game).view(2)
    assert not view.knowledge.skips_sure_hits[1]  # the public bounds do not see it
    sampler = WorldSampler(view, seed=1, assume_sure_hits=True, most_held=2.0)
    assert not sampler.assumes_sure_hits and sampler.beta == 0.0
    drawn = sampler.sample(50, keep_deals=True)
    for index in range(len(drawn)):
        assert enumeration.replayed_events(drawn, index) == list(game.events)


def test_what_the_table_knew_at_each_ask_is_read_from_this_very_log():
    """``ask_facts`` carries its replay from decision to decision of one game, and starts
    afresh for a log that shares the first events but not the rest, however long."""
    short = KnowledgeTracker(played(Rules(players=3), 4, 12, "hard")).view(0)
    long_game = played(Rules(players=3), 4, 40, "expert")  # the same deal, other asks
    events = short.knowledge.events
    fork = SimpleNamespace(
        rules=short.rules,
        knowledge=SimpleNamespace(events=[*events[:5], *long_game.events[5:]]),
    )
    assert len(fork.knowledge.events) > len(events)
    worlds_module._FACTS.clear()
    expected = copy.deepcopy(worlds_module.ask_facts(fork))
    worlds_module._FACTS.clear()
    worlds_module.ask_facts(short)  # the short game read first, then the fork
    got = worlds_module.ask_facts(fork)
    assert got.keys() == expected.keys()
    for index, (sure, proved, endgame, barred) in expected.items():
        assert got[index][0] == sure and got[index][2] == endgame
        assert np.array_equal(got[index][1], proved)
        assert np.array_equal(got[index][3], barred)


def test_the_same_seed_gives_the_same_worlds():
    game = played(Rules(), 5, 30)
    view = KnowledgeTracker(game).view(game.current_player)
    a = WorldSampler(view, seed=4).sample(10)
    b = WorldSampler(view, seed=4).sample(10)
    c = WorldSampler(view, seed=5).sample(10)
    assert np.array_equal(a.hands, b.hands) and np.array_equal(a.pools, b.pools)
    assert not (np.array_equal(a.hands, c.hands) and np.array_equal(a.pools, c.pools))


@pytest.mark.parametrize("players, most_held", [(2, 8.0), (4, 0.0)])
def test_a_sample_is_the_chain_s_worlds_one_by_one(players, most_held):
    """``sample`` draws its worlds in one compiled call: the same worlds, hands, pools and
    deals as a walk, a count and a shuffle per world from the same state."""
    game = Game(Rules(players=players), seed=5)
    tracker = KnowledgeTracker(game)
    cpus = [make_cpu("expert", seat) for seat in range(players)]
    while game.pool_size > 10:
        game.ask(*cpus[game.current_player].choose(tracker.view(game.current_player)))
    view = tracker.view(game.current_player)
    sampler = WorldSampler(view, seed=3, assume_sure_hits=True, most_held=most_held)
    assert sampler.movers.size
    by_hand = copy.deepcopy(sampler)
    sample = sampler.sample(20, keep_deals=True)
    kernels, model = worlds_module.kernels, by_hand.model
    for k in range(20):
        by_hand._walk(by_hand.steps)
        hands = np.empty((players, model.rules.ranks), np.int64)
        kernels.current_counts(
            by_hand.assign,
            by_hand.dealt_counts,
            model.slot_seat,
            model.draw_slots,
            model.change,
            hands,
        )
        pool = np.empty(model.pool_slots.size, np.int64)
        kernels.shuffle_pool(by_hand.assign, model.pool_slots, by_hand._state, pool)
        deal = by_hand.assign.copy()
        deal[model.pool_slots] = pool
        assert (sample.hands[k] == hands).all() and (sample.pools[k] == pool).all()
        assert (sample.deals[k] == deal).all()
    assert (sampler._state == by_hand._state).all()
    assert sampler.sample(3).deals is None


def whole_history_violations(model, assign, dealt_counts, seat, rank) -> int:
    """The violations of one (seat, rank) count, read from the seat's whole history: the
    reference for the cut-down lines the chain reads (``rank_timelines``)."""
    kernels, set_size = worlds_module.kernels, model.rules.set_size
    count, bad = dealt_counts[seat, rank], 0
    for kind, op_rank, value, ends in model.ops[model.op_start[seat] : model.op_start[seat + 1]]:
        if kind == kernels.DRAW:
            count += assign[value] == rank
        elif op_rank == rank:
            if kind == kernels.GAIN:
                count += value
            elif kind == kernels.CATCH:
                bad += max(set_size - count, 0)
                count -= set_size
            elif kind == kernels.HAS:
                bad += max(1 - count, 0)
            elif kind == kernels.NONE:
                bad += abs(count)
            elif kind == kernels.GIVE:
                bad += abs(count - value)
                count = 0
        if ends and count >= set_size:
            bad += count - set_size + 1
    return bad


@pytest.mark.parametrize("rules", [r for _, r in RULES[:6]], ids=[name for name, _ in RULES[:6]])
def test_the_chain_s_cut_down_histories_count_what_the_whole_history_counts(rules):
    """The chain reads each (seat, rank) count's own operations and, for the weight, only
    the operations that move counts: for any filling of the slots, right or wrong, they
    give the violations and the energy the whole history gives."""
    kernels = worlds_module.kernels
    rng = np.random.default_rng(7)
    full_sets = 0
    for seed, asks in ((1, 20), (2, 60)):
        game = played(rules, seed, asks, "expert")
        view = KnowledgeTracker(game).view(1)
        model = worlds_module.build_model(view, assume_sure_hits=True, most_held=True)
        seats, ranks = rules.players, rules.ranks
        counts = np.zeros(ranks, np.int64)
        for trial in range(40):
            # Any ranks at all; every other trial from three ranks, so hands fill up.
            pick = rng.integers(0, 3 if trial % 2 else ranks, model.slot_seat.size)
            assign = np.where(model.slot_fixed >= 0, model.slot_fixed, pick).astype(np.int64)
            dealt_counts = np.zeros((seats, ranks), np.int64)
            for slot in np.flatnonzero(model.slot_dealt):
                dealt_counts[model.slot_seat[slot], assign[slot]] += 1
            full_sets += int((dealt_counts >= rules.set_size).sum())
            for seat in range(seats):
                for rank_index in range(ranks):
                    expected = whole_history_violations(
                        model, assign, dealt_counts, seat, rank_index
                    )
                    args = (assign, dealt_counts, model.lines, model.line_start)
                    assert (
                        kernels.timeline_violations(seat, rank_index, *args, rules.set_size, False)
                        == expected
                    )
                    assert kernels.timeline_violations(
                        seat, rank_index, *args, rules.set_size, True
                    ) == (expected > 0)
                whole = kernels.seat_energy(
                    seat, assign, dealt_counts, model.ops, model.op_start, rules.set_size, counts
                )
                cut = kernels.seat_energy(
                    seat,
                    assign,
                    dealt_counts,
                    model.energy_ops,
                    model.energy_start,
                    rules.set_size,
                    counts,
                )
                assert cut == whole
    assert full_sets  # the fillings did put full sets in hands, where the group ends count


def reference_walk(sampler: WorldSampler, steps: int) -> int:
    """The chain written out plainly: every proposal checked against every count's history
    (``total_violations``) and weighed by the whole table's energy, from the same random
    stream. Returns swaps kept."""
    kernels, model = worlds_module.kernels, sampler.model
    assign, dealt, state = sampler.assign, sampler.dealt_counts, sampler._state
    set_size, beta = model.rules.set_size, sampler.beta
    movers, free, group = sampler.movers, sampler.free, model.slot_group
    seat_of, dealt_slot, forbidden = model.slot_seat, model.slot_dealt, model.slot_forbidden
    counts = np.zeros(model.rules.ranks, np.int64)

    def energy() -> int:
        return sum(
            kernels.seat_energy(seat, assign, dealt, model.ops, model.op_start, set_size, counts)
            for seat in range(model.rules.players)
        )

    kept = 0
    for _ in range(steps):
        i = movers[kernels.below(state, movers.size)]
        j = free[kernels.below(state, free.size)]
        if i == j or group[i] != group[j]:
            continue
        a, b = assign[i], assign[j]
        if a == b or forbidden[i] == b or forbidden[j] == a:
            continue
        if seat_of[i] == seat_of[j] and dealt_slot[i] and dealt_slot[j]:
            continue
        before = energy()
        kernels._swap(i, j, assign, dealt, seat_of, dealt_slot)
        broken = kernels.total_violations(
            assign, dealt, model.lines, model.line_start, forbidden, set_size
        )
        rise = energy() - before
        if broken or (beta > 0 and rise > 0 and kernels.uniform(state) >= np.exp(-beta * rise)):
            kernels._swap(i, j, assign, dealt, seat_of, dealt_slot)
            continue
        kept += 1
    return kept


@pytest.mark.parametrize(
    "rules, most_held",
    [(Rules(players=2), 8.0), (Rules(), 2.0), (Rules.preset("pairs"), 0.0), (RULES[10][1], 8.0)],
    ids=["table-2", "table-4", "pairs-4", "refill-3"],
)
def test_the_chain_keeps_exactly_the_swaps_a_whole_check_keeps(rules, most_held):
    """The chain checks a swap against the kept counts of the lines it touches and keeps
    each hand's energy from swap to swap; written out plainly, checking every history and
    weighing the whole table at each proposal, it keeps the same swaps, draw for draw."""
    for seed, asks in ((3, 25), (4, 45)):
        game = played(rules, seed, asks, "expert")
        view = KnowledgeTracker(game).view(0)
        sampler = WorldSampler(view, seed=seed, assume_sure_hits=True, most_held=most_held)
        plain = copy.deepcopy(sampler)
        steps = 40 * sampler.movers.size
        kept = sampler._walk(40)
        assert kept == reference_walk(plain, steps) and kept > 0
        assert np.array_equal(sampler.assign, plain.assign)
        assert np.array_equal(sampler._state, plain._state)
        assert sampler.is_consistent()


def test_refusals_name_what_was_wrong():
    game = played(Rules(), 5, 10)
    view = KnowledgeTracker(game).view(0)
    with pytest.raises(ValueError, match="steps"):
        WorldSampler(view, steps=0)
    with pytest.raises(ValueError, match="most_held"):
        WorldSampler(view, most_held=-1.0)
    with pytest.raises(ValueError, match="assume_sure_hits"):
        WorldSampler(view, assume_sure_hits="yes")
    with pytest.raises(ValueError, match="count"):
        WorldSampler(view).sample(0)
    with pytest.raises(ValueError, match="keep_deals"):
        WorldSampler(view).sample(1).dealt_game(0)
    card_game = Game(Rules.preset("authors", players=3), seed=1)
    with pytest.raises(SamplerError, match="ask_for"):
        WorldSampler(KnowledgeTracker(card_game).view(0))


def test_the_play_model_leaves_out_ranks_no_other_seat_could_hold():
    """Seat 1 asks seat 0 for 3s, misses and fishes a 3 (shown), then asks for 5s. Seat 0
    has just said go fish to 3s: no 3 could hit, so asking for 5s while holding more 3s is
    what ``expert`` does, and the model weighs that ask against the other ranks only."""
    game = position(
        ["2H 4H 5H", "3C 3D 5C"],
        pool_top="3H",
        catches=[["6", "7", "8", "9", "10"], ["J", "Q", "K", "A"]],
        rules=Rules(players=2),
        first_player=1,
    )
    game.ask(0, rank("3"))
    game.ask(0, rank("5"))
    view = KnowledgeTracker(game).view(0)
    asks = [index for index, event in enumerate(game.events) if type(event) is Ask]
    facts = worlds_module.ask_facts(view)
    assert list(np.flatnonzero(facts[asks[0]][3])) == []
    assert list(np.flatnonzero(facts[asks[1]][3])) == [rank("3")]
    sampler = WorldSampler(view, seed=5, steps=16, assume_sure_hits=True, most_held=8.0)
    exact = enumeration.exact_worlds(sampler)
    drawn = sampler.sample(5_000, keep_deals=True)
    by_deal, by_now = enumeration.sampled_keys(drawn)
    for frequencies, probabilities in ((by_deal, exact.deal), (by_now, exact.now)):
        comparison = enumeration.compare(frequencies, probabilities)
        assert comparison.outside == 0
        assert comparison.tv <= comparison.tv_perfect_95, comparison
    # Seat 1 dealt three 3s asked for 5s holding three 3s and one 5: no weight against it.
    three_threes = [i for i in range(len(drawn)) if drawn.hands[i, 1, rank("3")] == 3]
    assert len(three_threes) > 500
    assert all(enumeration.play_model(drawn, i) == (0, 0) for i in three_threes[:20])
