"""Where training time goes, for each way of running the environments (``--vec-env``).

    python benchmarks/training_speed.py --timesteps 100000 --vec-envs subproc,dummy
    python benchmarks/training_speed.py --timesteps 30000 --vec-envs dummy,vector --opponents expert

Runs ``python -m gofish_training.train`` at its default settings (network, PPO; opponents
too unless ``--opponents`` names others) for ``--timesteps`` steps once per vec env, one
after the other, and prints for each: learner steps per second of training, and the share
of training time spent waiting for the environments (the opponents' moves included), as
``TimedMaskedVecEnv`` measures it. Evaluations are kept minimal and are not training time.
Each run shows training's own progress bar. Ctrl-C stops the run under way and prints the
table of the runs done. Needs the train extra.
"""

from __future__ import annotations

import argparse
import tempfile

from rich.table import Table

from gofish_env.cli import (
    HelpFormatter,
    check_count,
    interrupted_note,
    parse_list,
    report_console,
    require_extra,
)
from gofish_training import INSTALL_TORCH, TRAIN_LIBRARIES

COMMAND = "python benchmarks/training_speed.py"


def main(argv: list[str] | None = None) -> None:
    install = INSTALL_TORCH + "pip install -e '.[train]'"
    require_extra(COMMAND, "train", TRAIN_LIBRARIES, install)
    from gofish_training import train

    parser = argparse.ArgumentParser(
        prog=COMMAND,
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--timesteps", type=int, default=100_000, help="steps per run")
    parser.add_argument(
        "--vec-envs",
        default=",".join(train.VEC_ENVS),
        help="comma-separated --vec-env values of gofish_training.train",
    )
    parser.add_argument("--envs", type=int, default=2, help="parallel environments")
    parser.add_argument(
        "--opponents",
        default=train.Args.opponents,
        help="--opponents of gofish_training.train (a CPU level or mix:LEVEL,...)",
    )
    args = parser.parse_args(argv)

    # Every argument is checked before the first run.
    check_count(parser, "--timesteps", args.timesteps)
    check_count(parser, "--envs", args.envs)
    vec_envs = parse_list(parser, "--vec-envs", args.vec_envs)
    for vec_env in vec_envs:
        if vec_env not in train.VEC_ENVS:
            parser.error(
                f"--vec-envs: unknown vec env {vec_env!r}; allowed: {', '.join(train.VEC_ENVS)}"
            )

    console = report_console()
    rows = []
    interrupted = False
    try:
        with tempfile.TemporaryDirectory() as out:
            for vec_env in vec_envs:
                console.print(f"training {args.timesteps:,} steps with --vec-env {vec_env} ...")
                report = train.main(
                    [
                        f"--timesteps={args.timesteps}",
                        f"--envs={args.envs}",
                        f"--vec-env={vec_env}",
                        f"--opponents={args.opponents}",
                        f"--eval-every={10 * args.timesteps}",
                        "--eval-deals=1",
                        "--final-deals=1",
                        "--eval-cpus=random",
                        f"--checkpoint-every={10 * args.timesteps}",
                        f"--out={out}",
                    ]
                )
                rows.append((vec_env, report["timing"]))
    except KeyboardInterrupt:
        interrupted = True
    except SystemExit as stop:  # training's own exit, 130 after a Ctrl-C
        if stop.code != 130:
            raise
        console.print("that run's folder was a temporary one, now removed: nothing to resume")
        interrupted = True
    if not rows and interrupted:
        console.print(interrupted_note(0, len(vec_envs), "training runs"))
        raise SystemExit(130)

    table = Table(
        title=f"Training speed ({args.timesteps:,} steps, {args.envs} envs, "
        f"opponents {args.opponents})"
    )
    for column in ("vec env", "steps/s", "training min", "environments", "network"):
        table.add_column(column, justify="right")
    for vec_env, timing in rows:
        share = timing["env_fraction"]
        table.add_row(
            vec_env,
            f"{timing['steps_per_second']:,.0f}",
            f"{timing['train_seconds'] / 60:.1f}",
            f"{100 * share:.0f}%",
            f"{100 * (1 - share):.0f}%",
        )
    console.print(table)
    console.print(
        "markdown: "
        + " | ".join(
            f"{v} {t['steps_per_second']:,.0f} steps/s, env {100 * t['env_fraction']:.0f}%"
            for v, t in rows
        )
    )
    if interrupted:
        console.print(interrupted_note(len(rows), len(vec_envs), "training runs"))
        raise SystemExit(130)


if __name__ == "__main__":
    main()
