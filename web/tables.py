"""The web table's games, without the web: ``WebTable`` (one game, its seats, who may see
what) and ``TableRegistry`` (many tables at once).

A table has at most one person (the others are CPUs or saved agents, which the server
plays), or none: then people watch. Everything a table sends is a *payload* made by
``WebTable.payload(view)``: for a person's seat, its ``seat_scene`` (its own cards, the
public state), the public log with the seat's own draws noted, and its legal asks; for a
watched table, any seat's view or every hand face up. A person's page may ask only for its
own seat's view (it holds the table's token); nothing else of the game leaves the server
until the game is over, when the replay may be downloaded.

A game still running after ``max_asks`` asks (``DEFAULT_MAX_ASKS``, as in the envs, the
tournament and the harness) is cut off there and scored as it stands (``Game.leaders()``):
saved agents play deterministically and can repeat the same asks for ever.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gofish_env.actions import ActionCodec
from gofish_env.aec_env import DEFAULT_MAX_ASKS
from gofish_env.cards import RANK_NAMES, card_from_index, card_str
from gofish_env.cpus import CPU_LEVELS
from gofish_env.evaluation.stats import derive_seed
from gofish_env.events import Draw
from gofish_env.game import Game, IllegalAsk
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.observation import ObservationLayout
from gofish_env.players import (
    SeatPlayer,
    check_player_spec,
    make_player,
    player_label,
    tracked_turn,
)
from gofish_env.replay import Replay, drawn_cards
from gofish_env.rules import Rules
from gofish_env.scene import recent_events, rules_name, seat_scene, table_scene

HUMAN = "human"
TABLE_VIEW = "table"
log = logging.getLogger(__name__)


class TableError(Exception):
    """A request a table refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class WebTable:
    """One game at the web table. ``seats[s]`` is ``HUMAN`` (at most one) or a player spec
    (a CPU level, ``model:PATH.zip``, or any ``SeatPlayer``); the server plays every seat
    that is not ``HUMAN``. The game is cut off after ``max_asks`` asks."""

    def __init__(
        self,
        rules: Rules,
        seats: Sequence[Any],
        seed: int | None = None,
        game: Game | None = None,
        replays: str | Path | None = None,
        max_asks: int = DEFAULT_MAX_ASKS,
    ):
        if len(seats) != rules.players:
            raise TableError(422, f"seats: {len(seats)} given for {rules.players} players")
        humans = [seat for seat, spec in enumerate(seats) if spec == HUMAN]
        if len(humans) > 1:
            raise TableError(422, "seats: at most one seat may be 'human'")
        self.id = secrets.token_hex(8)
        self.token = secrets.token_urlsafe(16)
        self.rules = rules
        self.max_asks = max_asks
        self.seed = secrets.randbits(63) if seed is None and game is None else seed
        self.game = game if game is not None else Game(rules, seed=self.seed)
        self.human = humans[0] if humans else None
        self.labels = ["you" if spec == HUMAN else player_label(spec) for spec in seats]
        self.players: dict[int, SeatPlayer] = {}
        for seat, spec in enumerate(seats):
            if spec != HUMAN:
                try:
                    player = make_player(spec, rules, deterministic=True)
                except ValueError as error:  # AgentFileError is a ValueError too
                    raise TableError(422, f"seats[{seat}]: {error}") from None
                player.reset(derive_seed(self.seed or 0, seat))
                self.players[seat] = player
        self.tracker = KnowledgeTracker(self.game)
        self.codec = ActionCodec(rules)
        self.layout = ObservationLayout(rules)
        self.lock = threading.Lock()  # one request at a time changes or reads this table
        self.drawn: dict[int, tuple[int, list[str]]] = {}  # event index -> (seat, cards)
        self.replays = None if replays is None else Path(replays)
        self.replay_file: Path | None = None
        self.save_error: str | None = None  # why the finished game's replay was not saved

    @property
    def cut_off(self) -> bool:
        """Stopped by the ask limit before the game's end."""
        return not self.game.is_over and self.game.num_asks >= self.max_asks

    @property
    def over(self) -> bool:
        """Over, or cut off: nobody moves any more."""
        return self.game.is_over or self.cut_off

    def check_on(self) -> None:
        """Refuse a move once the game is over or cut off."""
        if self.cut_off:
            raise TableError(409, f"the game was cut off after {self.max_asks} asks (the limit)")
        if self.game.is_over:
            raise TableError(409, "the game is over")

    # ------------------------------------------------------------------ moves

    def ask(self, seat: int, target: int, wanted: str, seen: int | None = None) -> None:
        """The person at ``seat`` asks; the engine's refusal is a 409 with its reason. With
        ``seen`` (the log entries the asking page showed) an ask from a page that is behind
        the game (another tab played since) is refused too."""
        game = self.game
        if self.human is None:
            raise TableError(409, "nobody plays at this table: it is watched")
        if seat != self.human:
            raise TableError(403, f"seat {seat} is not played by a person at this table")
        if seen is not None and seen != len(game.events):
            raise TableError(
                409,
                f"the game has moved on since this page last showed it ({seen} log entries; "
                f"the table has {len(game.events)})",
            )
        self.check_on()
        if game.current_player != seat:
            raise TableError(
                409, f"it is not your turn: {self.labels[game.current_player]} is to ask"
            )
        try:
            self._play(target, wanted)
        except IllegalAsk as error:
            raise TableError(409, str(error)) from None

    def advance(self) -> None:
        """Play the next move when it is a CPU's or an agent's."""
        game = self.game
        self.check_on()
        seat = game.current_player
        if seat not in self.players:
            raise TableError(409, "it is your turn: the table waits for you")
        action = self.players[seat].act(tracked_turn(self.tracker, self.codec, self.layout, seat))
        self._play(*self.codec.to_ask(seat, action))

    def _play(self, target: Any, wanted: Any) -> None:
        game = self.game
        pool = game.pool_cards()  # to note each seat's own draws
        start = game.num_events
        events = game.ask(target, wanted)
        for index, seat, cards in drawn_cards(pool, events):
            self.drawn[start + index] = (seat, cards)
        if self.over and self.replays is not None and self.replay_file is None:
            self.save()

    def save(self) -> None:
        """Save the finished game in the replay folder. A failure (a full disk, the folder
        gone) is logged and sent with the payloads: the move stands, the game is kept and
        its replay can still be downloaded."""
        path = self.replays / f"web-{self.id}.json"
        try:
            self.replay_file = self.replay().save(path)
        except OSError as error:
            self.save_error = f"the replay was not saved as {path}: {error.strerror or error}"
            log.error("gofish-web table %s: %s", self.id, self.save_error)

    # ------------------------------------------------------------------ what is sent

    def allowed_views(self) -> list[int | str]:
        """The views this table may send: the person's seat, or (watched) every view."""
        if self.human is not None:
            return [self.human]
        return [TABLE_VIEW, *range(self.rules.players)]

    def payload(self, view: int | str | None = None) -> dict:
        """What one page is sent: the scene from ``view`` (the person's seat by default),
        the public log with that seat's own draws, the legal asks when it is to move."""
        if view is None:
            view = self.human if self.human is not None else TABLE_VIEW
        if view not in self.allowed_views():
            allowed = ", ".join(map(str, self.allowed_views()))
            raise TableError(403, f"view: {view!r} is not shown at this table; allowed: {allowed}")
        game = self.game
        if view == TABLE_VIEW:
            scene = table_scene(game, self.labels)
        else:
            scene = seat_scene(self.tracker.view(view), recent_events(game), self.labels)
        log = []
        for index, event in enumerate(game.events):
            entry = {"text": str(event), "kind": event.kind}
            seat, cards = self.drawn.get(index, (None, ()))
            shown = type(event) is Draw and event.shown
            if cards and not shown and view in (seat, TABLE_VIEW):
                entry["note"] = f"{'you drew' if seat == self.human else 'drew'} {' '.join(cards)}"
            log.append(entry)
        scene = scene.to_dict()
        if self.cut_off:  # nobody is to move; the status says how it stands
            scene["current_player"] = None
            scene["status"] = self.cut_off_status(view)
        to_move = scene["current_player"]
        legal = []
        if to_move is not None and to_move == view:
            legal = [[target, self.wanted_name(wanted)] for target, wanted in game.legal_asks()]
        return {
            "table": self.id,
            "view": view,
            "human": self.human,
            "players": self.rules.players,
            "rules": rules_name(self.rules),
            "ask_for": self.rules.ask_for,
            "labels": self.labels,
            "scene": scene,
            "log": log,
            "legal": legal,
            "waiting": None if to_move is None else ("you" if to_move == self.human else "cpu"),
            "over": self.over,
            "truncated": self.cut_off,
            "save_error": self.save_error,
        }

    def cut_off_status(self, view: int | str) -> str:
        """``"Cut off after 1000 asks (the limit); as it stands, you win."``"""
        leaders = self.game.leaders()
        names = ["you" if seat == view else self.labels[seat] for seat in leaders]
        if len(names) > 1:
            standing = f"{' and '.join(names)} share the win"
        else:
            standing = f"{names[0]} {'win' if leaders[0] == view else 'wins'}"
        return f"Cut off after {self.game.num_asks} asks (the limit); as it stands, {standing}."

    def wanted_name(self, wanted: int) -> str:
        """A rank or card index as its string (``"Q"``, ``"QH"``)."""
        if self.rules.ask_for == "card":
            return card_str(card_from_index(wanted))
        return RANK_NAMES[wanted]

    def replay(self) -> Replay:
        """The replay of the game; with a person at the table only once it is over. A game
        cut off is marked as the harness marks one (``max_asks``, ``cut_off``, ``leaders``)."""
        if self.human is not None and not self.over:
            raise TableError(409, "the replay shows every hand: it is given once the game is over")
        meta = {"source": "gofish-web", "table": self.id}
        if self.cut_off:
            meta.update(max_asks=self.max_asks, cut_off=True, leaders=list(self.game.leaders()))
        return Replay.from_game(self.game, self.seed, self.labels, meta)


class TableRegistry:
    """Many tables at once, each with its own game, found by id. The least recently used
    table is dropped when there are more than ``limit``. Each game is cut off after
    ``max_asks`` asks."""

    def __init__(
        self,
        limit: int = 1000,
        replays: str | Path | None = None,
        max_asks: int = DEFAULT_MAX_ASKS,
    ):
        self.limit = limit
        self.replays = replays
        self.max_asks = max_asks
        self._tables: OrderedDict[str, WebTable] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, rules: Rules, seats: Sequence[Any], seed: int | None = None) -> WebTable:
        table = WebTable(rules, seats, seed, replays=self.replays, max_asks=self.max_asks)
        return self.add(table)

    def add(self, table: WebTable) -> WebTable:
        with self._lock:
            self._tables[table.id] = table
            while len(self._tables) > self.limit:
                self._tables.popitem(last=False)
        return table

    def get(self, table_id: str) -> WebTable:
        with self._lock:
            table = self._tables.get(table_id)
            if table is None:
                raise TableError(404, f"no table {table_id!r} (it may have been closed)")
            self._tables.move_to_end(table_id)
        return table

    def __len__(self) -> int:
        return len(self._tables)

    def save_unfinished(self) -> list[Path]:
        """Save every game still on (with at least one ask) to the replay folder, as
        ``web-ID-unfinished.json``: what the server stops with is not lost."""
        if self.replays is None:
            return []
        saved = []
        for table in self._unfinished_tables():
            with table.lock:
                game = table.game
                replay = Replay.from_game(game, table.seed, table.labels, {"source": "gofish-web"})
                saved.append(replay.save(Path(self.replays) / f"web-{table.id}-unfinished.json"))
        return saved

    def count_unfinished(self) -> int:
        """How many games are still on (with at least one ask): what stopping would drop
        without a replay folder."""
        return len(self._unfinished_tables())

    def _unfinished_tables(self) -> list[WebTable]:
        with self._lock:
            tables = list(self._tables.values())
        unfinished = []
        for table in tables:
            with table.lock:
                if not table.over and table.game.num_asks > 0:
                    unfinished.append(table)
        return unfinished


def check_seat_spec(spec: str, rules: Rules, agents: Sequence[str] = ()) -> None:
    """Refuse a seat that names no player the server offers (for a 422 before the table is
    made): ``human``, a CPU level, or one of ``agents`` (the ``model:PATH`` specs given
    with ``gofish-web --agent``). Any other model path is refused before the file is looked
    at: loading a saved agent unpickles it, and a page must not name a file of its choice."""
    if spec == HUMAN:
        return
    if spec not in CPU_LEVELS and spec not in agents:
        allowed = ", ".join(["'human'", *CPU_LEVELS, *agents])
        raise TableError(
            422,
            f"seats: {spec!r} is not a player this server offers (saved agents are the ones "
            f"given with gofish-web --agent); allowed: {allowed}",
        )
    try:
        check_player_spec(spec, rules)
    except ValueError as error:
        raise TableError(422, f"seats: {error}") from None
