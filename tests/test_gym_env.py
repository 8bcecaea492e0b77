"""The Gymnasium single-agent env (issue 3): the checkers, registration, seats, opponents (a
saved agent is checked against the table), rewards summed over the opponents' turns (the
final one included), illegal actions, vector envs with MaskablePPO, every preset, copies.

Positions come from ``helpers.position`` (see tests/test_aec_env.py). Rank indices:
5 -> 3, 7 -> 5, 8 -> 6, 9 -> 7, 10 -> 8, Q -> 10, K -> 11.
"""

from __future__ import annotations

import contextlib
import copy
import io
import pickle
import random
import re
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from helpers import MISMATCH_4_TO_3, position, rank

from gofish_env import Game, GoFishEnv, IllegalAsk, Rules
from gofish_env.agent_files import AgentFileError
from gofish_env.cards import RANK_POINTS
from gofish_env.cpus import RandomCPU
from gofish_env.events import Ask, Catch, GameOver

PRESETS = ("table", "bicycle", "family", "quick", "ocean", "pairs", "two_decks", "authors")
FIVE, SEVEN, EIGHT, NINE, TEN, QUEEN, KING = (rank(r) for r in ("5", "7", "8", "9", "10", "Q", "K"))


def first_legal(observation: np.ndarray, mask: np.ndarray) -> int:
    """A deterministic opponent: the lowest legal action."""
    return int(np.flatnonzero(mask)[0])


def random_legal(env: GoFishEnv, rng: random.Random) -> int:
    return int(rng.choice(np.flatnonzero(env.action_masks())))


def play_episode(env: GoFishEnv, rng: random.Random, seed: int | None = None):
    """Random legal actions to the end; returns (rewards, last terminated, last truncated,
    last info)."""
    obs, info = env.reset(seed=seed)
    assert env.observation_space.contains(obs)
    rewards = []
    while True:
        assert np.array_equal(info["action_mask"], env.action_masks())
        assert env.action_masks().any(), "the learner is to move but has no legal action"
        obs, reward, terminated, truncated, info = env.step(random_legal(env, rng))
        assert env.observation_space.contains(obs)
        assert isinstance(reward, float) and np.isfinite(reward)
        rewards.append(reward)
        if terminated or truncated:
            assert not (terminated and truncated)
            return rewards, terminated, truncated, info


# ----------------------------------------------------------------------------- checkers


@pytest.mark.torch  # SB3's checker
@pytest.mark.parametrize("name", PRESETS)
def test_gymnasium_and_sb3_env_checkers_pass(name):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    rules = Rules.preset(name, players=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning fails the test
        gym_check_env(gym.make("GoFish-v0", rules=rules, render_mode="ansi").unwrapped)
        sb3_check_env(GoFishEnv(rules=rules, seat="random"), warn=True)


def test_gymnasium_make_builds_the_env_with_its_arguments():
    env = gym.make("GoFish-v0", players=3, opponents="random", seat=1, reward="win")
    assert isinstance(env.unwrapped, GoFishEnv)
    assert env.unwrapped.rules == Rules(players=3)
    assert env.unwrapped.seat == 1
    obs, info = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape
    assert env.action_space.n == 2 * 13
    assert info["seat"] == 1
    _, reward, terminated, truncated, _ = env.step(random_legal(env.unwrapped, random.Random(0)))
    assert isinstance(reward, float) and not (terminated and truncated)


def test_same_seed_same_episode():
    def trajectory(seed):
        env = GoFishEnv(players=4, opponents="random", seat="random")
        rng = random.Random(5)
        obs, info = env.reset(seed=seed)
        out = [(obs.tobytes(), info["seat"])]
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(random_legal(env, rng))
            out.append((obs.tobytes(), reward))
            done = terminated or truncated
        return out

    assert trajectory(3) == trajectory(3)
    assert trajectory(3) != trajectory(4)


# ----------------------------------------------------------------------------- seats


@pytest.mark.parametrize("seat", [0, 1, 3])
def test_fixed_seat_is_to_move_after_reset_and_every_step(seat):
    env = GoFishEnv(players=4, seat=seat)
    layout = env.aec.layout
    rng = random.Random(seat)
    for episode in range(3):
        obs, info = env.reset(seed=episode)
        done = False
        while not done:
            assert info["seat"] == seat
            assert env.aec.game.current_player == seat
            assert layout.split(obs)["to_move"][0] == 1  # row 0 is the viewer
            obs, _, terminated, truncated, info = env.step(random_legal(env, rng))
            done = terminated or truncated


def test_random_seat_changes_between_episodes_and_the_learner_is_to_move():
    env = GoFishEnv(players=5, seat="random")
    seats = set()
    for episode in range(40):
        _, info = env.reset(seed=episode)
        seats.add(info["seat"])
        assert env.aec.game.current_player == info["seat"] == env.seat
        assert env.action_masks().any()
    assert seats == set(range(5))


@pytest.mark.parametrize("seat", [4, -1, "left", True, 1.0, None])
def test_bad_seat_raises(seat):
    with pytest.raises(ValueError, match="seat"):
        GoFishEnv(players=4, seat=seat)


def test_a_numpy_integer_seat_is_a_seat():
    env = GoFishEnv(players=4, seat=np.int64(2))
    _, info = env.reset(seed=0)
    assert info["seat"] == 2 and env.aec.game.current_player == 2
    assert type(info["seat"]) is int and type(env.seat) is int  # as with a plain int seat


# ----------------------------------------------------------------------------- opponents


def test_opponents_as_a_callable_see_their_own_observation_and_mask():
    calls = []

    def policy(observation, mask):
        calls.append((env.aec.game.current_player, observation.copy(), mask.copy()))
        assert observation.dtype == np.float32 and observation.shape == env.observation_space.shape
        assert mask.dtype == np.int8 and mask.shape == (env.action_space.n,)
        return first_legal(observation, mask)

    env = GoFishEnv(players=3, opponents=policy, seat=1)
    rng = random.Random(0)
    for seed in range(3):
        play_episode(env, rng, seed)
    assert calls
    layout = env.aec.layout
    for seat, observation, mask in calls:
        assert seat in (0, 2)
        assert mask.any()
        assert layout.split(observation)["to_move"][0] == 1  # the opponent's own view


def test_opponents_as_a_list_of_specs_follow_the_seats_from_the_learners_left():
    seen: dict[str, set[int]] = {"a": set(), "b": set()}

    def spy(label):
        def policy(observation, mask):
            seen[label].add(env.aec.game.current_player)
            return first_legal(observation, mask)

        return policy

    env = GoFishEnv(players=4, seat=2, opponents=[spy("a"), "random", spy("b")])
    rng = random.Random(1)
    for seed in range(4):
        play_episode(env, rng, seed)
    assert seen == {"a": {3}, "b": {1}}


@pytest.mark.parametrize("opponents", ["random", RandomCPU(seed=3), [RandomCPU(1), "random"]])
def test_opponents_by_name_or_cpu_object_play_legal_asks(opponents):
    env = GoFishEnv(players=3, opponents=opponents)
    rng = random.Random(2)
    for seed in range(3):
        play_episode(env, rng, seed)


@pytest.mark.parametrize(
    ("opponents", "match"),
    [("grandmaster", "grandmaster"), (["random"] * 2, "opponents"), (42, "opponent")],
)
def test_bad_opponents_raise(opponents, match):
    with pytest.raises(ValueError, match=match):
        GoFishEnv(players=4, opponents=opponents)


@pytest.mark.torch  # the saved agents
def test_a_mismatched_model_opponent_is_refused_when_the_env_is_built(agents):
    with pytest.raises(AgentFileError, match=MISMATCH_4_TO_3):
        GoFishEnv(players=3, opponents=f"model:{agents['recorded']}")


# ----------------------------------------------------------------------------- rewards


def scripted(env_ref: list, scripts: dict[int, list[tuple[int, int]]]):
    """An opponent callable playing each seat's (target, rank) script, then the lowest legal
    action."""

    def policy(observation, mask):
        env = env_ref[0]
        seat = env.aec.game.current_player
        if scripts.get(seat):
            target, what = scripts[seat].pop(0)
            action = env.aec.codec.to_action(seat, target, what)
            assert mask[action], (seat, target, what)
            return action
        return first_legal(observation, mask)

    return policy


def win_on_an_opponents_turn():
    # Seat 0 (the learner) holds the KS and asks seat 1 for kings: a miss with an empty pool.
    # Seat 1 takes seat 2's queens and lays the queens (then it is out); seat 2 takes the
    # learner's KS and lays the last catch. The learner's 7 catches win.
    return position(
        ["KS", "QH QC", "QD QS KH KC KD"],
        pool_top=[],
        rules=Rules(players=3),
        catches=[["2", "3", "4", "5", "6", "7", "8"], ["9", "10", "J"], ["A"]],
    )


@pytest.mark.parametrize(
    ("reward", "expected", "parts"),
    [
        ("win", 1.0, {"win": 1.0, "catch": 0.0}),
        ("zero_sum", 1.0, {"win": 1.0}),
        ("catches", 0.0, {"catch": 0.0}),
        ({"catch": 1.0, "win": 5.0}, 5.0, {"win": 1.0}),
    ],
)
def test_the_final_reward_comes_when_the_game_ends_on_an_opponents_turn(reward, expected, parts):
    env_ref: list = []
    env = GoFishEnv(
        players=3,
        seat=0,
        opponents=scripted(env_ref, {1: [(2, QUEEN)], 2: [(0, KING)]}),
        reward=reward,
    )
    env_ref.append(env)
    env.reset(seed=0, options={"game": win_on_an_opponents_turn()})
    _, got, terminated, truncated, info = env.step(env.aec.codec.to_action(0, 1, KING))
    events = env.aec.game.events
    assert Ask(2, 0, KING) in events and events[-2:] == [
        Catch(2, KING),
        GameOver((0,), (7, 4, 2), (35, 42, 27), "every catch is laid"),
    ]
    assert got == pytest.approx(expected)
    assert terminated and not truncated
    assert info["winners"].tolist() == [1, 0, 0]
    for name, value in parts.items():
        assert info[f"reward_{name}"] == pytest.approx(value)
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError):
        env.step(0)


def catch_on_an_opponents_turn():
    # Empty hands refill 4 cards. The learner (seat 0) asks seat 1 for a 5: a miss, it draws
    # the 7C. Seat 1 takes the 7C (and lays its 7s), then asks the learner for a 10: a miss,
    # it draws the 8C. Seat 2 takes the learner's last card, the 5C: the learner draws the
    # four 9s at once and lays them, on seat 2's turn, then draws the 10C and JC.
    return position(
        ["5C", "7D 7H 7S 10D 10H JD", "5D 5H 5S 8D 8H 8S 10S JH JS"],
        pool_top=["7C", "8C", "9C", "9D", "9H", "9S", "10C", "JC"],
        rules=Rules(players=3, empty_hand_draw_count=4),
        rest=2,
    )


@pytest.mark.parametrize(
    ("reward", "expected"),
    [("catches", 1.0), ("catch_points", 9 / 14), ("catches+tiebreak", 1 + 9 / 105)],
)
def test_rewards_earned_on_opponents_turns_are_summed_into_the_learners_step(reward, expected):
    env_ref: list = []
    scripts = {1: [(0, SEVEN), (0, TEN)], 2: [(0, FIVE), (0, EIGHT)]}
    game = catch_on_an_opponents_turn()
    env = GoFishEnv(rules=game.rules, seat=0, opponents=scripted(env_ref, scripts), reward=reward)
    env_ref.append(env)
    env.reset(options={"game": game})
    start = env.aec.game.num_events
    _, got, terminated, truncated, info = env.step(env.aec.codec.to_action(0, 1, FIVE))
    events = env.aec.game.events[start:]
    assert Catch(0, NINE) in events
    assert events.index(Catch(0, NINE)) > events.index(Ask(2, 0, FIVE))  # on seat 2's turn
    assert env.aec.game.current_player == 0 and not (terminated or truncated)
    assert env.aec.game.hand(0) == ["10C", "JC"]
    assert got == pytest.approx(expected)
    assert info["reward_catch"] == 1


def test_a_catch_at_the_deal_comes_with_the_learners_first_step():
    # Seat 1 (the learner) is dealt four 5s; seat 0 moves first.
    game = position(
        ["2C 3C 4C 6C 7C 8C 9C", "5C 5D 5H 5S 2H 3H 4H", "2D 3D 4D 6D 7D 8D 9D"],
        pool_top=["JC", "JD", "JH", "QC", "QD", "QH"],
        rules=Rules(players=3),
    )
    env = GoFishEnv(players=3, seat=1, opponents=first_legal, reward="catches")
    _, info = env.reset(options={"game": game})
    assert info["catches"] == 1
    _, reward, *_ = env.step(first_legal(None, env.action_masks()))
    laid = sum(1 for event in env.aec.game.events if event == Catch(1, FIVE))
    assert laid == 1
    learner_catches = sum(
        1 for event in env.aec.game.events if isinstance(event, Catch) and event.seat == 1
    )
    assert reward == pytest.approx(learner_catches) and reward >= 1


REWARD_KEYS = ("reward_catch", "reward_catch_points", "reward_tiebreak", "reward_win")


def dealt_a_catch() -> Game:
    """Seat 1 (the learner) is dealt four 5s; seat 0 moves first."""
    return position(
        ["2C 3C 4C 6C 7C 8C 9C", "5C 5D 5H 5S 2H 3H 4H", "2D 3D 4D 6D 7D 8D 9D"],
        pool_top=["JC", "JD", "JH", "QC", "QD", "QH"],
        rules=Rules(players=3),
    )


def test_the_reward_infos_of_a_catch_at_the_deal_come_with_the_step_that_pays_it():
    # Summed over reset and the steps, the components count the catch once, as the rewards.
    env = GoFishEnv(players=3, seat=1, opponents=first_legal, reward="catches")
    _, info = env.reset(options={"game": dealt_a_catch()})
    assert info["catches"] == 1
    assert [info[key] for key in REWARD_KEYS] == [0.0] * 4
    _, reward, *_, info = env.step(first_legal(None, env.action_masks()))
    assert reward >= 1 and info["reward_catch"] == reward


def test_an_illegal_step_reports_no_reward_component():
    # The catch laid at the deal is not paid when step 1 is illegal: nor are its components.
    env = GoFishEnv(players=3, seat=1, opponents=first_legal, reward="catches")
    env.reset(options={"game": dealt_a_catch()})
    _, reward, terminated, _, info = env.step(int(np.flatnonzero(~env.action_masks())[0]))
    assert reward == -1.0 and terminated and info["illegal_action"]
    assert [info[key] for key in REWARD_KEYS] == [0.0] * 4


@pytest.mark.parametrize("seat", [1, "random"])
def test_reward_infos_summed_from_reset_on_are_the_rewards_paid(seat):
    # The pairs game lays catches at most deals; each info's components, weighted, are its
    # step's reward, and the reset info pays nothing.
    rules = Rules.preset("pairs", players=3)
    env = GoFishEnv(rules=rules, seat=seat, opponents="random", reward="catches+tiebreak")
    rng = random.Random(5)
    earned_before_step_1 = 0
    for seed in range(20):
        _, info = env.reset(seed=seed)
        assert [info[key] for key in REWARD_KEYS] == [0.0] * 4
        earned_before_step_1 += info["catches"] > 0
        done = False
        while not done:
            _, reward, terminated, truncated, info = env.step(random_legal(env, rng))
            assert reward == pytest.approx(info["reward_catch"] + info["reward_tiebreak"])
            done = terminated or truncated
    assert earned_before_step_1 > 0


@pytest.mark.parametrize("name", ["table", "quick", "pairs"])
@pytest.mark.parametrize("reward", ["catches", "win", "zero_sum", "catches+tiebreak"])
def test_episode_return_is_the_learners_whole_game_reward(name, reward):
    # Over many random episodes (many end on an opponent's turn) the sum of the step rewards
    # is exactly what the learner earned in the game.
    rules = Rules.preset(name, players=3)
    env = GoFishEnv(rules=rules, seat="random", reward=reward, opponents="random")
    rng = random.Random(11)
    all_points = sum(RANK_POINTS[r] * (rules.copies_of(r) // rules.set_size) for r in range(13))
    ended_on_opponent = 0
    for seed in range(25):
        rewards, terminated, _, info = play_episode(env, rng, seed)
        assert terminated
        game, seat = env.aec.game, env.seat
        catches = [len(game.catches(s)) for s in range(3)]
        points = [game.tiebreak_points(s) for s in range(3)]
        win = [1 / len(game.winners) if s in game.winners else 0.0 for s in range(3)]
        expected = {
            "catches": catches[seat],
            "win": win[seat],
            "zero_sum": win[seat] - (sum(win) - win[seat]) / 2,
            "catches+tiebreak": catches[seat] + points[seat] / (all_points + 1),
        }[reward]
        assert sum(rewards) == pytest.approx(expected)
        assert np.flatnonzero(info["winners"]).tolist() == list(game.winners)
        last_ask = [event for event in game.events if isinstance(event, Ask)][-1]
        ended_on_opponent += last_ask.asker != seat
    assert ended_on_opponent > 0


def test_truncation_after_max_asks():
    env = GoFishEnv(players=4, max_asks=6)
    _, terminated, truncated, _ = play_episode(env, random.Random(0), seed=0)
    assert truncated and not terminated
    assert env.aec.game.num_asks == 6 and not env.aec.game.is_over


@pytest.mark.parametrize(
    ("kwargs", "least"),
    [
        ({"players": 4, "seat": 3}, 4),  # seats 0, 1 and 2 ask first
        ({"players": 4, "seat": "random"}, 4),
        ({"players": 3, "seat": 1}, 2),
        ({"rules": Rules(players=4, first_player="random"), "seat": 0}, 4),
        ({"rules": Rules(players=5, first_player=2), "seat": 1}, 5),
        ({"rules": Rules(players=4, after_miss="asked"), "seat": 3}, 2),  # 0 asks 3, a miss
    ],
)
def test_an_ask_limit_the_opponents_use_up_before_the_learner_moves_is_refused(kwargs, least):
    with pytest.raises(ValueError, match=rf"max_asks: got {least - 1};.* at least {least}"):
        GoFishEnv(**kwargs, max_asks=least - 1)
    GoFishEnv(**kwargs, max_asks=least)  # the learner may move (if the asks before miss)
    _, info = GoFishEnv(players=4, seat=0, max_asks=1).reset(seed=0)  # it asks first
    assert info["action_mask"].any()


def test_a_reset_whose_opponents_reach_the_ask_limit_raises_instead_of_dealing_again():
    # Seat 3 moves after three misses; a hit among them uses up max_asks=4 first. Such a
    # deal is not dealt again (another deal would not lift the limit): ValueError.
    env = GoFishEnv(players=4, seat=3, max_asks=4, opponents="random")
    outcomes = []
    for seed in range(12):
        try:
            env.reset(seed=seed)
            outcomes.append(env.aec.game.num_asks == 3)
        except ValueError as error:
            assert str(error).startswith("max_asks: the opponents made all 4 asks before")
            outcomes.append(None)
    assert None in outcomes and True in outcomes


def test_a_start_position_at_the_ask_limit_is_refused_saying_the_position_made_the_asks():
    game, chooser = Game(Rules(players=4), seed=3), random.Random(0)
    for _ in range(6):
        game.ask(*chooser.choice(game.legal_asks()))
    seat = game.current_player
    with pytest.raises(ValueError) as refused:
        GoFishEnv(players=4, max_asks=5, seat=seat).reset(options={"game": game})
    assert str(refused.value) == (
        f"max_asks: the given game has made 6 asks already, and max_asks is 5 before the "
        f"learner's first move (seat {seat}), so the episode was truncated before it; "
        "allowed: a larger max_asks"
    )


# ----------------------------------------------------------------------------- illegal actions


def test_illegal_action_terminate_ends_the_episode_with_the_penalty():
    env = GoFishEnv(players=3, illegal_action="terminate", illegal_reward=-2.5)
    env.reset(seed=0)
    asks = env.aec.game.num_asks
    bad = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, truncated, info = env.step(bad)
    assert reward == -2.5 and terminated and not truncated
    assert info["illegal_action"] is True
    assert env.aec.game.num_asks == asks
    with pytest.raises(RuntimeError):
        env.step(int(np.flatnonzero(env.aec.observe(env._agent)["action_mask"])[0]))
    env.reset(seed=1)  # a new episode plays normally
    env.step(random_legal(env, random.Random(0)))


def test_illegal_action_raise_raises_and_the_episode_goes_on():
    env = GoFishEnv(players=3, illegal_action="raise")
    obs, _ = env.reset(seed=0)
    bad = int(np.flatnonzero(~env.action_masks())[0])
    events = env.aec.game.events
    with pytest.raises(IllegalAsk):
        env.step(bad)
    with pytest.raises(ValueError):
        env.step(env.action_space.n)
    assert env.aec.game.events == events
    assert np.array_equal(env.aec.observe(env._agent)["observation"], obs)
    env.step(random_legal(env, random.Random(0)))


def test_bad_illegal_action_choice_raises():
    with pytest.raises(ValueError, match="illegal_action"):
        GoFishEnv(illegal_action="ignore")


@pytest.mark.parametrize("penalty", ["x", True, float("nan")])
def test_an_illegal_reward_that_is_not_a_finite_number_is_refused(penalty):
    with pytest.raises(ValueError, match=r"illegal_reward: got .*; allowed: a finite number"):
        GoFishEnv(illegal_reward=penalty)


# ----------------------------------------------------------------------------- presets, copies


@pytest.mark.parametrize("name", [*PRESETS, "pairs_jokers"])
def test_every_preset_plays_in_the_gym_env(name):
    if name == "pairs_jokers":
        rules = Rules.preset("pairs", jokers=True)
    else:
        rules = Rules.preset(name)
    env = GoFishEnv(rules=rules, seat="random", reward="catches+tiebreak", render_mode="ansi")
    rng = random.Random(4)
    for seed in range(3):
        play_episode(env, rng, seed)
        assert f"seat {env.seat} (you)" in env.render()


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda env: pickle.loads(pickle.dumps(env))])
def test_pickle_and_deepcopy_mid_episode_continue_identically(clone):
    env = GoFishEnv(players=4, opponents=["random", "random", RandomCPU(7)], reward="zero_sum")
    rng = random.Random(9)
    env.reset(seed=9)
    for _ in range(4):
        env.step(random_legal(env, rng))
    twin = clone(env)
    done = False
    while not done:
        assert np.array_equal(env.action_masks(), twin.action_masks())
        action = random_legal(env, rng)
        a, b = env.step(action), twin.step(action)
        assert a[0].tobytes() == b[0].tobytes()
        assert a[1:4] == b[1:4]
        assert repr(a[4]) == repr(b[4])
        done = a[2] or a[3]


# ----------------------------------------------------------------------------- SB3


def _sb3():
    import torch
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    torch.set_num_threads(1)
    return MaskablePPO, get_action_masks, DummyVecEnv, SubprocVecEnv


def make_env(seed: int, opponents="random"):
    def build():
        env = GoFishEnv(players=3, opponents=opponents, seat="random")
        env.reset(seed=seed)
        return env

    return build


@pytest.mark.slow
@pytest.mark.torch
def test_maskable_ppo_trains_in_dummy_vec_env_and_the_model_becomes_an_opponent(tmp_path):
    MaskablePPO, get_action_masks, DummyVecEnv, _ = _sb3()
    vec = DummyVecEnv([make_env(0), make_env(1)])
    vec.reset()
    masks = get_action_masks(vec)
    assert masks.shape == (2, 2 * 13)
    for index, env in enumerate(vec.envs):
        assert np.array_equal(masks[index], env.action_masks())
    model = MaskablePPO(
        "MlpPolicy", vec, n_steps=256, batch_size=128, n_epochs=2, seed=0, device="cpu", verbose=0
    )
    model.learn(total_timesteps=3000)
    assert model.num_timesteps >= 3000
    # The trained model plays as an opponent, object or saved file, alone or in a list.
    path = tmp_path / "gofish_model.zip"
    model.save(path)
    rng = random.Random(0)
    for opponents in (model, [model, "random"], f"model:{path}"):
        env = GoFishEnv(players=3, opponents=opponents, seat="random")
        for seed in range(3):
            rewards, terminated, truncated, _ = play_episode(env, rng, seed)
            assert (terminated or truncated) and rewards
    # And it acts from a mask-respecting prediction in the env it was trained on.
    obs = vec.reset()
    actions, _ = model.predict(obs, action_masks=get_action_masks(vec), deterministic=True)
    for action, mask in zip(actions, get_action_masks(vec), strict=True):
        assert mask[action]


@pytest.mark.slow
@pytest.mark.torch
def test_maskable_ppo_trains_in_subproc_vec_env():
    MaskablePPO, get_action_masks, _, SubprocVecEnv = _sb3()
    vec = SubprocVecEnv([make_env(2), make_env(3)])
    try:
        vec.reset()
        masks = get_action_masks(vec)
        assert masks.shape == (2, 2 * 13) and masks.any(axis=1).all()
        model = MaskablePPO(
            "MlpPolicy", vec, n_steps=128, batch_size=64, n_epochs=1, seed=0, device="cpu"
        )
        model.learn(total_timesteps=1024)
        assert model.num_timesteps >= 1024
        vec.env_method("set_opponents", "random")
        obs = vec.reset()
        assert obs.shape == (2, *vec.observation_space.shape)
    finally:
        vec.close()


# ----------------------------------------------------------------------------- docs

ENVIRONMENTS_DOC = Path(__file__).resolve().parent.parent / "docs" / "environments.md"
# A ```python block, optionally followed (after blank lines only) by a ```text block.
BLOCK = re.compile(r"```python\n(?P<code>.*?)```\n(?:\s*```text\n(?P<output>.*?)```)?", re.S)


def doc_examples() -> list:
    text = ENVIRONMENTS_DOC.read_text(encoding="utf-8")
    return [
        pytest.param(
            match["code"], match["output"], id=f"line{text.count(chr(10), 0, match.start()) + 1}"
        )
        for match in BLOCK.finditer(text)
    ]


def test_the_environments_page_has_examples():
    assert len(doc_examples()) >= 7


@pytest.mark.slow
@pytest.mark.torch  # _sb3() for every example; one of them trains MaskablePPO
@pytest.mark.video  # one of them records a video with Gymnasium's RecordVideo
@pytest.mark.parametrize(("code", "output"), doc_examples())
def test_environments_doc_example_runs_and_prints_what_the_page_shows(code, output):
    _sb3()  # one torch thread: the training example stays quick on a busy machine
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(ENVIRONMENTS_DOC), "exec"), {"__name__": "docs_example"})
    assert printed.getvalue() == (output or "")


def test_mask_is_empty_after_an_illegal_action_ends_the_episode():
    env = GoFishEnv(players=3, opponents="random")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert terminated and reward == -1.0 and info["illegal_action"]
    assert not env.action_masks().any()


def test_one_cpu_object_for_every_seat_becomes_one_cpu_per_seat():
    # CPUs remember per seat (plans, card ledgers); a model or a callable is shared.
    from gofish_env.cpus import make_cpu

    cpu = make_cpu("easy", seed=1)
    env = GoFishEnv(players=4, opponents=cpu)
    cpus = [opponent.cpu for opponent in env.opponents]
    assert len({id(each) for each in cpus}) == 3 and cpus[0] is cpu

    def policy(observation, mask):
        return int(np.flatnonzero(mask)[0])

    env = GoFishEnv(players=4, opponents=policy)
    assert {opponent.policy for opponent in env.opponents} == {policy}


def test_one_player_object_for_every_seat_plays_as_one_player_per_seat():
    from gofish_env.players import make_player

    def game_of(opponents):
        env = GoFishEnv(players=4, opponents=opponents, seat=0)
        _, info = env.reset(seed=3)
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step(
                int(np.flatnonzero(info["action_mask"])[0])
            )
            done = terminated or truncated
        return env.aec.game.events, env.opponents

    events, _ = game_of("easy")
    shared = make_player("easy")
    copied_events, players = game_of(shared)
    # Each seat remembers its own plans and what it was asked, as three "easy" CPUs do.
    assert copied_events == events
    assert players[0] is shared and len({id(player.cpu) for player in players}) == 3


@pytest.mark.parametrize("preset", ["table", "family", "pairs"])
def test_infos_are_numbers_and_fixed_shape_arrays_with_the_same_keys_every_step(preset):
    from gofish_env.gym_env import INFO_KEYS

    rules = Rules.preset(preset, players=3)
    env = GoFishEnv(rules=rules, opponents="easy", seat="random")
    rng = random.Random(1)
    for seed in range(8):
        _, info = env.reset(seed=seed)
        infos = [info]
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, _, terminated, truncated, info = env.step(action)
            infos.append(info)
            done = terminated or truncated
        for info in infos:
            assert tuple(info) == INFO_KEYS
            assert info["winners"].shape == (3,) and info["winners"].dtype == np.int8
            assert info["action_mask"].shape == (env.action_space.n,)
            assert info["action_mask"].dtype == bool
            assert isinstance(info["illegal_action"], bool)
            others = {k: v for k, v in info.items() if k not in ("winners", "action_mask")}
            others.pop("illegal_action")
            assert all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in others.values()
            )
        assert infos[-1]["winners"].tolist() == [
            int(seat in env.aec.game.winners) for seat in range(3)
        ]
        assert not any(info["winners"].any() for info in infos[:-1])


def test_the_docstring_is_a_full_spec_generated_from_the_layout():
    from gofish_env.gym_env import INFO_KEYS
    from gofish_env.observation import DEFAULT_HISTORY, ObservationLayout

    doc = GoFishEnv.__doc__
    headings = [line for line in doc.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Description",
        "## Action space",
        "## Observation space",
        "## Starting state",
        "## Rewards",
        "## Episode end",
        "## Info",
        "## Arguments",
        "## Version history",
    ]
    assert ObservationLayout(Rules(), DEFAULT_HISTORY).markdown() in doc
    assert all(f"| ``{key}`` |" in doc for key in INFO_KEYS)
    assert 'get_wrapper_attr("action_masks")' in doc


def finished_game(rules: Rules, seed: int) -> Game:
    game = Game(rules, seed=seed)
    rng = random.Random(seed)
    while not game.is_over:
        game.ask(*rng.choice(game.legal_asks()))
    return game


@pytest.mark.parametrize(
    ("game", "message"),
    [
        ("over", "options['game']: the game is over; allowed: a game in play"),
        ("nothing", "options['game']: got 'nothing'; allowed: a gofish_env.Game"),
        ("3p", "options['game']: its rules differ from the env's rules"),
    ],
)
def test_a_refused_start_position_changes_nothing_the_seed_included(game, message):
    rules = Rules(players=4)
    game = {"over": finished_game(rules, 5), "3p": Game(Rules(players=3), seed=1)}.get(game, game)
    kept, refused = GoFishEnv(rules=rules), GoFishEnv(rules=rules)
    kept.reset(seed=1)
    refused.reset(seed=1)
    with pytest.raises(ValueError, match=re.escape(message)):
        refused.reset(seed=99, options={"game": game})
    # The next unseeded reset is the one it would have been: the refused call reseeded nothing.
    assert refused.reset()[0].tobytes() == kept.reset()[0].tobytes()
