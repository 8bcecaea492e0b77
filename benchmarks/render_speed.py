"""How long one ``rgb_array`` frame takes: the AEC env's ``render()`` over whole games.

    python benchmarks/render_speed.py --players 4 --games 20

Plays seeded games with random legal asks in ``raw_env(render_mode="rgb_array")`` and
times ``render()`` after every step, for a seat's view and for the table view (every hand
face up). The sprite caches of ``gofish_env.picture`` are emptied before each view, so each
view starts as a fresh process would and neither gets the sprites the other drew; its
first frame draws and caches the sprites it needs, and is reported on its own. Prints the
mean (wall clock, and the process's CPU time, which other programs on the machine disturb
less), the median and the 99th percentile in milliseconds. Ctrl-C stops the timing and
prints the figures of the games rendered to the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import gofish_env
from gofish_env import picture
from gofish_env.cli import (
    HelpFormatter,
    check_count,
    interrupted_note,
    progress_bar,
    rules_or_error,
)

VIEWS = (0, "table")


def game_frames(env, seed: int, rng: np.random.Generator) -> list[tuple[float, float]]:
    """The (wall, CPU) seconds of every frame of game ``seed``, rendered after every step."""
    env.reset(seed=seed)
    frames = []
    clock, cpu_clock = time.perf_counter, time.process_time
    while not (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        start, cpu_start = clock(), cpu_clock()
        frame = env.render()
        frames.append((clock() - start, cpu_clock() - cpu_start))
        assert frame.shape == (640, 960, 3)
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
    return frames


def clear_sprite_caches() -> int:
    """Empty every cache of ``gofish_env.picture`` (sprites, text masks, fonts): the next
    frame draws what it needs as a fresh process's first frame does. The caches emptied."""
    caches = [f for f in vars(picture).values() if callable(getattr(f, "cache_clear", None))]
    for function in caches:
        function.cache_clear()
    return len(caches)


def frame_times(rules, games: int, view):
    """Each game's frame times (``game_frames``) in turn, game ``g`` seeded ``g``, the
    sprite caches emptied first (so no view gets another's sprites)."""
    clear_sprite_caches()
    env = gofish_env.raw_env(rules=rules, render_mode="rgb_array", render_view=view)
    rng = np.random.default_rng(0)
    for game in range(games):
        yield game_frames(env, game, rng)


def summary(view, frames: list[tuple[float, float]]) -> str:
    """The line of a view's figures: the first frame on its own, then the others."""
    (first, _), later = frames[0], frames[1:]
    ms = sorted(1000 * wall for wall, _ in later)
    cpu = sum(spent for _, spent in later) / len(later)
    p99 = ms[min(len(ms) - 1, int(0.99 * len(ms)))]
    return (
        f"view {view!s:>5}: {len(ms)} frames, mean {statistics.fmean(ms):.2f} ms "
        f"(CPU time {1000 * cpu:.2f} ms), median {statistics.median(ms):.2f} ms, "
        f"p99 {p99:.2f} ms (first frame, drawing the sprites: {1000 * first:.0f} ms)"
    )


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
    frames = {view: [] for view in VIEWS}  # of the games rendered to the end
    rendered, games = 0, len(VIEWS) * args.games
    interrupted = False
    try:
        with progress_bar(True, games, "games rendered", transient=True) as advance:
            for view in VIEWS:
                for game in frame_times(rules, args.games, view):
                    frames[view] += game
                    rendered += 1
                    advance(rendered)
    except KeyboardInterrupt:
        interrupted = True
    for view, times in frames.items():
        if len(times) > 1:
            print(summary(view, times))
    if interrupted:
        print(interrupted_note(rendered, games, "games"))
        raise SystemExit(130)


if __name__ == "__main__":
    main()
