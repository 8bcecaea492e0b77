"""Reward schemes (``gofish_env.rewards``): what each named scheme and each dict of weights
pays, on exact positions and over whole games, zero-sum schemes, and the refusal of bad
names and weights. When and to whom the AEC env pays is in tests/test_aec_env.py, the
learner's sum over the opponents' turns in tests/test_gym_env.py.

Positions come from ``helpers.position``. Rank indices: 7 -> 5, K -> 11.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import TABLE_POINTS, position, preset, random_action, rank, rewards_after

import gofish_env
from gofish_env import Game, Rules
from gofish_env.events import Catch, GameOver, Hit
from gofish_env.rewards import COMPONENTS, NAMED_SCHEMES, RewardCalculator, RewardScheme

SEVEN, KING = rank("7"), rank("K")


SCHEMES = ("catches", "catch_points", "catches+tiebreak", "win", "zero_sum", "catch_margin")


def catch_on_askers_turn() -> Game:
    # Seat 0 holds three 7s and asks seat 1 for its 7: a catch of 7s (7 points).
    return position(
        ["7H 7C 7D 2C", "7S 3C 3D", "4C 4D 5C", "6C 6D 8C"], pool_top=["9C"], rules=Rules()
    )


@pytest.mark.parametrize(
    ("reward", "expected"),
    [
        ("catches", 1.0),
        ("catch_points", 7 / 14),
        ("catches+tiebreak", 1 + 7 / (TABLE_POINTS + 1)),
        ("win", 0.0),
        ("zero_sum", 0.0),
        ("catch_margin", 1.0),
        ({"catch": 2.0, "catch_points": 1.0}, 2.5),
        ({"catch": 1, "win": 10}, 1.0),
        ({"tiebreak": -1.0}, -7 / (TABLE_POINTS + 1)),
    ],
)
def test_catch_on_the_askers_turn_pays_the_asker(reward, expected):
    env = rewards_after(catch_on_askers_turn(), reward, [(1, SEVEN)])
    assert env.game.events[-2:] == [Hit(0, 1, SEVEN, 1), Catch(0, SEVEN)]
    assert env.agent_selection == "player_0"  # a hit: seat 0 asks again
    assert env.rewards["player_0"] == pytest.approx(expected)
    others = -1 / 3 if reward == "catch_margin" else 0  # minus a third of seat 0's catch
    assert all(env.rewards[f"player_{seat}"] == pytest.approx(others) for seat in (1, 2, 3))
    _, last_reward, *_ = env.last()
    assert last_reward == pytest.approx(expected)
    info = env.infos["player_0"]
    assert info["reward_catch"] == 1
    assert info["reward_catch_points"] == pytest.approx(0.5)
    assert info["reward_tiebreak"] == pytest.approx(7 / (TABLE_POINTS + 1))
    assert info["reward_win"] == 0
    assert env.infos["player_0"]["catches"] == 1
    assert env.infos["player_0"]["tiebreak_points"] == 7


def end_position(rules: Rules, catches: list[list[str]]) -> Game:
    # The kings are the last rank: seat 0 holds three, seat 1 one, seat 2 nothing (out);
    # seat 0's ask lays the last catch and ends the game.
    return position(["KH KC KD", "KS", ""], pool_top=[], rules=rules, catches=catches)


# catches (ranks) before the last ask; seat 0 then adds K (13 points)
SOLE = [["2", "3", "4", "5"], ["6", "7", "8", "9", "10"], ["J", "Q", "A"]]  # 27 / 40 / 37


LEVEL = [["2", "3", "4", "A"], ["5", "6", "7", "8", "10"], ["9", "J", "Q"]]  # 36 / 36 / 32


@pytest.mark.parametrize(
    ("rules", "catches", "winners", "expected"),
    [
        # table rules: 5 catches each for seats 0 and 1; seat 1 wins on points (40 > 27)
        (
            Rules(players=3),
            SOLE,
            [1],
            {
                "win": [0, 1, 0],
                "zero_sum": [-0.5, 1, -0.5],
                "catches": [1, 0, 0],
                "catches+tiebreak": [1 + 13 / 105, 0, 0],
                "catch_margin": [1, -0.5, -0.5],
                "catch_points": [13 / 14, 0, 0],
                "custom": [2 + 0, 10, 0],
            },
        ),
        # table rules, level on catches and points (36 each): a shared win
        (
            Rules(players=3),
            LEVEL,
            [0, 1],
            {
                "win": [0.5, 0.5, 0],
                "zero_sum": [0.25, 0.25, -0.5],
                "catches": [1, 0, 0],
                "catches+tiebreak": [1 + 13 / 105, 0, 0],
                "catch_margin": [1, -0.5, -0.5],
                "catch_points": [13 / 14, 0, 0],
                "custom": [2 + 5, 5, 0],
            },
        ),
        # family rules: equal most catches share the win, points do not count
        (
            Rules.preset("family", players=3),
            SOLE,
            [0, 1],
            {
                "win": [0.5, 0.5, 0],
                "zero_sum": [0.25, 0.25, -0.5],
                "catches": [1, 0, 0],
                "catches+tiebreak": [1 + 13 / 105, 0, 0],
                "catch_margin": [1, -0.5, -0.5],
                "catch_points": [13 / 14, 0, 0],
                "custom": [2 + 5, 5, 0],
            },
        ),
    ],
    ids=["sole_win", "shared_win_on_points", "shared_win_family"],
)
def test_rewards_at_the_end_of_the_game(rules, catches, winners, expected):
    for reward, values in expected.items():
        spec = {"catch": 2.0, "win": 10.0} if reward == "custom" else reward
        env = rewards_after(end_position(rules, catches), spec, [(1, KING)])
        assert env.game.is_over
        assert isinstance(env.game.events[-1], GameOver)
        got = [env.rewards[f"player_{seat}"] for seat in range(3)]
        assert got == pytest.approx(values), reward
        for seat in range(3):
            info = env.infos[f"player_{seat}"]
            assert np.flatnonzero(info["winners"]).tolist() == winners
            assert info["reward_win"] == pytest.approx(1 / len(winners) if seat in winners else 0)
        assert all(env.terminations.values())
        if reward in ("zero_sum", "catch_margin"):
            assert sum(got) == pytest.approx(0)


@pytest.mark.parametrize(
    ("name", "players", "games"),
    [
        ("table", 4, 60),
        ("table", 2, 40),
        ("table", 6, 25),
        ("two_decks", 3, 12),
        ("pairs", 4, 15),
        ("pairs_jokers", 3, 15),
        ("authors", 4, 10),
    ],
)
def test_catches_plus_tiebreak_ranks_seats_as_the_table_winner_rule(name, players, games):
    rules = preset(name, players)
    assert rules.winner == "catches_then_points"
    env = gofish_env.raw_env(rules=rules, reward="catches+tiebreak")
    rng = random.Random(7)
    level_pairs = 0
    for seed in range(games):
        env.reset(seed=seed)
        returns = dict.fromkeys(env.possible_agents, 0.0)
        while not (env.game.is_over or env.truncations[env.agent_selection]):
            env.step(random_action(env, rng))
            for agent, reward in env.rewards.items():
                returns[agent] += reward
        assert env.game.is_over
        score = {
            agent: (len(env.game.catches(seat)), env.game.tiebreak_points(seat))
            for seat, agent in enumerate(env.possible_agents)
        }
        for a in env.possible_agents:
            for b in env.possible_agents:
                if score[a] == score[b]:
                    assert returns[a] == pytest.approx(returns[b], abs=1e-9)
                    level_pairs += a < b
                else:
                    assert (returns[a] > returns[b] + 1e-9) == (score[a] > score[b])
        best = max(returns.values())
        assert [
            seat for seat, agent in enumerate(env.possible_agents) if returns[agent] > best - 1e-9
        ] == list(env.game.winners)
        assert list(env.game.winners) == np.flatnonzero(env.infos["player_0"]["winners"]).tolist()


@pytest.mark.parametrize("name", ["table", "pairs", "family"])
def test_zero_sum_rewards_sum_to_zero_every_step(name):
    reward = {"catch": 1.0, "win": 2.0, "zero_sum": True}
    env = gofish_env.raw_env(rules=preset(name, 4), reward=reward)
    rng = random.Random(3)
    for seed in range(5):
        env.reset(seed=seed)
        while not (env.game.is_over or env.truncations[env.agent_selection]):
            env.step(random_action(env, rng))
            assert sum(env.rewards.values()) == pytest.approx(0, abs=1e-12)


def test_named_zero_sum_equals_its_weights_dict():
    a = rewards_after(end_position(Rules(players=3), SOLE), "zero_sum", [(1, KING)])
    b = rewards_after(
        end_position(Rules(players=3), SOLE), {"win": 1.0, "zero_sum": True}, [(1, KING)]
    )
    assert a.rewards == b.rewards


@pytest.mark.parametrize(
    "reward",
    [
        "points",
        "Catches",
        "",
        {"catches": 1.0},
        {"catch": "1"},
        {"catch": None},
        {"catch": True},
        {"catch": float("nan")},
        {"catch": float("inf")},
        {"win": -float("inf")},
        {"win": 1.0, "zero_sum": 1},
        {"win": 1.0, "zero_sum": "yes"},
        3,
        None,
        ["catch"],
    ],
)
def test_bad_reward_names_and_weights_raise_value_error_naming_the_field(reward):
    with pytest.raises(ValueError, match="reward"):
        gofish_env.raw_env(reward=reward)
    with pytest.raises(ValueError, match="reward"):
        gofish_env.env(reward=reward)


def test_weights_may_be_numpy_numbers_and_are_kept_as_floats():
    scheme = RewardScheme.make({"catch": np.float32(2.0), "win": np.int64(3)})
    assert scheme.weights == {"catch": 2.0, "win": 3.0}
    assert all(type(weight) is float for weight in scheme.weights.values())


def test_the_calculator_pays_each_component_by_its_weight_and_the_win_to_the_winners():
    rules = Rules(players=3)
    scheme = RewardScheme.make({"catch": 2.0, "catch_points": 1.0, "win": 10.0})
    calculator = RewardCalculator(rules, scheme)
    events = [Catch(1, KING), Catch(1, SEVEN), Catch(2, rank("2"))]
    rewards, parts = calculator.rewards(events)
    expected = {"catch": 2.0, "catch_points": 20 / 14, "tiebreak": 20 / 105, "win": 0.0}
    assert parts[1] == pytest.approx(expected)
    assert rewards == pytest.approx([0.0, 2 * 2 + 20 / 14, 2 + 2 / 14])
    # At the end the win is shared by the winners; nothing else earned gives only that.
    rewards, parts = calculator.rewards([], winners=(0, 2))
    assert rewards == [5.0, 0.0, 5.0]
    assert [part["win"] for part in parts] == [0.5, 0.0, 0.5]
    # Most steps lay no catch and end nothing: zeros, without adding anything up.
    rewards, parts = calculator.rewards([Hit(0, 1, SEVEN, 1)])
    assert rewards == [0.0, 0.0, 0.0]
    assert parts == [dict.fromkeys(COMPONENTS, 0.0)] * 3


@pytest.mark.parametrize("name", list(NAMED_SCHEMES))
def test_each_named_scheme_is_the_dict_of_weights_it_stands_for(name):
    named = RewardScheme.make(name)
    weights = dict(NAMED_SCHEMES[name])
    custom = RewardScheme.make(weights)
    assert named.name == name and custom.name == "custom"
    assert (named.weights, named.zero_sum) == (custom.weights, custom.zero_sum)
    assert RewardScheme.make(named) is named
