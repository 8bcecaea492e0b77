"""Every integer setting takes NumPy's integers (what ``np.arange`` and a generator's
``integers`` give) as it takes Python's, and keeps a Python ``int``; a seed that is no
integer is refused by name."""

import dataclasses
import json

import numpy as np
import pytest

import gofish_env
from gofish_baselines.ladder import run_ladder
from gofish_baselines.tournament import run_tournament
from gofish_env import Game, Match, Rules
from gofish_env.cpus import CPU_LEVELS, make_cpu
from gofish_env.evaluation import Measurement, make_entrants, play_deals
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.master import MasterCPU
from gofish_env.worlds import WorldSampler
from gofish_training.evaluate import evaluate

RULES = dict(players=3, deal=6, set_size=2, first_player=1, empty_hand_draw_count=2)


def test_rules_of_numpy_integers_are_the_rules_of_python_ones_and_keep_python_ints():
    rules = Rules(**{name: np.int64(value) for name, value in RULES.items()})
    assert rules == Rules(**RULES)
    for field in dataclasses.fields(rules):
        value = getattr(rules, field.name)
        assert not isinstance(value, np.generic), field.name
    assert json.loads(json.dumps(dataclasses.asdict(rules)))["deal"] == 6
    assert Rules.preset("quick", players=np.uint8(2)) == Rules.preset("quick", players=2)


@pytest.mark.parametrize("value", [np.float64(4.0), np.bool_(True), True])
def test_a_numpy_float_or_a_bool_is_still_no_player_count(value):
    with pytest.raises(ValueError, match="players: got"):
        Rules(players=value)


def test_a_game_and_a_match_dealt_from_a_numpy_seed_are_those_of_the_python_seed():
    rules = Rules(players=3)
    numpy_game, python_game = Game(rules, np.int64(17)), Game(rules, 17)
    assert [numpy_game.hand(seat) for seat in range(3)] == [
        python_game.hand(seat) for seat in range(3)
    ]
    assert Match(rules, np.int64(17)).hand(0) == Match(rules, 17).hand(0)


@pytest.mark.parametrize("seed", [1.5, "3", True, [3]])
def test_a_seed_that_is_no_integer_is_refused_by_name(seed):
    for make in (lambda: Game(Rules(), seed), lambda: Match(Rules(), seed)):
        with pytest.raises(ValueError, match=r"seed: got .*; allowed: an integer"):
            make()
    for level in CPU_LEVELS:
        with pytest.raises(ValueError, match=r"seed: got .*; allowed: an integer"):
            make_cpu(level, seed)


def _game_of(cpus: list, seed: int, asks: int = 60) -> list:
    game = Game(Rules(players=len(cpus)), seed)
    tracker = KnowledgeTracker(game)
    for _ in range(asks):
        if game.is_over:
            break
        seat = game.current_player
        target, wanted = cpus[seat].choose(tracker.view(seat))
        game.ask(target, wanted)
    return game.events


@pytest.mark.parametrize("level", [level for level in CPU_LEVELS if level != "master"])
def test_a_cpu_seeded_with_a_numpy_integer_plays_as_seeded_with_the_python_one(level):
    numpy_seeded = [make_cpu(level, np.int64(seat + 5)) for seat in range(3)]
    python_seeded = [make_cpu(level, seat + 5) for seat in range(3)]
    assert _game_of(numpy_seeded, 4) == _game_of(python_seeded, 4)
    for cpu in numpy_seeded:
        cpu.reset(np.int32(9))
    for cpu in python_seeded:
        cpu.reset(9)
    assert _game_of(numpy_seeded, 8) == _game_of(python_seeded, 8)


def test_masters_numpy_settings_are_its_python_settings():
    numpy_master = MasterCPU(
        np.int64(1),
        simulations=np.int64(64),
        candidates=np.int32(3),
        margin=np.float32(1.5),
        pool_limit=np.int64(10),
        most_held=np.float32(2.0),
    )
    python_master = MasterCPU(
        1, simulations=64, candidates=3, margin=1.5, pool_limit=10, most_held=2.0
    )
    for name in ("simulations", "candidates", "margin", "pool_limit", "most_held"):
        assert getattr(numpy_master, name) == getattr(python_master, name), name
        assert type(getattr(numpy_master, name)) is type(getattr(python_master, name)), name


def test_the_env_takes_numpy_integers_and_observes_as_with_python_ones():
    def observations(env, seed):
        env.reset(seed=seed)
        seen = []
        for _ in range(20):
            observation, _, terminated, truncated, _ = env.last()
            seen.append(observation["observation"].copy())
            if terminated or truncated:
                break
            env.step(int(np.flatnonzero(observation["action_mask"])[0]))
        return seen

    numpy_env = gofish_env.env(
        players=np.int64(3), history=np.int64(4), max_asks=np.int64(50), render_view=np.int8(1)
    )
    python_env = gofish_env.env(players=3, history=4, max_asks=50, render_view=1)
    assert (numpy_env.unwrapped.max_asks, numpy_env.unwrapped.render_view) == (50, 1)
    assert type(numpy_env.unwrapped.layout.history) is int
    for numpy_seen, python_seen in zip(
        observations(numpy_env, np.int64(3)), observations(python_env, 3), strict=True
    ):
        np.testing.assert_array_equal(numpy_seen, python_seen)


def test_the_sampler_takes_numpy_integers_for_its_seed_steps_and_count():
    game = Game(Rules(players=2), 3)
    for _ in range(4):
        game.ask(*game.legal_asks()[0])
    view = KnowledgeTracker(game).view(0)
    numpy_worlds = WorldSampler(view, np.int64(2), steps=np.int64(3)).sample(np.int64(4))
    python_worlds = WorldSampler(view, 2, steps=3).sample(4)
    np.testing.assert_array_equal(numpy_worlds.hands, python_worlds.hands)


def test_the_measuring_functions_take_numpy_counts_and_seeds():
    rules = Rules(players=2)
    entrants = make_entrants(["easy", "random"], rules)
    lineups = [(0, 1), (1, 0)]
    numpy_measurement = Measurement(entrants, rules, np.int64(3), lineups, max_asks=np.int64(200))
    assert (type(numpy_measurement.seed), type(numpy_measurement.max_asks)) == (int, int)
    python_measurement = Measurement(entrants, rules, 3, lineups, max_asks=200)
    assert play_deals(numpy_measurement, 2) == play_deals(python_measurement, 2)

    numpy_run = run_tournament(["easy", "random"], np.int64(2), np.int64(4), seed=np.int64(1))
    python_run = run_tournament(["easy", "random"], 2, 4, seed=1)
    assert json.dumps(numpy_run.summary, default=str) == json.dumps(python_run.summary, default=str)

    numpy_ladder = run_ladder(np.int64(2), np.int64(1), np.arange(2, 4), ("random", "easy"))
    python_ladder = run_ladder(2, 1, (2, 3), ("random", "easy"))
    assert [(pair.players, pair.score) for pair in numpy_ladder] == [
        (pair.players, pair.score) for pair in python_ladder
    ]
    assert all(type(pair.players) is int for pair in numpy_ladder)

    numpy_results = evaluate("easy", ["random"], rules, np.int64(2), np.int64(5))
    python_results = evaluate("easy", ["random"], rules, 2, 5)
    assert [result.win_rate for result in numpy_results] == [
        result.win_rate for result in python_results
    ]
