"""MaskablePPO with pipelined rollouts: the network and the environments work at once.

SB3 collects a rollout in lock step: the network picks every environment's action, then
waits while every environment steps (the opponents' moves included), then picks again. On
2 cores one of them idles at each moment. ``PipelinedMaskablePPO`` splits the
environments into two groups; while one group's worker processes step, the network picks
the other group's actions:

    pick A_0 | send A_0 | pick B_0 | wait A_0 | send B_0 | pick A_1 | wait B_0 | callbacks
             | send A_1 | pick B_1 | wait A_1 | ...

Each environment's trajectory is the one the lock-step loop would record for the same
actions: the same observations, masks, rewards, episode starts, values and log-probabilities
go into the same rollout buffer, and PPO's update is SB3's own. Only the order in which the
actions are sampled differs (one group, then the other), so a seed gives a different (but
again repeatable) run than the lock-step loop. Callbacks run once per step of every
environment, with nothing in flight, so they may call ``env_method`` as usual.

Needs ``TimedMaskedVecEnv`` over ``PipelinedSubprocVecEnv`` with at least 2 environments.
"""

from __future__ import annotations

import numpy as np
import torch as th
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import obs_as_tensor
from stable_baselines3.common.vec_env import VecEnv


class PipelinedMaskablePPO(MaskablePPO):
    """``MaskablePPO`` whose rollouts overlap action selection with the environments'
    steps (see the module docstring). Everything else is MaskablePPO's."""

    def collect_rollouts(
        self,
        env: VecEnv,
        callback: BaseCallback,
        rollout_buffer: MaskableRolloutBuffer,
        n_rollout_steps: int,
        use_masking: bool = True,
    ) -> bool:
        if not use_masking:
            raise ValueError("PipelinedMaskablePPO: rollouts always use the action masks")
        if env.num_envs < 2 or not hasattr(env, "step_group_async"):
            raise ValueError(
                "PipelinedMaskablePPO: needs at least 2 environments in a vec env that steps "
                f"groups (TimedMaskedVecEnv over PipelinedSubprocVecEnv); got {env!r} with "
                f"{env.num_envs} env(s)"
            )
        assert self._last_obs is not None, "No previous observation was provided"
        self.policy.set_training_mode(False)
        rollout_buffer.reset()
        callback.on_rollout_start()

        n_envs = env.num_envs
        first, second = range(0, n_envs // 2), range(n_envs // 2, n_envs)
        new_obs = np.empty_like(self._last_obs)
        rewards = np.zeros(n_envs, dtype=np.float32)
        dones = np.zeros(n_envs, dtype=bool)
        infos: list[dict] = [{} for _ in range(n_envs)]

        def receive(group: range) -> None:
            observation, group_rewards, group_dones, group_infos = env.step_group_wait(group)
            new_obs[group.start : group.stop] = observation
            rewards[group.start : group.stop] = group_rewards
            dones[group.start : group.stop] = group_dones
            infos[group.start : group.stop] = group_infos

        picks = self._pick(env, first, self._last_obs[first.start : first.stop])
        env.step_group_async(first, picks[0])
        for n_steps in range(n_rollout_steps):
            last_step = n_steps + 1 == n_rollout_steps
            # The second group's actions while the first group steps, and so on.
            second_picks = self._pick(env, second, self._last_obs[second.start : second.stop])
            receive(first)
            env.step_group_async(second, second_picks[0])
            next_picks = (
                None if last_step else self._pick(env, first, new_obs[first.start : first.stop])
            )
            receive(second)

            actions, values, log_probs, action_masks = (
                np.concatenate([picks[0], second_picks[0]]),
                th.cat([picks[1], second_picks[1]]),
                th.cat([picks[2], second_picks[2]]),
                np.concatenate([picks[3], second_picks[3]]),
            )
            self.num_timesteps += n_envs
            callback.update_locals(locals())
            if not callback.on_step():
                return False
            self._update_info_buffer(infos, dones)
            if isinstance(self.action_space, spaces.Discrete):
                actions = actions.reshape(-1, 1)

            # An episode cut by a time limit is bootstrapped with its value (SB3 #633).
            for index, done in enumerate(dones):
                if (
                    done
                    and infos[index].get("terminal_observation") is not None
                    and infos[index].get("TimeLimit.truncated", False)
                ):
                    terminal = self.policy.obs_to_tensor(infos[index]["terminal_observation"])[0]
                    with th.no_grad():
                        terminal_value = self.policy.predict_values(terminal)[0]
                    rewards[index] += self.gamma * terminal_value.item()

            rollout_buffer.add(
                self._last_obs,
                actions,
                rewards,
                self._last_episode_starts,
                values,
                log_probs,
                action_masks=action_masks,
            )
            self._last_obs = new_obs.copy()
            self._last_episode_starts = dones.copy()
            if next_picks is not None:
                picks = next_picks
                env.step_group_async(first, picks[0])

        with th.no_grad():
            values = self.policy.predict_values(obs_as_tensor(new_obs, self.device))
        rollout_buffer.compute_returns_and_advantage(last_values=values, dones=dones)
        callback.on_rollout_end()
        return True

    def _pick(
        self, env: VecEnv, group: range, observation: np.ndarray
    ) -> tuple[np.ndarray, th.Tensor, th.Tensor, np.ndarray]:
        """Actions, values, log-probabilities and masks for one group's observations."""
        action_masks = env.group_action_masks(group)
        with th.no_grad():
            obs_tensor = obs_as_tensor(observation, self.device)
            actions, values, log_probs = self.policy(obs_tensor, action_masks=action_masks)
        return actions.cpu().numpy(), values, log_probs, action_masks
