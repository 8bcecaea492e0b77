"""Who plays which seat in RLlib: the modules, the agent-to-module mapping, and the frozen
snapshots of the learner.

    setup = PolicySetup(OpponentPlan.parse("mix:easy,snapshot"), snapshot_pool=3)
    config.multi_agent(**setup.multi_agent_kwargs()).rl_module(
        rl_module_spec=setup.module_spec(model_config={"hidden": [256, 256]}))
    config.callbacks(setup.callbacks(snapshot_every=5))

- ``learner_S`` agents (``gofish_training.rllib_env``) map to ``"learner"``, the one
  learning module: with self-play it plays every seat (one shared policy).
- ``snapshot_S`` agents map to ``"snapshot_0"`` .. ``"snapshot_{K-1}"``: frozen copies of
  the learner that are never trained (``policies_to_train`` is the learner alone). Which
  copy a seat gets is drawn from a seeded generator (``SnapshotMapping``) when the seat
  first appears in a game, and kept for the game: the same seed draws the same copies.
  They start as copies of the new learner; every ``snapshot_every`` iterations the oldest
  slot takes the learner's current weights (``SnapshotCallback``). The slots' weights are
  part of the algorithm's state, so checkpoints keep them.
- The scripted CPUs are not modules: the env plays them.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from gofish_env.evaluation.stats import derive_seed
from gofish_env.rules import is_integer
from gofish_training.rllib_env import LEARNER, SNAPSHOT, OpponentPlan, role_of
from gofish_training.rllib_module import MaskedActorCritic

WIN_SHARE = "learner_win_share"
SNAPSHOT_STREAM = 7919  # mixed into the seed: the slots' draws apart from the env's deals


def snapshot_module(slot: int) -> str:
    return f"{SNAPSHOT}_{slot}"


class SnapshotMapping:
    """RLlib's ``policy_mapping_fn``: the module of an agent, the learner or the snapshot slot
    this game gives the seat.

    The slot is drawn from a generator seeded with ``seed`` the first time a game asks for
    the seat, and remembered for the game (RLlib asks again when it cuts an episode into
    chunks). Each EnvRunner holds its own copy, so its draws follow the order in which its
    games meet their snapshot seats: the same for the same seed. (Not a hash of the
    episode's id: RLlib makes that with ``uuid4``, so the same seed drew other copies.)"""

    REMEMBERED = 4096  # games' seats: far more than an EnvRunner has going at once

    def __init__(self, snapshot_pool: int = 1, seed: int = 0):
        self.snapshot_pool = snapshot_pool
        self.seed = seed
        self._rng = np.random.default_rng(derive_seed(seed, SNAPSHOT_STREAM))
        self._slots: OrderedDict[tuple[str, str], int] = OrderedDict()

    def __call__(self, agent_id: str, episode: Any, **kwargs) -> str:
        if role_of(agent_id) == LEARNER:
            return LEARNER
        key = (episode.id_, agent_id)
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = int(self._rng.integers(self.snapshot_pool))
            if len(self._slots) > self.REMEMBERED:
                self._slots.popitem(last=False)
        return snapshot_module(slot)


@dataclass(frozen=True)
class PolicySetup:
    """The modules and mapping for an ``OpponentPlan`` (see the module docstring)."""

    plan: OpponentPlan
    snapshot_pool: int = 3
    seed: int = 0  # of the snapshot slots' draws

    def __post_init__(self) -> None:
        pool = self.snapshot_pool
        if not is_integer(pool) or pool < 1:
            raise ValueError(f"snapshot_pool: got {pool!r}; allowed: an integer >= 1")

    @property
    def module_ids(self) -> list[str]:
        snapshots = self.snapshot_pool if self.plan.uses_snapshots else 0
        return [LEARNER, *(snapshot_module(slot) for slot in range(snapshots))]

    def module_spec(self, model_config: dict | None = None) -> MultiRLModuleSpec:
        spec = RLModuleSpec(module_class=MaskedActorCritic, model_config=model_config or {})
        return MultiRLModuleSpec(rl_module_specs=dict.fromkeys(self.module_ids, spec))

    def multi_agent_kwargs(self) -> dict:
        """Keyword arguments of ``AlgorithmConfig.multi_agent``."""
        return {
            "policies": set(self.module_ids),
            "policy_mapping_fn": SnapshotMapping(self.snapshot_pool, self.seed),
            "policies_to_train": [LEARNER],
        }

    def callbacks(self, snapshot_every: int) -> list:
        """The callbacks this setup needs: the learner's win share, and snapshots."""
        callbacks: list = [WinShareCallback]
        if self.plan.uses_snapshots:
            callbacks.append(
                functools.partial(SnapshotCallback, pool=self.snapshot_pool, every=snapshot_every)
            )
        return callbacks


class WinShareCallback(RLlibCallback):
    """Logs the learner's mean share of the win per seat it held (fair: 1 / players)."""

    def on_episode_end(self, *, episode, metrics_logger=None, **kwargs) -> None:
        infos = episode.get_infos(-1)
        shares = [
            info["win_share"]
            for agent, info in infos.items()
            if role_of(agent) == LEARNER and "win_share" in info
        ]
        if shares and metrics_logger is not None:
            metrics_logger.log_value(WIN_SHARE, sum(shares) / len(shares), window=200)


class SnapshotCallback(RLlibCallback):
    """Copies the learner into the snapshot slots: all of them at the start, then the
    oldest every ``every`` iterations."""

    def __init__(self, pool: int, every: int):
        super().__init__()
        self.pool = pool
        self.every = every

    def on_algorithm_init(self, *, algorithm, **kwargs) -> None:
        if algorithm.iteration == 0:
            copy_learner(algorithm, range(self.pool))

    def on_train_result(self, *, algorithm, result, **kwargs) -> None:
        iteration = algorithm.iteration
        if iteration % self.every == 0:
            copy_learner(algorithm, [(iteration // self.every - 1) % self.pool])


def copy_learner(algorithm: Any, slots) -> None:
    """Set snapshot ``slots`` to the learner's weights, in the learners and EnvRunners."""
    state = algorithm.learner_group.get_weights(module_ids=[LEARNER])[LEARNER]
    modules = {snapshot_module(slot): state for slot in slots}
    algorithm.set_state({"learner_group": {"learner": {"rl_module": modules}}})
    # set_state sends the weights to the EnvRunners without waiting, and drops the request
    # while another is in flight: the copies that played the next sample then depended on
    # timing (the same seed trained another network). Set them there too, and wait.
    algorithm.env_runner_group.foreach_env_runner(
        functools.partial(_set_modules, modules=modules), local_env_runner=True
    )


def _set_modules(runner: Any, modules: dict) -> None:
    """In an EnvRunner: set ``modules`` (module id -> state) of its RLModule."""
    if getattr(runner, "module", None) is None:
        return
    for module_id, state in modules.items():
        runner.module[module_id].set_state(state)
