"""Where an RLlib iteration's time goes, measured here, and what that predicts for N machines.

    python benchmarks/rllib_scaling.py --iterations 6 --cores 2 --machines 1,2,4,8,16,32,64

Trains ``--iterations`` PPO iterations with the settings of ``gofish-rllib-train`` (self-play
at 4 players, ``--env-runners`` runners on this machine), and reads RLlib's own timers for
each: sampling (the EnvRunners, in parallel), the learner's update (the connectors that
turn episodes into a batch, GAE, and the SGD epochs, in this process), the weight sync to
the runners, and the rest of the iteration. The first iteration is left out (warm-up).

The model for N machines of C cores (PPO is synchronous: sample, then learn):

    iteration(N) = train_batch / (runners(N) x per_runner) + learn + rest
    runners(N)   = N x C - 1     (the head keeps a core for the learner)

``per_runner`` is the env steps/s one EnvRunner samples (measured here: all steps sampled /
runners / sampling time), ``learn`` and ``rest`` are measured here and do not shrink with
N (one local Learner). Throughput = train_batch / iteration(N). The second table is the
same with the batch grown with the runners (``train_batch x runners(N) / runners here``:
each runner samples as much as here), where the single learner's share grows with N. Ray's
transport of episodes between machines is not in the model (on one machine it is inside
the sampling time).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from rich.console import Console
from rich.table import Table

from gofish_env.cli import check_count, parse_list


def measure(iterations: int, runners: int, envs: int, seed: int) -> dict:
    import ray

    from gofish_training import rllib_train

    args = rllib_train.Args(env_runners=runners, envs_per_runner=envs, seed=seed)
    run = rllib_train.Run(args, rllib_train.EnvSettings.from_config({}), None)
    ray.init(
        num_cpus=max(os.cpu_count() or 1, runners), include_dashboard=False, log_to_driver=False
    )
    algorithm = rllib_train.build_config(run).build_algo()
    rows = []
    try:
        for _ in range(iterations):
            start = time.perf_counter()
            result = algorithm.train()
            total = time.perf_counter() - start
            timers = result["timers"]
            rows.append(
                {
                    # Each timer is RLlib's smoothed value; the first iteration's is exact.
                    "steps": result["env_runners"]["num_env_steps_sampled"],
                    "total": total,
                    "sample": timers["env_runner_sampling_timer"],
                    "learn": timers["learner_update_timer"],
                    "sync": timers.get("synch_weights", 0.0),
                }
            )
    finally:
        algorithm.stop()
        ray.shutdown()
    kept = rows[1:] or rows
    return {key: statistics.median(row[key] for row in kept) for key in kept[0]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--iterations", type=int, default=6, help="iterations to measure")
    parser.add_argument("--runners", type=int, default=2, help="EnvRunners here")
    parser.add_argument("--envs", type=int, default=16, help="envs per runner")
    parser.add_argument("--cores", type=int, default=2, help="cores of each modelled machine")
    parser.add_argument("--machines", default="1,2,4,8,16,32,64", help="N to model")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for flag in ("iterations", "runners", "envs", "cores"):
        check_count(parser, f"--{flag}", getattr(args, flag))
    counts = [int(value) for value in parse_list(parser, "--machines", args.machines)]

    console = Console()
    measured = measure(args.iterations, args.runners, args.envs, args.seed)
    batch, sample, learn = measured["steps"], measured["sample"], measured["learn"]
    rest = max(measured["total"] - sample - learn, 0.0)
    per_runner = batch / args.runners / sample
    console.print(
        f"measured ({args.runners} runners x {args.envs} envs, median of iterations 2..): "
        f"batch {batch:,.0f} env steps; sampling {sample:.2f} s ({per_runner:,.0f} env "
        f"steps/s a runner); learner update {learn:.2f} s; weight sync {measured['sync']:.3f}"
        f" s; rest {rest:.2f} s; iteration {measured['total']:.2f} s"
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
            learning = learn * size / batch + rest
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
