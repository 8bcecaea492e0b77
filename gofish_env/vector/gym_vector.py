"""``GoFishVectorEnv``: a Gymnasium ``VectorEnv`` of N single-agent games in one batch.

``gymnasium.make_vec("GoFish-v0", num_envs=N)`` builds it (the registered
``vector_entry_point``; ``vectorization_mode="sync"`` or ``"async"`` still give Gymnasium's
own vector envs of ``GoFishEnv``). Each sub-env is a ``GoFishEnv``: the same arguments, the
same observation, rewards, episode end and info keys, with every sub-env's info as one array
per key. The action masks are ``info["action_mask"]`` (N x actions, booleans) and
``action_masks()``.

Autoreset (``autoreset_mode``, Gymnasium's ``AutoresetMode``): ``"next_step"`` (the default,
as ``SyncVectorEnv``): the step after an episode ends resets that sub-env, ignores its
action and returns reward 0 and the new episode's first observation, mask and info;
``"same_step"``: the step that ends an episode returns the next episode's first observation
and info, with the last ones in ``info["final_obs"]`` and ``info["final_info"]``;
``"disabled"``: a finished sub-env waits for ``reset(options={"reset_mask": ...})``.

``max_episode_steps`` (``gymnasium.make_vec`` passes it on, as to Gymnasium's own vector
envs): each sub-env's episode is truncated at that many of its steps, as Gymnasium's
``TimeLimit`` truncates a ``GoFishEnv`` made with it.

``compile_rules=True``: the rules compiled into the engine's kernels (``VectorGame``'s
option): the same games, 14% to 46% more steps a second (docs/performance.md), for a
compile of a minute or two the first time a rule set is used (numba keeps it in its cache).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from gofish_env.aec_env import DEFAULT_MAX_ASKS, InvalidAction
from gofish_env.game import IllegalAsk
from gofish_env.observation import DEFAULT_HISTORY
from gofish_env.rewards import RewardScheme, check_illegal_action
from gofish_env.rules import Rules
from gofish_env.vector.learner import LearnerBatch
from gofish_env.vector.structs import NotCopyable

AUTORESET_MODES = {
    "next_step": AutoresetMode.NEXT_STEP,
    "same_step": AutoresetMode.SAME_STEP,
    "disabled": AutoresetMode.DISABLED,
}


class GoFishVectorEnv(NotCopyable, gym.vector.VectorEnv):
    """N ``GoFishEnv`` games stepped together by the compiled engine (see the module
    docstring). Opponents ``random``, ``easy``, ``normal``, ``hard`` and ``expert`` play in compiled
    code; any other player spec (``master``, saved agents, callables) plays in Python, one
    game at a time, and is slower."""

    _copy_advice = (
        "Build a new one with the same arguments (gymnasium.make_vec(env.spec) for a "
        "registered one) and reset(seed=...) for the same episodes, or "
        "reset(options={'games': [...]}) from Python Games."
    )
    metadata: ClassVar[dict] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        players: int | None = None,
        opponents: Any = "random",
        seat: int | str = 0,
        rules: Rules | str | None = None,
        reward: str | dict | RewardScheme = "catches",
        history: int = DEFAULT_HISTORY,
        max_asks: int = DEFAULT_MAX_ASKS,
        illegal_action: str = "terminate",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        autoreset_mode: str | AutoresetMode = "next_step",
        compile_rules: bool = False,
        max_episode_steps: int | None = None,
    ):
        rules = Rules.resolve(players, rules)
        if max_episode_steps is not None and (
            isinstance(max_episode_steps, bool)
            or not isinstance(max_episode_steps, int | np.integer)
            or max_episode_steps < 1
        ):
            raise ValueError(
                f"max_episode_steps: got {max_episode_steps!r}; allowed: an integer >= 1, or "
                f"None (no limit but max_asks)"
            )
        if render_mode is not None:
            raise ValueError(
                f"render_mode: got {render_mode!r}; allowed: None (the vector env does not "
                f"render; GoFishEnv does)"
            )
        illegal_reward = check_illegal_action(illegal_action, illegal_reward)
        modes = {**AUTORESET_MODES, **{mode: mode for mode in AutoresetMode}}
        if autoreset_mode not in modes:
            raise ValueError(
                f"autoreset_mode: got {autoreset_mode!r}; allowed: {', '.join(AUTORESET_MODES)}"
            )
        self.learners = LearnerBatch(
            num_envs, rules, opponents, seat, reward, history, max_asks, compile_rules
        )
        self.rules = rules
        self.num_envs = self.learners.num_envs
        self.autoreset_mode = modes[autoreset_mode]
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.illegal_action = illegal_action
        self.illegal_reward = illegal_reward
        self.render_mode = None
        size = self.learners.batch.layout.size
        self.single_observation_space = spaces.Box(0.0, 1.0, (size,), np.float32)
        self.single_action_space = spaces.Discrete(self.learners.batch.constants.actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, bool)
        self.max_episode_steps = None if max_episode_steps is None else int(max_episode_steps)
        self._elapsed = np.zeros(self.num_envs, np.int64)  # each episode's steps, as TimeLimit
        self._ready = False
        self._failure = "step() called before reset()"

    @property
    def opponent_specs(self) -> list[str]:
        return self.learners.opponent_specs

    def set_opponents(self, opponents: Any) -> None:
        """Replace the opponents (each sub-env's next episode on)."""
        self.learners.set_opponents(opponents)

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        """New episodes in every sub-env, or in those of ``options["reset_mask"]``.
        ``seed`` seeds every sub-env's streams (sub-env i from (seed, i)); ``options["games"]``
        gives exact positions (Python ``Game``s in play, one per sub-env reset). The options
        are checked before anything changes, the seed included. A reset that fails part way
        (an opponent's error, a given game that ends before the learner's first move) leaves
        the env refusing ``step()`` until a reset of every sub-env succeeds."""
        self._check_open("reset()")
        options = dict(options or {})
        if "game" in options:
            raise ValueError(
                "options['game']: GoFishEnv's key; the vector env takes options['games'], "
                "a list of Games, one per sub-env reset"
            )
        mask = options.pop("reset_mask", None)
        if mask is None:
            mask = np.ones(self.num_envs, bool)
        mask = np.asarray(mask)
        if mask.shape != (self.num_envs,) or mask.dtype != np.bool_:
            raise ValueError(
                f"options['reset_mask']: allowed: a bool array of shape ({self.num_envs},)"
            )
        if not self._ready and not mask.all():
            raise RuntimeError(
                "reset(): the first reset, and the one after a failed step() or reset(), "
                "must reset every sub-env"
            )
        games = np.flatnonzero(mask)
        positions = options.get("games")
        if positions is not None:
            positions = self.learners.check_positions(games, positions)
        if seed is not None:
            self.learners.seed(seed)
        self._ready = False
        self._failure = "reset() did not complete"
        self.learners.start(games, positions)
        self._autoreset[mask] = False
        self._elapsed[mask] = 0
        self._ready = True
        return self.learners.observations(), self._infos()

    def _check_open(self, call: str) -> None:
        if self.closed:
            raise RuntimeError(f"{call}: the env is closed; make a new one")

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        self._check_open("step()")
        if not self._ready:
            raise RuntimeError(f"step(): {self._failure}; call reset() first")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise ValueError(
                f"actions: got shape {actions.shape}, dtype {actions.dtype}; allowed: "
                f"integers of shape ({self.num_envs},)"
            )
        restarting = (
            self._autoreset.copy() if self.autoreset_mode is AutoresetMode.NEXT_STEP else None
        )
        if self.autoreset_mode is AutoresetMode.DISABLED and self._autoreset.any():
            env = int(np.flatnonzero(self._autoreset)[0])
            raise RuntimeError(
                f"step(): env {env} has ended; reset it (options={{'reset_mask': ...}}) first"
            )
        active = ~self._autoreset
        # An env that this step resets ignores its action (Gymnasium's next-step autoreset).
        size = self.single_action_space.n
        outside = ((actions < 0) | (actions >= size)) & active
        if outside.any():
            env = int(np.flatnonzero(outside)[0])
            raise InvalidAction(
                f"actions: got {actions[env]} for env {env}; allowed: integers from 0 to "
                f"{size - 1} (the action space)"
            )
        try:
            return self._step(actions, active, restarting)
        except IllegalAsk:  # illegal_action="raise": refused before anything changed
            raise
        except BaseException:
            # Part of the batch has moved (every env's ask, some opponents): undoing a batch
            # step is not offered, so the env refuses to go on until reset.
            self._ready = False
            self._failure = (
                "the last step() failed part way (an opponent's error, an interrupt) and left "
                "the batch half-stepped"
            )
            raise

    def _step(self, actions: np.ndarray, active: np.ndarray, restarting: np.ndarray | None):
        learners = self.learners
        illegal = learners.act(actions, active, self.illegal_action == "raise")
        terminated = learners.terminated() & active
        truncated = learners.truncated() & active
        self._elapsed[active] += 1
        if self.max_episode_steps is not None:  # as TimeLimit: terminated or not
            truncated |= active & (self._elapsed >= self.max_episode_steps)
        rewards = np.where(illegal, self.illegal_reward, learners.rewards)
        rewards[~active] = 0.0
        observations = learners.observations()
        infos = self._infos()
        learners.rewards[active] = 0.0
        learners.components[active] = 0.0
        done = terminated | truncated
        if restarting is not None and restarting.any():
            games = np.flatnonzero(restarting)
            learners.start(games)
            self._elapsed[games] = 0
            observations[games] = learners.observations(games)
            self._merge(infos, self._infos(), restarting)
        if self.autoreset_mode is AutoresetMode.SAME_STEP and done.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            for env in np.flatnonzero(done):
                final_obs[env] = observations[env].copy()
            # As Gymnasium's own vector envs: each key's mask is the ended envs, and the
            # other rows are zeros (they have no final info).
            final_info = {}
            for key, value in infos.items():
                if not key.startswith("_"):
                    final_info[key] = np.zeros_like(value)
                    final_info[key][done] = value[done]
                    final_info[f"_{key}"] = done.copy()
            games = np.flatnonzero(done)
            learners.start(games)
            self._elapsed[games] = 0
            observations[games] = learners.observations(games)
            self._merge(infos, self._infos(), done)
            infos["final_obs"], infos["_final_obs"] = final_obs, done.copy()
            infos["final_info"], infos["_final_info"] = final_info, done.copy()
            self._autoreset[:] = False
        else:
            self._autoreset = done
        return observations, rewards.astype(np.float64), terminated, truncated, infos

    def _infos(self) -> dict:
        info = self.learners.infos()
        for key in list(info):
            info[f"_{key}"] = np.ones(self.num_envs, bool)
        return info

    @staticmethod
    def _merge(infos: dict, fresh: dict, rows: np.ndarray) -> None:
        for key, value in fresh.items():
            if not key.startswith("_"):
                infos[key][rows] = value[rows]

    def action_masks(self) -> np.ndarray:
        """[N, actions] bool: each sub-env's legal actions now."""
        return self.learners.masks()

    def close_extras(self, **kwargs) -> None:
        pass
