"""Where an RLlib iteration's time goes, measured here, and what that predicts for N machines.

    python benchmarks/rllib_scaling.py --iterations 6 --cores 2 --machines 1,2,4,8,16,32,64

Trains ``--iterations`` PPO iterations (after one to warm up) with the settings of
``gofish-rllib-train`` (self-play at 4 players, ``--runners`` EnvRunners on this machine)
and takes the median wall time of one; then times the runners sampling one iteration's env
steps on their own. The difference is the learner's share: turning episodes into a batch
(connectors, GAE), the SGD epochs (in this process), and the weight sync to the runners.

The model for N machines of C cores (PPO is synchronous: sample, then learn):

    iteration(N) = train_batch / (runners(N) x per_runner) + learn
    runners(N)   = N x C - 1     (the head keeps a core for the learner)

``per_runner`` is the env steps/s one EnvRunner samples (measured here), ``learn`` is
measured here and does not shrink with N (one local Learner). Throughput = train_batch /
iteration(N). The second table is the same with the batch grown with the runners
(``train_batch x runners(N) / runners here``: each runner samples as much as here), where
the single learner's share grows with N. Ray's transport of episodes between machines is
not in the model (on one machine it is inside the sampling time).
"""

from __future__ import annotations

import argparse
import statistics
import time

from rich.console import Console
from rich.table import Table

from gofish_env.cli import check_count, parse_list


def measure(iterations: int, runners: int, envs: int, seed: int) -> dict:
    """Median wall time of an iteration (after a warm-up one), and the time the runners
    take to sample one iteration's env steps on their own."""
    from gofish_training import rllib_train
    from gofish_training.rllib_cluster import ray_session

    args = rllib_train.Args(env_runners=runners, envs_per_runner=envs, seed=seed)
    run = rllib_train.Run(args, rllib_train.EnvSettings.from_config({}), None)
    with ray_session("", runners):
        algorithm = rllib_train.build_config(run).build_algo()
        totals, batch = [], 0
        for index in range(iterations + 1):
            start = time.perf_counter()
            result = algorithm.train()
            if index:  # the first iteration warms up
                totals.append(time.perf_counter() - start)
                batch = result["env_runners"]["num_env_steps_sampled"]
        share = int(batch / runners)
        start = time.perf_counter()
        algorithm.env_runner_group.foreach_env_runner(
            lambda runner: len(runner.sample(num_timesteps=share)), local_env_runner=False
        )
        sample = time.perf_counter() - start
        algorithm.stop()
    return {"steps": batch, "total": statistics.median(totals), "sample": sample}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--iterations", type=int, default=6, help="iterations to measure")
    parser.add_argument("--runners", type=int, default=2, help="EnvRunners here")
    parser.add_argument("--envs", type=int, default=32, help="envs per runner")
    parser.add_argument("--cores", type=int, default=2, help="cores of each modelled machine")
    parser.add_argument("--machines", default="1,2,4,8,16,32,64", help="N to model")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for flag in ("iterations", "runners", "envs", "cores"):
        check_count(parser, f"--{flag}", getattr(args, flag))
    counts = [int(value) for value in parse_list(parser, "--machines", args.machines)]

    console = Console()
    measured = measure(args.iterations, args.runners, args.envs, args.seed)
    batch, sample = measured["steps"], measured["sample"]
    learn = max(measured["total"] - sample, 0.0)  # the learner's update and the rest
    per_runner = batch / args.runners / sample
    console.print(
        f"measured ({args.runners} runners x {args.envs} envs): an iteration of {batch:,.0f} "
        f"env steps takes {measured['total']:.2f} s (median of {args.iterations}); sampling "
        f"them alone {sample:.2f} s ({per_runner:,.0f} env steps/s a runner); the learner's "
        f"update and the rest {learn:.2f} s"
    )
    for grow in (False, True):
        title = "batch grown with the runners" if grow else f"fixed batch of {batch:,.0f}"
        table = Table(title=f"Model, machines of {args.cores} cores, {title}")
        for column in (
            "machines",
            "runners",
            "sampling s",
            "learner s",
            "env steps/s",
            "speed-up",
            "sampling share",
        ):
            table.add_column(column, justify="right")
        base = None
        for machines in counts:
            runners = max(machines * args.cores - 1, 1)
            size = batch * runners / args.runners if grow else batch
            sampling = size / (runners * per_runner)
            learning = learn * size / batch
            throughput = size / (sampling + learning)
            base = base or throughput
            table.add_row(
                str(machines),
                str(runners),
                f"{sampling:.2f}",
                f"{learning:.2f}",
                f"{throughput:,.0f}",
                f"{throughput / base:.1f}x",
                f"{100 * sampling / (sampling + learning):.0f}%",
            )
        console.print(table)


if __name__ == "__main__":
    main()
