"""Replays: a game saved as JSON that the engine plays again, exactly.

A replay file holds the rules (every ``Rules`` field), the exact start (the hands as dealt,
the pool top first, the first player, and catches already laid for a position in play),
the seed of the deal when there was one, the asks in order, and the public event log as
it was recorded. ``Replay.game()`` plays the asks again from the start and checks that the
event log comes out equal to the recorded one; a file that does not replay is refused
with ``ReplayError`` saying where it departs. Format (version 1)::

    {"format": "gofish-replay", "version": 1,
     "rules": {"players": 4, "deal": "table", ...},
     "start": {"hands": [["7H", ...], ...], "pool": ["2C", ...], "first_player": 0,
               "catches": null},
     "seed": 123,                       # or null
     "players": ["you", "hard CPU", ...],  # a label per seat
     "asks": [[0, 2, "Q"], [0, 2, "7"], ...],  # [asker, target, rank or card asked for]
     "events": [{"kind": "deal", ...}, {"kind": "ask", ...}, ...],
     "result": {"over": true, "winners": [1], "catches": [...], "points": [...]},
     "meta": {...}}                     # where the game was played (free-form)

Ranks and cards are strings (``"Q"``, ``"10"``, ``"QH"``, ``"JK"``), as at the engine's
edges; inside events they are indices, as in ``gofish_env.events``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gofish_env.cards import RANK_NAMES, card_from_index, card_str
from gofish_env.events import Ask, Draw, EmptyHandDraw, Event
from gofish_env.game import Game, IllegalAsk
from gofish_env.match import Match
from gofish_env.rules import Rules

FORMAT = "gofish-replay"
VERSION = 1


class ReplayError(ValueError):
    """A replay file that cannot be read, or that the engine does not replay as recorded."""


def event_dict(event: Event) -> dict:
    """An event as JSON-ready data: its kind and fields (tuples become lists)."""
    return {"kind": event.kind, **_plain(event.fields())}


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def drawn_cards(pool: Sequence[str], events: Sequence[Event]) -> list[tuple[int, int, list[str]]]:
    """Who drew which cards in ``events``, given the pool (top first) before them:
    ``(index in events, seat, cards)`` for each draw. Private: a seat may know only its
    own draws (and a shown draw's rank, which the event says)."""
    drawn, taken = [], 0
    for index, event in enumerate(events):
        kind = type(event)
        if kind is Draw or kind is EmptyHandDraw:
            count = 1 if kind is Draw else event.count
            drawn.append((index, event.seat, list(pool[taken : taken + count])))
            taken += count
    return drawn


def wanted_name(rules: Rules, event: Ask) -> str:
    """What an ask named, as a string: a rank (``"Q"``) or, with exact-card asks, a card."""
    if rules.ask_for == "card":
        return card_str(card_from_index(event.card))
    return RANK_NAMES[event.rank]


def rules_dict(rules: Rules) -> dict:
    return {item.name: getattr(rules, item.name) for item in dataclasses.fields(rules)}


@dataclass
class Replay:
    """One game: its rules, start, asks and recorded public log (see the module docstring)."""

    rules: Rules
    start: dict
    asks: list[tuple[int, int, str]]
    events: list[dict]
    seed: int | None = None
    players: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)

    @classmethod
    def from_game(
        cls,
        game: Game,
        seed: int | None = None,
        players: Sequence[str] = (),
        meta: dict | None = None,
    ) -> Replay:
        """The replay of ``game`` as played so far. ``seed``: the seed it was dealt with
        (``Game(rules, seed=seed)``), if any; ``players``: a label per seat."""
        if isinstance(game, Match):
            raise TypeError(
                "a Match plays several games and a replay holds one: make one of each of "
                "its games (Replay.from_game(match.games[i]))"
            )
        asks = [
            (event.asker, event.target, wanted_name(game.rules, event))
            for event in game.events
            if type(event) is Ask
        ]
        return cls(
            rules=game.rules,
            start=game.start_position(),
            asks=asks,
            events=[event_dict(event) for event in game.events],
            seed=seed,
            players=list(players),
            meta=dict(meta or {}),
        )

    # ------------------------------------------------------------------ playing it again

    def start_game(self) -> Game:
        """The game at its start (before the first ask)."""
        start = self.start
        try:
            return Game.from_hands(
                start["hands"],
                start["pool"],
                rules=self.rules,
                first_player=start["first_player"],
                catches=start.get("catches"),
            )
        except (ValueError, TypeError) as error:
            raise ReplayError(f"start: {error}") from None

    def steps(self) -> Iterator[tuple[Game, list[Event], list[tuple[int, int, list[str]]]]]:
        """The game at its start, then after each ask: (game, the events of that step, who
        drew which cards in them as ``drawn_cards`` gives). The same ``Game`` object is
        yielded each time, played on. A recorded ask the engine refuses, or one recorded
        for a seat that is not to move, raises ``ReplayError``."""
        game = self.start_game()
        yield game, game.events, drawn_cards(self.start["pool"], game.events)
        for number, (asker, target, wanted) in enumerate(self.asks):
            if game.current_player != asker:
                raise ReplayError(
                    f"asks[{number}]: recorded as seat {asker}'s ask, but seat "
                    f"{game.current_player} is to move"
                    + (" (the game is over)" if game.is_over else "")
                )
            pool = game.pool_cards()
            try:
                events = game.ask(target, wanted)
            except IllegalAsk as error:
                raise ReplayError(f"asks[{number}]: the engine refuses it: {error}") from None
            yield game, events, drawn_cards(pool, events)

    def game(self) -> Game:
        """The game played again to its last recorded ask. Raises ``ReplayError`` when the
        event log differs from the recorded one (naming the first event that differs)."""
        steps = self.steps()
        game, _, _ = next(steps)
        for _ in steps:  # the game is played on in place
            pass
        self.check(game)
        return game

    def check(self, game: Game) -> None:
        """Raise ``ReplayError`` unless ``game``'s event log equals the recorded one."""
        played = [event_dict(event) for event in game.events]
        for index, (got, recorded) in enumerate(zip(played, self.events, strict=False)):
            try:
                differs = got != recorded
                if differs:
                    told = f"events[{index}]: the engine gives {got}, the file records {recorded}"
            except RecursionError:  # nested deeper than a comparison or a repr goes
                raise ReplayError(f"events[{index}]: nested too deeply to be an event") from None
            if differs:
                raise ReplayError(told)
        if len(played) == len(self.events):
            return
        raise ReplayError(
            f"events: the engine gives {len(played)} events, the file records {len(self.events)}"
        )

    # ------------------------------------------------------------------ files

    def to_dict(self) -> dict:
        game_over = (
            self.events[-1] if self.events and self.events[-1]["kind"] == "game_over" else None
        )
        result = {"over": game_over is not None}
        if game_over is not None:
            result.update(
                winners=game_over["winners"],
                catches=game_over["catches"],
                points=game_over["points"],
                reason=game_over["reason"],
            )
        return {
            "format": FORMAT,
            "version": VERSION,
            "rules": rules_dict(self.rules),
            "start": self.start,
            "seed": self.seed,
            "players": self.players,
            "asks": [list(ask) for ask in self.asks],
            "events": self.events,
            "result": result,
            "meta": self.meta,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json() + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_dict(cls, data: Any) -> Replay:
        """A replay from parsed JSON; anything malformed raises ``ReplayError`` naming the
        field. (Whether it replays is checked by ``game()``.)"""
        try:
            return cls._from_dict(data)
        except RecursionError:  # a value nested deeper than its check or its repr goes
            raise ReplayError("not JSON this reads: nested too deeply") from None

    @classmethod
    def _from_dict(cls, data: Any) -> Replay:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ReplayError(f'format: not a Go Fish replay (expected "format": "{FORMAT}")')
        version = data.get("version")
        if type(version) is not int or version != VERSION:  # true and 1.0 equal 1 too
            raise ReplayError(f"version: got {version!r}; allowed: {VERSION}")
        for key, kind in (("rules", dict), ("start", dict), ("asks", list), ("events", list)):
            if not isinstance(data.get(key), kind):
                raise ReplayError(f"{key}: missing, or not a JSON {kind.__name__}")
        try:
            rules = Rules(**data["rules"])
        except (TypeError, ValueError) as error:
            raise ReplayError(f"rules: {error}") from None
        start = data["start"]
        for key in ("hands", "pool", "first_player"):
            if key not in start:
                raise ReplayError(f"start: missing {key!r}")
        asks = []
        for number, ask in enumerate(data["asks"]):
            if not (
                isinstance(ask, list)
                and len(ask) == 3
                and all(isinstance(x, int) and not isinstance(x, bool) for x in ask[:2])
                and isinstance(ask[2], str)
            ):
                raise ReplayError(
                    f"asks[{number}]: got {ask!r}; allowed: [asker seat, target seat, rank or card]"
                )
            asks.append((ask[0], ask[1], ask[2]))
        seed = data.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ReplayError(f"seed: got {seed!r}; allowed: an integer or null")
        players = data.get("players") or []
        if not isinstance(players, list) or not all(isinstance(name, str) for name in players):
            raise ReplayError("players: allowed: a list of seat labels")
        if players and len(players) != rules.players:
            raise ReplayError(
                f"players: got {len(players)} seat labels for {rules.players} seats; allowed: "
                f"one label per seat, or none"
            )
        meta = data.get("meta") or {}
        if not isinstance(meta, dict):
            raise ReplayError("meta: allowed: a JSON object")
        return cls(rules, start, asks, data["events"], seed, players, meta)

    @classmethod
    def from_json(cls, text: str | bytes) -> Replay:
        try:
            data = json.loads(text)
        except (ValueError, UnicodeDecodeError) as error:
            raise ReplayError(f"not JSON: {error}") from None
        except RecursionError:
            raise ReplayError("not JSON this reads: nested too deeply") from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str | Path) -> Replay:
        try:
            text = Path(path).read_bytes()
        except OSError as error:
            raise ReplayError(f"cannot read {path}: {error.strerror or error}") from None
        return cls.from_json(text)

    def label(self, seat: int) -> str:
        """The seat's label: ``"seat 2 (hard CPU)"``, or ``"seat 2"`` without one."""
        if seat < len(self.players) and self.players[seat]:
            return f"seat {seat} ({self.players[seat]})"
        return f"seat {seat}"
