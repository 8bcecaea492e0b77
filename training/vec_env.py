"""Vectorized environments for training.

- ``TimedMaskedVecEnv`` times the environment side and serves the action masks. MaskablePPO
  asks for them (``env_method("action_masks")``) before every step; with SubprocVecEnv that
  is a second round trip to every worker process per step. GoFishEnv already puts the
  learner's mask in every info and reset info, so the masks are kept from the step results.
- ``SpinningSubprocVecEnv``: SB3's ``SubprocVecEnv`` whose pipe ends stay awake between
  steps.
- ``PipelinedSubprocVecEnv``: steps one group of its environments at a time, for
  ``training.pipelined_ppo.PipelinedMaskablePPO``.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import SubprocVecEnv, VecEnv, VecEnvWrapper, subproc_vec_env
from stable_baselines3.common.vec_env.base_vec_env import CloudpickleWrapper
from stable_baselines3.common.vec_env.subproc_vec_env import _stack_obs


class TimedMaskedVecEnv(VecEnvWrapper):
    """Keeps ``seconds``: the wall time spent waiting for the environments (and the
    opponents inside them); answers ``env_method("action_masks")`` from the infos."""

    def __init__(self, venv: VecEnv):
        super().__init__(venv)
        self.seconds = 0.0
        self._masks: list[np.ndarray] = []
        self._start = 0.0

    def reset(self):
        start = time.perf_counter()
        observation = self.venv.reset()
        self._masks = [info["action_mask"] for info in self.venv.reset_infos]
        self.seconds += time.perf_counter() - start
        return observation

    def step_async(self, actions) -> None:
        self._start = time.perf_counter()
        self.venv.step_async(actions)

    def step_wait(self):
        observation, rewards, dones, infos = self.venv.step_wait()
        reset_infos = self.venv.reset_infos
        self._masks = [
            (reset_infos[i] if done else infos[i])["action_mask"] for i, done in enumerate(dones)
        ]
        self.seconds += time.perf_counter() - self._start
        return observation, rewards, dones, infos

    def step_group_async(self, group: range, actions: np.ndarray) -> None:
        """Start a step of the environments in ``group`` only (``PipelinedSubprocVecEnv``)."""
        start = time.perf_counter()
        self.venv.step_group_async(group, actions)
        self.seconds += time.perf_counter() - start

    def step_group_wait(self, group: range):
        """The results of ``group``'s step, as ``step_wait`` gives them for every env."""
        start = time.perf_counter()
        observation, rewards, dones, infos = self.venv.step_group_wait(group)
        reset_infos = self.venv.reset_infos
        for offset, index in enumerate(group):
            info = reset_infos[index] if dones[offset] else infos[offset]
            self._masks[index] = info["action_mask"]
        self.seconds += time.perf_counter() - start
        return observation, rewards, dones, infos

    def group_action_masks(self, group: range) -> np.ndarray:
        """The current action masks of the environments in ``group``."""
        return np.stack([self._masks[index] for index in group])

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks" and indices is None and self._masks:
            return list(self._masks)
        start = time.perf_counter()
        result = self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)
        self.seconds += time.perf_counter() - start
        return result


class SpinningConnection:
    """A pipe end whose ``recv`` first watches, for up to ``spin_seconds``, a counter in
    shared memory that the other end raises after each message, and only then reads the
    pipe (or sleeps on it, once the window has passed). On a virtual machine waking a
    sleeping process costs hundreds of microseconds; a process still watching answers at
    once. Watching memory rather than the pipe keeps the spinning off the pipe's lock,
    which the sender needs. Both ends must be ``SpinningConnection``s over the same pair of
    counters, swapped."""

    def __init__(self, connection: Connection, spin_seconds: float, sent, received):
        self.connection = connection
        self.spin_seconds = spin_seconds
        self.sent = sent  # raised by this end after each message it sends
        self.received = received  # raised by the other end
        self.seen = 0

    def recv(self) -> Any:
        received = self.received
        if received.value == self.seen:
            deadline = time.perf_counter() + self.spin_seconds
            while received.value == self.seen and time.perf_counter() < deadline:
                os.sched_yield()  # a process with work to do on this core goes first
        self.seen += 1
        return self.connection.recv()

    def send(self, message: Any) -> None:
        self.connection.send(message)
        self.sent.value += 1

    def close(self) -> None:
        self.connection.close()


def _spinning_worker(
    remote, parent_remote, env_fn_wrapper, spin_seconds, to_worker, to_parent, cores=None
):
    if cores:
        os.sched_setaffinity(0, cores)
    # SB3's own worker loop, reading its commands through a spinning pipe end.
    connection = SpinningConnection(remote, spin_seconds, sent=to_parent, received=to_worker)
    subproc_vec_env._worker(connection, parent_remote, env_fn_wrapper)


class SpinningSubprocVecEnv(SubprocVecEnv):
    """SB3's ``SubprocVecEnv`` (same worker loop and commands, one process per
    environment) whose workers and parent watch a shared message counter for up to
    ``spin_seconds`` before they sleep on their pipes (``SpinningConnection``). Between
    the steps of a rollout both sides are usually back within that window, so a step costs
    no process wake-ups; during PPO's updates the workers sleep. ``worker_spin_seconds``
    (default: ``spin_seconds``) is the workers' own window; ``worker_cores``, if given, the
    set of cores the workers may run on."""

    def __init__(
        self,
        env_fns,
        start_method: str | None = None,
        spin_seconds: float = 0.002,
        worker_spin_seconds: float | None = None,
        worker_cores: set[int] | None = None,
    ):
        self.spin_seconds = spin_seconds
        if worker_spin_seconds is None:
            worker_spin_seconds = spin_seconds
        self.waiting = False
        self.closed = False
        if start_method is None:
            forkserver = "forkserver" in mp.get_all_start_methods()
            start_method = "forkserver" if forkserver else "spawn"
        context = mp.get_context(start_method)
        pipes = [context.Pipe() for _ in env_fns]
        # Per worker, a message counter for each direction.
        counters = [(context.RawValue("Q", 0), context.RawValue("Q", 0)) for _ in env_fns]
        self.remotes = [
            SpinningConnection(parent, spin_seconds, sent=to_worker, received=to_parent)
            for (parent, _), (to_worker, to_parent) in zip(pipes, counters, strict=True)
        ]
        self.work_remotes = [child for _, child in pipes]
        self.processes = []
        for (parent, child), env_fn, shared in zip(pipes, env_fns, counters, strict=True):
            args = (
                child,
                parent,
                CloudpickleWrapper(env_fn),
                worker_spin_seconds,
                *shared,
                worker_cores,
            )
            process = context.Process(target=_spinning_worker, args=args, daemon=True)
            process.start()
            self.processes.append(process)
            child.close()
        self.remotes[0].send(("get_spaces", None))
        observation_space, action_space = self.remotes[0].recv()
        VecEnv.__init__(self, len(env_fns), observation_space, action_space)


class PipelinedSubprocVecEnv(SpinningSubprocVecEnv):
    """A ``SpinningSubprocVecEnv`` that can also step a group of its environments at a time
    (``step_group_async``, ``step_group_wait``), so that the learner picks one group's
    actions while the other group steps (``PipelinedMaskablePPO``).

    The workers are kept off the learner's core (``worker_cores``; by default every core
    this process may use but the first, when there are at least two): a worker waiting for
    its group's actions spins for up to ``worker_spin_seconds`` (so it answers without a
    process wake-up), and spinning on the learner's core would slow the network down.
    """

    def __init__(
        self,
        env_fns,
        start_method: str | None = None,
        spin_seconds: float = 0.002,
        worker_spin_seconds: float = 0.002,
        worker_cores: set[int] | None = None,
    ):
        if worker_cores is None:
            worker_cores = default_worker_cores()
        self.worker_cores = worker_cores
        super().__init__(env_fns, start_method, spin_seconds, worker_spin_seconds, worker_cores)
        self.reset_infos = list(self.reset_infos)
        self._in_flight: set[int] = set()

    def step_group_async(self, group: range, actions: np.ndarray) -> None:
        if self._in_flight.intersection(group):
            raise RuntimeError(f"step_group_async: envs {list(group)} are already stepping")
        for index, action in zip(group, actions, strict=True):
            self.remotes[index].send(("step", action))
        self._in_flight.update(group)
        self.waiting = True

    def step_group_wait(self, group: range):
        if not self._in_flight.issuperset(group):
            raise RuntimeError(f"step_group_wait: envs {list(group)} were not all stepped")
        results = [self.remotes[index].recv() for index in group]
        self._in_flight.difference_update(group)
        self.waiting = bool(self._in_flight)
        observations, rewards, dones, infos, reset_infos = zip(*results, strict=True)
        for index, reset_info in zip(group, reset_infos, strict=True):
            self.reset_infos[index] = reset_info
        return (
            _stack_obs(observations, self.observation_space),
            np.stack(rewards),
            np.stack(dones),
            infos,
        )

    def step_async(self, actions: np.ndarray) -> None:
        self.step_group_async(range(self.num_envs), actions)

    def step_wait(self):
        return self.step_group_wait(range(self.num_envs))

    def reset(self):
        observation = super().reset()
        self.reset_infos = list(self.reset_infos)
        return observation

    def close(self) -> None:
        if not self.closed:
            for index in sorted(self._in_flight):  # answers not yet read
                self.remotes[index].recv()
            self._in_flight.clear()
            self.waiting = False
        super().close()

    def _get_target_remotes(self, indices):
        # env_method, get_attr, set_attr: a command sent now would read a step's answer.
        if self._in_flight:
            raise RuntimeError(
                f"envs {sorted(self._in_flight)} are stepping: call step_group_wait first"
            )
        return super()._get_target_remotes(indices)


def default_worker_cores() -> set[int] | None:
    """Every core this process may run on but the lowest, which is left to the learner;
    None (no restriction) with a single core."""
    cores = sorted(os.sched_getaffinity(0))
    return set(cores[1:]) if len(cores) > 1 else None
