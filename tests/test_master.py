"""The ``master`` CPU: a search over sampled worlds that decides from its view only."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
from helpers import dealt, position, rank
from test_no_leak import alternative_worlds, assert_cpu_ignores_hidden_cards, make_scenario

from gofish_env import Game, Match, Rules
from gofish_env import world_kernels as kernels
from gofish_env import worlds as worlds_module
from gofish_env.cards import parse_card
from gofish_env.cpus import CPU_LEVELS, ExpertCPU, make_cpu
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.master import (
    DEFAULT_POOL_LIMIT,
    DEFAULT_SIMULATIONS,
    OTHER_SIMULATIONS,
    SIMULATIONS,
    MasterCPU,
    default_pool_limit,
    default_rollouts,
    world_values,
)
from gofish_env.rollouts import rollout_values, world_batch
from gofish_env.vector import VectorGame
from gofish_env.worlds import SamplerError, WorldSampler, build_model

NINE = rank("9")


def expert_game(rules: Rules, seed: int, asks: int) -> Game:
    game = Game(rules, seed=seed)
    tracker = KnowledgeTracker(game)
    cpus = [make_cpu("expert", seed * 10 + seat) for seat in range(rules.players)]
    while not game.is_over and game.num_asks < asks:
        seat = game.current_player
        game.ask(*cpus[seat].choose(tracker.view(seat)))
    return game


def test_master_is_a_registered_level():
    assert "master" in CPU_LEVELS
    cpu = make_cpu("master", 3)
    assert isinstance(cpu, MasterCPU) and cpu.name == "master"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("simulations", 0),
        ("simulations", 2.5),
        ("simulations", "tables"),
        ("candidates", 1),
        ("candidates", True),
        ("pool_limit", -1),
        ("pool_limit", 8.0),
    ],
)
def test_bad_budgets_are_refused_naming_the_field(field, value):
    with pytest.raises(ValueError, match=rf"{field}: got {value!r}; allowed: an integer >= "):
        MasterCPU(1, **{field: value})


def test_bad_play_model_settings_are_refused_naming_the_field():
    with pytest.raises(ValueError, match=r"assume_sure_hits: got 'yes'; allowed: True, False"):
        MasterCPU(1, assume_sure_hits="yes")
    with pytest.raises(ValueError, match=r"most_held: got -1.0; allowed: a number >= 0"):
        MasterCPU(1, most_held=-1.0)


@pytest.mark.parametrize("margin", [-1.0, float("nan"), "1", True])
def test_a_margin_that_is_not_a_number_from_zero_up_is_refused(margin):
    with pytest.raises(ValueError, match=rf"margin: got {margin!r}; allowed: a number >= 0"):
        MasterCPU(1, margin=margin)


def test_the_play_model_reaches_the_sampler():
    """``assume_sure_hits`` and ``most_held`` are the sampler's: by default the others are
    assumed to take sure hits and to ask what they hold most of (weight 8), at every
    table."""
    views = []
    for players in (4, 2):
        game = expert_game(Rules(players=players), 6, 20)
        views.append(KnowledgeTracker(game).view(game.current_player))
    view, two = views
    keys = sorted({(target, rank) for target, rank in view.legal_asks})[:2]
    seen = []
    original = WorldSampler.__init__

    def spy(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen.append((self.assumes_sure_hits, self.beta))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(WorldSampler, "__init__", spy)
        MasterCPU(1, simulations=8).values(view, keys)
        MasterCPU(1, simulations=8).values(two, sorted(set(two.legal_asks))[:2])
        MasterCPU(1, simulations=8, assume_sure_hits=False, most_held=0).values(view, keys)
        MasterCPU(1, simulations=8, most_held=3).values(two, sorted(set(two.legal_asks))[:2])
    assert seen == [(True, 8.0), (True, 8.0), (False, 0.0), (True, 3.0)]


def test_a_rollout_level_that_is_not_compiled_is_refused_naming_the_allowed_ones():
    with pytest.raises(ValueError, match=r"rollouts: got 'master'; allowed: random, .*, expert"):
        MasterCPU(1, rollouts="master")


def test_the_rollout_level_plays_the_rollouts():
    """``rollouts`` reaches the vector engine: other CPUs play the same worlds on, so the
    values differ, and the same level gives the same values."""
    game = expert_game(Rules(players=4), 4, 20)
    view = KnowledgeTracker(game).view(game.current_player)
    keys = sorted({(target, rank) for target, rank in view.legal_asks})[:3]
    values = {}
    for level in ("hard", "expert", "random"):
        cpu = MasterCPU(5, simulations=96, rollouts=level)
        values[level] = cpu.rollouts(view, keys)
        again = MasterCPU(5, simulations=96, rollouts=level).rollouts(view, keys)
        assert np.array_equal(values[level], again)
    assert not np.array_equal(values["hard"], values["expert"])
    assert not np.array_equal(values["expert"], values["random"])


def test_the_default_rollouts_are_hard_at_two_players_and_elsewhere_until_eight_cards():
    """With no level named, the table picks it (``default_rollouts``), from three players
    by the pool: the rollouts are those of the named level, value for value."""
    assert [default_rollouts(players, 8) for players in (2, 3, 4, 6)] == ["hard", *["expert"] * 3]
    assert [default_rollouts(players, 9) for players in (2, 3, 4, 6)] == ["hard"] * 4
    assert MasterCPU(1, rollouts="random").rollout_level(4, 12) == "random"
    for by_table in ("table", None):  # the same sentinel as pool_limit's, and the older one
        assert MasterCPU(1, rollouts=by_table).rollout_level(4, 9) == "hard"
    cases = (
        (4, 40, 7, "expert", "hard"),
        (4, 20, 18, "hard", "expert"),
        (3, 20, 16, "hard", "expert"),
        (3, 30, 8, "expert", "hard"),
        (2, 10, 31, "hard", "expert"),
    )
    for players, asks, pool, level, other in cases:
        game = expert_game(Rules(players=players), 4, asks)
        view = KnowledgeTracker(game).view(game.current_player)
        assert view.pool_size == pool
        keys = sorted({(target, rank) for target, rank in view.legal_asks})[:3]
        assert len(keys) > 1
        default = MasterCPU(5, simulations=96).rollouts(view, keys)
        named = MasterCPU(5, simulations=96, rollouts=level).rollouts(view, keys)
        assert np.array_equal(default, named), players
        assert not np.array_equal(default, MasterCPU(5, 96, rollouts=other).rollouts(view, keys))


def test_the_others_rollouts_play_the_other_seats_and_the_viewer_keeps_its_level():
    """``others_rollouts`` names a level for the seats other than the viewer's: naming the
    viewer's own changes nothing, and the rollouts are those of a level per seat."""
    game = expert_game(Rules(players=2), 4, 31)
    view = KnowledgeTracker(game).view(game.current_player)
    keys = sorted({(target, rank) for target, rank in view.legal_asks})[:3]
    default = MasterCPU(5, simulations=96).rollouts(view, keys)
    same = MasterCPU(5, simulations=96, others_rollouts="hard").rollouts(view, keys)
    assert np.array_equal(default, same)
    cpu = MasterCPU(5, simulations=96, others_rollouts="expert")
    assert cpu.rollout_levels(view) == [
        "hard" if seat == view.seat else "expert" for seat in (0, 1)
    ]
    mixed = cpu.rollouts(view, keys)
    assert not np.array_equal(mixed, default)
    assert not np.array_equal(mixed, MasterCPU(5, 96, rollouts="expert").rollouts(view, keys))
    # A level per seat, seat by seat: the viewer's seat is its own.
    worlds = WorldSampler(view, seed=3).sample(32, keep_deals=True)
    levels = cpu.rollout_levels(view)
    assert np.array_equal(
        world_values(view, worlds, keys, ["hard", "hard"], 3),
        world_values(view, worlds, keys, "hard", 3),
    )
    assert not np.array_equal(
        world_values(view, worlds, keys, levels, 3),
        world_values(view, worlds, keys, levels[::-1], 3),
    )
    # At four players the viewer keeps the table's level (expert from 8 cards).
    four = expert_game(Rules(players=4), 4, 40)
    view = KnowledgeTracker(four).view(four.current_player)
    assert view.pool_size <= 8
    named = MasterCPU(1, others_rollouts="hard").rollout_levels(view)
    assert named == ["expert" if seat == view.seat else "hard" for seat in range(4)]
    assert MasterCPU(1).rollout_levels(view) == "expert"


def test_an_others_rollout_level_that_is_not_compiled_is_refused_naming_the_allowed_ones():
    for level in ("master", "table"):
        with pytest.raises(ValueError, match=rf"others_rollouts: got '{level}'; allowed: random, "):
            MasterCPU(1, others_rollouts=level)


def test_a_sure_hit_the_history_proves_is_asked_without_a_search():
    game = position(
        [["9H", "KH", "KS", "KD"], ["9S", "3C"], ["4C", "5C"]],
        pool_top=["6C", "6D"],
        first_player=1,
    )
    game.ask(2, NINE)  # seat 1 asks for 9s: it holds one
    game.ask(0, rank("4"))
    view = KnowledgeTracker(game).view(0)
    cpu = MasterCPU(0)
    assert cpu.choose(view) == (1, NINE)
    assert cpu.searches_made == 0


# What the engine and the hard CPUs read of a game (rank asks).
READ = (
    "counts",
    "sizes",
    "pool_len",
    "caught",
    "catch_count",
    "points",
    "num_caught",
    "out",
    "over",
    "current",
    "least",
    "most",
    "sure",
    "skips",
    "unlaid",
)


@pytest.mark.parametrize("players", [2, 4])
def test_the_rollout_batch_is_each_world_with_the_whole_public_history(players):
    """Game a * W + w of the batch is world w replayed from its deal: every array the
    engine and the hard CPUs read, and the pool's ranks in order."""
    game = expert_game(Rules(players=players), 3, 30)
    view = KnowledgeTracker(game).view(game.current_player)
    worlds = WorldSampler(view, seed=5).sample(6, keep_deals=True)
    batch = world_batch(view, worlds, repeats=3)
    assert batch.num_games == 18
    for w in range(6):
        replay = worlds.dealt_game(w)
        for record in view.asks:
            replay.ask(record.target, record.rank)
        reference = VectorGame.from_games([replay]).state
        for a in range(3):
            g = a * 6 + w
            for name in READ:
                assert np.array_equal(getattr(batch.state, name)[g], getattr(reference, name)[0]), (
                    name
                )
            size = batch.state.pool_len[g]
            assert np.array_equal(batch.state.pool[g, :size] // 4, reference.pool[0, :size] // 4)


def test_rollout_values_use_the_same_worlds_and_generators_for_every_ask():
    game = expert_game(Rules(players=4), 4, 20)
    view = KnowledgeTracker(game).view(game.current_player)
    worlds = WorldSampler(view, seed=1).sample(8, keep_deals=True)
    ask = view.legal_asks[0]
    share, margin = rollout_values(view, worlds, [ask, ask], seed=9)
    assert share.shape == margin.shape == (8, 2)
    # The same ask twice: the same eight games, rollout for rollout.
    assert np.array_equal(share[:, 0], share[:, 1])
    assert np.array_equal(margin[:, 0], margin[:, 1])
    assert ((share >= 0) & (share <= 1)).all() and (np.abs(margin) <= 1).all()


@pytest.mark.parametrize("players", [2, 4])
def test_the_budget_sets_the_worlds_per_candidate(players):
    game = expert_game(Rules(players=players), 6, 20)
    view = KnowledgeTracker(game).view(game.current_player)
    keys = sorted({(target, rank) for target, rank in view.legal_asks})[:4]
    assert len(keys) >= 2
    by_table = SIMULATIONS.get(players, OTHER_SIMULATIONS) // len(keys)
    for simulations, worlds in ((4, 1), (40, 40 // len(keys)), (3, 1), ("table", by_table)):
        cpu = MasterCPU(1, simulations=simulations)
        captured = {}
        original = WorldSampler.sample

        def spy(self, count, keep_deals=False, captured=captured, original=original):
            captured["count"] = count
            return original(self, count, keep_deals)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(WorldSampler, "sample", spy)
            values = cpu.values(view, keys)
        assert captured["count"] == worlds and values.shape == (len(keys),)


def test_the_budget_by_table_is_taken_from_the_number_of_players():
    cpu = MasterCPU(1)
    assert cpu.simulations == DEFAULT_SIMULATIONS == "table"
    for players in range(2, 7):
        assert cpu.search_simulations(players) == SIMULATIONS.get(players, OTHER_SIMULATIONS)
    assert MasterCPU(1, simulations=64).search_simulations(2) == 64


@pytest.mark.parametrize(
    "rules",
    [Rules.preset("authors", players=3), Rules(players=3, match_target=14)],
    ids=["card-asks", "match"],
)
def test_where_it_cannot_search_it_plays_as_expert(rules):
    game = Match(rules, seed=2) if rules.match_target else Game(rules, seed=2)
    tracker = KnowledgeTracker(game)
    master, expert = MasterCPU(5), make_cpu("expert", 5)
    for _ in range(30):
        if game.is_over:
            break
        view = tracker.view(game.current_player)
        choice = expert.choose(view)
        assert master.choose(view) == choice
        game.ask(*choice)
    assert master.searches_made == 0


def test_the_same_seed_gives_the_same_game():
    def play(seed):
        game = Game(Rules(players=4), seed=11)
        tracker = KnowledgeTracker(game)
        master = MasterCPU(seed, simulations=32, pool_limit=None)
        cpus = [master] + [make_cpu("expert", s) for s in (1, 2, 3)]
        while not game.is_over:
            seat = game.current_player
            game.ask(*cpus[seat].choose(tracker.view(seat)))
        return game.events, cpus[0].searches_made

    first, searches = play(7)
    assert searches > 5
    assert play(7)[0] == first


@pytest.mark.parametrize("players", [2, 4])
def test_master_ignores_hidden_cards(players):
    """The no-leak harness: worlds the seat cannot tell apart give the same choices."""
    scenario = make_scenario(Rules(players=players), seed=21 + players, max_asks=40)
    compared = 0
    for viewer in range(players):
        worlds, _ = alternative_worlds(scenario, viewer, random.Random(viewer), tries=800, keep=3)
        compared += assert_cpu_ignores_hidden_cards(
            lambda seed: MasterCPU(seed, simulations=24, pool_limit=None), scenario, viewer, worlds
        )
    assert compared >= 10


def test_without_evidence_enough_it_asks_what_expert_asks():
    """An override needs a gain of ``margin`` standard errors: with an endless margin the
    search never overrides, and master makes expert's very choices (ties included)."""
    game = Game(Rules(players=4), seed=12)
    tracker = KnowledgeTracker(game)
    master = MasterCPU(3, simulations=24, margin=float("inf"), pool_limit=None)
    expert = make_cpu("expert", 3)
    while not game.is_over:
        view = tracker.view(game.current_player)
        choice = expert.choose(view) if game.current_player == 0 else None
        if choice is not None:
            assert master.choose(view) == choice
        else:
            choice = make_cpu("hard", game.num_asks).choose(view)
        game.ask(*choice)
    assert master.searches_made > 5


def test_scores_put_the_searched_ask_first_and_choose_asks_it_without_searching_again():
    """Imitation reads ``scores`` and then plays ``choose``: the ask that scores highest is
    the one asked, the search runs once a decision, and the game is the one ``choose``
    alone plays (the same generators are used in the same order)."""

    def play(with_scores: bool):
        game = Game(Rules(players=2), seed=5)
        tracker = KnowledgeTracker(game)
        master = MasterCPU(4, simulations=96, margin=0.0, pool_limit=None)
        expert = make_cpu("expert", 8)
        overridden = 0
        while not game.is_over:
            view = tracker.view(game.current_player)
            if game.current_player == 1:
                game.ask(*expert.choose(view))
                continue
            if with_scores:
                searches = master.searches_made
                scores = master.scores(view)
                expert_scores = make_cpu("expert", 0).scores(view)
                ask = master.choose(view)
                assert master.searches_made - searches <= 1
                best = max(scores.values())
                assert scores[ask] == best
                assert [key for key, score in scores.items() if score == best] == (
                    [ask]
                    if scores[ask] > max(expert_scores.values())
                    else [key for key, score in expert_scores.items() if score == best]
                )
                overridden += scores != expert_scores
            else:
                ask = master.choose(view)
            game.ask(*ask)
        return game.events, master.searches_made, overridden

    events, searches, overridden = play(True)
    assert overridden >= 1 and searches > overridden
    assert (events, searches) == play(False)[:2]


def pools_searched_at(master: MasterCPU, players: int, seed: int) -> list[int]:
    """The pool sizes at which ``master`` (seat 0, against ``expert``s) searched in one game."""
    game = Game(Rules(players=players), seed=seed)
    tracker = KnowledgeTracker(game)
    cpus = [master] + [make_cpu("expert", seat) for seat in range(1, players)]
    searched_at = []
    while not game.is_over:
        seat = game.current_player
        view = tracker.view(seat)
        before = master.searches_made
        game.ask(*cpus[seat].choose(view))
        if master.searches_made > before:
            searched_at.append(view.pool_size)
    return searched_at


def test_by_default_it_searches_only_once_the_pool_is_nearly_empty():
    master = MasterCPU(2, simulations=24)
    assert master.pool_limit == DEFAULT_POOL_LIMIT == "table"
    assert master.search_limit(5) == default_pool_limit(5) == 8
    searched_at = pools_searched_at(master, 5, 8)
    assert searched_at and max(searched_at) <= 8
    assert [default_pool_limit(players) for players in (2, 3, 4, 5, 6)] == [12, 16, 16, 8, 8]


@pytest.mark.parametrize("players", [3, 4])
def test_at_three_and_four_players_the_default_search_starts_at_sixteen_cards(players):
    assert MasterCPU(2).search_limit(players) == default_pool_limit(players) == 16
    searched_at = pools_searched_at(MasterCPU(2, simulations=24), players, 8)
    assert max(searched_at) == 16 and min(searched_at) <= 8


def test_at_two_players_the_default_search_starts_at_twelve_cards_in_the_pool():
    assert MasterCPU(2).search_limit(2) == default_pool_limit(2) == 12
    searched_at = [
        pool
        for seed in range(3)
        for pool in pools_searched_at(MasterCPU(2, simulations=24), 2, seed)
    ]
    assert max(searched_at) == 12 and min(searched_at) <= 8
    named = [
        pool
        for seed in range(3)
        for pool in pools_searched_at(MasterCPU(2, simulations=24, pool_limit=8), 2, seed)
    ]
    assert named and max(named) <= 8


def test_a_pool_limit_that_is_not_a_count_none_or_table_is_refused():
    with pytest.raises(ValueError, match=r"pool_limit: got 'tabel'; allowed: .*'table'"):
        MasterCPU(1, pool_limit="tabel")
    assert MasterCPU(1, pool_limit=None).search_limit(2) is None


# ------------------------------------------------------------------ what the audit of master found


def two_deck_position(asks: int):
    """The audit's recorded two-deck position: four ``expert``s (seeds 20 + seat) play
    ``Game(Rules.preset("two_decks", players=4), seed=102)`` for ``asks`` asks; the view
    of the seat to move, and the dealt hands and pool (top first)."""
    rules = Rules.preset("two_decks", players=4)
    game = Game(rules, seed=102)
    tracker = KnowledgeTracker(game)
    cpus = [make_cpu("expert", 20 + seat) for seat in range(4)]
    while game.num_asks < asks:
        seat = game.current_player
        game.ask(*cpus[seat].choose(tracker.view(seat)))
    hands, pool, _ = dealt(rules, 102)
    return tracker.view(game.current_player), hands, pool


def true_deal_violations(model, hands, pool) -> int:
    """How far the true deal strays from ``model``'s constraints (0: it fits them)."""
    assign = [parse_card(card)[0] for hand in hands for card in hand]
    assign += [parse_card(card)[0] for card in pool]
    assign = np.array(assign[: model.slot_seat.size], np.int64)
    dealt_counts = np.zeros((model.rules.players, model.rules.ranks), np.int64)
    for slot in np.flatnonzero(model.slot_dealt):
        dealt_counts[model.slot_seat[slot], assign[slot]] += 1
    return int(
        kernels.total_violations(
            assign,
            dealt_counts,
            model.lines,
            model.line_start,
            model.slot_forbidden,
            model.rules.set_size,
        )
    )


def test_a_sampler_that_draws_no_world_leaves_the_decision_to_expert():
    """Under two decks the sampler once gave up at this position and ``master`` raised
    SamplerError. Where it draws no world, the decision is ``expert``'s (a search that never
    finds one stands in for it here)."""
    view, _, _ = two_deck_position(131)
    master = make_cpu("master", 0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernels, "find_consistent", lambda *args: -1)
        with pytest.raises(SamplerError, match="no consistent world found"):
            WorldSampler(view, seed=0, assume_sure_hits=True, most_held=8.0)
        ask = master.choose(view)
    assert (master.searches_made, master.fallbacks_made, master.overrides_made) == (1, 1, 0)
    assert ask == make_cpu("expert", 0).choose(view)


def test_under_two_decks_the_search_finds_the_worlds_that_fit_the_assumption():
    """The audit's two-deck positions, where the true deal fits the sure-hit assumption: the
    local search's first start there fails more often than not, and the starts after it
    anneal. The sampler keeps the assumption at every seed, and ``master`` searches
    (before: 4 of 20 seeds gave up at ask 131, and most dropped the assumption)."""
    for asks in (112, 121, 131):
        view, hands, pool = two_deck_position(asks)
        assert true_deal_violations(build_model(view, True, True), hands, pool) == 0
        for seed in range(8):
            sampler = WorldSampler(view, seed=seed, assume_sure_hits=True, most_held=8.0)
            assert sampler.assumes_sure_hits and sampler.is_consistent()
    master = make_cpu("master", 0)
    master.choose(view)
    assert (master.searches_made, master.fallbacks_made) == (1, 0)


@pytest.mark.parametrize(("players", "seeds"), [(2, (0, 2)), (4, (3,))])
def test_what_the_table_knew_at_each_ask_is_what_its_tracker_knew(players, seeds):
    """``ask_facts`` replays the log as the table's tracker read it, an ask's events
    together. Fed one event at a time, it checked the sure-hit assumption between a hit and
    the catch it makes, where a full set in hand admits no world, and dropped it for every
    seat: at these games' asks its barred ranks differed from the table's (2 players: index
    140 of seed 0, four asks of seed 2; 4 players: index 155 of seed 3)."""
    rules = Rules(players=players)
    for seed in seeds:
        game = Game(rules, seed=seed)
        tracker = KnowledgeTracker(game)
        cpus = [make_cpu("expert", seed * 10 + seat) for seat in range(players)]
        table = {}  # the index of each ask in the log -> the tracker's knowledge before it
        while not game.is_over:
            seat = game.current_player
            table[len(game.events)] = copy.deepcopy(tracker.sync())
            game.ask(*cpus[seat].choose(tracker.view(seat)))
        worlds_module._FACTS.clear()
        facts = worlds_module.ask_facts(tracker.view(0))
        assert facts.keys() == table.keys()
        for index, public in table.items():
            ask = game.events[index]
            least = public.least
            sure, proved, endgame, barred = facts[index]
            assert sure == bool(least[ask.target, ask.rank])
            assert np.array_equal(proved, np.delete(least, ask.asker, axis=0).max(axis=0) > 0)
            assert endgame == (
                public.pool_size <= worlds_module.ENDGAME_POOL
                and ExpertCPU.endgame_race(rules, public.hand_sizes, ask.asker)
            )
            assert np.array_equal(barred, worlds_module.barred_ranks(public, ask.asker)), index


def test_with_fewer_than_two_worlds_a_candidate_it_asks_what_expert_asks():
    """One world measures no standard error: with 6 simulations (one world a candidate) and
    a margin no gain meets, ``master`` asks ``expert``'s choice at every decision (it
    overrode ``expert`` at 37 of 72 searches of the audit's three games)."""
    assert MasterCPU(1, margin=0.0).pick(np.array([[0.0, 1.0, 0.5]])) == 0
    for seed in (40, 41):
        game = Game(Rules(players=2), seed=seed)
        tracker = KnowledgeTracker(game)
        master = MasterCPU(7, simulations=6, margin=1e9, pool_limit=None)
        twin, other = make_cpu("expert", 7), make_cpu("expert", 8)
        while not game.is_over:
            view = tracker.view(game.current_player)
            if game.current_player == 0:
                choice = twin.choose(view)
                assert master.choose(view) == choice
            else:
                choice = other.choose(view)
            game.ask(*choice)
        assert master.searches_made > 5 and master.overrides_made == 0


def finished_and_waiting() -> tuple:
    """The audit's game ``Game(Rules(players=2), seed=4)`` of two ``expert``s (seeds 1 and
    2). After 5 asks, for the seat not to move: what ``master.choose`` raised (the seat to
    move, and that error), and fresh samplers' worlds (unseeded twice, then seeded 3). And
    seat 0's view of the finished game."""
    game = Game(Rules(players=2), seed=4)
    tracker = KnowledgeTracker(game)
    cpus = [make_cpu("expert", 1), make_cpu("expert", 2)]
    while not game.is_over:
        seat = game.current_player
        if game.num_asks == 5:
            waiting = tracker.view(1 - seat)
            try:
                make_cpu("master", 1, pool_limit=None).choose(waiting)
                raised = (seat, None)
            except ValueError as error:
                raised = (seat, str(error))
            drawn = [WorldSampler(waiting, seed=seed).sample(8).hands for seed in (None, None, 3)]
        game.ask(*cpus[seat].choose(tracker.view(seat)))
    return raised, drawn, tracker.view(0)


def test_with_no_ask_to_choose_the_error_says_why():
    (seat, raised), _, over = finished_and_waiting()
    assert raised == f"seat {1 - seat} has no ask to choose: seat {seat} is to move"
    for call in (
        make_cpu("master", 1).choose,
        make_cpu("master", 1).scores,
        make_cpu("expert", 1).choose,
    ):
        with pytest.raises(ValueError, match="seat 0 has no ask to choose: the game is over"):
            call(over)


def test_a_sampler_without_a_seed_is_unseeded_and_a_seed_that_is_no_integer_is_refused():
    _, (first, second, seeded), over = finished_and_waiting()
    assert not np.array_equal(first, second)  # from the system's entropy
    assert not np.array_equal(first, seeded)
    with pytest.raises(ValueError, match=r"seed: got '1'; allowed: an integer, or None"):
        WorldSampler(over, seed="1")


def test_an_option_a_level_does_not_take_is_refused_listing_those_it_takes():
    with pytest.raises(
        ValueError,
        match=r"'master' takes no option among \['rollout'\]; allowed: simulations, "
        r"candidates, margin, pool_limit, rollouts, assume_sure_hits, most_held, others_rollouts",
    ):
        make_cpu("master", 1, rollout="hard")
    with pytest.raises(
        ValueError, match=r"'hard' takes no option among \['rollouts'\]; allowed: none"
    ):
        make_cpu("hard", 1, rollouts="hard")


def test_a_decision_kept_from_scores_is_not_asked_in_another_game():
    """``scores`` keeps its decision for the next ``choose`` of the same position. Another
    game's knowledge may be built where a freed one was (the same id) at the same event
    count, seat and hand; its ``choose`` must decide anew (the kept ask was for another
    table: here seat 1 held five cards, and now seat 2 does)."""

    def table(one: str, two: str) -> Game:
        return position(["2H 3H 4H", one, two], rules=Rules(players=3))

    master = make_cpu("master", 1)
    for _ in range(20):
        tracker = KnowledgeTracker(table("5H 6H 7H 8H 9H", "10H"))
        master.scores(tracker.view(0))
        assert master._decided[-1][0] == 1  # it asks seat 1, which holds five cards
        other = table("10H", "5H 6H 7H 8H 9H")
        del tracker  # its knowledge may be freed, and its id given to the next one
        tracker = KnowledgeTracker(other)
        assert master.choose(tracker.view(0))[0] == 2
