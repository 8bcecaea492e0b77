"""Vectorized environments for training, from SB3's stock parts.

- ``ReportEnvErrors`` wraps each environment where it runs (in this process or a worker):
  an exception inside the env or an opponent does not kill the worker silently; it comes
  back in the step's info, and the learner's side raises ``EnvFailure`` naming the env.
- ``CheckedSubprocVecEnv`` is SB3's ``SubprocVecEnv``; when a worker process dies (killed,
  out of memory) the next call raises ``EnvFailure`` naming the env and how it died, and
  ``close`` ends every worker.
- ``TimedMaskedVecEnv`` times the environment side and serves the action masks from the
  step results. MaskablePPO asks for them (``env_method("action_masks")``) before every
  step; GoFishEnv already puts the learner's mask in every info and reset info.
"""

from __future__ import annotations

import signal
import time
import traceback

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import SubprocVecEnv, VecEnv, VecEnvWrapper

ERROR_KEY = "env_error"
TRACEBACK_KEY = "env_error_traceback"


class EnvFailure(RuntimeError):
    """An environment failed: ``index`` is its place in the vec env, ``detail`` what
    happened (the original exception, or how its worker process ended)."""

    def __init__(self, index: int, detail: str, trace: str = ""):
        super().__init__(f"environment {index} failed: {detail}")
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
    """SB3's ``SubprocVecEnv``; a dead worker gives ``EnvFailure`` with its env index."""

    def _dead_worker(self) -> EnvFailure:
        for index, process in enumerate(self.processes):
            process.join(timeout=0.2)
            if process.exitcode is not None:
                code = process.exitcode
                how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
                return EnvFailure(index, f"its worker process (pid {process.pid}) ended, {how}")
        return EnvFailure(-1, "a worker process stopped answering")

    def _checked(self, call, *args, **kwargs):
        try:
            return call(*args, **kwargs)
        except (EOFError, ConnectionError) as error:
            failure = self._dead_worker()
            self.terminate()
            raise failure from error

    def step_async(self, actions: np.ndarray) -> None:
        self._checked(super().step_async, actions)

    def step_wait(self):
        return self._checked(super().step_wait)

    def reset(self):
        return self._checked(super().reset)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        return self._checked(
            super().env_method, method_name, *method_args, indices=indices, **method_kwargs
        )

    def get_attr(self, attr_name, indices=None):
        return self._checked(super().get_attr, attr_name, indices)

    def terminate(self) -> None:
        """End every worker now (after a failure: the pipes can no longer be trusted).
        SIGKILL, since workers ignore SIGTERM (``ignore_interrupts_in_worker``)."""
        for process in self.processes:
            if process.is_alive():
                process.kill()
        for process in self.processes:
            process.join(timeout=5)
        self.closed = True

    def close(self) -> None:
        if self.closed:
            return
        try:
            super().close()
        except (EOFError, ConnectionError):
            self.terminate()


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
