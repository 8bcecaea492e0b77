"""An RLlib-trained module as a seat player, so the project's own evaluation harness (duplicate
deals, intervals), the tournament and terminal play measure it like any other player.

``RLModulePlayer`` plays the learner's ``MaskedActorCritic``: the most likely legal action
(``deterministic``, what the evaluations use) or one drawn from the masked policy with the
player's own generator, seeded by ``reset``. ``export_module`` writes the module with the
rules it was trained under (``gofish_env.json``), and ``load_module`` reads it back.

This module is also the ``rllib`` extra's agent loader (entry point group
``gofish_env.agent_loaders``): an exported module's folder is a player spec like a saved SB3
zip, ``"model:runs/NAME/module"``, in ``gofish-evaluate``, the tournament and terminal play.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from gofish_env.agent_files import (
    check_agent_rules,
    load_failure,
    read_agent_rules,
    write_agent_rules,
)
from gofish_env.players import Turn, choose_action
from gofish_env.rules import Rules
from gofish_training.rllib_module import ACTION_MASK, OBSERVATION


class RLModulePlayer:
    """A seat played by an RLlib module (see the module docstring)."""

    def __init__(self, module: RLModule, deterministic: bool = True):
        self.module = module
        self.deterministic = deterministic
        self.rng = np.random.default_rng()

    def __deepcopy__(self, memo):
        # A player for another seat: the same module, a generator of its own.
        twin = copy.copy(self)
        twin.rng = copy.deepcopy(self.rng, memo)
        return twin

    @property
    def observation_size(self) -> int | None:
        """The length of the observation the module takes (the table's must match:
        ``gofish_env.players.check_agent_sizes``); None if its spaces do not say."""
        spaces = getattr(self.module.observation_space, "spaces", None) or {}
        space = spaces.get(OBSERVATION)
        return None if space is None else int(np.prod(space.shape))

    @property
    def action_count(self) -> int | None:
        """The number of actions the module chooses among; None if its space does not say."""
        count = getattr(self.module.action_space, "n", None)
        return None if count is None else int(count)

    def reset(self, seed: int | None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def probabilities(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The module's action probabilities for one observation (0 where masked)."""
        batch = {
            Columns.OBS: {
                OBSERVATION: torch.as_tensor(observation[None]),
                ACTION_MASK: torch.as_tensor(action_mask[None]),
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
        return torch.softmax(logits, dim=-1).numpy()

    def act(self, turn: Turn) -> int:
        probs = self.probabilities(turn.observation, turn.action_mask)
        return choose_action(probs, self.rng, self.deterministic)


def export_module(module: RLModule, folder: Path, rules: Rules) -> Path:
    """Save ``module`` to ``folder`` with the rules it was trained under."""
    module.save_to_path(Path(folder).resolve())
    write_agent_rules(folder, rules)
    return Path(folder)


def load_module(folder: str | Path, rules: Rules | None = None) -> RLModule:
    """The module saved by ``export_module`` at ``folder``; with ``rules``, a module trained
    for another table is refused. Either, or a folder that is no exported module, raises
    ``AgentFileError`` with one line naming the folder."""
    if rules is None:
        read_agent_rules(folder)
    else:
        check_agent_rules(folder, rules)
    try:
        return RLModule.from_checkpoint(Path(folder).resolve())
    except Exception as error:  # whatever RLlib or torch raise for a folder they cannot read
        raise load_failure(f"cannot load RLlib module {folder}", error) from error


def handles(path: str) -> bool:
    """Exported RLlib modules are folders."""
    return Path(path).is_dir()


def load_agent(path: str, deterministic: bool = False) -> RLModulePlayer:
    """The exported module at ``path`` as a player (``gofish_env.players.load_agent``)."""
    return RLModulePlayer(load_module(path), deterministic)


def model_player(model: Any, deterministic: bool = False) -> RLModulePlayer | None:
    """An RLModule as a player (``gofish_env.players.model_player``); None for any other
    kind of model."""
    return RLModulePlayer(model, deterministic) if isinstance(model, RLModule) else None
