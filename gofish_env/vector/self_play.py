"""``SelfPlayVectorEnv``: N games where every seat's decision comes back to the caller.

For self-play with one network acting for every seat: each step takes one action per game,
for that game's seat to move, and returns the observation and mask of the next seat to move
(``info["current_player"]``), as Pgx does. Rewards are every seat's, ``[N, P]``, for that
one ask, exactly as the AEC env pays them (``env.rewards`` after the step; a seat earns on
others' turns too, so a learner adds each step's row to the seat's own running return).

Autoreset is same-step: a game that ends (``terminated``) or reaches ``max_asks`` asks
(``truncated``) is dealt again in that step; its last observations for every seat are in
``info["final_observation"]`` (an object array: a ``[P, size]`` array for each finished
game, None elsewhere), its last global state in ``info["final_state"]`` (the same way: see
``state()``) and its winners in ``info["winners"]``. A deal that ends before the
first ask is dealt again. The catches laid at a deal are paid with that game's first step.

``compile_rules=True`` compiles the rules into the engine (``VectorGame``'s option of that
name): faster steps, for a compile of about a minute the first time a rule set is used.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from gofish_env.aec_env import DEFAULT_MAX_ASKS
from gofish_env.gym_env import MAX_REDEALS
from gofish_env.observation import DEFAULT_HISTORY
from gofish_env.rewards import COMPONENTS, RewardScheme
from gofish_env.rules import Rules, is_integer
from gofish_env.vector import play
from gofish_env.vector.game import VectorGame, _count
from gofish_env.vector.structs import NotCopyable


class SelfPlayVectorEnv(NotCopyable):
    """N games, every seat played by the caller (see the module docstring)."""

    _copy_advice = "Build a new one with the same arguments and reset(seed=...) it."

    def __init__(
        self,
        num_envs: int = 1,
        players: int | None = None,
        rules: Rules | str | None = None,
        reward: str | dict | RewardScheme = "catches",
        history: int = DEFAULT_HISTORY,
        max_asks: int = DEFAULT_MAX_ASKS,
        compile_rules: bool = False,
    ):
        self.rules = Rules.resolve(players, rules)
        self.num_envs = _count("num_envs", num_envs)
        if not is_integer(max_asks) or max_asks < 1:
            raise ValueError(f"max_asks: got {max_asks!r}; allowed: an integer >= 1")
        max_asks = int(max_asks)
        self.max_asks = max_asks
        self.scheme = RewardScheme.make(reward)
        self.weights = np.array([self.scheme.weights.get(name, 0.0) for name in COMPONENTS], float)
        self.batch = VectorGame(self.rules, self.num_envs, 0, history, compile_rules=compile_rules)
        self.players = self.rules.players
        size = self.batch.layout.size
        self.single_observation_space = spaces.Box(0.0, 1.0, (size,), np.float32)
        self.single_action_space = spaces.Discrete(self.batch.constants.actions)
        self.state_layout = self.batch.state_layout
        self.single_state_space = spaces.Box(0.0, 1.0, (self.state_layout.size,), np.float32)
        self._rewards = np.zeros((self.num_envs, self.players))
        self._rows = np.arange(self.num_envs)
        self._ready = False

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict]:
        """A new game everywhere; ``seed`` seeds every game's deals (game i from (seed, i))."""
        self.batch.seed(seed)
        self._deal(np.arange(self.num_envs))
        self._ready = True
        return self._observe(), self._turn(self._info(np.zeros(self.num_envs, bool)))

    def _deal(self, games: np.ndarray) -> None:
        for _ in range(MAX_REDEALS):
            self.batch.deal(games)
            games = games[self.batch.state.over[games]]
            if not games.size:
                return
        raise RuntimeError(f"no game in {MAX_REDEALS} deals lasted to its first ask")

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """One action per game, by its seat to move (``info["current_player"]``)."""
        if not self._ready:
            raise RuntimeError("step() called before reset(); call reset() first")
        batch = self.batch
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise ValueError(
                f"actions: got shape {actions.shape}, dtype {actions.dtype}; allowed: "
                f"integers of shape ({self.num_envs},)"
            )
        actions = actions.astype(np.int64)
        S, K = batch.kernel_state, batch.kernel_constants
        # The mask the caller was given is the one to check against (nothing moved since).
        in_range = (actions >= 0) & (actions < K.actions)
        legal = in_range & self._legal[self._rows, np.where(in_range, actions, 0)]
        if not legal.all():
            bad = int(np.flatnonzero(~legal)[0])
            raise ValueError(
                f"actions: env {bad}: seat {batch.state.current[bad]}: "
                f"{batch.refusal(bad, int(actions[bad]))} (see info['action_mask']); nothing "
                "was applied"
            )
        rewards = self._rewards
        play.apply_and_pay_all(S, K, actions, self.weights, self.scheme.zero_sum, rewards)
        terminated = batch.state.over.copy()
        truncated = ~terminated & (batch.state.num_asks >= self.max_asks)
        done = terminated | truncated
        info = self._info(done)
        if done.any():
            finals = np.full(self.num_envs, None, dtype=object)
            games = np.flatnonzero(done)
            # Every seat of every finished game in one call: [games, P, size].
            seats = np.tile(np.arange(self.players), games.size)
            seen = batch.observe(seats, np.repeat(games, self.players))
            seen = seen.reshape(games.size, self.players, -1)
            last_states = np.full(self.num_envs, None, dtype=object)
            states = batch.global_state(games, seen[:, 0])
            for row, game in enumerate(games):
                finals[game] = seen[row]
                last_states[game] = states[row]
            info["final_observation"] = finals
            info["final_state"] = last_states
            self._deal(games)
        return self._observe(), rewards.copy(), terminated, truncated, self._turn(info)

    def _observe(self) -> np.ndarray:
        return self.batch.observe(np.maximum(self.batch.state.current, 0))

    def _turn(self, info: dict) -> dict:
        """``info`` with the seat to move in every game and its mask (kept, to check the
        next step's actions against)."""
        self._legal = self.batch.legal_mask()
        info["current_player"] = self.batch.state.current.copy()
        info["action_mask"] = self._legal.copy()
        return info

    def _info(self, done: np.ndarray) -> dict:
        state = self.batch.state
        winners = np.where(done[:, None], state.winners, 0).astype(np.int8)
        if done.any():  # a game cut off by the ask limit is scored as it stands
            cut = done & ~state.over
            cut = np.flatnonzero(cut)
            winners[cut] = self.batch.leaders(cut)
        return {
            "catches": state.catch_count.astype(np.int64),
            "winners": winners,
        }

    def state(self) -> np.ndarray:
        """[N, S]: every game's global state now, as ``raw_env.state()`` gives it (every
        hand, for centralized critics only; ``single_state_space``, ``state_layout``). A
        finished game's last state is in that step's ``info["final_state"]``."""
        if not self._ready:
            raise RuntimeError("state() called before reset(); call reset() first")
        return self.batch.global_state()

    def observe_all(self) -> np.ndarray:
        """[N, P, size]: every seat's observation of its game now."""
        return np.stack([self.batch.observe(seat) for seat in range(self.players)], axis=1)
