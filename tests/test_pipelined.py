"""Pipelined rollouts: group stepping in the vec env, and PipelinedMaskablePPO's rollouts
recording each environment's own trajectory with the policy's values and log-probabilities."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import DummyVecEnv

from gofish_env.gym_env import GoFishEnv
from training import train
from training.pipelined_ppo import PipelinedMaskablePPO
from training.vec_env import PipelinedSubprocVecEnv, TimedMaskedVecEnv, default_worker_cores

pytestmark = pytest.mark.slow

SEED = 5


def make_env(seat: int) -> GoFishEnv:
    return GoFishEnv(players=3, opponents="easy", seat=seat)


def builders(count: int):
    return [lambda k=k: make_env(k) for k in range(count)]


def test_group_steps_give_exactly_what_full_steps_give():
    """Alternating groups (one stepping while the other is picked) changes nothing in any
    environment's results, episode ends and automatic resets included."""
    count, steps = 3, 150
    groups = (range(0, 1), range(1, 3))

    def actions_for(masks, rng):
        return np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])

    dummy = TimedMaskedVecEnv(DummyVecEnv(builders(count)))
    piped = TimedMaskedVecEnv(PipelinedSubprocVecEnv(builders(count)))
    try:
        for venv in (dummy, piped):
            venv.seed(SEED)
        assert np.array_equal(dummy.reset(), piped.reset())
        rng = np.random.default_rng(0)
        ends = 0
        for _ in range(steps):
            actions = actions_for(dummy.env_method("action_masks"), rng)
            expected = dummy.step(actions)
            for group in groups:
                piped.step_group_async(group, actions[group.start : group.stop])
            results = [piped.step_group_wait(group) for group in groups]
            observation = np.concatenate([result[0] for result in results])
            rewards = np.concatenate([result[1] for result in results])
            dones = np.concatenate([result[2] for result in results])
            infos = [info for result in results for info in result[3]]
            np.testing.assert_array_equal(observation, expected[0])
            np.testing.assert_array_equal(rewards, expected[1])
            np.testing.assert_array_equal(dones, expected[2])
            for got, want in zip(infos, expected[3], strict=True):
                terminal = want.get("terminal_observation")
                if terminal is not None:
                    np.testing.assert_array_equal(got["terminal_observation"], terminal)
            for index in range(count):
                np.testing.assert_array_equal(
                    piped.group_action_masks(range(index, index + 1))[0],
                    dummy.env_method("action_masks")[index],
                )
            ends += int(dones.sum())
        assert ends > 0
    finally:
        dummy.close()
        piped.close()


def test_commands_are_refused_while_a_group_is_stepping():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # SB3 asks the workers for render_mode at once
        venv = PipelinedSubprocVecEnv(builders(2))
    try:
        assert venv.render_mode is None
        venv.seed(SEED)
        venv.reset()
        mask = venv.env_method("action_masks", indices=[0])[0]
        venv.step_group_async(range(0, 1), [int(np.flatnonzero(mask)[0])])
        with pytest.raises(RuntimeError, match=r"envs \[0\] are stepping"):
            venv.get_attr("seat")
        with pytest.raises(RuntimeError, match="already stepping"):
            venv.step_group_async(range(0, 1), [0])
        with pytest.raises(RuntimeError, match="were not all stepped"):
            venv.step_group_wait(range(0, 2))
        venv.step_group_wait(range(0, 1))
        assert venv.get_attr("seat") == [0, 1]
        # An answer still unread when closing is read, not left to block the workers.
        mask = venv.env_method("action_masks", indices=[1])[0]
        venv.step_group_async(range(1, 2), [int(np.flatnonzero(mask)[0])])
    finally:
        venv.close()
    assert all(not process.is_alive() for process in venv.processes)


def test_workers_run_on_their_cores_only():
    allowed = sorted(os.sched_getaffinity(0))
    default = default_worker_cores()
    if len(allowed) > 1:
        assert default == set(allowed[1:])  # the lowest core is left to the learner
    else:
        assert default is None
    cores = {allowed[-1]}
    venv = PipelinedSubprocVecEnv(builders(2), worker_cores=cores)
    try:
        assert [os.sched_getaffinity(process.pid) for process in venv.processes] == [cores] * 2
    finally:
        venv.close()


class CountingCallback(BaseCallback):
    """Counts steps; at ``switch_at`` changes every env's opponents (a command to the
    workers mid-rollout); at ``stop_at`` stops the rollout."""

    def __init__(self, switch_at: int = -1, stop_at: int = -1):
        super().__init__()
        self.switch_at, self.stop_at = switch_at, stop_at
        self.seen_timesteps: list[int] = []
        self.specs = None

    def _on_step(self) -> bool:
        self.seen_timesteps.append(self.num_timesteps)
        if self.n_calls == self.switch_at:
            self.training_env.env_method("set_opponents", "random")
            self.specs = self.training_env.get_attr("opponent_specs")
        return self.n_calls != self.stop_at


def pipelined_model(count: int, n_steps: int) -> PipelinedMaskablePPO:
    venv = TimedMaskedVecEnv(PipelinedSubprocVecEnv(builders(count)))
    return PipelinedMaskablePPO(  # the model's seed seeds the envs: SEED + index
        "MlpPolicy",
        venv,
        n_steps=n_steps,
        batch_size=32,
        n_epochs=1,
        policy_kwargs={"net_arch": [32, 32]},
        seed=SEED,
        device="cpu",
    )


def test_pipelined_rollout_records_each_environments_own_trajectory():
    count, n_steps = 3, 64
    model = pipelined_model(count, n_steps)
    try:
        callback = CountingCallback()
        _, callback = model._setup_learn(count * n_steps, callback)
        buffer = model.rollout_buffer
        assert model.collect_rollouts(model.env, callback, buffer, n_steps)
    finally:
        model.env.close()
    assert model.num_timesteps == count * n_steps
    assert callback.seen_timesteps == [count * (k + 1) for k in range(n_steps)]

    # Replaying each environment's recorded actions gives the recorded observations, masks,
    # rewards and episode starts.
    episodes = 0
    for index in range(count):
        env = make_env(index)
        observation, info = env.reset(seed=SEED + index)
        start = True
        for t in range(n_steps):
            np.testing.assert_array_equal(buffer.observations[t, index], observation)
            np.testing.assert_array_equal(buffer.action_masks[t, index], info["action_mask"])
            assert buffer.episode_starts[t, index] == start
            action = int(buffer.actions[t, index, 0])
            assert info["action_mask"][action]
            observation, reward, terminated, truncated, info = env.step(action)
            assert buffer.rewards[t, index] == pytest.approx(reward)
            start = terminated or truncated
            if start:
                episodes += 1
                observation, info = env.reset()
    assert episodes >= count  # every environment finished a game within the rollout

    # The values and log-probabilities are the policy's own for those observations and asks.
    flat = lambda array: torch.as_tensor(array.reshape(count * n_steps, -1))  # noqa: E731
    with torch.no_grad():
        values, log_probs, _ = model.policy.evaluate_actions(
            flat(buffer.observations),
            flat(buffer.actions).flatten(),
            action_masks=buffer.action_masks.reshape(count * n_steps, -1),
        )
    np.testing.assert_allclose(values.numpy().ravel(), buffer.values.ravel(), atol=1e-5)
    np.testing.assert_allclose(log_probs.numpy(), buffer.log_probs.ravel(), atol=1e-5)


def test_callbacks_may_command_the_workers_and_stop_the_rollout():
    model = pipelined_model(2, 32)
    try:
        callback = CountingCallback(switch_at=5, stop_at=9)
        _, callback = model._setup_learn(64, callback)
        assert not model.collect_rollouts(model.env, callback, model.rollout_buffer, 32)
        assert callback.specs == [["random", "random"]] * 2
        assert model.num_timesteps == 2 * 9
        # Nothing is left in flight: the workers answer at once.
        assert model.env.get_attr("seat") == [0, 1]
    finally:
        model.env.close()


def test_pipelined_ppo_needs_a_vec_env_that_steps_groups():
    model = PipelinedMaskablePPO(
        "MlpPolicy", DummyVecEnv(builders(2)), n_steps=16, batch_size=16, device="cpu"
    )
    with pytest.raises(ValueError, match="needs at least 2 environments in a vec env"):
        model.learn(32)


def test_train_uses_the_pipelined_loop_by_default(tmp_path):
    assert train.parse_args([]).vec_env == "pipelined"
    argv = ["--timesteps", "256", "--n-steps", "64", "--batch-size", "64", "--n-epochs", "1"]
    argv += ["--net-arch", "16", "--eval-every", "1000", "--eval-deals", "1"]
    argv += ["--eval-cpus", "random", "--final-deals", "1", "--no-progress"]
    report = train.main([*argv, "--out", str(tmp_path)])
    assert report["args"]["vec_env"] == "pipelined"
    assert report["timing"]["algorithm"] == "PipelinedMaskablePPO"
    single = train.main([*argv, "--envs", "1", "--out", str(tmp_path / "one")])
    assert single["timing"]["algorithm"] == "MaskablePPO"  # one env: nothing to overlap
    saved = next(tmp_path.glob("*/model.zip"))
    assert isinstance(MaskablePPO.load(saved, device="cpu"), MaskablePPO)


def test_games_cut_by_the_ask_limit_are_bootstrapped_with_their_value():
    """A truncated episode's last reward gets gamma times the value of where it was cut,
    as in SB3's own rollout loop (SB3 #633)."""
    count, n_steps, max_asks = 2, 40, 9

    def short_game(seat: int) -> GoFishEnv:
        return GoFishEnv(players=3, opponents="easy", seat=seat, max_asks=max_asks)

    venv = TimedMaskedVecEnv(
        PipelinedSubprocVecEnv([lambda k=k: short_game(k) for k in range(count)])
    )
    model = PipelinedMaskablePPO(
        "MlpPolicy",
        venv,
        n_steps=n_steps,
        batch_size=40,
        policy_kwargs={"net_arch": [16]},
        seed=SEED,
        device="cpu",
    )
    try:
        _, callback = model._setup_learn(count * n_steps, CountingCallback())
        assert model.collect_rollouts(model.env, callback, model.rollout_buffer, n_steps)
    finally:
        model.env.close()
    buffer = model.rollout_buffer
    cut = 0
    for index in range(count):
        env = short_game(index)
        observation, _ = env.reset(seed=SEED + index)
        for t in range(n_steps):
            np.testing.assert_array_equal(buffer.observations[t, index], observation)
            observation, reward, terminated, truncated, _ = env.step(
                int(buffer.actions[t, index, 0])
            )
            if truncated:
                cut += 1
                with torch.no_grad():
                    value = model.policy.predict_values(torch.as_tensor(observation[None]))
                reward += model.gamma * value.item()
            assert buffer.rewards[t, index] == pytest.approx(reward, abs=1e-5)
            if terminated or truncated:
                observation, _ = env.reset()
    assert cut > 0
