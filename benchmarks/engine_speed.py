"""Rules engine speed: full games of uniformly random asks, ours against OpenSpiel's Go Fish.

python benchmarks/engine_speed.py --seconds 5 --players 2,4,6 --repeats 3

Our engine: ``Game(rules, seed=n)`` for n = 0, 1, 2, ...; at every decision the legal asks
are listed with ``game.legal_asks()`` and one is picked with ``random.Random(seed).choice``.
OpenSpiel: ``pyspiel.load_game("go_fish", {"players": P})`` (its default rules); chance
outcomes (the deal and every draw) are sampled with ``rng.choices(actions, weights)``, and at
every decision ``rng.choice(state.legal_actions())``. Both engines are timed over whole games,
deal included, in the same process, interleaved repeat by repeat; the reported rate of each
measurement is the best (or the median, ``--stat median``) of the repeats. OpenSpiel comes
with the ``bench`` extra (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import time
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from gofish_env.cli import check_count, check_seconds, parse_players_list, rules_or_error
from gofish_env.game import Game
from gofish_env.rules import Rules

TARGET_PLAYERS = 4
TARGET_RATIO = 0.7  # our games/s at least 0.7x OpenSpiel's at 4 players, default rules
WARMUP_SECONDS = 0.2


@dataclass
class Run:
    """One timed measurement: whole games played in ``seconds``."""

    games: int
    decisions: int
    seconds: float

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.seconds

    @property
    def decisions_per_game(self) -> float:
        return self.decisions / self.games


def time_ours(rules: Rules, seconds: float, seed: int) -> Run:
    """Random games with our engine until ``seconds`` have passed (checked between games)."""
    rng = random.Random(seed)
    choice = rng.choice
    clock = time.perf_counter
    games = decisions = 0
    start = clock()
    deadline = start + seconds
    game_seed = seed * 1_000_003
    while True:
        game = Game(rules, seed=game_seed + games)
        ask = game.ask
        legal_asks = game.legal_asks
        while not game.is_over:
            ask(*choice(legal_asks()))
            decisions += 1
        games += 1
        now = clock()
        if now >= deadline:
            return Run(games, decisions, now - start)


def time_openspiel(players: int, seconds: float, seed: int) -> Run:
    """Random games with OpenSpiel's go_fish until ``seconds`` have passed."""
    import pyspiel

    spiel_game = pyspiel.load_game("go_fish", {"players": players})
    rng = random.Random(seed)
    choice = rng.choice
    choices = rng.choices
    clock = time.perf_counter
    games = decisions = 0
    start = clock()
    deadline = start + seconds
    while True:
        state = spiel_game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, weights = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(choices(actions, weights)[0])
            else:
                state.apply_action(choice(state.legal_actions()))
                decisions += 1
        games += 1
        now = clock()
        if now >= deadline:
            return Run(games, decisions, now - start)


def pick(runs: list[Run], stat: str) -> Run:
    """The best (fastest) run, or the run with the median games/s."""
    ordered = sorted(runs, key=lambda run: run.games_per_second)
    if stat == "best":
        return ordered[-1]
    median = statistics.median_low([run.games_per_second for run in ordered])
    return next(run for run in ordered if run.games_per_second == median)


def row(players: int, engine: str, run: Run) -> list[str]:
    return [
        str(players),
        engine,
        f"{run.games_per_second:,.0f}",
        f"{run.decisions_per_second:,.0f}",
        f"{run.decisions_per_game:.1f}",
    ]


def openspiel_available() -> bool:
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/engine_speed.py",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one measurement")
    parser.add_argument("--players", default="2,4,6", help="comma-separated seat counts, 2..6")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per engine and size")
    parser.add_argument(
        "--stat",
        choices=("best", "median"),
        default="best",
        help="which repeat to report (best: least disturbed by other load on the machine)",
    )
    parser.add_argument(
        "--rules", default="table", help=f"our engine's preset: {', '.join(Rules.PRESETS)}"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the choices")
    parser.add_argument(
        "--no-openspiel", action="store_true", help="time our engine only (no ratio)"
    )
    parser.add_argument(
        "--markdown", action="store_true", help="also print the results as a Markdown table"
    )
    args = parser.parse_args(argv)

    # Every argument is checked before the first measurement; a preset that refuses one of
    # the seat counts is refused here too.
    check_seconds(parser, "--seconds", args.seconds)
    check_count(parser, "--repeats", args.repeats)
    player_counts = parse_players_list(parser, "--players", args.players)
    rules_by_players = {
        players: rules_or_error(parser, args.rules, players) for players in player_counts
    }
    console = Console()
    with_openspiel = not args.no_openspiel and openspiel_available()
    if not args.no_openspiel and not with_openspiel:
        console.print('[yellow]pyspiel not found: timing our engine only (pip install ".[bench]")')
    if with_openspiel and args.rules != "table":
        console.print(
            f"[yellow]note: OpenSpiel plays its default rules; ours plays {args.rules!r}, "
            "so the ratio compares different games"
        )

    engines = ["ours", "openspiel"] if with_openspiel else ["ours"]
    runs: dict[tuple[str, int], list[Run]] = {
        (engine, players): [] for engine in engines for players in rules_by_players
    }
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("warming up", total=args.repeats * len(runs))
        for players, rules in rules_by_players.items():
            time_ours(rules, WARMUP_SECONDS, args.seed)
            if with_openspiel:
                time_openspiel(players, WARMUP_SECONDS, args.seed)
        for repeat in range(args.repeats):
            for players, rules in rules_by_players.items():
                for engine in engines:
                    progress.update(
                        task,
                        description=f"repeat {repeat + 1}/{args.repeats}: "
                        f"{engine}, {players} players, {args.seconds:g} s",
                    )
                    if engine == "ours":
                        run = time_ours(rules, args.seconds, args.seed + repeat)
                    else:
                        run = time_openspiel(players, args.seconds, args.seed + repeat)
                    runs[engine, players].append(run)
                    progress.advance(task)

    headers = ["players", "engine", "games/s", "decisions/s", "decisions/game"]
    rows = []
    ratios = {}
    for players in rules_by_players:
        ours = pick(runs["ours", players], args.stat)
        rows.append(row(players, f"ours ({args.rules})", ours))
        if with_openspiel:
            theirs = pick(runs["openspiel", players], args.stat)
            ratios[players] = ours.games_per_second / theirs.games_per_second
            rows.append(row(players, "OpenSpiel go_fish", theirs))
            rows.append(
                [
                    str(players),
                    "ratio ours / OpenSpiel",
                    f"{ratios[players]:.2f}x",
                    f"{ours.decisions_per_second / theirs.decisions_per_second:.2f}x",
                    "",
                ]
            )

    title = (
        f"Random full games, {args.stat} of {args.repeats} x {args.seconds:g} s, "
        f"Python {platform.python_version()}"
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
    if TARGET_PLAYERS in ratios and args.rules == "table":
        ratio = ratios[TARGET_PLAYERS]
        verdict = "[green]met" if ratio >= TARGET_RATIO else "[red]NOT met"
        console.print(
            f"target: ours >= {TARGET_RATIO}x OpenSpiel's games/s at {TARGET_PLAYERS} players: "
            f"{ratio:.2f}x, {verdict}"
        )


if __name__ == "__main__":
    main()
