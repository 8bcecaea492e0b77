"""``gofish-rllib-train``'s arguments: one flag per ``Args`` field. Light (no Ray, no
torch), so that ``gofish-rllib-train --help`` and a malformed flag are answered before the
training libraries load (``gofish_training.rllib_train_cli``); ``rllib_train.check_args``
checks their values."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from gofish_training.arguments import dataclass_parser

DESCRIPTION = (
    "Train Go Fish agents with Ray RLlib (PPO, RLlib's current API stack), then measure "
    "them against the scripted CPUs."
)


@dataclass
class Args:
    players: int = field(default=4, metadata={"help": "seats at the table, 2..6"})
    rules: str = field(default="table", metadata={"help": "rules preset"})
    reward: str = field(default="catches", metadata={"help": "reward scheme of the env"})
    opponents: str = field(
        default="selfplay",
        metadata={
            "help": "selfplay (one shared policy plays every seat), a CPU level, snapshot "
            "(frozen copies of the learner), or mix:A,B,... of CPU levels and snapshot"
        },
    )
    learner_seats: int = field(
        default=0,
        metadata={"help": "seats the learner holds each game (0: all with selfplay, else 1)"},
    )
    iterations: int = field(default=80, metadata={"help": "training iterations to run"})
    env_runners: int = field(default=2, metadata={"help": "EnvRunner actors that sample"})
    envs_per_runner: int = field(
        default=32, metadata={"help": "games each EnvRunner steps together (one forward pass)"}
    )
    learners: int = field(
        default=0,
        metadata={
            "help": "Learner actors, data parallel (one CPU each); 0: the learner runs in this "
            "process"
        },
    )
    address: str = field(
        default="",
        metadata={"help": "empty: a local Ray; auto, HOST:PORT or ray://HOST:PORT: a cluster"},
    )
    seed: int = field(default=0, metadata={"help": "seed of the games, the network and PPO"})
    train_batch: int = field(default=8000, metadata={"help": "env steps per iteration"})
    minibatch: int = field(default=512, metadata={"help": "PPO minibatch size"})
    epochs: int = field(default=6, metadata={"help": "PPO epochs per iteration"})
    learning_rate: float = field(default=3e-4, metadata={"help": "Adam learning rate"})
    gamma: float = field(default=0.995, metadata={"help": "discount factor"})
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda"})
    ent_coef: float = field(default=0.01, metadata={"help": "entropy bonus"})
    clip_range: float = field(default=0.2, metadata={"help": "PPO clipping of the ratio"})
    hidden: str = field(default="256,256", metadata={"help": "hidden layer sizes"})
    snapshot_every: int = field(
        default=5, metadata={"help": "iterations between snapshots of the learner"}
    )
    snapshot_pool: int = field(default=3, metadata={"help": "frozen snapshots kept"})
    eval_every: int = field(default=10, metadata={"help": "iterations between evaluations"})
    eval_deals: int = field(default=25, metadata={"help": "duplicate deals per CPU per eval"})
    eval_cpus: str = field(
        default="random,easy,normal,hard", metadata={"help": "CPU levels to evaluate against"}
    )
    final_deals: int = field(
        default=150, metadata={"help": "duplicate deals per CPU in the final evaluation"}
    )
    checkpoint_every: int = field(default=5, metadata={"help": "iterations between checkpoints"})
    out: str = field(default="runs", metadata={"help": "output folder"})
    name: str = field(default="", metadata={"help": "run name (default: made from the args)"})
    progress: bool = field(default=True, metadata={"help": "show a progress bar"})
    resume: str = field(default="", metadata={"help": "a run folder (OUT/NAME) to go on with"})


def build_parser(suppress_defaults: bool = False) -> argparse.ArgumentParser:
    """One flag per ``Args`` field; with ``suppress_defaults`` only the flags given appear
    in the result (which arguments a resume overrides)."""
    return dataclass_parser(Args, "gofish-rllib-train", DESCRIPTION, suppress_defaults)
