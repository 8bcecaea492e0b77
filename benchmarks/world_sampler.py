"""World sampler speed (worlds/s) and its distance to the exact distribution.

python benchmarks/world_sampler.py --worlds 2000 --players 2,4

Speed: positions of seeded games played by ``hard`` CPUs, 10, 30 and 60 asks in; for
each the time to build a ``WorldSampler`` (read the log, find a first world, burn in) and
the rate of ``sample(n)`` (hands and pool now), best of ``--repeats``. Distribution: small
positions (most ranks already caught, a few random asks) enumerated exactly
(``gofish_env.world_enumeration``); the total variation distance of a sample of
``--exact-samples`` worlds beside what a perfect sampler shows (mean and 95th percentile),
and how far the exact worlds now are from uniform over them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gofish_env import Game, Rules
from gofish_env import world_enumeration as enumeration
from gofish_env.cli import check_count, parse_players_list
from gofish_env.cpus import make_cpu
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.worlds import WorldSampler

STAGES = (10, 30, 60)


def position_after(rules: Rules, seed: int, asks: int) -> Game:
    game = Game(rules, seed=seed)
    tracker = KnowledgeTracker(game)
    cpus = [make_cpu("hard", seed * 10 + seat) for seat in range(rules.players)]
    while not game.is_over and game.num_asks < asks:
        seat = game.current_player
        game.ask(*cpus[seat].choose(tracker.view(seat)))
    return game


def time_sampler(game: Game, worlds: int, repeats: int) -> tuple[float, float]:
    """(ms to build a sampler, worlds per second), best of ``repeats``."""
    view = KnowledgeTracker(game).view(game.current_player)
    build, rate = float("inf"), 0.0
    for repeat in range(repeats):
        start = time.perf_counter()
        sampler = WorldSampler(view, seed=repeat)
        built = time.perf_counter()
        sampler.sample(worlds)
        done = time.perf_counter()
        build = min(build, (built - start) * 1e3)
        rate = max(rate, worlds / (done - built))
    return build, rate


def small_positions():
    """(name, game) of positions small enough to enumerate."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_worlds import SMALL, small_position

    for index, (hands, catches, seed) in enumerate(SMALL):
        yield f"small-{index} ({len(hands)} players)", small_position(hands, catches, seed)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=2000)
    parser.add_argument("--players", default="2,4")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--exact-samples", type=int, default=5000)
    args = parser.parse_args(argv)
    for flag in ("--worlds", "--repeats", "--exact-samples"):
        check_count(parser, flag, getattr(args, flag[2:].replace("-", "_")))
    args.players = parse_players_list(parser, "--players", args.players)
    console = Console(width=140)
    WorldSampler(KnowledgeTracker(position_after(Rules(), 0, 5)).view(0), 0).sample(2)  # compile
    speed = Table(title=f"World sampler speed (load {os.getloadavg()[0]:.2f})")
    for column in ("players", "asks played", "build (ms)", "worlds/s"):
        speed.add_column(column, justify="right")
    for players in args.players:
        for asks in STAGES:
            game = position_after(Rules(players=players), 1, asks)
            if game.is_over:
                continue
            build, rate = time_sampler(game, args.worlds, args.repeats)
            speed.add_row(str(players), str(game.num_asks), f"{build:.2f}", f"{rate:,.0f}")
    console.print(speed)
    exact = Table(title="Distance to the exact distribution (total variation)")
    for column in (
        "position",
        "consistent deals",
        "worlds now",
        "TV deals",
        "perfect mean / 95%",
        "TV worlds now",
        "perfect mean / 95%",
        "exact now vs uniform",
    ):
        exact.add_column(column, justify="right")
    for name, game in small_positions():
        sampler = WorldSampler(KnowledgeTracker(game).view(game.current_player), seed=1)
        worlds = enumeration.exact_worlds(sampler)
        by_deal, by_now = enumeration.sampled_keys(
            sampler.sample(args.exact_samples, keep_deals=True)
        )
        deal = enumeration.compare(by_deal, worlds.deal)
        now = enumeration.compare(by_now, worlds.now)
        exact.add_row(
            name,
            str(len(worlds.deal)),
            str(len(worlds.now)),
            f"{deal.tv:.4f}",
            f"{deal.tv_perfect:.4f} / {deal.tv_perfect_95:.4f}",
            f"{now.tv:.4f}",
            f"{now.tv_perfect:.4f} / {now.tv_perfect_95:.4f}",
            f"{enumeration.tv_to_uniform_now(worlds):.3f}",
        )
    console.print(exact)


if __name__ == "__main__":
    main()
