"""Fixtures shared by the test modules, and the ``torch`` marker.

Tests that need the ``train`` extra (torch, stable-baselines3, sb3-contrib), the
``ecosystem`` extra (TorchRL, Tianshou, SuperSuit, Shimmy) or the ``rllib`` extra (Ray
RLlib) are marked ``torch``; a module
that needs them throughout says so with ``pytestmark = pytest.mark.torch``. Without those
extras, ``python -m pytest -m "not torch"`` runs everything else: the modules marked
``torch`` as a whole are not collected (they import those libraries when they load), and
the other ``torch`` tests are deselected. A run without the extras and without
``-m "not torch"`` stops at once with a usage error saying so: no test is skipped silently.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gofish_env.agent_files import write_agent_rules
from gofish_env.rules import Rules

# What the train and ecosystem extras bring that the tests marked ``torch`` import.
EXTRAS = ("torch", "stable_baselines3", "sb3_contrib")
EXTRAS += ("torchrl", "tianshou", "supersuit", "shimmy", "ray")
MISSING = [name for name in EXTRAS if importlib.util.find_spec(name) is None]
USAGE = (
    "the tests marked 'torch' need the train, ecosystem and rllib extras, which are not all "
    "installed here (missing: {missing}). Install them (bash scripts/setup_venv.sh "
    'train,dev,ecosystem,rllib) or leave those tests out: python -m pytest -m "not torch"'
)
TORCH_MARK = re.compile(r"\bmark\.torch\b")


def pytest_configure(config: pytest.Config) -> None:
    if not MISSING or config.getoption("help") or config.getoption("markers"):
        return
    terms = [term.strip() for term in (config.option.markexpr or "").split(" and ")]
    if "not torch" not in terms or " or " in (config.option.markexpr or ""):
        raise pytest.UsageError(USAGE.format(missing=", ".join(MISSING)))


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
