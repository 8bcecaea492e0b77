"""The ``master`` CPU's time per decision at several simulation budgets.

python benchmarks/master_speed.py --players 2,4 --simulations 64,256,1024,4096 --games 4

``--margin``, ``--pool-limit`` and ``--rollouts`` are ``MasterCPU``'s (the same for every
budget), as in ``baselines/master_strength.py``.

Positions: every decision of seat 0 in ``--games`` seeded games where ``expert`` plays
every seat (the same positions for every budget). For each budget, ``MasterCPU.choose`` is
timed at every position; the table gives the mean over all decisions (sure hits and single
choices cost almost nothing), the mean and 95th percentile over the decisions that search,
the share that search, and how often a search overrides expert's choice. The budgets are
interleaved position by position, so load on the machine hits them alike. The first call
compiles the vector engine; it is not timed.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from gofish_env import Rules
from gofish_env.cli import (
    HelpFormatter,
    add_search_flags,
    check_count,
    parse_list,
    parse_players_list,
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
)

# Two smaller budgets, then master's own at every table.
BUDGETS = sorted({64, 256, OTHER_SIMULATIONS, *SIMULATIONS.values()})


def decisions(players: int, games: int):
    """Seat 0's views at each of its decisions in expert games, one at a time (a view reads
    the live public log, so each is used before the game goes on)."""
    for seed in range(games):
        cpus = [make_cpu("expert", seed * 10 + seat) for seat in range(players)]
        for _, view, _ in played_decisions(Rules(players=players), seed, cpus):
            if view.seat == 0:
                yield view


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
        help=f"comma-separated budgets to time (master's: {SIMULATIONS_TABLE})",
    )
    parser.add_argument("--games", type=int, default=4, help="expert games a table")
    add_search_flags(parser)
    args = parser.parse_args(argv)
    check_count(parser, "--games", args.games)
    read_search_flags(parser, args)
    args.players = parse_players_list(parser, "--players", args.players)
    args.simulations = [int(x) for x in parse_list(parser, "--simulations", args.simulations)]
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
    for players in args.players:
        cpus = {
            n: MasterCPU(
                seed=1,
                simulations=n,
                margin=args.margin,
                pool_limit=args.pool_limit,
                rollouts=args.rollouts,
            )
            for n in args.simulations
        }
        warm = next(v for v in decisions(players, 1) if len(v.legal_asks) > 1)
        # The first search compiles the vector engine's kernels: not timed.
        MasterCPU(seed=1, rollouts=args.rollouts).values(warm, [warm.legal_asks[0]] * 2)
        times = {n: [] for n in args.simulations}
        searched = {n: [] for n in args.simulations}
        for view in decisions(players, args.games):
            for n, cpu in cpus.items():
                before = cpu.searches_made
                start = time.perf_counter()
                cpu.choose(view)
                times[n].append((time.perf_counter() - start) * 1e3)
                searched[n].append(cpu.searches_made > before)
        for n in args.simulations:
            spent = np.array(times[n])
            mask = np.array(searched[n])
            table.add_row(
                str(players),
                str(n),
                f"{spent.mean():.1f}",
                f"{spent[mask].mean():.1f}" if mask.any() else "-",
                f"{np.percentile(spent[mask], 95):.1f}" if mask.any() else "-",
                f"{mask.mean():.0%} of {mask.size}",
                f"{cpus[n].overrides_made / max(cpus[n].searches_made, 1):.0%} of searches",
            )
    console.print(table)
    console.print(f"load at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
