"""``VectorGame``: N games of Go Fish in arrays, stepped by compiled kernels."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gofish_env.actions import ActionCodec
from gofish_env.cards import (
    MAX_RANK_POINTS,
    RANK_NAMES,
    RANK_POINTS,
    card_from_index,
    card_str,
)
from gofish_env.events import Catch
from gofish_env.game import Game, IllegalAsk, ask_refusal
from gofish_env.knowledge import PublicKnowledge
from gofish_env.observation import (
    DEFAULT_HISTORY,
    ObservationEncoder,
    ObservationLayout,
    StateLayout,
)
from gofish_env.rules import Rules
from gofish_env.vector import engine, views
from gofish_env.vector import knowledge as public
from gofish_env.vector.state import (
    allocate,
    constants,
    encoder_tables,
    state_bytes,
    state_struct,
)
from gofish_env.vector.structs import BorrowedStruct, CompiledConstants, NotCopyable


def checked_seed(seed: int | None) -> int:
    """A seed of the compiled engine's generators: None draws one; otherwise an integer from
    0 to 2**64 - 1 (the generators take 64 bits, so a larger one would play as another)."""
    if seed is None:
        return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not 0 <= seed < 2**64:
        raise ValueError(f"seed: got {seed!r}; allowed: an integer from 0 to 2**64 - 1, or None")
    return int(seed)


_REFUSALS = {
    views.NOT_A_SEAT: "not a seat: {target} (seats are 0 to {last_seat})",
    views.NOT_WANTED: "not a {what}: {wanted} ({what} indices are 0 to {last_wanted})",
    views.ASKS_ITSELF: "seat {asker} cannot ask itself",
    views.TARGET_OUT: "seat {target} is out (no cards and the pool is empty)",
    views.TARGET_EMPTY: "seat {target} holds no cards and cannot be asked",
    views.NOT_HELD: "seat {asker} holds no card of rank {rank}: it may only ask for a rank it "
    "holds",
    views.LAID_CARD: "card {wanted} is already in a catch",
    views.HELD_CARD: "seat {asker} holds card {wanted} itself: under these rules it may not "
    "ask for a card it holds",
}


def check_supported(rules: Rules) -> None:
    """Refuse, naming it, a rule the batch does not play."""
    if not isinstance(rules, Rules):
        raise ValueError(f"rules: got {rules!r}; allowed: a gofish_env.Rules")
    if rules.match_target:
        raise ValueError(
            f"match_target: got {rules.match_target}; the vector engine plays single games "
            f"(allowed: 0); play matches with gofish_env.Match"
        )


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name}: got {value!r}; allowed: an integer >= 1")
    return int(value)


class VectorGame(NotCopyable):
    """N games of Go Fish held in arrays; one call applies one ask to every live game.

    ``VectorGame(rules, num_games, seed)`` deals game i from its own generator, seeded by
    ``(seed, i)``: the same seed gives the same games whatever ``num_games`` is (game i of
    a batch of 8 is game i of a batch of 8,192). The generator is not Python's
    ``random.Random``, so the deals are not those of ``Game(rules, seed)``;
    ``dealt_game(i)`` gives the Python ``Game`` of game i's deal, and ``from_games`` copies
    any Python positions exactly. Seats, ranks and card indices are those of ``Game``;
    actions are the envs' (``gofish_env.actions``: targets relative to the seat to move).

    ``knowledge=False`` plays the rules alone: the public knowledge (the bounds, the
    observation buffers, the reward components, what the easy, normal and hard CPUs
    remember) is not kept: a random ask costs half as much or less. Such a batch refuses
    ``observe`` and every player but the compiled ``random`` CPU: it is for random
    playouts, search rollouts and rules-level statistics.

    ``compile_rules=True`` compiles the rules into the kernels as constants (every loop's
    length, every house rule's flag): the same games, played in about 0.6 of the time (a
    rules-only random ask at 4 players; see docs/performance.md), for a compile of about a
    minute the first time a rule set is used (numba keeps it in its cache for the next
    runs). The default reads the rules as numbers, so one compile serves every rule set.

    A batch cannot be pickled or copied (``TypeError``): take a game out as a Python
    ``Game`` (``dealt_game(i)``), or rebuild the batch from its seed or its ``Game``s.
    """

    _copy_advice = (
        "Take a game out as a Python Game (dealt_game(i), its deal), or rebuild the batch: "
        "VectorGame(rules, num_games, seed) deals the same games again, "
        "VectorGame.from_games(games) copies Python positions."
    )

    def __init__(
        self,
        rules: Rules | None = None,
        num_games: int = 1,
        seed: int | None = None,
        history: int = DEFAULT_HISTORY,
        log_size: int = 0,
        knowledge: bool = True,
        compile_rules: bool = False,
    ):
        rules = Rules() if rules is None else rules
        count = _count("num_games", num_games)
        self._setup(rules, count, history, log_size, knowledge, compile_rules)
        self.seed(seed)
        self.deal()

    def _setup(
        self,
        rules: Rules,
        num_games: int,
        history: int,
        log_size: int,
        knowledge: bool,
        compile_rules: bool,
    ) -> None:
        check_supported(rules)
        for name, value in (("knowledge", knowledge), ("compile_rules", compile_rules)):
            if not isinstance(value, bool):
                raise ValueError(f"{name}: got {value!r}; allowed: True or False")
        if log_size and not knowledge:
            raise ValueError(
                f"log_size: got {log_size} with knowledge=False; allowed: 0 (the ask log "
                f"is public knowledge; keep it with knowledge=True)"
            )
        self.layout = ObservationLayout(rules, history)  # checks history
        self.state_layout = StateLayout(rules, history)
        self.rules = rules
        self.num_games = num_games
        self.players = rules.players
        self.history = history
        self.knowledge = knowledge
        self.constants = constants(rules, knowledge)
        self._at, self._gather, _ = encoder_tables(rules, history)
        self.state = allocate(rules, num_games, history, log_size)
        # The same arrays as the kernels get them (gofish_env.vector.structs says why).
        self.kernel_state = BorrowedStruct(state_struct(self.state), self.state)
        # The rules as the kernels read them: numbers, or compiled in (``compile_rules``).
        self.kernel_constants = (
            CompiledConstants(self.constants) if compile_rules else self.constants
        )
        self._all_games = np.arange(num_games, dtype=np.int64)

    def seed(self, seed: int | None) -> None:
        """Seed every game's generator: game i from ``(seed, i)``; None draws a seed."""
        seed = np.uint64(checked_seed(seed))
        self.state.deal_rng[:] = [engine.seed_state(seed, game) for game in range(self.num_games)]

    def deal(self, games: Sequence[int] | np.ndarray | None = None) -> None:
        """Deal new games at the given indices (default: all) from their own generators."""
        indices = self._all_games if games is None else self._indices(games)
        engine.deal_games(self.kernel_state, self.kernel_constants, indices)

    # ------------------------------------------------------------------ exact positions

    @classmethod
    def from_games(
        cls,
        games: Sequence[Game],
        history: int = DEFAULT_HISTORY,
        seed: int | None = None,
        log_size: int = 0,
        knowledge: bool = True,
        compile_rules: bool = False,
    ) -> VectorGame:
        """A batch holding exact copies of Python ``Game`` positions: hands (in the order
        their cards arrived), pool order, catches, whose turn, and everything the public
        history has taught the table. Later deals (``deal``) come from ``seed``."""
        games = list(games)
        if not games:
            raise ValueError("games: got none; allowed: one Game or more")
        rules = games[0].rules
        for index, game in enumerate(games):
            if not isinstance(game, Game):
                raise ValueError(
                    f"games[{index}]: got {type(game).__name__}; allowed: gofish_env.Game "
                    f"(the vector engine plays single games)"
                )
            if game.rules != rules:
                raise ValueError(
                    f"games[{index}]: its rules ({game.rules.describe()}) differ from "
                    f"games[0]'s ({rules.describe()})"
                )
        batch = cls.__new__(cls)
        batch._setup(rules, len(games), history, log_size, knowledge, compile_rules)
        batch.seed(seed)
        for index, game in enumerate(games):
            batch._copy_game(index, game)
        return batch

    def _copy_game(self, g: int, game: Game) -> None:
        S, K = self.state, self.constants
        engine.clear_game(self.kernel_state, self.kernel_constants, g)
        stamp = 0
        for seat in range(self.players):
            S.counts[g, seat] = game.hand_counts(seat)
            S.sizes[g, seat] = game.hand_size(seat)
            for rank in range(K.ranks):
                S.caught[g, seat, rank] = game.catches(seat).count(rank)
            if K.card_asks:  # the cards of a rank in the order they arrived
                for index in game.hand_by_arrival(seat):
                    S.cards[g, seat, index] += 1
                    S.stamps[g, seat, index] = stamp
                    stamp += 1
            S.catch_count[g, seat] = len(game.catches(seat))
            S.points[g, seat] = game.tiebreak_points(seat)
            S.out[g, seat] = game.is_out(seat)
            S.winners[g, seat] = seat in game.winners
        S.next_stamp[g] = stamp
        pool = game.pool_order()[::-1]  # bottom first, top last
        S.pool[g, : len(pool)] = pool
        S.pool_len[g] = len(pool)
        S.num_caught[g] = int(S.catch_count[g].sum())
        if K.card_asks:
            S.laid_cards[g, sorted(game.laid_cards)] = True
        S.over[g] = game.is_over
        S.current[g] = -1 if game.current_player is None else game.current_player
        S.first_empty[g] = -1 if game.first_to_empty is None else game.first_to_empty
        S.num_asks[g] = game.num_asks
        if self.knowledge:
            self._copy_knowledge(g, game)

    def _copy_knowledge(self, g: int, game: Game) -> None:
        S, K = self.state, self.constants
        # The public knowledge and the encoder's buffers, as the environments build them.
        known = PublicKnowledge(self.rules)
        known.update(game.events)
        encoder = ObservationEncoder(self.layout, known)
        encoder.update(game.events)
        S.least[g], S.most[g], S.sure[g] = known.least, known.most, known.sure_hit_most
        S.skips[g], S.unlaid[g] = known.skips_sure_hits, known.unlaid
        if K.card_asks:
            S.known_holds[g], S.known_lacks[g] = known.known_holds, known.known_lacks
        S.buffer[g], S.ring[g] = encoder.buffer, encoder.ask_ring
        # What an opening position (the deal) earned is unpaid: the environments pay it
        # with the first step, as the AEC env does. A position in play owes nothing.
        opening = game.events if game.num_asks == 0 else []
        for event in opening:
            if isinstance(event, Catch):
                points = RANK_POINTS[event.rank]
                S.parts[g, event.seat, 0] += 1.0
                S.parts[g, event.seat, 1] += points / MAX_RANK_POINTS
                S.parts[g, event.seat, 2] += points * K.tiebreak_scale
        for seat in game.winners if opening else ():
            S.parts[g, seat, 3] += 1.0 / len(game.winners)
        for index, record in enumerate(known.asks):
            wanted = record.rank if record.card is None else record.card
            fields = (record.asker, record.target, wanted, record.hit)
            fields += (int(record.fished), int(record.shown))
            S.last[g] = fields
            if index < S.log.shape[1]:
                S.log[g, index] = fields
            public.remember(self.kernel_state, self.kernel_constants, g, index, *fields)

    def dealt_game(self, game: int) -> Game:
        """The Python ``Game`` of game ``game``'s last deal (before anything is laid): its
        hands in the order dealt, its pool and first player."""
        S, K = self.state, self.constants
        game = self._index(game)
        first = int(S.dealt_first[game])
        if first < 0:
            raise ValueError(f"game {game} was copied from a Game, not dealt here")
        deck = [_card_text(int(index)) for index in S.dealt[game]]
        hands: list[list[str]] = [[] for _ in range(self.players)]
        for i in range(K.dealt):
            hands[(first + i) % self.players].append(deck[K.deck_size - 1 - i])
        pool = deck[: K.deck_size - K.dealt][::-1]  # top first
        return Game.from_hands(hands, pool, rules=self.rules, first_player=first)

    # ------------------------------------------------------------------ asking

    def ask(self, targets, wanted) -> None:
        """Apply one ask to every live game: ``targets[g]`` a seat, ``wanted[g]`` a rank (or
        a card index under exact-card asks). Entries of finished games are ignored. An ask
        the rules refuse raises ``IllegalAsk`` naming the game, and nothing changes."""
        targets = self._column("targets", targets)
        wanted = self._column("wanted", wanted)
        game, reason = views.check_asks(self.kernel_state, self.kernel_constants, targets, wanted)
        if game >= 0:
            raise IllegalAsk(f"game {game}: {self._refusal(game, reason, targets, wanted)}")
        engine.apply_asks(self.kernel_state, self.kernel_constants, targets, wanted)

    def step(self, actions) -> None:
        """``ask`` with actions in the envs' layout (relative to each game's seat to move)."""
        actions = self._column("actions", actions)
        K = self.constants
        bad = (actions < 0) | (actions >= K.actions)
        live = ~self.state.over
        if np.any(bad & live):
            game = int(np.flatnonzero(bad & live)[0])
            raise IllegalAsk(
                f"game {game}: action {actions[game]} is not an action (0 to {K.actions - 1})"
            )
        seats = np.where(live, self.state.current, 0)
        safe = np.where(live, actions, 0)
        targets = (seats + 1 + safe // K.ask_count) % self.players
        self.ask(targets, safe % K.ask_count)

    def _column(self, name: str, values) -> np.ndarray:
        array = np.asarray(values)
        if array.shape != (self.num_games,) or array.dtype.kind not in "iu":
            raise ValueError(
                f"{name}: got an array of shape {array.shape} and dtype {array.dtype}; "
                f"allowed: integers of shape ({self.num_games},)"
            )
        return array.astype(np.int64)

    def _refusal(self, game: int, reason: int, targets, wanted) -> str:
        K = self.constants
        what = "card" if K.card_asks else "rank"
        value = int(wanted[game])
        return _REFUSALS[reason].format(
            asker=int(self.state.current[game]),
            target=int(targets[game]),
            wanted=_card_text(value) if K.card_asks and 0 <= value < K.ask_count else value,
            rank=value // 4 if K.card_asks else value,
            what=what,
            last_seat=self.players - 1,
            last_wanted=K.ask_count - 1,
        )

    # ------------------------------------------------------------------ what is there

    @property
    def current_player(self) -> np.ndarray:
        """The seat to move in each game, -1 where the game is over."""
        return self.state.current.copy()

    @property
    def is_over(self) -> np.ndarray:
        return self.state.over.copy()

    @property
    def pool_size(self) -> np.ndarray:
        return self.state.pool_len.copy()

    @property
    def num_asks(self) -> np.ndarray:
        return self.state.num_asks.copy()

    def hand_counts(self) -> np.ndarray:
        """[N, P, ranks]: cards of each rank in each hand (private information)."""
        return self.state.counts.copy()

    def hand_sizes(self) -> np.ndarray:
        return self.state.sizes.copy()

    def catch_counts(self) -> np.ndarray:
        """[N, P]: catches each seat has laid."""
        return self.state.catch_count.copy()

    def caught_ranks(self) -> np.ndarray:
        """[N, P, ranks]: catches of each rank each seat has laid."""
        return self.state.caught.copy()

    def tiebreak_points(self) -> np.ndarray:
        return self.state.points.copy()

    def out(self) -> np.ndarray:
        """[N, P]: seats with no cards while the pool is empty."""
        return self.state.out.copy()

    def winners(self) -> np.ndarray:
        """[N, P] int8: 1 for each winner of a finished game, zeros while in play."""
        return self.state.winners.copy()

    def leaders(self, games=None) -> np.ndarray:
        """[N, P] int8: the seats that win if each game ends now (``Game.leaders``); with
        ``games`` (indices), only those games' rows, in that order."""
        indices = self._all_games if games is None else self._indices(games)
        result = np.zeros((indices.size, self.players), np.int8)
        engine.leaders_of(self.kernel_state, self.kernel_constants, indices, result)
        return result

    def _indices(self, games) -> np.ndarray:
        indices = np.asarray(games)
        if indices.ndim != 1 or (indices.size and indices.dtype.kind not in "iu"):
            raise ValueError(f"games: got {games!r}; allowed: a list of game indices")
        indices = indices.astype(np.int64)
        if indices.size and (indices.min() < 0 or indices.max() >= self.num_games):
            raise ValueError(f"games: indices must be 0 to {self.num_games - 1}")
        return indices

    def _index(self, game) -> int:
        """One game's index, checked (the kernels do not check what they are given)."""
        if isinstance(game, bool) or not isinstance(game, int | np.integer):
            raise ValueError(f"game: got {game!r}; allowed: a game index")
        if not 0 <= game < self.num_games:
            raise ValueError(f"games: indices must be 0 to {self.num_games - 1}")
        return int(game)

    def legal_mask(self) -> np.ndarray:
        """[N, actions] bool: the legal actions of each game's seat to move, in the envs'
        layout (all False where the game is over)."""
        masks = np.empty((self.num_games, self.constants.actions), np.bool_)
        views.legal_masks(self.kernel_state, self.kernel_constants, masks)
        return masks

    def refusal(self, game: int, action: int) -> str:
        """Why ``action`` by the seat to move is not legal now in ``game``, in the Python
        engine's words (``game.ask_refusal``)."""
        S, K = self.state, self.constants
        if S.over[game]:
            return "the game is over: no more asks"
        seat = int(S.current[game])
        try:
            target, wanted = ActionCodec(self.rules).to_ask(seat, action)
        except ValueError as error:  # out of range
            return str(error)
        rank = wanted // 4 if K.card_asks else wanted
        reason = ask_refusal(
            self.rules,
            seat,
            target,
            wanted,
            target_out=bool(S.out[game, target]),
            target_size=int(S.sizes[game, target]),
            pool_size=int(S.pool_len[game]),
            held=int(S.counts[game, seat, rank]),
            card_laid=bool(K.card_asks and S.laid_cards[game, wanted]),
            card_held=bool(K.card_asks and S.cards[game, seat, wanted]),
        )
        name = card_str(card_from_index(wanted)) if K.card_asks else RANK_NAMES[wanted]
        return f"action {action} (ask seat {target} for {name}): {reason or 'not legal now'}"

    def legal_mask_of(self, game: int) -> np.ndarray:
        """One game's ``legal_mask`` row."""
        row = np.empty((1, self.constants.actions), np.bool_)
        game = self._index(game)
        views.legal_mask_one(self.kernel_state, self.kernel_constants, game, row)
        return row[0]

    def _check_observable(self) -> None:
        if not self.knowledge:
            raise ValueError(
                "observe: this batch was made with knowledge=False and keeps no public "
                "knowledge to observe; make it with knowledge=True"
            )

    def observe_game(self, game: int, seat: int) -> np.ndarray:
        """One game's observation for one seat."""
        self._check_observable()
        game = self._index(game)
        if isinstance(seat, bool) or not isinstance(seat, int | np.integer):
            raise ValueError(f"seat: got {seat!r}; allowed: a seat from 0 to {self.players - 1}")
        if not 0 <= seat < self.players:
            raise ValueError(f"seats: allowed: seats from 0 to {self.players - 1}")
        out = np.empty((1, self.layout.size), np.float32)
        state = self.kernel_state
        views.observe_one(state, self.kernel_constants, self._at, self._gather, game, seat, out)
        return out[0]

    def observe(self, seats, games=None) -> np.ndarray:
        """[N, size] float32: each game's observation for ``seats[g]``, the vector the AEC
        env gives that seat (a single seat number is used for every game). With ``games``
        (indices), only those games' rows, in that order: [len(games), size], ``seats``
        one per listed game or one for all."""
        self._check_observable()
        indices = self._all_games if games is None else self._indices(games)
        seats = np.broadcast_to(np.asarray(seats), indices.shape)
        if seats.dtype.kind not in "iu" or np.any((seats < 0) | (seats >= self.players)):
            raise ValueError(f"seats: allowed: seats from 0 to {self.players - 1}")
        out = np.empty((indices.size, self.layout.size), np.float32)
        views.observe(
            self.kernel_state,
            self.kernel_constants,
            self._at,
            self._gather,
            indices,
            seats.astype(np.int64),
            out,
        )
        return out

    def global_state(self, games=None, seat0_observations=None) -> np.ndarray:
        """[N, S] float32: each game's global state, what ``raw_env.state()`` gives for it
        (``state_layout``): every hand, the pool's cards, the public table. For
        centralized critics only. With ``games`` (indices), only those games' rows;
        ``seat0_observations`` are their seat 0's observations where the caller has them."""
        indices = self._all_games if games is None else self._indices(games)
        layout, S, K = self.state_layout, self.state, self.constants
        count, asks = indices.size, K.ask_count
        out = np.empty((count, layout.size), np.float32)
        seen = self.observe(0, indices) if seat0_observations is None else seat0_observations
        for start, stop, source in layout.public_runs:
            out[:, start:stop] = seen[:, source : source + stop - start]
        hands = (S.cards if K.card_asks else S.counts)[indices]
        # Every pool counted in one bincount: row r's entries at r * (asks + 1) + entry, the
        # slots past its end at the spare entry ``asks``.
        entries = layout.entry_of[S.pool[indices]]
        entries[np.arange(entries.shape[1]) >= S.pool_len[indices, None]] = asks
        entries += np.arange(count)[:, None] * (asks + 1)
        in_pool = np.bincount(entries.ravel(), minlength=count * (asks + 1))
        cards = np.concatenate(
            [hands.reshape(count, -1), in_pool.reshape(count, asks + 1)[:, :asks]], axis=1
        )
        out[:, : layout.cards_size] = cards / layout.divisors
        return out

    @property
    def memory_bytes(self) -> int:
        """Memory the batch's arrays hold."""
        return state_bytes(self.state)


def _card_text(index: int) -> str:
    """A card index (rank * 4 + suit, 52 the joker) as a card string."""
    return card_str(index // 4 << 3 | index % 4)
