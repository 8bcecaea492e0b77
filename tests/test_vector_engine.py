"""The vector engine against the reference: the same positions in ``VectorGame`` and in
Python ``Game``s, the same seeded random legal asks applied to both, and after every ask
hands, catches, pool, seat to move, the end, the winners, every seat's observation and the
mask compared bit for bit (tests/vector_helpers.py). Every preset at 2 to 6 players and the
house-rule set-ups of tests/test_properties.py, from the batch's own deals and from
positions in play copied with ``from_games``; then the invariants of test_properties on
the batch alone, the batch's seeding, and its refusals."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from helpers import position, rank
from test_properties import ALL_CONFIGS, house_rule_configs, preset_configs
from vector_helpers import Reference, compare, dealt_games, play_both, played_into

from gofish_env import Game, IllegalAsk, Match, Rules
from gofish_env.cards import parse_card
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.vector import CompiledCPUs, VectorGame, views

# Set-ups where the order cards arrived in decides which are laid (exact-card asks with
# pairs and refills), and other combinations no preset or property set-up plays.
EXTRA_SETUPS = {
    "card_pairs_refill": {"ask_for": "card", "set_size": 2, "empty_hand_draw_count": 5},
    "card_pairs_jokers_held_refill": {
        "ask_for": "card",
        "set_size": 2,
        "jokers": True,
        "ask_for_held_card": True,
        "empty_hand_draw_count": 3,
    },
    "card_own_turn_askable": {
        "ask_for": "card",
        "empty_hand_draw": "own_turn",
        "empty_hand_askable": True,
        "deal": 5,
    },
    "pairs_whole_deck": {"set_size": 2, "deal": "whole_deck"},
    "card_pairs_whole_deck_first_empty": {
        "ask_for": "card",
        "set_size": 2,
        "deal": "whole_deck",
        "winner": "first_empty",
    },
    "never_draw_first_out": {"empty_hand_draw": "never", "game_end": "first_out"},
    "two_decks_everything": {
        "decks": 2,
        "deal": 3,
        "empty_hand_draw": "own_turn",
        "empty_hand_draw_count": 2,
        "empty_hand_askable": True,
        "after_miss": "asked",
        "off_rank_catch_asks_again": True,
    },
    "one_card_random_first": {
        "deal": 1,
        "first_player": "random",
        "fished_rank_asks_again": False,
    },
}
EXTRA_CONFIGS = [
    (f"{name}-{players}", Rules(players=players, **fields))
    for name, fields in EXTRA_SETUPS.items()
    for players in (2, 3, 5)
]


def games_for(rules: Rules, games: int) -> int:
    """Exact-card asks make long games (hundreds of asks): fewer of them."""
    return max(4, games // 6) if rules.ask_for == "card" else games


def check_config(rules: Rules, games: int, seed: int, observations: bool = True) -> int:
    """Both engines from the batch's own deals, then from positions in play."""
    count = games_for(rules, games)
    batch = VectorGame(rules, count, seed=seed)
    asks = play_both(batch, [batch.dealt_game(i) for i in range(count)], seed, 8, observations)
    positions = played_into(dealt_games(rules, count, seed), seed, most=60)
    copied = VectorGame.from_games(positions)
    copies = [copy.deepcopy(game) for game in positions]
    asks += play_both(copied, copies, seed + 1, 8, observations)
    return asks


@pytest.mark.parametrize(
    ("name", "rules"),
    ALL_CONFIGS[::9] + EXTRA_CONFIGS[::4],
    ids=[name for name, _ in ALL_CONFIGS[::9] + EXTRA_CONFIGS[::4]],
)
def test_vector_engine_equals_the_reference_quick_sample(name, rules):
    assert check_config(rules, games=12, seed=1) > 0


@pytest.mark.slow
@pytest.mark.parametrize(("name", "rules"), preset_configs(), ids=[n for n, _ in preset_configs()])
def test_vector_engine_equals_the_reference_under_every_preset(name, rules):
    check_config(rules, games=40, seed=2)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "rules"), house_rule_configs(), ids=[n for n, _ in house_rule_configs()]
)
def test_vector_engine_equals_the_reference_under_house_rules(name, rules):
    check_config(rules, games=24, seed=3)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "rules"), EXTRA_CONFIGS, ids=[n for n, _ in EXTRA_CONFIGS])
def test_vector_engine_equals_the_reference_in_rare_combinations(name, rules):
    check_config(rules, games=20, seed=4)


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 4, 6])
def test_thousands_of_table_games_agree_ask_by_ask(players):
    """Thousands of games of the default rules, hands, pool, turn and end compared after
    every ask (observations every ask in the games above)."""
    rules = Rules(players=players)
    batch = VectorGame(rules, 1000, seed=5)
    asks = play_both(batch, [batch.dealt_game(i) for i in range(1000)], 5, observations=False)
    assert asks > 1000 * 40


@pytest.mark.parametrize(
    ("rules", "hands", "pool_top", "first", "asks", "skips"),
    [
        # Seat 0 lays 7s it passed up as a sure hit: nothing is assumed of it after.
        (
            Rules.preset("pairs", players=3),
            ["7H 3H 2C", "7C 5C 9C", "3C 4C 6C"],
            ["8C", "10C", "7D"],
            1,
            [(2, "7"), (1, "3"), (1, "2")],
            [True, False, False],
        ),
        # Two pairs of 7s laid at once after a refill: the second rules nothing out.
        (
            Rules(players=2, decks=2, set_size=2, empty_hand_draw_count=5),
            ["7H", "7C 2C 3C"],
            ["7D", "7S", "7H", "7C", "9C"],
            0,
            [(1, "7")],
            [False, False],
        ),
    ],
    ids=["passed_up_then_laid", "second_set_at_once"],
)
def test_a_catch_drops_the_sure_hit_assumption_as_the_python_knowledge_does(
    rules, hands, pool_top, first, asks, skips
):
    game = position(hands, pool_top=pool_top, rules=rules, first_player=first)
    batch = VectorGame.from_games([copy.deepcopy(game)])
    reference = Reference([game], 8)
    for target, rank_name in asks:
        game.ask(target, rank(rank_name))
        batch.ask(np.array([target]), np.array([rank(rank_name)]))
        compare(batch, reference)
    assert batch.state.skips[0].tolist() == skips


@pytest.mark.parametrize(
    ("rules", "hands", "pool_top", "catches", "ask"),
    [
        # An own-turn asker whose hit leaves no one to ask waits for its next turn to draw.
        (Rules.preset("ocean", players=2), ["7C 7D", "7H 7S"], ["2C", "2D"], None, (1, "7")),
        # After a shown fish that leaves no ask, the turn passes left, not to the one asked.
        (
            Rules(players=3, after_miss="asked"),
            ["7C 7D 7H", "2C 2D 3C 3H", "2H 2S 3D 3S"],
            ["7S"],
            [[], ["4", "5", "6", "8", "9"], ["10", "J", "Q", "K", "A"]],
            (2, "7"),
        ),
    ],
    ids=["own_turn_hit_with_no_one_left", "after_miss_asked_shown_fish_out"],
)
def test_the_settled_turn_cases_play_as_in_the_python_engine(rules, hands, pool_top, catches, ask):
    game = position(hands, pool_top=pool_top, rules=rules, catches=catches)
    batch = VectorGame.from_games([copy.deepcopy(game)])
    reference = Reference([game], 8)
    target, rank_name = ask
    game.ask(target, rank(rank_name))
    batch.ask(np.array([target]), np.array([rank(rank_name)]))
    compare(batch, reference)


def test_the_comparison_catches_a_difference():
    """The harness is not vacuous: one changed bound, one card moved, are caught."""
    rules = Rules(players=3)
    games = dealt_games(rules, 3, seed=7)
    batch = VectorGame.from_games([copy.deepcopy(game) for game in games])
    reference = Reference(games, 8)
    compare(batch, reference)
    rank = int(np.flatnonzero(batch.state.counts[1, 2])[0])
    batch.state.least[1, 2, rank] += 1  # what the table knows, not the cards
    with pytest.raises(AssertionError):
        compare(batch, reference)
    batch = VectorGame.from_games([copy.deepcopy(game) for game in games])
    batch.state.pool[0, batch.state.pool_len[0] - 1] ^= 4  # the top card changes rank
    asks = np.array([game.legal_asks()[0] for game in games])
    with pytest.raises(AssertionError):
        for _ in range(30):  # the difference shows once that card is drawn
            live = [game for game in games if not game.is_over]
            if not live:
                break
            for g, game in enumerate(games):
                if not game.is_over:
                    asks[g] = game.legal_asks()[0]
                    game.ask(*map(int, asks[g]))
            batch.ask(asks[:, 0], asks[:, 1])
            compare(batch, reference, observations=False)


# ------------------------------------------------------------------------------ invariants


def check_invariants(batch: VectorGame) -> None:
    """test_properties' invariants, on the batch's arrays alone."""
    rules = batch.rules
    counts, caught = batch.hand_counts(), batch.caught_ranks()
    sizes, pool = batch.hand_sizes(), batch.pool_size
    state = batch.state
    copies = np.array([rules.copies_of(rank) for rank in range(rules.ranks)])
    in_pool = np.zeros((batch.num_games, rules.ranks), np.int64)
    for g in range(batch.num_games):
        ranks = state.pool[g, : pool[g]] // 4
        np.add.at(in_pool[g], ranks, 1)
    # Every card is in exactly one place, and no hand holds a complete set.
    total = counts.sum(axis=1) + in_pool + caught.sum(axis=1) * rules.set_size
    assert (total == copies).all()
    assert (counts.max(axis=2) < rules.set_size).all()
    assert (sizes == counts.sum(axis=2)).all()
    assert (batch.catch_counts() == caught.sum(axis=2)).all()
    # Out seats have no cards and the pool is empty.
    out = batch.out()
    assert (sizes[out] == 0).all() and (pool[out.any(axis=1)] == 0).all()
    live = ~batch.is_over
    masks = batch.legal_mask()
    current = batch.current_player
    assert (masks[live].any(axis=1)).all(), "a seat to move with no legal ask"
    assert (current[live] >= 0).all() and (current[~live] == -1).all()
    assert not masks[~live].any()
    assert (batch.winners()[live] == 0).all()
    over = ~live
    winners = batch.winners()[over]
    assert (winners.sum(axis=1) >= 1).all()
    if rules.game_end == "last_catch" and rules.winner != "first_empty":
        assert (batch.catch_counts()[over].sum(axis=1) == rules.total_sets).all()
        assert (pool[over] == 0).all() and (sizes[over] == 0).all()


@pytest.mark.parametrize(
    ("name", "rules"), ALL_CONFIGS[::3], ids=[name for name, _ in ALL_CONFIGS[::3]]
)
def test_vector_games_keep_every_invariant(name, rules):
    """Hundreds of games each, the compiled random CPU at every seat, checked after every
    round of asks."""
    count = 40 if rules.ask_for == "card" else 300
    batch = VectorGame(rules, count, seed=11)
    cpus = CompiledCPUs(batch, "random", seed=11)
    check_invariants(batch)
    rounds = 0
    while not batch.is_over.all():
        actions = cpus.actions()
        batch.step(np.where(actions >= 0, actions, 0))
        check_invariants(batch)
        rounds += 1
        assert rounds < 20_000, "games did not end"


# ------------------------------------------------------------------------------ seeding


def test_same_seed_same_games_whatever_the_batch_size():
    rules = Rules(players=4)
    small, large = VectorGame(rules, 8, seed=42), VectorGame(rules, 64, seed=42)
    assert np.array_equal(small.state.dealt, large.state.dealt[:8])
    assert np.array_equal(small.hand_counts(), large.hand_counts()[:8])
    other = VectorGame(rules, 8, seed=43)
    assert not np.array_equal(small.state.dealt, other.state.dealt)
    # Each game's next deal comes from its own generator: the same again.
    small.deal([3]), large.deal([3])
    assert np.array_equal(small.state.dealt[3], large.state.dealt[3])
    assert not np.array_equal(small.state.dealt[3], VectorGame(rules, 8, seed=42).state.dealt[3])


def test_a_dealt_game_is_the_python_game_of_its_deal():
    rules = Rules.preset("bicycle", players=3, first_player="random")
    batch = VectorGame(rules, 20, seed=9)
    firsts = {batch.dealt_game(g).current_player for g in range(20)}
    assert len(firsts) > 1  # the random first player is drawn per game
    play_both(batch, [batch.dealt_game(g) for g in range(20)], seed=9)


# ------------------------------------------------------------------------------ refusals


def test_illegal_asks_are_refused_naming_the_game_and_change_nothing():
    batch = VectorGame(Rules(players=3), 4, seed=1)
    before = [array.copy() for array in batch.state]
    current = batch.current_player
    legal = [batch.dealt_game(g).legal_asks()[0] for g in range(4)]
    targets = np.array([ask[0] for ask in legal])
    wanted = np.array([ask[1] for ask in legal])
    cases = [
        (2, current[2], "cannot ask itself"),
        (1, 7, "not a seat: 7"),
    ]
    for game, target, words in cases:
        bad = targets.copy()
        bad[game] = target
        with pytest.raises(IllegalAsk, match=f"game {game}: .*{words}"):
            batch.ask(bad, wanted)
    held = batch.hand_counts()[0, current[0]]
    missing = int(np.flatnonzero(held == 0)[0])
    bad_wanted = wanted.copy()
    bad_wanted[0] = missing
    with pytest.raises(IllegalAsk, match=r"game 0: seat .* holds no card of rank"):
        batch.ask(targets, bad_wanted)
    for array, kept in zip(batch.state, before, strict=True):
        assert np.array_equal(array, kept)
    with pytest.raises(ValueError, match="targets: got an array of shape"):
        batch.ask(targets[:2], wanted[:2])
    with pytest.raises(ValueError, match=r"targets: .*dtype float64"):
        batch.ask(targets.astype(float), wanted)
    batch.ask(targets, wanted)  # the legal asks go through


def test_finished_games_ignore_their_entries():
    games = played_into(dealt_games(Rules(players=2), 2, seed=3), seed=3, most=10_000)
    assert all(game.is_over for game in games)
    live = Game(Rules(players=2), seed=99)
    batch = VectorGame.from_games([*games, live])
    target, wanted = live.legal_asks()[0]
    before = batch.hand_counts()[:2]
    batch.ask(np.array([0, 0, target]), np.array([0, 0, wanted]))  # nonsense where over
    assert np.array_equal(batch.hand_counts()[:2], before)
    assert batch.num_asks[2] == 1


def test_what_the_batch_does_not_play_is_refused_by_name():
    with pytest.raises(ValueError, match="match_target: got 20; the vector engine plays single"):
        VectorGame(Rules(match_target=20), 2)
    with pytest.raises(ValueError, match="num_games: got 0; allowed: an integer >= 1"):
        VectorGame(Rules(), 0)
    with pytest.raises(ValueError, match=r"games\[1\]: got Match"):
        VectorGame.from_games([Game(Rules(), seed=1), Match(Rules(), seed=1)])
    with pytest.raises(ValueError, match=r"games\[1\]: its rules"):
        VectorGame.from_games([Game(Rules(), seed=1), Game(Rules(players=3), seed=1)])
    with pytest.raises(ValueError, match="history: got -1"):
        VectorGame(Rules(), 2, history=-1)
    with pytest.raises(ValueError, match="seats: allowed: seats from 0 to 3"):
        VectorGame(Rules(), 2).observe(4)


def test_memory_per_game_is_small():
    batch = VectorGame(Rules(), 1000, seed=0)
    assert batch.memory_bytes / 1000 < 4096


# ------------------------------------------------------------------------------ rules only


@pytest.mark.parametrize(
    ("name", "rules"),
    ALL_CONFIGS[::9] + EXTRA_CONFIGS[::4],
    ids=[name for name, _ in ALL_CONFIGS[::9] + EXTRA_CONFIGS[::4]],
)
def test_a_rules_only_batch_plays_the_reference_games(name, rules):
    """``knowledge=False`` keeps no public knowledge; the game itself is the same."""
    count = games_for(rules, 12)
    batch = VectorGame(rules, count, seed=6, knowledge=False)
    play_both(batch, [batch.dealt_game(i) for i in range(count)], 6, observations=False)
    positions = played_into(dealt_games(rules, count, 6), 6, most=60)
    copied = VectorGame.from_games(positions, knowledge=False)
    play_both(copied, [copy.deepcopy(game) for game in positions], 7, observations=False)


def test_random_cpus_play_the_same_games_with_or_without_knowledge():
    rules = Rules(players=4)
    played = []
    for knowledge in (True, False):
        batch = VectorGame(rules, 64, seed=8, knowledge=knowledge)
        asks = CompiledCPUs(batch, "random", seed=8).play(by_seat=True)
        played.append((asks, batch.hand_counts(), batch.catch_counts(), batch.winners()))
    for kept, rules_only in zip(*played, strict=True):
        assert np.array_equal(kept, rules_only)
    assert played[0][0].sum() > 64 * 40


@pytest.mark.parametrize(
    ("name", "rules"), ALL_CONFIGS[::5], ids=[name for name, _ in ALL_CONFIGS[::5]]
)
def test_random_play_in_one_call_plays_the_games_of_step_by_step_actions(name, rules):
    """``play`` takes each random ask apart without an action number; the games must be
    those of ``actions`` and ``step``, one ask at a time."""
    finals = []
    for one_call in (True, False):
        batch = VectorGame(rules, 16, seed=3, knowledge=False)
        cpus = CompiledCPUs(batch, "random", seed=3)
        if one_call:
            cpus.play()
        else:
            while not batch.state.over.all():
                actions = cpus.actions()
                batch.step(np.where(actions >= 0, actions, 0))
        finals.append([array.copy() for array in batch.state])
    for one_call, stepped in zip(*finals, strict=True):
        assert np.array_equal(one_call, stepped)
    assert (finals[0][list(batch.state._fields).index("num_asks")] > 0).all()


def test_a_rules_only_batch_refuses_what_needs_the_public_knowledge():
    batch = VectorGame(Rules(players=3), 4, seed=1, knowledge=False)
    before = [array.copy() for array in batch.state]
    with pytest.raises(ValueError, match="observe: this batch was made with knowledge=False"):
        batch.observe(0)
    with pytest.raises(ValueError, match="observe: this batch was made with knowledge=False"):
        batch.observe_game(0, 0)
    with pytest.raises(ValueError, match="levels: got 'hard' for a batch made with knowledge"):
        CompiledCPUs(batch, "hard")
    with pytest.raises(ValueError, match="log_size: got 100 with knowledge=False"):
        VectorGame(Rules(), 2, log_size=100, knowledge=False)
    with pytest.raises(ValueError, match="knowledge: got 'no'; allowed: True or False"):
        VectorGame(Rules(), 2, knowledge="no")
    for array, kept in zip(batch.state, before, strict=True):
        assert np.array_equal(array, kept)


# ------------------------------------------------------------------------------ subsets


def test_observations_and_leaders_of_some_games_are_those_rows():
    rules = Rules(players=3)
    games = played_into(dealt_games(rules, 12, 4), 4, most=40)
    batch = VectorGame.from_games(games)
    picked = [7, 2, 2, 11]
    seats = np.array([0, 2, 1, 1])
    every_seat = [batch.observe(seat) for seat in range(3)]
    rows = batch.observe(seats, games=picked)
    assert rows.shape == (4, batch.layout.size)
    for row, game, seat in zip(rows, picked, seats, strict=True):
        assert row.tobytes() == every_seat[seat][game].tobytes()
    assert batch.observe(1, games=[]).shape == (0, batch.layout.size)
    leaders = batch.leaders(picked)
    for row, game in zip(leaders, picked, strict=True):
        assert list(np.flatnonzero(row)) == list(games[game].leaders())
    assert np.array_equal(batch.leaders()[picked], leaders)
    with pytest.raises(ValueError, match="games: indices must be 0 to 11"):
        batch.observe(0, games=[12])
    with pytest.raises(ValueError, match="games: got"):
        batch.leaders([[1, 2]])


@pytest.mark.parametrize(
    ("name", "rules", "history"),
    [
        ("table-4", Rules(players=4), 8),
        ("table-2, no history", Rules(players=2), 0),
        ("card_jokers-3", dict(EXTRA_CONFIGS)["card_pairs_jokers_held_refill-3"], 3),
    ],
)
def test_the_observation_kernel_writes_every_value_whatever_the_row_held(name, rules, history):
    # The batch hands the kernel rows fresh from np.empty: a value the kernel skipped would
    # be whatever that memory held. Rows of NaN must come out as rows of zeros do.
    games = played_into(dealt_games(rules, 16, 9), 9, most=150)  # some finished
    batch = VectorGame.from_games(games, history=history)
    indices = np.arange(16)
    for seat in range(rules.players):
        seats = np.full(16, seat)
        rows = {}
        for start in (0.0, np.nan):
            rows[start] = np.full((16, batch.layout.size), start, np.float32)
            views.observe(
                batch.kernel_state,
                batch.kernel_constants,
                batch._at,
                batch._gather,
                indices,
                seats,
                rows[start],
            )
        assert not np.isnan(rows[np.nan]).any(), name
        assert rows[np.nan].tobytes() == rows[0.0].tobytes()
        assert rows[0.0].tobytes() == batch.observe(seat).tobytes()
        for game in range(16):
            one = batch.observe_game(game, seat)
            assert one.tobytes() == rows[0.0][game].tobytes()
    # The masks too: one game's row is that row of the batch's, finished games all False.
    masks = batch.legal_mask()
    assert masks.dtype == np.bool_ and masks.shape == (16, batch.constants.actions)
    assert batch.is_over.any() and not masks[batch.is_over].any()
    for game in range(16):
        assert np.array_equal(batch.legal_mask_of(game), masks[game])


# ``compile_rules=True``: the same kernels compiled with the rules as constants. Each rule
# set compiles them anew (about a minute), so a few set-ups stand for the rest: the
# default table with everything observed, exact-card asks with jokers, pairs and refills.
COMPILED_CONFIGS = [
    ("table-4", Rules(players=4), True),
    ("card_jokers-3", dict(EXTRA_CONFIGS)["card_pairs_jokers_held_refill-3"], False),
]


@pytest.mark.parametrize(
    ("name", "rules", "knowledge"), COMPILED_CONFIGS, ids=[n for n, _, _ in COMPILED_CONFIGS]
)
def test_rules_compiled_in_play_the_reference_games(name, rules, knowledge):
    count = games_for(rules, 12)
    batch = VectorGame(rules, count, seed=9, knowledge=knowledge, compile_rules=True)
    assert type(batch.kernel_constants).__name__ == "CompiledConstants"
    dealt = [batch.dealt_game(i) for i in range(count)]
    assert play_both(batch, dealt, 9, observations=knowledge) > 0
    positions = played_into(dealt_games(rules, count, 9), 9, most=60)
    copied = VectorGame.from_games(positions, knowledge=knowledge, compile_rules=True)
    play_both(copied, [copy.deepcopy(game) for game in positions], 10, observations=knowledge)


def test_random_cpus_play_the_same_games_with_the_rules_compiled_in():
    finals = []
    for compile_rules in (False, True):
        batch = VectorGame(Rules(players=4), 64, 11, knowledge=False, compile_rules=compile_rules)
        CompiledCPUs(batch, "random", seed=11).play()
        finals.append([array.copy() for array in batch.state])
    for numbers, compiled in zip(*finals, strict=True):
        assert np.array_equal(numbers, compiled)
    assert (finals[1][list(batch.state._fields).index("num_asks")] > 40).all()


def test_compile_rules_must_be_true_or_false():
    with pytest.raises(ValueError, match=r"compile_rules: got 'yes'; allowed: True or False"):
        VectorGame(Rules(), 2, compile_rules="yes")


def test_an_array_view_shows_its_own_cards_with_exact_card_asks_and_refuses_without_suits():
    """Players the batch plays in Python (saved agents, callables) get a ``PlayerView``: with
    exact-card asks its own cards are the Python game's; under rank asks the batch keeps
    counts, not suits, so ``own_cards`` says so instead of being empty."""
    from gofish_env.vector.players import ArrayView

    games = played_into(dealt_games(Rules.preset("authors", players=3), 4, seed=2), 3, most=12)
    batch = VectorGame.from_games([copy.deepcopy(game) for game in games], log_size=64)
    view = ArrayView(batch)
    for g, game in enumerate(games):
        tracker = KnowledgeTracker(game)
        for seat in range(3):
            seen, reference = view.view(g, seat), tracker.view(seat)
            assert seen.own_cards == game.hand(seat)
            # and the single cards it proves, as the Python game's view does
            assert (seen.card_holds == reference.card_holds).all()
            assert (seen.card_lacks == reference.card_lacks).all()
    view = ArrayView(VectorGame.from_games(dealt_games(Rules(players=3), 1, seed=2)))
    with pytest.raises(ValueError, match="not their suits; read own_counts"):
        _ = view.view(0, 1).own_cards


def test_the_state_kernels_are_handed_keeps_its_arrays_alive_after_the_batch_is_gone():
    import gc
    import weakref

    from gofish_env.vector import engine

    batch = VectorGame(Rules(players=2), 4, seed=0)
    cpus = CompiledCPUs(batch, "easy", seed=0)
    kernel_state, constants, cpu_state = batch.kernel_state, batch.constants, cpus.kernel_state
    counts, cpu_arrays = weakref.ref(batch.state.counts), weakref.ref(cpus.state[0])
    dealt = batch.state.counts.copy()
    del batch, cpus
    gc.collect()
    # The structs borrow the arrays (numba counts no reference): their holder must keep them.
    assert counts() is not None and cpu_arrays() is not None
    engine.deal_games(kernel_state, constants, np.arange(4, dtype=np.int64))  # a new deal
    assert counts().sum() == dealt.sum() and not np.array_equal(counts(), dealt)
    assert cpu_state.arrays[0] is cpu_arrays()


def test_a_game_gives_its_cards_in_arrival_order_and_its_pool_in_order():
    """What ``from_games`` copies, read through ``Game``'s accessors: each rank's cards in
    the order they came to the hand (a catch lays the oldest), the pool top first."""

    def index(text: str) -> int:
        card_rank, suit = parse_card(text)
        return card_rank * 4 + suit

    game = position(["7S 2C", "7H 7D 3C"], pool_top=["4H", "5H"])
    game.ask(1, "7")  # seat 0 takes seat 1's sevens after its own
    arrived = [index(card) for card in ["2C", "7S"]]
    assert game.hand_by_arrival(0)[:2] == arrived
    assert sorted(game.hand_by_arrival(0)[2:]) == sorted([index("7H"), index("7D")])
    assert game.pool_order()[:2] == [index("4H"), index("5H")]
    assert sorted(game.pool_order()) == game.pool_indices()
    assert len(game.pool_order()) == game.pool_size
