"""A VecEnv wrapper for training: times the environment side and serves action masks.

MaskablePPO asks for the action masks (``env_method("action_masks")``) before every step;
with SubprocVecEnv that is a second round trip to every worker process per step. GoFishEnv
already puts the learner's mask in every info and reset info, so the masks are kept from
the step results instead.
"""

from __future__ import annotations

import time

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper


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
