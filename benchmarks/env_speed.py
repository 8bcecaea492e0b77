"""Environment speed: random legal play with observations and masks, ours beside
OpenSpiel's RL environment for Go Fish.

    python benchmarks/env_speed.py --seconds 3 --repeats 3 --players 2,4,6 --batch 256,4096

For each player count, in the same run and interleaved (so machine load hits all alike),
every figure a number of environment steps per second, each step one decision with the
next observation and legal actions:

- OpenSpiel driven directly (``pyspiel``), doing per step the work our envs do: for the
  seat to move only, its observation tensor (written into one buffer made once by
  ``make_observation(game)``, ``set_from(state, player)``), ``legal_actions()`` and a
  uniformly random one, ``rewards()``; its chance nodes sampled by one ``random()`` walked
  down ``chance_outcomes()``. Its observation equals ``state.observation_tensor(player)``
  (checked before the timing). This is OpenSpiel's fastest driver with an observation at
  every step, and the one the "vs OpenSpiel" column is against, as is the target;
- OpenSpiel's RL environment: ``rl_environment.Environment("go_fish", players=P)``, the
  current player's ``legal_actions`` from the time step and a uniformly random one; its
  chance nodes sampled by a ``chance_event_sampler`` walking ``chance_outcomes()`` as above
  (its default sampler calls NumPy's ``choice`` at every chance node, slower). Every step
  it builds the observation tensor and legal actions of every seat, every seat's reward
  and a ``TimeStep``: 4x to 15x the direct driver's work, so it is shown beside it, not
  used as the reference. OpenSpiel's observations are observation tensors (Go Fish has no
  information-state tensor), smaller than ours (251 numbers at 4 players against our 481:
  the work is not identical);
- ours, the PettingZoo AEC env: ``gofish_env.env(players=P)``, ``agent_iter``/``last()``;
  and the same reading the global state (``env.state()``) at every step too, as a
  centralized critic's training loop does;
- ours, batched: ``SelfPlayVectorEnv(N)`` (every seat's decision comes back, as in the
  AEC env and OpenSpiel: the observation and mask of the next seat to move in every game),
  for each N of ``--batch``, with and without ``compile_rules=True`` (the rules compiled
  into the engine); the actions a uniformly random legal one per game, drawn for the whole
  batch at once;
- the single-agent envs, whose steps are the learner's only (the opponents, random CPUs,
  move inside): ``GoFishEnv`` and ``GoFishVectorEnv(N)`` (``make_vec``'s), the latter
  with and without ``compile_rules=True``. A learner step includes P-1 opponent
  decisions, so these rows get no "vs OpenSpiel" ratio.

Each figure is the best of ``--repeats`` measurements of ``--seconds`` each. Needs the
bench extra (``pip install -e .[bench]``) for OpenSpiel. Ctrl-C stops the measuring and
prints the table of the environments measured so far, and no target verdict (the run is
incomplete).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import platform
import random
import time
import warnings

import numpy as np
from rich.progress import track
from rich.table import Table

import gofish_env
from gofish_env.cli import (
    HelpFormatter,
    check_count,
    check_seconds,
    interrupted_note,
    parse_list,
    parse_players_list,
    report_console,
)
from gofish_env.gym_env import GoFishEnv
from gofish_env.vector.gym_vector import GoFishVectorEnv
from gofish_env.vector.self_play import SelfPlayVectorEnv

TARGET_PLAYERS = 4
TARGET_RATIO = 10.0  # the batched env's steps/s at least 10x OpenSpiel's at 4 players
OPENSPIEL_DIRECT = "OpenSpiel, pyspiel direct"
OPENSPIEL_RL = "OpenSpiel rl_environment"


def random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action in every row of ``masks`` (action 0 where a row has
    none), drawn for the whole batch at once: one uniform per row picks the k-th legal
    action (half the work of a uniform per action)."""
    legal_so_far = masks.cumsum(axis=1, dtype=np.int16)
    pick = (rng.random(len(masks)) * legal_so_far[:, -1]).astype(np.int16)
    return (legal_so_far > pick[:, None]).argmax(axis=1)


def ours_aec(
    players: int, seconds: float, seed: int, _size: int, read_state: bool = False
) -> tuple[float, float]:
    env = gofish_env.env(players=players)
    chooser = random.Random(seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + games)
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if read_state:
                env.state()
            if terminated or truncated:
                action = None
            else:
                action = chooser.choice(np.flatnonzero(observation["action_mask"]).tolist())
                steps += 1
            env.step(action)
        games += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


class WalkingSampler:
    """OpenSpiel's chance events by one ``random()`` walked down ``chance_outcomes()``."""

    def __init__(self, seed: int):
        self.seed(seed)

    def seed(self, seed=None) -> None:
        self._random = random.Random(seed).random

    def __call__(self, state):
        point = self._random()
        for action, probability in state.chance_outcomes():
            point -= probability
            if point < 0:
                return action
        return action


def openspiel_rl(players: int, seconds: float, seed: int, _size: int) -> tuple[float, float]:
    from open_spiel.python import rl_environment

    # Go Fish provides observation tensors only (no information-state tensor).
    env = rl_environment.Environment(
        "go_fish", chance_event_sampler=WalkingSampler(seed), players=players
    )
    chooser = random.Random(seed).random
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            legal = time_step.observations["legal_actions"][player]
            time_step = env.step([legal[int(chooser() * len(legal))]])
            steps += 1
        games += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def openspiel_direct(players: int, seconds: float, seed: int, _size: int) -> tuple[float, float]:
    """OpenSpiel's Go Fish through pyspiel, per step the seat to move's observation (one
    buffer, ``set_from``), its legal actions and a random one, and the rewards."""
    import pyspiel
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game("go_fish", {"players": players})
    observer = make_observation(game)
    sampler = WalkingSampler(seed)
    chooser = random.Random(seed).random
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while state.is_chance_node():
            state.apply_action(sampler(state))
        while not state.is_terminal():
            observer.set_from(state, state.current_player())  # observer.tensor: the observation
            legal = state.legal_actions()
            state.apply_action(legal[int(chooser() * len(legal))])
            state.rewards()
            steps += 1
            while state.is_chance_node():
                state.apply_action(sampler(state))
        games += 1
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def direct_observations_differ(players: int, seed: int, games: int = 2) -> int:
    """Steps (of ``games`` random games played as ``openspiel_direct`` plays them) at which
    the direct driver's observation buffer differs from ``state.observation_tensor(player)``:
    0 when it is the same observation, bit for bit."""
    import pyspiel
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game("go_fish", {"players": players})
    observer = make_observation(game)
    sampler = WalkingSampler(seed)
    chooser = random.Random(seed).random
    differ = 0
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(sampler(state))
                continue
            player = state.current_player()
            observer.set_from(state, player)
            expected = np.asarray(state.observation_tensor(player), dtype=observer.tensor.dtype)
            differ += not np.array_equal(observer.tensor, expected)
            legal = state.legal_actions()
            state.apply_action(legal[int(chooser() * len(legal))])
    return differ


def ours_self_play(
    players: int, seconds: float, seed: int, size: int, compile_rules: bool = False
) -> tuple[float, float]:
    env = SelfPlayVectorEnv(size, players=players, compile_rules=compile_rules)
    return random_batched_play(env, seconds, seed, size)


def random_batched_play(env, seconds: float, seed: int, size: int) -> tuple[float, float]:
    """Steps and games a second of a batched env (every game steps at once, autoreset),
    random legal actions from the masks in its infos."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    steps = games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, info = env.step(random_legal(info["action_mask"], rng))
        steps += size
        games += int((terminated | truncated).sum())
    elapsed = time.perf_counter() - start
    return steps / elapsed, games / elapsed


def ours_single_agent(players: int, seconds: float, seed: int, _size: int) -> tuple[float, float]:
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


def ours_vector_single(
    players: int, seconds: float, seed: int, size: int, compile_rules: bool = False
) -> tuple[float, float]:
    env = GoFishVectorEnv(
        size,
        players=players,
        opponents="random",
        autoreset_mode="same_step",
        compile_rules=compile_rules,
    )
    return random_batched_play(env, seconds, seed, size)


def compiled(runner):
    """The runner with the rules compiled into the engine."""
    return functools.partial(runner, compile_rules=True)


def warm_up(runners: dict, counts: list[int], seed: int) -> None:
    """Every environment stepped briefly: compiles and warms up before the timing."""
    jobs = [(players, runner, size) for players in counts for runner, size in runners.values()]
    for players, runner, size in track(jobs, description="warming up (compiling)"):
        runner(players, 0.05, seed, size)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/env_speed.py",
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--players", default="2,4,6", help="comma-separated player counts, 2..6")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements; the best is kept")
    parser.add_argument("--batch", default="256,4096", help="batch sizes of the vector envs")
    parser.add_argument("--seed", type=int, default=0, help="seed of deals and choices")
    args = parser.parse_args(argv)

    # Every argument is checked before the first measurement.
    counts = parse_players_list(parser, "--players", args.players)
    check_seconds(parser, "--seconds", args.seconds)
    check_count(parser, "--repeats", args.repeats)
    sizes = []
    for item in parse_list(parser, "--batch", args.batch):
        if not item.isdigit() or int(item) < 1:
            parser.error(f"--batch: got {args.batch!r}; allowed: batch sizes >= 1, by commas")
        sizes.append(int(item))
    if importlib.util.find_spec("open_spiel") is None:
        parser.error('OpenSpiel is not installed; pip install -e ".[bench]"')
    warnings.simplefilter("ignore")  # PettingZoo warns about dict observations

    for players in counts:
        if direct_observations_differ(players, args.seed):
            raise SystemExit(
                f"OpenSpiel, pyspiel direct: at {players} players its observation differs from "
                "state.observation_tensor(player); its figures would not be comparable"
            )

    runners = {
        OPENSPIEL_DIRECT: (openspiel_direct, 1),
        OPENSPIEL_RL: (openspiel_rl, 1),
        "ours: AEC env": (ours_aec, 1),
        "ours: AEC env, state() read too": (functools.partial(ours_aec, read_state=True), 1),
        **{f"ours: SelfPlayVectorEnv N={n:,}": (ours_self_play, n) for n in sizes},
        **{
            f"ours: SelfPlayVectorEnv N={n:,}, rules compiled in": (compiled(ours_self_play), n)
            for n in sizes
        },
        "ours: GoFishEnv (learner steps)": (ours_single_agent, 1),
        **{
            f"ours: GoFishVectorEnv N={n:,} (learner steps)": (ours_vector_single, n) for n in sizes
        },
        **{
            f"ours: GoFishVectorEnv N={n:,} (learner steps), rules compiled in": (
                compiled(ours_vector_single),
                n,
            )
            for n in sizes
        },
    }
    best: dict[tuple[str, int], tuple[float, float]] = {}
    jobs = [(p, name) for _ in range(args.repeats) for p in counts for name in runners]
    console = report_console()
    measured = 0
    interrupted = False
    try:
        warm_up(runners, counts, args.seed)
        for players, name in track(jobs, description="measuring"):
            runner, size = runners[name]
            result = runner(players, args.seconds, args.seed, size)
            if result[0] > best.get((name, players), (0.0, 0.0))[0]:
                best[(name, players)] = result
            measured += 1
    except KeyboardInterrupt:
        interrupted = True
    if not best:
        console.print(interrupted_note(0, len(jobs)))
        raise SystemExit(130)

    table = Table(title=f"Environment speed (best of {args.repeats} x {args.seconds:g} s)")
    for column in ("players", "environment", "steps/s", "games/s", "vs OpenSpiel"):
        table.add_column(column, justify="left" if column == "environment" else "right")
    rows = []
    verdict = None
    for players in counts:
        # The reference: the fastest OpenSpiel driver measured at this player count.
        spiel = max(
            (
                best[(name, players)][0]
                for name in runners
                if (name, players) in best and name.startswith("OpenSpiel")
            ),
            default=None,
        )
        for name in runners:
            if (name, players) not in best:
                continue  # not measured (interrupted)
            steps, games = best[(name, players)]
            learner = "(learner steps)" in name  # P-1 opponent decisions inside each step
            ratio = None if spiel is None or learner else steps / spiel
            vs_spiel = "-" if ratio is None else f"{ratio:.2f}x"
            rows.append([str(players), name, f"{steps:,.0f}", f"{games:,.0f}", vs_spiel])
            if players == TARGET_PLAYERS and name.startswith("ours: SelfPlay") and ratio:
                verdict = max(verdict or 0.0, ratio)
    for index, cells in enumerate(rows):
        last = index + 1 == len(rows) or rows[index + 1][0] != cells[0]
        table.add_row(*cells, end_section=last)
    console.print(table)
    print("| " + " | ".join(c.header for c in table.columns) + " |")
    print("|" + "|".join("---" for _ in table.columns) + "|")
    for cells in rows:
        print("| " + " | ".join(cells) + " |")
    console.print(
        "vs OpenSpiel: steps/s over the fastest OpenSpiel driver's at the same player count; "
        "none for learner steps (each includes P-1 opponent decisions). Observation sizes, "
        "ours against OpenSpiel's: "
        + ", ".join(
            f"{p} players {observation_sizes(p)[0]} vs {observation_sizes(p)[1]}" for p in counts
        )
    )
    console.print(f"python {platform.python_version()}, {platform.machine()}, one process")
    if interrupted:
        console.print(
            f"target: no verdict, the run is incomplete (SelfPlayVectorEnv >= {TARGET_RATIO:g}x "
            f"the fastest OpenSpiel driver's steps/s at {TARGET_PLAYERS} players)"
        )
        console.print(interrupted_note(measured, len(jobs)))
        raise SystemExit(130)
    if verdict is not None:
        met = "[green]met" if verdict >= TARGET_RATIO else "[red]NOT met"
        console.print(
            f"target: SelfPlayVectorEnv >= {TARGET_RATIO:g}x the fastest OpenSpiel driver's "
            f"steps/s at {TARGET_PLAYERS} players: {verdict:.2f}x, {met}"
        )


def observation_sizes(players: int) -> tuple[int, int]:
    """The numbers in one observation: ours (the flat vector) and OpenSpiel's tensor."""
    import pyspiel

    ours = SelfPlayVectorEnv(1, players=players).single_observation_space.shape[0]
    return ours, pyspiel.load_game("go_fish", {"players": players}).observation_tensor_size()


if __name__ == "__main__":
    main()
