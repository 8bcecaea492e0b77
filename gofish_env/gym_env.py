"""The Gymnasium single-agent environment: one learning seat, opponents inside.

Built on the AEC ``raw_env``: ``step`` applies the learner's ask, then lets the opponents
move until the learner is to move again or the game ends, and returns the learner's own
rewards summed over all those turns (the final reward included when the game ends on an
opponent's turn). ``action_masks()`` serves sb3-contrib's MaskablePPO.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gofish_env.aec_env import DEFAULT_MAX_ASKS, raw_env
from gofish_env.game import IllegalAsk
from gofish_env.observation import DEFAULT_HISTORY
from gofish_env.opponents import make_opponent
from gofish_env.rewards import RewardScheme
from gofish_env.rules import Rules

ILLEGAL_ACTION_CHOICES = ("terminate", "raise")
# Re-deals allowed when a game ends before the learner's first move (possible under
# early-ending rules); such games carry no decision to learn from.
MAX_REDEALS = 100


class GoFishEnv(gym.Env):
    """Go Fish from one seat's point of view, against scripted or learned opponents.

    Arguments: ``players`` (2..6), ``opponents`` (one spec for every other seat, or a list of
    P - 1 specs for the seats from the learner's left: a CPU level name such as ``"random"``
    or ``"hard"``, ``"model:PATH.zip"``, an SB3 model, a CPU object, or a callable
    ``(observation, action_mask) -> action``), ``seat`` (the learner's seat, or ``"random"``
    for a new seat each episode), ``rules``, ``reward``, ``history``, ``max_asks`` (as in
    ``gofish_env.raw_env``), ``illegal_action`` (``"terminate"``: an illegal action ends the
    episode with ``illegal_reward``; ``"raise"``: raises ``IllegalAsk``), ``render_mode``.

    Observation: the learner's observation vector (``docs/observation.md``); the action
    mask is ``action_masks()`` and ``info["action_mask"]``. Actions as in ``raw_env``:
    action ``a`` asks seat ``(seat + 1 + a // A) % P`` for rank ``a % A``.
    """

    metadata: ClassVar[dict] = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(
        self,
        players: int | None = None,
        opponents: Any = "random",
        seat: int | str = 0,
        rules: Rules | None = None,
        reward: str | dict | RewardScheme = "catches",
        history: int = DEFAULT_HISTORY,
        max_asks: int = DEFAULT_MAX_ASKS,
        illegal_action: str = "terminate",
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
    ):
        self.aec = raw_env(
            players=players,
            rules=rules,
            reward=reward,
            history=history,
            max_asks=max_asks,
            render_mode=render_mode,
        )
        self.rules = self.aec.rules
        players = self.rules.players
        # By type as well as value: 1.0 == 1, but a float seat cannot index the agents.
        if seat != "random" and (
            isinstance(seat, bool)
            or not isinstance(seat, int | np.integer)
            or seat not in range(players)
        ):
            raise ValueError(
                f"seat: got {seat!r}; allowed: 'random' or a seat from 0 to {players - 1}"
            )
        if illegal_action not in ILLEGAL_ACTION_CHOICES:
            raise ValueError(
                f"illegal_action: got {illegal_action!r}; allowed: 'terminate', 'raise'"
            )
        self.seat_choice = seat
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.set_opponents(opponents)
        self.observation_space = self.aec.observation_spaces["player_0"]["observation"]
        self.action_space = spaces.Discrete(self.aec.codec.size)
        self.seat = 0 if seat == "random" else seat
        self._illegal_end = False
        self._view_version: tuple | None = None
        self._deals = 0
        self._reward = 0.0
        self._components: dict[str, float] = {}

    def set_opponents(self, opponents: Any) -> None:
        """Replace the opponents (takes effect from the next reset); with SubprocVecEnv use
        ``vec_env.env_method("set_opponents", specs)``."""
        count = self.rules.players - 1
        if isinstance(opponents, Sequence) and not isinstance(opponents, str):
            if len(opponents) != count:
                raise ValueError(
                    f"opponents: got {len(opponents)} specs; allowed: one spec or {count}"
                )
            specs = list(opponents)
        else:
            specs = [opponents] * count
        self.opponent_specs = [spec if isinstance(spec, str) else repr(spec) for spec in specs]
        self.opponents = []
        seen: set[int] = set()
        for spec in specs:
            # A CPU object keeps per-seat memory (plans, card ledgers): each further seat
            # gets its own copy. Models and callables are shared (a model only predicts).
            if hasattr(spec, "choose") and id(spec) in seen:
                spec = copy.deepcopy(spec)
            seen.add(id(spec))
            self.opponents.append(make_opponent(spec))

    # ------------------------------------------------------------------ episode

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        for _ in range(MAX_REDEALS):
            if self.seat_choice == "random":
                self.seat = int(self.np_random.integers(self.rules.players))
            self.aec.reset(seed=int(self.np_random.integers(2**63)), options=options)
            self._deals += 1
            seats = [(self.seat + k) % self.rules.players for k in range(1, self.rules.players)]
            self._seat_opponents = dict(zip(seats, self.opponents, strict=True))
            for opponent in self.opponents:
                opponent.reset(int(self.np_random.integers(2**63)))
            # Rewards before the learner's first move (catches at the deal) come with step 1.
            self._reward = self.aec.rewards[self._agent]
            self._components = dict(self.aec.infos[self._agent]["reward_components"])
            self._play_opponents()
            if not self._done():
                break
            if options and "game" in options:
                raise ValueError("options['game']: the game ends before the learner's first move")
        else:
            raise RuntimeError(f"no game in {MAX_REDEALS} deals let the learner move")
        return self._observation(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if self._done():
            raise RuntimeError("step() called after the episode ended; call reset()")
        mask = self.action_masks()
        action = int(action)
        if not (0 <= action < mask.size and mask[action]):
            if self.illegal_action == "raise":
                self.aec.step(action)  # raises IllegalAsk (or ValueError) with the reason
                raise IllegalAsk(f"action {action} is not legal now")
            info = self._info()
            info["illegal_action"] = True
            self._illegal_end = True
            return self._observation(), self.illegal_reward, True, False, info
        self._collect_reward(action)
        self._play_opponents()
        reward = self._reward
        terminated = self.aec.terminations[self._agent]
        truncated = self.aec.truncations[self._agent] and not terminated
        if self.render_mode == "human":
            self.render()
        info = self._info()
        self._reward = 0.0
        self._components = dict.fromkeys(self._components, 0.0)
        return self._observation(), float(reward), terminated, truncated, info

    def _play_opponents(self) -> None:
        """Opponents move until the learner is to move or the episode is over."""
        self._illegal_end = False
        aec = self.aec
        while not self._done() and aec.game.current_player != self.seat:
            seat = aec.game.current_player
            self._collect_reward(self._seat_opponents[seat].act(aec, seat))

    def _collect_reward(self, action: int) -> None:
        """Step the AEC env and add the learner's reward and its components."""
        aec = self.aec
        aec.step(action)
        if aec.earned_last_step:
            agent = self._agent
            self._reward += aec.rewards[agent]
            for name, value in aec.infos[agent]["reward_components"].items():
                self._components[name] += value

    # ------------------------------------------------------------------ views

    @property
    def _agent(self) -> str:
        return self.aec.possible_agents[self.seat]

    def _done(self) -> bool:
        agent = self._agent
        return self._illegal_end or self.aec.terminations[agent] or self.aec.truncations[agent]

    def _learner_view(self) -> dict:
        """The learner's observation and mask, encoded once per state (a step and the
        ``action_masks()`` call that follows it would otherwise encode it thrice)."""
        version = (self._deals, self.aec.game.num_events, self._illegal_end)
        if self._view_version != version:
            self._view = self.aec.observe(self._agent)
            self._view_version = version
        return self._view

    def _observation(self) -> np.ndarray:
        return self._learner_view()["observation"].copy()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (all False when it is not to move, and
        after an illegal action ended the episode)."""
        if self._illegal_end:
            return np.zeros(self.action_space.n, dtype=bool)
        return self._learner_view()["action_mask"].astype(bool)

    def _info(self) -> dict:
        # Fresh containers on every call: callers may keep what they are given.
        info = {
            key: value.copy() if isinstance(value, dict | list) else value
            for key, value in self.aec.infos[self._agent].items()
        }
        info["reward_components"] = dict(self._components)
        info["seat"] = self.seat
        info["action_mask"] = self.action_masks()
        return info

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        text = self.aec.render_text(self.seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text


if "GoFish-v0" not in gym.registry:
    gym.register(id="GoFish-v0", entry_point="gofish_env.gym_env:GoFishEnv")
