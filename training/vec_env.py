"""Vectorized environments for training, from SB3's stock parts.

- ``ReportEnvErrors`` wraps each environment where it runs (in this process or a worker):
  an exception inside the env or an opponent does not kill the worker silently; it comes
  back in the step's info, and the learner's side raises ``EnvFailure`` naming the env.
- ``CheckedSubprocVecEnv`` is SB3's ``SubprocVecEnv``; when a worker process dies (killed,
  out of memory) the next call that reaches it, whichever it is, raises ``EnvFailure``
  naming the env and how it died, and every worker is ended.
- ``VectorVecEnv`` runs every environment in one batch of the compiled engine
  (``gofish_env.vector``): one process, compiled opponents.
- ``TimedMaskedVecEnv`` times the environment side and serves the action masks from the
  step results. MaskablePPO asks for them (``env_method("action_masks")``) before every
  step; GoFishEnv already puts the learner's mask in every info and reset info.
"""

from __future__ import annotations

import contextlib
import signal
import time
import traceback
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess

import gymnasium as gym
import numpy as np
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import SubprocVecEnv, VecEnv, VecEnvWrapper

ERROR_KEY = "env_error"
TRACEBACK_KEY = "env_error_traceback"
# A worker whose pipe broke is ending; the forkserver reports its exit code soon after.
WORKER_EXIT_SECONDS = 10.0


class EnvFailure(RuntimeError):
    """An environment failed: ``index`` is its place in the vec env (-1: not known),
    ``detail`` what happened (the original exception, or how its worker process ended)."""

    def __init__(self, index: int, detail: str, trace: str = ""):
        where = f"environment {index}" if index >= 0 else "the vector environment"
        super().__init__(f"{where} failed: {detail}")
        self.index = index
        self.detail = detail
        self.trace = trace


class ReportEnvErrors(gym.Wrapper):
    """Turns an exception in ``step`` or ``reset`` into an ended episode whose info holds
    the error (``info["env_error"]``: the exception in one line), so that it reaches
    the learner through any vec env (``info["env_error_traceback"]`` has its traceback).
    After an error the env stays broken: every later call
    reports the same error without touching the inner env."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.error = ""
        self.trace = ""
        self._blank = np.zeros(env.observation_space.shape, env.observation_space.dtype)

    def _failed(self, error: BaseException) -> dict:
        self.error = " ".join(traceback.format_exception_only(error)).strip()
        self.trace = "".join(traceback.format_exception(error))
        return self._error_info()

    def _error_info(self) -> dict:
        mask = np.zeros(self.action_space.n, dtype=bool)
        return {ERROR_KEY: self.error, TRACEBACK_KEY: self.trace, "action_mask": mask}

    def reset(self, **kwargs):
        if self.error:
            return self._blank.copy(), self._error_info()
        try:
            return self.env.reset(**kwargs)
        except Exception as error:
            return self._blank.copy(), self._failed(error)

    def step(self, action):
        if self.error:
            return self._blank.copy(), 0.0, True, False, self._error_info()
        try:
            return self.env.step(action)
        except Exception as error:
            return self._blank.copy(), 0.0, True, False, self._failed(error)


def ignore_interrupts_in_worker() -> None:
    """In a worker process, leave SIGINT and SIGTERM to the learner: Ctrl-C reaches the
    whole process group, and the learner saves a checkpoint before it closes the workers
    (SB3's worker loop would otherwise end on KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


class CheckedSubprocVecEnv(SubprocVecEnv):
    """SB3's ``SubprocVecEnv``; a dead worker gives ``EnvFailure`` with its env index.

    Every message to and from the workers goes through a ``WorkerPipe``, so whichever call
    meets the dead worker (SB3's, the learner's, ours) raises the same failure. After a
    failure every worker is ended and every later call raises it again."""

    def __init__(self, env_fns, start_method: str | None = None):
        self.failure: EnvFailure | None = None
        try:
            super().__init__(env_fns, start_method)  # asks the workers for their spaces
        except (EOFError, ConnectionError) as error:  # a worker could not build its env
            raise self.worker_failed(self._ended_worker(WORKER_EXIT_SECONDS)) from error
        self.remotes = tuple(
            WorkerPipe(self, index, remote) for index, remote in enumerate(self.remotes)
        )

    def _ended_worker(self, timeout: float) -> int:
        """The index of a worker that has ended (-1: none within ``timeout`` seconds)."""
        if all(process.is_alive() for process in self.processes):
            wait([process.sentinel for process in self.processes], timeout)
        for index, process in enumerate(self.processes):
            if not process.is_alive():
                return index
        return -1

    def worker_failed(self, index: int) -> EnvFailure:
        """The failure of worker ``index``, whose pipe broke (-1: not known which): it is
        ending, and its exit code comes through its sentinel a moment later (from the
        forkserver); wait for it, then end every worker. After that, the same failure."""
        if self.failure is None:
            detail = "a worker process stopped answering"
            if index >= 0:
                process = self.processes[index]
                process.join(timeout=WORKER_EXIT_SECONDS)
                detail = f"its worker process (pid {process.pid}) ended, {how_it_ended(process)}"
            self.failure = EnvFailure(index, detail)
            self.terminate()
        return EnvFailure(self.failure.index, self.failure.detail)

    def _check_workers(self) -> None:
        """For the calls that only prepare the next reset: a worker known to have ended
        raises ``EnvFailure`` now."""
        if self.failure is not None:
            raise self.worker_failed(self.failure.index)
        if not self.closed:
            ended = self._ended_worker(timeout=0)
            if ended >= 0:
                raise self.worker_failed(ended)

    def seed(self, seed: int | None = None):
        self._check_workers()
        return super().seed(seed)

    def set_options(self, options=None) -> None:
        self._check_workers()
        super().set_options(options)

    def terminate(self) -> None:
        """End every worker now (after a failure: the pipes can no longer be trusted).
        SIGKILL, since workers ignore SIGTERM (``ignore_interrupts_in_worker``)."""
        for process in self.processes:
            if process.is_alive():
                process.kill()
        for process in self.processes:
            process.join(timeout=5)
        for remote in self.remotes:
            remote.close()
        self.closed = True

    def close(self) -> None:
        if self.closed:
            return
        with contextlib.suppress(EnvFailure):  # a worker had died: every worker is ended now
            super().close()


def how_it_ended(process: BaseProcess) -> str:
    code = process.exitcode
    if code is None:
        return "its exit code is not known"
    return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"


class WorkerPipe:
    """The learner's end of one worker's pipe (a ``multiprocessing`` connection): a broken
    pipe (EOF, reset, broken: the worker died) raises ``EnvFailure`` naming the env."""

    def __init__(self, venv: CheckedSubprocVecEnv, index: int, connection: Connection):
        self.venv = venv
        self.index = index
        self.connection = connection

    def _checked(self, call, *args):
        if self.venv.failure is not None:  # every worker was ended: say why again
            raise self.venv.worker_failed(self.index)
        try:
            return call(*args)
        except (EOFError, ConnectionError) as error:
            raise self.venv.worker_failed(self.index) from error

    def send(self, message) -> None:
        self._checked(self.connection.send, message)

    def recv(self):
        return self._checked(self.connection.recv)

    def close(self) -> None:
        self.connection.close()


class TimedMaskedVecEnv(VecEnvWrapper):
    """Keeps ``seconds``: the wall time spent waiting for the environments (and the
    opponents inside them); answers ``env_method("action_masks")`` from the infos; raises
    ``EnvFailure`` when an environment reports an error (``ReportEnvErrors``)."""

    def __init__(self, venv: VecEnv):
        super().__init__(venv)
        self.seconds = 0.0
        self._masks: list[np.ndarray] = []
        self._start = 0.0

    def reset(self):
        start = time.perf_counter()
        observation = self.venv.reset()
        self._check(self.venv.reset_infos)
        self._masks = [info["action_mask"] for info in self.venv.reset_infos]
        self.seconds += time.perf_counter() - start
        return observation

    def step_async(self, actions) -> None:
        self._start = time.perf_counter()
        self.venv.step_async(actions)

    def step_wait(self):
        observation, rewards, dones, infos = self.venv.step_wait()
        self._check(infos)
        reset_infos = self.venv.reset_infos
        for index, info in enumerate(infos):
            # After an episode's end the mask is the next episode's, from its reset info.
            self._masks[index] = (reset_infos[index] if dones[index] else info)["action_mask"]
        self.seconds += time.perf_counter() - self._start
        return observation, rewards, dones, infos

    @staticmethod
    def _check(infos) -> None:
        for index, info in enumerate(infos):
            if ERROR_KEY in info:
                raise EnvFailure(index, info[ERROR_KEY], info[TRACEBACK_KEY])

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks" and indices is None and self._masks:
            return list(self._masks)
        start = time.perf_counter()
        result = self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)
        self.seconds += time.perf_counter() - start
        return result


class VectorVecEnv(VecEnv):
    """Every environment in one batch of the compiled engine (``gofish_env.vector``), as an
    SB3 ``VecEnv``: one process, no workers, nothing to synchronise.

    Each environment is a ``GoFishEnv`` (``seat``, ``opponents``, ``reward`` and
    ``illegal_reward`` as there); an episode's end resets it in the same step, with
    ``info["terminal_observation"]``, ``info["TimeLimit.truncated"]`` and, as SB3's
    ``Monitor`` adds them, ``info["episode"]`` (so ``env_is_wrapped(Monitor)`` is True, and
    SB3's ``evaluate_policy`` counts raw returns). ``env_method("action_masks")`` gives the
    masks MaskablePPO reads; ``env_method("set_opponents", spec)`` replaces the opponents
    (self-play snapshots). An error inside raises ``EnvFailure`` naming the environment.
    ``compile_rules=True`` compiles the rules into the engine (``VectorGame``'s option).
    """

    def __init__(
        self,
        num_envs: int,
        rules,
        opponents="random",
        seat="random",
        reward="catches",
        illegal_reward: float = -1.0,
        compile_rules: bool = False,
    ):
        from gofish_env.rewards import finite_number
        from gofish_env.vector.learner import LearnerBatch

        self.illegal_reward = finite_number(illegal_reward, "illegal_reward")
        self.learners = LearnerBatch(
            num_envs, rules, opponents, seat, reward, compile_rules=compile_rules
        )
        self.render_mode = None
        batch = self.learners.batch
        size = batch.layout.size
        super().__init__(
            num_envs,
            gym.spaces.Box(0.0, 1.0, (size,), np.float32),
            gym.spaces.Discrete(batch.constants.actions),
        )
        self._seed: int | None = None
        self._actions = np.zeros(num_envs, np.int64)
        self._returns = np.zeros(num_envs)
        self._lengths = np.zeros(num_envs, np.int64)
        self._start = time.time()
        self._failure: str | None = "reset() has not been called"

    def __reduce_ex__(self, protocol):
        raise TypeError(
            "VectorVecEnv cannot be pickled or copied: its games live in compiled (numba) "
            "structures that are not copied. Build a new one with the same arguments and "
            "seed() it."
        )

    def __reduce__(self):
        return self.__reduce_ex__(None)

    def __deepcopy__(self, memo):
        return self.__reduce_ex__(None)

    def __copy__(self):
        return self.__reduce_ex__(None)

    def seed(self, seed: int | None = None):
        self._seed = seed
        return [None if seed is None else seed + index for index in range(self.num_envs)]

    def reset(self):
        learners = self.learners
        if self._seed is not None:
            learners.seed(self._seed)
            self._seed = None
        self._failure = "reset() did not complete"
        self._guarded(learners.start, np.arange(self.num_envs))
        self._failure = None
        self._returns[:] = 0.0
        self._lengths[:] = 0
        self.reset_infos = self._info_dicts(learners.infos())
        return learners.observations()

    def step_async(self, actions) -> None:
        """Check the actions (as ``GoFishEnv`` checks each: integers from 0 to the last
        action; ``InvalidAction`` naming the env, before anything changes), then keep them
        for ``step_wait``."""
        from gofish_env.aec_env import InvalidAction

        array = np.asarray(actions)
        count, size = self.num_envs, self.action_space.n
        if array.shape not in ((count,), (count, 1)) or array.dtype.kind not in "iu":
            raise InvalidAction(
                f"actions: got shape {array.shape}, dtype {array.dtype}; allowed: {count} "
                f"integers from 0 to {size - 1}, one per env"
            )
        array = array.reshape(count).astype(np.int64)
        outside = (array < 0) | (array >= size)
        if outside.any():
            env = int(np.flatnonzero(outside)[0])
            raise InvalidAction(
                f"actions: got {array[env]} for env {env}; allowed: integers from 0 to "
                f"{size - 1} (the action space)"
            )
        self._actions = array

    def step_wait(self):
        if self._failure is not None:
            raise RuntimeError(f"step(): {self._failure}; call reset() first")
        # Undoing a batch step is not offered: a step that fails part way leaves the batch
        # half-stepped, and the env refuses to go on from it until reset.
        self._failure = "the last step() failed part way and left the batch half-stepped"
        observations, rewards, dones, infos = self._step()
        self._failure = None
        return observations, rewards, dones, infos

    def _step(self):
        learners = self.learners
        everyone = np.ones(self.num_envs, bool)
        illegal = self._guarded(learners.act, self._actions, everyone, False)
        terminated, truncated = learners.terminated(), learners.truncated()
        rewards = np.where(illegal, self.illegal_reward, learners.rewards).astype(np.float32)
        learners.rewards[:] = 0.0
        observations = learners.observations()
        infos = self._info_dicts(learners.infos())
        learners.components[:] = 0.0
        self._returns += rewards
        self._lengths += 1
        dones = terminated | truncated
        if dones.any():
            games = np.flatnonzero(dones)
            elapsed = round(time.time() - self._start, 6)
            for game in games.tolist():
                info = infos[game]
                info["terminal_observation"] = observations[game].copy()
                info["TimeLimit.truncated"] = bool(truncated[game] and not terminated[game])
                info["episode"] = {
                    "r": round(float(self._returns[game]), 6),
                    "l": int(self._lengths[game]),
                    "t": elapsed,
                }
            self._returns[games] = 0.0
            self._lengths[games] = 0
            self._guarded(learners.start, games)
            observations[games] = learners.observations(games)
            fresh = self._info_dicts(learners.infos())
            for game in games.tolist():
                self.reset_infos[game] = fresh[game]
        return observations, rewards, dones, infos

    def _guarded(self, call, *args):
        try:
            return call(*args)
        except Exception as error:
            index = int(getattr(error, "env", -1))
            detail = " ".join(traceback.format_exception_only(error)).strip()
            raise EnvFailure(index, detail, traceback.format_exc()) from error

    def _info_dicts(self, arrays: dict) -> list[dict]:
        infos = []
        for index in range(self.num_envs):
            info = {}
            for key, value in arrays.items():
                item = value[index]
                info[key] = item.copy() if isinstance(item, np.ndarray) else item.item()
            infos.append(info)
        return infos

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        count = len(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.learners.masks()
            return [masks[index] for index in self._get_indices(indices)]
        if method_name == "set_opponents":
            if indices is not None and count != self.num_envs:
                raise ValueError("set_opponents: the vector env changes every env's opponents")
            self.learners.set_opponents(*method_args, **method_kwargs)
            return [None] * count
        raise AttributeError(f"VectorVecEnv has no env method {method_name!r}")

    def get_attr(self, attr_name, indices=None):
        values = {
            "opponent_specs": self.learners.opponent_specs,
            "action_masks": self.learners.masks,
            "rules": self.learners.rules,
            "render_mode": None,
        }
        if attr_name not in values:
            raise AttributeError(f"VectorVecEnv has no attribute {attr_name!r}")
        return [values[attr_name]] * len(self._get_indices(indices))

    def set_attr(self, attr_name, value, indices=None) -> None:
        raise AttributeError(f"VectorVecEnv cannot set {attr_name!r}; use env_method")

    def env_is_wrapped(self, wrapper_class, indices=None):
        # Each env reports its episodes as one in SB3's Monitor does (info["episode"]): for
        # SB3's evaluate_policy, a Monitor, which counts raw returns behind a VecNormalize.
        return [issubclass(Monitor, wrapper_class)] * len(self._get_indices(indices))

    def close(self) -> None:
        pass
