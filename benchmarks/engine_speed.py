"""Rules engine speed: full games of uniformly random asks, ours beside OpenSpiel's Go Fish.

python benchmarks/engine_speed.py --seconds 3 --players 2,4,6 --repeats 3 --batch 1,64,1024,8192

Every engine plays whole games, deal included, each driven as fast as its own API allows,
all in one process, interleaved repeat by repeat (load hits them alike); a rate is the best
(or median, ``--stat median``) of the repeats. A decision is one ask (ours) or one
non-chance action (OpenSpiel).

- Python ``Game`` (the reference): ``Game(rules, seed=n)``; at every decision
  ``game.legal_asks()`` and ``random.Random.choice``.
- ``VectorGame`` at each batch size N of ``--batch``, two ways: ``step`` (one call per round:
  the compiled random CPU's action for every game, ``VectorGame.step``, finished games
  dealt again) and ``play`` (``CompiledCPUs.play``: every game played to its end in one
  call, then all dealt again), and ``play, rules only``: ``play`` in a batch made with
  ``knowledge=False`` (no public knowledge kept: what random playouts and search rollouts
  need), and the same with ``compile_rules=True`` (the rules compiled into the kernels as
  constants; its first run compiles for about a minute, outside the timing).
- OpenSpiel ``go_fish`` (``pyspiel``), four drivers: ``bots`` (whole games in C++:
  ``pyspiel.evaluate_bots`` with ``make_uniform_random_bot`` at every seat, chance sampled
  by OpenSpiel itself; the fastest, with no Python per decision; it does not count
  decisions, so its decisions/s are its games/s times the decisions per game of the
  Python-driven runs of the same table size, the same random policy) and three drivers
  from Python, each decision ``legal[int(random() * len(legal))]`` and the chance nodes
  (the deal and every draw) by ``presampled`` (a shuffled deck of ranks applied in order:
  what uniform draws without replacement give), ``walk`` (one ``random()`` walked down
  ``state.chance_outcomes()``) or ``choices`` (``rng.choices(actions, weights)`` on lists
  built at every chance node, this script's first driver; slower, kept to show the
  difference). Ratios are against the fastest OpenSpiel driver of the run.

Each row also gives the time per decision (how it grows with N and with the players) and
the memory one game takes while held: ``VectorGame.memory_bytes / N``; a dealt Python
``Game`` measured with ``tracemalloc``; a dealt OpenSpiel state by the growth of the
process's resident memory while 20,000 are held (C++ memory ``tracemalloc`` cannot see).

OpenSpiel comes with the ``bench`` extra (``pip install -e ".[bench]"``). Ctrl-C stops the
measuring and prints the table of the engines measured so far (memory "-": not measured).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import statistics
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from gofish_env.cli import (
    HelpFormatter,
    check_count,
    check_seconds,
    interrupted_note,
    parse_list,
    parse_players_list,
    report_console,
    rules_or_error,
)
from gofish_env.game import Game
from gofish_env.rules import Rules
from gofish_env.vector import CompiledCPUs, VectorGame

TARGET_PLAYERS = 4
TARGET_RATIO = 10.0  # the vector engine's decisions/s at least 10x OpenSpiel's at 4 players
OPENSPIEL_DRIVERS = ("bots", "presampled", "walk", "choices")
HELD_GAMES = 20_000  # OpenSpiel states held to measure their memory


@dataclass
class Run:
    """One timed measurement: whole games played in ``seconds``."""

    games: int
    decisions: int
    seconds: float
    counted: bool = True  # False: decisions not counted by the engine (see ``estimate``)

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.seconds

    @property
    def decisions_per_game(self) -> float:
        return self.decisions / max(self.games, 1)


def time_python(rules: Rules, seconds: float, seed: int) -> Run:
    """Random games with the Python engine until ``seconds`` have passed."""
    choice = random.Random(seed).choice
    clock = time.perf_counter
    games = decisions = 0
    start = clock()
    deadline = start + seconds
    game_seed = seed * 1_000_003
    while True:
        game = Game(rules, seed=game_seed + games)
        ask, legal_asks = game.ask, game.legal_asks
        while not game.is_over:
            ask(*choice(legal_asks()))
            decisions += 1
        games += 1
        now = clock()
        if now >= deadline:
            return Run(games, decisions, now - start)


VECTOR_MODES = {
    "step": "step",
    "play": "play",
    "rules": "play, rules only",
    "compiled": "play, rules only, rules compiled in",
}


def time_vector(rules: Rules, size: int, mode: str, seconds: float, seed: int) -> Run:
    """``size`` games in a ``VectorGame``, the compiled random CPU at every seat, finished
    games dealt again, until ``seconds`` have passed. Games are counted when they end."""
    knowledge = mode not in ("rules", "compiled")
    batch = VectorGame(rules, size, seed, knowledge=knowledge, compile_rules=mode == "compiled")
    cpus = CompiledCPUs(batch, "random", seed=seed)
    clock = time.perf_counter
    games = decisions = 0
    start = clock()
    deadline = start + seconds
    while clock() < deadline:
        if mode in ("play", "rules", "compiled"):
            decisions += cpus.play()
            finished = np.arange(size)
        else:
            actions = cpus.actions()
            live = actions >= 0
            decisions += int(live.sum())
            batch.step(np.where(live, actions, 0))
            finished = np.flatnonzero(batch.state.over)
        if finished.size:
            games += finished.size
            batch.deal(finished)
            cpus.reset(finished)
    return Run(games, decisions, clock() - start)


def time_openspiel_bots(players: int, seconds: float, seed: int) -> Run:
    """Random games played in C++ by OpenSpiel's uniform random bots (decisions estimated
    later from the other drivers' decisions per game)."""
    import pyspiel

    spiel_game = pyspiel.load_game("go_fish", {"players": players})
    bots = [pyspiel.make_uniform_random_bot(seat, seed * 7919 + seat) for seat in range(players)]
    evaluate, new_state = pyspiel.evaluate_bots, spiel_game.new_initial_state
    clock = time.perf_counter
    games = 0
    start = clock()
    deadline = start + seconds
    while True:
        evaluate(new_state(), bots, seed * 1_000_003 + games)
        games += 1
        now = clock()
        if now >= deadline:
            return Run(games, 0, now - start, counted=False)


def time_openspiel(players: int, driver: str, seconds: float, seed: int) -> Run:
    """Random games with OpenSpiel's go_fish and one chance-node driver."""
    import pyspiel

    if driver == "bots":
        return time_openspiel_bots(players, seconds, seed)
    spiel_game = pyspiel.load_game("go_fish", {"players": players})
    rng = random.Random(seed)
    uniform, choices, shuffle = rng.random, rng.choices, rng.shuffle
    deck = [rank for rank in range(13) for _ in range(4)]  # its defaults: 13 ranks, 4 suits
    clock = time.perf_counter
    games = decisions = 0
    start = clock()
    deadline = start + seconds
    while True:
        state = spiel_game.new_initial_state()
        shuffle(deck)
        drawn = 0
        while not state.is_terminal():
            if state.is_chance_node():
                if driver == "presampled":
                    action = deck[drawn]
                    drawn += 1
                elif driver == "walk":
                    point = uniform()
                    for outcome, probability in state.chance_outcomes():  # noqa: B007
                        point -= probability
                        if point < 0:
                            break
                    action = outcome
                else:
                    actions, weights = zip(*state.chance_outcomes(), strict=True)
                    action = choices(actions, weights)[0]
                state.apply_action(action)
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(uniform() * len(legal))])
                decisions += 1
        games += 1
        now = clock()
        if now >= deadline:
            return Run(games, decisions, now - start)


def estimate(runs: dict[tuple[str, int], list[Run]]) -> None:
    """Decisions of the runs that did not count them: their games times the decisions per
    game of the counted OpenSpiel runs at the same table size (the same random policy)."""
    for (_name, players), measured in runs.items():
        counted = [
            run
            for (other, p), others in runs.items()
            if other.startswith("openspiel") and p == players
            for run in others
            if run.counted
        ]
        per_game = sum(run.decisions for run in counted) / max(sum(r.games for r in counted), 1)
        for run in measured:
            if not run.counted:
                run.decisions = round(run.games * per_game)


def resident_bytes() -> int:
    """The process's resident memory (Linux ``/proc``; 0 elsewhere)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def memory_per_game(name: str, players: int, rules: Rules) -> float:
    """Bytes one dealt game takes while held (nan where it cannot be measured)."""
    if name == "python":
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        held = [Game(rules, seed=n) for n in range(1000)]
        size = (tracemalloc.get_traced_memory()[0] - before) / len(held)
        tracemalloc.stop()
        return size
    kind, _, size = [*name.split("-"), ""][:3]
    if kind == "vector":
        return VectorGame(rules, int(size), seed=0).memory_bytes / int(size)
    import pyspiel

    spiel_game = pyspiel.load_game("go_fish", {"players": players})
    before = resident_bytes()
    held = []
    for _ in range(HELD_GAMES):
        state = spiel_game.new_initial_state()
        while state.is_chance_node():  # the deal
            state.apply_action(state.chance_outcomes()[0][0])
        held.append(state)
    grown = resident_bytes() - before
    return grown / len(held) if before and grown > 0 else float("nan")


def pick(runs: list[Run], stat: str) -> Run:
    """The best (fastest) run, or the run with the median decisions/s."""
    ordered = sorted(runs, key=lambda run: run.decisions_per_second)
    if stat == "best":
        return ordered[-1]
    median = statistics.median_low([run.decisions_per_second for run in ordered])
    return next(run for run in ordered if run.decisions_per_second == median)


def openspiel_available() -> bool:
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    return True


def engines(batches: list[int], with_openspiel: bool) -> list[str]:
    names = ["python"]
    names += [f"vector-{mode}-{size}" for size in batches for mode in VECTOR_MODES]
    if with_openspiel:
        names += [f"openspiel-{driver}" for driver in OPENSPIEL_DRIVERS]
    return names


def measure(name: str, players: int, rules: Rules, seconds: float, seed: int) -> Run:
    if name == "python":
        return time_python(rules, seconds, seed)
    kind, mode, size = [*name.split("-"), ""][:3]
    if kind == "vector":
        return time_vector(rules, int(size), mode, seconds, seed)
    return time_openspiel(players, mode, seconds, seed)


def warm_up(names: list[str], rules_by_players: dict[int, Rules], seed: int) -> None:
    """Every engine played briefly: compiles, loads and warms caches before the timing."""
    for players, rules in rules_by_players.items():
        for name in names:
            measure(name, players, rules, 0.05, seed)


def kilobytes(size: float | None) -> str:
    if size is None:
        return "-"  # not measured (interrupted)
    return "n/a" if math.isnan(size) else f"{size / 1024:,.1f} KB"


def label(name: str, preset: str) -> str:
    if name == "python":
        return f"Python Game ({preset})"
    kind, mode, size = [*name.split("-"), ""][:3]
    if kind == "vector":
        return f"VectorGame N={int(size):,} {VECTOR_MODES[mode]}"
    return f"OpenSpiel go_fish, {mode}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/engine_speed.py",
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one measurement")
    parser.add_argument("--players", default="2,4,6", help="comma-separated seat counts, 2..6")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per engine and size")
    parser.add_argument(
        "--batch", default="1,64,1024,8192", help="comma-separated VectorGame batch sizes"
    )
    parser.add_argument(
        "--stat",
        choices=("best", "median"),
        default="best",
        help="which repeat to report (best: least disturbed by other load on the machine)",
    )
    parser.add_argument(
        "--rules", default="table", help=f"our engines' preset: {', '.join(Rules.PRESETS)}"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the choices")
    parser.add_argument(
        "--no-openspiel", action="store_true", help="time our engines only (no ratio)"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="also print the results as a Markdown table"
    )
    args = parser.parse_args(argv)

    # Every argument is checked before the first measurement.
    check_seconds(parser, "--seconds", args.seconds)
    check_count(parser, "--repeats", args.repeats)
    player_counts = parse_players_list(parser, "--players", args.players)
    rules_by_players = {
        players: rules_or_error(parser, args.rules, players) for players in player_counts
    }
    batches = []
    for item in parse_list(parser, "--batch", args.batch):
        if not item.isdigit() or int(item) < 1:
            parser.error(f"--batch: got {args.batch!r}; allowed: batch sizes >= 1, by commas")
        batches.append(int(item))
    console = report_console()
    with_openspiel = not args.no_openspiel and openspiel_available()
    if not args.no_openspiel and not with_openspiel:
        hint = 'pip install ".\\[bench]"'  # "\\[": not rich markup
        console.print(f"[yellow]pyspiel not found: timing our engines only ({hint})")
    if with_openspiel and args.rules != "table":
        console.print(
            f"[yellow]note: OpenSpiel plays its default rules; ours play {args.rules!r}, "
            "so the ratios compare different games"
        )
    names = engines(batches, with_openspiel)
    runs: dict[tuple[str, int], list[Run]] = {(n, p): [] for n in names for p in rules_by_players}
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
    )
    memory: dict[tuple[str, int], float] = {}
    measured, total = 0, args.repeats * len(runs)
    interrupted = False
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("warming up (compiling)", total=total)
            warm_up(names, rules_by_players, args.seed)
            for repeat in range(args.repeats):
                for players, rules in rules_by_players.items():
                    for name in names:
                        progress.update(
                            task,
                            description=f"repeat {repeat + 1}/{args.repeats}: "
                            f"{label(name, args.rules)}, {players} players",
                        )
                        run = measure(name, players, rules, args.seconds, args.seed + repeat)
                        runs[name, players].append(run)
                        measured += 1
                        progress.advance(task)
            progress.update(task, description="memory per game")
            for players, rules in rules_by_players.items():
                spiel_memory = None
                for name in names:
                    if name.startswith("openspiel"):  # one measurement serves every driver
                        if spiel_memory is None:
                            spiel_memory = memory_per_game(name, players, rules)
                        memory[name, players] = spiel_memory
                    else:
                        memory[name, players] = memory_per_game(name, players, rules)
    except KeyboardInterrupt:
        interrupted = True
    estimate(runs)
    # Left out: what was not measured, and OpenSpiel's bots with no decisions to count by.
    shown = {key: done for key, done in runs.items() if done and done[0].decisions}
    if not shown:
        console.print(interrupted_note(0, total))
        raise SystemExit(130)

    headers = [
        "players",
        "engine",
        "games/s",
        "decisions/s",
        "decisions/game",
        "ns/decision",
        "memory/game",
        "vs OpenSpiel",
    ]
    rows = []
    ratios: dict[int, float] = {}
    for players in rules_by_players:
        spiel = [
            pick(done, args.stat)
            for (name, table), done in shown.items()
            if table == players and name.startswith("openspiel")
        ]
        fastest = max(spiel, key=lambda run: run.decisions_per_second, default=None)
        for name in names:
            if (name, players) not in shown:
                continue
            run = pick(shown[name, players], args.stat)
            ratio = run.decisions_per_second / fastest.decisions_per_second if fastest else None
            if name.startswith("vector") and ratio is not None:
                ratios[players] = max(ratios.get(players, 0.0), ratio)
            rows.append(
                [
                    str(players),
                    label(name, args.rules),
                    f"{run.games_per_second:,.0f}",
                    f"{run.decisions_per_second:,.0f}",
                    f"{run.decisions_per_game:.1f}" + ("" if run.counted else " (est.)"),
                    f"{1e9 / run.decisions_per_second:,.0f}",
                    kilobytes(memory.get((name, players))),
                    "" if ratio is None else f"{ratio:.2f}x",
                ]
            )

    title = (
        f"Random full games, {args.stat} of {args.repeats} x {args.seconds:g} s, "
        f"Python {platform.python_version()}, one process"
    )
    table = Table(title=title)
    for header in headers:
        table.add_column(header, justify="left" if header in ("players", "engine") else "right")
    for index, cells in enumerate(rows):
        last_of_group = index + 1 == len(rows) or rows[index + 1][0] != cells[0]
        table.add_row(*cells, end_section=last_of_group)
    console.print(table)
    if args.markdown:
        print("| " + " | ".join(headers) + " |")
        print("|" + "|".join("---" for _ in headers) + "|")
        for cells in rows:
            print("| " + " | ".join(cells) + " |")
    if interrupted:
        if args.rules == "table":
            console.print(
                f"target: no verdict, the run is incomplete (VectorGame >= {TARGET_RATIO:g}x "
                f"the fastest OpenSpiel driver's decisions/s at {TARGET_PLAYERS} players)"
            )
        console.print(interrupted_note(measured, total))
        raise SystemExit(130)
    if TARGET_PLAYERS in ratios and args.rules == "table":
        ratio = ratios[TARGET_PLAYERS]
        verdict = "[green]met" if ratio >= TARGET_RATIO else "[red]NOT met"
        console.print(
            f"target: VectorGame >= {TARGET_RATIO:g}x the fastest OpenSpiel driver's decisions/s "
            f"at {TARGET_PLAYERS} players: {ratio:.2f}x, {verdict}"
        )


if __name__ == "__main__":
    main()
