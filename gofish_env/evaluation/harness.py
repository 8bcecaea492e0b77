"""The one harness that plays measured games: duplicate deals for any entrants.

Every measurement of the project (the CPU ladder, the tournament, a trained agent's table
against the CPUs, the evaluations during training) plays its games here:

- Deal ``d`` is ``Game(rules, seed=derive_seed(seed, d))``; it is played once per rotation
  of its seating order (``schedule.rotated``), so every entrant of the line-up holds every
  seat's hand once and the luck of the deal cancels.
- The player at each seat is reset with ``derive_seed(seed, d, rotation, seat)``.
- Every game is driven through ``raw_env``, so every kind of entrant plays the same way.
- A game still running after ``max_asks`` asks (default ``DEFAULT_MAX_ASKS``) is cut off and
  scored as if it ended there: ``Game.leaders()``, the rules' winner rule applied to the
  position.
- Results come back in deal order, so the same seed gives the same records whatever the
  number of worker processes.
- When every entrant is a compiled CPU level (``random`` .. ``expert``) and no replays are
  asked for, the deals are played in batches of the vector engine (``batched``;
  ``Measurement.engine``): the same deals, seats, seeds, ask limit and scoring, the CPUs'
  random choices from their compiled generators.
- With ``Measurement.replays`` (a folder), every game is also saved as a replay file
  (``gofish_env.replay``), ``deal000012-rotation1.json``, as soon as it ends (replays are
  made from the reference engine's event log: they play in the reference engine).
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gofish_env.aec_env import DEFAULT_MAX_ASKS, raw_env
from gofish_env.evaluation.batched import COMPILED, batched_records, compiled_levels, is_compiled
from gofish_env.evaluation.entrants import Entrant
from gofish_env.evaluation.schedule import rotated, seating_order
from gofish_env.evaluation.stats import derive_seed
from gofish_env.game import Game
from gofish_env.observation import DEFAULT_HISTORY
from gofish_env.players import MODEL_PREFIX, SeatPlayer, check_history, make_player, seat_copy
from gofish_env.replay import Replay
from gofish_env.rules import Rules, is_integer


@dataclass(frozen=True)
class GameRecord:
    """One finished game: which entrant sat where, and how the seats did."""

    deal: int
    rotation: int
    deal_seed: int
    seats: tuple[int, ...]  # entrant index at each seat
    catches: tuple[int, ...]
    points: tuple[int, ...]
    winners: tuple[int, ...]
    truncated: bool = False  # cut off by the ask limit, scored by Game.leaders()
    asks: int = 0
    # Asks each seat chose and the time it took (timing varies, so records compare without).
    decisions: tuple[int, ...] = field(default=(), compare=False)
    decision_seconds: tuple[float, ...] = field(default=(), compare=False)


@dataclass
class Measurement:
    """What to play: the entrants, the table, the seed, the line-ups the deals cycle
    through (entrant indices per seat, ``schedule``), and the ask limit."""

    entrants: list[Entrant]
    rules: Rules
    seed: int
    lineups: list[tuple[int, ...]]
    max_asks: int = DEFAULT_MAX_ASKS
    deterministic: bool = False  # models play their most likely action
    replays: str | Path | None = None  # a folder: every game saved there as a replay file
    # "auto": the vector engine when every entrant is a compiled CPU level (and no replays
    # are asked for); "python": the reference engine always; "vector": the vector engine
    # (compiled levels only, no replays).
    engine: str = "auto"

    def __post_init__(self) -> None:
        refuse_match_play(self.rules)
        # Checked here, before any game or kept file: a Python caller gets no command's
        # checks (max_asks=0 played 0-ask games that every seat "won"; seed=1.5 was cut).
        if not is_integer(self.seed):
            raise ValueError(f"seed: got {self.seed!r}; allowed: an integer")
        asks = self.max_asks
        if not is_integer(asks) or asks < 1:
            raise ValueError(f"max_asks: got {asks!r}; allowed: an integer >= 1")
        self.seed, self.max_asks = int(self.seed), int(asks)  # NumPy's kept as Python's
        if self.engine not in ENGINES:
            allowed = ", ".join(repr(engine) for engine in ENGINES)
            raise ValueError(f"engine: got {self.engine!r}; allowed: {allowed}")
        if self.engine == "vector" and compiled_levels(self) is None:
            others = [entrant.name for entrant in self.entrants if not is_compiled(entrant)]
            raise ValueError(
                f"engine: 'vector' plays compiled CPU levels only ({', '.join(COMPILED)}); "
                f"not compiled: {', '.join(repr(name) for name in others)}; use 'auto' or "
                "'python' for these entrants"
            )
        if self.engine == "vector" and self.replays is not None:
            raise ValueError(
                "engine: 'vector' saves no replays (they come from the reference engine's "
                "event log); use 'auto' or 'python' with replays"
            )
        check_model_sizes(self)


def check_model_sizes(measurement: Measurement) -> None:
    """Refuse, before any game, a saved or loaded model whose observation is not the one
    the harness's table shows (the default history): one trained with another
    ``history=`` fits its rules but would fail at its first move."""
    for entrant in measurement.entrants:
        spec = entrant.spec
        if not (isinstance(spec, str) and spec.startswith(MODEL_PREFIX)) and not hasattr(
            spec, "predict"
        ):
            continue
        player = make_player(spec, measurement.rules)  # a saved agent is loaded once a path
        try:
            check_history(player, measurement.rules, DEFAULT_HISTORY)
        except ValueError as error:
            raise ValueError(f"entrant {entrant.name!r}: {error}") from None


ENGINES = ("auto", "python", "vector")


def refuse_match_play(rules: Rules) -> None:
    """Duplicate deals are single games: match play (``match_target``) is refused."""
    if rules.match_target:
        raise ValueError("rules: match play (match_target) is not supported; play single games")


def engine_used(measurement: Measurement) -> str:
    """The engine the measurement's games are played in: ``"vector"`` or ``"python"``."""
    if (
        measurement.engine != "python"
        and measurement.replays is None
        and compiled_levels(measurement) is not None
    ):
        return "vector"
    return "python"


class Table:
    """Plays deals in one process: one env, and one player per (entrant, copy) reused from
    game to game (reset with its seat's seed each game)."""

    def __init__(self, measurement: Measurement):
        self.measurement = measurement
        self.env = raw_env(rules=measurement.rules, max_asks=measurement.max_asks)
        self._players: dict[tuple[int, int], SeatPlayer] = {}
        self._specs_in_use: set[int] = set()

    def player(self, entrant: int, copy_index: int) -> SeatPlayer:
        key = (entrant, copy_index)
        if key not in self._players:
            measurement = self.measurement
            spec = measurement.entrants[entrant].spec
            # No two seats share a memory of the game: not the copies of one entrant, nor
            # two entrants given the same object.
            if id(spec) in self._specs_in_use:
                spec = seat_copy(spec)
            self._specs_in_use.add(id(spec))
            self._players[key] = make_player(spec, measurement.rules, measurement.deterministic)
        return self._players[key]

    def play_deal(self, deal: int) -> list[GameRecord]:
        measurement = self.measurement
        deal_seed = derive_seed(measurement.seed, deal)
        game = Game(measurement.rules, seed=deal_seed)
        order = seating_order(measurement.lineups, deal)
        return [
            self.play_game(game, deal, deal_seed, rotation, rotated(order, rotation))
            for rotation in range(measurement.rules.players)
        ]

    def play_game(
        self, game: Game, deal: int, deal_seed: int, rotation: int, seats: tuple[int, ...]
    ) -> GameRecord:
        measurement = self.measurement
        env = self.env
        env.reset(options={"game": game})  # the env plays a copy: the deal is replayed as is
        copies: dict[int, int] = {}
        players = []
        for seat, entrant in enumerate(seats):
            player = self.player(entrant, copies.get(entrant, 0))
            copies[entrant] = copies.get(entrant, 0) + 1
            player.reset(derive_seed(measurement.seed, deal, rotation, seat))
            players.append(player)
        count = len(seats)
        decisions, seconds = [0] * count, [0.0] * count
        clock = time.perf_counter
        played = env.game
        while not played.is_over and not env.truncations[env.agent_selection]:
            seat = played.current_player
            start = clock()
            action = players[seat].act(env.turn(seat))
            seconds[seat] += clock() - start
            decisions[seat] += 1
            try:
                env.step(action)
            except ValueError as error:  # IllegalAsk and InvalidAction are ValueErrors
                name = measurement.entrants[seats[seat]].name
                raise ValueError(
                    f"entrant {name!r} (seat {seat}) chose an illegal action {action!r}: {error}"
                ) from error
        if measurement.replays is not None:
            self.save_replay(played, deal, deal_seed, rotation, seats)
        return GameRecord(
            deal=deal,
            rotation=rotation,
            deal_seed=deal_seed,
            seats=seats,
            catches=tuple(len(played.catches(seat)) for seat in range(count)),
            points=tuple(played.tiebreak_points(seat) for seat in range(count)),
            winners=played.leaders(),
            truncated=not played.is_over,
            asks=played.num_asks,
            decisions=tuple(decisions),
            decision_seconds=tuple(seconds),
        )

    def save_replay(
        self, game: Game, deal: int, deal_seed: int, rotation: int, seats: tuple[int, ...]
    ) -> Path:
        measurement = self.measurement
        names = [measurement.entrants[entrant].name for entrant in seats]
        meta = {
            "source": "gofish_env.evaluation",
            "seed": measurement.seed,
            "deal": deal,
            "rotation": rotation,
            "max_asks": measurement.max_asks,
            "cut_off": not game.is_over,
            "leaders": list(game.leaders()),
        }
        replay = Replay.from_game(game, seed=deal_seed, players=names, meta=meta)
        return replay.save(replay_path(measurement.replays, deal, rotation))


def replay_path(folder: str | Path, deal: int, rotation: int) -> Path:
    """Where the harness saves the replay of a game."""
    return Path(folder) / f"deal{deal:06d}-rotation{rotation}.json"


_WORKER_TABLE: Table | None = None


def _init_worker(measurement: Measurement) -> None:
    global _WORKER_TABLE
    # Ctrl-C reaches every process of the terminal: the parent stops the pool and keeps
    # what was played; the workers need not each print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER_TABLE = Table(measurement)


def _worker_deal(deal: int) -> list[GameRecord]:
    assert _WORKER_TABLE is not None
    return _WORKER_TABLE.play_deal(deal)


def play_deals(
    measurement: Measurement,
    deals: int,
    workers: int = 1,
    on_games: Callable[[int], None] | None = None,
    first: int = 0,
    on_deal: Callable[[list[GameRecord]], None] | None = None,
) -> list[GameRecord]:
    """Every game of deals ``first`` .. ``deals - 1``, in deal order; ``on_deal(games)`` is
    handed each deal's games as it ends (to keep them: ``kept``), then ``on_games(n)`` told
    the number of games played so far. ``workers`` > 1 plays the deals in a pool of
    processes (the records are the same). A deal's games depend on its index only, so a
    measurement can be played in parts (and resumed)."""
    records: list[GameRecord] = []
    for deal_records in _deal_records(measurement, range(first, deals), workers):
        if on_deal is not None:
            on_deal(deal_records)
        records.extend(deal_records)
        if on_games is not None:
            on_games(len(records))
    return records


def _deal_records(
    measurement: Measurement, deals: range, workers: int
) -> Iterator[list[GameRecord]]:
    if engine_used(measurement) == "vector":
        yield from batched_records(measurement, deals, compiled_levels(measurement))
        return
    if workers <= 1 or len(deals) <= 1:
        table = Table(measurement)
        for deal in deals:
            yield table.play_deal(deal)
        return
    methods = multiprocessing.get_all_start_methods()
    # fork lets unpicklable entrants (lambdas, loaded models) reach the workers as they are.
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with context.Pool(min(workers, len(deals)), _init_worker, (measurement,)) as pool:
        yield from pool.imap(_worker_deal, deals, chunksize=1)


def decision_milliseconds(records: Sequence[GameRecord], entrants: int) -> list[float]:
    """Each entrant's mean time per decision, in milliseconds (nan: it made none)."""
    spent, made = [0.0] * entrants, [0] * entrants
    for record in records:
        for seat, entrant in enumerate(record.seats):
            spent[entrant] += record.decision_seconds[seat]
            made[entrant] += record.decisions[seat]
    return [1000.0 * s / n if n else float("nan") for s, n in zip(spent, made, strict=True)]
