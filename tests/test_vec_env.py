"""Training's vec envs: SB3's stock ones, with failures that name the env and end cleanly."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from gofish_env.gym_env import GoFishEnv
from gofish_training.vec_env import (
    CheckedSubprocVecEnv,
    EnvFailure,
    ReportEnvErrors,
    TimedMaskedVecEnv,
)

pytestmark = pytest.mark.torch


def builders(count: int = 2, **kwargs):
    return [
        lambda k=k: ReportEnvErrors(GoFishEnv(players=3, opponents="easy", seat=k, **kwargs))
        for k in range(count)
    ]


class FailingEnv(GoFishEnv):
    """Raises on its ``fail_at``-th step."""

    def __init__(self, fail_at: int, **kwargs):
        super().__init__(**kwargs)
        self.fail_at = fail_at
        self.steps = 0

    def step(self, action):
        self.steps += 1
        if self.steps == self.fail_at:
            raise ValueError(f"broken on step {self.steps}")
        return super().step(action)


def failing_builders(failing_index: int, fail_at: int = 5):
    def build(k: int):
        if k == failing_index:
            return ReportEnvErrors(FailingEnv(fail_at, players=3, opponents="easy", seat=k))
        return ReportEnvErrors(GoFishEnv(players=3, opponents="easy", seat=k))

    return [lambda k=k: build(k) for k in range(3)]


def play(venv, steps: int = 200, seed: int = 11) -> list:
    """Seeded random legal play; everything the vec env returned."""
    venv.seed(seed)
    record = [venv.reset().copy()]
    rng = np.random.default_rng(0)
    for _ in range(steps):
        masks = venv.env_method("action_masks")
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
        observation, rewards, dones, infos = venv.step(actions)
        record += [observation.copy(), rewards.copy(), dones.copy()]
        record += [info.get("terminal_observation") for info in infos]
    venv.close()
    return record


def assert_same(first: list, second: list) -> None:
    """Two records of ``play``: the same arrays, and no terminal observation where the
    other has none."""
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        if a is None or b is None:
            assert a is None and b is None
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.slow
def test_checked_subproc_vec_env_steps_exactly_like_dummy_and_subproc():
    dummy = play(TimedMaskedVecEnv(DummyVecEnv(builders(3))))
    assert_same(play(TimedMaskedVecEnv(CheckedSubprocVecEnv(builders(3)))), dummy)
    assert_same(play(SubprocVecEnv(builders(3))), dummy)
    # Episodes ended within the run: terminal observations and automatic resets compared.
    assert sum(item.sum() for item in dummy[3::6]) > 0


def test_report_env_errors_turns_an_exception_into_an_ended_episode_that_stays_broken():
    env = ReportEnvErrors(FailingEnv(2, players=3, opponents="easy"))
    _, info = env.reset(seed=0)
    assert "env_error" not in info
    mask = info["action_mask"]
    _, _, terminated, _, info = env.step(int(np.flatnonzero(mask)[0]))
    assert not terminated and "env_error" not in info
    _, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert terminated and not truncated and reward == 0.0
    assert info["env_error"] == "ValueError: broken on step 2"
    assert "Traceback" in info["env_error_traceback"]
    assert not info["action_mask"].any()
    _, info = env.reset()
    assert info["env_error"] == "ValueError: broken on step 2"
    assert env.unwrapped.steps == 2  # the inner env is not touched again


@pytest.mark.parametrize("vec_env", [DummyVecEnv, CheckedSubprocVecEnv])
def test_an_exception_inside_an_env_names_the_env_and_the_exception(vec_env):
    venv = TimedMaskedVecEnv(vec_env(failing_builders(failing_index=1)))
    venv.seed(0)
    venv.reset()
    rng = np.random.default_rng(0)
    with pytest.raises(EnvFailure) as failure:
        for _ in range(100):
            masks = venv.env_method("action_masks")
            venv.step(np.array([rng.choice(np.flatnonzero(mask)) for mask in masks]))
    venv.close()
    assert failure.value.index == 1
    assert str(failure.value) == "environment 1 failed: ValueError: broken on step 5"
    assert "in step" in failure.value.trace


@pytest.mark.slow
def test_a_killed_worker_names_its_env_and_every_worker_ends():
    venv = TimedMaskedVecEnv(CheckedSubprocVecEnv(builders(3)))
    venv.seed(0)
    venv.reset()
    workers = venv.venv.processes
    os.kill(workers[2].pid, signal.SIGKILL)
    workers[2].join(timeout=10)
    with pytest.raises(EnvFailure) as failure:
        masks = venv.env_method("action_masks")
        venv.step(np.array([np.flatnonzero(mask)[0] for mask in masks]))
    assert failure.value.index == 2
    assert "killed by SIGKILL" in str(failure.value)
    assert not any(process.is_alive() for process in workers)
    venv.close()  # closing after a failure is quiet


# Every public VecEnv method, called once worker 1 of 2 is dead (images: rgb_array envs).
EVERY_METHOD = {
    "reset": lambda venv: venv.reset(),
    "step": lambda venv: venv.step(np.zeros(2, np.int64)),
    "step_async": lambda venv: venv.step_async(np.zeros(2, np.int64)),
    "env_method": lambda venv: venv.env_method("action_masks"),
    "get_attr": lambda venv: venv.get_attr("render_mode"),
    "set_attr": lambda venv: venv.set_attr("note", "set by the learner"),
    "has_attr": lambda venv: venv.has_attr("action_masks"),
    "env_is_wrapped": lambda venv: venv.env_is_wrapped(ReportEnvErrors),
    "get_images": lambda venv: venv.get_images(),
    "render": lambda venv: venv.render(),
    "seed": lambda venv: venv.seed(3),
    "set_options": lambda venv: venv.set_options({"deal": 1}),
}


def assert_worker_1_was_killed(failure: EnvFailure, venv: CheckedSubprocVecEnv, pid: int):
    assert failure.index == 1
    assert str(failure) == (
        f"environment 1 failed: its worker process (pid {pid}) ended, killed by SIGKILL"
    )
    assert not any(process.is_alive() for process in venv.processes)


@pytest.mark.slow
@pytest.mark.parametrize("method", EVERY_METHOD)
def test_every_call_after_a_worker_was_killed_names_its_env(method):
    venv = CheckedSubprocVecEnv(builders(2, render_mode="rgb_array"))
    venv.reset()
    victim = venv.processes[1]
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(timeout=10)
    with pytest.raises(EnvFailure) as failure:
        EVERY_METHOD[method](venv)
    assert_worker_1_was_killed(failure.value, venv, victim.pid)
    with pytest.raises(EnvFailure) as again:  # every later call: the same failure
        venv.reset()
    assert str(again.value) == str(failure.value)
    venv.close()  # quiet


@pytest.mark.slow
def test_a_worker_killed_before_reading_its_request_names_its_env():
    """The moment of a flaky failure: the learner's request is in the pipe, unread, when
    the worker is killed, so the learner's read meets a reset connection, not EOF."""
    venv = CheckedSubprocVecEnv(builders(2))
    venv.reset()
    victim = venv.processes[1]
    os.kill(victim.pid, signal.SIGSTOP)  # it cannot read the request
    venv.step_async(np.zeros(2, np.int64))
    os.kill(victim.pid, signal.SIGKILL)
    with pytest.raises(EnvFailure) as failure:
        venv.step_wait()
    assert isinstance(failure.value.__cause__, ConnectionResetError)
    assert_worker_1_was_killed(failure.value, venv, victim.pid)


@pytest.mark.slow
def test_closing_with_a_dead_worker_is_quiet_and_ends_every_worker():
    venv = CheckedSubprocVecEnv(builders(2))
    venv.reset()
    os.kill(venv.processes[0].pid, signal.SIGKILL)
    venv.close()
    assert not any(process.is_alive() for process in venv.processes)


def broken_builder():
    raise RuntimeError("no table today")


@pytest.mark.slow
def test_a_worker_that_cannot_build_its_env_names_its_env():
    with pytest.raises(EnvFailure) as failure:
        CheckedSubprocVecEnv([broken_builder, *builders(1)])  # 0 is asked for the spaces
    assert failure.value.index == 0
    assert str(failure.value).endswith("ended, exit code 1")


@pytest.mark.slow
def test_workers_ignore_ctrl_c_so_the_learner_can_save_first():
    from gofish_env.rules import Rules
    from gofish_training.train import Args, make_env

    args = Args(players=3, opponents="random")
    venv = CheckedSubprocVecEnv([make_env(args, Rules(players=3), k, 0) for k in range(2)])
    venv.reset()
    for process in venv.processes:
        os.kill(process.pid, signal.SIGINT)
        os.kill(process.pid, signal.SIGTERM)
    masks = venv.env_method("action_masks")  # every worker still answers
    venv.step(np.array([np.flatnonzero(mask)[0] for mask in masks]))
    assert all(process.is_alive() for process in venv.processes)
    venv.close()
    assert not any(process.is_alive() for process in venv.processes)


def test_vec_env_serves_the_same_masks_as_the_envs():
    from stable_baselines3.common.vec_env import DummyVecEnv

    from gofish_training.vec_env import TimedMaskedVecEnv

    envs = [lambda k=k: GoFishEnv(players=3, opponents="random", seat=k) for k in range(2)]
    venv = TimedMaskedVecEnv(DummyVecEnv(envs))
    venv.seed(4)
    venv.reset()
    rng = np.random.default_rng(0)
    episodes_ended = 0
    for _ in range(300):
        served = venv.env_method("action_masks")
        direct = venv.venv.env_method("action_masks")
        assert all(np.array_equal(a, b) for a, b in zip(served, direct, strict=True))
        actions = [rng.choice(np.flatnonzero(mask)) for mask in served]
        _, _, dones, _ = venv.step(np.array(actions))
        episodes_ended += int(dones.sum())
    assert episodes_ended > 0  # masks after an automatic reset were checked too
    assert venv.seconds > 0
