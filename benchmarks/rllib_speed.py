"""RLlib sampling speed: env steps/s sampled by RLlib's EnvRunners, beside the env's own speed.

    python benchmarks/rllib_speed.py --runners 1,2 --envs 1,8,16 --steps 8000 --markdown

Needs the rllib extra. For each (EnvRunners R, envs per runner E), in one run:

- **env alone**: ``GoFishMultiAgentEnv`` stepped in a plain loop, each seat to move taking
  a uniformly random legal action: what the env costs per step with no RLlib at all;
- **RLlib**: PPO's EnvRunners (the masking module, self-play at 4 players, the settings of
  ``gofish_training.rllib_train``) each sample ``--steps`` env steps, all R at once
  (``EnvRunnerGroup.foreach_env_runner``), after one warm-up sample; env steps/s = all
  steps / wall time of the slowest runner. Each runner also reports the CPU time its
  process spent: "on free cores" = R x (env steps per CPU-second of a runner), what R
  cores that nothing else uses give. On a busy machine the wall-time figure falls and
  this one stays;
- **RLlib's overhead per step** = CPU time of a runner per step - CPU time of the env
  alone per step: what a runner spends per step on everything but the env (connectors,
  the forward pass, the episode records, metrics).

``--baseline`` adds the set-up a new user starts from: RLlib's own ``PettingZooEnv``
around ``gofish_env.env()`` with RLlib's defaults (one env per runner, episodes converted
to NumPy); ``--ablation`` adds the project's env with RLlib's default
``episodes_to_numpy=True``: together they show what each change buys. A learner update is
not sampled time and is not measured here (``benchmarks/rllib_scaling.py`` measures it).
Ctrl-C stops the measuring and prints the table of the set-ups measured.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from gofish_env.cli import (
    HelpFormatter,
    check_count,
    interrupted_note,
    parse_list,
    progress_bar,
    report_console,
    require_extra,
)
from gofish_training import INSTALL_TORCH, RLLIB_LIBRARIES

COMMAND = "python benchmarks/rllib_speed.py"

PLAYERS = 4
WARM_UP = 1000  # env steps before the clock starts
OURS = "gofish rllib_env"
NUMPY = "gofish rllib_env, episodes_to_numpy=True"
BASELINE = "RLlib PettingZooEnv, RLlib defaults"


def env_alone(steps: int, seed: int) -> float:
    """Env steps per CPU-second of the RLlib env in a plain loop with random legal actions."""
    from gofish_training.rllib_env import GoFishMultiAgentEnv

    env = GoFishMultiAgentEnv({"players": PLAYERS})
    rng = np.random.default_rng(seed)
    observations, _ = env.reset(seed=seed)
    start = time.process_time()
    for step in range(steps + WARM_UP):
        if step == WARM_UP:  # the compiled kernels are loaded by now
            start = time.process_time()
        ((agent, observation),) = observations.items()
        legal = np.flatnonzero(observation["action_mask"])
        action = legal[rng.integers(len(legal))]
        observations, _, terminated, truncated, _ = env.step({agent: action})
        if terminated["__all__"] or truncated["__all__"]:
            observations, _ = env.reset()
    return steps / (time.process_time() - start)


def build_algorithm(runners: int, envs: int, variant: str, seed: int):
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.tune.registry import register_env

    import gofish_env
    from gofish_training import rllib_train
    from gofish_training.rllib_env import OpponentPlan
    from gofish_training.rllib_policies import PolicySetup

    args = rllib_train.Args(players=PLAYERS, env_runners=runners, envs_per_runner=envs, seed=seed)
    run = rllib_train.Run(args, rllib_train.EnvSettings.from_config({"players": PLAYERS}), None)
    config = rllib_train.build_config(run)
    if variant == NUMPY:
        config = config.env_runners(episodes_to_numpy=True)
    if variant == BASELINE:
        register_env("gofish_pettingzoo", lambda _: PettingZooEnv(gofish_env.env(players=PLAYERS)))
        setup = PolicySetup(OpponentPlan.parse("selfplay"))
        config = (
            config.environment("gofish_pettingzoo", env_config={}, disable_env_checking=True)
            .env_runners(num_envs_per_env_runner=1, episodes_to_numpy=True)
            .multi_agent(
                policies={"shared"},
                policy_mapping_fn=lambda agent, episode, **kw: "shared",
                policies_to_train=["shared"],
            )
            .rl_module(rl_module_spec=setup.module_spec().rl_module_specs["learner"])
            .callbacks([])
        )
    return config.build_algo()


def timed_sample(runner, steps: int) -> tuple[int, float]:
    """Env steps one EnvRunner samples, and the CPU time its process spent on them."""
    start = time.process_time()
    count = sum(episode.env_steps() for episode in runner.sample(num_timesteps=steps))
    return count, time.process_time() - start


def rllib_rate(runners: int, envs: int, steps: int, variant: str, seed: int):
    """Env steps/s (wall time) and env steps per CPU-second of a runner."""
    algorithm = build_algorithm(runners, envs, variant, seed)
    try:
        group = algorithm.env_runner_group
        group.foreach_env_runner(lambda r: timed_sample(r, 500), local_env_runner=False)
        start = time.perf_counter()
        results = group.foreach_env_runner(lambda r: timed_sample(r, steps), local_env_runner=False)
        wall = time.perf_counter() - start
        total = sum(count for count, _ in results)
        return total / wall, total / sum(cpu for _, cpu in results)
    finally:
        algorithm.stop()


def main(argv: list[str] | None = None) -> None:
    install = INSTALL_TORCH + "pip install -e '.[train,rllib]'"
    require_extra(COMMAND, "rllib", RLLIB_LIBRARIES, install)
    parser = argparse.ArgumentParser(
        prog=COMMAND,
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--runners", default="1,2", help="EnvRunner counts, comma separated")
    parser.add_argument("--envs", default="1,8,16", help="envs per runner, comma separated")
    parser.add_argument("--steps", type=int, default=8000, help="env steps each runner samples")
    parser.add_argument("--seed", type=int, default=0, help="seed of the games")
    parser.add_argument("--baseline", action="store_true", help="add RLlib's PettingZooEnv")
    parser.add_argument(
        "--ablation", action="store_true", help="add ours with episodes_to_numpy=True"
    )
    parser.add_argument("--markdown", action="store_true", help="print a markdown table too")
    args = parser.parse_args(argv)
    runner_counts = [int(value) for value in parse_list(parser, "--runners", args.runners)]
    env_counts = [int(value) for value in parse_list(parser, "--envs", args.envs)]
    for value in (*runner_counts, *env_counts):
        check_count(parser, "--runners/--envs", value)
    check_count(parser, "--steps", args.steps, 100)

    import torch

    from gofish_training.rllib_cluster import ray_session

    torch.set_num_threads(1)
    console = report_console()
    variants = [BASELINE] * args.baseline + [NUMPY] * args.ablation + [OURS]
    setups = [
        (runners, 1 if variant == BASELINE else envs, variant)
        for variant in variants
        for runners in runner_counts
        for envs in (env_counts[:1] if variant == BASELINE else env_counts)
    ]
    own, rows = None, []
    interrupted = False
    try:
        own = env_alone(args.steps, args.seed)
        console.print(f"env alone: {own:,.0f} env steps per CPU-second ({1e6 / own:.0f} us a step)")
        with (
            progress_bar(True, len(setups), "RLlib set-ups", transient=True) as advance,
            ray_session("", max(runner_counts)),
        ):
            for runners, envs, name in setups:
                rate, per_cpu = rllib_rate(runners, envs, args.steps, name, args.seed)
                overhead = 1 / per_cpu - 1 / own
                rows.append((name, runners, envs, rate, runners * per_cpu, 1e6 * overhead))
                console.print(
                    f"{name}: {runners} runners x {envs} envs: {rate:,.0f} env steps/s, "
                    f"{runners * per_cpu:,.0f} on {runners} free cores (RLlib "
                    f"{1e6 * overhead:.0f} us of CPU a step)"
                )
                advance(len(rows))
    except KeyboardInterrupt:
        interrupted = True
    if rows:
        print_rows(console, rows, own, args.markdown)
    if interrupted:
        measured = len(rows) + (own is not None)
        console.print(interrupted_note(measured, len(setups) + 1))
        raise SystemExit(130)


def print_rows(console: Console, rows: list[tuple], own: float, markdown: bool) -> None:
    """The table of the set-ups measured, and the same in markdown if asked."""
    table = Table(title=f"RLlib sampling, {PLAYERS} players, self-play ({platform.node()})")
    columns = (
        "env",
        "EnvRunners",
        "envs per runner",
        "env steps/s",
        "on free cores",
        "RLlib us/step",
    )
    for column in columns:
        table.add_column(column, justify="right")
    for name, runners, envs, rate, free, overhead in rows:
        table.add_row(
            name, str(runners), str(envs), f"{rate:,.0f}", f"{free:,.0f}", f"{overhead:.0f}"
        )
    console.print(table)
    if markdown:
        print(f"\nenv alone: {own:,.0f} env steps per CPU-second ({1e6 / own:.0f} us a step)\n")
        print("| " + " | ".join(columns) + " |")
        print("|---" * len(columns) + "|")
        for name, runners, envs, rate, free, overhead in rows:
            print(f"| {name} | {runners} | {envs} | {rate:,.0f} | {free:,.0f} | {overhead:.0f} |")


if __name__ == "__main__":
    main()
