"""Tournaments between Go Fish players, with rotated seats and duplicate deals.

    gofish-tournament --players 4 --cpus easy,normal,hard,expert --games 400 \
        --rules table --seed 0 --workers 2 --out results/tournament

An entrant is any player spec ``gofish_env.players.make_player`` accepts: a CPU level
name, ``"model:PATH.zip"`` (a saved agent), a loaded model, a CPU object with
``choose(view)``, a ``SeatPlayer``, a callable ``(observation, action_mask) -> action``, or
(from Python) ``"mix:a,b"``, a member drawn each game. The games are played by the
project's one harness (``gofish_env.evaluation``): the schedule of line-ups and seatings,
duplicate deals, seeds that derive from (seed, deal, ...), and the standings with their
intervals and ratings are described there and in docs/tournament.md. ``games`` is rounded
up to whole deal-groups and line-up cycles.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gofish_baselines.tournament_results import TournamentResult
from gofish_env.aec_env import DEFAULT_MAX_ASKS
from gofish_env.cli import (
    HelpFormatter,
    check_count,
    check_output,
    check_seed,
    exit_interrupted,
    interrupts_raise,
    progress_bar,
    rules_or_error,
    run_command,
)
from gofish_env.cpus import CPU_LEVELS
from gofish_env.evaluation import (
    ENGINES,
    Measurement,
    deal_count,
    engine_used,
    make_entrants,
    make_lineups,
    play_deals,
    summarize,
)
from gofish_env.evaluation.entrants import default_name
from gofish_env.evaluation.harness import refuse_match_play, replay_path
from gofish_env.evaluation.kept import (
    BEFORE_THE_FIRST_GAME,
    forget_kept,
    play_kept,
    read_games,
)
from gofish_env.players import MIX_PREFIX
from gofish_env.rules import Rules, is_integer


def run_tournament(
    entrants: Mapping[str, Any] | Sequence[Any],
    players: int | None = None,
    games: int = 100,
    rules: str | Rules | None = None,
    seed: int = 0,
    workers: int = 1,
    max_asks: int = DEFAULT_MAX_ASKS,
    progress: bool | Callable[[int], None] = False,
    replays: str | Path | None = None,
    engine: str = "auto",
    keep: str | Path | None = None,
    say: Callable[[str], None] = lambda message: None,
) -> TournamentResult:
    """Play a tournament and return its games and statistics.

    ``entrants``: ``{name: spec}`` or a list of specs (see the module docstring). ``players``:
    seats at each table (default 4, or the ``Rules``' count). ``games``: at least this many
    games are played (rounded up to whole deal-groups and line-up cycles). ``rules``: a
    preset name or a ``Rules``. ``workers``: processes to play in (the result is the same for
    any count). ``max_asks``: asks after which a game is cut off and scored as it stands.
    ``progress``: show a progress bar on stderr, or a callable given the games played so far.
    ``replays``: a folder where every game is saved as a replay file (``gofish-replay``
    turns one into a page).
    ``engine``: ``"auto"`` plays in the vector engine when every entrant is a compiled CPU
    level (random .. expert) and no replays are asked for, else in the reference engine;
    ``"python"`` always in the reference engine; ``"vector"`` in the vector engine,
    refusing other entrants and replays. The compiled CPUs draw their random choices from
    other generators than the Python ones, so the two engines give different games (the
    same deals and seatings) for one seed.
    ``keep``: a file (JSON lines) the games are kept in as each deal ends; run again with
    the same settings, the tournament goes on from the deals kept there instead of playing
    them again (``gofish_env.evaluation.kept``); ``say`` is told what was found there.
    """
    rules = Rules.resolve(players, rules)
    refuse_match_play(rules)
    for name, value, low in (("games", games, 1), ("workers", workers, 1)):
        if not is_integer(value) or value < low:
            raise ValueError(f"{name}: got {value!r}; allowed: an integer >= {low}")
    if not is_integer(seed):
        raise ValueError(f"seed: got {seed!r}; allowed: an integer")
    games, workers, seed = int(games), int(workers), int(seed)  # NumPy's as Python's
    entrant_list = make_entrants(entrants, rules)
    lineups = make_lineups(len(entrant_list), rules.players)
    deals = deal_count(games, rules.players, len(lineups))
    measurement = Measurement(
        entrant_list, rules, seed, lineups, max_asks, replays=replays, engine=engine
    )
    with progress_bar(progress, deals * rules.players) as advance:
        if keep is None:
            records = play_deals(measurement, deals, workers, advance)
        else:
            records = play_kept(measurement, deals, keep, workers, advance, say)
    summary = summarize(records, entrant_list, rules, seed)
    return TournamentResult(
        entrant_list, rules, seed, deals, lineups, records, summary, engine_used(measurement)
    )


KEPT_GAMES = "played.jsonl"  # in --out: the games as they are played, to go on from


def _parse_entrants(text: str) -> dict[str, str] | list[str]:
    """``easy,hard,ppo=model:runs/x.zip`` -> specs (a dict when any is named). A spec given
    unnamed more than once is entered once for each, numbered as ``make_entrants`` numbers a
    list (``hard``, ``hard#2``, ...). Refused: an empty entry, ``NAME=SPEC`` without its
    name or spec, a name given twice, and a mix (``mix:a,b``: the commas would split it)."""
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise ValueError(f"got {text!r}; allowed: a comma-separated list with no empty entries")
    for item in items:
        spec = item.partition("=")[2].strip() if "=" in item else item
        if spec.startswith(MIX_PREFIX):
            raise ValueError(
                f"got {text!r}; a mix ({MIX_PREFIX}a,b) cannot be entered here, since the "
                "list splits on commas; allowed: CPU levels and model:PATH, each optionally "
                "NAME=SPEC (mixes are entered from Python: run_tournament)"
            )
    if not any("=" in item for item in items):
        return items
    pairs = []
    unnamed: dict[str, int] = {}
    for item in items:
        if "=" in item:
            name, _, spec = item.partition("=")
            if not (name.strip() and spec.strip()):
                raise ValueError(f"got {item!r}; allowed: NAME=SPEC with a name and a spec")
        else:
            spec = item
            base = default_name(item)
            unnamed[base] = unnamed.get(base, 0) + 1
            name = base if unnamed[base] == 1 else f"{base}#{unnamed[base]}"
        pairs.append((name.strip(), spec.strip()))
    named: dict[str, str] = {}
    for name, spec in pairs:
        if name in named:
            raise ValueError(
                f"the name {name!r} is given twice; allowed: a different name for each "
                "entrant (an entry without NAME= is named after its spec: hard, hard#2, ...)"
            )
        named[name] = spec
    return named


def main(argv: list[str] | None = None) -> TournamentResult:
    parser = argparse.ArgumentParser(
        prog="gofish-tournament",
        description="Play a tournament between CPUs and models with rotated seats and "
        "duplicate deals; print the standings and write JSON, CSV and a chart.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", type=int, default=4, help="seats at each table, 2..6")
    parser.add_argument(
        "--cpus",
        default=",".join(CPU_LEVELS),
        help="comma list of entrants: CPU levels and/or model:PATH (a saved agent: an SB3 "
        ".zip, or an RLlib module folder from gofish-rllib-train; it must have been trained "
        "for this table), each optionally NAME=SPEC",
    )
    parser.add_argument(
        "--games",
        type=int,
        default=200,
        help="at least this many games in all (rounded up to whole deals and line-up cycles)",
    )
    parser.add_argument("--rules", default="table", help=f"preset: {', '.join(Rules.PRESETS)}")
    parser.add_argument("--seed", type=int, default=0, help="seed of every deal and player")
    parser.add_argument("--workers", type=int, default=1, help="processes to play in")
    parser.add_argument(
        "--max-asks", type=int, default=DEFAULT_MAX_ASKS, help="cut a game off after this many"
    )
    parser.add_argument(
        "--out",
        default="results/tournament",
        help="folder for the result files ('' for none); files of the same names already "
        "there are replaced, and the command says so. The games are kept there as they are "
        "played (played.jsonl): the same command stopped midway goes on from them; games "
        "kept there with other settings are moved aside (played.DATE-TIME.jsonl) first",
    )
    parser.add_argument(
        "--replays",
        default=None,
        help="folder to save every game in as a replay file (deal000000-rotation0.json, ...; "
        "files of the same names are replaced, other files left, and counted in the last "
        "line); gofish-replay FILE makes a page of one",
    )
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="auto: the vector engine when every entrant is a compiled CPU level "
        "(random..expert) and no --replays, else Python; python: the reference engine always; "
        "vector: the vector engine (compiled levels only, no replays)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    keep = Path(args.out) / KEPT_GAMES if args.out else None
    # Ctrl-C, and SIGTERM alike (exit status 143), stops the command at any point with one
    # line: what was kept and how to go on.
    stage = ["checking"]
    try:
        with interrupts_raise():
            return _checked_run(parser, args, keep, stage)
    except KeyboardInterrupt as interrupt:
        exit_interrupted(_interrupted_message(stage[0], keep, args.out), interrupt)


def _checked_run(
    parser: argparse.ArgumentParser, args: argparse.Namespace, keep: Path | None, stage: list
) -> TournamentResult:
    """``main``'s work once its arguments are read; ``stage[0]`` says how far it got."""
    # Every argument is checked (and every model loaded) before the first game.
    rules = rules_or_error(parser, args.rules, args.players)
    if rules.match_target:
        parser.error("--rules: match play (match_target) is not supported; play single games")
    check_count(parser, "--games", args.games)
    check_count(parser, "--workers", args.workers)
    check_seed(parser, args.seed)
    check_count(parser, "--max-asks", args.max_asks)
    try:
        entrants = _parse_entrants(args.cpus)
        checked = make_entrants(entrants, rules)
    except ValueError as error:
        parser.error(f"--cpus: {error}")
    try:
        Measurement(checked, rules, args.seed, [], replays=args.replays, engine=args.engine)
    except ValueError as error:
        parser.error(f"--{error}")
    if args.out:
        check_output(parser, "--out", args.out, directory=True)
    if args.replays is not None:
        check_output(parser, "--replays", args.replays, directory=True)

    stage[0] = "playing"
    result = run_tournament(
        entrants,
        players=args.players,
        games=args.games,
        rules=rules,
        seed=args.seed,
        workers=args.workers,
        max_asks=args.max_asks,
        progress=not args.no_progress,
        replays=args.replays,
        engine=args.engine,
        keep=keep,
        say=lambda message: print(message, file=sys.stderr),
    )
    # The files first: an output closed early (| head -1) loses lines, not results.
    if args.out:
        had_results = (Path(args.out) / "results.json").exists()
        paths = result.write(args.out)
        # Kept to go on after a stop, not as a cache: a later run (of changed code, say)
        # plays its games afresh. results.json holds every game. Unless the file holds more
        # deals than these results (a stopped longer run, asked for fewer games now): those
        # stay, for that run to go on from.
        with keep.open("rb") as file:
            kept_games = sum(1 for _ in file)
        if kept_games > len(result.records):
            kept_deals = kept_games // rules.players
            print(
                f"{keep}: left as it is: it holds {kept_deals} deals, more than the "
                f"{result.deals} of these results (the longer run stopped before goes on from "
                "them with its own --games)",
                file=sys.stderr,
            )
        else:
            forget_kept(keep)
    stage[0] = "written"
    print(result.table())
    if args.out:
        verb = "Replaced the earlier results:" if had_results else "Wrote"
        print(f"\n{verb} " + ", ".join(str(path) for path in paths.values()))
    if args.replays is not None:
        older = _older_replays(result, args.replays)
        print(f"Saved {len(result.records)} replays in {args.replays}{older}")
    return result


def _older_replays(result: TournamentResult, folder: str | Path) -> str:
    """A note on the replay files in ``folder`` that this tournament did not write (an
    earlier run's, of more deals or more seats): they are left there, as the docs say."""
    written = {replay_path(folder, record.deal, record.rotation) for record in result.records}
    older = [path for path in Path(folder).glob("deal*-rotation*.json") if path not in written]
    if not older:
        return ""
    files = "file" if len(older) == 1 else "files"
    return f" (the folder also holds {len(older)} older replay {files}, not of this run)"


def _interrupted_message(stage: str, keep: Path | None, out: str) -> str:
    """What the command says when a signal stops it at ``stage`` (checking its arguments
    and loading models, playing, or done with its files)."""
    if stage == "checking":
        return BEFORE_THE_FIRST_GAME
    if stage == "written":
        return f"interrupted: the results are written in {out}"
    if keep is None:
        return "interrupted: nothing kept (--out '' keeps no games)"
    if not keep.exists():
        return "interrupted before the first game: nothing kept"
    deals = len({record.deal for record in read_games(keep)[0]})
    return f"interrupted: {deals} deals kept in {keep}; run the same command to go on"


def cli() -> None:
    """The ``gofish-tournament`` command."""
    run_command(main)


if __name__ == "__main__":
    cli()
