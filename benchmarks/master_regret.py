"""How close ``master``'s choices come to the best ask of its own model, by simulation budget.

python benchmarks/master_regret.py --players 2 --games 60 --simulations 1024,4096,8192 \\
    --out runs/regret/p2.jsonl

A budget is judged by what it picks, not by a game's result: game results need thousands
of deals to tell budgets apart, while a pick can be valued at once. Positions: seat 0's
decisions where ``master`` searches (``MasterCPU.search_candidates``), in seeded games
where ``expert`` plays every seat. At each:

1. a reference search values every candidate ask with ``--reference`` worlds a candidate
   (the same sampler, rollouts and value as ``master``'s: its model's truth, up to the
   reference's own noise);
2. ``master`` with each budget of ``--simulations`` searches ``--repeats`` times with fresh
   seeds (its own ``rollouts`` and ``pick``, with ``--margin``), and each pick is valued
   by the reference.

The table gives, per budget, the reference value its picks gain over ``expert``'s choice,
averaged over the searching decisions (x 1e-3; a rollout's value is its share of the win
plus ``CATCH_WEIGHT`` times its catch margin), and paired position by position with the
budget of the row above, with 95% intervals. The last row is the reference's own best: a
ceiling for the one-ply search over these candidates, biased upward by the reference's
noise.

Each position's seeds come from its game and its place in the game, so a run stopped by
Ctrl-C goes on where it stopped with the same command and ``--out``, and two runs over
other ``--first-game`` ranges can be read together: ``--summary FILE...``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from gofish_env import Game, Rules
from gofish_env.cli import (
    check_count,
    parse_list,
    parse_players_list,
    progress_bar,
)
from gofish_env.cpus import group_asks, make_cpu
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.master import DEFAULT_MARGIN, SIMULATIONS_TABLE, MasterCPU, default_simulations

REFERENCE = 16384  # worlds a candidate in the reference search


def positions(players: int, first: int, games: int):
    """(game, decision, view) at each of seat 0's decisions in expert games ``first`` ..
    ``first + games - 1``; a view reads the live public log, so each is used at once."""
    for seed in range(first, first + games):
        game = Game(Rules(players=players), seed=seed)
        tracker = KnowledgeTracker(game)
        cpus = [make_cpu("expert", seed * 10 + seat) for seat in range(players)]
        decision = 0
        while not game.is_over:
            seat = game.current_player
            view = tracker.view(seat)
            if seat == 0:
                yield seed, decision, view
                decision += 1
            game.ask(*cpus[seat].choose(view))


def seed_of(*parts: int) -> int:
    """A seed for one search, from the position and what it is for."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1, np.uint64)[0] >> 1)


def measure(view, game: int, decision: int, args) -> dict | None:
    """The row of one position, or None where ``master`` does not search there."""
    chooser = MasterCPU(seed_of(game, decision), margin=args.margin)
    groups = group_asks(view)
    if len(groups) == 1:
        return None
    scores = chooser.expert.scores(view, groups)
    choice = chooser.expert.choose_by(view, groups, scores)
    keys = chooser.search_candidates(view, groups, scores, choice)
    if keys is None:
        return None
    reference = MasterCPU(seed_of(game, decision, 0), simulations=args.reference * len(keys))
    values = reference.values(view, keys)
    picks, spent = {}, {}
    for budget in args.simulations:
        picks[budget], spent[budget] = [], []
        for repeat in range(args.repeats):
            cpu = MasterCPU(
                seed_of(game, decision, budget, repeat + 1),
                simulations=budget,
                margin=args.margin,
            )
            start = time.perf_counter()
            picks[budget].append(cpu.pick(cpu.rollouts(view, keys)))
            spent[budget].append(round((time.perf_counter() - start) * 1e3, 2))
    return {
        "game": game,
        "decision": decision,
        "pool": view.pool_size,
        "candidates": [list(key) for key in keys],
        "reference": [round(float(value), 6) for value in values],
        "picks": {str(budget): chosen for budget, chosen in picks.items()},
        "ms": {str(budget): times for budget, times in spent.items()},
    }


def interval(values: np.ndarray) -> str:
    """Mean and 95% half-width, x 1e-3."""
    half = 1.96 * values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0
    return f"{values.mean() * 1e3:+.2f} +/- {half * 1e3:.2f}"


def summary(rows: list[dict], title: str) -> Table:
    """The table of the module docstring over ``rows``."""
    budgets = list(rows[0]["picks"])
    gains = {}
    for budget in budgets:
        gains[budget] = np.array(
            [
                np.mean([row["reference"][p] - row["reference"][0] for p in row["picks"][budget]])
                for row in rows
            ]
        )
    table = Table(title=title)
    for column in (
        "simulations",
        "searching decisions",
        "gain over expert's choice (x 1e-3)",
        "paired with the row above (x 1e-3)",
        "overrides of expert",
        "ms a search",
    ):
        table.add_column(column, justify="right")
    for above, budget in zip([None, *budgets[:-1]], budgets, strict=True):
        picks = [p for row in rows for p in row["picks"][budget]]
        table.add_row(
            budget,
            str(len(rows)),
            interval(gains[budget]),
            "" if above is None else interval(gains[budget] - gains[above]),
            f"{np.mean([p != 0 for p in picks]):.0%}",
            f"{np.mean([t for row in rows for t in row['ms'][budget]]):.1f}",
        )
    best = np.array([max(row["reference"]) - row["reference"][0] for row in rows])
    table.add_row("the reference's best", str(len(rows)), interval(best), "", "", "")
    return table


def read_rows(paths: list[Path]) -> list[dict]:
    return [json.loads(line) for path in paths for line in path.read_text().splitlines()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/master_regret.py",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--players", default="2", help="the table's seat count, 2..6")
    parser.add_argument("--games", type=int, default=60, help="expert games to take positions from")
    parser.add_argument("--first-game", type=int, default=0, help="the first game's seed")
    parser.add_argument(
        "--simulations",
        default="1024,4096,8192",
        help=f"comma-separated budgets, each paired with the one before (master's: "
        f"{SIMULATIONS_TABLE})",
    )
    parser.add_argument(
        "--reference", type=int, default=REFERENCE, help="worlds a candidate in the reference"
    )
    parser.add_argument("--repeats", type=int, default=2, help="searches a budget and position")
    parser.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_MARGIN,
        help="standard errors an override must gain over expert's choice",
    )
    parser.add_argument("--out", type=Path, help="a JSON-lines file: a row a position, kept")
    parser.add_argument(
        "--summary", nargs="+", type=Path, metavar="FILE", help="only print the table of FILEs"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    console = Console(width=120)
    if args.summary:
        missing = [str(path) for path in args.summary if not path.is_file()]
        if missing:
            parser.error(f"--summary: no such file: {', '.join(missing)}")
        rows = read_rows(args.summary)
        if not rows:
            parser.error("--summary: the files hold no position")
        console.print(summary(rows, f"master's picks valued by a reference: {len(rows)} positions"))
        return
    check_count(parser, "--games", args.games)
    check_count(parser, "--first-game", args.first_game, low=0)
    check_count(parser, "--reference", args.reference, low=2)
    check_count(parser, "--repeats", args.repeats)
    if not args.margin >= 0:
        parser.error(f"--margin: got {args.margin}; allowed: a number >= 0")
    players = parse_players_list(parser, "--players", args.players)
    if len(players) != 1:
        parser.error(f"--players: got {args.players!r}; allowed: one seat count, 2..6")
    budgets = []
    for item in parse_list(parser, "--simulations", args.simulations):
        if not item.isdigit() or int(item) < 2:
            parser.error(f"--simulations: got {item!r}; allowed: integers >= 2")
        budgets.append(int(item))
    args.simulations = budgets
    settings = {
        "players": players[0],
        "simulations": ",".join(map(str, budgets)),
        "reference": args.reference,
        "repeats": args.repeats,
        "margin": args.margin,
    }
    rows = []
    done = set()
    if args.out is not None and args.out.is_file():
        rows = read_rows([args.out])
        done = {(row["game"], row["decision"]) for row in rows}
        kept = rows[0]["settings"] if rows else settings
        changed = [
            f"{key} {kept[key]} -> {settings[key]}"
            for key in settings
            if kept[key] != settings[key]
        ]
        if changed:
            parser.error(
                f"--out: {args.out} was measured with other settings ({', '.join(changed)}): "
                "name another file"
            )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
    games = range(args.first_game, args.first_game + args.games)
    start = time.perf_counter()
    try:
        with progress_bar(not args.no_progress, args.games, "games") as advance:
            played = 0
            for game, decision, view in positions(players[0], games.start, len(games)):
                if decision == 0 and game > games.start:
                    played += 1
                    advance(played)
                if (game, decision) in done:
                    continue
                row = measure(view, game, decision, args)
                if row is None:
                    continue
                row["settings"] = settings
                rows.append(row)
                if args.out is not None:
                    with args.out.open("a") as file:
                        file.write(json.dumps(row) + "\n")
            advance(args.games)
    except KeyboardInterrupt:
        console.print(
            f"stopped: {len(rows)} positions kept"
            + (f" in {args.out}; the same command goes on" if args.out else "")
        )
        raise SystemExit(130) from None
    if not rows:
        console.print("no searching decision in these games")
        return
    title = (
        f"master's picks valued by a reference of {args.reference} worlds a candidate: "
        f"{players[0]} players, games {games.start}-{games.stop - 1}, {len(rows)} positions, "
        f"{time.perf_counter() - start:.0f} s (master's default here: "
        f"{default_simulations(players[0])})"
    )
    console.print(summary(rows, title))


if __name__ == "__main__":
    main()
