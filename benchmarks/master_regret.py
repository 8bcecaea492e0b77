"""How close ``master``'s choices come to the best ask of its own model, or of the truth.

python benchmarks/master_regret.py --players 2 --games 60 --simulations 1024,4096,8192 \\
    --out runs/regret/p2.jsonl
python benchmarks/master_regret.py --players 2 --games 60 --truth --reference-rollouts expert \\
    --simulations 4096,4096/rollouts=expert,4096/most_held=2 --out runs/regret/p2-truth.jsonl

A searcher is judged by what it picks, not by a game's result: game results need thousands
of deals to tell two searchers apart, while a pick can be valued at once. Positions: seat
0's decisions where ``master`` searches (``MasterCPU.search_candidates``), in seeded games
where ``expert`` plays every seat. At each:

1. a reference values every candidate ask with ``--reference`` worlds a candidate, played
   out by ``--reference-rollouts`` (master's own level by default). By default the worlds
   are master's, drawn by the same sampler: its model's truth, up to the reference's own
   noise. With ``--truth`` every world is the true one with the pool reshuffled (the
   benchmark reads the hidden hands): the value of each ask as the game really stands.
2. each searcher of ``--simulations`` (a budget, optionally with ``/NAME=VALUE`` settings of
   ``MasterCPU``: ``margin``, ``most_held``, ``assume_sure_hits``, ``rollouts``,
   ``others_rollouts``) searches
   ``--repeats`` times with fresh seeds (its own sampler, ``rollouts`` and ``pick``), and
   each pick is valued by the reference. Searchers of one budget share their seeds.

The table gives, per searcher, the reference value its picks gain over ``expert``'s choice,
averaged over the searching decisions (x 1e-3; a rollout's value is its share of the win
plus ``CATCH_WEIGHT`` times its catch margin), and paired position by position with the
searcher of the row above and with the first, with 95% intervals (over games: a game's
decisions share its deal and line of play). The last row is the
reference's own best: a ceiling for the one-ply search over these candidates (with
``--truth``, for a search that could see the hands), biased upward by the reference's
noise.

Each position's seeds come from its game and its place in the game, so a run stopped by
Ctrl-C goes on where it stopped with the same command and ``--out`` (a cut last line,
which a write stopped midway by a kill leaves, is dropped and measured again), and two runs
over other ``--first-game`` ranges can be read together: ``--summary FILE...`` (runs
measured with other settings are refused; a position that more than one file holds, or one
file twice, is counted once, its first row, and a note says how many were left out).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from gofish_env import Rules
from gofish_env.cli import (
    HelpFormatter,
    add_search_flags,
    check_count,
    check_output,
    output_path,
    parse_list,
    parse_players_list,
    progress_bar,
    read_search_flags,
)
from gofish_env.cpus import group_asks, make_cpu
from gofish_env.evaluation.batched import COMPILED
from gofish_env.evaluation.positions import played_decisions
from gofish_env.evaluation.run_files import JsonLines, read_json_lines
from gofish_env.evaluation.stats import ratio_interval
from gofish_env.master import (
    BY_TABLE,
    POOL_LIMIT_TABLE,
    ROLLOUTS_TABLE,
    SIMULATIONS_TABLE,
    MasterCPU,
    default_simulations,
    world_values,
)
from gofish_env.worlds import true_worlds

REFERENCE = 16384  # worlds a candidate in the reference search
# The settings of runs made before these options existed, which their rows do not name.
FIRST_SETTINGS = {"truth": False, "reference_rollouts": BY_TABLE, "pool_limit": BY_TABLE}


def positions(players: int, first: int, games: int):
    """(game, decision, view, live game) at each of seat 0's decisions in expert games
    ``first`` .. ``first + games - 1``; a view reads the live public log, so each is used
    at once (the live game is for ``--truth``, which reads the hidden hands)."""
    for seed in range(first, first + games):
        cpus = [make_cpu("expert", seed * 10 + seat) for seat in range(players)]
        decision = 0
        for game, view, _ in played_decisions(Rules(players=players), seed, cpus):
            if view.seat == 0:
                yield seed, decision, view, game
                decision += 1


def seed_of(*parts: int) -> int:
    """A seed for one search, from the position and what it is for."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1, np.uint64)[0] >> 1)


def parse_searcher(text: str) -> tuple[int, dict]:
    """``BUDGET[/NAME=VALUE...]``: a simulation budget and the ``MasterCPU`` settings it
    changes (``SEARCHER_SETTINGS``), e.g. ``4096/rollouts=expert/margin=0``; a ValueError
    names what is wrong."""
    budget, *changes = text.split("/")
    if not budget.isdigit() or int(budget) < 2:
        raise ValueError(f"got {budget!r}; allowed: integers >= 2")
    settings = {}
    for change in changes:
        name, _, value = change.partition("=")
        if name not in SEARCHER_SETTINGS or not value:
            raise ValueError(
                f"got {change!r}; allowed after a budget: /NAME=VALUE with NAME one of "
                f"{', '.join(SEARCHER_SETTINGS)}"
            )
        parse, allowed = SEARCHER_SETTINGS[name]
        try:
            settings[name] = parse(value)
        except ValueError:
            raise ValueError(f"{name}: got {value!r}; allowed: {allowed}") from None
    MasterCPU(0, simulations=int(budget), **settings)  # its own checks name a bad value
    return int(budget), settings


def _switch(value: str) -> bool:
    if value not in ("0", "1", "true", "false"):
        raise ValueError(value)
    return value in ("1", "true")


# What a searcher may set of MasterCPU: name -> (parse from text, what is allowed).
SEARCHER_SETTINGS = {
    "margin": (float, "a number >= 0"),
    "most_held": (float, "a number >= 0"),
    "assume_sure_hits": (_switch, "0, 1, true, false"),
    "rollouts": (str, "a compiled level, or table"),
    "others_rollouts": (str, "a compiled level"),
}


def reference_values(view, live, keys, game: int, decision: int, args) -> np.ndarray:
    """The reference's mean value of each candidate: a search with ``--reference`` worlds a
    candidate, drawn by master's sampler or (``--truth``) the true hands with the pool
    reshuffled, played out by ``--reference-rollouts``."""
    seed = seed_of(game, decision, 0)
    simulations = args.reference * len(keys)
    cpu = MasterCPU(seed, simulations=simulations, rollouts=args.reference_rollouts)
    if not args.truth:
        return cpu.values(view, keys)
    worlds = true_worlds(live, view, args.reference, seed)
    return world_values(view, worlds, keys, cpu.rollout_levels(view), seed).mean(axis=0)


def measure(view, game: int, decision: int, args, live=None) -> dict | None:
    """The row of one position, or None where ``master`` does not search there. ``live`` is
    the game itself, read only by a ``--truth`` reference."""
    chooser = MasterCPU(seed_of(game, decision), margin=args.margin, pool_limit=args.pool_limit)
    groups = group_asks(view)
    if len(groups) == 1:
        return None
    scores = chooser.expert.scores(view, groups)
    choice = chooser.expert.choose_by(view, groups, scores)
    keys = chooser.search_candidates(view, groups, scores, choice)
    if keys is None:
        return None
    values = reference_values(view, live, keys, game, decision, args)
    picks, spent = {}, {}
    for label, (budget, settings) in args.searchers.items():
        picks[label], spent[label] = [], []
        for repeat in range(args.repeats):
            cpu = MasterCPU(
                seed_of(game, decision, budget, repeat + 1),
                simulations=budget,
                **{"margin": args.margin, **settings},
            )
            start = time.perf_counter()
            picks[label].append(cpu.pick(cpu.rollouts(view, keys)))
            spent[label].append(round((time.perf_counter() - start) * 1e3, 2))
    return {
        "game": game,
        "decision": decision,
        "pool": view.pool_size,
        "candidates": [list(key) for key in keys],
        "reference": [round(float(value), 6) for value in values],
        "picks": picks,
        "ms": spent,
    }


def interval(values: np.ndarray, games: np.ndarray) -> str:
    """Mean and 95% half-width, x 1e-3. The decisions of one game are not independent (one
    deal, one line of play): the error is the ratio estimator's over games."""
    _, game_of = np.unique(games, return_inverse=True)
    sums, counts = np.bincount(game_of, weights=values), np.bincount(game_of)
    mean, bounds = ratio_interval(sums, counts)
    half = 0.0 if bounds is None else (bounds[1] - bounds[0]) / 2
    return f"{mean * 1e3:+.2f} +/- {half * 1e3:.2f}"


def summary(rows: list[dict], title: str) -> Table:
    """The table of the module docstring over ``rows``."""
    searchers = list(rows[0]["picks"])
    gains = {}
    for searcher in searchers:
        gains[searcher] = np.array(
            [
                np.mean([row["reference"][p] - row["reference"][0] for p in row["picks"][searcher]])
                for row in rows
            ]
        )
    table = Table(title=title)
    table.add_column("searcher", justify="right", no_wrap=True)
    for column in (
        "decisions",
        "gain over expert's choice, x 1e-3",
        "paired with the row above",
        "paired with the first row",
        "overrides",
        "ms a search",
    ):
        table.add_column(column, justify="right")
    games = np.array([row["game"] for row in rows])
    first = searchers[0]
    for above, searcher in zip([None, *searchers[:-1]], searchers, strict=True):
        picks = [p for row in rows for p in row["picks"][searcher]]
        table.add_row(
            searcher,
            str(len(rows)),
            interval(gains[searcher], games),
            "" if above is None else interval(gains[searcher] - gains[above], games),
            "" if above is None else interval(gains[searcher] - gains[first], games),
            f"{np.mean([p != 0 for p in picks]):.0%}",
            f"{np.mean([t for row in rows for t in row['ms'][searcher]]):.1f}",
        )
    best = np.array([max(row["reference"]) - row["reference"][0] for row in rows])
    table.add_row("the reference's best", str(len(rows)), interval(best, games), "", "", "", "")
    return table


def parse_bands(parser: argparse.ArgumentParser, text: str | None) -> list[tuple[int, int]]:
    """``--pools``: bands ``LOW-HIGH`` of pool sizes, each LOW <= HIGH."""
    if text is None:
        return []
    bands = []
    for item in parse_list(parser, "--pools", text):
        low, _, high = item.partition("-")
        if not (low.isdigit() and high.isdigit() and int(low) <= int(high)):
            parser.error(f"--pools: got {item!r}; allowed: LOW-HIGH, whole numbers, LOW <= HIGH")
        bands.append((int(low), int(high)))
    return bands


def print_summaries(console: Console, rows: list[dict], title: str, bands) -> None:
    """The table of all ``rows``, then one for each band of pool sizes that holds any."""
    console.print(summary(rows, f"{title}: {len(rows)} positions"))
    for low, high in bands:
        band = [row for row in rows if low <= row["pool"] <= high]
        if band:
            console.print(summary(band, f"pool {low} to {high}: {len(band)} positions"))
        else:
            console.print(f"pool {low} to {high}: no position")


def settings_of(row: dict) -> dict:
    """The settings a row was measured with, those older rows do not name included."""
    return {**FIRST_SETTINGS, **row["settings"]}


def read_rows(parser: argparse.ArgumentParser, flag: str, path: Path) -> JsonLines:
    """``path``'s rows, without a cut last line (a write stopped midway); a line before it
    that is not JSON is refused."""
    try:
        return read_json_lines(path)
    except ValueError as error:
        parser.error(f"{flag}: {error}")


def say_cut(path: Path, lines: JsonLines, what_becomes_of_it: str) -> None:
    if lines.cut:
        print(f"{path}: a cut last line ({lines.cut} bytes) {what_becomes_of_it}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/master_regret.py",
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", default="2", help="the table's seat count, 2..6")
    parser.add_argument("--games", type=int, default=60, help="expert games to take positions from")
    parser.add_argument("--first-game", type=int, default=0, help="the first game's seed")
    parser.add_argument(
        "--simulations",
        default="1024,4096,8192",
        help=f"comma-separated searchers, each paired with the one before and the first: a "
        f"budget (master's: {SIMULATIONS_TABLE}), each optionally with /NAME=VALUE settings "
        f"of master ({', '.join(SEARCHER_SETTINGS)}), e.g. 4096/rollouts=expert",
    )
    parser.add_argument(
        "--reference", type=int, default=REFERENCE, help="worlds a candidate in the reference"
    )
    parser.add_argument(
        "--truth",
        action="store_true",
        help="the reference plays out the true hands, the pool reshuffled, instead of "
        "master's sampled worlds",
    )
    parser.add_argument(
        "--reference-rollouts",
        default=BY_TABLE,
        help=f"the compiled level that plays the reference's rollouts ({', '.join(COMPILED)}), "
        f"or {BY_TABLE}: master's ({ROLLOUTS_TABLE})",
    )
    parser.add_argument("--repeats", type=int, default=2, help="searches a searcher and position")
    add_search_flags(
        parser,
        pool_limit_help="take the positions where master searching from this many cards in "
        f"the pool would search (none: every decision; {BY_TABLE}: master's, {POOL_LIMIT_TABLE})",
        rollouts=False,
    )
    parser.add_argument("--out", type=output_path, help="a JSON-lines file: a row a position, kept")
    parser.add_argument(
        "--summary", nargs="+", type=Path, metavar="FILE", help="only print the table of FILEs"
    )
    parser.add_argument(
        "--pools",
        help="also a table for each band of pool sizes, e.g. 0-12,13-16,17-20 (the positions "
        "whose pool holds that many cards)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    console = Console(width=160)
    bands = parse_bands(parser, args.pools)
    if args.summary:
        missing = [str(path) for path in args.summary if not path.is_file()]
        if missing:
            parser.error(f"--summary: no such file: {', '.join(missing)}")
        rows = []
        measured = set()  # over every row read, those counted once included
        seen: dict[tuple[int, int], Path] = {}
        for path in args.summary:
            lines = read_rows(parser, "--summary", path)
            say_cut(path, lines, "not read (a write stopped midway)")
            measured |= {json.dumps(settings_of(row), sort_keys=True) for row in lines.rows}
            again: dict[Path, int] = {}
            for row in lines.rows:
                position = (row["game"], row["decision"])
                if position in seen:
                    again[seen[position]] = again.get(seen[position], 0) + 1
                    continue
                seen[position] = path
                rows.append(row)
            for first, count in again.items():
                print(
                    f"{path}: {count} position{'' if count == 1 else 's'} (game, decision) "
                    f"already read from {first}, counted once",
                    file=sys.stderr,
                )
        if not rows:
            parser.error("--summary: the files hold no position")
        if len(measured) > 1:
            parser.error(
                "--summary: the files were measured with other settings, which cannot be "
                f"read together: {' | '.join(sorted(measured))}"
            )
        print_summaries(console, rows, "master's picks valued by a reference", bands)
        return
    check_count(parser, "--games", args.games)
    check_count(parser, "--first-game", args.first_game, low=0)
    check_count(parser, "--reference", args.reference, low=2)
    check_count(parser, "--repeats", args.repeats)
    read_search_flags(parser, args)
    players = parse_players_list(parser, "--players", args.players)
    if len(players) != 1:
        parser.error(f"--players: got {args.players!r}; allowed: one seat count, 2..6")
    args.searchers = {}
    for item in parse_list(parser, "--simulations", args.simulations):
        if item in args.searchers:
            parser.error(f"--simulations: {item!r} is named twice")
        try:
            args.searchers[item] = parse_searcher(item)
        except ValueError as error:
            parser.error(f"--simulations: {error}")
    if args.reference_rollouts not in (BY_TABLE, *COMPILED):
        parser.error(
            f"--reference-rollouts: got {args.reference_rollouts!r}; allowed: "
            f"{', '.join(COMPILED)}, {BY_TABLE}"
        )
    settings = {
        "players": players[0],
        "simulations": ",".join(args.searchers),
        "reference": args.reference,
        "repeats": args.repeats,
        "margin": args.margin,
        "truth": args.truth,
        "reference_rollouts": args.reference_rollouts,
        "pool_limit": args.pool_limit,
    }
    rows = []
    done = set()
    if args.out is not None:
        check_output(parser, "--out", args.out)  # before any position is measured
    if args.out is not None and args.out.is_file():
        kept_lines = read_rows(parser, "--out", args.out)
        rows = kept_lines.rows
        done = {(row["game"], row["decision"]) for row in rows}
        kept = settings_of(rows[0]) if rows else settings
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
        if kept_lines.cut:
            os.truncate(args.out, kept_lines.size(len(rows)))
            say_cut(args.out, kept_lines, "dropped (a write stopped midway); measured again")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
    games = range(args.first_game, args.first_game + args.games)
    start = time.perf_counter()
    try:
        with progress_bar(not args.no_progress, args.games, "games") as advance:
            played = 0
            for game, decision, view, live in positions(players[0], games.start, len(games)):
                if decision == 0 and game > games.start:
                    played += 1
                    advance(played)
                if (game, decision) in done:
                    continue
                row = measure(view, game, decision, args, live)
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
    kind = "the true hands" if args.truth else "master's worlds"
    title = (
        f"master's picks valued by a reference of {args.reference} worlds a candidate "
        f"({kind}, {args.reference_rollouts} rollouts): "
        f"{players[0]} players, games {games.start}-{games.stop - 1}, "
        f"{time.perf_counter() - start:.0f} s (master's default here: "
        f"{default_simulations(players[0])})"
    )
    print_summaries(console, rows, title, bands)


if __name__ == "__main__":
    main()
