"""Fixtures shared by the test modules, and the ``torch`` marker.

Tests that need the ``train`` extra (torch, stable-baselines3, sb3-contrib, and matplotlib
for the charts) or the ``ecosystem`` extra (TorchRL, Tianshou) are marked ``torch``; a
module that needs them throughout says so with ``pytestmark = pytest.mark.torch``. Without
the train extra, ``python -m pytest -m "not torch"`` runs everything else: the modules
marked ``torch`` as a whole are not collected (they import torch or SB3 when they load),
and the other ``torch`` tests are deselected. Asked to run tests marked ``torch`` without
the train extra, the run stops at once with a usage error saying so: none is skipped
silently.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gofish_env.agent_files import write_agent_rules
from gofish_env.rules import Rules

# What the train extra brings that tests marked ``torch`` import.
TRAIN_EXTRA = ("torch", "stable_baselines3", "sb3_contrib", "matplotlib")
MISSING = [name for name in TRAIN_EXTRA if importlib.util.find_spec(name) is None]
USAGE = (
    "the tests marked 'torch' need the train extra, which is not installed here (missing: "
    "{missing}). Install it (bash scripts/setup_venv.sh train,dev) or leave those tests out: "
    'python -m pytest -m "not torch" (the mark expression of this run, {expression}, would '
    "select them)"
)
TORCH_MARK = re.compile(r"\bmark\.torch\b")
IDENTIFIER = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")


def _may_select_torch_tests(expression: str) -> bool:
    """Whether the ``-m`` expression selects some test marked ``torch``, whatever its other
    marks: true for no expression at all, false for ``not torch`` and the like."""
    if not expression.strip():
        return True
    from _pytest.mark.expression import Expression

    compiled = Expression.compile(expression)
    names = sorted(set(IDENTIFIER.findall(expression)) - {"and", "or", "not", "torch"})
    if len(names) > 12:
        return True  # too many to try every combination: assume it may
    for values in itertools.product((False, True), repeat=len(names)):
        marks = {"torch", *(name for name, on in zip(names, values, strict=True) if on)}
        if compiled.evaluate(_has_mark(marks)):
            return True
    return False


def _has_mark(marks: set[str]):
    return lambda name, /, **kwargs: name in marks


def pytest_configure(config: pytest.Config) -> None:
    if not MISSING or config.getoption("help") or config.getoption("markers"):
        return
    expression = config.option.markexpr or ""
    if _may_select_torch_tests(expression):
        missing = ", ".join(MISSING)
        raise pytest.UsageError(USAGE.format(missing=missing, expression=repr(expression)))


def _marked_torch_throughout(path: Path) -> bool:
    """Whether the test module at ``path`` has ``pytestmark`` naming ``mark.torch``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        names = {target.id for target in targets if isinstance(target, ast.Name)}
        if "pytestmark" in names and TORCH_MARK.search(ast.unparse(node.value)):
            return True
    return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Without the train extra, a module marked ``torch`` throughout is not imported."""
    name = collection_path.name
    if MISSING and name.startswith("test_") and name.endswith(".py"):
        return _marked_torch_throughout(collection_path) or None
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    if not MISSING:
        return None
    modules = sorted(
        path.name
        for path in Path(__file__).parent.glob("test_*.py")
        if _marked_torch_throughout(path)
    )
    return (
        f"train extra not installed ({', '.join(MISSING)}): the tests marked 'torch' are "
        f"deselected, and these modules, marked 'torch' throughout, are not collected: "
        f"{', '.join(modules)}"
    )


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture
def busy_cores():
    """Busy loops on every core, as other programs on a user's machine would keep them."""
    loops = [
        subprocess.Popen(["nice", "-n", "5", sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 2)
    ]
    yield
    for loop in loops:
        loop.kill()
        loop.wait()


@pytest.fixture(scope="session")
def agents(tmp_path_factory):
    """A tiny untrained 4-player model with its rules in the zip; the same model without
    them in a run folder whose args.json says so; and a checkpoint below that folder.
    (Tests that use it are marked ``torch``.)"""
    from sb3_contrib import MaskablePPO

    from gofish_env.gym_env import GoFishEnv

    folder = tmp_path_factory.mktemp("agents")
    model = MaskablePPO(
        "MlpPolicy",
        GoFishEnv(players=4),
        n_steps=64,
        batch_size=64,
        policy_kwargs={"net_arch": [16]},
        seed=0,
        device="cpu",
    )
    recorded = folder / "tiny.zip"
    model.save(recorded)
    write_agent_rules(recorded, Rules(players=4))
    run = folder / "run"
    run.mkdir()
    (run / "args.json").write_text(json.dumps({"rules": "table", "players": 4}))
    model.save(run / "model.zip")
    (run / "checkpoints").mkdir()
    model.save(run / "checkpoints" / "model_64_steps.zip")
    corrupt = folder / "corrupt.zip"
    corrupt.write_text("not a zip file\n")
    return {
        "recorded": str(recorded),
        "run": str(run / "model.zip"),
        "checkpoint": str(run / "checkpoints" / "model_64_steps.zip"),
        "corrupt": str(corrupt),
    }
