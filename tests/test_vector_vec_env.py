"""``VectorVecEnv``: every training environment in one batch of the compiled engine, as an
SB3 ``VecEnv`` that MaskablePPO trains on in one process."""

from __future__ import annotations

import copy
import pickle
import re
import warnings

import numpy as np
import pytest
from gymnasium.wrappers import TimeLimit
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.evaluation import evaluate_policy
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import VecNormalize
from test_vec_env import assert_same, play

from gofish_env import Rules
from gofish_env.aec_env import InvalidAction
from gofish_training.vec_env import EnvFailure, TimedMaskedVecEnv, VectorVecEnv

pytestmark = pytest.mark.torch

STEPS = 300  # random legal steps a record of ``play`` takes


def test_maskable_ppo_trains_on_it_in_one_process():
    venv = VectorVecEnv(4, Rules(players=3), opponents="mix:random,easy,normal,hard")
    assert is_masking_supported(venv)
    venv.reset()
    masks = get_action_masks(venv)
    assert masks.shape == (4, 26) and masks.dtype == bool and masks.any(axis=1).all()
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    model.learn(256)
    assert model.num_timesteps == 256
    assert len(model.ep_info_buffer) > 0  # episode infos reach SB3's logger


def test_same_seed_same_steps_and_episode_ends_are_reported():
    kwargs = {"rules": Rules(players=4), "opponents": "mix:random,hard"}
    first = play(VectorVecEnv(3, **kwargs), STEPS)
    assert_same(first, play(VectorVecEnv(3, **kwargs), STEPS))
    assert any(item is not None for item in first[4::4])  # terminal observations
    venv = VectorVecEnv(2, Rules(players=2), opponents="random")
    venv.reset()
    chooser = np.random.default_rng(1)
    for _ in range(200):
        actions = [chooser.choice(np.flatnonzero(m)) for m in venv.env_method("action_masks")]
        _, _, dones, infos = venv.step(np.array(actions))
        for index in np.flatnonzero(dones):
            info = infos[index]
            assert info["episode"]["l"] > 0 and "TimeLimit.truncated" in info
            assert info["terminal_observation"].shape == (venv.observation_space.shape[0],)
            assert venv.reset_infos[index]["action_mask"].any()


def test_sb3s_evaluation_reads_its_episodes_as_a_monitors_raw_returns():
    """Each env reports its episodes as in a Monitor: ``evaluate_policy`` counts their raw
    returns (whole catches here), even behind a ``VecNormalize``, and does not warn."""
    venv = VecNormalize(VectorVecEnv(2, Rules(players=3), opponents="random"), gamma=0.995)
    assert venv.env_is_wrapped(Monitor) == [True, True]
    assert venv.env_is_wrapped(TimeLimit) == [False, False]
    model = MaskablePPO("MlpPolicy", venv, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "Evaluation environment is not wrapped with a ``Monitor``")
        returns, _ = evaluate_policy(model, venv, n_eval_episodes=4, return_episode_rewards=True)
    assert len(returns) == 4
    assert all(float(value).is_integer() for value in returns)  # catches, not normalized


def test_the_rules_compiled_in_change_no_step():
    kwargs = {"rules": Rules(players=4), "opponents": "mix:random,hard"}
    compiled = VectorVecEnv(3, **kwargs, compile_rules=True)
    assert type(compiled.learners.batch.kernel_constants).__name__ == "CompiledConstants"
    assert_same(play(VectorVecEnv(3, **kwargs), STEPS), play(compiled, STEPS))


def test_masks_after_an_episode_end_are_the_next_episodes():
    venv = TimedMaskedVecEnv(VectorVecEnv(3, Rules(players=2), opponents="easy"))
    venv.reset()
    chooser = np.random.default_rng(2)
    for _ in range(150):
        masks = venv.env_method("action_masks")
        assert all(mask.any() for mask in masks)
        actions = np.array([chooser.choice(np.flatnonzero(mask)) for mask in masks])
        venv.step(actions)
        assert np.array_equal(np.stack(venv.env_method("action_masks")), venv.venv.learners.masks())
    assert venv.seconds > 0


def test_opponents_change_through_env_method_and_failures_name_the_env():
    venv = VectorVecEnv(2, Rules(players=2), opponents="random", seat=0)
    venv.env_method("set_opponents", "mix:easy,hard")
    assert venv.get_attr("opponent_specs") == [["mix:easy,hard"]] * 2

    def broken(observation, mask):
        raise RuntimeError("the snapshot vanished")

    venv.env_method("set_opponents", broken)
    with pytest.raises(EnvFailure, match=r"snapshot vanished") as failed:
        venv.reset()
        for _ in range(5):
            venv.step(np.array([np.flatnonzero(m)[0] for m in venv.env_method("action_masks")]))
    # Whichever game reaches the broken opponent first (seat 1 may open either game) is the
    # one named, the same in both places.
    named = re.search(r"^environment (\d) failed: .*\benv (\d): ", str(failed.value))
    assert named is not None and named[1] == named[2] and named[1] in {"0", "1"}
    assert "Traceback" in failed.value.trace


def test_after_a_failed_step_or_reset_it_refuses_to_step_until_a_reset_completes():
    # Seat 1, the opponent, opens every game: a reset reaches it too.
    venv = VectorVecEnv(2, Rules(players=2, first_player=1), opponents="random", seat=0)
    failing = [False]

    def flaky(observation, mask):
        if failing[0]:
            raise RuntimeError("the snapshot vanished")
        return int(np.flatnonzero(mask)[0])

    def first_legal():
        return np.array([np.flatnonzero(m)[0] for m in venv.env_method("action_masks")])

    refused = np.zeros(2, np.int64)  # refused before it is read
    with pytest.raises(RuntimeError, match=r"^step\(\): reset\(\) has not been called"):
        venv.step(refused)
    venv.env_method("set_opponents", flaky)
    venv.seed(4)
    venv.reset()
    failing[0] = True
    with pytest.raises(EnvFailure, match="snapshot vanished"):
        for _ in range(100):
            venv.step(first_legal())
    # Part of the batch may have moved (undoing a batch step is not offered): refused.
    with pytest.raises(RuntimeError, match=r"^step\(\): the last step\(\) failed part way"):
        venv.step(refused)
    with pytest.raises(EnvFailure, match="snapshot vanished"):
        venv.reset()
    with pytest.raises(RuntimeError, match=r"^step\(\): reset\(\) did not complete"):
        venv.step(refused)
    failing[0] = False
    venv.reset()
    venv.step(first_legal())


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ([999, 0], "actions: got 999 for env 0; allowed: integers from 0 to 25"),
        ([0, -1], "actions: got -1 for env 1; allowed: integers from 0 to 25"),
        ([1.9, 0.0], "actions: got shape (2,), dtype float64; allowed: 2 integers from 0"),
        ([0, 1, 2], "actions: got shape (3,), dtype int64; allowed: 2 integers from 0"),
        ([True, False], "actions: got shape (2,), dtype bool"),
    ],
)
def test_actions_that_are_not_actions_are_refused_by_env_before_anything_changes(actions, message):
    venv = VectorVecEnv(2, Rules(players=3), seat=0)
    venv.seed(0)
    venv.reset()
    before = [array.copy() for array in venv.learners.batch.state]
    with pytest.raises(InvalidAction, match=re.escape(message)):
        venv.step(np.array(actions))
    for array, was in zip(venv.learners.batch.state, before, strict=True):
        assert np.array_equal(array, was)
    legal = [np.flatnonzero(m)[0] for m in venv.env_method("action_masks")]
    venv.step(np.array(legal)[:, None])  # (N, 1), as some callers give them, is taken


@pytest.mark.parametrize("penalty", [float("nan"), float("inf"), "-1"])
def test_an_illegal_reward_that_is_no_finite_number_is_refused(penalty):
    with pytest.raises(ValueError, match=r"^illegal_reward: got"):
        VectorVecEnv(2, Rules(players=2), illegal_reward=penalty)


def test_it_refuses_pickling_and_copying_saying_what_to_do():
    venv = VectorVecEnv(2, Rules(players=3))
    for copier in (pickle.dumps, copy.deepcopy, copy.copy):
        with pytest.raises(TypeError, match=r"^VectorVecEnv cannot be pickled or copied: .*seed"):
            copier(venv)
