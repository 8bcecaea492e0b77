"""Train a MaskablePPO agent to play Go Fish, then measure it against the scripted CPUs.

    python -m training.train --timesteps 1100000 --opponents mix:random,easy,normal
    python -m training.train --opponents selfplay --timesteps 2000000 --envs 2

Reads top to bottom: arguments, seeding, environments, the model, imitation of a CPU
(optional), callbacks (evaluation against each CPU level, self-play snapshots,
checkpoints), training, and the final report (model, evaluation JSON, learning-curve PNG,
the win-rate table). TensorBoard logs go to
OUT/NAME/tensorboard.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from rich.console import Console
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList, CheckpointCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from baselines.cpus import CPU_LEVELS
from gofish_env.gym_env import GoFishEnv
from gofish_env.rules import Rules
from training.evaluate import evaluate, results_json, results_table
from training.imitation import RankRelabelling, collect_demonstrations, pretrain
from training.pipelined_ppo import PipelinedMaskablePPO
from training.plots import plot_learning_curve
from training.policies import AskScoringPolicy
from training.vec_env import PipelinedSubprocVecEnv, SpinningSubprocVecEnv, TimedMaskedVecEnv


@dataclass
class Args:
    players: int = field(default=4, metadata={"help": "seats at the table, 2..6"})
    rules: str = field(default="table", metadata={"help": "rules preset"})
    reward: str = field(default="catches", metadata={"help": "reward scheme of the env"})
    opponents: str = field(
        default="mix:random,easy,normal",
        metadata={"help": "a CPU level, mix:LEVEL,LEVEL,..., or selfplay"},
    )
    selfplay_cpus: str = field(
        default="random,easy,normal",
        metadata={"help": "CPU levels mixed with the snapshots in self-play"},
    )
    snapshot_every: int = field(
        default=50_000, metadata={"help": "self-play: steps between learner snapshots"}
    )
    snapshot_pool: int = field(
        default=5, metadata={"help": "self-play: snapshots kept as opponents"}
    )
    timesteps: int = field(default=1_100_000, metadata={"help": "learner steps to train for"})
    envs: int = field(default=2, metadata={"help": "parallel environments (processes)"})
    vec_env: str = field(
        default="pipelined",
        metadata={
            "help": "pipelined (worker processes; half the envs step while the network picks "
            "the other half's actions), spinning (SubprocVecEnv whose processes stay awake "
            "between steps), subproc (SB3's SubprocVecEnv) or dummy (every env in this "
            "process)"
        },
    )
    seed: int = field(default=0, metadata={"help": "seed of everything"})
    n_steps: int = field(default=1024, metadata={"help": "PPO rollout steps per env"})
    batch_size: int = field(default=256, metadata={"help": "PPO minibatch size"})
    n_epochs: int = field(default=10, metadata={"help": "PPO epochs per rollout"})
    learning_rate: float = field(default=3e-4, metadata={"help": "Adam learning rate"})
    gamma: float = field(default=0.995, metadata={"help": "discount factor"})
    ent_coef: float = field(default=0.01, metadata={"help": "entropy bonus"})
    clip_range: float = field(default=0.2, metadata={"help": "PPO clipping of the policy ratio"})
    target_kl: float = field(
        default=0.0, metadata={"help": "stop an update's epochs past this KL (0: never)"}
    )
    net_arch: str = field(default="256,256", metadata={"help": "hidden layer sizes"})
    policy: str = field(
        default="mlp",
        metadata={
            "help": "mlp (SB3's dense policy) or ask-scoring (one small network, shared by "
            "every ask, scores it from the cells about its target and rank)"
        },
    )
    eval_every: int = field(default=50_000, metadata={"help": "steps between evaluations"})
    eval_deals: int = field(default=25, metadata={"help": "duplicate deals per CPU per eval"})
    eval_cpus: str = field(
        default="random,easy,normal,hard", metadata={"help": "CPU levels to evaluate against"}
    )
    final_deals: int = field(
        default=150, metadata={"help": "duplicate deals per CPU in the final evaluation"}
    )
    checkpoint_every: int = field(default=100_000, metadata={"help": "steps between checkpoints"})
    out: str = field(default="runs", metadata={"help": "output folder"})
    name: str = field(default="", metadata={"help": "run name (default: made from the args)"})
    progress: bool = field(default=True, metadata={"help": "show a progress bar"})
    resume: str = field(
        default="",
        metadata={"help": "continue training this saved model (.zip) instead of a new one"},
    )
    imitate: str = field(
        default="",
        metadata={"help": "before PPO, fit the new network to this CPU level's play"},
    )
    imitate_games: int = field(
        default=5000, metadata={"help": "imitation: games of the CPU's play to learn from"}
    )
    imitate_epochs: int = field(default=20, metadata={"help": "imitation: passes over those games"})
    imitate_temperature: float = field(
        default=0.0,
        metadata={
            "help": "imitation: > 0 learns the CPU's scores of every ask as softmax(score / "
            "this) (expert, rank asks), not only its choice"
        },
    )
    imitate_relabel: bool = field(
        default=True,
        metadata={"help": "imitation: rename the ranks of each example at random (rank asks)"},
    )


POLICIES = {"mlp": "MlpPolicy", "ask-scoring": AskScoringPolicy}

VEC_ENVS = {
    "pipelined": PipelinedSubprocVecEnv,
    "spinning": SpinningSubprocVecEnv,
    "subproc": SubprocVecEnv,
    "dummy": DummyVecEnv,
}


def parse_args(argv: list[str] | None = None) -> Args:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for arg in dataclasses.fields(Args):
        if arg.type == "bool":
            parser.add_argument(
                f"--{arg.name.replace('_', '-')}",
                action=argparse.BooleanOptionalAction,
                default=arg.default,
                help=arg.metadata["help"],
            )
        else:
            kind = {"int": int, "float": float, "str": str}[arg.type]
            parser.add_argument(
                f"--{arg.name.replace('_', '-')}",
                type=kind,
                default=arg.default,
                help=arg.metadata["help"],
            )
    args = Args(**vars(parser.parse_args(argv)))
    if args.vec_env not in VEC_ENVS:
        parser.error(f"--vec-env: got {args.vec_env!r}; allowed: {', '.join(VEC_ENVS)}")
    if args.policy not in POLICIES:
        parser.error(f"--policy: got {args.policy!r}; allowed: {', '.join(POLICIES)}")
    if args.imitate:
        if args.imitate not in CPU_LEVELS:
            parser.error(f"--imitate: got {args.imitate!r}; allowed: {', '.join(CPU_LEVELS)}")
        if args.resume:
            parser.error("--imitate: starts a new network, so it cannot go with --resume")
        for name in ("imitate_games", "imitate_epochs"):
            if getattr(args, name) < 1:
                flag = "--" + name.replace("_", "-")
                parser.error(f"{flag}: got {getattr(args, name)}; allowed: an integer >= 1")
        if args.imitate_temperature < 0:
            parser.error(
                f"--imitate-temperature: got {args.imitate_temperature}; allowed: 0 (the "
                "CPU's asks) or more (its scores)"
            )
        scoring = [name for name, cpu in CPU_LEVELS.items() if hasattr(cpu, "scores")]
        if args.imitate_temperature > 0 and args.imitate not in scoring:
            parser.error(
                f"--imitate-temperature: the {args.imitate!r} CPU gives no scores to learn; "
                f"allowed with --imitate {', '.join(scoring)}"
            )
    return args


class EvaluationCallback(BaseCallback):
    """Evaluates the learner against each CPU level every ``every`` steps; logs and keeps
    the results (and the time it took, which is not training time)."""

    def __init__(self, args: Args, rules: Rules, history: list[dict]):
        super().__init__()
        self.args = args
        self.rules = rules
        self.history = history
        self.next_at = 0
        self.seconds = 0.0

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next_at:
            self.next_at = self.num_timesteps + self.args.eval_every
            self.run()
        return True

    def run(self) -> None:
        start = time.perf_counter()
        cpus = self.args.eval_cpus.split(",")
        results = evaluate(self.model, cpus, self.rules, self.args.eval_deals, self.args.seed)
        for result in results:
            self.logger.record(f"eval/win_rate_vs_{result.cpu}", result.win_rate)
        self.history.append({"timesteps": self.num_timesteps, "results": results_json(results)})
        self.seconds += time.perf_counter() - start


class SelfPlayCallback(BaseCallback):
    """Saves a frozen snapshot of the learner every ``every`` steps and makes the
    opponents a mix of the last snapshots and the scripted CPUs."""

    def __init__(self, args: Args, folder: Path):
        super().__init__()
        self.args = args
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.snapshots: list[str] = []
        self.next_at = args.snapshot_every

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next_at:
            self.next_at += self.args.snapshot_every
            path = self.folder / f"snapshot_{self.num_timesteps}.zip"
            self.model.save(path)
            self.snapshots = [*self.snapshots, f"model:{path}"][-self.args.snapshot_pool :]
            members = self.snapshots + self.args.selfplay_cpus.split(",")
            self.training_env.env_method("set_opponents", "mix:" + ",".join(members))
        return True


def starting_opponents(args: Args) -> str:
    if args.opponents == "selfplay":
        return "mix:" + args.selfplay_cpus  # until the first snapshot exists
    return args.opponents


def make_env(args: Args, rules: Rules, rank: int):
    opponents = starting_opponents(args)

    def build():
        torch.set_num_threads(1)  # opponents' models must not fight over the cores
        env = GoFishEnv(rules=rules, opponents=opponents, seat="random", reward=args.reward)
        env.reset(seed=args.seed * 1000 + rank)
        return Monitor(env)

    return build


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    console = Console()
    rules = Rules.preset(args.rules, players=args.players)
    name = args.name or f"{args.rules}{args.players}__{args.opponents}__{args.seed}"
    name += "__" + time.strftime("%Y%m%d-%H%M%S")
    run = Path(args.out) / name.replace(":", "-").replace(",", "+")
    run.mkdir(parents=True, exist_ok=True)
    (run / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=2))

    # Seeding: the same seed gives the same deals, opponents and initial network.
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    # Environments: the learner sits at a random seat each episode.
    builders = [make_env(args, rules, rank) for rank in range(args.envs)]
    in_process = args.vec_env == "dummy" or args.envs == 1
    vec_cls = DummyVecEnv if in_process else VEC_ENVS[args.vec_env]
    env = TimedMaskedVecEnv(vec_cls(builders))
    env.seed(args.seed)
    # The network gets every core only when no worker process steps environments.
    torch.set_num_threads((os.cpu_count() or 1) if in_process else 1)
    # Pipelined: the network picks one half's actions while the other half steps.
    algorithm = PipelinedMaskablePPO if vec_cls is PipelinedSubprocVecEnv else MaskablePPO

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
    if args.resume:
        # The saved network and optimizer, trained on with this run's settings.
        model = algorithm.load(
            args.resume,
            env=env,
            device="cpu",
            tensorboard_log=str(run / "tensorboard"),
            custom_objects=hyperparameters,
        )
        model.set_random_seed(args.seed)
    else:
        policy_kwargs: dict = {"net_arch": [int(size) for size in args.net_arch.split(",")]}
        if args.policy == "ask-scoring":
            policy_kwargs["rules"] = rules
        model = algorithm(
            POLICIES[args.policy],
            env,
            **hyperparameters,
            policy_kwargs=policy_kwargs,
            tensorboard_log=str(run / "tensorboard"),
            seed=args.seed,
            device="cpu",
            verbose=0,
        )

    # Imitation (optional): the new network first learns the CPU's play, in the seat and
    # against the opponents it will train with.
    imitation: list[dict] = []
    if args.imitate:
        teacher_env = GoFishEnv(
            rules=rules, opponents=starting_opponents(args), seat="random", reward=args.reward
        )
        demos = collect_demonstrations(
            teacher_env,
            args.imitate,
            args.imitate_games,
            args.gamma,
            args.seed,
            args.progress,
            args.imitate_temperature,
        )
        imitation = pretrain(
            model,
            demos,
            args.imitate_epochs,
            args.batch_size,
            seed=args.seed,
            progress=args.progress,
            relabelling=RankRelabelling.for_rules(rules) if args.imitate_relabel else None,
        )
        console.print(
            f"Imitated {args.imitate}: {len(demos):,} asks; the network picks the CPU's ask "
            f"{100 * imitation[-1]['agreement']:.0f}% of the time."
        )

    history: list[dict] = []
    evaluation = EvaluationCallback(args, rules, history)
    callbacks = [
        evaluation,
        CheckpointCallback(
            max(args.checkpoint_every // args.envs, 1), str(run / "checkpoints"), "model"
        ),
    ]
    selfplay = SelfPlayCallback(args, run / "snapshots") if args.opponents == "selfplay" else None
    if selfplay is not None:
        callbacks.append(selfplay)

    console.print(f"Training {name}: {args.timesteps:,} steps, {args.envs} envs -> {run}")
    start = time.perf_counter()
    model.learn(
        args.timesteps,
        callback=CallbackList(callbacks),
        progress_bar=args.progress,
        reset_num_timesteps=not args.resume,  # a resumed run counts on from its model
    )
    train_seconds = time.perf_counter() - start - evaluation.seconds
    evaluation.run()  # the curve's last point: the trained model
    model.save(run / "model.zip")

    # Final report: a larger evaluation, the learning curve and where the time went.
    final = evaluate(
        model,
        args.eval_cpus.split(","),
        rules,
        args.final_deals,
        args.seed + 1,
        progress=args.progress,
    )
    timing = {
        "algorithm": type(model).__name__,
        "vec_env": type(env.venv).__name__,
        "train_seconds": train_seconds,
        "env_seconds": env.seconds,
        "env_fraction": env.seconds / train_seconds,
        "eval_seconds": evaluation.seconds,
        "steps_per_second": args.timesteps / train_seconds,
    }
    report = {
        "args": dataclasses.asdict(args),
        "rules": rules.describe(),
        "final": results_json(final),
        "history": history,
        "timing": timing,
        "imitation": imitation,
        "snapshots": selfplay.snapshots if selfplay is not None else [],
        "opponents_at_end": env.get_attr("opponent_specs"),
    }
    (run / "evaluation.json").write_text(json.dumps(report, indent=2))
    plot = plot_learning_curve(history, run / "learning_curve.png", title=name)
    console.print(results_table(final, f"{name}: {args.final_deals} duplicate deals per level"))
    console.print(
        f"Trained {args.timesteps:,} steps in {train_seconds / 60:.1f} min "
        f"({timing['steps_per_second']:.0f} steps/s; environments and opponents "
        f"{100 * timing['env_fraction']:.0f}% of training time)."
    )
    console.print(f"Model: {run / 'model.zip'}\nLearning curve: {plot}")
    return report


if __name__ == "__main__":
    main()
