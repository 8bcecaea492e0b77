"""What a training run keeps so that nothing is lost: the resumable state and stop requests.

A run folder (``OUT/NAME/``) holds ``args.json`` (the run's arguments) and ``resume/``: the
latest model (``model_STEPS.zip``), its optimizer included, and ``state.json`` naming it,
with the step count, the evaluation history, the self-play pool, when the next
evaluation, snapshot and checkpoint are due, the time spent so far, and the random
state of Python, NumPy and torch (``random_STEPS.pt``). The model and random state are
written first and ``state.json`` last, each by an atomic rename, so a crash at any moment
leaves the previous state whole. ``python -m gofish_training.train --resume OUT/NAME`` goes on
from it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from gofish_env.agent_files import write_agent_rules

# The interrupts that name their signal live with the commands' other helpers, since the
# measuring commands use them too; the training side imports them from here as it did.
from gofish_env.cli import Interrupted, exit_status, interrupts_raise  # noqa: F401
from gofish_env.rules import Rules

RESUME_FOLDER = "resume"
STATE_FILE = "state.json"


@dataclass
class RunState:
    """Everything of a run but its network and random state (see the module docstring)."""

    timesteps: int = 0
    budget: int = 0  # the step count training goes to
    first_timesteps: int = 0  # of a model that came from elsewhere (--resume ZIP)
    status: str = "training"  # "training", then "trained" (model.zip saved), "finished"
    history: list[dict] = field(default_factory=list)
    next_evaluation: int = 0
    next_checkpoint: int = 0
    next_snapshot: int = 0
    snapshots: list[str] = field(default_factory=list)
    imitation: list[dict] = field(default_factory=list)
    # Wall time of the imitation's games (summed over the sessions that played them) and of
    # its fit (in the session that finished it).
    imitation_seconds: dict[str, float] = field(default_factory=dict)
    train_seconds: float = 0.0
    env_seconds: float = 0.0
    eval_seconds: float = 0.0
    resumes: int = 0


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    os.replace(partial, path)


def save_model(model: Any, path: Path, rules: Rules) -> Path:
    """``model.save`` with the rules it was trained under recorded inside the zip, written
    under a temporary name and renamed into place."""
    partial = path.with_name(path.stem + ".partial.zip")
    model.save(partial)
    write_agent_rules(partial, rules)
    os.replace(partial, path)
    return path


def save_run_state(run: Path, state: RunState, model: Any, rules: Rules) -> None:
    """Write the model, the random state and ``state.json`` (last) into ``run/resume``;
    drop the older files once the new state is in place."""
    folder = run / RESUME_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    model_file = save_model(model, folder / f"model_{state.timesteps}.zip", rules)
    random_file = folder / f"random_{state.timesteps}.pt"
    partial = random_file.with_name(random_file.name + ".partial")
    torch.save(
        {
            "python": random.getstate(),
            "numpy": np.random.get_state(),
            "torch": torch.get_rng_state(),
        },
        partial,
    )
    os.replace(partial, random_file)
    record = {**asdict(state), "model": model_file.name, "random": random_file.name}
    _write_atomically(folder / STATE_FILE, json.dumps(record, indent=2))
    for old in folder.iterdir():
        if old.name not in (model_file.name, random_file.name, STATE_FILE):
            old.unlink()


def has_run_state(run: Path) -> bool:
    return (run / RESUME_FOLDER / STATE_FILE).is_file()


def load_run_state(run: Path) -> tuple[RunState, Path]:
    """The saved state and the path of its model; restores the random state."""
    folder = run / RESUME_FOLDER
    record = json.loads((folder / STATE_FILE).read_text())
    model_file = folder / record.pop("model")
    saved = torch.load(folder / record.pop("random"), weights_only=False)
    random.setstate(saved["python"])
    np.random.set_state(saved["numpy"])
    torch.set_rng_state(saved["torch"])
    return RunState(**record), model_file


class StopRequests:
    """While active, SIGINT (Ctrl-C) and SIGTERM ask training to stop at the next step
    instead of killing it mid-update; a second signal quits at once."""

    def __init__(self) -> None:
        self.signal_name = ""
        self.signum = 0  # the signal that asked, for the exit status (128 + it)
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return bool(self.signal_name)

    def _handle(self, signum: int, _frame: Any) -> None:
        if self.requested:
            raise Interrupted(signum)
        self.signal_name = signal.Signals(signum).name
        self.signum = signum
        print(
            f"\n{self.signal_name}: stopping after this step to save the run "
            "(send it again to quit at once, without saving)",
            file=sys.stderr,
            flush=True,
        )

    def __enter__(self) -> StopRequests:
        for signum in (signal.SIGINT, signal.SIGTERM):
            self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *_exc: Any) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def interrupt_if_requested(self) -> None:
        """A stop asked for after training's last check of it (as training ends) stops the
        run as a Ctrl-C would, before the next stretch begins, instead of being lost."""
        if self.requested:
            raise Interrupted(self.signum)
