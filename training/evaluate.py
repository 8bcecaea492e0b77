"""Play a saved agent against the scripted CPUs and print its win-rate table.

    python -m training.evaluate runs/NAME/model.zip --cpus random,easy,normal,hard --deals 200

For each CPU level the agent sits at a table with P - 1 copies of that CPU. Duplicate deals:
each shuffled deal is played P times, the agent taking every seat in turn (so it holds every
hand of the deal once and the luck of the deal cancels). The win rate counts a shared win as
1/k; its 95% interval is computed over deal-groups (``baselines.tournament.ratio_interval``).
"Beats X" means the interval lies above the fair share 1/P.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from baselines.tournament import derive_seed, ratio_interval
from gofish_env.aec_env import DEFAULT_MAX_ASKS, raw_env
from gofish_env.agent_files import AgentFileError
from gofish_env.cli import check_count, check_cpu_levels, check_output, parse_list, rules_or_error
from gofish_env.game import Game
from gofish_env.opponents import ModelOpponent, Opponent, load_model, make_opponent
from gofish_env.rules import Rules

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


def agent_opponent(agent: Any, rules: Rules | None = None) -> Opponent:
    """The agent as a seat player: a model (played greedily) or any opponent spec. A saved
    model (a ``.zip`` path) is checked against ``rules`` when given (``AgentFileError``
    for a missing or corrupt file, or one trained for another table)."""
    if isinstance(agent, Path) or (isinstance(agent, str) and agent.endswith(".zip")):
        return ModelOpponent(load_model(agent, rules), deterministic=True)
    if hasattr(agent, "predict"):
        return ModelOpponent(agent, deterministic=True)
    return make_opponent(agent, rules)


def play_level(
    agent: Opponent,
    cpu: str,
    rules: Rules,
    deals: int,
    seed: int,
    on_game: Callable[[], None] | None = None,
) -> LevelResult:
    """The agent against P - 1 copies of ``cpu`` over ``deals`` duplicate deals."""
    players = rules.players
    env = raw_env(rules=rules, max_asks=DEFAULT_MAX_ASKS)
    cpus = [make_opponent(cpu, rules) for _ in range(players - 1)]
    wins = np.zeros(deals)
    catches = np.zeros(deals)
    for deal in range(deals):
        # The same deals for every level (the seed does not depend on the CPU).
        game = Game(rules, seed=derive_seed(seed, deal))
        for agent_seat in range(players):
            env.reset(options={"game": game})
            seats = {agent_seat: agent}
            for k, opponent in enumerate(cpus, start=1):
                opponent.reset(derive_seed(seed, deal, agent_seat, k))
                seats[(agent_seat + k) % players] = opponent
            while env.game.current_player is not None and env.game.num_asks < env.max_asks:
                seat = env.game.current_player
                env.step(seats[seat].act(env, seat))
            winners = env.game.winners
            if agent_seat in winners:
                wins[deal] += 1.0 / len(winners)
            catches[deal] += len(env.game.catches(agent_seat))
            if on_game is not None:
                on_game()
    counts = np.full(deals, players)
    win_rate, win_ci = ratio_interval(wins, counts, 0.0, 1.0)
    if win_ci is not None:
        win_ci = (float(win_ci[0]), float(win_ci[1]))
    return LevelResult(
        cpu=cpu,
        games=deals * players,
        win_rate=win_rate,
        win_rate_ci=win_ci,
        mean_catches=float(catches.sum() / counts.sum()),
        fair_share=1.0 / players,
    )


def evaluate(
    agent: Any,
    cpus: Sequence[str] = DEFAULT_CPUS,
    rules: Rules | None = None,
    deals: int = 100,
    seed: int = 0,
    progress: bool = False,
) -> list[LevelResult]:
    """The agent's results against each CPU level (see the module docstring)."""
    rules = Rules() if rules is None else rules
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise ValueError(f"deals: got {deals!r}; allowed: an integer >= 1")
    player = agent_opponent(agent, rules)
    results = []
    with Progress(disable=not progress, transient=True) as bar:
        task = bar.add_task("evaluating", total=len(cpus) * deals * rules.players)
        for cpu in cpus:
            bar.update(task, description=f"evaluating vs {cpu}")
            results.append(play_level(player, cpu, rules, deals, seed, lambda: bar.advance(task)))
    return results


def results_table(results: Sequence[LevelResult], title: str = "Agent vs CPUs") -> Table:
    table = Table(title=title)
    for column in ("CPU level", "games", "win rate", "95% CI", "fair", "beats?", "catches"):
        table.add_column(column, justify="right")
    for result in results:
        low, high = result.win_rate_ci or (float("nan"), float("nan"))
        table.add_row(
            result.cpu,
            str(result.games),
            f"{result.win_rate:.3f}",
            f"[{low:.3f}, {high:.3f}]",
            f"{result.fair_share:.3f}",
            "yes" if result.beats else "no",
            f"{result.mean_catches:.2f}",
        )
    return table


def results_json(results: Sequence[LevelResult]) -> list[dict]:
    return [{**asdict(result), "beats": result.beats} for result in results]


def main(argv: list[str] | None = None) -> list[LevelResult]:
    parser = argparse.ArgumentParser(
        prog="python -m training.evaluate",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "model",
        help="path of a saved MaskablePPO model (.zip), used as typed; it must have been "
        "trained for the table of --players and --rules",
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
        type=Path,
        default=None,
        help="also write the results to this JSON file, overwritten if it exists "
        "(default: %(default)s: no file)",
    )
    args = parser.parse_args(argv)

    # Every argument, and the model file, is checked before the first game.
    rules = rules_or_error(parser, args.rules, args.players)
    cpus = parse_list(parser, "--cpus", args.cpus)
    check_cpu_levels(parser, "--cpus", cpus)
    check_count(parser, "--deals", args.deals)
    if args.json is not None:
        check_output(parser, "--json", args.json)
    try:
        model = load_model(args.model, rules)
    except AgentFileError as error:
        parser.error(str(error))

    results = evaluate(model, cpus, rules, args.deals, args.seed, True)
    Console().print(results_table(results, f"{args.model} ({rules.describe()})"))
    if args.json is not None:
        replaced = args.json.exists()
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results_json(results), indent=2))
        print(f"{'Replaced' if replaced else 'Wrote'} {args.json}")
    return results


if __name__ == "__main__":
    main()
