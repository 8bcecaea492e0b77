"""Imitation before reinforcement: start the learner from a scripted CPU's play.

``collect_demonstrations`` seats a teacher CPU in the learner's seat of ``GoFishEnv`` and
records what the learner would have seen (observation, action mask) with the teacher's
ask and the discounted return that followed. ``pretrain`` fits a MaskablePPO policy to them
by supervised learning: the policy head to the teacher's asks (cross-entropy over the legal
actions), the value head to the returns, so that PPO starts from the teacher's play with a
value function that already knows what its states are worth.

    python -m training.train --imitate expert --imitate-games 3000 --opponents hard
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from rich.progress import track
from sb3_contrib import MaskablePPO

from gofish_env.gym_env import GoFishEnv
from gofish_env.opponents import make_opponent


@dataclass
class Demonstrations:
    observations: np.ndarray  # float32 (n, observation size)
    masks: np.ndarray  # bool (n, actions)
    actions: np.ndarray  # int64 (n,)
    returns: np.ndarray  # float32 (n,): discounted reward from that step to the end

    def __len__(self) -> int:
        return len(self.actions)


def collect_demonstrations(
    env: GoFishEnv, teacher: str, games: int, gamma: float, seed: int, progress: bool = False
) -> Demonstrations:
    """Play ``games`` episodes of ``env`` with the ``teacher`` CPU in the learner's seat."""
    agent = make_opponent(teacher)
    observations, masks, actions, returns = [], [], [], []
    for game in track(range(games), "demonstrations", disable=not progress):
        observation, _ = env.reset(seed=seed + game)
        agent.reset(seed + game)
        rewards = []
        done = False
        while not done:
            action = agent.act(env.aec, env.seat)
            observations.append(observation)
            masks.append(env.action_masks())
            actions.append(action)
            observation, reward, terminated, truncated, _ = env.step(action)
            rewards.append(reward)
            done = terminated or truncated
        discounted, episode_returns = 0.0, []
        for reward in reversed(rewards):
            discounted = reward + gamma * discounted
            episode_returns.append(discounted)
        returns.extend(reversed(episode_returns))
    return Demonstrations(
        np.array(observations, np.float32),
        np.array(masks, bool),
        np.array(actions, np.int64),
        np.array(returns, np.float32),
    )


def pretrain(
    model: MaskablePPO,
    demos: Demonstrations,
    epochs: int,
    batch_size: int = 256,
    learning_rate: float = 1e-3,
    seed: int = 0,
    progress: bool = False,
) -> list[dict[str, float]]:
    """Fit the model's policy and value heads to ``demos`` (Adam, its step size falling
    linearly from ``learning_rate`` to zero over the epochs); returns each epoch's mean
    losses and how often the policy's most likely action is the teacher's."""
    policy = model.policy
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    # The step size falls linearly to zero over the passes: the last ones fine-tune the fit.
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 1.0 - epoch / epochs)
    rng = np.random.default_rng(seed)
    tensors = [
        torch.as_tensor(array)
        for array in (demos.observations, demos.masks, demos.actions, demos.returns)
    ]
    history = []
    for _ in track(range(epochs), "imitation", disable=not progress):
        order = torch.as_tensor(rng.permutation(len(demos)))
        sums = {"policy_loss": 0.0, "value_loss": 0.0, "agreement": 0.0}
        for start in range(0, len(demos), batch_size):
            batch = order[start : start + batch_size]
            observations, masks, actions, returns = (tensor[batch] for tensor in tensors)
            values, log_prob, _ = policy.evaluate_actions(observations, actions, masks)
            policy_loss = -log_prob.mean()
            value_loss = torch.nn.functional.mse_loss(values.flatten(), returns)
            optimizer.zero_grad()
            (policy_loss + 0.5 * value_loss).backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), model.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                distribution = policy.get_distribution(observations, masks)
                chosen = distribution.distribution.probs.argmax(dim=1)
            size = len(batch)
            sums["policy_loss"] += policy_loss.item() * size
            sums["value_loss"] += value_loss.item() * size
            sums["agreement"] += (chosen == actions).float().sum().item()
        history.append({key: value / len(demos) for key, value in sums.items()})
        schedule.step()
    policy.set_training_mode(False)
    return history
