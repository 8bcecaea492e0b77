"""A learning seat in every game of a batch, with the opponents around it: the engine of
the vector environments (``GoFishVectorEnv`` for Gymnasium, ``gofish_training``'s SB3
``VecEnv``). Each game behaves as a ``GoFishEnv`` does: a step is the learner's ask and
the opponents' moves up to its next turn, rewards are the learner's own summed over them,
a deal that ends before the learner's first move is dealt again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gofish_env.aec_env import DEFAULT_MAX_ASKS, check_start_game
from gofish_env.game import IllegalAsk
from gofish_env.gym_env import (
    MAX_REDEALS,
    OpponentError,
    check_max_asks,
    check_seat,
    truncated_before_learner,
)
from gofish_env.observation import DEFAULT_HISTORY
from gofish_env.players import (
    MIX_PREFIX,
    check_history,
    check_player_spec,
    make_player,
    mix_members,
    seat_copy,
)
from gofish_env.rewards import COMPONENTS, RewardScheme
from gofish_env.rules import Rules, is_integer
from gofish_env.vector import play
from gofish_env.vector.cpus import LEVEL_CODES, NOT_COMPILED
from gofish_env.vector.engine import seed_state
from gofish_env.vector.game import VectorGame, _count
from gofish_env.vector.players import ArrayView, CompiledCPUs
from gofish_env.vector.state import SHARED_FIELDS, STATE_FIELDS
from gofish_env.vector.structs import NotCopyable


class Member:
    """One kind of opponent: a compiled level, or anything else (played in Python)."""

    def __init__(self, spec: Any, rules: Rules, history: int):
        self.spec = spec
        self.name = spec if isinstance(spec, str) else repr(spec)
        self.level = LEVEL_CODES.get(spec, NOT_COMPILED) if isinstance(spec, str) else -1
        if isinstance(spec, str) and self.level == NOT_COMPILED:
            check_player_spec(spec, rules)
        if not self.compiled:  # refuses what is not a player, or takes another history
            check_history(make_player(spec, rules), rules, history)

    @property
    def compiled(self) -> bool:
        return self.level != NOT_COMPILED

    def player(self, rules: Rules):
        """A player for one seat of one game: a CPU object or a player is copied (it
        remembers the game); saved agents share their network (``gofish_env.players``)."""
        return make_player(seat_copy(self.spec), rules)


def parse_opponents(opponents: Any, rules: Rules, history: int) -> list[list[Member]]:
    """The members of each opponent slot (the seats from the learner's left): one spec for
    every slot or one per slot; ``"mix:a,b"`` draws a member each episode."""
    count = rules.players - 1
    if isinstance(opponents, Sequence) and not isinstance(opponents, str):
        if len(opponents) != count:
            raise ValueError(f"opponents: got {len(opponents)} specs; allowed: one spec or {count}")
        specs = list(opponents)
    else:
        specs = [opponents] * count
    slots = []
    for spec in specs:
        try:
            if isinstance(spec, str) and spec.startswith(MIX_PREFIX):
                members = mix_members(spec)
                slots.append([Member(member, rules, history) for member in members])
            else:
                slots.append([Member(spec, rules, history)])
        except ValueError as error:
            raise ValueError(f"opponents: {error}") from None
    return slots


# The fields a copied position brings (not the generators, nor the per-rank tables).
PER_GAME_FIELDS = tuple(
    name for name in STATE_FIELDS if name != "deal_rng" and name not in SHARED_FIELDS
)


class LearnerBatch(NotCopyable):
    """``num_envs`` games, a learning seat in each, opponents at the other seats."""

    _copy_advice = "Build a new one with the same arguments and seed it."

    def __init__(
        self,
        num_envs: int,
        rules: Rules,
        opponents: Any = "random",
        seat: int | str = 0,
        reward: str | dict | RewardScheme = "catches",
        history: int = DEFAULT_HISTORY,
        max_asks: int = DEFAULT_MAX_ASKS,
        compile_rules: bool = False,
    ):
        self.num_envs = _count("num_envs", num_envs)
        players = rules.players
        seat = check_seat(seat, players)
        if not is_integer(max_asks) or max_asks < 1:
            raise ValueError(f"max_asks: got {max_asks!r}; allowed: an integer >= 1")
        max_asks = int(max_asks)
        check_max_asks(max_asks, rules, seat)
        self.rules = rules
        self.seat_choice = seat
        self.max_asks = max_asks
        self.scheme = RewardScheme.make(reward)
        self.weights = np.array([self.scheme.weights.get(name, 0.0) for name in COMPONENTS], float)
        self.batch = VectorGame(
            rules, self.num_envs, 0, history, log_size=max_asks + 1, compile_rules=compile_rules
        )
        self.cpus = CompiledCPUs(self.batch, None)
        self.view = ArrayView(self.batch)
        n = self.num_envs
        self.learner = np.full(n, 0 if seat == "random" else int(seat), np.int64)
        self.rewards = np.zeros(n)
        self.components = np.zeros((n, len(COMPONENTS)))
        self.illegal = np.zeros(n, bool)
        # Games not stepped since their start: what the learner earned before its first move
        # is paid with step 1, so their infos report no reward components yet.
        self.unpaid = np.zeros(n, bool)
        self.env_rng = np.zeros(n, np.uint64)
        # Each game's opponents as seated at its deal: the slots (``set_opponents``), the
        # member of each slot at each seat, and the Python players by (slot, member). A game
        # keeps them to its end when ``set_opponents`` changes the slots for later deals.
        self.game_slots: list[list | None] = [None] * n
        self.seated = np.zeros((n, rules.players), np.int64)
        self.python_players: list[dict[tuple[int, int], Any]] = [{} for _ in range(n)]
        self.set_opponents(opponents)
        self.seed(None)

    # ------------------------------------------------------------------ set-up

    def set_opponents(self, opponents: Any) -> None:
        """Replace the opponents; they sit down at each game's next deal."""
        self.slots = parse_opponents(opponents, self.rules, self.batch.history)
        self.opponent_specs = [
            slot[0].name if len(slot) == 1 else MIX_PREFIX + ",".join(m.name for m in slot)
            for slot in self.slots
        ]
        self.has_python = any(not m.compiled for slot in self.slots for m in slot)

    def seed(self, seed: int | None) -> None:
        """Seed every game's streams: deals, seats, members of mixes, the opponents."""
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
        self.batch.seed(seed)  # refuses a bad seed before anything changes
        base = np.uint64(seed) ^ np.uint64(0x5DEECE66D)
        self.env_rng[:] = [seed_state(base, game) for game in range(self.num_envs)]

    # ------------------------------------------------------------------ episodes

    def start(self, games: np.ndarray, positions=None) -> None:
        """New episodes at ``games``: a deal (or the given ``positions``, Python ``Game``s),
        a learner's seat, the opponents, and their moves up to the learner's first turn. A
        deal whose game ends before then is dealt again; one that reaches ``max_asks``
        before then raises ``ValueError``."""
        games = np.asarray(games, np.int64)
        if positions is not None:
            self._copy_positions(games, positions)
        pending = games
        for _ in range(MAX_REDEALS):
            if positions is None:
                self.batch.deal(pending)
            self._seat(pending)
            self.rewards[pending] = 0.0
            self.components[pending] = 0.0
            self.illegal[pending] = False
            self.unpaid[pending] = True
            self._play_opponents(self._mask(pending))
            done = self.done()[pending]
            if not done.any():
                return
            cut = self.truncated()[pending]
            if cut.any():  # the ask limit, not the deal: no deal would do better
                at = int(np.flatnonzero(cut)[0])
                game = int(pending[at])
                given = 0 if positions is None else positions[at].num_asks
                error = truncated_before_learner(self.max_asks, int(self.learner[game]), given)
                raise ValueError(f"env {game}: {error}")
            if positions is not None:
                raise ValueError("options['games']: a game ends before the learner's first move")
            pending = pending[done]
        raise RuntimeError(f"no game in {MAX_REDEALS} deals let the learner move")

    def check_positions(self, games: np.ndarray, positions) -> list:
        """``positions`` as a list, each a ``Game`` of these rules in play, one per game of
        ``games`` (refused with ``ValueError``, naming ``options['games']``, otherwise)."""
        if isinstance(positions, str | bytes) or not isinstance(positions, Sequence):
            raise ValueError(
                f"options['games']: got {type(positions).__name__}; allowed: a list of "
                f"gofish_env.Game, one per sub-env reset"
            )
        positions = list(positions)
        if len(positions) != len(games):
            raise ValueError(f"options['games']: got {len(positions)} games for {len(games)} envs")
        for index, game in enumerate(positions):
            check_start_game(game, self.rules, f"options['games'][{index}]")
        return positions

    def _copy_positions(self, games: np.ndarray, positions) -> None:
        positions = self.check_positions(games, positions)
        copied = VectorGame.from_games(positions, self.batch.history, log_size=self.max_asks + 1)
        for name in PER_GAME_FIELDS:
            getattr(self.batch.state, name)[games] = getattr(copied.state, name)

    def _seat(self, games: np.ndarray) -> None:
        """The learner's seat and the opponents of each game, with fresh seeds."""
        players = self.rules.players
        if self.seat_choice == "random":
            self.learner[games] = self._draw(games, players)
        levels = self.cpus.state.level
        levels[games] = NOT_COMPILED
        for slot, members in enumerate(self.slots):
            seats = (self.learner[games] + 1 + slot) % players
            chosen = self._draw(games, len(members)) if len(members) > 1 else np.zeros_like(games)
            self.seated[games, seats] = chosen
            codes = np.array([member.level for member in members], np.int64)
            levels[games, seats] = np.where(codes[chosen] >= 0, codes[chosen], NOT_COMPILED)
        for game in games.tolist():
            if self.game_slots[game] is not self.slots:  # new opponents: new players
                self.game_slots[game] = self.slots
                self.python_players[game] = {}
        seeds = np.empty(len(games), np.uint64)
        play.draw_seeds(self.env_rng, games, seeds)
        self.cpus.reset(games, seeds)
        if self.has_python:
            for game, seed in zip(games.tolist(), seeds.tolist(), strict=True):
                self._reset_python_players(game, seed)

    def _reset_python_players(self, game: int, seed: int) -> None:
        players = self.rules.players
        learner = int(self.learner[game])
        for slot, members in enumerate(self.slots):
            seat = (learner + 1 + slot) % players
            member = int(self.seated[game, seat])
            if members[member].compiled:
                continue
            players_of_game = self.python_players[game]
            if (slot, member) not in players_of_game:
                players_of_game[slot, member] = members[member].player(self.rules)
            players_of_game[slot, member].reset(int(seed_state(np.uint64(seed), seat)) >> 1)

    def _draw(self, games: np.ndarray, n: int) -> np.ndarray:
        out = np.empty(len(games), np.int64)
        play.draw_below(self.env_rng, games, np.full(len(games), n, np.int64), out)
        return out

    def _mask(self, games: np.ndarray) -> np.ndarray:
        mask = np.zeros(self.num_envs, bool)
        mask[games] = True
        return mask

    # ------------------------------------------------------------------ steps

    def act(self, actions: np.ndarray, active: np.ndarray, illegal_raises: bool) -> np.ndarray:
        """The learners' actions in the ``active`` games, then the opponents up to their
        next turns. Returns the mask of games whose action was illegal (their episodes end
        there unless ``illegal_raises``: then ``IllegalAsk`` names the first, and nothing
        changes)."""
        batch = self.batch
        actions = np.asarray(actions, np.int64)
        masks = self.masks()
        legal = np.zeros(self.num_envs, bool)
        in_range = (actions >= 0) & (actions < batch.constants.actions)
        legal[in_range] = masks[np.flatnonzero(in_range), actions[in_range]]
        illegal = active & ~legal
        if illegal.any() and illegal_raises:
            game = int(np.flatnonzero(illegal)[0])
            raise IllegalAsk(f"env {game}: {batch.refusal(game, int(actions[game]))}")
        self.illegal |= illegal
        self.unpaid[active] = False
        go = active & legal
        K, S = batch.kernel_constants, batch.kernel_state
        play.apply_actions(
            S,
            K,
            actions,
            go,
            self.learner,
            self.weights,
            self.scheme.zero_sum,
            self.rewards,
            self.components,
        )
        self._play_opponents(go)
        return illegal

    def _play_opponents(self, active: np.ndarray) -> None:
        batch = self.batch
        S, K, C = batch.kernel_state, batch.kernel_constants, self.cpus.kernel_state
        args = (self.learner, self.max_asks, self.weights, self.scheme.zero_sum)
        waiting = play.play_opponents(S, K, C, active, *args, self.rewards, self.components)
        while waiting.any():
            for game in np.flatnonzero(waiting).tolist():
                self._python_move(game)
            waiting = play.play_opponents(S, K, C, waiting, *args, self.rewards, self.components)

    def _python_move(self, game: int) -> None:
        """One move by a Python player (``master``, a saved agent, a callable, ...)."""
        batch = self.batch
        seat = int(batch.state.current[game])
        slot = (seat - int(self.learner[game]) - 1) % self.rules.players
        member = int(self.seated[game, seat])
        player = self.python_players[game][slot, member]
        action = None
        try:
            action = player.act(self.view.turn(game, seat))
            action = int(action)
            if not batch.legal_mask_of(game)[action]:
                raise IllegalAsk(f"action {action} is not legal now")
        except Exception as error:
            spec = self.game_slots[game][slot][member].name
            what = (
                f"raised {type(error).__name__} while choosing its move: {error}"
                if action is None
                else f"chose action {action!r}, which was refused: {error}"
            )
            failure = OpponentError(
                f"env {game}: the opponent at seat {seat} ({spec}) {what}. Call reset().",
                seat,
                spec,
            )
            failure.env = game
            raise failure from error
        actions = np.zeros(self.num_envs, np.int64)
        actions[game] = action
        play.apply_actions(
            batch.kernel_state,
            batch.kernel_constants,
            actions,
            self._mask(np.array([game])),
            self.learner,
            self.weights,
            self.scheme.zero_sum,
            self.rewards,
            self.components,
        )

    # ------------------------------------------------------------------ views

    def terminated(self) -> np.ndarray:
        return self.batch.state.over | self.illegal

    def truncated(self) -> np.ndarray:
        state = self.batch.state
        return ~state.over & ~self.illegal & (state.num_asks >= self.max_asks)

    def done(self) -> np.ndarray:
        return self.terminated() | self.truncated()

    def masks(self) -> np.ndarray:
        """The learners' legal actions (all False where it is not to move, or its episode
        is terminated: over, or ended by an illegal action). As ``GoFishEnv``'s, a game
        truncated by ``max_asks`` on the learner's turn keeps its legal asks."""
        masks = self.batch.legal_mask()
        masks[(self.batch.state.current != self.learner) | self.terminated()] = False
        return masks

    def observations(self, games: np.ndarray | None = None) -> np.ndarray:
        """The learners' observations: of every game, or of ``games`` only (in order)."""
        if games is None:
            return self.batch.observe(self.learner)
        return self.batch.observe(self.learner[games], games)

    def infos(self) -> dict[str, np.ndarray]:
        """The learners' info arrays, the keys of ``GoFishEnv``'s info. The ``reward_*``
        components are what the last step pays: zeros in a game just started (its earnings
        so far come with step 1) and after an illegal action (it pays the penalty alone)."""
        state = self.batch.state
        rows = np.arange(self.num_envs)
        info: dict[str, np.ndarray] = {
            "catches": state.catch_count[rows, self.learner].astype(np.int64),
            "tiebreak_points": state.points[rows, self.learner].astype(np.int64),
        }
        paid = ~(self.unpaid | self.illegal)
        for index, name in enumerate(COMPONENTS):
            info[f"reward_{name}"] = np.where(paid, self.components[:, index], 0.0)
        info["winners"] = state.winners.copy()
        info["seat"] = self.learner.copy()
        info["illegal_action"] = self.illegal.copy()
        info["action_mask"] = self.masks()
        return info
