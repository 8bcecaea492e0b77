"""Bad actions and misuse (issue 11): what is not an action is refused with a ValueError
naming it, in the AEC env and in GoFishEnv, and changes nothing; step() before reset() or
after the episode asks for reset(); an opponent's illegal ask inside GoFishEnv names the
opponent and its seat and leaves the env exactly as it was before the step.

Positions come from ``helpers.position``. Rank indices: 2 -> 0, 9 -> 7, Q -> 10, K -> 11,
A -> 12.
"""

from __future__ import annotations

import copy
import random
import re

import numpy as np
import pytest
from helpers import plain_infos, position, rank, snapshot

import gofish_env
from gofish_env import GoFishEnv, IllegalAsk, Rules
from gofish_env.aec_env import InvalidAction
from gofish_env.cpus import RandomCPU
from gofish_env.gym_env import OpponentError

ACTIONS = 39  # 4 players: 3 * 13 actions


def aec_env(kind: str):
    """A 4-player AEC env, reset: the bare ``raw_env`` or the wrapped ``env()``."""
    env = gofish_env.raw_env(players=4) if kind == "raw" else gofish_env.env(players=4)
    env.reset(seed=3)
    return env


def aec_state(env) -> tuple:
    """Everything an AEC env shows: every agent's observation and mask, rewards, infos, the
    agent to move, and the game itself (hands, pool, catches, the event log)."""
    raw = env.unwrapped
    observations = [
        {key: value.tolist() for key, value in raw.observe(agent).items()}
        for agent in raw.possible_agents
    ]
    return (
        raw.agent_selection,
        list(raw.agents),
        dict(raw.rewards),
        dict(raw._cumulative_rewards),
        dict(raw.terminations),
        dict(raw.truncations),
        plain_infos(raw.infos),
        observations,
        snapshot(raw.game),
    )


def gym_state(env: GoFishEnv) -> tuple:
    """What GoFishEnv shows (observation, mask) plus its AEC env and the rewards it holds
    for the learner's next step."""
    return (
        env._observation().tolist(),
        env.action_masks().tolist(),
        aec_state(env.aec),
        env._reward,
        dict(env._components),
    )


def legal_action(env) -> int:
    """The lowest legal action of the agent (or learner) to move."""
    if isinstance(env, GoFishEnv):
        return int(np.flatnonzero(env.action_masks())[0])
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])


def first_legal(observation: np.ndarray, mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def refuse_in_aec(kind: str, bad, pattern: str) -> None:
    """``bad`` is refused with a ValueError (not IllegalAsk) matching ``pattern``, nothing
    changes, and the same agent then plays a legal action."""
    env = aec_env(kind)
    before = aec_state(env)
    with pytest.raises(ValueError, match=pattern) as caught:
        env.step(bad)
    assert not isinstance(caught.value, IllegalAsk)
    assert aec_state(env) == before
    asks = env.unwrapped.game.num_asks
    env.step(legal_action(env))
    assert env.unwrapped.game.num_asks == asks + 1


def refuse_in_gym(bad, pattern: str, illegal_action: str = "terminate") -> None:
    env = GoFishEnv(players=4, opponents="random", illegal_action=illegal_action)
    env.reset(seed=3)
    before = gym_state(env)
    asks = env.aec.game.num_asks
    with pytest.raises(ValueError, match=pattern) as caught:
        env.step(bad)
    assert not isinstance(caught.value, IllegalAsk)
    assert gym_state(env) == before
    *_, info = env.step(legal_action(env))
    assert info["illegal_action"] is False
    assert env.aec.game.num_asks > asks


AEC_KINDS = ["raw", "env"]
ALLOWED = r"allowed: an integer from 0 to 38"


# ----------------------------------------------------------------------------- AEC: not actions


@pytest.mark.parametrize("kind", AEC_KINDS)
@pytest.mark.parametrize("offset", [0.5, 0.0, 0.9])
def test_aec_refuses_a_float_even_a_whole_one(kind, offset):
    # Before issue 11, raw_env played int(action): 0.9 played action 0.
    bad = legal_action(aec_env(kind)) + offset
    refuse_in_aec(kind, bad, rf"got {bad!r}.*{ALLOWED}")


@pytest.mark.parametrize("kind", AEC_KINDS)
def test_aec_refuses_a_numpy_float(kind):
    bad = np.float64(legal_action(aec_env(kind)))
    refuse_in_aec(kind, bad, ALLOWED)


@pytest.mark.parametrize("kind", AEC_KINDS)
def test_aec_refuses_a_string(kind):
    bad = str(legal_action(aec_env(kind)))
    refuse_in_aec(kind, bad, rf"got '{bad}'.*{ALLOWED}")


@pytest.mark.parametrize("kind", AEC_KINDS)
def test_aec_refuses_none_for_an_agent_still_playing(kind):
    refuse_in_aec(kind, None, rf"got None for player_0.*{ALLOWED}.*None is only for an agent")


@pytest.mark.parametrize("kind", AEC_KINDS)
@pytest.mark.parametrize("bad", [True, False, np.True_])
def test_aec_refuses_a_bool(kind, bad):
    refuse_in_aec(kind, bad, rf"got {bad!r}.*{ALLOWED}")


@pytest.mark.parametrize("kind", AEC_KINDS)
@pytest.mark.parametrize("bad", [-1, ACTIONS, 10**30, np.int64(-3)])
def test_aec_refuses_a_number_outside_the_action_space(kind, bad):
    refuse_in_aec(kind, bad, rf"got {re.escape(repr(bad))}.*{ALLOWED}")


@pytest.mark.parametrize("kind", AEC_KINDS)
@pytest.mark.parametrize("shape", [(2,), (0,), (1, 2)])
def test_aec_refuses_a_numpy_array_not_of_one_value(kind, shape):
    bad = np.zeros(shape, dtype=np.int64)
    refuse_in_aec(kind, bad, ALLOWED)


@pytest.mark.parametrize("kind", AEC_KINDS)
def test_aec_refuses_a_float_numpy_array_of_one_value(kind):
    refuse_in_aec(kind, np.array([float(legal_action(aec_env(kind)))]), ALLOWED)


@pytest.mark.parametrize("kind", AEC_KINDS)
@pytest.mark.parametrize("wrap", [np.int64, np.array, lambda a: np.array([a], dtype=np.int32)])
def test_aec_plays_a_numpy_integer_or_an_integer_array_of_one_value(kind, wrap):
    env, plain = aec_env(kind), aec_env(kind)
    action = legal_action(env)
    env.step(wrap(action))
    plain.step(action)
    assert aec_state(env) == aec_state(plain)


def last_catch_position():
    """Seat 0 asks seat 1 for its king and lays the last catch: the game is over."""
    return position(["KH KC KD", "KS", ""], rules=Rules(players=3), rest=2)


def test_aec_a_terminated_agent_is_told_that_only_none_is_allowed():
    env = gofish_env.raw_env(players=3)
    env.reset(options={"game": last_catch_position()})
    env.step(env.codec.to_action(0, 1, rank("K")))
    assert all(env.terminations.values())
    before = aec_state(env)
    with pytest.raises(ValueError, match=r"got 0 for player_1, which is terminated.*None"):
        env.step(0)
    assert aec_state(env) == before
    env.step(None)


# ----------------------------------------------------------------------------- AEC: misuse


def test_raw_env_step_before_reset_asks_for_reset():
    env = gofish_env.raw_env(players=4)
    with pytest.raises(RuntimeError, match=r"before reset\(\); call reset\(\)"):
        env.step(0)


def test_raw_env_step_after_every_agent_is_done_asks_for_reset():
    env = gofish_env.raw_env(players=3)
    env.reset(options={"game": last_catch_position()})
    env.step(env.codec.to_action(0, 1, rank("K")))
    while env.agents:
        env.step(None)
    for action in (None, 0):
        with pytest.raises(RuntimeError, match=r"every agent is done.*call reset\(\)"):
            env.step(action)
    env.reset(seed=0)  # and a new episode plays
    env.step(legal_action(env))


# -------------------------------------------------------------------------- GoFishEnv: not actions


@pytest.mark.parametrize("illegal_action", ["terminate", "raise"])
@pytest.mark.parametrize("offset", [0.7, 0.0])
def test_gym_refuses_a_float_even_a_whole_one(illegal_action, offset):
    # Before issue 11, GoFishEnv played int(action): 1.7 played action 1.
    env = GoFishEnv(players=4)
    env.reset(seed=3)
    bad = legal_action(env) + offset
    refuse_in_gym(bad, rf"got {bad!r}; {ALLOWED}", illegal_action)


def test_gym_refuses_a_string():
    env = GoFishEnv(players=4)
    env.reset(seed=3)
    bad = str(legal_action(env))
    refuse_in_gym(bad, rf"got '{bad}'; {ALLOWED}")


def test_gym_refuses_none():
    refuse_in_gym(None, rf"got None; {ALLOWED}")


@pytest.mark.parametrize("bad", [True, False, np.True_])
def test_gym_refuses_a_bool(bad):
    refuse_in_gym(bad, rf"got {bad!r}; {ALLOWED}")


@pytest.mark.parametrize("illegal_action", ["terminate", "raise"])
@pytest.mark.parametrize("bad", [-1, ACTIONS, np.int64(99)])
def test_gym_refuses_a_number_outside_the_action_space_in_either_mode(illegal_action, bad):
    # Under "terminate" it used to end the episode with the penalty instead.
    refuse_in_gym(bad, rf"got {re.escape(repr(bad))}; {ALLOWED}", illegal_action)


@pytest.mark.parametrize("bad", [np.zeros(2, np.int64), np.zeros(0, np.int64), np.array([1.0])])
def test_gym_refuses_a_numpy_array_not_of_one_integer(bad):
    refuse_in_gym(bad, ALLOWED)


@pytest.mark.parametrize("wrap", [np.int64, np.array, lambda a: np.array([a])])
def test_gym_plays_a_numpy_integer_or_an_integer_array_of_one_value(wrap):
    env, plain = GoFishEnv(players=4), GoFishEnv(players=4)
    env.reset(seed=3)
    plain.reset(seed=3)
    action = legal_action(env)
    out, expected = env.step(wrap(action)), plain.step(action)
    assert np.array_equal(out[0], expected[0]) and out[1:4] == expected[1:4]
    assert gym_state(env) == gym_state(plain)


def test_gym_step_before_reset_asks_for_reset():
    env = GoFishEnv(players=4)
    with pytest.raises(RuntimeError, match=r"before reset\(\); call reset\(\)"):
        env.step(0)
    with pytest.raises(RuntimeError, match=r"call reset\(\)"):
        env.action_masks()


def test_gym_step_after_the_episode_ended_asks_for_reset():
    env = GoFishEnv(players=2)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(legal_action(env))
        done = terminated or truncated
    with pytest.raises(RuntimeError, match=r"episode ended; call reset\(\)"):
        env.step(0)


# ----------------------------------------------------------------------------- opponents

# Three players, the learner in seat 0 with a set of aces laid at the deal (a reward of 1
# waiting for its first step). It asks seat 1 for 2s and misses (draws the 3C); seat 1 asks
# seat 2 for 9s and misses (draws the 4C); then seat 2 is to move.
RULES = Rules(players=3)
LEARNER_2S = 0  # action 0 by seat 0: seat 1, rank 2


def opponent_position():
    return position(
        ["AH AC AD AS 7H 7C 2C", "KH KC 9D", "QH QC 5D"], pool_top=["3C", "4C"], rules=RULES
    )


def gym_env(seat_2, seat_1=first_legal, reward="catches") -> GoFishEnv:
    env = GoFishEnv(rules=RULES, opponents=[seat_1, seat_2], reward=reward)
    env.reset(seed=0, options={"game": opponent_position()})
    return env


def asks_for_a_rank_it_lacks(observation, mask):
    """A broken policy: the first action its mask forbids."""
    return int(np.flatnonzero(mask == 0)[0])


class LackingCPU(RandomCPU):
    """A CPU whose choose() returns an illegal ask: the next seat, for a rank it lacks."""

    def choose(self, view):
        lacking = view.own_counts.index(0)
        return ((view.seat + 1) % view.rules.players, lacking)

    def __repr__(self):
        return "LackingCPU()"


class FloatOpponent:
    """A ``SeatPlayer`` whose action is not an action at all."""

    def reset(self, seed):
        pass

    def act(self, turn):
        return 0.5

    def __repr__(self):
        return "FloatOpponent()"


def returns_a_float(observation, mask):
    """A callable opponent whose action is a float: refused, not rounded."""
    return float(np.flatnonzero(mask)[0])


@pytest.mark.parametrize(
    ("seat_2", "spec", "cause"),
    [
        (asks_for_a_rank_it_lacks, repr(asks_for_a_rank_it_lacks), IllegalAsk),
        (LackingCPU(), "LackingCPU()", IllegalAsk),
        (FloatOpponent(), "FloatOpponent()", InvalidAction),
        (returns_a_float, repr(returns_a_float), InvalidAction),
    ],
    ids=["callable", "cpu", "float", "callable-float"],
)
def test_an_opponents_illegal_ask_names_the_opponent_and_its_seat(seat_2, spec, cause):
    env = gym_env(seat_2)
    assert env.opponent_specs[1] == spec
    with pytest.raises(OpponentError) as caught:
        env.step(LEARNER_2S)
    error = caught.value
    assert not isinstance(error, IllegalAsk)  # not the learner's illegal action
    assert isinstance(error.__cause__, cause)
    assert (error.seat, error.opponent) == (2, spec)
    message = str(error)
    assert f"the opponent at seat 2 ({spec})" in message
    assert "not the learner's (seat 0)" in message
    assert "back as it was before this step" in message


def test_an_opponents_illegal_ask_leaves_the_env_exactly_as_before_the_step():
    broken = {"on": True}

    def seat_2(observation, mask):
        if broken["on"]:
            return asks_for_a_rank_it_lacks(observation, mask)
        return first_legal(observation, mask)

    env = gym_env(seat_2)
    untouched = copy.deepcopy(env)
    before = gym_state(env)
    hands = [env.aec.game.hand(seat) for seat in range(3)]
    with pytest.raises(OpponentError):
        env.step(LEARNER_2S)
    assert gym_state(env) == before
    assert [env.aec.game.hand(seat) for seat in range(3)] == hands
    assert env.aec.game.num_asks == 0 and env.aec.game.pool_cards()[:2] == ["3C", "4C"]
    # It plays on exactly as an env that never saw the failure, the reward of the aces
    # laid at the deal included.
    broken["on"] = False
    got, expected = env.step(LEARNER_2S), untouched.step(LEARNER_2S)
    assert np.array_equal(got[0], expected[0])
    assert got[1:4] == expected[1:4] and got[1] == 1.0
    assert got[4].keys() == expected[4].keys()
    assert all(np.array_equal(got[4][key], expected[4][key]) for key in got[4])
    assert gym_state(env) == gym_state(untouched)
    asks = [(e.asker, e.target, e.rank) for e in env.aec.game.events if e.kind == "ask"]
    assert asks[:3] == [(0, 1, rank("2")), (1, 2, rank("9")), (2, 0, rank("5"))]


def test_an_opponent_raising_leaves_the_env_as_before_and_names_it():
    def model_like(observation, mask):
        raise ValueError("model opponent chose illegal action 5")

    env = gym_env(model_like)
    before = gym_state(env)
    with pytest.raises(OpponentError, match=r"seat 2 .*raised ValueError.*action 5") as caught:
        env.step(LEARNER_2S)
    assert isinstance(caught.value.__cause__, ValueError)
    assert gym_state(env) == before


def test_the_env_is_usable_after_an_opponents_illegal_ask():
    calls = []

    def fails_once(observation, mask):
        calls.append(1)
        if len(calls) == 1:
            return asks_for_a_rank_it_lacks(observation, mask)
        return first_legal(observation, mask)

    env = gym_env(fails_once)
    with pytest.raises(OpponentError):
        env.step(LEARNER_2S)
    _, reward, terminated, truncated, info = env.step(LEARNER_2S)
    assert reward == 1.0 and not (terminated or truncated)
    assert info["illegal_action"] is False
    assert env.aec.game.current_player == 0 and env.action_masks().any()


class FailsAfter:
    """A random legal policy that turns illegal on its ``calls``-th call."""

    def __init__(self, calls: int, seed: int):
        self.calls = calls
        self.rng = random.Random(seed)

    def __call__(self, observation, mask):
        self.calls -= 1
        if self.calls == 0:
            return int(np.flatnonzero(mask == 0)[0])
        return int(self.rng.choice(np.flatnonzero(mask)))

    def __repr__(self):
        return "FailsAfter()"


@pytest.mark.parametrize(
    "rules",
    [
        Rules(players=4),
        Rules.preset("authors", players=3),
        Rules.preset("pairs", jokers=True, players=3),
        Rules(players=3, match_target=15),
    ],
    ids=["table", "authors", "pairs_jokers", "match"],
)
@pytest.mark.parametrize("calls", [1, 6, 20])
def test_an_opponent_failing_mid_game_leaves_the_env_as_before_the_step(rules, calls):
    # The learner (seat 0) moves first: the opponents make their first move in a step.
    env = GoFishEnv(rules=rules, opponents=FailsAfter(calls, seed=calls), seat=0)
    env.reset(seed=calls)
    rng = random.Random(calls)
    while True:
        before = gym_state(env)
        try:
            _, _, terminated, truncated, _ = env.step(
                int(rng.choice(np.flatnonzero(env.action_masks())))
            )
        except OpponentError:
            break
        assert not (terminated or truncated), "the opponent never failed"
    assert gym_state(env) == before
    env.opponents[0].policy.calls = -1  # legal from now on
    env.step(legal_action(env))


def test_an_opponent_failing_during_reset_names_it_and_reset_is_needed_again():
    env = GoFishEnv(rules=RULES, opponents=asks_for_a_rank_it_lacks, seat=2)
    with pytest.raises(OpponentError, match=r"seat 0 .*call reset\(\) again"):
        env.reset(seed=0, options={"game": opponent_position()})
    with pytest.raises(RuntimeError, match=r"call reset\(\)"):
        env.step(0)
    env.set_opponents(first_legal)
    env.reset(seed=0, options={"game": opponent_position()})
    env.step(legal_action(env))


@pytest.mark.parametrize(
    ("specs", "refusal"),
    [
        (["easy", "nope"], r"^opponents: unknown CPU level 'nope'"),
        (["easy", "model:nowhere.zip"], r"^opponents: model file not found: nowhere\.zip$"),
        (["easy"], r"^opponents: got 1 specs"),
    ],
)
def test_a_refused_set_opponents_changes_nothing(specs, refusal):
    env = gym_env(first_legal)
    before = (env.opponent_specs, env.opponent_labels, env.opponents, gym_state(env))
    with pytest.raises(ValueError, match=refusal):
        env.set_opponents(specs)
    assert (env.opponent_specs, env.opponent_labels, env.opponents, gym_state(env)) == before
    env.step(legal_action(env))
    env.reset(seed=1)  # the env plays on with the opponents it had


def test_an_opponent_set_in_mid_episode_is_named_from_the_next_reset():
    """set_opponents takes effect at the next reset: until then an error names the opponent
    that is playing, and pictures label it."""
    env = gym_env(seat_2=asks_for_a_rank_it_lacks)
    env.set_opponents(["hard", "hard"])
    assert env.seat_labels() == ["learner", "first_legal", "asks_for_a_rank_it_lacks"]
    with pytest.raises(OpponentError, match=r"seat 2 \(<function asks_for_a_rank") as error:
        for _ in range(50):
            env.step(legal_action(env))
    assert error.value.opponent.startswith("<function asks_for_a_rank_it_lacks")
    env.reset(seed=0)
    assert env.seat_labels() == ["learner", "hard CPU", "hard CPU"]
