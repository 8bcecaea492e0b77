"""Measure ``master`` against ``expert`` over duplicate deals, in parts that are kept.

    python -m gofish_baselines.master_strength --players 2 --deals 2000 --seed 7 \\
        --workers 1 --chunk 50 --out runs/master/p2-s4096-ltable-m1.0-a1-h8.0.jsonl

``--simulations``, ``--candidates``, ``--margin``, ``--pool-limit``, ``--rollouts``,
``--others-rollouts``, ``--assume-sure-hits`` and ``--most-held`` set ``MasterCPU``'s.
Their defaults: the rollouts a search plays, ``table``: 4096 at two players and 1024
otherwise (kept in the run's settings as the number); the asks each search compares; how
many standard errors an override needs; search only when the pool holds at most that many
cards (``none``: at every decision; ``table``: 12 at two players, 16 at three and four and
8 otherwise); the compiled level that plays the rollouts (``--others-rollouts`` names
another for the seats other than ``master``'s); the sampler's model of how the others
play.

Name a run's file ``p{players}-s{simulations}-l{pool limit}-m{margin}.jsonl`` for
``--table`` (``-ltable`` for the default's pool limits by table), with ``-r{level}``
added when the rollouts are not ``hard``'s only (``-rtable`` for the default's at three
and four players, ``-rexpert`` at five and six), ``-o{level}`` when the other seats'
rollouts have a level of their own, ``-c{candidates}`` when they are not 6,
and ``-a1-h{most held}`` when the sampler models the others' play (the default now; a
file without them was run with the plain sampler, as before the model; a file named
``p{players}-s{simulations}`` alone is read as searching at every decision with a margin
of 2.5, the settings of the first runs).

The ladder's measurement (``baselines/ladder.py``: one ``master`` against ``players - 1``
``expert`` CPUs, every deal replayed with ``master`` in each seat, the same harness and
seeds as ``gofish-ladder``), played ``--chunk`` deals at a time. Each part's games are
appended to ``--out`` (one JSON line per game) as soon as it ends, and the win share
with its 95% interval is printed; run the same command again to go on from the last part
kept (a deal's games depend on its index only, so the result is the same as one run).
Ctrl-C keeps every finished part. A write stopped midway (a kill, a lost machine) can
leave a cut last line and a last deal without all its games: going on drops them, says
so, and plays those deals again; ``--summary``, ``--compare`` and ``--table`` leave them
out. The settings are kept beside the file (``FILE.settings.json`` for ``FILE.jsonl``),
and a run that goes on with other settings is refused before it plays (a file from
before they were kept is taken as played with the settings given).
``--summary`` prints the result of a file without playing (with the table, seed and budget
its settings name, where they are kept); a missing file, or one with no whole deal, is
refused.
``--compare FILE`` (with ``--summary``, or after a run) pairs the file's deals with another
run's, deal by deal (the same deals and seeds give the same games wherever the two
``master``s choose alike), and prints both shares over the deals they share and the paired
difference with its 95% half-width. Only runs of the same table and seed pair: a file whose
settings name other players or another seed, or whose deal ``d`` was dealt from another
``deal_seed``, is refused before anything is played.
``--table OUT.png FILE...`` prints the markdown table of several files (named as above;
each row says where the run searched and with what margin) and draws their win shares
against the budget. A file named otherwise is read by the settings kept beside it (its
row then names every setting); one with neither is refused.

The flags' words (``table``, ``none``, ``same`` and the levels) are lowercase, as every
level and preset name of the command line: ``TABLE`` is refused.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from gofish_env.cli import (
    ROLLOUTS_BY_TABLE,
    HelpFormatter,
    add_one_search_flags,
    check_count,
    check_output,
    check_seed,
    output_path,
    progress_bar,
    read_one_search_flags,
)
from gofish_env.evaluation import Measurement, make_entrants, play_deals, summarize
from gofish_env.evaluation.harness import GameRecord, decision_milliseconds
from gofish_env.evaluation.kept import game_line, read_games, read_settings, settings_path
from gofish_env.evaluation.stats import derive_seed
from gofish_env.master import (
    BY_TABLE,
    DEFAULT_ASSUME_SURE_HITS,
    DEFAULT_CANDIDATES,
    DEFAULT_MARGIN,
    DEFAULT_MOST_HELD,
    DEFAULT_OTHERS_ROLLOUTS,
    DEFAULT_POOL_LIMIT,
    DEFAULT_ROLLOUTS,
    MasterCPU,
    default_simulations,
)
from gofish_env.rules import Rules

# MasterCPU's settings as the command line names them (kept beside a run's file).
SEARCH_SETTINGS = (
    "simulations",
    "candidates",
    "margin",
    "pool_limit",
    "rollouts",
    "assume_sure_hits",
    "most_held",
    "others_rollouts",
)


def entrants(
    players: int,
    simulations: int,
    margin: float = DEFAULT_MARGIN,
    pool_limit: int | str | None = DEFAULT_POOL_LIMIT,
    rollouts: str | None = DEFAULT_ROLLOUTS,
    assume_sure_hits: bool = DEFAULT_ASSUME_SURE_HITS,
    most_held: float = DEFAULT_MOST_HELD,
    candidates: int = DEFAULT_CANDIDATES,
    others_rollouts: str | None = DEFAULT_OTHERS_ROLLOUTS,
):
    master = MasterCPU(
        0,
        simulations=simulations,
        candidates=candidates,
        margin=margin,
        pool_limit=pool_limit,
        rollouts=rollouts,
        assume_sure_hits=assume_sure_hits,
        most_held=most_held,
        others_rollouts=others_rollouts,
    )
    return make_entrants({"master": master, "expert": "expert"}, Rules(players=players))


def read_run(path: Path) -> tuple[list[GameRecord], int, str]:
    """``read_games``: the games of ``path``'s whole deals, the file's length that holds
    them, and what a write stopped midway left out; a file damaged before its last line
    ends the command with a message."""
    try:
        return read_games(path)
    except ValueError as error:
        sys.exit(str(error))


def read_records(path: Path) -> list[GameRecord]:
    """The games of ``path``'s whole deals (what was left out is said on stderr)."""
    records, _, left_out = read_run(path)
    if left_out:
        print(f"{path}: {left_out} not counted (a write stopped midway)", file=sys.stderr)
    return records


def deal_shares(records, entrant: int = 0) -> dict[int, float]:
    """Each deal's mean share of the win of ``entrant`` over its seatings (a shared win
    counts 1/k to each of k winners): the unit of the measurement."""
    shares: dict[int, list[float]] = {}
    for record in records:
        seat = list(record.seats).index(entrant)
        winners = record.winners
        shares.setdefault(record.deal, []).append(1 / len(winners) if seat in winners else 0.0)
    return {deal: float(np.mean(values)) for deal, values in shares.items()}


def mean_and_interval(values) -> str:
    """``mean +/- half-width`` of a 95% normal interval."""
    values = np.asarray(values, float)
    half = 1.96 * values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
    return f"{values.mean():.4f} +/- {half:.4f}"


def compare(records: list[GameRecord], other: list[GameRecord]) -> dict | None:
    """Two runs over the deals they share: each one's share and the paired difference
    (``records`` minus ``other``); None if they share no deal."""
    mine, theirs = deal_shares(records), deal_shares(other)
    deals = sorted(set(mine) & set(theirs))
    if not deals:
        return None
    return {
        "deals": len(deals),
        "share": float(np.mean([mine[deal] for deal in deals])),
        "other": float(np.mean([theirs[deal] for deal in deals])),
        "paired": mean_and_interval([mine[deal] - theirs[deal] for deal in deals]),
    }


def run_identity(path: Path) -> dict | None:
    """The table size and seed that the settings kept beside the run ``path`` name (this
    script's, or the ``play_kept`` settings of ``benchmarks/master_oracle.py``), or None
    where none are kept."""
    kept = read_settings(settings_path(path))
    if not isinstance(kept, dict):
        return None
    rules = kept.get("rules")
    players = kept.get("players", rules.get("players") if isinstance(rules, dict) else None)
    if players is None or kept.get("seed") is None:
        return None
    return {"players": players, "seed": kept["seed"]}


def pairing_problem(
    other_path: Path,
    other: list[GameRecord],
    players: int,
    seed: int | None,
    records: list[GameRecord] = (),
) -> str | None:
    """Why the games ``other`` of the run kept in ``other_path`` cannot be paired deal by
    deal with this run's (``players`` seats, the measurement's ``seed``, None where it is
    not known, and its games ``records``), or None when they can. Deal ``d`` of two runs is
    the same deal only at the same table with the same seed: its ``deal_seed`` tells."""
    kept = run_identity(other_path)
    if kept is not None and kept["players"] != players:
        return (
            f"{other_path} was played at {kept['players']} players (its settings), "
            f"this run at {players}"
        )
    if kept is not None and seed is not None and kept["seed"] != seed:
        return (
            f"{other_path} was played with seed {kept['seed']} (its settings), "
            f"this run with seed {seed}"
        )
    mine = {record.deal: record.deal_seed for record in records}
    for record in other:
        if len(record.seats) != players:
            return (
                f"{other_path}: deal {record.deal} was played at {len(record.seats)} players, "
                f"this run at {players}"
            )
        expected = mine.get(record.deal)
        if expected is None and seed is not None:
            expected = derive_seed(seed, record.deal)
        if expected is not None and record.deal_seed != expected:
            return (
                f"{other_path}: deal {record.deal} was dealt from deal_seed "
                f"{record.deal_seed}, this run's from {expected}: not the same deal"
            )
    return None


def check_pairing(
    parser: argparse.ArgumentParser,
    other_path: Path,
    players: int,
    seed: int | None,
    records: list[GameRecord] = (),
) -> list[GameRecord]:
    """The games of ``other_path`` (``--compare``), or a usage error when they cannot be
    paired with this run's (``pairing_problem``)."""
    other = read_records(other_path)
    problem = pairing_problem(other_path, other, players, seed, records)
    if problem is not None:
        parser.error(f"--compare: {problem}; only runs of the same players and seed pair")
    return other


def json_line(result: dict) -> str:
    """``result`` as a JSON line, a number that is not finite (no decision timed) as null:
    JSON has no NaN."""
    return json.dumps(
        {
            name: None if isinstance(value, float) and not np.isfinite(value) else value
            for name, value in result.items()
        }
    )


def report(records: list[GameRecord], players: int, simulations: int, seed: int) -> dict:
    rules = Rules(players=players)
    stats = summarize(records, entrants(players, simulations), rules, seed, bootstrap=0)
    master = stats.standings[0]
    low, high = master.win_rate_ci or (0.0, 1.0)
    ms = decision_milliseconds(records, 2)
    return {
        "players": players,
        "simulations": simulations,
        "deals": len({record.deal for record in records}),
        "share": master.win_rate,  # full precision: rounded where shown
        "low": low,
        "high": high,
        "fair": 1 / players,
        "ms_master": round(ms[0], 2),
        "ms_expert": round(ms[1], 2),
    }


MS_AT_FOUR = {16: 5, 64: 10, 192: 22, 512: 54}  # benchmarks/master_speed.py, busy machine


def name_parts(path: Path) -> dict[str, str] | None:
    """The settings a run's file name gives (``p{players}-s{simulations}``, then optionally
    ``l{pool limit}``, ``m{margin}``, ``r{rollouts}``, ``o{the other seats' rollouts}``,
    ``c{candidates}``, ``a1`` (sure hits assumed), ``h{most held}``), or None for a name
    that does not begin so."""
    parts = {part[0]: part[1:] for part in path.stem.split("-") if part}
    try:
        int(parts["p"]), int(parts["s"])
        float(parts.get("h", 0))
    except (KeyError, ValueError):
        return None
    return parts


def named_search(parts: dict[str, str]) -> str:
    """Where and how a run searched, as its file name says (``name_parts``)."""
    if "l" not in parts:
        search = ["every decision"]
    elif parts["l"] == BY_TABLE:
        search = ["pool by table"]
    else:
        search = [f"pool <= {parts['l']}"]
    if "m" in parts or "l" not in parts:  # p{players}-s{simulations} alone: margin 2.5
        search.append(f"margin {parts.get('m', '2.5')}")
    if parts.get("r") == BY_TABLE:
        search.append("rollouts by table")
    elif "r" in parts:
        search.append(f"{parts['r']} rollouts")
    if "o" in parts:
        search.append(f"the other seats' rollouts {parts['o']}")
    if "c" in parts:
        search.append(f"{parts['c']} candidates")
    if parts.get("a") == "1":
        search.append("sure hits assumed")
    if float(parts.get("h", 0)):
        search.append(f"most held {parts['h']}")
    return ", ".join(search)


def kept_search(kept: dict) -> str:
    """Where and how a run searched, as the settings kept beside it say: every setting."""
    limit = kept.get("pool_limit", BY_TABLE)
    if limit is None:
        search = ["every decision"]
    elif limit == BY_TABLE:
        search = ["pool by table"]
    else:
        search = [f"pool <= {limit}"]
    search.append(f"margin {kept.get('margin', DEFAULT_MARGIN)}")
    rollouts = kept.get("rollouts") or BY_TABLE  # null: by table, as such files were kept
    search.append("rollouts by table" if rollouts == BY_TABLE else f"{rollouts} rollouts")
    if kept.get("others_rollouts"):
        search.append(f"the other seats' rollouts {kept['others_rollouts']}")
    search.append(f"{kept.get('candidates', DEFAULT_CANDIDATES)} candidates")
    if kept.get("assume_sure_hits"):
        search.append("sure hits assumed")
    if kept.get("most_held"):
        search.append(f"most held {kept['most_held']}")
    return ", ".join(search)


def table_row(path: Path) -> dict:
    """A run's result for ``--table``, with where it searched: its players and budget from
    the settings kept beside it, or else from its name; a ValueError says why a file
    cannot be read so."""
    if not path.is_file():
        raise ValueError(f"no such file: {path}")
    records = read_records(path)
    if not records:
        raise ValueError(f"{path} holds no whole deal")
    parts = name_parts(path)
    kept = read_settings(settings_path(path))
    usable = isinstance(kept, dict) and "players" in kept
    if not (usable and isinstance(kept.get("simulations"), int)):  # this script's settings
        kept = None
    if kept is None and parts is None:
        raise ValueError(
            f"{path}: its players and budget are unknown: no {settings_path(path).name} "
            "beside it, and its name is not p{players}-s{simulations}[-...].jsonl"
        )
    if kept is not None:
        players, simulations = kept["players"], kept["simulations"]
        if parts is not None and (int(parts["p"]), int(parts["s"])) != (players, simulations):
            raise ValueError(
                f"{path}: its name says {parts['p']} players and {parts['s']} simulations, "
                f"its settings {players} and {simulations}"
            )
    else:
        players, simulations = int(parts["p"]), int(parts["s"])
    result = report(records, players, simulations, 1)
    # A file named p{players}-s{simulations} alone: the first runs' settings.
    result["first_runs"] = parts is not None and "l" not in parts and "m" not in parts
    result["search"] = named_search(parts) if parts is not None else kept_search(kept)
    return result


def table(paths: list[Path], chart: Path) -> str:
    """The markdown table of the files' results, and their chart; a ValueError says which
    file cannot be read (``table_row``)."""
    results = [table_row(path) for path in paths]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results.sort(key=lambda r: (r["players"], r["simulations"], r["search"]))
    lines = [
        "| players | simulations (ms a decision at 4 players) | deals (games) "
        "| master's win share | 95% CI | fair |",
        "|---|---|---|---|---|---|",
    ]
    figure, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for r in results:
        # The milliseconds were measured with the first runs' settings only.
        ms = MS_AT_FOUR.get(r["simulations"], "?") if r["first_runs"] else "?"
        budget = f"{r['simulations']} ({ms}), {r['search']}"
        lines.append(
            f"| {r['players']} | {budget} | {r['deals']} "
            f"({r['deals'] * r['players']}) | {r['share']:.3f} | [{r['low']:.3f}, "
            f"{r['high']:.3f}] | {r['fair']:.3f} |"
        )
        ax = axes[0 if r["players"] == 2 else 1]
        ax.errorbar(
            r["simulations"],
            r["share"],
            yerr=[[r["share"] - r["low"]], [r["high"] - r["share"]]],
            fmt="o" if r["first_runs"] else "s",
            color="C0" if r["first_runs"] else "C1",
            capsize=4,
        )
    for ax, players, target in ((axes[0], 2, 0.55), (axes[1], 4, 0.29)):
        ax.axhline(1 / players, color="grey", linestyle="--", label="fair share (= expert)")
        ax.axhline(target, color="C3", linestyle=":", label="the issue's target")
        ax.set_xscale("log")
        budgets = sorted({r["simulations"] for r in results})
        ax.set_xticks(budgets, [str(budget) for budget in budgets])
        ax.minorticks_off()
        ax.set_xlabel("simulations per decision")
        ax.set_ylabel("master's win share")
        ax.set_title(f"master vs {players - 1} expert{'s' if players > 2 else ''}")
        ax.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(chart, dpi=100)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", type=int, default=2, help="the table's seats, 2..6")
    parser.add_argument(
        "--deals", type=int, default=2000, help="duplicate deals, each played from every seat"
    )
    parser.add_argument(
        "--seed", type=int, default=1, help="the measurement's seed (which deals are played)"
    )
    add_one_search_flags(parser)
    parser.add_argument(
        "--assume-sure-hits",
        action=argparse.BooleanOptionalAction,
        default=DEFAULT_ASSUME_SURE_HITS,
        help="sample worlds where the others took every sure hit they held",
    )
    parser.add_argument(
        "--most-held",
        type=float,
        default=DEFAULT_MOST_HELD,
        help="weight of worlds where the others asked for the rank they held most of",
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="processes that play the deals (1: this one)"
    )
    parser.add_argument(
        "--chunk", type=int, default=40, help="deals a part: each part is kept as it ends"
    )
    parser.add_argument(
        "--out", type=output_path, help="the results file (JSON lines) to write, or to go on with"
    )
    parser.add_argument(
        "--summary", action="store_true", help="print the result of --out without playing"
    )
    parser.add_argument(
        "--compare",
        type=Path,
        metavar="FILE",
        help="another run's file: pair its deals with this run's and print the difference",
    )
    parser.add_argument(
        "--table",
        nargs="+",
        type=Path,
        metavar=("CHART", "FILE"),
        help="print the markdown table of FILEs and draw their shares against the budget",
    )
    args = parser.parse_args(argv)
    check_seed(parser, args.seed)
    if args.table:
        if len(args.table) < 2:
            parser.error("--table: give the chart's path and at least one results file")
        try:
            print(table(args.table[1:], args.table[0]))
        except ValueError as error:
            parser.error(f"--table: {error}")
        return
    if args.out is None:
        parser.error("--out: required (the results file to write or go on with)")
    if args.compare is not None and not args.compare.is_file():
        parser.error(f"--compare: no such file: {args.compare}")
    for flag in ("--deals", "--workers", "--chunk"):
        check_count(parser, flag, getattr(args, flag[2:]))
    if not 2 <= args.players <= 6:
        parser.error(f"--players: got {args.players}; allowed: 2 to 6")
    by_table = read_one_search_flags(parser, args, args.players)
    if args.most_held is not None and not args.most_held >= 0:
        parser.error(f"--most-held: got {args.most_held}; allowed: a number >= 0")
    search = {name: getattr(args, name) for name in SEARCH_SETTINGS}
    try:
        lineup_entrants = entrants(args.players, **search)
    except ValueError as error:
        parser.error(f"--{error}")
    if args.summary:
        if not args.out.is_file():
            parser.error(f"--out: no such file: {args.out} (--summary reads it)")
        records = read_records(args.out)
        if not records:
            parser.error(f"--out: {args.out} holds no whole deal to sum up")
        kept = settings_path(args.out)
        seed = None  # not known for a file kept without its settings: the deals' seeds tell
        if kept.exists():  # the file's own table, seed and budget, whatever the flags say
            played = json.loads(kept.read_text())
            args.players, args.seed = played["players"], played["seed"]
            args.simulations = played["simulations"]
            seed = args.seed
        else:
            args.players = len(records[0].seats)
            if by_table:
                args.simulations = default_simulations(args.players)
        other = None
        if args.compare is not None:
            other = check_pairing(parser, args.compare, args.players, seed, records)
        print(json_line(report(records, args.players, args.simulations, args.seed)))
        print_comparison(records, args.compare, other)
        return
    # The results and the settings beside them: refused before any deal, not after.
    check_output(parser, "--out", args.out)
    check_output(parser, "--out", settings_path(args.out))
    records, whole_size, left_out = read_run(args.out)
    settings = {"players": args.players, "seed": args.seed, **search}
    kept = settings_path(args.out)
    if records and kept.exists():
        before = json.loads(kept.read_text())
        if before.get("rollouts") is None:  # files kept before "table" was written out
            before["rollouts"] = ROLLOUTS_BY_TABLE
        changed = [
            f"{name} {before.get(name)!r} -> {settings[name]!r}"
            for name in settings
            if before.get(name) != settings[name]
        ]
        if changed:
            sys.exit(
                f"{args.out}: played with other settings ({'; '.join(changed)}, {kept}); "
                f"give the same ones to go on, or start a new file"
            )
    seatings = Counter(record.deal for record in records)
    done = len(seatings)
    if records and (
        sorted(seatings) != list(range(done)) or set(seatings.values()) != {args.players}
    ):
        sys.exit(
            f"{args.out}: its deals are not 0..{done - 1} with {args.players} games each; "
            "start a new file"
        )
    other = None
    if args.compare is not None:  # refused before any deal, not after
        other = check_pairing(parser, args.compare, args.players, args.seed, records)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(json.dumps(settings) + "\n")
    if left_out:
        os.truncate(args.out, whole_size)
        print(
            f"{args.out}: {left_out} dropped (a write stopped midway); played again",
            file=sys.stderr,
        )
    rules = Rules(players=args.players)
    lineup = (0,) + (1,) * (args.players - 1)
    measurement = Measurement(lineup_entrants, rules, args.seed, [lineup])
    start = time.perf_counter()
    try:
        with progress_bar(True, args.deals * args.players, "master vs expert games") as advance:
            advance(done * args.players)
            while done < args.deals:
                end = min(done + args.chunk, args.deals)
                part = play_deals(
                    measurement,
                    end,
                    args.workers,
                    lambda n, before=done: advance((before * args.players) + n),
                    first=done,
                )
                lines = "".join(map(game_line, part))
                with args.out.open("a") as file:
                    file.write(lines)  # one call: Ctrl-C cannot keep part of a part
                records += part
                done = end
                result = report(records, args.players, args.simulations, args.seed)
                result["seconds"] = round(time.perf_counter() - start, 1)
                print(json_line(result), flush=True)
    except KeyboardInterrupt:
        sys.exit(f"interrupted: {done} deals kept in {args.out}; run the same command to go on")
    print_comparison(records, args.compare, other)


def print_comparison(
    records: list[GameRecord], path: Path | None, other: list[GameRecord] | None = None
) -> None:
    """The pairing of ``records`` with the run ``path`` (its games ``other``, read here if
    not given), checked beforehand by ``check_pairing``."""
    if path is None:
        return
    paired = compare(records, read_records(path) if other is None else other)
    if paired is None:
        sys.exit(f"--compare: {path} shares no deal with this run")
    print(json_line({"compare": str(path), **paired}))


if __name__ == "__main__":
    main()
