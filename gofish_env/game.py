"""The Go Fish rules engine: one game, from the deal to the result, under any ``Rules``.

The engine owns the truth (every hand and the pool's order) and knows nothing of
reinforcement learning. Hands are kept as cards grouped by rank, so an ask is a few list
operations; randomness is used only for the shuffle (and a random first player).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from functools import cache
from itertools import product

from gofish_env.cards import (
    JOKER,
    RANK_NAMES,
    RANK_POINTS,
    build_deck,
    card_id,
    card_index,
    card_rank,
    card_str,
    parse_card,
    parse_rank,
    sort_key,
)
from gofish_env.events import (
    Ask,
    Catch,
    Deal,
    Draw,
    EmptyHandDraw,
    Event,
    GameOver,
    GoFish,
    Hit,
    Out,
    Pass,
    rank_plural,
)
from gofish_env.rules import Rules, seeded_random


class IllegalAsk(ValueError):
    """An ask the rules refuse; the game is left exactly as it was."""


def ask_refusal(
    rules: Rules,
    asker: int,
    target: int,
    wanted: int,
    *,
    target_out: bool,
    target_size: int,
    pool_size: int,
    held: int,
    card_laid: bool,
    card_held: bool,
) -> str | None:
    """Why the rules refuse seat ``asker``'s ask of seat ``target`` for ``wanted`` (a rank
    index, or a card index with exact-card asks), or None when they allow it. ``held``: the
    asker's cards of the rank; ``card_laid`` / ``card_held``: the card is in a catch / in
    the asker's hand (exact-card asks). Both engines give their refusals from here."""
    if target == asker:
        return f"you cannot ask yourself (seat {asker})"
    if target_out:
        return f"seat {target} is out (no cards and the pool is empty)"
    if not target_size and not (rules.empty_hand_askable and pool_size):
        return f"seat {target} holds no cards and cannot be asked"
    rank = wanted // 4 if rules.ask_for == "card" else wanted
    if not held:
        return f"you hold no {rank_plural(rank)}: you may only ask for a rank you hold"
    if rules.ask_for == "card" and rank != JOKER:
        card = card_str(card_id(rank, wanted % 4))
        if card_laid:
            return f"{card} is already in a catch"
        if card_held and not rules.ask_for_held_card:
            return (
                f"you hold {card} yourself: under these rules you may not ask for a card you hold"
            )
    return None


class Game:
    """One game of Go Fish.

    ``Game(rules, seed=...)`` shuffles and deals; ``Game.from_hands(...)`` builds an exact
    position. Seats are 0..P-1 and "left" is seat + 1. Ranks are indices 0..12 (2..A, 13 for
    a joker) or strings such as ``"7"`` and ``"Q"``; cards are strings such as ``"10H"``.
    """

    def __init__(self, rules: Rules | None = None, seed: int | None = None):
        rules = Rules() if rules is None else rules
        rng = seeded_random(seed)
        deck = build_deck(rules.decks, rules.jokers)
        rng.shuffle(deck)
        players = rules.players
        first = rules.first_seat(rng)
        dealt = rules.deck_size if rules.deal == "whole_deck" else rules.hand_size * players
        hands: list[list[int]] = [[] for _ in range(players)]
        # One card at a time from the dealer's left (the first player); the pool's top is last.
        for i, card in enumerate(deck[len(deck) - dealt :][::-1]):
            hands[(first + i) % players].append(card)
        self._setup(rules, hands, deck[: len(deck) - dealt], first, None)

    @classmethod
    def from_hands(
        cls,
        hands: Sequence[Sequence[str]],
        pool: Sequence[str],
        rules: Rules | None = None,
        first_player: int | None = None,
        catches: Sequence[Sequence[str | int]] | None = None,
    ) -> Game:
        """An exact position: ``hands[seat]`` as card strings, ``pool`` top first.

        Without ``catches`` it is an opening deal: complete sets in a hand are laid before the
        first ask and empty hands are handled by the rules in force. With ``catches`` (ranks
        already laid, per seat) it is a position in play. Either way hands, pool and catches
        must hold every card of the deck exactly once. ``first_player`` is the seat to move
        (the dealer sits to its right); by default the rules' seat where they name one, else
        seat 0 (an exact position has no shuffle to draw a ``"random"`` first player from).
        """
        rules = Rules(players=len(hands)) if rules is None else rules
        if first_player is None:
            first_player = rules.first_player if type(rules.first_player) is int else 0
        if len(hands) != rules.players:
            raise ValueError(
                f"hands: {len(hands)} hands given but the rules are for {rules.players} players"
            )
        if isinstance(first_player, bool) or first_player not in range(rules.players):
            raise ValueError(
                f"first_player: got {first_player!r}; allowed: a seat from 0 to {rules.players - 1}"
            )
        copies: dict[int, int] = {}
        for card in build_deck(rules.decks, rules.jokers):
            copies[card & ~4] = copies.get(card & ~4, 0) + 1
        remaining = dict(copies)

        def take(text: str, where: str) -> int:
            try:
                rank, suit = parse_card(text)
            except ValueError as error:
                raise ValueError(f"{where}: {error}") from None
            base = card_id(rank, suit)
            left = remaining.get(base, 0)
            if left == 0:
                if base not in remaining:
                    raise ValueError(f"{where}: {text} is not in the deck under these rules")
                raise ValueError(f"{where}: {text} appears more often than the deck holds it")
            remaining[base] = left - 1
            return base | (copies[base] - left) << 2

        hand_cards = [
            [take(text, f"hand {seat}") for text in hand] for seat, hand in enumerate(hands)
        ]
        pool_cards = [take(text, "pool") for text in pool]
        laid: list[list[int]] = [[] for _ in range(rules.players)]
        laid_cards: list[int] = []
        if catches is not None:
            if len(catches) != rules.players:
                raise ValueError(f"catches: {len(catches)} lists given for {rules.players} seats")
            for seat, seat_catches in enumerate(catches):
                for item in seat_catches:
                    rank = item if isinstance(item, int) else parse_rank(str(item))
                    if not 0 <= rank < rules.ranks:
                        raise ValueError(f"catches: {item!r} is not a rank under these rules")
                    for _ in range(rules.set_size):
                        base = next(
                            (
                                card_id(rank, suit)
                                for suit in range(4)
                                if remaining.get(card_id(rank, suit))
                            ),
                            None,
                        )
                        if base is None:
                            raise ValueError(
                                f"catches: seat {seat}'s catch of {item!r} needs cards that "
                                f"are already in hands, the pool or other catches"
                            )
                        laid_cards.append(base | (copies[base] - remaining[base]) << 2)
                        remaining[base] -= 1
                    laid[seat].append(rank)
            for seat, hand in enumerate(hand_cards):
                if not hand and pool_cards and rules.empty_hand_draw == "immediately":
                    raise ValueError(
                        f"hand {seat}: empty while the pool has cards, which cannot happen in "
                        f"play under empty_hand_draw='immediately'"
                    )
                counts: dict[int, int] = {}
                for card in hand:
                    counts[card >> 3] = counts.get(card >> 3, 0) + 1
                for rank, count in counts.items():
                    if count >= rules.set_size:
                        raise ValueError(
                            f"hand {seat}: holds a complete set of {rank_plural(rank)} in a "
                            f"position in play; sets are laid the moment they complete"
                        )
        missing = [card_str(base) for base, left in remaining.items() for _ in range(left)]
        if missing:
            shown = ", ".join(missing[:8]) + (", ..." if len(missing) > 8 else "")
            raise ValueError(
                f"hands, pool and catches must hold the whole deck; missing {len(missing)}: {shown}"
            )
        game = cls.__new__(cls)
        laid_indices = [card_index(card) for card in laid_cards]
        catches_laid = laid if catches else None
        game._setup(rules, hand_cards, pool_cards[::-1], first_player, catches_laid, laid_indices)
        return game

    # ------------------------------------------------------------------ set-up

    def _setup(
        self,
        rules: Rules,
        hands: list[list[int]],
        pool: list[int],
        first: int,
        catches: list[list[int]] | None,
        laid_cards: Sequence[int] = (),
    ) -> None:
        players = rules.players
        self.rules = rules
        self._players = players
        self._set_size = rules.set_size
        self._total_sets = rules.total_sets
        self._card_asks = rules.ask_for == "card"
        self._draw_now = rules.empty_hand_draw == "immediately"
        self._draw_on_turn = rules.empty_hand_draw == "own_turn"
        self._draw_count = rules.empty_hand_draw_count
        self._askable_empty = rules.empty_hand_askable
        self._ends_on_empty_hand = rules.game_end == "hand_or_pool_empty"
        self._ends_on_out = rules.game_end == "first_out"
        self._first_empty_wins = rules.winner == "first_empty"
        self._after_miss_to_asked = rules.after_miss == "asked"
        self._fished_rank_asks_again = rules.fished_rank_asks_again
        self._off_rank_catch_asks_again = rules.off_rank_catch_asks_again
        self._ranks = rules.ranks
        self._left, self._others = _seating(players)
        # Each hand maps rank -> its cards; only ranks held are keys.
        self._hands: list[dict[int, list[int]]] = []
        for cards in hands:
            hand: dict[int, list[int]] = {}
            for card in cards:
                hand.setdefault(card >> 3, []).append(card)
            self._hands.append(hand)
        self._sizes = [len(cards) for cards in hands]
        self._pool = pool
        # The start, kept for replays (``start_position``): hands and catches are not changed
        # after this, the pool is.
        self._start = (hands, pool[:], first, catches)
        self._catches: list[list[int]] = [list(laid) for laid in catches or [[]] * players]
        self._points = [sum(RANK_POINTS[rank] for rank in laid) for laid in self._catches]
        self._num_caught = sum(len(laid) for laid in self._catches)
        self._laid_cards = set(laid_cards)  # card indices in catches, for exact-card asks
        self._out = [False] * players
        self._over = False
        self._winners: tuple[int, ...] = ()
        self._first_to_empty: int | None = None
        self._current: int | None = first
        self._num_asks = 0
        self._legal: tuple | None = None
        laid_before = tuple(tuple(laid) for laid in catches) if catches else ()
        # Which cards lie in the catches decides the legal exact-card asks: public, as on the
        # table, where a catch is not every copy of its rank (as Catch.cards).
        shown = None
        if self._card_asks and any(
            rules.set_size < rules.copies_of(rank) for laid in laid_before for rank in laid
        ):
            shown = tuple(sorted(self._laid_cards))
        deal = Deal(tuple(self._sizes), len(pool), first, laid_before, shown)
        self._events: list[Event] = [deal]
        if catches is not None:
            # A position in play: nothing is laid or drawn before the first ask.
            for seat in range(players):
                if self._sizes[seat] == 0:
                    if self._ends_on_empty_hand:
                        self._end(f"seat {seat}'s hand is empty")
                        return
                    if not self._pool:
                        self._out[seat] = True
                        if self._ends_on_out:
                            self._end(f"seat {seat} is out of cards")
                            return
            self._start_turn(first)
            return
        # Opening catches one seat at a time from the dealer (the seat right of the first
        # player), then empty hands in the same order.
        order = [(first - 1 + k) % players for k in range(players)]
        for seat in order:
            self._lay_all(seat)
            if self._over:
                return
        for seat in order:
            if self._sizes[seat] == 0:
                self._emptied(seat, self._draw_now)
                if self._over:
                    return
        self._start_turn(first)

    # ------------------------------------------------------------------ public view

    @property
    def players(self) -> int:
        return self._players

    @property
    def current_player(self) -> int | None:
        """The seat to move, or None when the game is over."""
        return None if self._over else self._current

    @property
    def is_over(self) -> bool:
        return self._over

    @property
    def winners(self) -> tuple[int, ...]:
        """The winning seats (several when they share the win); empty while in play."""
        return self._winners

    @property
    def pool_size(self) -> int:
        return len(self._pool)

    @property
    def num_asks(self) -> int:
        return self._num_asks

    @property
    def events(self) -> list[Event]:
        """The public event log, oldest first (a copy)."""
        return list(self._events)

    @property
    def num_events(self) -> int:
        return len(self._events)

    def events_since(self, start: int) -> list[Event]:
        return self._events[start:]

    def hand(self, seat: int) -> list[str]:
        """The seat's cards as strings, sorted by rank then suit."""
        self._check_seat(seat, "seat")
        cards = [card for group in self._hands[seat].values() for card in group]
        return [card_str(card) for card in sorted(cards, key=sort_key)]

    def hand_indices(self, seat: int) -> list[int]:
        """The seat's cards as indices (rank * 4 + suit; the joker 52), as ``laid_cards``,
        sorted."""
        self._check_seat(seat, "seat")
        return sorted(card_index(card) for group in self._hands[seat].values() for card in group)

    def hand_by_arrival(self, seat: int) -> list[int]:
        """The seat's cards as indices, rank by rank, each rank's cards in the order they
        came to the hand: with more than four of a rank (two decks), a catch lays the oldest.
        Private information: for copying a position exactly (``VectorGame.from_games``)."""
        self._check_seat(seat, "seat")
        hand = self._hands[seat]
        return [card_index(card) for rank in sorted(hand) for card in hand[rank]]

    def hand_card_counts(self, seat: int) -> list[int]:
        """How many copies of each card index the seat holds: 52 indices, 53 with jokers (the
        names of exact-card asks; with two decks or jokers an index has two copies)."""
        counts = [0] * (4 * JOKER + (1 if self.rules.jokers else 0))
        for index in self.hand_indices(seat):
            counts[index] += 1
        return counts

    def hand_counts(self, seat: int) -> list[int]:
        """How many cards of each rank the seat holds, by rank index."""
        self._check_seat(seat, "seat")
        counts = [0] * self._ranks
        for rank, group in self._hands[seat].items():
            counts[rank] = len(group)
        return counts

    def hand_size(self, seat: int) -> int:
        self._check_seat(seat, "seat")
        return self._sizes[seat]

    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(self._sizes)

    def catches(self, seat: int) -> list[int]:
        """Ranks the seat has caught, in the order laid."""
        self._check_seat(seat, "seat")
        return list(self._catches[seat])

    def tiebreak_points(self, seat: int) -> int:
        """Sum of the points of the seat's catches (2..10 face value, J 11, Q 12, K 13, A 14)."""
        self._check_seat(seat, "seat")
        return self._points[seat]

    def is_out(self, seat: int) -> bool:
        """The seat has no cards while the pool is empty: it can neither ask nor be asked."""
        self._check_seat(seat, "seat")
        return self._out[seat]

    @property
    def first_to_empty(self) -> int | None:
        """The first seat whose hand was emptied by laying a catch (who wins under
        ``winner="first_empty"``); None until then, and under the other ``winner`` rules."""
        return self._first_to_empty

    @property
    def laid_cards(self) -> frozenset[int]:
        """Card indices (rank * 4 + suit) lying in catches; tracked for exact-card asks."""
        return frozenset(self._laid_cards)

    def start_position(self) -> dict:
        """How the game started, as the arguments of ``Game.from_hands`` that rebuild it:
        ``hands`` as dealt (before opening catches are laid), ``pool`` top first,
        ``first_player``, and ``catches`` (rank names per seat) for a position in play, else
        None. Private information: for replays."""
        hands, pool, first, catches = self._start
        return {
            "hands": [[card_str(card) for card in hand] for hand in hands],
            "pool": [card_str(card) for card in reversed(pool)],
            "first_player": first,
            "catches": None
            if catches is None
            else [[RANK_NAMES[rank] for rank in laid] for laid in catches],
        }

    def pool_cards(self) -> list[str]:
        """The pool, top first. Private information: for tests, replays and debugging."""
        return [card_str(card) for card in reversed(self._pool)]

    def pool_order(self) -> list[int]:
        """The pool's cards as indices, top first. Private information: for copying a
        position exactly (``VectorGame.from_games``)."""
        return [card_index(card) for card in reversed(self._pool)]

    def pool_indices(self) -> list[int]:
        """The pool's cards as indices (rank * 4 + suit; the joker 52), sorted: what it
        holds, not its order. Private information."""
        return sorted(card_index(card) for card in self._pool)

    def pool_counts(self) -> list[int]:
        """How many cards of each rank the pool holds, by rank index. Private information."""
        counts = [0] * self._ranks
        for card in self._pool:
            counts[card_rank(card)] += 1
        return counts

    def legal_asks(self) -> tuple[tuple[int, int], ...]:
        """(target, rank) pairs the seat to move may ask; with exact-card asks (target, card
        index). Empty when the game is over."""
        if self._legal is None:
            self._legal = self._compute_legal()
        return self._legal

    def _compute_legal(self) -> tuple:
        if self._over:
            return ()
        asker = self._current
        hand = self._hands[asker]
        sizes = self._sizes
        others = self._others[asker]
        if self._askable_empty and self._pool:
            out = self._out
            targets = [t for t in others if not out[t]]
        elif 0 in sizes:
            targets = [t for t in others if sizes[t]]
        else:
            targets = others
        wanted = self._wanted_cards(hand) if self._card_asks else sorted(hand)
        return tuple(product(targets, wanted))

    def _wanted_cards(self, hand: dict[int, list[int]]) -> list[int]:
        """Card indices the asker may name: cards of a rank it holds, not laid, and (unless
        the rules allow it) not in its own hand."""
        allow_held = self.rules.ask_for_held_card
        laid = self._laid_cards
        wanted = []
        for rank in sorted(hand):
            group = hand[rank]
            if rank == JOKER:
                wanted.append(4 * JOKER)
                continue
            held = {card & 3 for card in group}
            wanted.extend(
                4 * rank + suit
                for suit in range(4)
                if 4 * rank + suit not in laid and (allow_held or suit not in held)
            )
        return wanted

    # ------------------------------------------------------------------ asking

    def ask(self, target: int, wanted: int | str) -> list[Event]:
        """Apply one ask by the seat to move and everything that follows from it.

        ``wanted`` is what the ask names: a rank index or string (``"Q"``); with exact-card
        asks, a card index or string (``"QH"``).
        Returns the events produced. Raises ``IllegalAsk`` (nothing changes) when the rules
        refuse the ask.
        """
        asker = self._current
        sizes = self._sizes
        # The common legal rank ask is checked inline; anything else gets the full check.
        if not (
            type(target) is int
            and type(wanted) is int
            and not self._card_asks
            and asker is not None
            and target != asker
            and 0 <= target < self._players
            and sizes[target]
            and wanted in self._hands[asker]
            and not self._over
        ):
            target, wanted = self._validate(target, wanted)
        events = self._events
        start = len(events)
        self._num_asks += 1
        self._legal = None
        hands = self._hands
        target_hand = hands[target]
        if self._card_asks:
            card_wanted = wanted
            rank = card_wanted >> 2
            events.append(Ask(asker, target, rank, card_wanted))
            group = target_hand.get(rank, ())
            given = [card for card in group if card_index(card) == card_wanted][:1]
            if given:
                group.remove(given[0])
                if not group:
                    del target_hand[rank]
        else:
            card_wanted = -1
            rank = wanted
            events.append(Ask(asker, target, rank))
            given = target_hand.pop(rank, None)
        if given:
            count = len(given)
            group = hands[asker][rank]
            group += given
            sizes[target] -= count
            sizes[asker] += count
            events.append(Hit(asker, target, rank, count))
            if len(group) >= self._set_size:
                self._lay(asker, rank)
            asks_again = True
            if sizes[target] and sizes[asker]:
                emptied = ()
            else:
                emptied = [seat for seat in (target, asker) if not sizes[seat]]
            next_seat = self._left[asker]
        else:
            events.append(GoFish(asker, target, rank))
            asks_again = False
            next_seat = target if self._after_miss_to_asked else self._left[asker]
            pool = self._pool
            if pool:
                card = pool.pop()
                drawn_rank = card >> 3
                hand = hands[asker]
                group = hand.get(drawn_rank)
                if group is None:
                    group = hand[drawn_rank] = [card]
                else:
                    group.append(card)
                sizes[asker] += 1
                shown = card_index(card) == card_wanted if card_wanted >= 0 else drawn_rank == rank
                events.append(Draw(asker, drawn_rank if shown else None))
                asks_again = shown and self._fished_rank_asks_again
                if len(group) >= self._set_size:
                    self._lay(asker, drawn_rank)
                    if not shown and self._off_rank_catch_asks_again:
                        asks_again = True
                if not pool:
                    self._pool_emptied()
            if asks_again:  # the fish did not fail: a pass from here goes left (rule 9)
                next_seat = self._left[asker]
            emptied = () if sizes[asker] else (asker,)
        if emptied and not self._over:
            for seat in emptied:
                if not self._out[seat]:
                    # An own-turn asker draws at once only if its turn goes on: with no
                    # one left to ask it waits for its next turn (the rules' settled cases).
                    keeps_asking = asks_again and seat == asker and self._has_someone_to_ask(seat)
                    self._emptied(seat, self._draw_now or (self._draw_on_turn and keeps_asking))
                if self._over:
                    break
        if not self._over:
            if asks_again and self._can_ask(asker):
                self._current = asker
            else:
                passed = asks_again and not self._out[asker]
                if passed:
                    events.append(Pass(asker))
                self._start_turn(next_seat, passes=int(passed))
        return events[start:]

    def _validate(self, target: object, wanted: object) -> tuple[int, int]:
        """Turn the ask into (target, wanted: a rank or card index) or raise IllegalAsk with
        the rule."""
        if self._over:
            raise IllegalAsk("the game is over: no more asks")
        if type(target) is not int:  # a NumPy integer too; checked off the common path
            seat = _integer(target)
            if seat is None:
                raise IllegalAsk(f"not a seat: {target!r} (seats are 0 to {self._players - 1})")
            target = seat
        if not 0 <= target < self._players:
            raise IllegalAsk(f"not a seat: {target} (seats are 0 to {self._players - 1})")
        asker = self._current
        if self._card_asks:
            index = self._parse_card_ask(wanted)
            rank = index // 4
        else:
            rank = index = self._parse_rank_ask(wanted)
        held = self._hands[asker].get(rank, ())
        refused = ask_refusal(
            self.rules,
            asker,
            target,
            index,
            target_out=self._out[target],
            target_size=self._sizes[target],
            pool_size=len(self._pool),
            held=len(held),
            card_laid=self._card_asks and index in self._laid_cards,
            card_held=self._card_asks and any(card_index(card) == index for card in held),
        )
        if refused is not None:
            raise IllegalAsk(refused)
        return target, index

    def _parse_rank_ask(self, wanted: object) -> int:
        ranks = self.rules.ranks
        if type(wanted) is int:
            rank = wanted
        elif isinstance(wanted, str):
            try:
                rank = parse_rank(wanted, jokers=self.rules.jokers)
            except ValueError as error:
                raise IllegalAsk(str(error)) from None
            if rank >= ranks:  # "JK" with no jokers (not rank indices: nobody typed one)
                raise IllegalAsk(f"not a rank: {wanted!r} (there are no jokers in this game)")
        elif (rank := _integer(wanted)) is None:
            raise IllegalAsk(f"not a rank: {wanted!r}")
        if not 0 <= rank < ranks:
            raise IllegalAsk(f"not a rank: {wanted!r} (rank indices are 0 to {ranks - 1})")
        return rank

    def _parse_card_ask(self, wanted: object) -> int:
        count = self.rules.ask_count
        if isinstance(wanted, str):
            try:
                rank, suit = parse_card(wanted, jokers=self.rules.jokers)
            except ValueError as error:
                raise IllegalAsk(f"{error}; these rules ask for one exact card") from None
            index = 4 * rank + suit
            if index >= count:  # "JK" with no jokers
                raise IllegalAsk(f"not a card: {wanted!r} (there are no jokers in this game)")
        elif (index := _integer(wanted)) is None:
            raise IllegalAsk(f"not a card: {wanted!r}")
        if not 0 <= index < count:
            raise IllegalAsk(f"not a card: {wanted!r} (card indices are 0 to {count - 1})")
        return index

    def _check_seat(self, seat: object, name: str) -> None:
        number = seat if type(seat) is int else _integer(seat)
        if number is None or not 0 <= number < self._players:
            raise ValueError(f"{name}: {seat!r} is not a seat (0 to {self._players - 1})")

    # ------------------------------------------------------------------ consequences

    def _lay(self, seat: int, rank: int) -> None:
        """Lay every complete set of ``rank`` in the seat's hand (rule 7)."""
        hand = self._hands[seat]
        group = hand.get(rank, ())
        set_size = self._set_size
        if len(group) < set_size:
            return
        while len(group) >= set_size:
            laid, group = group[:set_size], group[set_size:]
            if group:
                hand[rank] = group
            else:
                del hand[rank]
            self._sizes[seat] -= set_size
            self._catches[seat].append(rank)
            self._points[seat] += RANK_POINTS[rank]
            self._num_caught += 1
            shown = None
            if self._card_asks:
                indices = tuple(sorted(card_index(card) for card in laid))
                self._laid_cards.update(indices)
                if set_size < self.rules.copies_of(rank):  # which copies: public, as on the table
                    shown = indices
            self._events.append(Catch(seat, rank, shown))
        # First-empty first: laying the last catch empties the layer's hand too.
        if self._first_empty_wins and not self._sizes[seat] and self._first_to_empty is None:
            self._first_to_empty = seat
            self._end(f"seat {seat} emptied their hand by laying a catch")
        elif self._num_caught == self._total_sets:
            self._end("every catch is laid")

    def _lay_all(self, seat: int) -> None:
        """Lay every complete set in the hand, lowest rank first (after a deal or a refill)."""
        hand = self._hands[seat]
        for rank in sorted(rank for rank, group in hand.items() if len(group) >= self._set_size):
            self._lay(seat, rank)
            if self._over:
                return

    def _emptied(self, seat: int, draw_now: bool) -> None:
        """Rule 8: a hand has just become empty (or is empty at a turn's start)."""
        if self._ends_on_empty_hand:
            self._end(f"seat {seat}'s hand is empty")
            return
        if not self._pool:
            self._go_out(seat)
            return
        if draw_now:
            self._refill(seat)

    def _refill(self, seat: int) -> None:
        """Draw the empty-hand cards; a set completed by them is laid, and a hand emptied
        again draws again while the pool lasts."""
        pool = self._pool
        hand = self._hands[seat]
        while not self._sizes[seat] and pool and not self._over:
            count = min(self._draw_count, len(pool))
            for _ in range(count):
                card = pool.pop()
                hand.setdefault(card >> 3, []).append(card)
            self._sizes[seat] = count
            self._events.append(EmptyHandDraw(seat, count))
            self._lay_all(seat)
            if not pool:
                self._pool_emptied()
        if not self._sizes[seat] and not self._over:
            self._emptied(seat, False)

    def _pool_emptied(self) -> None:
        """The last card has left the pool: empty hands are now out."""
        if self._over:
            return
        if self._ends_on_empty_hand:
            self._end("the pool is empty")
            return
        for seat in range(self._players):
            if not self._sizes[seat] and not self._out[seat]:
                self._go_out(seat)
                if self._over:
                    return

    def _go_out(self, seat: int) -> None:
        if self._out[seat]:
            return
        self._out[seat] = True
        self._events.append(Out(seat))
        if self._ends_on_out:
            self._end(f"seat {seat} is out of cards")

    def _can_ask(self, seat: int) -> bool:
        sizes = self._sizes
        if not sizes[seat]:
            return False
        if self._askable_empty and self._pool:
            out = self._out
            if all(out[t] for t in self._others[seat]):
                return False
        elif sum(sizes) == sizes[seat]:
            return False
        if self._card_asks:
            return bool(self._wanted_cards(self._hands[seat]))
        return True

    def _has_someone_to_ask(self, seat: int) -> bool:
        """Whether another seat may be asked now (``_can_ask`` without the asker's hand)."""
        if self._askable_empty and self._pool:
            return not all(self._out[t] for t in self._others[seat])
        return any(self._sizes[t] for t in self._others[seat])

    def _start_turn(self, seat: int, passes: int = 0) -> None:
        """Find the next seat able to ask, from ``seat`` going left: out seats are skipped,
        an own-turn empty hand draws first, a seat with no legal ask passes (rule 9).
        ``passes``: the seats right of ``seat`` that have just passed (the asker whose turn
        went on but who could not ask), so that nobody's pass is logged twice."""
        while passes < self._players:
            if not self._out[seat]:
                if not self._sizes[seat] and self._draw_on_turn and self._pool:
                    self._refill(seat)
                    if self._over:
                        return
                    passes = 0
                if self._can_ask(seat):
                    self._current = seat
                    return
                if not self._out[seat]:
                    self._events.append(Pass(seat))
            passes += 1
            seat = self._left[seat]
        self._end("nobody can ask")

    def _end(self, reason: str) -> None:
        if self._over:
            return
        self._over = True
        self._current = None
        self._legal = ()
        self._winners = self.leaders()
        catches = tuple(len(laid) for laid in self._catches)
        self._events.append(GameOver(self._winners, catches, tuple(self._points), reason))

    def leaders(self) -> tuple[int, ...]:
        """The seats that win if the game ends now, by the rules' ``winner`` rule: the
        winners once it is over. A game cut off before its end (by an ask limit) is scored
        this way everywhere in the project."""
        catches = [len(laid) for laid in self._catches]
        winner = self.rules.winner
        if winner == "first_empty" and self._first_to_empty is not None:
            return (self._first_to_empty,)
        if winner == "catches_then_points":
            scores = list(zip(catches, self._points, strict=True))
        else:
            scores = catches
        best = max(scores)
        return tuple(seat for seat, score in enumerate(scores) if score == best)


@cache
def _seating(players: int) -> tuple[list[int], list[tuple[int, ...]]]:
    """Each seat's left neighbour, and the other seats in order from its left."""
    left = [(seat + 1) % players for seat in range(players)]
    others = [tuple((seat + k) % players for k in range(1, players)) for seat in range(players)]
    return left, others


def _integer(value: object) -> int | None:
    """``value`` as an int if it is a whole number (an int, or a NumPy integer such as an
    action read from an array); None otherwise, for ``True`` and ``1.0`` too."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None
