"""``gofish-train``'s arguments: one flag per ``Args`` field. Light (no torch, no SB3), so
that ``gofish-train --help`` and a malformed flag are answered before the training
libraries load (``gofish_training.train_cli``); ``train.check_args`` checks their values."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from gofish_env.cpus import CPU_LEVELS
from gofish_env.master import POOL_LIMIT_TABLE, ROLLOUTS_TABLE
from gofish_training.arguments import dataclass_parser

DESCRIPTION = (
    "Train a MaskablePPO agent to play Go Fish, then measure it against the scripted CPUs."
)

# The CPU levels that score every ask (imitation's soft targets).
SCORING = [name for name, cpu in CPU_LEVELS.items() if hasattr(cpu, "scores")]


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
    timesteps: int = field(default=280_000, metadata={"help": "learner steps to train for"})
    envs: int = field(
        default=2,
        metadata={
            "help": "environments stepped together (one batch of the compiled engine with "
            "--vec-env vector; processes with subproc)"
        },
    )
    vec_env: str = field(
        default="vector",
        metadata={
            "help": "vector (every env in one batch of the compiled engine, "
            "gofish_env.vector, opponents compiled), dummy (every env in this process: SB3's "
            "DummyVecEnv) or subproc (one worker process per env: SB3's SubprocVecEnv)"
        },
    )
    compile_rules: bool = field(
        default=False,
        metadata={
            "help": "--vec-env vector: the rules compiled into the engine's kernels (the same "
            "games, faster steps; a compile of a minute or two the first time)"
        },
    )
    threads: int = field(
        default=1, metadata={"help": "torch threads of the learner (the network's math)"}
    )
    seed: int = field(default=0, metadata={"help": "seed of everything"})
    n_steps: int = field(default=1024, metadata={"help": "PPO rollout steps per env"})
    batch_size: int = field(
        default=256, metadata={"help": "PPO minibatch size, at most --n-steps x --envs"}
    )
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
    name: str = field(
        default="",
        metadata={"help": "run name (default: made from the args)", "hide_default": True},
    )
    progress: bool = field(default=True, metadata={"help": "show a progress bar"})
    resume: str = field(
        default="",
        metadata={
            "help": "a run folder (OUT/NAME) to go on with, to its step budget and with its "
            "arguments (any given again override them); or a saved model (.zip) to train on "
            "in a new run"
        },
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
            f"this) ({' or '.join(SCORING)}, rank asks), not only its choice"
        },
    )
    imitate_relabel: bool = field(
        default=True,
        metadata={"help": "imitation: rename the ranks of each example at random (rank asks)"},
    )
    imitate_workers: int = field(
        default=1,
        metadata={"help": "imitation: processes that play the CPU's games (same games for any)"},
    )
    imitate_rollouts: str = field(
        default="",
        metadata={
            "help": "imitation of master: the compiled level that plays its rollouts (default: "
            f"master's, by table: {ROLLOUTS_TABLE})"
        },
    )
    imitate_pool_limit: str = field(
        default="",
        metadata={
            "help": "imitation of master: it searches once the pool holds this many cards or "
            f"fewer (default: master's, {POOL_LIMIT_TABLE})"
        },
    )


def build_parser(suppress_defaults: bool = False) -> argparse.ArgumentParser:
    """One flag per ``Args`` field; with ``suppress_defaults`` only the flags given appear
    in the result (which arguments a resume overrides)."""
    return dataclass_parser(Args, "gofish-train", DESCRIPTION, suppress_defaults)
