"""Environment speed: random legal play through gofish_env.env() beside OpenSpiel's RL env.

    python benchmarks/env_speed.py --seconds 3 --repeats 3 --players 2,4,6

For each player count, in the same run and interleaved (so machine load hits both alike):
- ours: ``gofish_env.env(players=P)`` (wrapped), ``agent_iter``/``last()`` (the observation
  and the mask at each decision), a uniformly random legal action from the mask;
- OpenSpiel: ``rl_environment.Environment("go_fish", players=P)``, the current player's
  ``legal_actions`` from the time step, a uniformly random one;
- single-agent: ``GoFishEnv(players=P)`` against random CPUs, a random legal action from
  ``action_masks()`` (its steps are the learner's; opponents' moves happen inside).
Each figure is the best of ``--repeats`` measurements of ``--seconds`` each.
Needs the bench extra (``pip install -e .[bench]``) for OpenSpiel.
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import random
import time
import warnings

import numpy as np
from rich.console import Console
from rich.progress import track
from rich.table import Table

import gofish_env
from gofish_env.cli import check_count, check_seconds, parse_players_list
from gofish_env.gym_env import GoFishEnv


def ours_aec(players: int, seconds: float, seed: int) -> tuple[float, float]:
    env = gofish_env.env(players=players)
    chooser = random.Random(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + games)
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                action = None
            else:
                action = chooser.choice(np.flatnonzero(observation["action_mask"]).tolist())
                steps += 1
            env.step(action)
        games += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def openspiel_rl(players: int, seconds: float, seed: int) -> tuple[float, float]:
    from open_spiel.python import rl_environment

    sampler = rl_environment.ChanceEventSampler(seed=seed)
    env = rl_environment.Environment("go_fish", chance_event_sampler=sampler, players=players)
    chooser = random.Random(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            action = chooser.choice(time_step.observations["legal_actions"][player])
            time_step = env.step([action])
            steps += 1
        games += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def ours_single_agent(players: int, seconds: float, seed: int) -> tuple[float, float]:
    env = GoFishEnv(players=players, opponents="random")
    chooser = random.Random(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + games)
        done = False
        while not done:
            action = chooser.choice(np.flatnonzero(env.action_masks()).tolist())
            _, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            steps += 1
        games += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/env_speed.py",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--players", default="2,4,6", help="comma-separated player counts, 2..6")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements; the best is kept")
    parser.add_argument("--seed", type=int, default=0, help="seed of deals and choices")
    args = parser.parse_args(argv)

    # Every argument is checked before the first measurement.
    counts = parse_players_list(parser, "--players", args.players)
    check_seconds(parser, "--seconds", args.seconds)
    check_count(parser, "--repeats", args.repeats)
    if importlib.util.find_spec("open_spiel") is None:
        parser.error('OpenSpiel is not installed; pip install -e ".[bench]"')
    warnings.simplefilter("ignore")  # PettingZoo warns about dict observations

    runners = {"ours": ours_aec, "openspiel": openspiel_rl, "single": ours_single_agent}
    best: dict[tuple[str, int], tuple[float, float]] = {}
    jobs = [(p, name) for _ in range(args.repeats) for p in counts for name in runners]
    for players, name in track(jobs, description="measuring"):
        result = runners[name](players, args.seconds, args.seed)
        if result[0] > best.get((name, players), (0.0, 0.0))[0]:
            best[(name, players)] = result

    table = Table(title=f"Environment speed (best of {args.repeats} x {args.seconds:g} s)")
    for column in (
        "players",
        "ours steps/s",
        "OpenSpiel steps/s",
        "ratio",
        "ours games/s",
        "OpenSpiel games/s",
        "GoFishEnv steps/s",
    ):
        table.add_column(column, justify="right")
    for players in counts:
        ours, spiel, single = (best[(name, players)] for name in runners)
        table.add_row(
            str(players),
            f"{ours[0]:,.0f}",
            f"{spiel[0]:,.0f}",
            f"{ours[0] / spiel[0]:.2f}x",
            f"{ours[1]:,.0f}",
            f"{spiel[1]:,.0f}",
            f"{single[0]:,.0f}",
        )
    console = Console()
    console.print(table)
    console.print(f"python {platform.python_version()}, {platform.machine()}")


if __name__ == "__main__":
    main()
