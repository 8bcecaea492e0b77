"""Train a MaskablePPO agent to play Go Fish, then measure it against the scripted CPUs.

    python -m gofish_training.train                             # the README's main job
    python -m gofish_training.train --opponents selfplay --timesteps 2000000 --envs 2
    python -m gofish_training.train --resume runs/NAME          # go on after Ctrl-C or a crash

Reads top to bottom: arguments (all checked before any work), the run folder (new, or the
saved state of an interrupted run), seeding, environments, the model, imitation of a CPU
(optional), callbacks (evaluation against each CPU level, self-play snapshots, the
resumable state), training, and the final report (model, evaluation JSON, learning-curve
PNG, the win-rate table). Ctrl-C (SIGINT) or SIGTERM stops at the next step, saves the
run and prints the command that resumes it. TensorBoard logs go to OUT/NAME/tensorboard.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import math
import multiprocessing
import random
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from rich.markup import escape
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.logger import Logger, TensorBoardOutputFormat
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv
from torch.utils.tensorboard import SummaryWriter

from gofish_env.agent_files import AgentFileError, check_agent_rules
from gofish_env.cli import (
    NUMPY_SEEDS,
    check_output,
    check_seed,
    first_missing_folder,
    progress_bar,
    remove_empty_folders,
    rules_or_error,
)
from gofish_env.cpus import CPU_LEVELS
from gofish_env.evaluation.batched import COMPILED
from gofish_env.gym_env import GoFishEnv
from gofish_env.master import (
    BY_TABLE,
    default_pool_limit,
    default_rollouts,
    default_simulations,
)
from gofish_env.rules import Rules
from gofish_training import arguments
from gofish_training.agents import load_model
from gofish_training.checkpoints import (
    RunState,
    StopRequests,
    exit_status,
    has_run_state,
    interrupts_raise,
    load_run_state,
    save_model,
    save_run_state,
)
from gofish_training.evaluate import evaluate, results_json, results_table
from gofish_training.imitation import RankRelabelling, collect_in_parts, pretrain
from gofish_training.plots import plot_learning_curve
from gofish_training.policies import AskScoringPolicy
from gofish_training.train_args import SCORING, Args, build_parser
from gofish_training.vec_env import (
    CheckedSubprocVecEnv,
    EnvFailure,
    ReportEnvErrors,
    TimedMaskedVecEnv,
    VectorVecEnv,
    ignore_interrupts_in_worker,
)

# The imitation's games, saved in parts while they are played (a stop keeps them).
DEMONSTRATIONS = "demonstrations"
# Self-play's snapshots of the learner, in the run folder.
SNAPSHOTS = "snapshots"
POLICIES = {"mlp": "MlpPolicy", "ask-scoring": AskScoringPolicy}
VEC_ENVS = {"dummy": DummyVecEnv, "subproc": CheckedSubprocVecEnv, "vector": VectorVecEnv}
# What a resumed run keeps: its table, its network and its place on disk.
FIXED_ON_RESUME = (
    "players",
    "rules",
    "policy",
    "net_arch",
    "imitate",
    "imitate_games",
    "imitate_epochs",
    "imitate_temperature",
    "imitate_relabel",
    "imitate_rollouts",
    "imitate_pool_limit",
    "out",
    "name",
)
# The float arguments: what a good value is (each must be finite too), and how it is said.
NUMBERS = {
    "learning_rate": (lambda value: value > 0, "a finite number > 0"),
    "gamma": (lambda value: 0 < value <= 1, "a number in (0, 1]"),
    "ent_coef": (lambda value: value >= 0, "a finite number >= 0"),
    "target_kl": (lambda value: value >= 0, "a finite number >= 0"),
    "clip_range": (lambda value: value > 0, "a finite number > 0"),
    "imitate_temperature": (
        lambda value: value >= 0,
        "0 (the CPU's asks) or a finite number > 0 (its scores)",
    ),
}
# Settings of the imitation: refused without --imitate (as --imitate-rollouts is without
# master), rather than silently ignored.
IMITATION_SETTINGS = (
    "imitate_games",
    "imitate_epochs",
    "imitate_temperature",
    "imitate_relabel",
    "imitate_workers",
)
AT_LEAST_ONE = (
    "timesteps",
    "envs",
    "threads",
    "n_epochs",
    "eval_every",
    "eval_deals",
    "final_deals",
    "checkpoint_every",
    "snapshot_every",
    "snapshot_pool",
    "imitate_workers",
)


def parse_args(argv: list[str] | None = None) -> Args:
    """The arguments, every one checked (``check_args``); a bad one exits with code 2."""
    parser = build_parser()
    args = Args(**vars(parser.parse_args(argv)))
    check_args(parser, args)
    return args


def check_args(parser: argparse.ArgumentParser, args: Args) -> Rules:
    """Refuse a bad argument before any work, as argparse does (exit code 2), and return
    the rules of the table."""

    def refuse(name: str, allowed: str) -> None:
        flag = "--" + name.replace("_", "-")
        parser.error(f"{flag}: got {getattr(args, name)!r}; allowed: {allowed}")

    for name in AT_LEAST_ONE:
        if getattr(args, name) < 1:
            refuse(name, "an integer >= 1")
    if args.n_steps < 2:
        refuse("n_steps", "an integer >= 2")
    rollout = args.n_steps * args.envs
    if not 2 <= args.batch_size <= rollout:  # above, PPO would quietly train on one batch
        refuse(
            "batch_size", f"an integer from 2 to a rollout's steps, --n-steps x --envs ({rollout})"
        )
    check_seed(parser, args.seed, limit=NUMPY_SEEDS)  # SB3 seeds NumPy
    for name, (good, allowed) in NUMBERS.items():  # inf and nan too
        value = getattr(args, name)
        if not (math.isfinite(value) and good(value)):
            refuse(name, allowed)
    defaults = Args()
    for name in IMITATION_SETTINGS:
        if not args.imitate and getattr(args, name) != getattr(defaults, name):
            flag = "--" + name.replace("_", "-")
            parser.error(f"{flag}: a setting of the imitation; allowed with --imitate LEVEL")
    sizes = args.net_arch.split(",")
    if not all(size.strip().isdigit() and int(size) > 0 for size in sizes):
        refuse("net_arch", "layer sizes separated by commas, e.g. 256,256")
    if args.vec_env not in VEC_ENVS:
        refuse("vec_env", ", ".join(VEC_ENVS))
    if args.compile_rules and args.vec_env != "vector":
        parser.error(
            f"--compile-rules: only with --vec-env vector (got --vec-env {args.vec_env}, "
            "whose environments play the Python engine)"
        )
    if args.policy not in POLICIES:
        refuse("policy", ", ".join(POLICIES))
    for name in ("eval_cpus", "selfplay_cpus"):
        unknown = [level for level in getattr(args, name).split(",") if level not in CPU_LEVELS]
        if unknown:
            refuse(name, f"CPU levels separated by commas, from {', '.join(CPU_LEVELS)}")
    rules = rules_or_error(parser, args.rules, args.players)
    try:
        # The env checks the reward scheme and the opponents (a model opponent's table too).
        GoFishEnv(rules=rules, opponents=starting_opponents(args), reward=args.reward)
    except ValueError as error:  # "field: what was wrong; allowed: ..."; AgentFileError too
        name, _, reason = str(error).partition(": ")
        if name in ("opponents", "reward"):
            parser.error(f"--{name}: {reason}")
        parser.error(str(error))
    if args.imitate_rollouts and args.imitate != "master":
        parser.error("--imitate-rollouts: sets master's rollouts; allowed with --imitate master")
    if args.imitate_rollouts and args.imitate_rollouts not in COMPILED:
        refuse("imitate_rollouts", ", ".join(COMPILED))
    if args.imitate_pool_limit and args.imitate != "master":
        parser.error(
            "--imitate-pool-limit: sets where master searches; allowed with --imitate master"
        )
    limit = args.imitate_pool_limit
    # isdigit alone takes "²", which int() refuses.
    if limit and not (limit.isascii() and limit.isdigit()):
        refuse("imitate_pool_limit", "an integer >= 0")
    if args.imitate:
        if args.imitate not in CPU_LEVELS:
            refuse("imitate", ", ".join(CPU_LEVELS))
        if args.resume:
            parser.error("--imitate: starts a new network, so it cannot go with --resume")
        for name in ("imitate_games", "imitate_epochs"):
            if getattr(args, name) < 1:
                refuse(name, "an integer >= 1")
        if args.imitate_temperature > 0 and args.imitate not in SCORING:
            parser.error(
                f"--imitate-temperature: the {args.imitate!r} CPU gives no scores to learn; "
                f"allowed with --imitate {', '.join(SCORING)}"
            )
    return rules


@dataclass
class Run:
    """Where a run lives and how far it got."""

    args: Args
    rules: Rules
    folder: Path
    state: RunState
    model_file: Path | None = None  # the network to start from (resumed or --resume ZIP)
    resumed: bool = False  # goes on from its own saved state
    overrides: list[str] = field(default_factory=list)
    made: Path | None = None  # a new run's first_missing_folder, before it was made


def open_run(argv: list[str] | None) -> Run:
    """A new run folder, or the saved state of the run that ``--resume FOLDER`` names,
    with the arguments given now overriding its own. Everything is checked first."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = Args(**vars(parser.parse_args(argv)))
    resume = Path(args.resume) if args.resume else None
    if resume is not None and resume.is_dir():
        return reopen_run(parser, argv, resume)
    rules = check_args(parser, args)
    state = RunState(
        budget=args.timesteps,
        next_checkpoint=args.checkpoint_every,
        next_snapshot=args.snapshot_every,
    )
    if resume is not None:
        if resume.suffix != ".zip":
            parser.error(f"--resume: {resume} is neither a run folder nor a saved model (.zip)")
        model = check_model_file(parser, resume, rules)
        args = with_network_of(parser, argv, args, model, resume)
    name = args.name or f"{args.rules}{args.players}__{args.opponents}__{args.seed}"
    name += "__" + time.strftime("%Y%m%d-%H%M%S")
    out = Path(args.out)
    folder = out / name.replace(":", "-").replace(",", "+").replace("/", "-")
    check_selfplay_folder(parser, args, folder, "out")
    check_output(parser, "--out", args.out, directory=True)
    if folder.exists():
        parser.error(
            f"--name: {folder} exists already; give another --name, or go on with it: "
            f"--resume {folder}"
        )
    made = first_missing_folder(folder)  # with --out's new folders: removed with the run
    folder.mkdir(parents=True)
    (folder / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
    return Run(args, rules, folder, state, resume, made=made)


def reopen_run(parser: argparse.ArgumentParser, argv: list[str], folder: Path) -> Run:
    if not (folder / "args.json").is_file() or not has_run_state(folder):
        parser.error(
            f"--resume: {folder} is not a training run (it has no args.json and "
            "resume/state.json); give a run folder, or a saved model (.zip)"
        )
    # A run saved before an argument existed ran with that argument's default.
    saved = dataclasses.asdict(Args()) | json.loads((folder / "args.json").read_text())
    given = vars(build_parser(suppress_defaults=True).parse_args(argv))
    given.pop("resume")
    for name in FIXED_ON_RESUME:
        if name in given and given[name] != saved[name]:
            flag = "--" + name.replace("_", "-")
            parser.error(
                f"{flag}: a resumed run keeps its {flag} ({saved[name]!r}); got "
                f"{given[name]!r}. Start a new run to change it."
            )
    overrides = [
        f"--{name.replace('_', '-')} {given[name]} (was {saved[name]})"
        for name in given
        if given[name] != saved[name]
    ]
    args = Args(**{**saved, **given, "resume": ""})
    rules = check_args(parser, args)
    check_selfplay_folder(parser, args, folder, "resume")
    check_output(parser, "--resume", folder, directory=True)
    state, model_file = load_run_state(folder)
    changed = [name for name in given if given[name] != saved[name] and name != "progress"]
    # A new interval counts from here (the saved next steps were placed by the old one); a
    # smaller pool drops its oldest snapshots now.
    for name, next_step in (
        ("eval_every", "next_evaluation"),
        ("snapshot_every", "next_snapshot"),
        ("checkpoint_every", "next_checkpoint"),
    ):
        if name in changed:
            setattr(state, next_step, state.timesteps + getattr(args, name))
    if "snapshot_pool" in changed:
        state.snapshots = state.snapshots[-args.snapshot_pool :]
    grows = "timesteps" in given and state.first_timesteps + args.timesteps > state.timesteps
    if state.status == "finished" and not grows:
        if changed:  # it would not run with them: refused, and args.json is left as it is
            got = ", ".join(f"--{name.replace('_', '-')} {given[name]}" for name in changed)
            parser.error(
                f"--resume: {folder} finished already ({state.timesteps:,} steps) and takes "
                f"no new arguments but a larger --timesteps (got {got}). To train on, give "
                f"--timesteps above {state.timesteps - state.first_timesteps}"
            )
        return Run(Args(**{**saved, "resume": ""}), rules, folder, state, model_file, True)
    if "timesteps" in given:
        done = state.timesteps - state.first_timesteps
        if args.timesteps < done:
            parser.error(
                f"--timesteps: got {args.timesteps}; allowed: {done} or more (this run has "
                f"trained {done:,} steps already)"
            )
        state.budget = state.first_timesteps + args.timesteps
        if state.status in ("trained", "finished") and state.budget > state.timesteps:
            state.status = "training"  # trained to its old budget: it trains on to the new
    check_model_file(parser, model_file, rules)
    (folder / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))
    return Run(args, rules, folder, state, model_file, True, overrides)


def check_selfplay_folder(
    parser: argparse.ArgumentParser, args: Args, folder: Path, name: str
) -> None:
    """Refuse a self-play run folder whose path holds a comma: its snapshots join the
    opponents' ``mix:`` list, which commas split."""
    if args.opponents == "selfplay" and "," in str(folder.resolve()):
        flag = "--" + name
        parser.error(
            f"{flag}: got {getattr(args, name) or str(folder)!r}; allowed with --opponents "
            "selfplay: a folder whose path has no comma (its snapshots join a mix: list of "
            "opponents, which commas split)"
        )


def check_model_file(parser: argparse.ArgumentParser, path: Path, rules: Rules) -> MaskablePPO:
    """Refuse, before any work, a model to go on from that is for another table or that
    SB3 cannot load (the file is loaded here: a corrupt one fails now, not once training
    begins); the model loaded."""
    try:
        check_agent_rules(path, rules)
        return load_model(str(path))
    except AgentFileError as error:
        parser.error(f"--resume: {error}")


def with_network_of(
    parser: argparse.ArgumentParser, argv: list[str], args: Args, model: MaskablePPO, path: Path
) -> Args:
    """The arguments with the network of the model that ``--resume MODEL.zip`` goes on
    from (its --policy and --net-arch, which it keeps); one given that differs is refused."""
    policy = "ask-scoring" if issubclass(model.policy_class, AskScoringPolicy) else "mlp"
    layers = model.policy_kwargs.get("net_arch", [64, 64])  # SB3's default
    if isinstance(layers, dict) and layers.get("pi") == layers.get("vf"):
        layers = layers.get("pi")
    network = {"policy": policy}
    if isinstance(layers, list) and all(isinstance(size, int) for size in layers):
        network["net_arch"] = ",".join(str(size) for size in layers)
    given = vars(build_parser(suppress_defaults=True).parse_args(argv))
    for name, value in network.items():
        if name in given and given[name].replace(" ", "") != value:
            flag = "--" + name.replace("_", "-")
            parser.error(
                f"{flag}: a run from {path} keeps its network ({flag} {value}); got "
                f"{given[name]!r}. Leave it out, or start a new network without --resume."
            )
    return dataclasses.replace(args, **network)


def resume_command(folder: Path) -> str:
    return arguments.resume_command("gofish_training.train", folder)


class EvaluationCallback(BaseCallback):
    """Evaluates the learner against each CPU level every ``--eval-every`` steps; logs the
    results and keeps them in the run's state (with the time it took, not training time)."""

    def __init__(self, args: Args, rules: Rules, state: RunState):
        super().__init__()
        self.args = args
        self.rules = rules
        self.state = state

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.state.next_evaluation:
            self.state.next_evaluation = self.num_timesteps + self.args.eval_every
            self.run()
        return True

    def run(self) -> None:
        start = time.perf_counter()
        cpus = self.args.eval_cpus.split(",")
        results = evaluate(self.model, cpus, self.rules, self.args.eval_deals, self.args.seed)
        # Written at once at this step (the final evaluation, after PPO's last dump, too):
        # recorded, SB3's logger would write them at its next dump, a rollout later.
        scalars = {f"eval/win_rate_vs_{result.cpu}": result.win_rate for result in results}
        write_scalars(self.logger, scalars, self.num_timesteps)
        entry = {"timesteps": self.num_timesteps, "results": results_json(results)}
        self.state.history.append(entry)
        self.state.eval_seconds += time.perf_counter() - start


def write_scalars(logger: Logger, scalars: dict[str, float], step: int) -> None:
    """Write ``scalars`` to the run's TensorBoard log at ``step``, now."""
    for output in logger.output_formats:
        if isinstance(output, TensorBoardOutputFormat):
            for tag, value in scalars.items():
                output.writer.add_scalar(tag, value, step)
            output.writer.flush()


class StepsBar(BaseCallback):
    """The run's steps as a bar on stderr, as the other commands draw theirs (SB3's own bar
    writes to stdout, into a piped report)."""

    def __init__(self, budget: int):
        super().__init__()
        self.budget = budget
        self.bar = contextlib.ExitStack()

    def _on_training_start(self) -> None:
        # PPO trains whole rollouts: the run ends at the first rollout's end past the budget.
        start, rollout = self.model.num_timesteps, self.model.n_steps * self.model.n_envs
        end = start + math.ceil(max(self.budget - start, 0) / rollout) * rollout
        self.advance = self.bar.enter_context(progress_bar(True, end, "steps"))
        self.advance(start)

    def _on_step(self) -> bool:
        self.advance(self.model.num_timesteps)
        return True

    def _on_training_end(self) -> None:
        self.bar.close()


class SelfPlayCallback(BaseCallback):
    """Saves a frozen snapshot of the learner every ``--snapshot-every`` steps and makes
    the opponents a mix of the last snapshots and the scripted CPUs. The pool is kept as
    paths relative to the run folder (``snapshots/snapshot_STEPS.zip``), so that a run
    folder resumes from any working directory, and after it is moved."""

    def __init__(self, args: Args, rules: Rules, state: RunState, run_folder: Path):
        super().__init__()
        self.args = args
        self.rules = rules
        self.state = state
        self.run_folder = run_folder
        (run_folder / SNAPSHOTS).mkdir(parents=True, exist_ok=True)

    def _on_training_start(self) -> None:
        if self.state.snapshots:  # a resumed run plays its pool again
            self._set_opponents()

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.state.next_snapshot:
            self.state.next_snapshot += self.args.snapshot_every
            name = f"{SNAPSHOTS}/snapshot_{self.num_timesteps}.zip"
            save_model(self.model, self.run_folder / name, self.rules)
            pool = [*self.state.snapshots, name]
            self.state.snapshots = pool[-self.args.snapshot_pool :]
            self._set_opponents()
        return True

    def _set_opponents(self) -> None:
        pool = [f"model:{snapshot_path(self.run_folder, kept)}" for kept in self.state.snapshots]
        members = pool + self.args.selfplay_cpus.split(",")
        self.training_env.env_method("set_opponents", "mix:" + ",".join(members))


def snapshot_path(run_folder: Path, kept: str) -> Path:
    """The file of a snapshot in the pool: kept relative to the run folder, or (by a run
    saved before that) as ``model:PATH`` typed from where it ran; either way the file is in
    the run folder's ``snapshots/``."""
    return run_folder.resolve() / SNAPSHOTS / Path(kept.removeprefix("model:")).name


class RunKeeper(BaseCallback):
    """Keeps the run resumable: every ``--checkpoint-every`` steps, at the start of a
    rollout (when everything before it has been trained on), it saves a checkpoint and the
    run's state; it stops training at the next step once a stop is requested (Ctrl-C)."""

    def __init__(self, run: Run, model: MaskablePPO, env: TimedMaskedVecEnv, stop: StopRequests):
        super().__init__()
        self.model = model  # saved before training starts too
        self.run = run
        self.env = env
        self.stop = stop
        self.trained_steps = run.state.timesteps
        self.seconds_before = run.state.train_seconds
        self.env_seconds_before = run.state.env_seconds
        self.eval_seconds_before = run.state.eval_seconds
        self.start = time.perf_counter()

    def leave_out(self, seconds: float) -> None:
        """Time spent since the keeper was made that is not training (the imitation)."""
        self.start += seconds

    def _on_training_start(self) -> None:
        # A resumed run logs on from its saved step: TensorBoard drops what an earlier
        # session logged past it (rollouts that a crash or a kill lost), not two lines. What
        # was logged at the saved step stays (purge_step drops that step and later ones).
        if self.run.resumed:
            for output in self.model.logger.output_formats:
                if isinstance(output, TensorBoardOutputFormat):
                    log_dir = output.writer.log_dir
                    output.writer.close()
                    output.writer = SummaryWriter(log_dir, purge_step=self.num_timesteps + 1)

    def _on_rollout_start(self) -> None:
        self.trained_steps = self.num_timesteps
        state = self.run.state
        if self.num_timesteps >= state.next_checkpoint:
            state.next_checkpoint = self.num_timesteps + self.run.args.checkpoint_every
            folder = self.run.folder / "checkpoints"
            folder.mkdir(exist_ok=True)
            save_model(self.model, folder / f"model_{self.num_timesteps}.zip", self.run.rules)
            self.save()

    def _on_rollout_end(self) -> None:
        # PPO trains on a whole rollout before it can stop or fail again: a stop requested
        # during that update saves the rollout as trained (even the budget's last).
        self.trained_steps = self.num_timesteps

    def _on_step(self) -> bool:
        return not self.stop.requested

    def save(self) -> None:
        """Save the run as of the last step trained on (a rollout cut short is dropped)."""
        state = self.run.state
        evaluating = state.eval_seconds - self.eval_seconds_before
        state.train_seconds = self.seconds_before + time.perf_counter() - self.start - evaluating
        state.env_seconds = self.env_seconds_before + self.env.seconds
        state.timesteps = self.trained_steps
        collected = self.model.num_timesteps
        self.model.num_timesteps = self.trained_steps
        save_run_state(self.run.folder, state, self.model, self.run.rules)
        self.model.num_timesteps = collected


def starting_opponents(args: Args) -> str:
    if args.opponents == "selfplay":
        return "mix:" + args.selfplay_cpus  # until the first snapshot exists
    return args.opponents


def make_env(args: Args, rules: Rules, rank: int, seed: int):
    opponents = starting_opponents(args)

    def build():
        if multiprocessing.parent_process() is not None:  # a worker of SubprocVecEnv
            ignore_interrupts_in_worker()
            torch.set_num_threads(1)  # opponents' models must not fight over the cores
        env = GoFishEnv(rules=rules, opponents=opponents, seat="random", reward=args.reward)
        env.reset(seed=seed * 1000 + rank)
        return ReportEnvErrors(Monitor(env))

    return build


def compile_kernels(env: VectorVecEnv) -> None:
    """Step a throwaway env of the run's kind to its first move: numba compiles (on a first
    run, for tens of seconds) or loads the kernels here, not in the timed training, and the
    run's own env and random streams are not touched."""
    env.seed(0)
    env.reset()
    mask = env.reset_infos[0]["action_mask"]
    env.step(np.flatnonzero(mask)[:1])
    env.close()


def make_vec_env(args: Args, rules: Rules, seed: int):
    """The environments: a GoFishEnv per env in a DummyVecEnv or SubprocVecEnv, or every
    env in one batch of the compiled engine (``--vec-env vector``)."""
    if args.vec_env == "vector":
        opponents = starting_opponents(args)
        settings = {"seat": "random", "reward": args.reward, "compile_rules": args.compile_rules}
        compile_kernels(VectorVecEnv(1, rules, opponents, **settings))
        return VectorVecEnv(args.envs, rules, opponents, **settings)
    builders = [make_env(args, rules, rank, seed) for rank in range(args.envs)]
    return VEC_ENVS[args.vec_env](builders)


def make_model(run: Run, env: TimedMaskedVecEnv):
    """A new MaskablePPO, or the saved one (network and optimizer) with this run's PPO
    settings."""
    args = run.args
    hyperparameters = {
        "n_steps": args.n_steps,
        "batch_size": args.batch_size,
        "n_epochs": args.n_epochs,
        "learning_rate": args.learning_rate,
        "gamma": args.gamma,
        "ent_coef": args.ent_coef,
        "clip_range": args.clip_range,
        "target_kl": args.target_kl or None,
    }
    tensorboard = str(run.folder / "tensorboard")
    if run.model_file is not None:
        return MaskablePPO.load(
            run.model_file,
            env=env,
            device="cpu",
            tensorboard_log=tensorboard,
            custom_objects=hyperparameters,
        )
    policy_kwargs: dict = {"net_arch": [int(size) for size in args.net_arch.split(",")]}
    if args.policy == "ask-scoring":
        policy_kwargs["rules"] = run.rules
    return MaskablePPO(
        POLICIES[args.policy],
        env,
        **hyperparameters,
        policy_kwargs=policy_kwargs,
        tensorboard_log=tensorboard,
        seed=args.seed,
        device="cpu",
        verbose=0,
    )


def teacher_options(args: Args, rules: Rules) -> dict | None:
    """The teacher's settings beyond its level: ``master``'s rollouts, the pool size it
    searches from and its simulations, always named (so that parts played otherwise, by an
    older default included, are not kept)."""
    if args.imitate != "master":
        return None
    players = rules.players
    pool_limit = int(args.imitate_pool_limit or default_pool_limit(players))
    levels = {default_rollouts(players, pool) for pool in range(pool_limit + 1)}
    # One level over the whole window is named; one that changes with the pool is the table's.
    by_table = levels.pop() if len(levels) == 1 else BY_TABLE
    return {
        "rollouts": args.imitate_rollouts or by_table,
        "pool_limit": pool_limit,
        "simulations": default_simulations(players),
    }


def imitate(
    run: Run, model: MaskablePPO, console: Console, check: Callable[[], None] | None = None
) -> None:
    """The new network first learns the CPU's play, in the seat and against the opponents
    it will train with. ``check`` is called after each part of the games (a stop check)."""
    args = run.args
    teacher_env = functools.partial(
        GoFishEnv,
        rules=run.rules,
        opponents=starting_opponents(args),
        seat="random",
        reward=args.reward,
    )
    # The games' time is summed over the sessions that played them (a stop keeps the parts
    # played, and their time, in the folder of the games).
    spent = run.folder / DEMONSTRATIONS / "seconds.json"
    before = json.loads(spent.read_text())["games"] if spent.is_file() else 0.0
    start = time.perf_counter()
    try:
        demos = collect_in_parts(
            teacher_env,
            args.imitate,
            args.imitate_games,
            args.gamma,
            args.seed,
            args.imitate_temperature,
            args.imitate_workers,
            folder=run.folder / DEMONSTRATIONS,
            progress=args.progress,
            teacher_options=teacher_options(args, run.rules),
            after_part=check,
        )
    finally:
        spent.parent.mkdir(parents=True, exist_ok=True)
        spent.write_text(json.dumps({"games": before + time.perf_counter() - start}))
    played = time.perf_counter()
    run.state.imitation = pretrain(
        model,
        demos,
        args.imitate_epochs,
        args.batch_size,
        seed=args.seed,
        progress=args.progress,
        relabelling=RankRelabelling.for_rules(run.rules) if args.imitate_relabel else None,
    )
    run.state.imitation_seconds = {
        "games": before + played - start,
        "fit": time.perf_counter() - played,
    }
    minutes = {key: seconds / 60 for key, seconds in run.state.imitation_seconds.items()}
    console.print(
        f"Imitated {args.imitate}: {len(demos):,} asks from {args.imitate_games:,} games "
        f"({minutes['games']:.1f} min to play, {minutes['fit']:.1f} min to fit); the network "
        f"picks the CPU's ask {100 * run.state.imitation[-1]['agreement']:.0f}% of the time."
    )


def train(run: Run, model: MaskablePPO, keeper: RunKeeper, console: Console) -> None:
    """PPO to the step budget; on a stop request or a failed environment the run is saved
    as of its last trained step, and the command that goes on with it is printed."""
    args, state = run.args, run.state
    evaluation = EvaluationCallback(args, run.rules, state)
    callbacks = [evaluation, keeper]
    if args.opponents == "selfplay":
        callbacks.append(SelfPlayCallback(args, run.rules, state, run.folder))
    bar = StepsBar(state.budget)
    if args.progress:
        callbacks.append(bar)
    console.print(f"Training to {state.budget:,} steps, {args.envs} envs -> {run.folder}")
    try:
        with bar.bar:  # closed however learning ends, before any message
            model.learn(
                state.budget - state.timesteps,  # SB3 counts on from the model's steps
                callback=CallbackList(callbacks),
                reset_num_timesteps=False,  # and keeps one TensorBoard log across resumes
            )
    except EnvFailure as failure:
        keeper.save()
        (run.folder / "error.log").write_text(failure.trace or str(failure))
        log = run.folder / "error.log"
        where = (
            f"The traceback is in {log}."
            if failure.trace  # a worker process that died left none: the line above is all
            else f"There is no traceback (written to {log}: the line above)."
        )
        console.print(
            f"[red]Training stopped: {escape(str(failure))}[/red]\n"
            f"{where} Saved the run at "
            f"{state.timesteps:,} of {state.budget:,} steps. Go on with:\n  "
            f"{resume_command(run.folder)}"
        )
        raise SystemExit(1) from None
    if keeper.stop.requested:
        keeper.save()
        console.print(
            f"Stopped ({keeper.stop.signal_name}): saved the run at {state.timesteps:,} of "
            f"{state.budget:,} steps in {run.folder}. Go on with:\n  "
            f"{resume_command(run.folder)}"
        )
        raise SystemExit(128 + keeper.stop.signum)  # 130 for Ctrl-C, 143 for SIGTERM
    keeper.trained_steps = model.num_timesteps
    if not state.history or state.history[-1]["timesteps"] != model.num_timesteps:
        evaluation.run()  # the curve's last point: the trained model
    # Trained on later (a larger --timesteps), the next point falls an interval after it.
    state.next_evaluation = model.num_timesteps + args.eval_every
    state.status = "trained"
    save_model(model, run.folder / "model.zip", run.rules)
    keeper.save()


def final_report(run: Run, model: MaskablePPO, env: TimedMaskedVecEnv, console: Console) -> dict:
    """A larger evaluation, the learning curve and where the time went."""
    args, state = run.args, run.state
    final = evaluate(
        model, args.eval_cpus.split(","), run.rules, args.final_deals, args.seed + 1, args.progress
    )
    trained = state.timesteps - state.first_timesteps
    timing = {
        "algorithm": type(model).__name__,
        "vec_env": type(env.venv).__name__,
        "train_seconds": state.train_seconds,
        "env_seconds": state.env_seconds,
        "env_fraction": state.env_seconds / max(state.train_seconds, 1e-9),
        "eval_seconds": state.eval_seconds,
        "imitation_seconds": state.imitation_seconds,
        "steps_per_second": trained / max(state.train_seconds, 1e-9),
        "resumes": state.resumes,
    }
    report = {
        "args": dataclasses.asdict(args),
        "rules": run.rules.describe(),
        "timesteps": state.timesteps,
        "final": results_json(final),
        "history": state.history,
        "timing": timing,
        "imitation": state.imitation,
        "snapshots": state.snapshots,
        "opponents_at_end": env.get_attr("opponent_specs"),
    }
    (run.folder / "evaluation.json").write_text(json.dumps(report, indent=2))
    name = run.folder.name
    plot = plot_learning_curve(state.history, run.folder / "learning_curve.png", title=name)
    state.status = "finished"
    save_run_state(run.folder, state, model, run.rules)
    console.print(results_table(final, f"{name}: {args.final_deals} duplicate deals per level"))
    console.print(
        f"Trained {trained:,} steps in {state.train_seconds / 60:.1f} min "
        f"({timing['steps_per_second']:.0f} steps/s; environments and opponents "
        f"{100 * timing['env_fraction']:.0f}% of training time)."
    )
    console.print(f"Model: {run.folder / 'model.zip'}\nLearning curve: {plot}")
    return report


def main(argv: list[str] | None = None) -> dict:
    run = open_run(argv)
    args, rules, state, folder = run.args, run.rules, run.state, run.folder
    console = Console(soft_wrap=True)  # paths and commands stay whole, to copy
    if state.status == "finished":
        console.print(f"{folder} finished already ({state.timesteps:,} steps): nothing to do.")
        console.print(f"Model: {folder / 'model.zip'}")
        return json.loads((folder / "evaluation.json").read_text())
    if run.resumed:
        state.resumes += 1
        console.print(f"Resuming {folder} at {state.timesteps:,} of {state.budget:,} steps.")
        for override in run.overrides:
            console.print(f"  overriding {override}")
    else:
        # Seeding: the same seed gives the same deals, opponents and initial network.
        random.seed(args.seed)
        np.random.seed(args.seed)
        torch.manual_seed(args.seed)

    # Environments: the learner sits at a random seat each episode. A resumed run deals
    # new games (those in progress at the stop are not kept), from --seed and its resumes.
    seed = (args.seed + 1_000_003 * state.resumes) % 2**32  # NumPy's seeds: 0 .. 2**32 - 1
    env = None
    try:
        env = TimedMaskedVecEnv(make_vec_env(args, rules, seed))  # a first run compiles here
        env.seed(seed)
        torch.set_num_threads(args.threads)
        model = make_model(run, env)
        # Seeded after the model is built: loading a saved one seeds the env with the seed
        # it was saved with (SB3's _setup_model), which would deal a resume's games again.
        model.seed = seed
        model.set_random_seed(seed)
        if run.resumed:
            load_run_state(folder)  # the random state as it was, after the model is built
        if run.model_file is not None and not run.resumed:  # --resume ZIP: counts on from it
            state.timesteps = state.first_timesteps = model.num_timesteps
            state.next_evaluation = state.timesteps
            state.budget += state.timesteps
        with StopRequests() as stop:
            keeper = RunKeeper(run, model, env, stop)
            keeper.save()  # from here on the run can be resumed
            if args.imitate and not state.imitation and state.status == "training":
                imitation_started = time.perf_counter()
                with interrupts_raise() as check:
                    imitate(run, model, console, check)
                # Only this session's: the games an earlier session played were never on
                # this session's clock (imitation_seconds sums them over the sessions).
                keeper.leave_out(time.perf_counter() - imitation_started)
                keeper.save()
                shutil.rmtree(folder / DEMONSTRATIONS)  # the fit is saved: no longer needed
            if state.status == "training":
                train(run, model, keeper, console)
        stop.interrupt_if_requested()
        with interrupts_raise():
            return final_report(run, model, env, console)
    except KeyboardInterrupt as interrupt:
        if has_run_state(folder):
            console.print(
                f"\nInterrupted; what was saved is kept. Go on with:\n  {resume_command(folder)}"
            )
        else:  # stopped before the run's first save: its folder holds nothing to go on from
            shutil.rmtree(folder)
            remove_empty_folders(folder.parent, run.made)
            console.print("\nInterrupted before training began; nothing to keep.")
        raise SystemExit(exit_status(interrupt)) from None  # 130 for Ctrl-C, 143 for SIGTERM
    finally:
        if env is not None:
            env.close()


def cli() -> None:
    """The ``gofish-train`` command."""
    main()


if __name__ == "__main__":
    cli()
