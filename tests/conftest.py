"""Fixtures shared by the test modules, and the markers of tests that need more than the
base package.

- ``torch``: the ``train`` extra (torch, stable-baselines3, sb3-contrib), the ``ecosystem``
  extra (TorchRL, Tianshou, SuperSuit, Shimmy) or the ``rllib`` extra (Ray RLlib);
- ``web``: the ``web`` extra (FastAPI, uvicorn, httpx, Selenium);
- ``video``: the ``video`` extra (moviepy, imageio-ffmpeg), for Gymnasium's RecordVideo;
- ``browser``: headless Chromium and its driver (``scripts/install_browser.sh``), and the
  ``web`` extra.

A module that needs one throughout says so with ``pytestmark = pytest.mark.NAME``. Without
what a marker needs, ``python -m pytest -m "not NAME"`` runs everything else: modules
marked NAME as a whole are not collected (they import those libraries when they load), and
the other NAME tests are deselected. A run that would select tests whose needs are missing
stops at once with a usage error saying so: no test is skipped silently.
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

# What each marker's tests import (or run), and how to get it.
NEEDS = {
    "torch": (
        (
            *("torch", "stable_baselines3", "sb3_contrib"),
            *("torchrl", "tianshou", "supersuit", "shimmy"),  # the ecosystem extra
            "ray",  # the rllib extra
        ),
        "the train, ecosystem and rllib extras",
    ),
    "web": (("fastapi", "uvicorn", "httpx", "selenium"), "the web extra"),
    "video": (("moviepy", "imageio_ffmpeg"), "the video extra"),
    "browser": (
        ("fastapi", "uvicorn", "httpx", "selenium", "/usr/bin/chromium", "/usr/bin/chromedriver"),
        "the web extra and Chromium (bash scripts/install_browser.sh)",
    ),
}


def _missing(needs: tuple[str, ...]) -> list[str]:
    return [
        name
        for name in needs
        if not (Path(name).exists() if name.startswith("/") else importlib.util.find_spec(name))
    ]


MISSING = {marker: _missing(needs) for marker, (needs, _) in NEEDS.items()}
MISSING = {marker: names for marker, names in MISSING.items() if names}
USAGE = (
    "the tests marked {marker!r} need {what}, which are not all installed here (missing: "
    "{missing}). Install them (bash scripts/setup_venv.sh train,dev,ecosystem,rllib,video,web "
    'and bash scripts/install_browser.sh) or leave those tests out: python -m pytest -m "{expr}"'
)


def _mark_pattern(marker: str) -> re.Pattern:
    return re.compile(rf"\bmark\.{marker}\b")


def pytest_configure(config: pytest.Config) -> None:
    if not MISSING or config.getoption("help") or config.getoption("markers"):
        return
    expression = config.option.markexpr or ""
    terms = [term.strip() for term in expression.split(" and ")]
    for marker, names in MISSING.items():
        if f"not {marker}" not in terms or " or " in expression:
            wanted = " and ".join(f"not {name}" for name in MISSING)
            raise pytest.UsageError(
                USAGE.format(
                    marker=marker, what=NEEDS[marker][1], missing=", ".join(names), expr=wanted
                )
            )


def marked_throughout(path: Path) -> set[str]:
    """The markers of ``NEEDS`` that the test module at ``path`` applies to all its tests
    (its ``pytestmark``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        names = {target.id for target in targets if isinstance(target, ast.Name)}
        if "pytestmark" in names:
            text = ast.unparse(node.value)
            return {marker for marker in NEEDS if _mark_pattern(marker).search(text)}
    return set()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A module marked throughout with a marker whose needs are missing is not imported."""
    name = collection_path.name
    if MISSING and name.startswith("test_") and name.endswith(".py"):
        return bool(marked_throughout(collection_path) & set(MISSING)) or None
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    if not MISSING:
        return None
    modules = sorted(
        path.name
        for path in Path(__file__).parent.glob("test_*.py")
        if marked_throughout(path) & set(MISSING)
    )
    missing = "; ".join(f"{marker}: {', '.join(names)}" for marker, names in MISSING.items())
    return (
        f"not installed ({missing}): the tests so marked are deselected, and these modules, "
        f"marked so throughout, are not collected: {', '.join(modules)}"
    )


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session", autouse=True)
def sb3_log_folder(tmp_path_factory):
    """The folder SB3 makes for a model that learns with no log folder of its own (by
    default a new ``SB3-<time>`` in the system's temporary folder at every ``learn``): one
    folder of the test run's, for the tests and the commands they start."""
    folder = tmp_path_factory.mktemp("sb3-logs")
    saved = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(folder)
    yield folder
    if saved is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = saved


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
