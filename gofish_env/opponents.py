"""Opponents for the single-agent env: anything that can pick a seat's action.

An opponent spec is one of:
- a CPU level name (``"random"``, ``"easy"``, ... from ``baselines``), or a CPU object with
  ``choose(view)``: it decides from that seat's ``PlayerView`` only;
- ``"mix:random,easy,model:snap.zip"``: each episode one member of the list, drawn at random;
- ``"model:path/to/model.zip"`` or a loaded SB3 model (``predict``): it sees that seat's
  observation and action mask;
- any callable ``(observation, action_mask) -> action``.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from gofish_env.agent_files import AgentFileError, check_agent_rules, read_agent_rules
from gofish_env.rules import Rules

MODEL_PREFIX = "model:"
MIX_PREFIX = "mix:"


class Opponent(ABC):
    """Picks the action of one seat of an AEC ``raw_env``."""

    def reset(self, seed: int | None) -> None:  # noqa: B027 (most opponents keep no state)
        """A new episode begins."""

    @abstractmethod
    def act(self, env: Any, seat: int) -> int:
        """The seat's action; the seat is the one to move."""


class ViewOpponent(Opponent):
    """A scripted CPU: decides from the seat's ``PlayerView``."""

    def __init__(self, cpu: Any):
        self.cpu = cpu

    def reset(self, seed: int | None) -> None:
        self.cpu.reset(seed)

    def act(self, env: Any, seat: int) -> int:
        target, what = self.cpu.choose(env.view(seat))
        return env.codec.to_action(seat, target, what)


class CallableOpponent(Opponent):
    """A function of (observation, action_mask)."""

    def __init__(self, policy: Callable[[np.ndarray, np.ndarray], int]):
        self.policy = policy

    def act(self, env: Any, seat: int) -> int:
        obs = env.observe(env.possible_agents[seat])
        return self.policy(obs["observation"], obs["action_mask"])  # the env checks it


class ModelOpponent(Opponent):
    """A stable-baselines3 model; MaskablePPO gets the action mask."""

    def __init__(self, model: Any, deterministic: bool = False):
        self.model = model
        self.deterministic = deterministic
        self._masked = "action_masks" in _parameters(model.predict)

    def act(self, env: Any, seat: int) -> int:
        obs = env.observe(env.possible_agents[seat])
        kwargs = {"deterministic": self.deterministic}
        if self._masked:
            kwargs["action_masks"] = obs["action_mask"]
        action, _ = self.model.predict(obs["observation"], **kwargs)
        action = int(action)
        if not obs["action_mask"][action]:
            raise ValueError(
                f"model opponent chose illegal action {action}; use a MaskablePPO model "
                f"(sb3-contrib) so it sees the action mask"
            )
        return action


class OpponentMix(Opponent):
    """A different member each episode, drawn from ``members`` (seeded by ``reset``): for
    training against a mix of CPU levels and snapshots of the learner."""

    def __init__(self, members: Sequence[Any], rules: Rules | None = None):
        if not members:
            raise ValueError("opponents: a mix needs at least one member")
        self.members = [make_opponent(member, rules) for member in members]
        self.rng = random.Random(0)
        self.current = self.members[0]

    def reset(self, seed: int | None) -> None:
        if seed is not None:
            self.rng = random.Random(seed)
        self.current = self.rng.choice(self.members)
        self.current.reset(self.rng.randrange(2**63))

    def act(self, env: Any, seat: int) -> int:
        return self.current.act(env, seat)


def _parameters(function: Callable) -> set[str]:
    import inspect

    return set(inspect.signature(function).parameters)


def load_model(path: str | Path, rules: Rules | None = None) -> Any:
    """A saved MaskablePPO model (``.zip``), loaded on the CPU; loaded once per path in a
    process and shared (models only predict here).

    ``path`` is used as typed (no ``.zip`` is added). With ``rules``, an agent recorded as
    trained for another table is refused (``gofish_env.agent_files``). A missing, corrupt
    or unloadable file, or that refusal, raises ``AgentFileError`` (a ``ValueError``) with
    a one-line message naming the path.
    """
    if rules is not None:
        check_agent_rules(path, rules)
    return _load_saved_model(str(path))


@lru_cache(maxsize=16)
def _load_saved_model(path: str) -> Any:
    from sb3_contrib import MaskablePPO

    read_agent_rules(path)  # a missing or corrupt file: one clean line
    try:
        with open(path, "rb") as handle:
            return MaskablePPO.load(handle, device="cpu")
    except Exception as error:  # whatever SB3 or torch raise for a file they cannot read
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise AgentFileError(
            f"cannot load model file {path}: {type(error).__name__}: {first_line}"
        ) from error


def make_opponent(spec: Any, rules: Rules | None = None) -> Opponent:
    """An ``Opponent`` from a spec (see the module docstring). With ``rules`` (the table's),
    a ``model:PATH`` spec whose agent was trained for another table raises
    ``AgentFileError``."""
    if isinstance(spec, Opponent):
        return spec
    if isinstance(spec, str):
        if spec.startswith(MIX_PREFIX):
            return OpponentMix(spec[len(MIX_PREFIX) :].split(","), rules)
        if spec.startswith(MODEL_PREFIX):
            return ModelOpponent(load_model(spec[len(MODEL_PREFIX) :], rules))
        from gofish_env.cpus import make_cpu

        return ViewOpponent(make_cpu(spec))
    if hasattr(spec, "choose"):
        return ViewOpponent(spec)
    if hasattr(spec, "predict"):
        return ModelOpponent(spec)
    if callable(spec):
        return CallableOpponent(spec)
    raise ValueError(
        f"opponent: got {spec!r}; allowed: a CPU level name, 'model:PATH.zip', a CPU object, "
        f"an SB3 model, or a callable (observation, action_mask) -> action"
    )
