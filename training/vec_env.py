"""A VecEnv wrapper for training: times the environment side and serves action masks.

MaskablePPO asks for the action masks (``env_method("action_masks")``) before every step;
with SubprocVecEnv that is a second round trip to every worker process per step. GoFishEnv
already puts the learner's mask in every info and reset info, so the masks are kept from
the step results instead.
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


def _spinning_worker(remote, parent_remote, env_fn_wrapper, spin_seconds, to_worker, to_parent):
    # SB3's own worker loop, reading its commands through a spinning pipe end.
    connection = SpinningConnection(remote, spin_seconds, sent=to_parent, received=to_worker)
    subproc_vec_env._worker(connection, parent_remote, env_fn_wrapper)


class SpinningSubprocVecEnv(SubprocVecEnv):
    """SB3's ``SubprocVecEnv`` (same worker loop and commands, one process per
    environment) whose workers and parent watch a shared message counter for up to
    ``spin_seconds`` before they sleep on their pipes (``SpinningConnection``). Between
    the steps of a rollout both sides are usually back within that window, so a step costs
    no process wake-ups; during PPO's updates the workers sleep."""

    def __init__(self, env_fns, start_method: str | None = None, spin_seconds: float = 0.002):
        self.spin_seconds = spin_seconds
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
            args = (child, parent, CloudpickleWrapper(env_fn), spin_seconds, *shared)
            process = context.Process(target=_spinning_worker, args=args, daemon=True)
            process.start()
            self.processes.append(process)
            child.close()
        self.remotes[0].send(("get_spaces", None))
        observation_space, action_space = self.remotes[0].recv()
        VecEnv.__init__(self, len(env_fns), observation_space, action_space)
