"""The environments in other RL libraries, as docs/ecosystem.md says (the ecosystem extra)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
import supersuit
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import gofish_env
from gofish_env import Rules

pytestmark = pytest.mark.torch  # TorchRL and Tianshou run on torch


def test_torchrl_checks_the_specs_and_rolls_out_masked_random_games():
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "tested with pettingzoo 1.24.3"
        env = PettingZooWrapper(
            gofish_env.env(players=4, illegal_action="raise"), use_mask=True, seed=3
        )
    check_env_specs(env)
    rollout = env.rollout(1500, break_when_any_done=False)  # an illegal ask would raise
    assert rollout["next", "done"].sum() >= 5  # whole games were played and reset
    info = rollout["player_0", "info"]
    assert info["winners"].shape == (1500, 1, 4)
    assert set(info.keys()) >= {"catches", "tiebreak_points", "reward_catch", "reward_win"}


def test_a_tianshou_collector_plays_games_with_shared_wins():
    from tianshou.algorithm.multiagent.marl import MultiAgentPolicy
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    def make():  # "family" rules share the win on a tie in catches
        return PettingZooEnv(gofish_env.env(rules=Rules.preset("family", players=3)))

    envs = DummyVectorEnv([make, make])
    envs.seed(0)
    probe = make()
    random_policy = MARLRandomDiscreteMaskedOffPolicyAlgorithm.Policy
    policy = MultiAgentPolicy({agent: random_policy(probe.action_space) for agent in probe.agents})
    buffer = VectorReplayBuffer(30_000, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Tianshou's note on summarising 2-D rewards
        stats = Collector(policy, envs, buffer).collect(n_episode=40, reset_before_collect=True)
    assert stats.n_collected_episodes == 40
    winners = buffer.sample(0)[0].info.winners
    assert winners.shape[1] == 3
    assert (winners.sum(axis=1) > 1).any()  # a shared win went through the collector


SUPERSUIT_WORKS = {
    "clip_reward_v0": lambda env: supersuit.clip_reward_v0(env, lower_bound=-1, upper_bound=1),
    "pad_action_space_v0": supersuit.pad_action_space_v0,
}
SUPERSUIT_REFUSES_DICT = {
    "dtype_v0": lambda env: supersuit.dtype_v0(env, np.float32),
    "flatten_v0": supersuit.flatten_v0,
    "frame_stack_v1": lambda env: supersuit.frame_stack_v1(env, 2),
    "normalize_obs_v0": supersuit.normalize_obs_v0,
    "pad_observations_v0": supersuit.pad_observations_v0,
    "agent_indicator_v0": supersuit.agent_indicator_v0,
}
SUPERSUIT_BREAKS_THE_MASK = {
    "delay_observations_v0": lambda env: supersuit.delay_observations_v0(env, 1),
    "sticky_actions_v0": lambda env: supersuit.sticky_actions_v0(env, 0.25),
}


def play_first_legal(env, steps: int = 300) -> None:
    env.reset(seed=1)
    for _ in env.agent_iter(steps):
        observation, _, terminated, truncated, _ = env.last()
        done = terminated or truncated
        env.step(None if done else int(np.flatnonzero(observation["action_mask"])[0]))


@pytest.mark.parametrize("name", sorted(SUPERSUIT_WORKS))
def test_supersuit_wrappers_that_keep_the_dict_observation_work(name):
    play_first_legal(SUPERSUIT_WORKS[name](gofish_env.env(players=3, illegal_action="raise")))


@pytest.mark.parametrize("name", sorted(SUPERSUIT_REFUSES_DICT))
def test_supersuit_observation_wrappers_refuse_the_dict_observation(name):
    with pytest.raises((AssertionError, AttributeError)):
        play_first_legal(SUPERSUIT_REFUSES_DICT[name](gofish_env.env(players=3)))


@pytest.mark.parametrize("name", sorted(SUPERSUIT_BREAKS_THE_MASK))
def test_supersuit_wrappers_that_delay_or_repeat_break_the_mask(name):
    env = SUPERSUIT_BREAKS_THE_MASK[name](gofish_env.env(players=3, illegal_action="raise"))
    with pytest.raises(gofish_env.IllegalAsk):
        play_first_legal(env, steps=2000)


def test_turn_based_aec_to_parallel_plays_whole_games():
    env = turn_based_aec_to_parallel(gofish_env.env(players=3, illegal_action="raise"))
    rng = np.random.default_rng(0)
    games = 0
    observations, _ = env.reset(seed=0)
    for _ in range(2000):
        actions = {}
        for agent in env.agents:
            legal = np.flatnonzero(observations[agent]["action_mask"])
            # Every agent gives an action; only the one to move (a non-zero mask) counts.
            actions[agent] = int(rng.choice(legal)) if len(legal) else 0
        observations, *_ = env.step(actions)
        if not env.agents:
            games += 1
            observations, _ = env.reset(seed=games)
    assert games >= 10


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_make_vec_masks_around_the_autoreset_step(mode):
    from gymnasium.vector import AutoresetMode

    autoreset = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}
    envs = gym.make_vec(
        "GoFish-v0",
        num_envs=2,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": autoreset[mode]},
        players=3,
        opponents="random",
    )
    _, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    empty_masks = ends = 0
    for _ in range(300):
        actions = []
        for mask in info["action_mask"]:
            legal = np.flatnonzero(mask)
            empty_masks += not len(legal)
            actions.append(int(rng.choice(legal)) if len(legal) else 0)
        _, _, terminated, truncated, info = envs.step(np.array(actions))
        ends += int((terminated | truncated).sum())
    assert ends >= 10
    # NEXT_STEP (Gymnasium's default): after an episode ends, the env's next step only
    # resets it, and the mask given for that step is all zeros. SAME_STEP resets at once.
    assert empty_masks == (ends if mode == "next_step" else 0)


def test_shimmy_runs_openspiel_go_fish_beside_ours():
    from shimmy import OpenSpielCompatibilityV0

    theirs = OpenSpielCompatibilityV0(game_name="go_fish", config={"players": 4})
    ours = gofish_env.env(players=4)
    rng = np.random.default_rng(0)
    for env, mask_of in (
        (theirs, lambda observation, info: info["action_mask"]),
        (ours, lambda observation, info: observation["action_mask"]),
    ):
        env.reset(seed=0)
        for _ in env.agent_iter(5000):
            observation, _, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(mask_of(observation, info)))))
        assert not env.agents  # both games ran to their end
