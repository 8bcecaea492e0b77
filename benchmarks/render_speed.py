"""How long one ``rgb_array`` frame takes: the AEC env's ``render()`` over whole games.

    python benchmarks/render_speed.py --players 4 --games 20

Plays seeded games with random legal asks in ``raw_env(render_mode="rgb_array")`` and
times ``render()`` after every step, for a seat's view and for the table view (every hand
face up). The first frame of a run draws and caches the card sprites; it is reported on its
own. Prints the mean (wall clock, and the process's CPU time, which other programs on the
machine disturb less), the median and the 99th percentile in milliseconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import gofish_env
from gofish_env.cli import HelpFormatter, check_count, rules_or_error


def frame_times(rules, games: int, view) -> tuple[float, list[float], float]:
    """(the first frame's time, every later frame's wall time, their mean CPU time)."""
    env = gofish_env.raw_env(rules=rules, render_mode="rgb_array", render_view=view)
    rng = np.random.default_rng(0)
    first, times, cpu = None, [], 0.0
    clock, cpu_clock = time.perf_counter, time.process_time
    for game in range(games):
        env.reset(seed=game)
        while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
            start, cpu_start = clock(), cpu_clock()
            frame = env.render()
            spent, cpu_spent = clock() - start, cpu_clock() - cpu_start
            assert frame.shape == (640, 960, 3)
            if first is None:
                first = spent
            else:
                times.append(spent)
                cpu += cpu_spent
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
    return first, times, cpu / len(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", type=int, default=4, help="seats at the table, 2..6")
    parser.add_argument("--rules", default="table", help="a preset")
    parser.add_argument("--games", type=int, default=20, help="games to render")
    args = parser.parse_args(argv)
    rules = rules_or_error(parser, args.rules, args.players)
    check_count(parser, "--games", args.games)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for view in (0, "table"):
        first, times, cpu = frame_times(rules, args.games, view)
        ms = sorted(1000 * t for t in times)
        p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
        print(
            f"view {view!s:>5}: {len(ms)} frames, mean {statistics.fmean(ms):.2f} ms "
            f"(CPU time {1000 * cpu:.2f} ms), median {statistics.median(ms):.2f} ms, "
            f"p99 {p99:.2f} ms (first frame, drawing the sprites: {1000 * first:.0f} ms)"
        )


if __name__ == "__main__":
    main()
