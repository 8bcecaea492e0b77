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
import platform
import time
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
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
        self._keep_masks(range(self.num_envs), dones, infos)
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
        self._keep_masks(group, dones, infos)
        self.seconds += time.perf_counter() - start
        return observation, rewards, dones, infos

    def _keep_masks(self, group: range, dones, infos) -> None:
        """The masks of the envs in ``group`` from their step results (after an episode's
        end, from the next episode's reset info)."""
        reset_infos = self.venv.reset_infos
        for offset, index in enumerate(group):
            info = reset_infos[index] if dones[offset] else infos[offset]
            self._masks[index] = info["action_mask"]

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


def wait_for_count(counter, seen: int, seconds: float) -> None:
    """Watch a shared message counter for up to ``seconds`` until it passes ``seen``."""
    if counter.value == seen:
        deadline = time.perf_counter() + seconds
        while counter.value == seen and time.perf_counter() < deadline:
            os.sched_yield()  # a process with work to do on this core goes first


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
        wait_for_count(self.received, self.seen, self.spin_seconds)
        self.seen += 1
        return self.connection.recv()

    def send(self, message: Any) -> None:
        self.connection.send(message)
        self.sent.value += 1

    def close(self) -> None:
        self.connection.close()


class Mailbox:
    """One direction of a ``SharedMemoryConnection``: a message buffer in shared memory,
    the length of the message in it (-1: the message went through the pipe), a message
    counter, and a flag the receiver raises before it sleeps on the pipe (under ``lock``,
    so that the sender cannot miss it)."""

    def __init__(self, context, capacity: int = 1 << 16):
        self.buffer = context.RawArray("B", capacity)
        self.length = context.RawValue("q", 0)
        self.count = context.RawValue("Q", 0)
        self.sleeping = context.RawValue("B", 0)
        self.lock = context.Lock()


class SharedMemoryConnection:
    """A ``SpinningConnection`` whose messages travel through shared memory (``Mailbox``)
    instead of the pipe; the pipe only carries messages too big for the buffer and a
    wake-up call to a receiver that has gone to sleep. On this virtual machine each pipe
    read or write is a system call of about 10 us, and a step took four of them.

    For request and answer protocols such as SB3's worker loop: a message must be read
    before the next one is sent the same way. Relies on stores becoming visible in program
    order (x86-64); ``shared_memory_supported()`` says whether this machine is one."""

    def __init__(self, connection: Connection, spin_seconds: float, outbox: Mailbox, inbox):
        self.connection = connection
        self.spin_seconds = spin_seconds
        self.outbox = outbox
        self.inbox = inbox
        self.seen = 0
        self._out = memoryview(outbox.buffer).cast("B")
        self._in = memoryview(inbox.buffer).cast("B")

    def send(self, message: Any) -> None:
        box = self.outbox
        data = ForkingPickler.dumps(message)
        size = len(data)
        in_buffer = size <= len(self._out)
        if in_buffer:
            self._out[:size] = data
        box.length.value = size if in_buffer else -1
        box.count.value += 1  # a message in the buffer is complete before it is counted
        with box.lock:
            wake = box.sleeping.value
            box.sleeping.value = 0
        # Only now the pipe: the receiver cannot read a message before it is counted, or
        # go back to sleep before the flag is cleared.
        if not in_buffer:
            self.connection.send_bytes(data)
        elif wake:
            self.connection.send_bytes(b"")  # the receiver sleeps on the pipe

    def recv(self) -> Any:
        box = self.inbox
        count = box.count
        wait_for_count(count, self.seen, self.spin_seconds)
        piped = None
        if count.value == self.seen:
            with box.lock:
                asleep = count.value == self.seen
                box.sleeping.value = asleep
            if asleep:
                piped = self.connection.recv_bytes()  # a wake-up call, or a big message
        self.seen += 1
        if piped:
            return ForkingPickler.loads(piped)
        size = box.length.value
        if size < 0:
            return ForkingPickler.loads(self.connection.recv_bytes())
        return ForkingPickler.loads(self._in[:size])

    def close(self) -> None:
        self._out.release()
        self._in.release()
        self.connection.close()


def shared_memory_supported() -> bool:
    """Whether ``SharedMemoryConnection`` may be used here (x86-64 keeps stores in order)."""
    return platform.machine().lower() in ("x86_64", "amd64")


def _worker_through(
    connection_class, remote, parent_remote, env_fn_wrapper, spin_seconds, outbox, inbox
):
    # SB3's own worker loop, reading its commands through the given connection.
    connection = connection_class(remote, spin_seconds, outbox, inbox)
    subproc_vec_env._worker(connection, parent_remote, env_fn_wrapper)


class SpinningSubprocVecEnv(SubprocVecEnv):
    """SB3's ``SubprocVecEnv`` (same worker loop and commands, one process per
    environment) whose workers and parent watch a shared message counter for up to
    ``spin_seconds`` before they sleep on their pipes (``SpinningConnection``). Between
    the steps of a rollout both sides are usually back within that window, so a step costs
    no process wake-ups; during PPO's updates the workers sleep. ``worker_spin_seconds``
    (default: ``spin_seconds``) is the workers' own window; ``worker_cores``, if given, the
    set of cores the workers may run on; ``shared_memory`` sends the messages through
    shared memory (``SharedMemoryConnection``) rather than the pipes."""

    def __init__(
        self,
        env_fns,
        start_method: str | None = None,
        spin_seconds: float = 0.002,
        worker_spin_seconds: float | None = None,
        worker_cores: set[int] | None = None,
        shared_memory: bool = False,
    ):
        if shared_memory and not shared_memory_supported():
            raise ValueError(
                f"shared_memory: not supported on {platform.machine()!r}; allowed: x86-64"
            )
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
        # Per worker and direction: a message counter, or a shared-memory mailbox.
        if shared_memory:
            connection_class = SharedMemoryConnection
            channels = [(Mailbox(context), Mailbox(context)) for _ in env_fns]
        else:
            connection_class = SpinningConnection
            channels = [(context.RawValue("Q", 0), context.RawValue("Q", 0)) for _ in env_fns]
        self.remotes = [
            connection_class(parent, spin_seconds, to_worker, to_parent)
            for (parent, _), (to_worker, to_parent) in zip(pipes, channels, strict=True)
        ]
        self.work_remotes = [child for _, child in pipes]
        self.processes = []
        for (parent, child), env_fn, (to_worker, to_parent) in zip(
            pipes, env_fns, channels, strict=True
        ):
            args = (
                connection_class,
                child,
                parent,
                CloudpickleWrapper(env_fn),
                worker_spin_seconds,
                to_parent,
                to_worker,
            )
            process = context.Process(target=_worker_through, args=args, daemon=True)
            process.start()
            if worker_cores:
                os.sched_setaffinity(process.pid, worker_cores)
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
        shared_memory: bool | None = None,
    ):
        if worker_cores is None:
            worker_cores = default_worker_cores()
        if shared_memory is None:
            shared_memory = shared_memory_supported()
        self._in_flight: set[int] = set()  # before the workers are first asked anything
        super().__init__(
            env_fns, start_method, spin_seconds, worker_spin_seconds, worker_cores, shared_memory
        )
        self.reset_infos = list(self.reset_infos)

    def step_group_async(self, group: range, actions: np.ndarray) -> None:
        if self._in_flight.intersection(group):
            raise RuntimeError(f"step_group_async: envs {list(group)} are already stepping")
        for index, action in zip(group, actions, strict=True):
            if isinstance(action, np.integer):
                action = int(action)  # pickles in a third of the time of a numpy integer
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
        if len(observations) == 1 and isinstance(observations[0], np.ndarray):
            observation = observations[0][None]  # a fresh array: no need to copy it
        else:
            observation = _stack_obs(observations, self.observation_space)
        return observation, np.array(rewards), np.array(dones), infos

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
