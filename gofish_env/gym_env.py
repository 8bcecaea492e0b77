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

from gofish_env.aec_env import (
    DEFAULT_MAX_ASKS,
    MAX_REDEALS,  # also when a game ends before the learner's first move: nothing to learn
    REWARD_INFO_KEYS,
    check_action,
    check_render_mode,
    check_start_game,
    raw_env,
)
from gofish_env.aec_env import (
    INFO_KEYS as AEC_INFO_KEYS,
)
from gofish_env.agent_files import AgentFileError
from gofish_env.game import IllegalAsk
from gofish_env.observation import DEFAULT_HISTORY, ObservationLayout
from gofish_env.players import check_history, make_player, player_label, seat_copy
from gofish_env.rewards import RewardScheme, check_illegal_action
from gofish_env.rules import Rules

# The learner's info: the AEC env's keys (its reward components summed over the step), its
# seat, whether an illegal action ended the episode, and its action mask (booleans).
INFO_KEYS = (*AEC_INFO_KEYS, "seat", "illegal_action", "action_mask")
_UNCHOSEN = object()  # an opponent's action before it has chosen one


def check_seat(seat: Any, players: int) -> int | str:
    """The learner ``seat``: ``"random"`` or a seat of the table as an ``int`` (a NumPy
    integer is taken); anything else is refused."""
    if seat == "random":
        return seat
    # By type as well as value: 1.0 == 1, but a float seat cannot index the agents.
    if (
        isinstance(seat, bool)
        or not isinstance(seat, int | np.integer)
        or seat not in range(players)
    ):
        raise ValueError(f"seat: got {seat!r}; allowed: 'random' or a seat from 0 to {players - 1}")
    return int(seat)


def asks_before_learner(rules: Rules, seat: int | str) -> tuple[int, int, int]:
    """The fewest asks the opponents can make before the learner's first move, in the worst
    seating: ``(asks, learner's seat, first asker)``. Each seat from the first asker up to the
    learner asks at least once (a hit asks again); with ``after_miss="asked"`` one miss can
    pass the turn to the learner. With ``seat`` or ``first_player`` ``"random"``, the worst
    of the seatings they can draw."""
    players = rules.players
    seats = range(players) if seat == "random" else [int(seat)]
    if rules.first_player == "random":
        firsts = range(players)
    else:
        firsts = [0 if rules.first_player == "dealer_left" else int(rules.first_player)]

    def asks(learner: int, first: int) -> int:
        if learner == first:
            return 0
        return 1 if rules.after_miss == "asked" else (learner - first) % players

    return max((asks(s, f), s, f) for s in seats for f in firsts)


def check_max_asks(max_asks: int, rules: Rules, seat: int | str) -> None:
    """Refuse an ask limit that the opponents' asks before the learner's first move use up
    (in some seating the env can draw): such an episode is truncated before the learner
    has a move. Checked once, when the env is made."""
    asks, learner, first = asks_before_learner(rules, seat)
    if max_asks <= asks:
        where = "a random seat" if seat == "random" else f"seat {learner}"
        first_asker = (
            f"a random first player (seat {first} the worst)"
            if rules.first_player == "random"
            else f"seat {first} asking first"
        )
        raise ValueError(
            f"max_asks: got {max_asks}; with {rules.players} players, the learner at {where} "
            f"and {first_asker}, the opponents can make {asks} asks before the learner's "
            f"first move, so the episode could be truncated before it; "
            f"allowed: at least {asks + 1} (more leaves room for the opponents' hits)"
        )


def truncated_before_learner(max_asks: int, seat: int, given: int = 0) -> ValueError:
    """The error of a reset that reached ``max_asks`` before the learner moved: the
    opponents' asks, after the ``given`` ones of a start position."""
    if given >= max_asks:
        made = f"the given game has made {given} asks already, and max_asks is {max_asks}"
    elif given:
        made = (
            f"the given game came with {given} asks and the opponents made the other "
            f"{max_asks - given} of max_asks ({max_asks})"
        )
    else:
        made = f"the opponents made all {max_asks} asks"
    return ValueError(
        f"max_asks: {made} before the learner's first move (seat {seat}), so the episode was "
        "truncated before it; allowed: a larger max_asks"
    )


class OpponentError(RuntimeError):
    """An opponent inside ``GoFishEnv`` failed on its move: it chose an illegal ask (or
    something that is not an action), or raised while choosing. The message names the
    opponent's spec and seat; ``__cause__`` is the original error. Raised from ``step()``,
    the env is left exactly as it was before that step (the learner's ask is undone too).
    It is not an ``IllegalAsk``: that one is the learner's."""

    def __init__(self, message: str, seat: int, opponent: str):
        super().__init__(message)
        self.seat = seat
        self.opponent = opponent


_DOC = """Go Fish from one seat's point of view, against scripted or learned opponents.

## Description

One learning seat plays Go Fish with P - 1 opponents inside the env. ``step`` applies the
learner's ask, then lets the opponents move until the learner is to move again or the game
ends. The rules are the engine's (``gofish_env.Game``): any preset or house rule
(docs/rules.md). Registered as ``gymnasium.make("GoFish-v0", **arguments)``.

## Action space

``Discrete((P - 1) * A)``: A = 13 ranks (14 with jokers; 52 or 53 cards with exact-card
asks). Action ``a`` asks seat ``(seat + 1 + a // A) % P`` for rank (or card) ``a % A``:
targets are relative to the learner, so one policy fits every seat. The legal actions are
``info["action_mask"]`` and ``action_masks()`` (booleans; sb3-contrib's MaskablePPO reads
the method). Through ``gymnasium.make`` the method is behind Gymnasium's wrappers: call
``env.get_wrapper_attr("action_masks")()`` or read ``info["action_mask"]``
(``env.action_masks()`` on the wrapped env raises ``AttributeError``).

## Observation space

``Box(0, 1, (N,), float32)``: the learner's observation, the same vector the AEC env gives
that seat (docs/observation.md). For the table rules, 4 players, history={history}:

{layout}

## Starting state

A shuffled deal (seeded by ``reset(seed=...)``), or the exact position
``reset(options={{"game": Game.from_hands(...)}})``. With ``seat="random"`` the learner
takes a new seat each episode. The opponents move until the learner's first turn; a deal
that ends before it is dealt again (up to {redeals} times).

## Rewards

The learner's own rewards under ``reward`` (``"catches"``, ``"catch_points"``,
``"catches+tiebreak"``, ``"win"``, ``"zero_sum"``, ``"catch_margin"``, or a dict of
component weights; ``gofish_env.rewards``), summed over the learner's ask and the
opponents' moves after it, the final reward included when the game ends on an opponent's
turn. Catches laid at the deal are paid with the first step.

## Episode end

Terminated when the game ends, or when an illegal action ends it with ``illegal_reward``
(``illegal_action="terminate"``; ``"raise"`` raises ``IllegalAsk`` and changes nothing).
Truncated after ``max_asks`` asks in a game (default {max_asks}; in a match, in one of
its games). Something that is not an action (a float, a string, a bool, None, a number
outside the space) raises ``InvalidAction`` (a ``ValueError``) in either mode; an opponent
that fails raises ``OpponentError`` naming it and its seat, and the env is left as it was
before the step.

## Info

Every key at every step, from ``reset`` on; each value a number or a fixed-shape array:

{info}

## Arguments

- ``players``: 2..6 (default 4, or the rules' count);
- ``opponents``: one player spec for every other seat, or a list of P - 1 specs from the
  learner's left: a CPU level (``"random"`` .. ``"expert"``), ``"model:PATH.zip"``, a
  loaded model, a CPU object, a callable ``(observation, action_mask) -> action``, a
  ``SeatPlayer``, or ``"mix:a,b,..."`` (a member drawn each episode); ``gofish_env.players``;
- ``seat``: the learner's seat, or ``"random"``;
- ``rules``: a ``Rules`` or a preset name; ``reward``; ``history`` (recent asks in the
  observation, default {history}); ``max_asks``;
- ``illegal_action`` (``"terminate"`` or ``"raise"``), ``illegal_reward`` (default -1.0);
- ``render_mode``: ``"ansi"`` (text), ``"human"`` (the text printed) or ``"rgb_array"`` (a
  ``(640, 960, 3)`` picture), the learner's view of the table.

## Version history

- v0: first release.
"""

INFO_MEANINGS = {
    "catches": "the learner's catches so far",
    "tiebreak_points": "the tiebreak points of those catches",
    "reward_catch": "this step's catches (an unweighted reward component)",
    "reward_catch_points": "this step's catches' points / 14",
    "reward_tiebreak": "this step's catches' points / (all points + 1)",
    "reward_win": "the learner's share of the win, at the end (1/k for k winners)",
    "winners": "length P, int8: 1 for each winning seat once the game is over, zeros before",
    "seat": "the learner's seat",
    "illegal_action": "True when an illegal action ended the episode",
    "action_mask": "the learner's legal actions, booleans (all False when not to move)",
}


def _info_table() -> str:
    lines = ["| key | meaning |", "|---|---|"]
    lines += [f"| ``{key}`` | {INFO_MEANINGS[key]} |" for key in INFO_KEYS]
    return "\n".join(lines)


class GoFishEnv(gym.Env):
    metadata: ClassVar[dict] = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
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
    ):
        check_render_mode(render_mode, self.metadata["render_modes"])
        # The inner env renders nothing itself: in "human" mode it would print the view of
        # every seat that moves, the opponents' included. This env draws the learner's view.
        self.aec = raw_env(
            players=players, rules=rules, reward=reward, history=history, max_asks=max_asks
        )
        self.rules = self.aec.rules
        players = self.rules.players
        seat = check_seat(seat, players)
        check_max_asks(max_asks, self.rules, seat)
        self.illegal_reward = check_illegal_action(illegal_action, illegal_reward)
        self.seat_choice = seat
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.set_opponents(opponents)
        self.observation_space = self.aec.observation_spaces["player_0"]["observation"]
        self.action_space = spaces.Discrete(self.aec.codec.size)
        self.seat = 0 if seat == "random" else seat
        self._illegal_end = False
        self._view_version: tuple | None = None
        self._deals = 0
        self._ready = False  # a reset() has completed
        self._reward = 0.0
        self._components: dict[str, float] = {}
        self._seat_specs: dict[int, str] = {}  # the episode's opponents, by seat
        self._seat_labels: dict[int, str] = {}

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
        players = []
        seen: set[int] = set()
        for spec in specs:
            if id(spec) in seen:  # no two seats share a memory of the game
                spec = seat_copy(spec)
            seen.add(id(spec))
            try:
                players.append(make_player(spec, self.rules))
                check_history(players[-1], self.rules, self.aec.layout.history)
            except AgentFileError as error:
                raise AgentFileError(f"opponents: {error}") from None
            except ValueError as error:
                raise ValueError(f"opponents: {error}") from None
        # Every spec is good: only now does the env change (a refused call changes nothing).
        self.opponents = players
        self.opponent_specs = [spec if isinstance(spec, str) else repr(spec) for spec in specs]
        self.opponent_labels = [player_label(spec) for spec in specs]

    # ------------------------------------------------------------------ episode

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        if options and "game" in options:  # checked before anything changes, the seed too
            check_start_game(options["game"], self.rules)
        super().reset(seed=seed)
        self._ready = False
        if options and "game" in options:
            # The env's own copy: the AEC env rebuilds the start from it to undo a step.
            options = {**options, "game": copy.deepcopy(options["game"])}
        for _ in range(MAX_REDEALS):
            if self.seat_choice == "random":
                self.seat = int(self.np_random.integers(self.rules.players))
            self.aec.reset(seed=int(self.np_random.integers(2**63)), options=options)
            self._deals += 1
            seats = [(self.seat + k) % self.rules.players for k in range(1, self.rules.players)]
            self._seat_opponents = dict(zip(seats, self.opponents, strict=True))
            # Who plays this episode, for error messages and pictures: set_opponents in
            # mid-episode takes effect from the next reset.
            self._seat_specs = dict(zip(seats, self.opponent_specs, strict=True))
            self._seat_labels = dict(zip(seats, self.opponent_labels, strict=True))
            for opponent in self.opponents:
                opponent.reset(int(self.np_random.integers(2**63)))
            # Rewards before the learner's first move (catches at the deal) come with step 1.
            self._reward = self.aec.rewards[self._agent]
            info = self.aec.infos[self._agent]
            self._components = {key: info[key] for key in REWARD_INFO_KEYS.values()}
            self._play_opponents("reset() did not complete; call reset() again")
            if not self._done():
                break
            if not self.aec.terminations[self._agent]:  # truncated: no deal would do better
                given = options["game"].num_asks if options and "game" in options else 0
                raise truncated_before_learner(self.aec.max_asks, self.seat, given)
            if options and "game" in options:
                raise ValueError("options['game']: the game ends before the learner's first move")
        else:
            raise RuntimeError(f"no game in {MAX_REDEALS} deals let the learner move")
        self._ready = True
        if self.render_mode == "human":
            self.render()
        # What the learner earned before its first move is paid with step 1, with its
        # components: the reset info reports none (as the AEC env's reset infos).
        return self._observation(), self._info(paid=False)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        if not self._ready:
            raise RuntimeError("step() called before reset(); call reset() first")
        if self._done():
            raise RuntimeError("step() called after the episode ended; call reset()")
        size = self.aec.codec.size
        if type(action) is not int or not 0 <= action < size:
            action = check_action(action, size)
        mask = self.action_masks()
        if not mask[action]:
            if self.illegal_action == "raise":
                self.aec.step(action)  # raises IllegalAsk with the reason
                raise IllegalAsk(f"action {action} is not legal now")
            self._illegal_end = True
            info = self._info(paid=False)  # the step pays illegal_reward and nothing else
            return self._observation(), self.illegal_reward, True, False, info
        aec = self.aec
        asks = aec.game.num_asks
        reward, components = self._reward, self._components
        self._components = dict(components)
        try:
            self._collect_reward(action)
            self._play_opponents("the env is back as it was before this step")
        except BaseException:
            # Undo the whole step, the learner's ask too: replay the episode up to it.
            aec._rewind(asks)
            self._reward, self._components = reward, components
            self._illegal_end = False
            self._view_version = None
            raise
        reward = self._reward
        terminated = aec.terminations[self._agent]
        truncated = aec.truncations[self._agent] and not terminated
        if self.render_mode == "human":
            self.render()
        info = self._info()
        self._reward = 0.0
        self._components = dict.fromkeys(self._components, 0.0)
        return self._observation(), float(reward), terminated, truncated, info

    def _play_opponents(self, after_error: str) -> None:
        """Opponents move until the learner is to move or the episode is over. An opponent
        that fails raises ``OpponentError``, whose message ends with ``after_error``."""
        self._illegal_end = False
        aec = self.aec
        while not self._done() and aec.game.current_player != self.seat:
            seat = aec.game.current_player
            action = _UNCHOSEN
            try:
                action = self._seat_opponents[seat].act(aec.turn(seat))
                self._collect_reward(action)
            except Exception as error:
                raise self._opponent_error(seat, action, error, after_error) from error

    def _opponent_error(
        self, seat: int, action: Any, error: Exception, after_error: str
    ) -> OpponentError:
        spec = self._seat_specs[seat]
        who = f"the opponent at seat {seat} ({spec})"
        if action is _UNCHOSEN:
            what = f"raised {type(error).__name__} while choosing its move: {error}"
        else:
            what = f"chose action {action!r}, which was refused: {error}"
        return OpponentError(
            f"{who} {what}. It was the opponent's move, not the learner's (seat "
            f"{self.seat}); {after_error}.",
            seat,
            spec,
        )

    def _collect_reward(self, action: int) -> None:
        """Step the AEC env and add the learner's reward and its components."""
        aec = self.aec
        aec.step(action)
        if aec.earned_last_step:
            agent = self._agent
            self._reward += aec.rewards[agent]
            info = aec.infos[agent]
            for key in self._components:
                self._components[key] += info[key]

    # ------------------------------------------------------------------ views

    def seat_labels(self) -> list[str]:
        """A label per seat for pictures: ``"learner"`` and the opponents' specs."""
        labels = ["learner"] * self.rules.players
        for seat, label in self._seat_labels.items():
            labels[seat] = label
        return labels

    @property
    def _agent(self) -> str:
        return self.aec.possible_agents[self.seat]

    def _done(self) -> bool:
        agent = self._agent
        return self._illegal_end or self.aec.terminations[agent] or self.aec.truncations[agent]

    def _learner_view(self) -> dict:
        """The learner's observation and mask, encoded once per state (a step and the
        ``action_masks()`` call that follows it would otherwise encode it thrice)."""
        if not self._ready:
            raise RuntimeError("no observation before reset(); call reset() first")
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

    def _info(self, paid: bool = True) -> dict:
        """The learner's info (``INFO_KEYS``): numbers and fixed-shape arrays, fresh on
        every call (callers may keep what they are given). The ``reward_*`` components are
        the ones this step pays; ``paid=False`` (reset, an illegal step) reports zeros."""
        aec_info = self.aec.infos[self._agent]
        components = self._components if paid else dict.fromkeys(self._components, 0.0)
        return {
            "catches": aec_info["catches"],
            "tiebreak_points": aec_info["tiebreak_points"],
            **components,
            "winners": aec_info["winners"].copy(),
            "seat": self.seat,
            "illegal_action": self._illegal_end,
            "action_mask": self.action_masks(),
        }

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        self.aec._require_reset("render()")
        if self.render_mode == "rgb_array":
            return self.aec.render_rgb(self.seat, self.seat_labels())
        text = self.aec.render_text(self.seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text


GoFishEnv.__doc__ = _DOC.format(
    history=DEFAULT_HISTORY,
    max_asks=DEFAULT_MAX_ASKS,
    redeals=MAX_REDEALS,
    layout=ObservationLayout(Rules(), DEFAULT_HISTORY).markdown(),
    info=_info_table(),
)
