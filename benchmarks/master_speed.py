"""The ``master`` CPU's time per decision at several simulation budgets.

python benchmarks/master_speed.py --players 2,4 --simulations 64,256,1024,4096 --games 4

``--simulations`` lists the budgets, each an integer >= 1 or ``table`` (``master``'s own
at each table: its row says the number). ``--margin``, ``--pool-limit`` and ``--rollouts``
are ``MasterCPU``'s (the same for every budget), as in ``baselines/master_strength.py``.

Positions: every decision of seat 0 in ``--games`` seeded games where ``expert`` plays
every seat (the same positions for every budget). For each budget, ``MasterCPU.choose`` is
timed at every position; the table gives the mean over all decisions (sure hits and single
choices cost almost nothing), the mean and 95th percentile over the decisions that search,
the share that search, and how often a search overrides expert's choice. The budgets are
interleaved position by position, so load on the machine hits them alike. The first call
compiles the vector engine; it is not timed. Ctrl-C stops the timing and prints the
table of the games timed to the end.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Iterable

import numpy as np
from rich.console import Console
from rich.table import Table

from gofish_env import Rules
from gofish_env.cli import (
    HelpFormatter,
    add_search_flags,
    check_count,
    interrupted_note,
    parse_list,
    parse_players_list,
    parse_simulations,
    progress_bar,
    read_search_flags,
)
from gofish_env.cpus import make_cpu
from gofish_env.evaluation.positions import played_decisions
from gofish_env.master import (
    BY_TABLE,
    OTHER_SIMULATIONS,
    SIMULATIONS,
    SIMULATIONS_TABLE,
    MasterCPU,
    default_simulations,
)

# Two smaller budgets, then master's own at every table.
BUDGETS = sorted({64, 256, OTHER_SIMULATIONS, *SIMULATIONS.values()})


def decisions(players: int, seeds: Iterable[int]):
    """Seat 0's views at each of its decisions in the expert games ``seeds``, one at a time
    (a view reads the live public log, so each is used before the game goes on)."""
    for seed in seeds:
        cpus = [make_cpu("expert", seed * 10 + seat) for seat in range(players)]
        for _, view, _ in played_decisions(Rules(players=players), seed, cpus):
            if view.seat == 0:
                yield view


def parse_budgets(parser: argparse.ArgumentParser, text: str) -> list[int | str]:
    """``--simulations``: a comma list of budgets, each an integer >= 1 or ``table``, none
    named twice."""
    budgets = []
    for item in parse_list(parser, "--simulations", text):
        budget = parse_simulations(parser, "--simulations", item)
        if budget in budgets:
            parser.error(f"--simulations: {item!r} is named twice")
        budgets.append(budget)
    return budgets


def budget_label(budget: int | str, players: int) -> str:
    """A budget as its row names it: the number, or ``table (N)``."""
    if budget == BY_TABLE:
        return f"{BY_TABLE} ({default_simulations(players)})"
    return str(budget)


def time_game(
    cpus: dict[str, MasterCPU], players: int, seed: int
) -> dict[str, list[tuple[float, bool, bool]]]:
    """Each budget's (ms, searched, overrode expert) at every decision of seat 0 in expert
    game ``seed``, the budgets interleaved position by position."""
    timed = {n: [] for n in cpus}
    for view in decisions(players, [seed]):
        for n, cpu in cpus.items():
            searches, overrides = cpu.searches_made, cpu.overrides_made
            start = time.perf_counter()
            cpu.choose(view)
            spent = (time.perf_counter() - start) * 1e3
            timed[n].append((spent, cpu.searches_made > searches, cpu.overrides_made > overrides))
    return timed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/master_speed.py",
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", default="2,4", help="comma-separated seat counts, 2..6")
    parser.add_argument(
        "--simulations",
        default=",".join(str(n) for n in BUDGETS),
        help=f"comma-separated budgets to time, each an integer >= 1 or {BY_TABLE}: master's "
        f"({SIMULATIONS_TABLE})",
    )
    parser.add_argument("--games", type=int, default=4, help="expert games a table")
    add_search_flags(parser)
    args = parser.parse_args(argv)
    check_count(parser, "--games", args.games)
    read_search_flags(parser, args)
    args.players = parse_players_list(parser, "--players", args.players)
    args.simulations = parse_budgets(parser, args.simulations)
    console = Console(width=120)
    pool_limit = "by table" if args.pool_limit == BY_TABLE else args.pool_limit
    rollouts = "by table" if args.rollouts == BY_TABLE else args.rollouts
    setting = f"margin {args.margin}, pool limit {pool_limit}, rollouts {rollouts}"
    load = os.getloadavg()[0]
    table = Table(title=f"master ({setting}): ms per decision (load at start {load:.2f})")
    for column in (
        "players",
        "simulations",
        "all decisions",
        "searching: mean",
        "p95",
        "searching",
        "overrides of expert",
    ):
        table.add_column(column, justify="right")
    # players -> budget's label -> (ms, searched, overrode) of the games timed to the end
    timed: dict[int, dict[str, list[tuple[float, bool, bool]]]] = {}
    games_timed, games = 0, len(args.players) * args.games
    interrupted = False
    try:
        with progress_bar(True, games, "expert games timed", transient=True) as advance:
            for players in args.players:
                cpus = {
                    budget_label(n, players): MasterCPU(
                        seed=1,
                        simulations=n,
                        margin=args.margin,
                        pool_limit=args.pool_limit,
                        rollouts=args.rollouts,
                    )
                    for n in args.simulations
                }
                warm = next(v for v in decisions(players, [0]) if len(v.legal_asks) > 1)
                # The first search compiles the vector engine's kernels: not timed.
                MasterCPU(seed=1, rollouts=args.rollouts).values(warm, [warm.legal_asks[0]] * 2)
                for seed in range(args.games):
                    for n, decisions_timed in time_game(cpus, players, seed).items():
                        timed.setdefault(players, {}).setdefault(n, []).extend(decisions_timed)
                    games_timed += 1
                    advance(games_timed)
    except KeyboardInterrupt:
        interrupted = True
    for players, by_budget in timed.items():
        for n, decisions_timed in by_budget.items():
            spent = np.array([ms for ms, _, _ in decisions_timed])
            mask = np.array([searched for _, searched, _ in decisions_timed])
            overrides = sum(overrode for _, _, overrode in decisions_timed)
            table.add_row(
                str(players),
                n,
                f"{spent.mean():.1f}",
                f"{spent[mask].mean():.1f}" if mask.any() else "-",
                f"{np.percentile(spent[mask], 95):.1f}" if mask.any() else "-",
                f"{mask.mean():.0%} of {mask.size}",
                f"{overrides / max(mask.sum(), 1):.0%} of searches",
            )
    if timed:
        console.print(table)
        console.print(f"load at end {os.getloadavg()[0]:.2f}")
    if interrupted:
        console.print(interrupted_note(games_timed, games, "games"))
        raise SystemExit(130)


if __name__ == "__main__":
    main()
