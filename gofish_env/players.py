"""Anything that plays a seat: the ``SeatPlayer`` protocol, the ``Turn`` it decides on, and
the players made from specs.

A player spec is one of:
- a CPU level name (``"random"``, ``"easy"``, ... ``gofish_env.cpus.CPU_LEVELS``), or a CPU
  object with ``choose(view)``: it decides from the seat's ``PlayerView`` only;
- ``"model:path/to/agent.zip"`` or ``"model:runs/NAME/module"``: a saved agent, loaded by
  the installed agent loader for its kind (the ``train`` extra's for sb3-contrib's
  MaskablePPO zips, the ``rllib`` extra's for modules exported by ``gofish-rllib-train``),
  or a loaded model with ``predict``: it sees the seat's observation and action mask;
- ``"mix:random,easy,model:snap.zip"``: each game one member of the list, drawn at random;
- any callable ``(observation, action_mask) -> action``;
- a ``SeatPlayer`` itself.

One CPU object or ``SeatPlayer`` given for several seats plays the first; each further seat
gets a deep copy (``seat_copy``), so that no seat shares another's memory of the game (a
CPU's plans, a mix's draw). Names, models (``predict``) and callables are not copied: a
model's players share its network, and a callable is a function of what it is shown.

Whatever the spec, a player sees one ``Turn``: the seat's ``PlayerView``, its observation
and its action mask, all made from what that seat may know.
"""

from __future__ import annotations

import copy
import inspect
import random
from collections.abc import Callable, Sequence
from functools import lru_cache, partial
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from gofish_env.actions import ActionCodec
from gofish_env.agent_files import AgentFileError, check_agent_rules, read_agent_rules
from gofish_env.cpus import CPU_LEVELS, make_cpu
from gofish_env.knowledge import PlayerView
from gofish_env.observation import DEFAULT_HISTORY, ObservationLayout, encode
from gofish_env.rules import Rules, rules_name, seeded_random

MODEL_PREFIX = "model:"
MIX_PREFIX = "mix:"
AGENT_LOADERS = "gofish_env.agent_loaders"  # the entry-point group of agent loaders


class Turn:
    """One seat's decision. ``view`` is its ``PlayerView``; ``observation`` and
    ``action_mask`` are the arrays the environments give that seat, made on first use."""

    __slots__ = ("_observe", "_observed", "_view", "_viewed", "codec", "seat")

    def __init__(
        self,
        seat: int,
        codec: ActionCodec,
        view: Callable[[], PlayerView],
        observe: Callable[[], dict[str, np.ndarray]],
    ):
        self.seat = seat
        self.codec = codec
        self._view = view
        self._observe = observe
        self._viewed: PlayerView | None = None
        self._observed: dict[str, np.ndarray] | None = None

    @property
    def view(self) -> PlayerView:
        if self._viewed is None:
            self._viewed = self._view()
        return self._viewed

    def _observation(self) -> dict[str, np.ndarray]:
        if self._observed is None:
            self._observed = self._observe()
        return self._observed

    @property
    def observation(self) -> np.ndarray:
        return self._observation()["observation"]

    @property
    def action_mask(self) -> np.ndarray:
        return self._observation()["action_mask"]

    def to_action(self, target: int, wanted: int) -> int:
        """The action of this seat that asks ``target`` for ``wanted``."""
        return self.codec.to_action(self.seat, target, wanted)


def tracked_turn(tracker: Any, codec: ActionCodec, layout: Any, seat: int) -> Turn:
    """The seat's ``Turn`` at a game followed by a ``KnowledgeTracker``: its view, and the
    observation and mask the environments would give it (``layout``: an
    ``ObservationLayout``), made only if the player reads them."""

    def observe() -> dict:
        view = tracker.view(seat)
        return {
            "observation": encode(view, layout),
            "action_mask": codec.mask(seat, view.legal_asks),
        }

    return Turn(seat, codec, partial(tracker.view, seat), observe)


@runtime_checkable
class SeatPlayer(Protocol):
    """Plays a seat: ``reset`` at the start of each game, ``act`` for each of its turns."""

    def reset(self, seed: int | None) -> None:
        """A new game begins; ``seed`` seeds any random choice the player makes."""

    def act(self, turn: Turn) -> int:
        """The action to take (an index in the envs' action space)."""


class CPUPlayer:
    """A scripted CPU: decides from the seat's ``PlayerView``."""

    def __init__(self, cpu: Any):
        self.cpu = cpu

    def reset(self, seed: int | None) -> None:
        self.cpu.reset(seed)

    def act(self, turn: Turn) -> int:
        return turn.to_action(*self.cpu.choose(turn.view))


class PolicyPlayer:
    """A function of (observation, action_mask)."""

    def __init__(self, policy: Callable[[np.ndarray, np.ndarray], int]):
        self.policy = policy

    def reset(self, seed: int | None) -> None:
        pass

    def act(self, turn: Turn) -> int:
        return self.policy(turn.observation, turn.action_mask)  # the env checks the action


class PredictPlayer:
    """A loaded model with SB3's ``predict(observation, ..., deterministic)``; a model
    whose ``predict`` takes ``action_masks`` (sb3-contrib's MaskablePPO) gets the mask.
    Its random choices come from the model's own generator, not from ``reset``'s seed."""

    def __init__(self, model: Any, deterministic: bool = False):
        self.model = model
        self.deterministic = deterministic
        self._masked = "action_masks" in inspect.signature(model.predict).parameters

    def __deepcopy__(self, memo):
        return copy.copy(self)  # a player for another seat: the same network

    def reset(self, seed: int | None) -> None:
        pass

    def act(self, turn: Turn) -> int:
        kwargs: dict[str, Any] = {"deterministic": self.deterministic}
        if self._masked:
            kwargs["action_masks"] = turn.action_mask
        action, _ = self.model.predict(turn.observation, **kwargs)
        action = int(action)
        if not turn.action_mask[action]:
            raise ValueError(
                f"model chose illegal action {action}; use a MaskablePPO model (sb3-contrib) "
                f"so that it sees the action mask"
            )
        return action


class PlayerMix:
    """A different member each game, drawn from ``members`` (seeded by ``reset``): for
    training against a mix of CPU levels and snapshots of the learner."""

    def __init__(
        self, members: Sequence[Any], rules: Rules | None = None, deterministic: bool = False
    ):
        if not members:
            raise ValueError("players: a mix needs at least one member")
        self.members = [make_player(member, rules, deterministic) for member in members]
        self.rng = random.Random(0)
        self.current = self.members[0]

    def reset(self, seed: int | None) -> None:
        if seed is not None:
            self.rng = seeded_random(seed)
        self.current = self.rng.choice(self.members)
        self.current.reset(self.rng.randrange(2**63))

    def act(self, turn: Turn) -> int:
        return self.current.act(turn)


def choose_action(probabilities: np.ndarray, rng: np.random.Generator, deterministic: bool) -> int:
    """An action from a policy's probabilities: the most likely (``deterministic``), or one
    drawn with ``rng`` by inverse CDF (masked actions have probability 0: never drawn)."""
    if deterministic:
        return int(probabilities.argmax())
    cumulative = np.cumsum(probabilities, dtype=np.float64)
    return int(np.searchsorted(cumulative, rng.random() * cumulative[-1], "right"))


def load_agent(
    path: str | Path, rules: Rules | None = None, deterministic: bool = False
) -> SeatPlayer:
    """The saved agent at ``path`` (used as typed: no ``.zip`` is added) as a
    ``SeatPlayer``. With ``rules``, an agent recorded as trained for another table is
    refused, and so is one whose rules are not recorded if its network does not fit the
    table (``check_agent_sizes``). A missing, corrupt or unloadable file, or that refusal,
    raises ``AgentFileError`` (a ``ValueError``) with a one-line message naming the path."""
    if rules is not None:
        check_agent_rules(path, rules)
    loaders = [loader for loader in _agent_loaders() if loader.handles(str(path))]
    if not loaders:
        read_agent_rules(path)  # a missing or corrupt file says so first
        if Path(path).is_dir():
            kind, extra, loader = "exported RLlib modules (folders)", "rllib", "rllib"
        else:
            kind, extra, loader = "saved agents", "train", "sb3"
        install = f"pip install 'gofish-env[{extra}]'"
        missing = _LOADER_FAILURES.get(loader)
        if missing is None:
            raise AgentFileError(
                f"cannot load {path}: no agent loader is installed; {kind} need the {extra} "
                f"extra ({install})"
            )
        if missing == "torch":  # no extra brings it: a bare requirement pulls a CUDA build
            install = (
                "pip install torch==2.13.0 first (its CPU build: --index-url "
                f"https://download.pytorch.org/whl/cpu), then {install}"
            )
        raise AgentFileError(
            f"cannot load {path}: the {extra} extra's agent loader cannot be imported "
            f"({missing} is not installed); {kind} need: {install}"
        )
    player = loaders[0].load_agent(str(path), deterministic)
    if rules is not None:
        check_agent_sizes(path, player, rules)
    return player


def check_agent_sizes(path: str | Path, player: Any, rules: Rules) -> None:
    """Refuse, in one line, a loaded agent whose action count is not the table's, or whose
    observation size no history length of the table's observation has: one made for
    another table whose rules were not recorded with it (an older zip out of its run
    folder), which would otherwise fail at its first move. (The history length is the
    env's to choose, ``history=``, and is not recorded: any fits.) A loader's player
    tells its sizes by ``observation_size`` and ``action_count`` (None or missing:
    unknown, not checked)."""
    observed, actions = (
        getattr(player, name, None) for name in ("observation_size", "action_count")
    )
    if observed is None or actions is None:
        return
    if history_taking(rules, observed) is not None and actions == ActionCodec(rules).size:
        return
    base, per_ask = _history_sizes(rules)
    raise AgentFileError(
        f"{path} was made for another table: it takes observations of {observed} numbers "
        f"and chooses among {actions} actions; this table ({rules.players} players under "
        f"{rules_name(rules)}) has observations of {base} + {per_ask} numbers per ask of "
        f"history ({ObservationLayout(rules).size} with the default {DEFAULT_HISTORY}) and "
        f"{ActionCodec(rules).size} actions"
    )


def _history_sizes(rules: Rules) -> tuple[int, int]:
    """The table's observation size without history, and what each recent ask adds."""
    base = ObservationLayout(rules, history=0).size
    return base, ObservationLayout(rules, history=1).size - base


def history_taking(rules: Rules, size: int) -> int | None:
    """The history length whose observation at this table has ``size`` numbers, if any."""
    base, per_ask = _history_sizes(rules)
    fits = size >= base and (size - base) % per_ask == 0
    return (size - base) // per_ask if fits else None


def check_history(player: Any, rules: Rules, history: int) -> None:
    """Refuse a player whose network takes another observation than the table's with
    ``history`` recent asks (an agent trained with another ``history=``, which would fail at
    its first move), naming the history it takes. Players of a mix are each checked."""
    for member in getattr(player, "members", None) or [player]:
        taken = getattr(member, "observation_size", None)
        size = ObservationLayout(rules, history).size
        if taken is None or int(taken) == size:
            continue
        made = history_taking(rules, int(taken))
        made_for = "another table" if made is None else f"history={made}"
        raise ValueError(
            f"it takes observations of {taken} numbers ({made_for}); this table shows {size} "
            f"(history={history}), so it cannot play here"
        )


@lru_cache(maxsize=1)
def _agent_loaders() -> tuple[Any, ...]:
    """The agent loaders installed packages provide, by name (entry-point group
    ``gofish_env.agent_loaders``; the ``train`` extra's is ``gofish_training.agents``, for
    SB3 zips, the ``rllib`` extra's ``gofish_training.rllib_agents``, for exported RLlib
    modules). A loader is a module with ``handles(path) -> bool`` (whether the saved agent
    at ``path`` is its kind), ``load_agent(path, deterministic) -> SeatPlayer`` and
    ``model_player(model, deterministic) -> SeatPlayer | None`` (None: not its kind of
    model). So this package imports nothing of the training side."""
    loaders = []
    _LOADER_FAILURES.clear()
    for point in sorted(entry_points(group=AGENT_LOADERS), key=lambda point: point.name):
        try:
            loaders.append(point.load())
        except ImportError as error:  # its package is installed, the libraries it needs are not
            _LOADER_FAILURES[point.name] = (error.name or str(error)).split(".")[0]
    return tuple(loaders)


# The loaders (by entry-point name) whose import failed, and the library that was missing.
_LOADER_FAILURES: dict[str, str] = {}


def model_player(model: Any, deterministic: bool = False) -> SeatPlayer:
    """A loaded model as a ``SeatPlayer``: an installed loader's player for its kind of
    model (which draws its actions from its own generator, seeded by ``reset``), or else
    ``PredictPlayer``."""
    for loader in _agent_loaders():
        player = loader.model_player(model, deterministic)
        if player is not None:
            return player
    return PredictPlayer(model, deterministic)


def mix_members(spec: str) -> list[str]:
    """The members of ``"mix:a,b,..."``; an empty mix, or one with an empty member, is
    refused with how a mix is written."""
    members = spec[len(MIX_PREFIX) :].split(",")
    example = f"e.g. {MIX_PREFIX}easy,normal"
    if not any(member.strip() for member in members):
        raise ValueError(
            f"got {spec!r}, an empty mix; allowed: {MIX_PREFIX} followed by a comma list of "
            f"players, {example}"
        )
    if not all(member.strip() for member in members):
        raise ValueError(
            f"got {spec!r}, a mix with an empty member; allowed: {MIX_PREFIX} followed by a "
            f"comma list of players with no empty entries, {example}"
        )
    return members


def check_player_spec(spec: str, rules: Rules | None = None, load: bool = False) -> None:
    """Refuse a string spec that names no player: an unknown CPU level, a model file that
    cannot be read or (given the table's ``rules``) was trained for another table. With
    ``load``, a model is also loaded (``load_agent``: cached per path by the SB3 loader),
    so that weights that are garbage, or a module folder with its rules but no module, are
    refused before any game rather than at the first."""
    if spec.startswith(MIX_PREFIX):
        for member in mix_members(spec):
            check_player_spec(member, rules, load)
        return
    if spec.startswith(MODEL_PREFIX):
        path = spec[len(MODEL_PREFIX) :]
        if load:
            load_agent(path, rules)
        elif rules is None:
            read_agent_rules(path)  # a missing or corrupt file
        else:
            check_agent_rules(path, rules)
        return
    if spec not in CPU_LEVELS:
        # "random,easy" is a natural slip for a mix: say how a mix is written.
        hint = f" (a mix of players is written {MIX_PREFIX}{spec})" if "," in spec else ""
        raise ValueError(
            f"unknown CPU level {spec!r}; allowed: {', '.join(CPU_LEVELS)}, or model:PATH.zip"
            + hint
        )


def player_label(spec: Any) -> str:
    """A short name for a player spec, for seat labels: ``"hard CPU"``, ``"model NAME"``
    (from ``model:runs/NAME.zip``), ``"mix"``, or the name of an object's type."""
    if isinstance(spec, str):
        if spec.startswith(MODEL_PREFIX):
            return "model " + Path(spec[len(MODEL_PREFIX) :]).stem
        if spec.startswith(MIX_PREFIX):
            return "mix of " + spec[len(MIX_PREFIX) :].replace(",", ", ")
        return f"{spec} CPU"
    if hasattr(spec, "choose"):
        return str(getattr(spec, "name", "") or type(spec).__name__)
    return getattr(spec, "__name__", type(spec).__name__)


def seat_copy(spec: Any) -> Any:
    """``spec`` for one more seat (see the module docstring): a deep copy of a CPU object
    or a ``SeatPlayer``, anything else as it is."""
    if isinstance(spec, str) or hasattr(spec, "predict"):
        return spec
    if hasattr(spec, "choose") or isinstance(spec, SeatPlayer):
        return copy.deepcopy(spec)
    return spec


def make_player(spec: Any, rules: Rules | None = None, deterministic: bool = False) -> SeatPlayer:
    """A ``SeatPlayer`` from a spec (see the module docstring). With ``rules`` (the
    table's), a ``model:PATH`` spec whose agent was trained for another table raises
    ``AgentFileError``. ``deterministic`` applies to models: the most likely legal action
    instead of a sample."""
    if isinstance(spec, SeatPlayer):
        return spec
    if isinstance(spec, str):
        if spec.startswith(MIX_PREFIX):
            return PlayerMix(mix_members(spec), rules, deterministic)
        if spec.startswith(MODEL_PREFIX):
            return load_agent(spec[len(MODEL_PREFIX) :], rules, deterministic)
        check_player_spec(spec)  # an unknown level, with what is allowed instead
        return CPUPlayer(make_cpu(spec))
    if hasattr(spec, "choose"):
        return CPUPlayer(spec)
    if hasattr(spec, "predict"):
        return model_player(spec, deterministic)
    if callable(spec):
        return PolicyPlayer(spec)
    raise ValueError(
        f"player: got {spec!r}; allowed: a CPU level name, 'model:PATH.zip', a CPU object, "
        f"a model with predict(), a callable (observation, action_mask) -> action, or a "
        f"SeatPlayer"
    )
