"""Train Go Fish agents with Ray RLlib (PPO, RLlib's current API stack), then measure them
against the scripted CPUs.

    python -m gofish_training.rllib_train --opponents selfplay --iterations 100
    python -m gofish_training.rllib_train --opponents mix:easy,normal,snapshot --env-runners 4
    python -m gofish_training.rllib_train --address auto       # join `ray start --head`
    python -m gofish_training.rllib_train --resume runs/NAME   # go on after Ctrl-C or a crash

Reads top to bottom: arguments (all checked before any work), the run folder (new, or an
interrupted run's), Ray (local, or the cluster at --address), the algorithm (the env
``gofish_training.rllib_env``, the masking module, who plays which seat), the training
loop (metrics to CSV and TensorBoard, evaluations against the CPUs, checkpoints), and the
final report: the learner's win-rate table from the project's evaluation harness
(duplicate deals, 95% intervals), the learning curve, the exported module. Ctrl-C or
SIGTERM finishes the iteration in progress, saves a checkpoint and prints the command that
resumes the run; so does a crash, from the last checkpoint.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gofish_env.cli import (
    check_count,
    check_cpu_levels,
    check_output,
    parse_list,
    rules_or_error,
)
from gofish_env.rewards import RewardScheme
from gofish_training import arguments
from gofish_training.checkpoints import StopRequests, interrupts_raise
from gofish_training.evaluate import evaluate, results_json, results_table
from gofish_training.plots import plot_learning_curve
from gofish_training.rllib_agents import RLModulePlayer, export_module
from gofish_training.rllib_args import Args, build_parser
from gofish_training.rllib_cluster import ClusterError, address_problem, ray_session
from gofish_training.rllib_env import EnvSettings, GoFishMultiAgentEnv, register_env, role_of
from gofish_training.rllib_policies import LEARNER, WIN_SHARE, PolicySetup

# What a resumed run keeps: its table, its players and its network.
FIXED_ON_RESUME = (
    "players",
    "rules",
    "reward",
    "opponents",
    "learner_seats",
    "hidden",
    "snapshot_pool",
    "seed",
    "out",
    "name",
)
AT_LEAST_ONE = (
    "iterations",
    "env_runners",
    "envs_per_runner",
    "epochs",
    "snapshot_every",
    "snapshot_pool",
    "eval_every",
    "eval_deals",
    "final_deals",
    "checkpoint_every",
)
# Every float argument: what is allowed, and the check (on finite values).
FLOAT_CHECKS = {
    "learning_rate": ("a finite number > 0", lambda value: value > 0),
    "gamma": ("a number in (0, 1]", lambda value: 0 < value <= 1),
    "gae_lambda": ("a number in (0, 1]", lambda value: 0 < value <= 1),
    "ent_coef": ("a finite number >= 0", lambda value: value >= 0),
    "clip_range": ("a finite number > 0", lambda value: value > 0),
}
CHECKPOINT = "checkpoint"
STATE_FILE = "state.json"
METRICS_FILE = "metrics.csv"


def check_args(parser, args: Args) -> EnvSettings:
    """Refuse a bad argument before any work (exit code 2); the env's settings."""

    def refuse(name: str, allowed: str) -> None:
        parser.error(f"--{name.replace('_', '-')}: got {getattr(args, name)!r}; allowed: {allowed}")

    for name in AT_LEAST_ONE:
        check_count(parser, "--" + name.replace("_", "-"), getattr(args, name))
    if args.learners < 0:
        refuse("learners", "0 (the learner in this process) or more Learner actors")
    if args.train_batch < 2:
        refuse("train_batch", "an integer >= 2")
    if args.minibatch < 2 or args.minibatch > args.train_batch:
        refuse("minibatch", f"an integer from 2 to --train-batch ({args.train_batch})")
    for name, (allowed, ok) in FLOAT_CHECKS.items():
        value = getattr(args, name)
        if not (math.isfinite(value) and ok(value)):  # inf and nan refused too
            refuse(name, allowed)
    if hidden_sizes(args) is None:
        refuse("hidden", "layer sizes separated by commas, e.g. 256,256")
    check_cpu_levels(parser, "--eval-cpus", parse_list(parser, "--eval-cpus", args.eval_cpus))
    problem = address_problem(args.address)
    if problem:
        parser.error(f"--address: {problem}")
    rules_or_error(parser, args.rules, args.players)
    try:
        RewardScheme.make(args.reward)
        return EnvSettings.from_config(env_config(args))
    except ValueError as error:  # "field: what was wrong; allowed: ..."
        name, _, reason = str(error).partition(": ")
        parser.error(f"--{name.replace('_', '-')}: {reason}")


def hidden_sizes(args: Args) -> list[int] | None:
    sizes = args.hidden.split(",")
    if not all(size.strip().isdigit() and int(size) > 0 for size in sizes):
        return None
    return [int(size) for size in sizes]


def env_config(args: Args) -> dict:
    """The env's ``env_config`` (JSON-friendly: RLlib ships it to every EnvRunner)."""
    config = {"rules": args.rules, "players": args.players}
    config.update(reward=args.reward, opponents=args.opponents)
    if args.learner_seats:
        config["learner_seats"] = args.learner_seats
    return config


@dataclass
class Run:
    """Where a run lives and how far it got (``state.json``)."""

    args: Args
    settings: EnvSettings
    folder: Path
    state: dict = field(default_factory=dict)
    resumed: bool = False
    checkpoint_iteration: int | None = None  # of the checkpoint on disk; None: none yet

    @property
    def kept(self) -> str:
        """What a stop or a crash leaves to go on from, for the message that says so."""
        if self.checkpoint_iteration is None:
            return "no checkpoint yet: --resume trains again from the beginning, in this folder"
        return f"the checkpoint at iteration {self.checkpoint_iteration} is kept"


def fresh_state() -> dict:
    return {"iteration": 0, "history": [], "seconds": 0.0, "status": "training"}


def open_run(argv: list[str] | None) -> Run:
    """A new run folder, or the run that ``--resume FOLDER`` names with the arguments given
    now overriding its own (except ``FIXED_ON_RESUME``)."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = Args(**vars(parser.parse_args(argv)))
    if args.resume:
        folder = Path(args.resume)
        has_checkpoint = (folder / CHECKPOINT).is_dir()
        if not (folder / "args.json").is_file():
            parser.error(f"--resume: {folder} is not an RLlib training run (no args.json)")
        if has_checkpoint and not (folder / STATE_FILE).is_file():
            parser.error(f"--resume: {folder} has a checkpoint but no {STATE_FILE} to go with it")
        # A run saved before an argument existed ran with that argument's default.
        saved = dataclasses.asdict(Args()) | json.loads((folder / "args.json").read_text())
        given = vars(build_parser(suppress_defaults=True).parse_args(argv))
        given.pop("resume")
        for name in FIXED_ON_RESUME:
            if name in given and given[name] != saved[name]:
                flag = "--" + name.replace("_", "-")
                parser.error(f"{flag}: a resumed run keeps its {flag} ({saved[name]!r})")
        args = Args(**{**saved, **given, "resume": ""})
        settings = check_args(parser, args)
        if has_checkpoint:
            state = json.loads((folder / STATE_FILE).read_text())
        else:  # stopped before its first checkpoint: training starts again from the beginning
            state = fresh_state()
        done = state["iteration"]
        if args.iterations < done:
            parser.error(
                f"--iterations: got {args.iterations}; allowed: at least the {done} iterations "
                f"{folder} has done"
            )
        if state["status"] != "training" and args.iterations > done:
            state["status"] = "training"  # a trained or finished run trains on to the new count
        run = Run(args, settings, folder, state, resumed=True)
        run.checkpoint_iteration = done if has_checkpoint else None
        if state["status"] != "finished":  # args.json says what the run goes on with
            (folder / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
        return run
    settings = check_args(parser, args)
    name = args.name or f"rllib_{args.rules}{args.players}__{args.opponents}__{args.seed}"
    name += "__" + time.strftime("%Y%m%d-%H%M%S")
    folder = Path(args.out) / name.replace(":", "-").replace(",", "+").replace("/", "-")
    if folder.exists():
        parser.error(f"--name: {folder} exists already; give another --name or --resume it")
    check_output(parser, "--out", args.out, directory=True)
    folder.mkdir(parents=True)
    (folder / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
    run = Run(args, settings, folder, fresh_state())
    write_state(run)  # from here on --resume finds the run, whenever it stops
    return run


def build_config(run: Run):
    """The PPO configuration: env, runners, modules and who plays which seat."""
    from ray.rllib.algorithms.ppo import PPOConfig

    args = run.args
    setup = PolicySetup(run.settings.plan, args.snapshot_pool, args.seed)
    return (
        PPOConfig()
        .environment(register_env(), env_config=env_config(args))
        .env_runners(
            num_env_runners=args.env_runners,
            num_envs_per_env_runner=args.envs_per_runner,
            # RLlib's default (True) converts every finished episode again at every vector
            # step of a sample() call: quadratic in the episodes per call (short card games
            # make many). Lists are what the learner connectors take anyway.
            episodes_to_numpy=False,
            # RLlib drops samples that take over 60 s: on a busy machine an iteration would
            # then train on nothing.
            sample_timeout_s=None,
        )
        # A runner that dies (its process killed, its node lost) fails the run, which says
        # how to resume from the last checkpoint. RLlib's default restarts it instead, and
        # the iteration it died in trains on what the others sampled: nothing, with one.
        .fault_tolerance(restart_failed_env_runners=False, ignore_env_runner_failures=False)
        .learners(num_learners=args.learners)
        .multi_agent(**setup.multi_agent_kwargs())
        .rl_module(rl_module_spec=setup.module_spec({"hidden": hidden_sizes(args)}))
        .training(
            train_batch_size_per_learner=args.train_batch,
            minibatch_size=args.minibatch,
            num_epochs=args.epochs,
            lr=args.learning_rate,
            gamma=args.gamma,
            lambda_=args.gae_lambda,
            entropy_coeff=args.ent_coef,
            clip_param=args.clip_range,
        )
        .callbacks(setup.callbacks(args.snapshot_every))
        .debugging(seed=args.seed)
    )


def learner_spec(config: Any, args: Args) -> Any:
    """The learner's module spec, with the env's spaces (to build copies of it here)."""
    probe = GoFishMultiAgentEnv(env_config(args))
    agent = probe.possible_agents[0]
    return dataclasses.replace(
        config.rl_module_spec.rl_module_specs[LEARNER],
        observation_space=probe.observation_spaces[agent],
        action_space=probe.action_spaces[agent],
    )


def learner_player(algorithm: Any, module_spec: Any) -> RLModulePlayer:
    """The learner as it is now, as a seat player for the evaluation harness."""
    module = module_spec.build()
    module.set_state(algorithm.learner_group.get_weights(module_ids=[LEARNER])[LEARNER])
    module.eval()
    return RLModulePlayer(module, deterministic=True)


def count(value: Any) -> int:
    """An RLlib counter as an int (RLlib reports NaN for what an iteration did not see)."""
    return 0 if value is None or math.isnan(value) else int(value)


class MetricsLog:
    """One row per iteration in ``metrics.csv``, the same scalars in TensorBoard."""

    COLUMNS = (
        "iteration",
        "env_steps",
        "env_steps_sampled",
        "iteration_seconds",
        "sample_seconds",
        "learner_return_per_seat",
        "learner_win_share",
        "episode_len_mean",
        "policy_loss",
        "vf_loss",
        "entropy",
        "kl",
    )

    def __init__(self, folder: Path, iteration: int = 0):
        from tensorboardX import SummaryWriter

        self.path = folder / METRICS_FILE
        text = self.path.read_text() if self.path.exists() else ""
        rows = text.splitlines()
        if not text.endswith("\n"):  # a row a kill cut short in its write: its numbers too
            rows = rows[:-1]
        # Rows past the checkpoint a resumed run starts from are played again.
        kept = [row for row in rows[1:] if int(row.split(",")[0]) <= iteration]
        self.path.write_text("\n".join([",".join(self.COLUMNS), *kept]) + "\n")
        self.writer = SummaryWriter(str(folder / "tensorboard"))

    @staticmethod
    def row(result: dict, seconds: float) -> dict:
        runners = result.get("env_runners", {})
        learner = result.get("learners", {}).get(LEARNER, {})
        timers = result.get("timers", {})
        return {
            "iteration": result["training_iteration"],
            "env_steps": count(runners.get("num_env_steps_sampled_lifetime")),
            "env_steps_sampled": count(runners.get("num_env_steps_sampled")),
            "iteration_seconds": round(seconds, 3),
            "sample_seconds": round(timers.get("env_runner_sampling_timer", float("nan")), 3),
            "learner_return_per_seat": learner_return_per_seat(runners),
            "learner_win_share": runners.get(WIN_SHARE, float("nan")),
            "episode_len_mean": runners.get("episode_len_mean", float("nan")),
            "policy_loss": learner.get("policy_loss", float("nan")),
            "vf_loss": learner.get("vf_loss", float("nan")),
            "entropy": learner.get("entropy", float("nan")),
            "kl": learner.get("mean_kl_loss", float("nan")),
        }

    def write(self, row: dict) -> None:
        """Appends ``row`` (NaN: what the iteration did not measure) and logs it."""
        with self.path.open("a", newline="") as handle:
            csv.DictWriter(handle, self.COLUMNS).writerow(row)
        for key, value in row.items():
            if key not in ("iteration", "env_steps"):
                self.writer.add_scalar(f"train/{key}", float(value), row["env_steps"])
        self.writer.flush()

    def write_evaluation(self, env_steps: int, results: list) -> None:
        for result in results:
            self.writer.add_scalar(f"eval/win_rate_vs_{result.cpu}", result.win_rate, env_steps)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


def learner_return_per_seat(runners: dict) -> float:
    """The learner's mean return per seat it held: the mean over its seats (``learner_S``
    agents) of RLlib's mean return of each. (RLlib's return of the learner module sums its
    seats of a game: with self-play, every catch of the game.) A seat that finished no
    episode in the iteration (RLlib gives it NaN) is left out; NaN when no seat finished."""
    returns = runners.get("agent_episode_returns_mean", {})
    seats = [
        value
        for agent, value in returns.items()
        if role_of(agent) == LEARNER and not math.isnan(value)
    ]
    return sum(seats) / len(seats) if seats else float("nan")


class TrainingFailed(RuntimeError):
    """Training cannot go on; the message says why, in a line."""


def check_iteration(algorithm: Any, row: dict) -> None:
    """Refuse an iteration that sampled nothing (it trained nothing) or left the learner
    with weights that are not finite (every iteration after it would be NaN too, and the
    evaluations would play a broken network), before it is checkpointed."""
    if row["env_steps_sampled"] == 0:
        raise TrainingFailed(
            f"iteration {row['iteration']} sampled no env steps (an EnvRunner lost?)"
        )
    weights = algorithm.learner_group.get_weights(module_ids=[LEARNER])[LEARNER]
    if not all(torch.isfinite(torch.as_tensor(value)).all() for value in tensors(weights)):
        raise TrainingFailed(
            f"the learner's weights are not finite (NaN or inf) after iteration "
            f"{row['iteration']}: training diverged; a smaller --learning-rate may help"
        )


def tensors(state: Any):
    """The arrays of a (nested) module state."""
    if isinstance(state, dict):
        for value in state.values():
            yield from tensors(value)
    else:
        yield state


def save_checkpoint(run: Run, algorithm: Any) -> None:
    """The algorithm (networks, optimizer, snapshots, RLlib's counters), then ``state.json``
    last: a crash at any moment leaves the previous checkpoint whole."""
    folder = run.folder
    fresh, old = folder / f"{CHECKPOINT}.partial", folder / f"{CHECKPOINT}.old"
    for leftover in (fresh, old):
        if leftover.exists():
            _remove_tree(leftover)
    algorithm.save_to_path(fresh.resolve())
    if (folder / CHECKPOINT).exists():
        (folder / CHECKPOINT).rename(old)
    fresh.rename(folder / CHECKPOINT)
    write_state(run)
    run.checkpoint_iteration = run.state["iteration"]
    if old.exists():
        _remove_tree(old)


def write_state(run: Run) -> None:
    partial = run.folder / f"{STATE_FILE}.partial"
    partial.write_text(json.dumps(run.state, indent=2))
    partial.replace(run.folder / STATE_FILE)


def _remove_tree(path: Path) -> None:
    import shutil

    shutil.rmtree(path)


def resume_command(folder: Path) -> str:
    return arguments.resume_command("gofish_training.rllib_train", folder)


def train(run: Run, algorithm: Any, module_spec: Any, stop: StopRequests, console: Console) -> None:
    """Iterations up to ``--iterations``: metrics every iteration, evaluations and
    checkpoints on their schedule; a stop request ends after the iteration in progress."""
    args, state = run.args, run.state
    metrics = MetricsLog(run.folder, state["iteration"])
    columns = (
        TextColumn("training"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[status]}"),
    )
    progress = Progress(*columns, console=Console(stderr=True), disable=not args.progress)
    try:
        with progress:
            task = progress.add_task(
                "train", total=args.iterations, completed=state["iteration"], status=""
            )
            while state["iteration"] < args.iterations and not stop.requested:
                start = time.perf_counter()
                result = algorithm.train()
                seconds = time.perf_counter() - start
                state["iteration"] = int(result["training_iteration"])
                state["seconds"] += seconds
                row = metrics.row(result, seconds)
                state["env_steps"] = row["env_steps"]
                metrics.write(row)
                check_iteration(algorithm, row)
                if (
                    state["iteration"] % args.eval_every == 0
                    or state["iteration"] == args.iterations
                ):
                    evaluation_entry(run, algorithm, module_spec, metrics, row["env_steps"])
                if state["iteration"] % args.checkpoint_every == 0:
                    save_checkpoint(run, algorithm)
                status = (
                    f"{row['env_steps_sampled'] / seconds:,.0f} env steps/s (all in)  "
                    f"learner return per seat {row['learner_return_per_seat']:.2f}"
                )
                progress.update(task, completed=state["iteration"], status=status)
    finally:
        metrics.close()
    save_checkpoint(run, algorithm)
    if stop.requested:
        console.print(
            f"Stopped ({stop.signal_name}): saved the run at iteration {state['iteration']} of "
            f"{args.iterations} in {run.folder}. Go on with:\n  {resume_command(run.folder)}"
        )
        raise SystemExit(128 + stop.signum)  # 130 for Ctrl-C, 143 for SIGTERM


def evaluation_entry(run: Run, algorithm: Any, module_spec: Any, metrics: MetricsLog, steps: int):
    """The learner against each CPU level, on the harness's duplicate deals."""
    args = run.args
    start = time.perf_counter()
    player = learner_player(algorithm, module_spec)
    results = evaluate(
        player, args.eval_cpus.split(","), run.settings.rules, args.eval_deals, args.seed
    )
    run.state["history"].append({"timesteps": steps, "results": results_json(results)})
    run.state["eval_seconds"] = run.state.get("eval_seconds", 0.0) + time.perf_counter() - start
    metrics.write_evaluation(steps, results)


def final_report(run: Run, algorithm: Any, module_spec: Any, console: Console) -> dict:
    """The larger evaluation, the learning curve and the exported learner."""
    args, state = run.args, run.state
    player = learner_player(algorithm, module_spec)
    final = evaluate(
        player,
        args.eval_cpus.split(","),
        run.settings.rules,
        args.final_deals,
        args.seed + 1,
        args.progress,
    )
    module_folder = export_module(player.module, run.folder / "module", run.settings.rules)
    report = {
        "args": dataclasses.asdict(args),
        "rules": run.settings.rules.describe(),
        "iterations": state["iteration"],
        "env_steps": state.get("env_steps", 0),
        "train_seconds": state["seconds"],
        "final": results_json(final),
        "history": state["history"],
    }
    (run.folder / "evaluation.json").write_text(json.dumps(report, indent=2))
    plot = plot_learning_curve(
        state["history"],
        run.folder / "learning_curve.png",
        run.folder.name,
        steps="env steps sampled by RLlib",
    )
    state["status"] = "finished"
    write_state(run)
    console.print(
        results_table(final, f"{run.folder.name}: {args.final_deals} duplicate deals per level")
    )
    console.print(
        f"Trained {state['iteration']} iterations, {state.get('env_steps', 0):,} env steps in "
        f"{state['seconds'] / 60:.1f} min.\nModule: {module_folder}\nLearning curve: {plot}"
    )
    return report


def main(argv: list[str] | None = None) -> dict:
    run = open_run(argv)
    args, state = run.args, run.state
    console = Console(soft_wrap=True)
    if state["status"] == "finished":
        console.print(
            f"{run.folder} finished already ({state['iteration']} iterations): nothing to do. "
            f"To train on, give --iterations above {state['iteration']}."
        )
        return json.loads((run.folder / "evaluation.json").read_text())
    torch.set_num_threads(1)  # the learner's small updates; runners' cores stay free
    algorithm = None
    try:
        with ray_session(args.address, args.env_runners + args.learners) as resources:
            learners = f"{args.learners} Learners" if args.learners else "the Learner here"
            console.print(
                f"Ray: {resources.get('CPU', 0):g} CPUs; {args.env_runners} EnvRunners x "
                f"{args.envs_per_runner} games, {learners} -> {run.folder}"
            )
            try:
                config = build_config(run)
                algorithm = config.build_algo()
                module_spec = learner_spec(config, args)
                if run.checkpoint_iteration is not None:
                    algorithm.restore_from_path((run.folder / CHECKPOINT).resolve())
                    console.print(f"Resuming {run.folder} at iteration {state['iteration']}.")
                elif run.resumed:
                    console.print(f"Resuming {run.folder}: no checkpoint, from the beginning.")
                with StopRequests() as stop:
                    if state["status"] == "training":
                        train(run, algorithm, module_spec, stop, console)
                        state["status"] = "trained"
                        write_state(run)
                stop.interrupt_if_requested()
                with interrupts_raise():  # a stop here loses only the report, made again
                    return final_report(run, algorithm, module_spec, console)
            except Exception as error:  # not SystemExit, a stop's own exit
                (run.folder / "error.log").write_text(traceback.format_exc())
                reason = f"{error}. " if isinstance(error, TrainingFailed) else ""
                console.print(
                    f"[red]Training failed: {escape(reason)}The traceback is in "
                    f"{run.folder / 'error.log'}; {escape(run.kept)}. Go on with:[/red]\n  "
                    f"{escape(resume_command(run.folder))}"
                )
                raise SystemExit(1) from None
            finally:
                if algorithm is not None:
                    algorithm.stop()
    except KeyboardInterrupt:  # a second Ctrl-C, or one while Ray or RLlib starts
        if not run.resumed and run.checkpoint_iteration is None and state["iteration"] == 0:
            _remove_tree(run.folder)  # nothing trained: nothing to go on from
            console.print("\nInterrupted before training began; nothing to keep.")
        else:
            console.print(
                f"\nInterrupted; {escape(run.kept)}. Go on with:\n  "
                f"{escape(resume_command(run.folder))}"
            )
        raise SystemExit(130) from None
    except ClusterError as error:
        if not run.resumed:  # refused before anything ran: no run to keep
            _remove_tree(run.folder)
        console.print(f"[red]{escape(str(error))}[/red]")
        raise SystemExit(2) from None


def cli() -> None:
    """The ``gofish-rllib-train`` command. It runs with a fixed ``PYTHONHASHSEED`` (starting
    itself again with one if none is set): RLlib orders a train batch's samples by sets of
    agent ids, whose order follows Python's per-process string hashing, so without it the
    same seed would train a different network each run. Ray's local workers inherit it."""
    if "PYTHONHASHSEED" not in os.environ:
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, "-m", __spec__.name, *sys.argv[1:]])
    main()


if __name__ == "__main__":
    cli()
