"""An RLlib-trained module as a seat player, so the project's own evaluation harness (duplicate
deals, intervals), the tournament and terminal play measure it like any other player.

``RLModulePlayer`` plays the learner's ``MaskedActorCritic``: the most likely legal action
(``deterministic``, what the evaluations use) or one drawn from the masked policy with the
player's own generator, seeded by ``reset``. ``export_module`` writes the module with the
rules it was trained under (``gofish_env.json``), and ``load_module`` reads it back.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule

from gofish_env.agent_files import METADATA_ENTRY, AgentFileError
from gofish_env.players import Turn
from gofish_env.rules import Rules
from gofish_training.rllib_module import ACTION_MASK, OBSERVATION


class RLModulePlayer:
    """A seat played by an RLlib module (see the module docstring)."""

    def __init__(self, module: RLModule, deterministic: bool = True):
        self.module = module
        self.deterministic = deterministic
        self.rng = np.random.default_rng()

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
        if self.deterministic:
            return int(probs.argmax())
        # Inverse CDF: masked actions have probability 0, so they are never drawn.
        cumulative = np.cumsum(probs, dtype=np.float64)
        return int(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], "right"))


def export_module(module: RLModule, folder: Path, rules: Rules) -> Path:
    """Save ``module`` to ``folder`` with the rules it was trained under."""
    folder = Path(folder)
    module.save_to_path(folder)
    (folder / METADATA_ENTRY).write_text(json.dumps({"rules": dataclasses.asdict(rules)}))
    return folder


def load_module(folder: str | Path, rules: Rules | None = None) -> RLModule:
    """The module saved by ``export_module`` at ``folder``; with ``rules``, a module trained
    for another table is refused (``AgentFileError``, one line)."""
    folder = Path(folder)
    metadata = folder / METADATA_ENTRY
    if not metadata.is_file():
        raise AgentFileError(f"not an exported RLlib module (no {METADATA_ENTRY}): {folder}")
    try:
        trained = Rules(**json.loads(metadata.read_text())["rules"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise AgentFileError(f"cannot read {metadata}: {error}") from None
    if rules is not None and trained != rules:
        raise AgentFileError(
            f"{folder} was trained for {trained.players} players under {trained.describe()}; "
            f"this table is {rules.players} players under {rules.describe()}"
        )
    return RLModule.from_checkpoint(folder)


def module_player(module: Any, deterministic: bool = True) -> RLModulePlayer:
    return RLModulePlayer(module, deterministic)
