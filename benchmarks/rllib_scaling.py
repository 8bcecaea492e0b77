"""Where an RLlib iteration's time goes, measured here, and what that predicts for N machines.

    python benchmarks/rllib_scaling.py --iterations 4 --cores 2 --machines 1,2,4,8,16,32,64

Trains ``--iterations`` PPO iterations (after one to warm up) with the settings of
``gofish-rllib-train`` (self-play at 4 players, ``--runners`` EnvRunners on this machine)
and takes the median wall time of one; then times the runners sampling one iteration's env
steps on their own. The difference is the learner's share: turning episodes into a batch
(connectors, GAE), the SGD epochs (in this process), and the weight sync to the runners.
``--measured ITERATION_S,SAMPLE_S,STEPS`` skips the measuring and models given figures.
Ctrl-C stops the measuring and prints the iterations timed; the model needs them all.

The model for N machines of C cores. PPO here is synchronous: the runners sample while the
learner waits, then the learner updates while the runners wait, so every core can hold a
runner:

    iteration(N) = train_batch / (N x C x per_runner) + learn

``per_runner`` is the env steps/s one EnvRunner samples (measured here), ``learn`` the
learner's share (measured here). Throughput = train_batch / iteration(N). Two tables:
one local Learner, as ``gofish-rllib-train`` runs, and one Learner a machine (RLlib's
``num_learners``, data parallel: each Learner updates on a batch of its own, its
machine's runners sample it, and every minibatch step all-reduces the gradients over a
``--network-gbps`` network with ``--latency-ms`` a hop). With one Learner, growing the
batch with N changes nothing: sampling and learning both grow with it. Ray's transport of
episodes between machines is not in the model (on one machine it is inside the sampling
time).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

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

COMMAND = "python benchmarks/rllib_scaling.py"


def build_algorithm(runners: int, envs: int, seed: int):
    """PPO with the settings of ``gofish-rllib-train`` (in a Ray session)."""
    from gofish_training import rllib_train

    args = rllib_train.Args(env_runners=runners, envs_per_runner=envs, seed=seed)
    run = rllib_train.Run(args, rllib_train.EnvSettings.from_config({}), None)
    return rllib_train.build_config(run).build_algo()


def measure(iterations: int, runners: int, envs: int, seed: int, measured: dict) -> None:
    """Fills ``measured`` as it goes (what a Ctrl-C leaves is kept): ``iterations``, the
    wall time of each iteration after a warm-up one, ``steps``, the env steps of one, and
    ``sample``, the time the runners take to sample them on their own."""
    from gofish_training.rllib_cluster import ray_session

    with (
        progress_bar(True, iterations + 2, "iterations, then sampling", transient=True) as advance,
        ray_session("", runners),
    ):
        algorithm = build_algorithm(runners, envs, seed)
        for index in range(iterations + 1):
            start = time.perf_counter()
            result = algorithm.train()
            if index:  # the first iteration warms up
                measured["iterations"].append(time.perf_counter() - start)
                measured["steps"] = result["env_runners"]["num_env_steps_sampled"]
            advance(index + 1)
        share = int(measured["steps"] / runners)
        start = time.perf_counter()
        algorithm.env_runner_group.foreach_env_runner(
            lambda runner: len(runner.sample(num_timesteps=share)), local_env_runner=False
        )
        measured["sample"] = time.perf_counter() - start
        advance(iterations + 2)
        algorithm.stop()


def main(argv: list[str] | None = None) -> None:
    install = INSTALL_TORCH + "pip install -e '.[train,rllib]'"
    require_extra(COMMAND, "rllib", RLLIB_LIBRARIES, install)
    parser = argparse.ArgumentParser(
        prog=COMMAND,
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--iterations", type=int, default=6, help="iterations to measure")
    parser.add_argument("--runners", type=int, default=2, help="EnvRunners here")
    parser.add_argument("--envs", type=int, default=32, help="envs per runner")
    parser.add_argument("--cores", type=int, default=2, help="cores of each modelled machine")
    parser.add_argument("--machines", default="1,2,4,8,16,32,64", help="N to model")
    parser.add_argument("--seed", type=int, default=0, help="the measured training run's seed")
    parser.add_argument(
        "--measured", default="", help="ITERATION_S,SAMPLE_S,STEPS: model these, measure nothing"
    )
    parser.add_argument("--network-gbps", type=float, default=1.0, help="between machines")
    parser.add_argument("--latency-ms", type=float, default=0.1, help="between machines")
    args = parser.parse_args(argv)
    for flag in ("iterations", "runners", "envs", "cores"):
        check_count(parser, f"--{flag}", getattr(args, flag))
    counts = [int(value) for value in parse_list(parser, "--machines", args.machines)]

    console = report_console()
    if args.measured:
        total, sample, steps = (
            float(value) for value in parse_list(parser, "--measured", args.measured)
        )
        measured = {"iterations": [total], "sample": sample, "steps": steps}
    else:
        measured = {"iterations": [], "sample": None, "steps": 0}
        try:
            measure(args.iterations, args.runners, args.envs, args.seed, measured)
        except KeyboardInterrupt:
            if measured["sample"] is None:  # else only Ray's shutdown was cut short
                stopped(console, args, measured)
    batch, sample = measured["steps"], measured["sample"]
    total = statistics.median(measured["iterations"])
    learn = max(total - sample, 0.0)  # the learner's update and the rest
    per_runner = batch / args.runners / sample
    console.print(
        f"{'given' if args.measured else 'measured'} ({args.runners} runners x {args.envs} "
        f"envs): an iteration of {batch:,.0f} env steps takes {total:.2f} s; sampling "
        f"them alone {sample:.2f} s ({per_runner:,.0f} env steps/s a runner); the learner's "
        f"update and the rest {learn:.2f} s"
    )
    one_learner_table(console, args, counts, batch, per_runner, learn)
    parallel_learners_table(console, args, counts, batch, per_runner, learn)


def stopped(console: Console, args, measured: dict) -> None:
    """After a Ctrl-C before the sampling was timed: the iterations timed (the model needs
    the sampling time too), and exit."""
    timed = measured["iterations"]
    if timed:
        console.print(
            f"measured ({args.runners} runners x {args.envs} envs): an iteration of "
            f"{measured['steps']:,.0f} env steps takes {statistics.median(timed):.2f} s "
            f"(median of {len(timed)}); sampling them alone: -"
        )
    done = len(timed) + (measured["sample"] is not None)
    console.print(interrupted_note(done, args.iterations + 1))
    raise SystemExit(130)


def one_learner_table(console, args, counts, batch, per_runner, learn) -> None:
    table = Table(title=f"Model: machines of {args.cores} cores, one Learner (as shipped)")
    columns = ("machines", "runners", "sampling s", "learner s", "env steps/s", "speed-up")
    for column in (*columns, "sampling share"):
        table.add_column(column, justify="right")
    base = batch / (batch / (args.cores * per_runner) + learn)
    for machines in counts:
        sampling = batch / (machines * args.cores * per_runner)
        throughput = batch / (sampling + learn)
        table.add_row(
            str(machines),
            str(machines * args.cores),
            f"{sampling:.2f}",
            f"{learn:.2f}",
            f"{throughput:,.0f}",
            f"{throughput / base:.1f}x",
            f"{100 * sampling / (sampling + learn):.0f}%",
        )
    console.print(table)
    console.print(
        f"With one Learner no number of machines passes {batch / learn:,.0f} env steps/s (an "
        f"iteration's {batch:,.0f} steps over the learner's {learn:.2f} s)."
    )


def parallel_learners_table(console, args, counts, batch, per_runner, learn) -> None:
    """One Learner a machine (RLlib's num_learners = N, data parallel): each updates on its
    own batch of ``batch`` steps, sampled by its machine's runners, and every minibatch
    step all-reduces the gradients between the machines (a ring: 2 (N - 1) / N x the
    gradients' bytes over the network, plus 2 (N - 1) x the latency)."""
    from gofish_training import rllib_train

    defaults = rllib_train.Args()
    parameters = gradient_parameters(defaults)
    steps = defaults.epochs * math.ceil(batch / defaults.minibatch)
    gigabits = args.network_gbps
    table = Table(
        title=f"Model: one Learner a machine, gradients all-reduced over {gigabits:g} Gb/s "
        f"({parameters:,} parameters, {steps} minibatch steps an iteration)"
    )
    columns = ("machines", "sampling s", "learner s", "all-reduce s", "env steps/s", "speed-up")
    for column in columns:
        table.add_column(column, justify="right")
    sampling = batch / (args.cores * per_runner)
    base = batch / (sampling + learn)
    for machines in counts:
        share = 2 * (machines - 1) / machines
        seconds = share * parameters * 4 * 8 / (gigabits * 1e9)
        seconds += 2 * (machines - 1) * args.latency_ms / 1000 if machines > 1 else 0.0
        reduce = steps * seconds
        throughput = machines * batch / (sampling + learn + reduce)
        table.add_row(
            str(machines),
            f"{sampling:.2f}",
            f"{learn:.2f}",
            f"{reduce:.2f}",
            f"{throughput:,.0f}",
            f"{throughput / base:.1f}x",
        )
    console.print(table)


def gradient_parameters(args) -> int:
    """Trainable parameters of the learner's module at the default table and layers."""
    from gofish_training.rllib_env import GoFishMultiAgentEnv
    from gofish_training.rllib_module import MaskedActorCritic

    env = GoFishMultiAgentEnv({"players": args.players})
    agent = env.possible_agents[0]
    module = MaskedActorCritic(
        observation_space=env.observation_spaces[agent],
        action_space=env.action_spaces[agent],
        model_config={"hidden": [int(size) for size in args.hidden.split(",")]},
    )
    return sum(parameter.numel() for parameter in module.parameters())


if __name__ == "__main__":
    main()
