"""Saved agents and loaded MaskablePPO models as seat players: the agent loader that
``gofish_env`` finds through its entry point (``gofish_env.agent_loaders``), so that
``"model:PATH.zip"`` and a model object work anywhere a player spec does (the envs'
opponents, the tournament, terminal play) without the environment package importing SB3
or torch.

A loaded model is kept once per path in a process and shared by the players made from it
(they only read it). Each player samples its actions from its own generator, seeded by
``reset``, so a game with a model seat replays exactly for the same seed.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from sb3_contrib import MaskablePPO

from gofish_env.agent_files import load_failure, read_agent_rules
from gofish_env.players import Turn, choose_action


class MaskablePPOPlayer:
    """A MaskablePPO policy playing a seat: the most likely legal action
    (``deterministic``) or one drawn from the masked policy with the player's own seeded
    generator (the global torch generator is left alone)."""

    def __init__(self, model: MaskablePPO, deterministic: bool = False):
        self.model = model
        self.deterministic = deterministic
        self.rng = np.random.default_rng()

    def __deepcopy__(self, memo):
        # A player for another seat: the same network, a generator of its own.
        twin = copy.copy(self)
        twin.rng = copy.deepcopy(self.rng, memo)
        return twin

    @property
    def observation_size(self) -> int:
        """The length of the observation the network takes (the table's must match:
        ``gofish_env.players.check_agent_sizes``)."""
        return int(np.prod(self.model.observation_space.shape))

    @property
    def action_count(self) -> int:
        """The number of actions the network chooses among."""
        return int(self.model.action_space.n)

    def reset(self, seed: int | None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, turn: Turn) -> int:
        policy = self.model.policy
        policy.set_training_mode(False)  # as SB3's predict does
        observation = torch.as_tensor(turn.observation[None])
        with torch.no_grad():
            distribution = policy.get_distribution(observation, turn.action_mask[None])
        probs = distribution.distribution.probs[0].numpy()
        return choose_action(probs, self.rng, self.deterministic)


@lru_cache(maxsize=16)
def load_model(path: str) -> MaskablePPO:
    """The MaskablePPO saved at ``path``, on the CPU. A missing, corrupt or unloadable file
    raises ``AgentFileError`` with one line naming the path."""
    read_agent_rules(path)  # a missing or corrupt file: one clean line
    try:
        with open(path, "rb") as handle:
            return MaskablePPO.load(handle, device="cpu")
    except Exception as error:  # whatever SB3 or torch raise for a file they cannot read
        raise load_failure(f"cannot load model file {path}", error) from error


def handles(path: str) -> bool:
    """Saved SB3 agents are files (zips); folders are other loaders' kind."""
    return not Path(path).is_dir()


def load_agent(path: str, deterministic: bool = False) -> MaskablePPOPlayer:
    """The saved agent at ``path`` as a player (``gofish_env.players.load_agent``)."""
    return MaskablePPOPlayer(load_model(path), deterministic)


def model_player(model: object, deterministic: bool = False) -> MaskablePPOPlayer | None:
    """A loaded MaskablePPO as a player (``gofish_env.players.model_player``); None for
    any other kind of model."""
    return MaskablePPOPlayer(model, deterministic) if isinstance(model, MaskablePPO) else None
