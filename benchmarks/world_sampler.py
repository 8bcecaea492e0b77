"""World sampler speed (worlds/s) and its distance to the exact distribution.

python benchmarks/world_sampler.py --worlds 2000 --players 2,4

Speed: positions of seeded games played by ``hard`` CPUs, 10, 30 and 60 asks in; for
each the time to build a ``WorldSampler`` (read the log, find a first world, burn in) and
the rate of ``sample(n)`` (hands and pool now), best of ``--repeats``, for the plain
sampler and for ``master``'s model of the others' play. Distribution: small
positions (most ranks already caught, a few random asks) enumerated exactly
(``gofish_env.world_enumeration``); the total variation distance of a sample of
``--exact-samples`` worlds beside what a perfect sampler shows (mean and 95th percentile),
and how far the exact worlds now are from uniform over them. Closeness to the truth
(``--truth-games``): at seat decisions in games of ``expert`` CPUs once the pool holds
``--truth-pool`` cards or fewer (8 by default: the end of ``master``'s window, which opens
at 12 cards at two players and 16 at three and four), how far the sampled hands of
the other seats are from their true hands (cards misplaced, summed over ranks and seats),
and how often a world has every other hand right, for each model of how the others play
(``MODELS``). The model's fit (``--fit-games``): how often ``expert``'s plain asks are
for the rank it holds most of, the rule ``most_held`` weighs, before the end of the pool
and within the end it leaves out. Calibration (``--calibration-games``): where ``master``
searches (the pool at its limit for the table or below), for each rank the seat to move
holds that another seat is neither proved to hold nor proved not to, the share of worlds
in which that seat holds one against how often it really does, in bins of 0.1, with the
Brier score of each model. Ctrl-C stops the measuring and prints the tables measured so
far, the one being filled with its rows measured.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from gofish_env import Game, Rules
from gofish_env import world_enumeration as enumeration
from gofish_env.cli import (
    HelpFormatter,
    check_count,
    interrupted_note,
    parse_players_list,
    progress_bar,
)
from gofish_env.cpus import ExpertCPU, make_cpu
from gofish_env.evaluation.positions import played_decisions
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.master import (
    DEFAULT_CANDIDATES,
    OTHER_SIMULATIONS,
    POOL_LIMIT_TABLE,
    SIMULATIONS,
    MasterCPU,
    default_pool_limit,
)
from gofish_env.worlds import ENDGAME_POOL, WorldSampler, barred_ranks

STAGES = (10, 30, 60)
# (name, assume_sure_hits, most_held): the plain sampler and the models of the others' play
MODELS = (
    ("plain", False, 0.0),
    ("sure hits", True, 0.0),
    ("sure hits + most held 2.0", True, 2.0),
    ("sure hits + most held 8.0", True, 8.0),  # master's default
)


def position_after(rules: Rules, seed: int, asks: int) -> Game:
    game = Game(rules, seed=seed)
    tracker = KnowledgeTracker(game)
    cpus = [make_cpu("hard", seed * 10 + seat) for seat in range(rules.players)]
    while not game.is_over and game.num_asks < asks:
        seat = game.current_player
        game.ask(*cpus[seat].choose(tracker.view(seat)))
    return game


def time_sampler(
    game: Game, worlds: int, repeats: int, assume_sure_hits: bool = False, most_held: float = 0.0
) -> tuple[float, float]:
    """(ms to build a sampler, worlds per second), best of ``repeats``."""
    view = KnowledgeTracker(game).view(game.current_player)
    build, rate = float("inf"), 0.0
    for repeat in range(repeats):
        start = time.perf_counter()
        sampler = WorldSampler(
            view, seed=repeat, assume_sure_hits=assume_sure_hits, most_held=most_held
        )
        built = time.perf_counter()
        sampler.sample(worlds)
        done = time.perf_counter()
        build = min(build, (built - start) * 1e3)
        rate = max(rate, worlds / (done - built))
    return build, rate


OnGame = Callable[[int], None] | None  # told the number of games played so far


def expert_decisions(players: int, games: int, seed: int, cpu_step: int, on_game: OnGame):
    """(game number, game, view, ask) at every decision of ``games`` games of ``expert``s
    (game ``g`` seeded ``seed + g``, seat ``s``'s CPU ``cpu_step * g + s``); the ask is
    made when the caller asks for the next decision (a view reads the live public log)."""
    for number in range(games):
        cpus = [make_cpu("expert", cpu_step * number + seat) for seat in range(players)]
        for game, view, ask in played_decisions(Rules(players=players), seed + number, cpus):
            yield number, game, view, ask
        if on_game is not None:
            on_game(number + 1)


def decisions_in_turn(
    players: int, games: int, pool: int, seed: int, cpu_step: int, on_game: OnGame
):
    """(game number, game, view) at seat ``g % players``'s decisions of game ``g`` (of
    ``expert_decisions``) once the pool holds ``pool`` cards or fewer."""
    for number, game, view, _ in expert_decisions(players, games, seed, cpu_step, on_game):
        if game.pool_size <= pool and view.seat == number % players:
            yield number, game, view


def brier(pairs: np.ndarray) -> float:
    """The Brier score of predictions ``pairs`` [n, 2] of (chance, truth)."""
    return float(((pairs[:, 0] - pairs[:, 1]) ** 2).mean())


def closeness(
    players: int, games: int, pool: int, worlds: int, on_game: OnGame = None
) -> list[tuple]:
    """(model, decisions, mean cards misplaced, share of worlds with every other hand
    right, ms to build and sample) at seat ``g % players``'s decisions of game ``g`` once
    the pool holds ``pool`` cards or fewer (``expert`` at every seat)."""
    totals = {name: [0.0, 0.0, 0.0] for name, *_ in MODELS}
    decisions = 0
    for number, game, view in decisions_in_turn(players, games, pool, 1000, 7, on_game):
        seat = view.seat
        decisions += 1
        others = [other for other in range(players) if other != seat]
        truth = np.array([game.hand_counts(other) for other in others])
        for name, assume, most_held in MODELS:
            start = time.perf_counter()
            sampler = WorldSampler(view, seed=number, assume_sure_hits=assume, most_held=most_held)
            hands = sampler.sample(worlds).hands[:, others, :]
            total = totals[name]
            total[2] += time.perf_counter() - start
            total[0] += np.abs(hands - truth).sum(axis=(1, 2)).mean()
            total[1] += (hands == truth).all(axis=(1, 2)).mean()
    count = max(decisions, 1)
    return [
        (name, decisions, misplaced / count, right / count, seconds * 1e3 / count)
        for name, (misplaced, right, seconds) in totals.items()
    ]


def most_held_fit(
    players: int, games: int, on_game: OnGame = None
) -> list[tuple[str, int, float, float, float]]:
    """How often ``expert``'s plain asks (not a sure hit, and holding none of the ranks
    another seat was proved to hold) are for the rank it holds most of, as the model reads
    them (ranks no other seat could hold left out): (stage, asks, shares of asks with no
    rank held more, one card more, two or more), before the end of the pool the model
    leaves out and at each pool size within it."""
    deficits: dict[str, list[int]] = {}
    for _, game, view, (target, rank) in expert_decisions(players, games, 2000, 11, on_game):
        seat, public = view.seat, view.knowledge
        held = np.array(game.hand_counts(seat))
        proved = np.delete(public.least, seat, axis=0).max(axis=0) > 0
        if public.least[target, rank] or (held.astype(bool) & proved).any():
            continue  # a sure hit, or one passed up: not a plain ask
        endgame = public.pool_size <= ENDGAME_POOL and ExpertCPU.endgame_race(
            public.rules, public.hand_sizes, seat
        )
        stage = f"the end, pool {public.pool_size}" if endgame else "before the end"
        counted = np.where(barred_ranks(public, seat), 0, held)
        deficits.setdefault(stage, []).append(int(max(counted.max() - held[rank], 0)))
    rows = []
    for stage in sorted(deficits, key=lambda name: (name != "before the end", name)):
        counts = np.bincount(np.minimum(deficits[stage], 2), minlength=3)
        shares = counts / counts.sum()
        rows.append((stage, int(counts.sum()), *map(float, shares)))
    return rows


def calibration(
    players: int, games: int, worlds: int, on_game: OnGame = None
) -> dict[str, np.ndarray]:
    """Each model's predictions, an array [n, 2] of (share of worlds, truth): at seat ``g
    % players``'s decisions of game ``g`` (``expert`` at every seat) once the pool holds
    ``default_pool_limit(players)`` cards or fewer, for every other seat and every rank the
    seat to move holds that the other is neither proved to hold nor proved not to: the
    share of ``worlds`` sampled worlds in which it holds one, and whether it does."""
    limit = default_pool_limit(players)
    rows: dict[str, list[tuple[float, bool]]] = {name: [] for name, *_ in MODELS}
    for number, game, view in decisions_in_turn(players, games, limit, 5000, 13, on_game):
        seat = view.seat
        held = view.own_counts
        open_ranks = [
            (other, rank)
            for other in range(players)
            if other != seat
            for rank in range(view.rules.ranks)
            if held[rank] and not view.least[other, rank] and view.most[other, rank] > 0
        ]
        if not open_ranks:
            continue
        truths = [game.hand_counts(other)[rank] > 0 for other, rank in open_ranks]
        for name, assume, most_held in MODELS:
            sampler = WorldSampler(view, seed=number, assume_sure_hits=assume, most_held=most_held)
            hands = sampler.sample(worlds).hands
            for (other, rank), truth in zip(open_ranks, truths, strict=True):
                rows[name].append((float((hands[:, other, rank] > 0).mean()), truth))
    return {name: np.array(pairs, float).reshape(-1, 2) for name, pairs in rows.items()}


def calibration_bins(pairs: np.ndarray) -> list[tuple[float, int, float, float]]:
    """(bin's low end, predictions, mean prediction, share true) in bins of 0.1 (the last
    holds 1.0), for the bins that hold any."""
    predicted, truth = pairs[:, 0], pairs[:, 1]
    bins = np.minimum((predicted * 10).astype(int), 9)
    return [
        (low / 10, int(mask.sum()), float(predicted[mask].mean()), float(truth[mask].mean()))
        for low in range(10)
        if (mask := bins == low).any()
    ]


def small_positions():
    """(name, game) of positions small enough to enumerate."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_worlds import SMALL, small_position

    for index, (hands, catches, seed) in enumerate(SMALL):
        yield f"small-{index} ({len(hands)} players)", small_position(hands, catches, seed)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--worlds", type=int, default=2000, help="worlds a speed measurement")
    parser.add_argument("--players", default="2,4", help="comma-separated seat counts, 2..6")
    parser.add_argument("--repeats", type=int, default=3, help="measurements; the best is kept")
    parser.add_argument(
        "--exact-samples", type=int, default=5000, help="worlds a small position, vs exact"
    )
    parser.add_argument("--truth-games", type=int, default=20, help="expert games a table")
    parser.add_argument(
        "--truth-pool",
        type=int,
        default=8,
        help="closeness at this many pool cards or fewer (master searches from "
        f"{POOL_LIMIT_TABLE})",
    )
    parser.add_argument(
        "--truth-worlds",
        type=int,
        default=170,
        help="worlds a decision (master draws its simulations over its candidates: "
        f"{OTHER_SIMULATIONS // DEFAULT_CANDIDATES} for {DEFAULT_CANDIDATES} candidates at "
        f"{OTHER_SIMULATIONS}, {SIMULATIONS[2] // DEFAULT_CANDIDATES} at {SIMULATIONS[2]})",
    )
    parser.add_argument(
        "--fit-games", type=int, default=100, help="expert games a table, for the asks' fit"
    )
    parser.add_argument(
        "--calibration-games", type=int, default=100, help="expert games a table, calibration"
    )
    args = parser.parse_args(argv)
    for flag in (
        "--worlds",
        "--repeats",
        "--exact-samples",
        "--truth-games",
        "--truth-worlds",
        "--fit-games",
        "--calibration-games",
    ):
        check_count(parser, flag, getattr(args, flag[2:].replace("-", "_")))
    if args.truth_pool < 0:
        parser.error(f"--truth-pool: got {args.truth_pool}; allowed: an integer >= 0")
    args.players = parse_players_list(parser, "--players", args.players)
    console = Console(width=140)
    positions = list(small_positions())
    total = len(args.players) * (len(STAGES) + 3) + len(positions)
    # A Ctrl-C prints the table being filled, with its rows measured, and stops.
    measured, filling = 0, None
    try:
        speed = filling = Table(title=f"World sampler speed (load {os.getloadavg()[0]:.2f})")
        for column in ("players", "asks played", "build (ms)", "worlds/s"):
            speed.add_column(column, justify="right")
        master = MasterCPU(0)
        masters_model = (master.assume_sure_hits, master.most_held)
        for column in ("build, master's model (ms)", "worlds/s, master's model"):
            speed.add_column(column, justify="right")
        stages = list(itertools.product(args.players, STAGES))
        with progress_bar(True, len(stages), "sampler speed", transient=True) as advance:
            # The first sample compiles the sampler's kernels: not timed.
            WorldSampler(KnowledgeTracker(position_after(Rules(), 0, 5)).view(0), 0).sample(2)
            for done, (players, asks) in enumerate(stages, 1):
                game = position_after(Rules(players=players), 1, asks)
                if not game.is_over:
                    build, rate = time_sampler(game, args.worlds, args.repeats)
                    model_build, model_rate = time_sampler(
                        game, args.worlds, args.repeats, *masters_model
                    )
                    speed.add_row(
                        str(players),
                        str(game.num_asks),
                        f"{build:.2f}",
                        f"{rate:,.0f}",
                        f"{model_build:.2f}",
                        f"{model_rate:,.0f}",
                    )
                measured += 1
                advance(done)
        console.print(speed)
        exact = filling = Table(title="Distance to the exact distribution (total variation)")
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
        with progress_bar(True, len(positions), "exact distributions", transient=True) as advance:
            for done, (name, game) in enumerate(positions, 1):
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
                measured += 1
                advance(done)
        console.print(exact)
        truth = filling = Table(
            title=f"Closeness to the true hands ({args.truth_games} expert games a table, pool "
            f"<= {args.truth_pool}, {args.truth_worlds} worlds a decision)"
        )
        for column in (
            "players",
            "model",
            "decisions",
            "cards misplaced",
            "every hand right",
            "ms",
        ):
            truth.add_column(column, justify="right")
        for players in args.players:
            label = f"closeness, {players} players"
            with progress_bar(True, args.truth_games, label, transient=True) as advance:
                rows = closeness(
                    players, args.truth_games, args.truth_pool, args.truth_worlds, advance
                )
            for name, decisions, misplaced, right, ms in rows:
                truth.add_row(
                    str(players),
                    name,
                    str(decisions),
                    f"{misplaced:.3f}",
                    f"{right:.3f}",
                    f"{ms:.1f}",
                )
            measured += 1
        console.print(truth)
        fit = filling = Table(
            title=f"expert's plain asks: the rank it holds most of? ({args.fit_games} games a "
            "table)"
        )
        for column in ("players", "stage", "asks", "most held", "one card short", "two or more"):
            fit.add_column(column, justify="right")
        for players in args.players:
            label = f"asks' fit, {players} players"
            with progress_bar(True, args.fit_games, label, transient=True) as advance:
                rows = most_held_fit(players, args.fit_games, advance)
            for stage, asks, *shares in rows:
                fit.add_row(str(players), stage, str(asks), *(f"{share:.3f}" for share in shares))
            measured += 1
        console.print(fit)
        filling = None
        for players in args.players:
            label = f"calibration, {players} players"
            with progress_bar(True, args.calibration_games, label, transient=True) as advance:
                by_model = calibration(players, args.calibration_games, args.truth_worlds, advance)
            print_calibration(console, args, players, by_model)
            measured += 1
    except KeyboardInterrupt:
        if filling is not None and filling.row_count:
            console.print(filling)
        console.print(interrupted_note(measured, total))
        raise SystemExit(130) from None


def print_calibration(console: Console, args, players: int, by_model: dict) -> None:
    """The calibration tables of a table size: each model's, then the last model's by bin."""
    summary = Table(
        title=f"Calibration at {players} players ({args.calibration_games} expert games, "
        f"pool <= {default_pool_limit(players)}, {args.truth_worlds} worlds a decision)"
    )
    for column in ("model", "predictions", "Brier", "mean predicted", "share true"):
        summary.add_column(column, justify="right")
    for name, pairs in by_model.items():
        if not len(pairs):
            summary.add_row(name, "0", "-", "-", "-")
            continue
        mean = pairs.mean(axis=0)
        summary.add_row(
            name, str(len(pairs)), f"{brier(pairs):.4f}", f"{mean[0]:.3f}", f"{mean[1]:.3f}"
        )
    console.print(summary)
    bins = Table(title=f"Calibration of {MODELS[-1][0]} at {players} players, by bin")
    for column in ("bin", "predictions", "mean predicted", "share true"):
        bins.add_column(column, justify="right")
    for low, count, predicted, observed in calibration_bins(by_model[MODELS[-1][0]]):
        bins.add_row(
            f"{low:.1f}-{low + 0.1:.1f}", str(count), f"{predicted:.3f}", f"{observed:.3f}"
        )
    console.print(bins)


if __name__ == "__main__":
    main()
