"""What the hidden cards cost ``master``: its search with the true hands in place of worlds.

python benchmarks/master_oracle.py --players 2 --deals 600 \\
    --compare runs/master/p2-s4096-ltable-m1.0-a1-h8.0.jsonl

An upper bound for the world sampler, not a CPU anyone plays: ``OracleMaster`` is
``master`` (the same candidates, budget, margin, window and rollouts) whose every sampled
world is the true one, every hand as it is, with only the pool's order shuffled (no
inference can learn it). The gap between its win share and ``master``'s is what better
inference about the hidden hands could give at most. It reads the game itself, so it is
never registered as a level; the measurement is ``baselines/master_strength.py``'s (one of
it against ``players - 1`` ``expert``s, duplicate deals, seed 1), so ``--compare FILE``
pairs its deals with a ``master_strength`` run's of the same players and seed (another is
refused).

``--simulations``, ``--candidates``, ``--margin``, ``--pool-limit``, ``--rollouts`` and
``--others-rollouts`` are ``MasterCPU``'s, as in ``master_strength`` (today's defaults:
4096 simulations at two players and 1024 otherwise, searching from 12 cards at two players
and 16 at three and four); give a run's own to compare with it. ``--out`` keeps them in its
settings (the budget as the number). docs/baselines.md gives the figures measured so far,
each with the settings it was measured with.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from gofish_baselines.master_strength import (
    check_pairing,
    deal_shares,
    mean_and_interval,
    print_comparison,
)
from gofish_env.cli import (
    HelpFormatter,
    add_one_search_flags,
    check_count,
    check_output,
    output_path,
    progress_bar,
    read_one_search_flags,
)
from gofish_env.evaluation import Measurement, make_entrants
from gofish_env.evaluation.harness import Table
from gofish_env.evaluation.kept import interrupted_message, play_kept
from gofish_env.master import (
    MasterCPU,
    world_values,
)
from gofish_env.rules import Rules
from gofish_env.worlds import true_worlds


class OracleMaster(MasterCPU):
    """``master`` rolling out the true hands (``env.game``) with the pool shuffled."""

    env = None  # the harness table's env, whose ``game`` is the game being played

    def rollouts(self, view, keys):
        self.searches_made += 1
        count = self.worlds_per_candidate(view.rules.players, len(keys))
        seed = self.rng.getrandbits(63)
        worlds = true_worlds(self.env.game, view, count, seed)
        return world_values(view, worlds, keys, self.rollout_levels(view), seed)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/master_oracle.py",
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", type=int, default=2, help="seats, 2..6")
    parser.add_argument("--deals", type=int, default=600, help="duplicate deals")
    parser.add_argument("--seed", type=int, default=1, help="the measurement's seed")
    add_one_search_flags(parser, searcher="the oracle")
    parser.add_argument(
        "--compare",
        type=Path,
        help="a master_strength run of the same players and seed to pair deals with",
    )
    parser.add_argument(
        "--out",
        type=output_path,
        help="a JSON-lines file the games are kept in as they are played: the same command "
        "stopped midway goes on from it",
    )
    args = parser.parse_args(argv)
    check_count(parser, "--deals", args.deals)
    if args.out is not None:
        check_output(parser, "--out", args.out)
    if not 2 <= args.players <= 6:
        parser.error(f"--players: got {args.players}; allowed: an integer from 2 to 6")
    if args.compare is not None and not args.compare.is_file():
        parser.error(f"--compare: no such file: {args.compare}")
    read_one_search_flags(parser, args, args.players)
    # The search's settings, kept in --out's settings: the oracle is an object, which the
    # measurement's own settings know by its description only.
    search = {
        "simulations": args.simulations,
        "candidates": args.candidates,
        "margin": args.margin,
        "pool_limit": args.pool_limit,
        "rollouts": args.rollouts,
        "others_rollouts": args.others_rollouts,
    }
    try:
        oracle = OracleMaster(0, **search)
    except ValueError as error:  # MasterCPU's own checks name the setting
        parser.error(f"--{error}")
    other = None
    if args.compare is not None:  # refused before any deal, not after
        other = check_pairing(parser, args.compare, args.players, args.seed)
    rules = Rules(players=args.players)
    entrants = make_entrants({"oracle": oracle, "expert": "expert"}, rules)
    lineup = (0,) + (1,) * (args.players - 1)
    measurement = Measurement(entrants, rules, args.seed, [lineup])
    table = Table(measurement)
    oracle.env = table.env

    def play(measurement, deals, workers=1, on_games=None, first=0, on_deal=None):
        """``play_deals`` at the oracle's own table (it reads that table's game)."""
        records = []
        for deal in range(first, deals):
            deal_records = table.play_deal(deal)
            if on_deal is not None:
                on_deal(deal_records)
            records += deal_records
            if on_games is not None:
                on_games(len(records))
        return records

    try:
        with progress_bar(True, args.deals * args.players, "oracle games") as advance:
            if args.out is None:
                records = play(measurement, args.deals, on_games=advance)
            else:
                records = play_kept(
                    measurement,
                    args.deals,
                    args.out,
                    on_games=advance,
                    say=lambda message: print(message, file=sys.stderr),
                    play=play,
                    more_settings=search,
                )
    except KeyboardInterrupt:
        sys.exit(interrupted_message(args.out, "--out FILE"))
    shares = deal_shares(records)
    print(f"oracle master vs expert, {args.players} players, {len(shares)} deals: ", end="")
    print(mean_and_interval(list(shares.values())), f"(load {os.getloadavg()[0]:.1f})")
    made = "searches" if args.out is None else "searches in the deals played by this run"
    print(f"{made} {oracle.searches_made}, overrides of expert {oracle.overrides_made}")
    print("search: " + ", ".join(f"{name} {value}" for name, value in search.items()))
    print_comparison(records, args.compare, other)


if __name__ == "__main__":
    main()
