"""Play a saved agent against the scripted CPUs and print its win-rate table.

    gofish-evaluate runs/NAME/model.zip --cpus random,easy,normal,hard --deals 200
    gofish-evaluate runs/NAME/module       # an RLlib module exported by gofish-rllib-train

For each CPU level the agent sits at a table with P - 1 copies of that CPU, over duplicate
deals in the project's harness (``gofish_env.evaluation``): each deal is played P times,
the agent taking every seat in turn (so it holds every hand of the deal once and the luck
of the deal cancels), the same deals for every level. The agent plays its most likely
legal action. The win rate counts a shared win as 1/k; its 95% interval is computed over
deal-groups. "Beats X" means the interval lies above the fair share 1/P.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from gofish_env.agent_files import AgentFileError
from gofish_env.cli import (
    HelpFormatter,
    check_count,
    check_cpu_levels,
    check_output,
    check_seed,
    output_path,
    parse_list,
    progress_bar,
    report_console,
    rules_or_error,
    run_command,
)
from gofish_env.cpus import CPU_LEVELS
from gofish_env.evaluation import Entrant, Measurement, play_deals, summarize
from gofish_env.evaluation.kept import interrupted_message, play_kept, run_until_interrupted
from gofish_env.players import load_agent
from gofish_env.rules import Rules, is_integer

DEFAULT_CPUS = ("random", "easy", "normal", "hard")


@dataclass
class LevelResult:
    """The agent's results at tables of one CPU level."""

    cpu: str
    games: int
    win_rate: float
    win_rate_ci: tuple[float, float] | None
    mean_catches: float
    fair_share: float

    @property
    def beats(self) -> bool:
        """The whole 95% interval lies above the fair share."""
        return self.win_rate_ci is not None and bool(self.win_rate_ci[0] > self.fair_share)


def evaluate(
    agent: Any,
    cpus: Sequence[str] = DEFAULT_CPUS,
    rules: Rules | None = None,
    deals: int = 100,
    seed: int = 0,
    progress: bool = False,
    replays: str | Path | None = None,
    keep: str | Path | None = None,
    say: Callable[[str], None] = lambda message: None,
) -> list[LevelResult]:
    """The agent's results against each CPU level (see the module docstring). ``agent`` is
    any player spec: a loaded model, ``"model:PATH.zip"``, a CPU level, ... ``replays``: a
    folder where every game is saved as a replay file, in a subfolder per CPU level.
    ``keep``: a folder where the games against each level are kept as they are played
    (``LEVEL.jsonl``), and gone on from (``gofish_env.evaluation.kept``); ``say`` is told
    what was found there."""
    rules = Rules() if rules is None else rules
    if not is_integer(deals) or deals < 1:
        raise ValueError(f"deals: got {deals!r}; allowed: an integer >= 1")
    deals = int(deals)
    if isinstance(cpus, str) or len(cpus) < 1:
        raise ValueError(
            f"cpus: got {cpus!r}; allowed: a sequence of at least one CPU level "
            f"({', '.join(CPU_LEVELS)})"
        )
    for cpu in cpus:
        if cpu not in CPU_LEVELS:
            raise ValueError(f"cpus: unknown CPU level {cpu!r}; allowed: {', '.join(CPU_LEVELS)}")
    lineup = (0,) + (1,) * (rules.players - 1)
    results = []
    games = deals * rules.players
    with progress_bar(progress, len(cpus) * games, "evaluating", transient=True) as advance:
        for level, cpu in enumerate(cpus):
            entrants = [Entrant("agent", agent), Entrant(cpu, cpu)]
            measurement = Measurement(
                entrants,
                rules,
                seed,
                [lineup],
                deterministic=True,
                replays=None if replays is None else Path(replays) / cpu,
            )

            def on_games(done: int, before: int = level * games) -> None:
                advance(before + done)

            if keep is None:
                records = play_deals(measurement, deals, on_games=on_games)
            else:
                kept = Path(keep) / f"{cpu}.jsonl"
                records = play_kept(measurement, deals, kept, on_games=on_games, say=say)
            stats = summarize(records, entrants, rules, seed, bootstrap=0).standings[0]
            results.append(
                LevelResult(
                    cpu=cpu,
                    games=stats.seats,
                    win_rate=stats.win_rate,
                    win_rate_ci=stats.win_rate_ci,
                    mean_catches=stats.mean_catches,
                    fair_share=1.0 / rules.players,
                )
            )
    return results


def results_table(results: Sequence[LevelResult], title: str = "Agent vs CPUs") -> Table:
    """The results as a rich table. The title (a model's path, a run's name) and the cells
    are plain text, not rich markup: a ``[`` in a path is shown as typed. A result with no
    interval (one deal) shows ``-`` for it."""
    table = Table(title=Text(title))
    for column in ("CPU level", "games", "win rate", "95% CI", "fair", "beats?", "catches"):
        table.add_column(column, justify="right")
    for result in results:
        ci = result.win_rate_ci
        table.add_row(
            Text(result.cpu),
            str(result.games),
            f"{result.win_rate:.3f}",
            Text("-" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"),
            f"{result.fair_share:.3f}",
            "yes" if result.beats else "no",
            f"{result.mean_catches:.2f}",
        )
    return table


def results_json(results: Sequence[LevelResult]) -> list[dict]:
    return [{**asdict(result), "beats": result.beats} for result in results]


def main(argv: list[str] | None = None) -> list[LevelResult]:
    parser = argparse.ArgumentParser(
        prog="gofish-evaluate",
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "model",
        help="path of a saved MaskablePPO model (.zip) or of an RLlib module exported by "
        "gofish-rllib-train (runs/NAME/module), used as typed; it must have been trained for "
        "the table of --players and --rules",
    )
    parser.add_argument(
        "--cpus", default=",".join(DEFAULT_CPUS), help="CPU levels to face, comma separated"
    )
    parser.add_argument("--players", type=int, default=4, help="seats at each table, 2..6")
    parser.add_argument("--rules", default="table", help=f"preset: {', '.join(Rules.PRESETS)}")
    parser.add_argument("--deals", type=int, default=200, help="duplicate deals per CPU level")
    parser.add_argument("--seed", type=int, default=12345, help="seed of the deals and CPUs")
    parser.add_argument(
        "--json",
        type=output_path,
        default=None,
        help="also write the results to this JSON file, replaced if it exists (default: no file)",
    )
    parser.add_argument(
        "--replays",
        type=output_path,
        default=None,
        help="folder to save every game in as a replay file, a subfolder per CPU level "
        "(default: none); gofish-replay FILE makes a page of one",
    )
    parser.add_argument(
        "--keep",
        type=output_path,
        default=None,
        help="folder to keep the games in as they are played (LEVEL.jsonl): the same command "
        "stopped midway goes on from them (default: none kept)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    # Ctrl-C, and SIGTERM alike (exit status 143), stops the command at any point with one
    # line: what was kept and how to go on.
    return run_until_interrupted(
        lambda stage: _checked_run(parser, args, stage), lambda: interrupted_message(args.keep)
    )


def _checked_run(
    parser: argparse.ArgumentParser, args: argparse.Namespace, stage: list
) -> list[LevelResult]:
    """``main``'s work once its arguments are read; ``stage[0]`` says how far it got."""
    # Every argument, and the model file, is checked before the first game.
    rules = rules_or_error(parser, args.rules, args.players)
    cpus = parse_list(parser, "--cpus", args.cpus)
    check_cpu_levels(parser, "--cpus", cpus)
    check_count(parser, "--deals", args.deals)
    check_seed(parser, args.seed)
    if args.json is not None:
        check_output(parser, "--json", args.json)
    if args.replays is not None:
        check_output(parser, "--replays", args.replays, directory=True)
    if args.keep is not None:
        check_output(parser, "--keep", args.keep, directory=True)
    try:  # the model is read here to refuse a bad file before any game
        load_agent(args.model, rules, deterministic=True)
    except AgentFileError as error:
        parser.error(str(error))

    stage[0] = "playing"
    results = evaluate(
        f"model:{args.model}",
        cpus,
        rules,
        args.deals,
        args.seed,
        not args.no_progress,
        args.replays,
        args.keep,
        say=lambda message: print(message, file=sys.stderr),
    )
    # The file first: an output closed early (| head -1) loses lines, not results.
    if args.json is not None:
        replaced = args.json.exists()
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results_json(results), indent=2))
    report_console().print(results_table(results, f"{args.model} ({rules.describe()})"))
    if args.json is not None:
        print(f"{'Replaced' if replaced else 'Wrote'} {args.json}")
    if args.replays is not None:
        print(f"Saved the replay of every game in {args.replays}/CPU-LEVEL/")
    return results


def cli() -> None:
    """The ``gofish-evaluate`` command."""
    run_command(main)


if __name__ == "__main__":
    cli()
