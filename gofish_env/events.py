"""The public event log: what every seat at the table sees happen.

Events carry only public information (docs/rules.md, "What every seat may know"): a drawn
card's rank appears only when it is shown. ``str(event)`` reads as a sentence; the fields are
for programs. Ranks are indices (0..12 = 2..A, 13 = joker); cards, where public, are indices
``rank * 4 + suit``.
"""

from __future__ import annotations

from gofish_env.cards import RANK_NAMES, SUITS, card_from_index, card_str

_PLURAL = ("2s", "3s", "4s", "5s", "6s", "7s", "8s", "9s", "10s")
_PLURAL += ("jacks", "queens", "kings", "aces", "jokers")


def rank_plural(rank: int) -> str:
    return _PLURAL[rank]


def _card_words(card: int) -> str:
    rank = card // 4
    return "a joker" if rank == 13 else f"the {RANK_NAMES[rank]}{SUITS[card % 4]}"


class Event:
    """Base of all events: slotted, compared by type and fields."""

    __slots__ = ()
    kind = "event"

    def fields(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(
            getattr(self, name) == getattr(other, name) for name in self.__slots__
        )

    def __hash__(self) -> int:
        return hash((type(self), *(getattr(self, name) for name in self.__slots__)))

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={value!r}" for name, value in self.fields().items())
        return f"{type(self).__name__}({args})"

    def __reduce__(self):
        return type(self), tuple(getattr(self, name) for name in self.__slots__)


class Deal(Event):
    """The start of a game: hand sizes, pool size, who asks first, and (for a position in
    play built by ``Game.from_hands(..., catches=...)``) the catches already laid; with
    exact-card asks and sets smaller than a rank (pairs), ``laid_cards`` names their cards
    (as ``Catch.cards``), else it is None and left out of ``fields``."""

    __slots__ = ("hand_sizes", "pool_size", "first_player", "catches", "laid_cards")
    kind = "deal"

    def __init__(
        self,
        hand_sizes: tuple[int, ...],
        pool_size: int,
        first_player: int,
        catches: tuple[tuple[int, ...], ...] = (),
        laid_cards: tuple[int, ...] | None = None,
    ):
        self.hand_sizes = hand_sizes
        self.pool_size = pool_size
        self.first_player = first_player
        self.catches = catches
        self.laid_cards = laid_cards

    def fields(self) -> dict:
        fields = {name: getattr(self, name) for name in self.__slots__[:4]}
        if self.laid_cards is not None:
            fields["laid_cards"] = self.laid_cards
        return fields

    def __str__(self) -> str:
        sizes = ", ".join(str(size) for size in self.hand_sizes)
        return (
            f"Dealt {sizes} cards; {self.pool_size} in the pool; "
            f"seat {self.first_player} asks first."
        )


class Catch(Event):
    """A set laid face up. With exact-card asks, where a set is not every copy of its rank
    (pairs), ``cards`` names the card indices laid: which cards are in a catch decides
    which asks are legal, so it is public, as on the table. Otherwise it is None (and left
    out of ``fields``, so replay files keep their form)."""

    __slots__ = ("seat", "rank", "cards")
    kind = "catch"

    def __init__(self, seat: int, rank: int, cards: tuple[int, ...] | None = None):
        self.seat = seat
        self.rank = rank
        self.cards = cards

    def fields(self) -> dict:
        fields = {"seat": self.seat, "rank": self.rank}
        if self.cards is not None:
            fields["cards"] = self.cards
        return fields

    def __str__(self) -> str:
        if self.cards is None:
            return f"Seat {self.seat} lays a catch of {rank_plural(self.rank)}."
        cards = " and ".join(card_str(card_from_index(card)) for card in self.cards)
        return f"Seat {self.seat} lays a catch of {rank_plural(self.rank)} ({cards})."


class Ask(Event):
    __slots__ = ("asker", "target", "rank", "card")
    kind = "ask"

    def __init__(self, asker: int, target: int, rank: int, card: int | None = None):
        self.asker = asker
        self.target = target
        self.rank = rank
        self.card = card

    def __str__(self) -> str:
        wanted = rank_plural(self.rank) if self.card is None else _card_words(self.card)
        return f"Seat {self.asker} asks seat {self.target} for {wanted}."


class Hit(Event):
    __slots__ = ("asker", "target", "rank", "count")
    kind = "hit"

    def __init__(self, asker: int, target: int, rank: int, count: int):
        self.asker = asker
        self.target = target
        self.rank = rank
        self.count = count

    def __str__(self) -> str:
        cards = "card" if self.count == 1 else "cards"
        return f"Seat {self.target} hands over {self.count} {cards} to seat {self.asker}."


class GoFish(Event):
    __slots__ = ("asker", "target", "rank")
    kind = "go_fish"

    def __init__(self, asker: int, target: int, rank: int):
        self.asker = asker
        self.target = target
        self.rank = rank

    def __str__(self) -> str:
        return f"Seat {self.target} says go fish."


class Draw(Event):
    """A fish after "go fish". ``rank`` is set only when the card was the rank asked for
    (with exact-card asks: the card asked for), which is then shown to all."""

    __slots__ = ("seat", "rank")
    kind = "draw"

    def __init__(self, seat: int, rank: int | None):
        self.seat = seat
        self.rank = rank

    @property
    def shown(self) -> bool:
        return self.rank is not None

    def __str__(self) -> str:
        if self.rank is None:
            return f"Seat {self.seat} draws a card from the pool."
        return f"Seat {self.seat} draws from the pool and shows a {RANK_NAMES[self.rank]}!"


class EmptyHandDraw(Event):
    __slots__ = ("seat", "count")
    kind = "empty_hand_draw"

    def __init__(self, seat: int, count: int):
        self.seat = seat
        self.count = count

    def __str__(self) -> str:
        cards = "a card" if self.count == 1 else f"{self.count} cards"
        return f"Seat {self.seat} has an empty hand and draws {cards}."


class Pass(Event):
    """A seat to move with no legal ask passes the turn."""

    __slots__ = ("seat",)
    kind = "pass"

    def __init__(self, seat: int):
        self.seat = seat

    def __str__(self) -> str:
        return f"Seat {self.seat} cannot ask and passes."


class Out(Event):
    """A seat with no cards while the pool is empty: it sits out, its catches still count."""

    __slots__ = ("seat",)
    kind = "out"

    def __init__(self, seat: int):
        self.seat = seat

    def __str__(self) -> str:
        return f"Seat {self.seat} is out of cards and sits out."


class GameOver(Event):
    __slots__ = ("winners", "catches", "points", "reason")
    kind = "game_over"

    def __init__(
        self,
        winners: tuple[int, ...],
        catches: tuple[int, ...],
        points: tuple[int, ...],
        reason: str,
    ):
        self.winners = winners
        self.catches = catches
        self.points = points
        self.reason = reason

    def __str__(self) -> str:
        scores = ", ".join(
            f"seat {seat}: {count} ({points} pts)"
            for seat, (count, points) in enumerate(zip(self.catches, self.points, strict=True))
        )
        if not self.winners:
            result = "nobody wins"
        elif len(self.winners) == 1:
            result = f"seat {self.winners[0]} wins"
        else:
            result = "seats " + ", ".join(map(str, self.winners)) + " share the win"
        return f"Game over ({self.reason}): {result}. Catches: {scores}."


EVENT_TYPES = (Deal, Catch, Ask, Hit, GoFish, Draw, EmptyHandDraw, Pass, Out, GameOver)
