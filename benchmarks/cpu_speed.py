"""Scripted CPU speed: each level in Python beside the same level compiled.

python benchmarks/cpu_speed.py --players 2,4 --levels random,hard,expert --seconds 3 --batch 1024

Both play whole games with the level at every seat, deal included, each driven as fast as
its own API allows, interleaved repeat by repeat (load hits them alike); a rate is the best
of ``--repeats``. A decision is one ask.

- Python: ``Game(rules, seed=n)``, one ``KnowledgeTracker`` per game, and at every decision
  ``CPU.choose(tracker.view(seat))``: what a tournament's Python path and ``GoFishEnv``'s
  opponents do.
- Compiled: ``CompiledCPUs.play`` on a ``VectorGame`` of N games (``--batch``): every game
  to its end in one call, then all dealt again (what the vector engine's tournaments, the
  ladder and ``master``'s rollouts do).

The ratio is compiled / Python decisions per second, for the same level and table. Ctrl-C
stops the measuring and prints the rates measured so far ("-" for those not measured).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from gofish_env.cli import (
    HelpFormatter,
    check_count,
    check_seconds,
    interrupted_note,
    parse_list,
    parse_players_list,
    report_console,
)
from gofish_env.cpus import make_cpu
from gofish_env.game import Game
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.rules import Rules
from gofish_env.vector import CompiledCPUs, VectorGame
from gofish_env.vector.cpus import COMPILED_LEVELS

ENGINES = ("python", "compiled")


def time_python(rules: Rules, level: str, seconds: float, seed: int) -> tuple[int, float]:
    """(decisions, seconds) of whole Python games until ``seconds`` have passed."""
    play_python_game(rules, level, seed)  # loads the knowledge kernels, outside the timing
    decisions, games = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        decisions += play_python_game(rules, level, seed * 1_000_003 + games)
        games += 1
    return decisions, time.perf_counter() - start


def play_python_game(rules: Rules, level: str, seed: int) -> int:
    """One game with ``level`` at every seat; returns its decisions."""
    game = Game(rules, seed=seed)
    tracker = KnowledgeTracker(game)
    cpus = [make_cpu(level, seed * rules.players + seat) for seat in range(rules.players)]
    while not game.is_over:
        seat = game.current_player
        game.ask(*cpus[seat].choose(tracker.view(seat)))
    return game.num_asks


def time_compiled(
    rules: Rules, level: str, size: int, seconds: float, seed: int
) -> tuple[int, float]:
    """(decisions, seconds) of batches of ``size`` whole games until ``seconds`` have
    passed."""
    batch = VectorGame(rules, size, seed)
    cpus = CompiledCPUs(batch, level, seed=seed)
    everyone = np.arange(size)
    cpus.play()  # compiles the kernels for these arrays, outside the timing
    batch.deal(everyone)
    cpus.reset(everyone)
    decisions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        decisions += cpus.play()
        batch.deal(everyone)
        cpus.reset(everyone)
    return decisions, time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/cpu_speed.py",
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", default="2,4", help="comma-separated seat counts, 2..6")
    parser.add_argument("--levels", default=",".join(COMPILED_LEVELS), help="compiled levels")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements; the best is kept")
    parser.add_argument("--batch", type=int, default=1024, help="games in the compiled batch")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the CPUs")
    args = parser.parse_args(argv)
    check_seconds(parser, "--seconds", args.seconds)
    check_count(parser, "--repeats", args.repeats)
    check_count(parser, "--batch", args.batch)
    player_counts = parse_players_list(parser, "--players", args.players)
    levels = parse_list(parser, "--levels", args.levels)
    unknown = [level for level in levels if level not in COMPILED_LEVELS]
    if unknown:
        parser.error(f"--levels: got {unknown[0]!r}; allowed: {', '.join(COMPILED_LEVELS)}")

    best: dict[tuple[int, str, str], float] = {}
    runs = len(player_counts) * len(levels) * args.repeats * len(ENGINES)
    measured = 0
    interrupted = False
    try:
        with Progress(console=Console(stderr=True), transient=True) as progress:
            task = progress.add_task("measuring", total=runs)
            for _ in range(args.repeats):
                for players in player_counts:
                    rules = Rules(players=players)
                    for level in levels:
                        for engine in ENGINES:
                            if engine == "python":
                                done, spent = time_python(rules, level, args.seconds, args.seed)
                            else:
                                done, spent = time_compiled(
                                    rules, level, args.batch, args.seconds, args.seed
                                )
                            key = (players, level, engine)
                            best[key] = max(best.get(key, 0.0), done / spent)
                            measured += 1
                            progress.advance(task)
    except KeyboardInterrupt:
        interrupted = True
    console = report_console()
    if not best:
        console.print(interrupted_note(0, runs))
        raise SystemExit(130)

    table = Table(title=f"CPU decisions per second (best of {args.repeats} x {args.seconds} s)")
    for column in ("players", "level", "Python", f"compiled, N={args.batch:,}", "ratio"):
        table.add_column(column, justify="right")
    for players in player_counts:
        for level in levels:
            python, compiled = (best.get((players, level, engine)) for engine in ENGINES)
            if python is None:
                continue  # not measured (interrupted)
            table.add_row(
                str(players),
                level,
                f"{python:,.0f}",
                "-" if compiled is None else f"{compiled:,.0f}",
                "-" if compiled is None else f"{compiled / python:,.0f}x",
            )
    console.print(table)
    if interrupted:
        console.print(interrupted_note(measured, runs))
        raise SystemExit(130)


if __name__ == "__main__":
    main()
