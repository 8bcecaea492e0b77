"""The PettingZoo AEC environment: a thin adapter over the rules engine."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from functools import partial
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers as pz_wrappers
from pettingzoo.utils.env_logger import EnvLogger

from gofish_env.actions import ActionCodec
from gofish_env.events import Ask, Deal
from gofish_env.game import Game
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.match import Match, new_game
from gofish_env.observation import (
    DEFAULT_HISTORY,
    ObservationEncoder,
    ObservationLayout,
    StateLayout,
    encode_state,
)
from gofish_env.players import Turn
from gofish_env.render import render_table, render_view
from gofish_env.rewards import COMPONENTS, RewardCalculator, RewardScheme, check_illegal_action
from gofish_env.rules import Rules, is_integer
from gofish_env.scene import recent_events, seat_scene, table_scene

DEFAULT_MAX_ASKS = 1000
MAX_REDEALS = 100  # deals tried for one that does not end the game at once (or, in the
# single-agent envs, before the learner's first move)
RENDER_VIEWS = ("current", "table")
# Each seat's info, from reset on: its catches and tiebreak points, this step's reward
# components (unweighted, one key each), and the winners (length P, 1 for each winner)
# once the game is over (zeros until then).
REWARD_INFO_KEYS = {name: f"reward_{name}" for name in COMPONENTS}
INFO_KEYS = ("catches", "tiebreak_points", *REWARD_INFO_KEYS.values(), "winners")


def check_render_mode(render_mode: Any, modes: list[str]) -> None:
    """Refuse a ``render_mode`` that is neither None nor one of ``modes``."""
    if render_mode is not None and render_mode not in modes:
        allowed = ", ".join(["None", *(repr(mode) for mode in modes)])
        raise ValueError(f"render_mode: got {render_mode!r}; allowed: {allowed}")


def check_start_game(game: Any, rules: Rules, name: str = "options['game']") -> None:
    """Refuse a start position that is not a ``Game`` of ``rules`` in play (``name`` says
    which option it came in)."""
    if not isinstance(game, Game):
        raise ValueError(f"{name}: got {game!r}; allowed: a gofish_env.Game")
    if rules.match_target:
        raise ValueError(
            f"{name}: the rules play a match (match_target={rules.match_target}), which "
            "starts from a deal; allowed: no start position in match play"
        )
    if game.rules != rules:
        raise ValueError(
            f"{name}: its rules differ from the env's rules "
            f"({game.rules.describe()} vs {rules.describe()})"
        )
    if game.is_over:
        raise ValueError(f"{name}: the game is over; allowed: a game in play")


class InvalidAction(ValueError, AssertionError):
    """An action that is not an action at all: not an integer, or outside the action space.

    A ``ValueError``; also an ``AssertionError``, which is what PettingZoo's
    ``AssertOutOfBoundsWrapper`` raises for such actions, so code written for PettingZoo's
    wrapper chain catches it too. Nothing is changed when it is raised. (A well-formed
    action that the rules refuse in the position raises ``IllegalAsk`` instead.)
    """


def check_action(action: Any, size: int, who: str = "") -> int:
    """``action`` as a Python int when it is an integer from 0 to ``size - 1``: an ``int``,
    a NumPy integer, or a NumPy integer array holding one value (what SB3 passes). Anything
    else (a float, even 1.0; a string; a bool; None; an array of another size or dtype; a
    number out of range) raises ``InvalidAction`` naming it: nothing is rounded or parsed."""
    value = None
    if isinstance(action, int | np.integer) and not isinstance(action, bool):
        value = int(action)
    elif isinstance(action, np.ndarray) and action.size == 1 and action.dtype.kind in "iu":
        value = int(action.reshape(()))
    if value is None or not 0 <= value < size:
        extra = (
            " (None is only for an agent that is terminated or truncated)"
            if action is None and who
            else ""
        )
        raise InvalidAction(
            f"action: got {action!r}{who}; allowed: an integer from 0 to {size - 1}{extra}"
        )
    return value


_DOC = """Go Fish as a PettingZoo AEC environment (``gofish_v0``).

| | |
|---|---|
| Import | ``gofish_env.env(players=4)`` (wrapped) or ``gofish_env.raw_env(...)`` |
| Registered | ``pettingzoo.make("aec", "gofish/GoFish-v0", players=4)`` (as ``env``) |
| Agents | ``player_0`` .. ``player_{{P-1}}``; seat i is ``player_i`` |
| Action space | ``Discrete((P - 1) * A)``, A = 13 ranks (14 with jokers; 52/53 cards) |
| Action ``a`` by seat ``s`` | asks seat ``(s + 1 + a // A) % P`` for rank (or card) ``a % A`` |
| Observation | ``Dict(observation=Box(0, 1, (N,), float32),`` |
| | ``action_mask=Box(0, 1, ((P - 1) * A,), int8))`` |
| State | ``state()`` in ``state_space = Box(0, 1, (S,), float32)``: every hand, the |
| | pool's cards, the public table (for centralized critics; docs/observation.md) |
| Rewards | "catches", "catch_points", "catches+tiebreak", "win", "zero_sum", |
| | "catch_margin", or weights |
| Episode end | termination when the game ends; truncation after ``max_asks`` asks |

Actions: ``codec.to_ask(seat, action)`` and ``codec.to_action(seat, target, rank)`` convert
both ways (``env.unwrapped.codec``). Ranks are indices 0..12 = 2..A (13 = joker); with
exact-card asks the index is ``rank * 4 + suit`` (suits C, D, H, S), 52 for a joker.

The action mask is 1 exactly for the legal asks of the seat to move and all zeros for every
other seat. An illegal action to ``raw_env`` raises ``gofish_env.IllegalAsk`` with its
reason and changes nothing; ``env()`` by default ends the game with ``illegal_reward`` for
the offender (PettingZoo's ``TerminateIllegalWrapper``), or raises with
``illegal_action="raise"``. Something that is not an action (a float such as 1.0, a string,
a bool, None for an agent still playing, a number outside the action space) raises
``InvalidAction`` (a ``ValueError``) naming it and changes nothing. ``step()`` before
``reset()`` or after every agent is done raises ``RuntimeError``.

Observation layout for the table rules, 4 players, history={history} (see
docs/observation.md for how sizes scale; generated from ``ObservationLayout``):

{layout}

Rewards are paid to every seat the moment they are earned, also on other seats' turns;
catches laid at the deal are paid with the first step, as an episode starts at zero reward
(see ``gofish_env.rewards``). ``infos[agent]`` has the same keys at every step from
``reset`` on (``INFO_KEYS``), each a number or a fixed-shape array: the seat's ``catches``
and ``tiebreak_points``, this step's unweighted reward components ``reward_catch``,
``reward_catch_points``, ``reward_tiebreak`` and ``reward_win``, and ``winners`` (length P,
int8, 1 for each winner once the game is over, zeros before).

Arguments: ``players`` (2..6; default 4, or the rules' count), ``rules`` (a ``Rules`` or a
preset name; any house rule; must agree with ``players``), ``reward``, ``history`` (recent asks in
the observation, default {history}), ``max_asks`` (default {max_asks}), ``render_mode``
("ansi", "human" or "rgb_array"), ``render_view`` ("current" for the seat to move, a seat number, or
"table" for every hand face up).

``reset(seed=..., options={{"game": Game.from_hands(...)}})`` starts from an exact position.

Version history: v0, first release.
"""


class raw_env(AECEnv):
    metadata: ClassVar[dict] = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "name": "gofish_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        players: int | None = None,
        rules: Rules | str | None = None,
        reward: str | dict | RewardScheme = "catches",
        history: int = DEFAULT_HISTORY,
        max_asks: int = DEFAULT_MAX_ASKS,
        render_mode: str | None = None,
        render_view: str | int = "current",
    ):
        super().__init__()
        self.rules = Rules.resolve(players, rules)
        check_render_mode(render_mode, self.metadata["render_modes"])
        is_seat = is_integer(render_view)
        if is_seat:
            render_view = int(render_view)
        if render_view not in RENDER_VIEWS and not (
            is_seat and render_view in range(self.rules.players)
        ):
            raise ValueError(
                f"render_view: got {render_view!r}; allowed: 'current', 'table', or a seat "
                f"from 0 to {self.rules.players - 1}"
            )
        if not is_integer(max_asks) or max_asks < 1:
            raise ValueError(f"max_asks: got {max_asks!r}; allowed: an integer >= 1")
        self.render_mode = render_mode
        self.render_view = render_view
        self.max_asks = int(max_asks)
        self.layout = ObservationLayout(self.rules, history)
        self.codec = ActionCodec(self.rules)
        self.reward_scheme = RewardScheme.make(reward)
        self._reward_calc = RewardCalculator(self.rules, self.reward_scheme)
        players = self.rules.players
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self.agent_name_mapping = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self.layout.size,), np.float32),
                "action_mask": spaces.Box(0, 1, (self.codec.size,), np.int8),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, observation_space)
        self.action_spaces = {
            agent: spaces.Discrete(self.codec.size) for agent in self.possible_agents
        }
        self.state_layout = StateLayout(self.rules, history)
        self.state_space = spaces.Box(0.0, 1.0, (self.state_layout.size,), np.float32)
        self._seed_rng = np.random.default_rng()
        self.game: Any = None
        self.agents: list[str] = []  # none until reset()
        # How the episode started, to rebuild it (``_rewind``): the deal's seed, or the
        # game given to reset() and its event count then.
        self._start: int | Any = None
        self._start_events = 0
        self._encoder: ObservationEncoder | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        options = options or {}
        # Other option keys are ignored, as PettingZoo's api_test expects.
        if "game" in options:  # checked before anything changes, the seed included
            game = options["game"]
            check_start_game(game, self.rules)
        if seed is not None:
            self._seed_rng = np.random.default_rng(seed)
        if "game" in options:
            self._start, self._start_events = game, game.num_events
            game = copy.deepcopy(game)
        else:
            # A deal that ends the game at once (possible under some house rules: every hand
            # laid out, or one emptied, at the deal) is dealt again: an episode has a move.
            for _ in range(MAX_REDEALS):
                deal_seed = int(self._seed_rng.integers(2**63))
                game = new_game(self.rules, deal_seed)
                if not game.is_over:
                    break
            else:
                raise RuntimeError(f"every one of {MAX_REDEALS} deals ended the game at once")
            self._start = deal_seed
        self._begin(game)

    def _begin(self, game) -> None:
        """Start the episode at ``game`` (the env's own copy)."""
        self.game = game
        self._tracker = KnowledgeTracker(game)
        if self._encoder is None:
            self._encoder = ObservationEncoder(self.layout, self._tracker.public)
        else:
            self._encoder.attach(self._tracker.public)
        self.agents = self.possible_agents[:]
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self._earned_last = None  # the first _apply_events builds rewards and infos
        # An AEC episode starts at zero reward (PettingZoo's api_test checks it), so what
        # the deal earns (catches laid in opening hands) is paid with the first step. A
        # position in play (a game given after asks) owes nothing for what came before it.
        self._unpaid = game.events if game.num_asks == 0 else []
        self._apply_events([])
        self._update_selection(self.possible_agents[0])

    def step(self, action: int | None) -> None:
        if not self.agents:
            self._refuse_step()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise InvalidAction(
                    f"action: got {action!r} for {agent}, which is terminated or truncated; "
                    f"allowed: None"
                )
            self._was_dead_step(action)
            return
        codec = self.codec
        if type(action) is not int or not 0 <= action < codec.size:
            action = check_action(action, codec.size, f" for {agent}, which is to move")
        seat = self.agent_name_mapping[agent]
        offset, wanted = divmod(action, codec.ask_count)
        events = self.game.ask((seat + 1 + offset) % codec.players, wanted)
        if self._unpaid:
            events, self._unpaid = self._unpaid + events, []
        self._cumulative_rewards[agent] = 0.0
        self._apply_events(events)
        self._update_selection(agent)
        if self.render_mode == "human":
            self.render()

    def _refuse_step(self) -> None:
        if self.game is None:
            raise RuntimeError("step() called before reset(); call reset() first")
        raise RuntimeError(
            "step() called after every agent is done (the episode is over); call reset() "
            "to start a new one"
        )

    def _rewind(self, asks: int) -> None:
        """Put the env back as it stood right after the episode's first ``asks`` asks.

        The engine records every ask in its event log and plays deterministically, so the
        episode's start (the deal's seed, or the game given to ``reset()``) is built again
        and those asks are replayed through ``step``: game, knowledge, observations,
        rewards, infos and the agent to move come out exactly as they were. Nothing is
        copied on the way; the cost, a replay, is paid only when a step must be undone
        (``GoFishEnv`` does so when an opponent fails mid-step).
        """
        start = self._start
        if start is None:
            raise RuntimeError("nothing to rewind: call reset() first")
        if not isinstance(start, int) and start.num_events != self._start_events:
            raise RuntimeError("cannot rewind: the game given to reset() was played on since")
        card_asks = self.rules.ask_for == "card"
        to_action = self.codec.to_action
        old_events = self.game.events
        actions: list[int] = []
        for event in old_events:
            if type(event) is Ask:
                if len(actions) == asks:
                    break
                wanted = event.card if card_asks else event.rank
                actions.append(to_action(event.asker, event.target, wanted))
        game = new_game(self.rules, start) if isinstance(start, int) else copy.deepcopy(start)
        render_mode, self.render_mode = self.render_mode, None
        try:
            self._begin(game)
            for action in actions:
                self.step(action)
        finally:
            self.render_mode = render_mode
        if game.events != old_events[: game.num_events]:
            raise RuntimeError("rewind: the replayed game differs from the one recorded")

    def _apply_events(self, events) -> None:
        """Pay this step's rewards and refresh infos and the end of the episode."""
        game = self.game
        over = game.is_over
        earned = over or self._reward_calc.earns(events)
        agents = self.possible_agents
        # In match play a step can end a game without a catch: the next game's deal resets
        # the catches and points the infos tell.
        dealt = any(type(event) is Deal for event in events)
        if earned or dealt or self._earned_last is None:
            rewards, parts = self._reward_calc.rewards(events, game.winners if over else None)
            self.rewards = dict(zip(agents, rewards, strict=True))
            self._accumulate_rewards()
            self.infos = {
                agent: self._seat_info(
                    len(game.catches(seat)), game.tiebreak_points(seat), parts[seat]
                )
                for seat, agent in enumerate(agents)
            }
        elif self._earned_last:
            # Nothing earned after a step that earned: zero rewards, zero components.
            self.rewards = dict.fromkeys(agents, 0.0)
            zero = self._reward_calc.zero_components()
            self.infos = {
                agent: self._seat_info(info["catches"], info["tiebreak_points"], zero)
                for agent, info in self.infos.items()
            }
        # Otherwise the rewards (all zero) and infos (same catches, zero components) stand.
        self._earned_last = earned
        if over:
            winners = np.zeros(self.rules.players, np.int8)
            winners[list(game.winners)] = 1
            for info in self.infos.values():
                info["winners"] = winners.copy()
            self.terminations = dict.fromkeys(self.agents, True)
        elif (game.game if isinstance(game, Match) else game).num_asks >= self.max_asks:
            # A match's cap is each game's, as a single game's: a whole match may ask more.
            self.truncations = dict.fromkeys(self.agents, True)

    def _seat_info(self, catches: int, points: int, parts: dict[str, float]) -> dict:
        """One seat's info: numbers and fixed-shape arrays, the same keys every step
        (``INFO_KEYS``), as TorchRL's and Tianshou's collectors need."""
        info: dict[str, Any] = {"catches": catches, "tiebreak_points": points}
        for name, key in REWARD_INFO_KEYS.items():
            info[key] = parts[name]
        info["winners"] = np.zeros(self.rules.players, np.int8)
        return info

    @property
    def earned_last_step(self) -> bool:
        """Whether the last step paid anything (or ended the game): when not, every
        reward and reward component of that step is zero."""
        return bool(self._earned_last)

    def _update_selection(self, previous: str) -> None:
        current = self.game.current_player
        if current is not None and not (self.terminations[previous] or self.truncations[previous]):
            self.agent_selection = self.possible_agents[current]
        else:
            # Over: every agent takes its dead step, starting left of the last mover.
            seat = self.agent_name_mapping[previous]
            self.agent_selection = self.possible_agents[(seat + 1) % self.rules.players]

    # ------------------------------------------------------------------ views

    def _require_reset(self, what: str) -> None:
        if self.game is None:
            raise RuntimeError(f"{what} before reset(): call reset() first")

    def last(self, observe: bool = True) -> tuple:
        self._require_reset("last()")
        return super().last(observe)

    def observe(self, agent: str) -> dict:
        """The seat's observation and action mask: new arrays on every call."""
        self._require_reset("observe()")
        seat = self.agent_name_mapping[agent]
        game = self.game
        current = game.current_player
        observation = self._observation(seat)
        if current == seat:
            mask = self.codec.mask(seat, game.legal_asks())
        else:
            mask = np.zeros(self.codec.size, np.int8)
        return {"observation": observation, "action_mask": mask}

    def _observation(self, seat: int) -> np.ndarray:
        game = self.game
        # Knowledge and encoder catch up with the events only when someone looks: in the
        # single-agent env several seats' moves pass between two observations.
        self._tracker.sync()
        encoder = self._encoder
        if encoder.num_events != game.num_events:
            encoder.update(game.events_since(encoder.num_events))
        own_cards = game.hand_card_counts(seat) if self.rules.ask_for == "card" else None
        return encoder.observe(seat, game.hand_counts(seat), game.current_player, own_cards)

    def state(self) -> np.ndarray:
        """The global state (``state_space``): every hand, what the pool holds, and the
        public table, for critics trained with every hand in sight (centralized training,
        decentralized execution). It holds every seat's hidden cards: never give it to a
        seat's policy. Layout: ``state_layout``, docs/observation.md. A new array."""
        self._require_reset("state()")
        return encode_state(self.game, self.state_layout, self._observation(0))

    def is_legal(self, action: int) -> bool:
        """Whether the agent to move may take ``action`` now (its mask entry is 1)."""
        seat = self.agent_name_mapping[self.agent_selection]
        if self.game.current_player != seat:
            return False
        return self.codec.to_ask(seat, action) in self.game.legal_asks()

    def view(self, seat: int):
        """The ``PlayerView`` of a seat: what it may know (used by scripted opponents)."""
        return self._tracker.view(seat)

    def turn(self, seat: int) -> Turn:
        """The seat's ``Turn``: its view, observation and mask, made when a player reads
        them (what a ``SeatPlayer`` decides with)."""
        agent = self.possible_agents[seat]
        return Turn(
            seat, self.codec, partial(self._tracker.view, seat), partial(self.observe, agent)
        )

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        self._require_reset("render()")
        if self.render_mode == "rgb_array":
            return self.render_rgb(self.render_view)
        text = self.render_text(self.render_view)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _resolve_view(self, view: str | int) -> int | None:
        """The seat whose eyes ``view`` means, or None for every hand face up."""
        if view == "current":
            return self.game.current_player
        return None if view == "table" else view

    def render_scene(self, view: str | int = "current", labels: Sequence[str] | None = None):
        """The ``gofish_env.scene.Scene`` of the table from one seat's view, or with every
        hand face up (``"table"``, and ``"current"`` once the game is over)."""
        seat = self._resolve_view(view)
        if seat is None:
            return table_scene(self.game, labels)
        return seat_scene(self._tracker.view(seat), recent_events(self.game), labels)

    def render_rgb(self, view: str | int = "current", labels: Sequence[str] | None = None):
        """The table drawn as a ``(640, 960, 3)`` uint8 array (``gofish_env.picture``), from
        the view ``render_text`` takes."""
        from gofish_env.picture import draw  # Pillow loads only for pictures

        return draw(self.render_scene(view, labels))

    def render_text(self, view: str | int = "current") -> str:
        """Ansi text of the table from one seat's view (``"current"`` = the seat to move,
        or a seat number), or every hand face up with ``"table"``."""
        game = self.game
        view = self._resolve_view(view)
        if view is None:
            return render_table(game)
        recent = game.events_since(max(0, game.num_events - 6))
        return render_view(self._tracker.view(view), recent, title=f"Go Fish, seat {view}'s view")

    def close(self) -> None:
        pass


raw_env.__doc__ = _DOC.format(
    history=DEFAULT_HISTORY,
    max_asks=DEFAULT_MAX_ASKS,
    layout=ObservationLayout(Rules(), DEFAULT_HISTORY).markdown(),
)


class ActionCheckingWrapper(pz_wrappers.OrderEnforcingWrapper):
    """Checks every action and the call order, and ends the game on an illegal action (or
    raises): PettingZoo classic's wrapper chain in one layer.

    ``env()`` of a classic env stacks ``TerminateIllegalWrapper``, ``AssertOutOfBoundsWrapper``
    and ``OrderEnforcingWrapper``; every attribute read then walks three ``__getattr__``
    layers (about 30 us a step, as much as the whole game step). This subclass of
    ``OrderEnforcingWrapper`` keeps its order checks and does the other two wrappers' checks
    in ``step``, reading the hot attributes straight from the raw env. It behaves as the
    stacked chain does (tests compare them move for move); ``env(wrappers="pettingzoo")``
    builds the stacked chain itself.
    """

    def __init__(self, env: raw_env, illegal_action: str, illegal_reward: float):
        super().__init__(env)
        self._raw = env
        self._illegal_action = illegal_action
        self._illegal_reward = illegal_reward
        self._illegal_end = False

    # The attributes every step and ``last()`` read, one hop from the raw env.
    agent_selection = property(lambda self: self._guard("agent_selection"))
    agents = property(lambda self: self._guard("agents"))
    rewards = property(lambda self: self._guard("rewards"))
    terminations = property(lambda self: self._guard("terminations"))
    truncations = property(lambda self: self._guard("truncations"))
    infos = property(lambda self: self._guard("infos"))
    _cumulative_rewards = property(lambda self: self._raw._cumulative_rewards)

    def _guard(self, name: str) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._illegal_end = False
        super().reset(seed=seed, options=options)

    def observe(self, agent: str) -> dict:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self._raw.observe(agent)

    def last(self, observe: bool = True) -> tuple:
        """``AECEnv.last`` reading the raw env directly (the loop calls it every step)."""
        raw = self._raw
        agent = self._guard("agent_selection")
        observation = raw.observe(agent) if observe else None
        return (
            observation,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )

    def step(self, action: int | None) -> None:
        raw = self._raw
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        if not raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self._has_updated = True
        agent = raw.agent_selection
        dead = raw.terminations[agent] or raw.truncations[agent]
        # AssertOutOfBoundsWrapper's check, stricter: InvalidAction (an AssertionError too)
        # names the action; a bool, a float or a wrong-sized array is refused.
        if dead:
            raw.step(action)  # None: the dead step; anything else: InvalidAction
            return
        size = raw.codec.size
        if type(action) is not int or not 0 <= action < size:
            action = check_action(action, size, f" for {agent}, which is to move")
        if self._illegal_action == "terminate" and not raw.is_legal(action):
            # TerminateIllegalWrapper's ending: the offender gets the penalty.
            EnvLogger.warn_on_illegal_move()
            raw._cumulative_rewards[agent] = 0
            raw.terminations = dict.fromkeys(raw.agents, True)
            raw.truncations = dict.fromkeys(raw.agents, True)
            raw.rewards = dict.fromkeys(raw.agents, 0)
            raw.rewards[agent] = self._illegal_reward
            raw._accumulate_rewards()
            raw._deads_step_first()
            self._illegal_end = True
        else:
            raw.step(action)


WRAPPER_CHOICES = ("classic", "pettingzoo")


def env(
    illegal_action: str = "terminate",
    illegal_reward: float = -1.0,
    wrappers: str = "classic",
    **kwargs,
) -> AECEnv:
    """The AEC env wrapped as PettingZoo classic envs are. ``illegal_action="terminate"``
    ends the game with ``illegal_reward`` to the offender; ``"raise"`` raises IllegalAsk.
    ``wrappers="classic"`` is the one-layer ``ActionCheckingWrapper``; ``"pettingzoo"`` stacks
    PettingZoo's own wrappers (slower, and they refuse bad actions their own way: an
    ``AssertionError`` for a number outside the space or a NumPy array; docs/environments.md)."""
    illegal_reward = check_illegal_action(illegal_action, illegal_reward)
    if wrappers not in WRAPPER_CHOICES:
        raise ValueError(f"wrappers: got {wrappers!r}; allowed: 'classic', 'pettingzoo'")
    raw = raw_env(**kwargs)
    if wrappers == "classic":
        return ActionCheckingWrapper(raw, illegal_action, illegal_reward)
    wrapped: AECEnv = raw
    if illegal_action == "terminate":
        wrapped = pz_wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=illegal_reward)
    wrapped = pz_wrappers.AssertOutOfBoundsWrapper(wrapped)
    return pz_wrappers.OrderEnforcingWrapper(wrapped)


env.__doc__ = (env.__doc__ or "") + "\n\n" + raw_env.__doc__
