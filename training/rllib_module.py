"""An RLlib RLModule for the environments' observation dict: an actor and a critic over
``obs["observation"]``, with the logits of every action that ``obs["action_mask"]`` rules
out set to -inf, in exploration, inference and training alike.

RLlib's default modules have no encoder for a Dict observation, and its action-masking
example reads ``obs["observations"]`` (the PettingZoo classic key is ``"observation"``).
This module is written on RLlib's current API (``TorchRLModule`` and ``ValueFunctionAPI``),
not on the deprecated ``PPOTorchRLModule``:

    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    spec = RLModuleSpec(module_class=MaskedActorCritic, model_config={"hidden": [256, 256]})

A masked action has probability exactly 0, so it is never sampled, never the argmax, and
contributes nothing to the entropy or the KL term (torch's ``Categorical`` handles -inf
logits). A row whose mask is all zero (RLlib's dummy batches, never a seat to move) keeps
its logits, so the distribution stays defined.
"""

from __future__ import annotations

import itertools
from typing import Any

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

OBSERVATION = "observation"
ACTION_MASK = "action_mask"
DEFAULT_HIDDEN = (256, 256)


def mlp(sizes: list[int]) -> nn.Sequential:
    """Dense layers with tanh between them (SB3's MlpPolicy default), none after the last."""
    layers: list[nn.Module] = []
    for index, (size_in, size_out) in enumerate(itertools.pairwise(sizes)):
        layers.append(nn.Linear(size_in, size_out))
        if index < len(sizes) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers)


def mask_logits(logits: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every action the mask rules out at -inf (rows with no legal action
    are left as they are)."""
    legal = action_mask > 0
    masked = logits.masked_fill(~legal, float("-inf"))
    return torch.where(legal.any(dim=-1, keepdim=True), masked, logits)


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """Separate actor and critic MLPs (``model_config["hidden"]``, default 256, 256) over the
    observation vector; the actor's logits are masked by the action mask."""

    def setup(self) -> None:
        spaces = getattr(self.observation_space, "spaces", {})
        if OBSERVATION not in spaces or ACTION_MASK not in spaces:
            raise ValueError(
                f"MaskedActorCritic: got observation space {self.observation_space}; "
                f"allowed: a Dict with {OBSERVATION!r} and {ACTION_MASK!r} (the gofish "
                f"environments' observation)"
            )
        hidden = list((self.model_config or {}).get("hidden", DEFAULT_HIDDEN))
        if not hidden or not all(isinstance(size, int) and size > 0 for size in hidden):
            raise ValueError(
                f"model_config['hidden']: got {hidden!r}; allowed: positive layer sizes"
            )
        inputs = int(spaces[OBSERVATION].shape[0])
        actions = int(self.action_space.n)
        self.pi = mlp([inputs, *hidden, actions])
        self.vf = mlp([inputs, *hidden, 1])

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.pi(obs[OBSERVATION])
        return {Columns.ACTION_DIST_INPUTS: mask_logits(logits, obs[ACTION_MASK])}

    def _forward_train(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        return self._forward(batch, **kwargs)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.vf(batch[Columns.OBS][OBSERVATION]).squeeze(-1)
