"""The compiled CPUs (``gofish_env.vector.cpus``) against the Python levels, and the
no-leak check for them.

A Python CPU given a ``random.Random`` that yields the compiled CPU's stream
(``SplitMixRandom``) must make the very same choice at every decision, whole games long,
under every rule set: the compiled levels are the Python levels, not look-alikes. And, as
tests/test_no_leak.py does for the Python levels, a compiled CPU must decide the same in
every world its seat cannot tell apart from the real one.
"""

from __future__ import annotations

import copy
import random
import subprocess
import sys

import numba
import numpy as np
import pytest
from test_no_leak import CASES, alternative_worlds, make_scenario
from test_properties import ALL_CONFIGS
from vector_helpers import Reference, SplitMixRandom, compare

from gofish_env import Game, Rules
from gofish_env.actions import ActionCodec
from gofish_env.cpus import make_cpu
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.vector import CompiledCPUs, VectorGame
from gofish_env.vector import cpus as vector_cpus
from gofish_env.vector.cpus import COMPILED_LEVELS

LINEUPS = [
    ["random"],
    ["easy"],
    ["normal"],
    ["hard"],
    ["expert"],
    ["easy", "normal", "hard", "random"],
    ["expert", "hard", "random", "expert"],
]


def play_side_by_side(rules: Rules, lineup: list[str], count: int, seed: int) -> int:
    """``count`` games with the lineup's levels around the table in both engines; every
    choice compared. Returns the number of decisions."""
    games = [Game(rules, seed=seed * 1000 + g) for g in range(count)]
    batch = VectorGame.from_games([copy.deepcopy(game) for game in games])
    players = rules.players
    levels = [[lineup[(g + s) % len(lineup)] for s in range(players)] for g in range(count)]
    cpus = CompiledCPUs(batch, levels, seed=seed)
    python = []
    for g in range(count):
        row = []
        for seat in range(players):
            cpu = make_cpu(levels[g][seat])
            cpu.rng = SplitMixRandom(int(cpus.state.rng[g * players + seat]))
            row.append(cpu)
        python.append(row)
    trackers = [KnowledgeTracker(game) for game in games]
    codec = ActionCodec(rules)
    decisions = 0
    while not all(game.is_over for game in games):
        actions = cpus.actions()
        for g, game in enumerate(games):
            if game.is_over:
                assert actions[g] == -1
                continue
            seat = game.current_player
            choice = python[g][seat].choose(trackers[g].view(seat))
            assert actions[g] == codec.to_action(seat, *choice), (
                f"game {g}, ask {game.num_asks}: compiled {levels[g][seat]} chose "
                f"{codec.to_ask(seat, int(actions[g]))}, the Python level {choice}"
            )
            game.ask(*choice)
            decisions += 1
        batch.step(np.where(actions >= 0, actions, 0))
    compare(batch, Reference(games, 8), observations=False)
    return decisions


@pytest.mark.parametrize(
    ("name", "rules"), ALL_CONFIGS[::11], ids=[name for name, _ in ALL_CONFIGS[::11]]
)
def test_compiled_cpus_choose_what_the_python_levels_choose_quick_sample(name, rules):
    count = 3 if rules.ask_for == "card" else 8
    for lineup in LINEUPS:
        assert play_side_by_side(rules, lineup, count, seed=1) > 0


@pytest.mark.slow
@pytest.mark.parametrize(("name", "rules"), ALL_CONFIGS, ids=[name for name, _ in ALL_CONFIGS])
def test_compiled_cpus_choose_what_the_python_levels_choose(name, rules):
    count = 4 if rules.ask_for == "card" else 16
    for lineup in LINEUPS:
        play_side_by_side(rules, lineup, count, seed=2)


def test_the_side_by_side_check_catches_another_choice():
    """Another stream gives other choices: the check compares real decisions."""
    rules = Rules(players=3)
    game = Game(rules, seed=4)
    batch = VectorGame.from_games([copy.deepcopy(game)])
    cpus = CompiledCPUs(batch, "random", seed=4)
    choices = []
    for state in (int(cpus.state.rng[game.current_player]), 12345):
        cpu = make_cpu("random")
        cpu.rng = SplitMixRandom(state)
        choices.append(
            [cpu.choose(KnowledgeTracker(game).view(game.current_player)) for _ in range(6)]
        )
    expected = ActionCodec(rules).to_action(game.current_player, *choices[0][0])
    assert cpus.actions()[0] == expected
    assert choices[0] != choices[1]


def test_levels_are_refused_by_name():
    batch = VectorGame(Rules(), 2)
    with pytest.raises(
        ValueError, match="levels: got 'master'; allowed: random, easy, normal, hard, expert"
    ):
        CompiledCPUs(batch, "master")


def test_levels_are_given_once_per_batch_per_seat_or_per_game_and_seat():
    batch = VectorGame(Rules(players=3), 2)
    codes = vector_cpus.LEVEL_CODES
    players = CompiledCPUs(batch, "hard")
    assert (players.state.level == codes["hard"]).all()
    players.set_levels(["easy", None, "expert"])
    expected_row = [codes["easy"], vector_cpus.NOT_COMPILED, codes["expert"]]
    assert players.state.level.tolist() == [expected_row, expected_row]
    players.set_levels([["random", "normal", "hard"], ["expert", "easy", None]])
    assert players.state.level.tolist() == [
        [codes["random"], codes["normal"], codes["hard"]],
        [codes["expert"], codes["easy"], vector_cpus.NOT_COMPILED],
    ]


def test_levels_of_the_wrong_shape_or_name_are_refused_and_change_nothing():
    batch = VectorGame(Rules(players=3), 2)
    players = CompiledCPUs(batch, "hard")
    before = players.state.level.copy()
    with pytest.raises(ValueError, match=r"levels: got shape \(2,\); allowed: one level, one per"):
        players.set_levels(["easy", "hard"])
    with pytest.raises(ValueError, match="levels: got 'master'"):
        players.set_levels(["easy", "master", "hard"])
    assert (players.state.level == before).all()


def test_reset_refuses_games_outside_the_batch_and_seeds_not_one_per_game():
    batch = VectorGame(Rules(players=4), 4, seed=7)
    players = CompiledCPUs(batch, "random", seed=1)
    before = players.state.rng.copy()
    for games, seeds in (([4], [1]), ([-1], [1]), ([1000000], None), ([0.5], [1])):
        with pytest.raises(ValueError, match="games: "):
            players.reset(games, seeds)
    for games, seeds in (([0, 1, 2], [5]), ([0], [5, 6]), ([0], [1.5]), ([0, 1], [[1, 2]])):
        with pytest.raises(ValueError, match=r"seeds: got .*; allowed: one integer per game"):
            players.reset(games, seeds)
    assert np.array_equal(players.state.rng, before)
    players.reset([1, 3], [5, 6])  # what is in range is reseeded, the others kept
    assert np.array_equal(players.state.rng[:4], before[:4])
    assert not np.array_equal(players.state.rng[4:8], before[4:8])


def test_an_index_far_outside_the_batch_is_refused_not_written(tmp_path):
    # The kernels do not check indices: before the check, this one killed the process.
    script = (
        "from gofish_env import Rules\n"
        "from gofish_env.vector import CompiledCPUs, VectorGame\n"
        "players = CompiledCPUs(VectorGame(Rules(players=4), 4, seed=7), 'random', seed=1)\n"
        "try:\n"
        "    players.reset([1000000], [1])\n"
        "except ValueError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "games: indices must be 0 to 3" in done.stdout


def test_one_game_entry_points_refuse_indices_outside_the_batch():
    batch = VectorGame(Rules(players=3), 2, seed=1)
    for call in (
        lambda: batch.legal_mask_of(2),
        lambda: batch.legal_mask_of(-1),
        lambda: batch.observe_game(5, 0),
        lambda: batch.dealt_game(-1),
    ):
        with pytest.raises(ValueError, match="games: indices must be 0 to 1"):
            call()
    with pytest.raises(ValueError, match="seats: allowed: seats from 0 to 2"):
        batch.observe_game(0, 3)
    with pytest.raises(ValueError, match="game: got '1'"):
        batch.legal_mask_of("1")
    assert batch.legal_mask_of(np.int64(1)).shape == (batch.constants.actions,)


def test_a_seed_of_none_draws_one_and_other_seeds_are_refused():
    batch = VectorGame(Rules(players=3), 2, seed=1)
    drawn = [CompiledCPUs(batch, "random", seed=None).state.rng.copy() for _ in range(2)]
    assert not np.array_equal(drawn[0], drawn[1])
    for seed in ("1", 1.5, True, -1, 2**64):
        with pytest.raises(
            ValueError, match=r"seed: got .*; allowed: an integer from 0 to 2\*\*64 - 1"
        ):
            CompiledCPUs(batch, "random", seed=seed)


# ------------------------------------------------------------------------------ no leak


def compiled_decisions(worlds, asks, viewer: int, level: str) -> list[list[int]]:
    """The compiled CPU's choice at the viewer's seat at every step where it is to move, in
    each world (one game per world, the same asks applied to all, the same seed)."""
    batch = VectorGame.from_games([world.game() for world in worlds])
    levels = [[level if seat == viewer else None for seat in range(batch.players)]] * len(worlds)
    cpus = CompiledCPUs(batch, levels, seed=77)
    players = batch.players
    cpus.state.rng[viewer::players] = cpus.state.rng[viewer]  # one stream in every world
    codec = ActionCodec(worlds[0].rules)
    decisions: list[list[int]] = [[] for _ in worlds]

    def decide() -> None:
        actions = cpus.actions()
        for g in range(len(worlds)):
            if batch.state.current[g] == viewer:
                decisions[g].append(int(actions[g]))

    decide()
    for target, wanted in asks:
        batch.ask(np.full(len(worlds), target), np.full(len(worlds), wanted))
        decide()
    assert all(codec.size for _ in decisions)
    return decisions


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rules", "seeds", "max_asks"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_compiled_cpus_ignore_hidden_cards(rules, seeds, max_asks):
    compared = 0
    for seed in seeds:
        scenario = make_scenario(rules, seed, max_asks)
        for viewer in range(rules.players):
            rng = random.Random(seed * 31 + viewer)
            worlds, _ = alternative_worlds(scenario, viewer, rng, tries=600, keep=6)
            if not worlds:
                continue
            for level in COMPILED_LEVELS:
                decisions = compiled_decisions(
                    [scenario.world, *worlds], scenario.asks, viewer, level
                )
                for other in decisions[1:]:
                    assert other == decisions[0], f"{level} at seat {viewer} read hidden cards"
                compared += len(decisions[0]) * len(worlds)
    assert compared > 0


def test_a_compiled_cpu_that_peeks_would_be_caught():
    """The check can fail: a rule that reads the true hands (whoever truly holds the most
    of a rank) decides differently in worlds the seat cannot tell apart."""
    rules = Rules(players=3)
    scenario = make_scenario(rules, seed=41, max_asks=40)
    worlds, _ = alternative_worlds(scenario, 0, random.Random(41), tries=1500, keep=6)
    assert worlds
    batch = VectorGame.from_games([world.game() for world in [scenario.world, *worlds]])
    codec = ActionCodec(rules)
    peeks: list[list[int]] = [[] for _ in range(batch.num_games)]
    for target, wanted in scenario.asks:
        masks, counts = batch.legal_mask(), batch.hand_counts()
        for g in range(batch.num_games):
            if batch.state.current[g] == 0:
                legal = np.flatnonzero(masks[g])
                held = [counts[g, codec.to_ask(0, int(a))[0], a % 13] for a in legal]
                peeks[g].append(int(legal[int(np.argmax(held))]))
        batch.ask(np.full(batch.num_games, target), np.full(batch.num_games, wanted))
    assert any(other != peeks[0] for other in peeks[1:])
    decisions = compiled_decisions([scenario.world, *worlds], scenario.asks, 0, "hard")
    assert all(other == decisions[0] for other in decisions[1:])


def test_the_compiled_expert_adds_a_row_in_numpys_order():
    """``ExpertCPU.spread`` sums rows with numpy (pairwise from 8 values on); the compiled
    fit must add in that order for its hit chances to equal the Python ones to the bit."""
    import numba

    from gofish_env.vector.cpus import _row_sum

    row_sum = numba.njit(lambda values, count: _row_sum(values, count))
    rng = np.random.default_rng(3)
    for count in range(1, 41):
        for _ in range(50):
            values = rng.random(count) * 10 ** rng.uniform(-3, 3, count)
            assert row_sum(values, count) == values.sum(), count
    # In another order the sums differ (the check can fail): a plain running sum.
    values = rng.random((2000, 13))
    running = np.cumsum(values, axis=1)[:, -1]
    assert (running != values.sum(axis=1)).any()


def compiled_hit_chances(view) -> np.ndarray:
    """``vector.cpus.expert_fit`` and ``expert_chance`` at every seat and rank of ``view``,
    from the bounds ``ExpertCPU.scores`` reads."""
    low = np.asarray(view.least_if_sure_hits, np.int64)
    high = np.asarray(view.most_if_sure_hits, np.int64)
    players, ranks = low.shape
    unseen = np.asarray(view.unseen, np.int64)
    fill, caps = np.empty((players + 1, ranks)), np.empty((players + 1, ranks))
    free, factors, rows = np.empty(ranks), np.empty(ranks), np.empty(players + 1)
    sizes = np.asarray(view.hand_sizes, np.int64)
    args = (sizes, view.pool_size, unseen, view.seat, low, high, fill, free, caps, rows, factors)
    vector_cpus.expert_fit(*args)
    chance = np.empty((players, ranks))
    for target in range(players):
        for rank in range(ranks):
            chance[target, rank] = chance_at(low, high, fill, free, view.seat, target, rank)
    return chance


@numba.njit(cache=True)
def chance_at(low, high, fill, free, seat, target, rank):
    return vector_cpus.expert_chance(low, high, fill, free, seat, target, rank)


@pytest.mark.parametrize("players", [2, 4, 6])
def test_the_compiled_hit_chances_equal_the_python_ones_but_for_a_powers_last_bit(players):
    """The compiled fit (its columns added row by row, along memory) gives
    ``ExpertCPU.hit_chances`` at every decision of whole games, but for the last bit of a
    power: NumPy's vectorized ``**`` and the compiled code's ``pow`` (libm's) may differ by
    one unit in the last place, depending on the CPU (on one without AVX2, 58 of 1,000
    random powers did). A chance is ``1 - p`` with ``p <= 1``, so that is 2 ** -52 at most.
    The side-by-side tests compare choices, which a chance off in its last bit would seldom
    change."""
    from gofish_env.evaluation.positions import played_decisions

    expert = make_cpu("expert", 0)
    compared = 0
    for seed in range(3):
        cpus = [make_cpu("expert", seed * 10 + seat) for seat in range(players)]
        for _, view, _ in played_decisions(Rules(players=players), seed, cpus):
            low, high = view.least_if_sure_hits, view.most_if_sure_hits
            python = expert.hit_chances(view, low, high)
            compiled = compiled_hit_chances(view)
            np.testing.assert_allclose(compiled, python, rtol=0, atol=np.finfo(float).eps)
            compared += 1
    assert compared > 100
