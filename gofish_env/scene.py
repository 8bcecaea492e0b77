"""What a picture of the table shows, decided once: a ``Scene``.

``seat_scene`` builds what one seat sees from its ``PlayerView`` and the public event log:
its own cards face up, every other hand as a count of card backs, everyone's catches and
points, the pool's size, whose turn it is, and the last ask with its answer. It reads
nothing else, so no hidden card can reach it. ``table_scene`` shows every hand face up
(for spectators of CPU games, replays and debugging). The drawn frames of the envs'
``rgb_array`` mode (``gofish_env.picture``), the web table's pages and the replay viewer
all draw scenes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from gofish_env.cards import RANK_NAMES
from gofish_env.events import Ask, Event, GameOver, Hit
from gofish_env.knowledge import PlayerView
from gofish_env.rules import Rules, rules_name

# Events after an ask that belong to its answer; a game that ends says so in the status.
_ANSWER_SKIPS = (GameOver,)


@dataclass(frozen=True)
class SeatScene:
    """One seat as drawn: ``cards`` face up (sorted by rank, then suit), or None when the
    hand is hidden from the viewer (only ``hand_size`` backs are shown)."""

    seat: int
    label: str
    hand_size: int
    cards: tuple[str, ...] | None
    catches: tuple[str, ...]  # rank names, in the order laid
    points: int
    to_move: bool
    out: bool
    winner: bool


@dataclass(frozen=True)
class LastAsk:
    """The latest ask and what followed it, all public."""

    asker: int
    target: int
    wanted: str  # what was asked for, as in the log: "queens", "the QH"
    handed: int  # cards handed over (0: go fish)
    text: str  # "Seat 1 asks seat 3 for queens."
    answer: tuple[str, ...]  # "Seat 3 says go fish.", "Seat 1 draws a card from the pool."


@dataclass(frozen=True)
class Scene:
    """A picture of the table from one seat's eyes (``viewer``), or with every hand face up
    (``viewer`` None)."""

    viewer: int | None
    title: str
    seats: tuple[SeatScene, ...]
    pool_size: int
    current_player: int | None
    last_ask: LastAsk | None
    status: str
    over: bool

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def scene_title(rules: Rules, whose: str) -> str:
    return f"Go Fish · {rules.players} players · {rules_name(rules)} · {whose}"


def seat_label(seat: int, labels: Sequence[str] | None, viewer: int | None) -> str:
    """``"Seat 2 · hard CPU"``; the viewer's own seat says ``(you)`` when it has no label."""
    name = labels[seat] if labels and seat < len(labels) and labels[seat] else ""
    if not name and seat == viewer:
        name = "you"
    return f"Seat {seat} · {name}" if name else f"Seat {seat}"


def last_ask(events: Sequence[Event]) -> LastAsk | None:
    """The latest ``Ask`` in ``events`` (a public log, or its recent tail) and its answer."""
    for index in range(len(events) - 1, -1, -1):
        ask = events[index]
        if type(ask) is Ask:
            after = [event for event in events[index + 1 :] if type(event) not in _ANSWER_SKIPS]
            handed = next((event.count for event in after if type(event) is Hit), 0)
            text = str(ask)
            wanted = text.split(" for ", 1)[1].rstrip(".")
            return LastAsk(
                ask.asker, ask.target, wanted, handed, text, tuple(str(event) for event in after)
            )
    return None


def _status(
    over: bool, winners: Sequence[int], current: int | None, labels: list[str], viewer
) -> str:
    if over:
        if not winners:
            return "Game over: nobody wins."
        names = ["you" if seat == viewer else labels[seat] for seat in winners]
        if len(names) > 1:
            return f"Game over: {' and '.join(names)} share the win."
        return f"Game over: {names[0]} {'win' if winners[0] == viewer else 'wins'}."
    if current is None:
        return ""
    if current == viewer:
        return "Your turn to ask."
    return f"{labels[current]} to ask."


def seat_scene(
    view: PlayerView,
    events: Sequence[Event],
    labels: Sequence[str] | None = None,
    title: str = "",
) -> Scene:
    """What ``view.seat`` sees. ``events``: the public log, or a tail of it holding the
    latest ask (``recent_events``)."""
    viewer = view.seat
    players = view.players
    winners = view.knowledge.winners or ()
    over = view.knowledge.winners is not None
    names = [seat_label(seat, labels, viewer) for seat in range(players)]
    seats = tuple(
        SeatScene(
            seat=seat,
            label=names[seat],
            hand_size=view.hand_sizes[seat],
            cards=tuple(view.own_cards) if seat == viewer else None,
            catches=tuple(RANK_NAMES[rank] for rank in view.catches[seat]),
            points=view.points[seat],
            to_move=view.current_player == seat,
            out=view.out[seat],
            winner=seat in winners,
        )
        for seat in range(players)
    )
    return Scene(
        viewer=viewer,
        title=title or scene_title(view.rules, f"seat {viewer}'s view"),
        seats=seats,
        pool_size=view.pool_size,
        current_player=view.current_player,
        last_ask=last_ask(events),
        status=_status(over, winners, view.current_player, names, viewer),
        over=over,
    )


def table_scene(game, labels: Sequence[str] | None = None, title: str = "") -> Scene:
    """Every hand face up: for spectators, replays and debugging."""
    players = game.players
    names = [seat_label(seat, labels, None) for seat in range(players)]
    current = game.current_player
    winners = game.winners if game.is_over else ()
    seats = tuple(
        SeatScene(
            seat=seat,
            label=names[seat],
            hand_size=game.hand_size(seat),
            cards=tuple(game.hand(seat)),
            catches=tuple(RANK_NAMES[rank] for rank in game.catches(seat)),
            points=game.tiebreak_points(seat),
            to_move=current == seat,
            out=game.is_out(seat),
            winner=seat in winners,
        )
        for seat in range(players)
    )
    return Scene(
        viewer=None,
        title=title or scene_title(game.rules, "every hand face up"),
        seats=seats,
        pool_size=game.pool_size,
        current_player=current,
        last_ask=last_ask(recent_events(game)),
        status=_status(game.is_over, winners, current, names, None),
        over=game.is_over,
    )


def recent_events(game, most: int = 64) -> list[Event]:
    """The tail of the public log that holds the latest ask and everything after it (at
    most ``most`` events; a longer answer keeps its end)."""
    events = game.events_since(max(0, game.num_events - most))
    for index in range(len(events) - 1, -1, -1):
        if type(events[index]) is Ask:
            return events[index:]
    return events
