"""The layers of docs/architecture.md: one installed namespace, and imports that point down
(the environment package imports nothing of the training side, SB3 or torch)."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Each layer (a source folder) and the top-level names it must not import.
TRAINING_LIBRARIES = {"torch", "stable_baselines3", "sb3_contrib", "tensorboard", "ray"}
WEB_LIBRARIES = {"fastapi", "uvicorn", "starlette", "httpx", "selenium"}
VIDEO_LIBRARIES = {"moviepy", "imageio_ffmpeg"}
PROGRAMS = {"gofish_training", "gofish_baselines", "gofish_web", "training", "baselines", "web"}
FORBIDDEN = {
    "gofish_env": PROGRAMS | TRAINING_LIBRARIES | WEB_LIBRARIES | VIDEO_LIBRARIES,
    "baselines": PROGRAMS - {"gofish_baselines"} | TRAINING_LIBRARIES | WEB_LIBRARIES,
    "training": PROGRAMS - {"gofish_training"} | WEB_LIBRARIES,
    "web": PROGRAMS - {"gofish_web"} | TRAINING_LIBRARIES,
}


def imported_roots(path: Path) -> set[str]:
    """The top-level names a module imports, anywhere in it (lazy imports included)."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_imports_point_down(layer):
    offenders = {
        str(path.relative_to(ROOT)): sorted(imported_roots(path) & FORBIDDEN[layer])
        for path in sorted((ROOT / layer).rglob("*.py"))
    }
    assert {path: names for path, names in offenders.items() if names} == {}


# The layers inside gofish_env, bottom first, as docs/architecture.md draws them: a module
# imports modules of its own layer or below. Every module is placed (a new one must be).
LAYERS = {
    "engine": "cards rules events game match replay",
    "seat views": "__init__ compile_interrupts kernel_cache registration agent_files bounds "
    "knowledge observation actions rewards render scene picture",
    "scripted CPUs": "cpus",
    "players": "players",
    "batched engine": "vector.__init__ vector.structs vector.state vector.engine vector.views "
    "vector.knowledge vector.game vector.cpus vector.play vector.players",
    "search": "worlds world_kernels world_enumeration rollouts master",
    "environments": "aec_env gym_env play cli vector.learner vector.gym_vector vector.self_play",
    "measuring": "evaluation.__init__ evaluation.batched evaluation.entrants evaluation.harness "
    "evaluation.kept evaluation.positions evaluation.run_files evaluation.schedule "
    "evaluation.standings evaluation.stats",
}
LAYER_OF = {
    module: depth for depth, modules in enumerate(LAYERS.values()) for module in modules.split()
}
# The one import that points up: the level registry (cpus.CPU_LEVELS) takes in the
# searching level, which builds on ExpertCPU (gofish_env/cpus.py says so where it happens).
UPWARD = {("cpus", "master")}


def package_modules(path: Path) -> set[str]:
    """The gofish_env modules (as LAYERS names them) a module imports, lazily or not."""
    package = ROOT / "gofish_env"

    def name_of(dotted: str) -> str | None:
        parts = dotted.split(".")
        if parts[0] != "gofish_env":
            return None
        inner = ".".join(parts[1:])
        if (package / Path(*parts[1:])).is_dir():
            return f"{inner}.__init__" if inner else "__init__"
        return inner

    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {name_of(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:  # a submodule by name, else the package's own name
                submodule = f"{node.module}.{alias.name}"
                is_module = (package / Path(*submodule.split(".")[1:])).with_suffix(".py")
                names.add(name_of(submodule if is_module.exists() else node.module))
    return names - {None}


def test_inside_the_environment_package_imports_point_down_the_layers():
    package = ROOT / "gofish_env"
    modules = {
        ".".join(path.relative_to(package).with_suffix("").parts): path
        for path in package.rglob("*.py")
    }
    assert sorted(set(modules) - set(LAYER_OF)) == []  # every module has its layer
    upward = sorted(
        (module, imported)
        for module, path in modules.items()
        for imported in package_modules(path)
        if LAYER_OF[imported] > LAYER_OF[module] and (module, imported) not in UPWARD
    )
    assert upward == []


def test_the_environment_package_loads_no_training_library():
    script = """
import importlib, pkgutil, sys
import gofish_env
for module in pkgutil.walk_packages(gofish_env.__path__, "gofish_env."):
    importlib.import_module(module.name)
env = gofish_env.GoFishEnv(players=4, opponents="mix:random,expert")
env.reset(seed=0)
loaded = sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[1:]))
print(loaded)
"""
    names = TRAINING_LIBRARIES | WEB_LIBRARIES | VIDEO_LIBRARIES | {"matplotlib"}
    names |= {"gofish_training", "gofish_baselines", "gofish_web"}
    result = subprocess.run(
        [sys.executable, "-c", script, *sorted(names)], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_pillow_loads_only_for_pictures():
    script = """
import sys
import gofish_env
env = gofish_env.env(players=3, render_mode="ansi")
env.reset(seed=0)
env.render()
gym_env = gofish_env.GoFishEnv(players=3)
gym_env.reset(seed=0)
before = "PIL" in sys.modules
env = gofish_env.raw_env(players=3, render_mode="rgb_array")
env.reset(seed=0)
env.render()
print(before, "PIL" in sys.modules)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.stdout.split() == ["False", "True"], result.stderr


def test_the_wheel_installs_only_names_that_start_with_gofish(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name in ("gofish_env", "baselines", "training", "web"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*pip_wheel, str(source), "-w", str(tmp_path / "wheel")],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert top == {"gofish_env", "gofish_baselines", "gofish_training", "gofish_web"}
    # The web table's page and the replay pages' script and style travel in the wheel.
    for name in ("index.html", "app.js", "table.js", "table.css", "replay.html", "replay.js"):
        assert f"gofish_web/static/{name}" in names
    # The programs keep their folders in the repository and install under gofish names.
    assert "gofish_training/train.py" in names and "gofish_baselines/ladder.py" in names
    # The license's text travels with it (MIT asks for it with every copy).
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    # Every module travels, subpackages included (a package missing from pyproject's list
    # works in an editable install and is absent from the wheel).
    folders = {"gofish_env": "gofish_env", "baselines": "gofish_baselines"}
    folders |= {"training": "gofish_training", "web": "gofish_web"}
    modules = {
        f"{installed}/{path.relative_to(source / folder).as_posix()}"
        for folder, installed in folders.items()
        for path in (source / folder).rglob("*.py")
    }
    assert sorted(modules - set(names)) == []
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(entry_points).decode()
    commands = ("gofish-train", "gofish-rllib-train", "gofish-evaluate", "gofish-tournament")
    for command in (*commands, "gofish-ladder", "gofish-play", "gofish-web", "gofish-replay"):
        assert f"{command} = " in text
    loaders = text.split("[gofish_env.agent_loaders]\n")[1].split("\n\n")[0].splitlines()
    assert sorted(loaders) == [
        "rllib = gofish_training.rllib_agents",
        "sb3 = gofish_training.agents",
    ]


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("gofish-train", marks=pytest.mark.torch),  # its module imports torch
        pytest.param("gofish-rllib-train", marks=pytest.mark.torch),  # and ray
        "gofish-evaluate",
        "gofish-tournament",
        "gofish-ladder",
        "gofish-play",
        pytest.param("gofish-web", marks=pytest.mark.web),  # its module imports FastAPI
        "gofish-replay",
    ],
)
def test_each_command_is_installed_and_answers_help(command):
    executable = Path(sys.executable).parent / command
    result = subprocess.run([str(executable), "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: {command}")


def test_every_module_of_the_environment_can_be_imported_first():
    """A user's first import may be any module (``from gofish_env.master import MasterCPU``
    failed once: ``cpus`` and ``master`` import each other)."""
    package = Path(__file__).resolve().parent.parent / "gofish_env"
    modules = sorted(f"gofish_env.{path.stem}" for path in package.glob("*.py"))
    modules.remove("gofish_env.__init__")
    processes = {
        module: subprocess.Popen(
            [sys.executable, "-c", f"import {module}"], stderr=subprocess.PIPE, text=True
        )
        for module in modules
    }
    failed = {}
    for module, process in processes.items():
        _, error = process.communicate(timeout=300)
        if process.returncode:
            failed[module] = error.strip().splitlines()[-1]
    assert len(modules) > 20 and failed == {}


def imported_modules(path: Path) -> set[str]:
    """The full names of the modules a module imports with ``import NAME``."""
    tree = ast.parse(path.read_text(), str(path))
    return {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }


def test_every_module_with_kernels_holds_ctrl_c_while_numba_compiles():
    """A module that compiles kernels imports ``gofish_env.compile_interrupts`` (which holds
    a Ctrl-C until the compile ends), whichever of them a program imports first."""
    with_kernels = [
        path for path in (ROOT / "gofish_env").rglob("*.py") if "numba" in imported_roots(path)
    ]
    assert len(with_kernels) >= 10
    missing = [
        path.relative_to(ROOT).as_posix()
        for path in with_kernels
        if path.name != "compile_interrupts.py"
        and "gofish_env.compile_interrupts" not in imported_modules(path)
    ]
    assert missing == []


@pytest.mark.parametrize(
    ("entry_point", "blocked", "message"),
    [
        (
            "gofish_training:train_cli",
            "torch",
            "gofish-train: needs the train extra (torch is not installed): pip install "
            "torch==2.13.0 first (its CPU build: --index-url "
            "https://download.pytorch.org/whl/cpu), then pip install 'gofish-env[train]'",
        ),
        (
            "gofish_training:rllib_train_cli",
            "torch",
            "gofish-rllib-train: needs the rllib extra (torch is not installed): pip install "
            "torch==2.13.0 first (its CPU build: --index-url "
            "https://download.pytorch.org/whl/cpu), then pip install 'gofish-env[rllib]'",
        ),
        (
            "gofish_web:web_cli",
            "uvicorn",
            "gofish-web: needs the web extra (uvicorn is not installed): pip install "
            "'gofish-env[web]'",
        ),
    ],
)
def test_a_command_without_its_extra_says_which_to_install(entry_point, blocked, message):
    """As after ``pip install gofish-env`` alone: the command's library cannot be imported
    (``sys.modules[name] = None``); one line says what to install, no traceback."""
    module, function = entry_point.split(":")
    code = (
        f"import sys; sys.modules[{blocked!r}] = None; sys.argv = ['x', '--help']; "
        f"import {module}; {module}.{function}()"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1
    assert run.stderr.strip() == message
    assert run.stdout == ""


@pytest.mark.parametrize(
    "script, blocked, extra",
    [
        ("training_speed", "torch", "train"),
        ("web_load", "httpx", "dev"),
        ("web_load", "uvicorn", "web"),
        ("rllib_speed", "ray", "rllib"),
        ("rllib_scaling", "torch", "rllib"),
    ],
)
def test_a_benchmark_without_its_extra_says_which_to_install(script, blocked, extra):
    """The benchmarks that need an extra say so in one line before they read their
    arguments, as the commands do."""
    path = ROOT / "benchmarks" / f"{script}.py"
    code = (
        f"import runpy, sys; sys.modules[{blocked!r}] = None; sys.argv = ['x', '--help']; "
        f"runpy.run_path({str(path)!r}, run_name='__main__')"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1
    # The first of the extra's libraries not installed is named: the blocked one, or one
    # before it where the extra is missing (the tests' second venv has no torch).
    command = f"python benchmarks/{script}.py"
    said = re.match(
        rf"{re.escape(command)}: needs the {extra} extra \((\w+) is not installed\)", run.stderr
    )
    assert said, run.stderr
    assert said[1] == blocked or importlib.util.find_spec(said[1]) is None
    assert "Traceback" not in run.stderr
    assert run.stdout == ""


def test_a_missing_module_that_no_extra_provides_is_not_hidden():
    from gofish_env.cli import launch

    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        launch("no_such_module", "gofish-x", "train", ("torch",), "pip install x")


def test_a_ctrl_c_while_a_command_imports_its_libraries_ends_it_in_one_line(monkeypatch, capsys):
    # gofish-train spends seconds importing torch and SB3 before any code of its own runs.
    import importlib

    from gofish_env.cli import launch

    def interrupted(name):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib, "import_module", interrupted)
    with pytest.raises(SystemExit) as stop:
        launch("gofish_training.train", "gofish-train", "train", ("torch",), "pip install x")
    assert stop.value.code == 130
    assert capsys.readouterr().err == "gofish-train: interrupted while starting; nothing was done\n"


@pytest.mark.torch
@pytest.mark.parametrize("command", ["train_cli", "rllib_train_cli"])
@pytest.mark.parametrize("argv", [["--help"], ["--seed", "x"]])
def test_help_and_a_malformed_flag_are_answered_before_torch_loads(command, argv):
    # torch and SB3 take seconds to import (Ray more): --help took 2.5 s and 7 s.
    code = (
        "import sys\n"
        f"sys.argv = ['gofish', *{argv!r}]\n"
        f"from gofish_training import {command}\n"
        "try:\n"
        f"    {command}()\n"
        "except SystemExit as stop:\n"
        "    print('exit', stop.code, 'torch' in sys.modules, 'ray' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.stdout.splitlines()[-1] == f"exit {0 if argv == ['--help'] else 2} False False"


def test_setup_venv_refuses_a_python_older_than_3_11_saying_how_to_pick_one(tmp_path):
    old = tmp_path / "python3"
    old.write_text("#!/bin/sh\nexit 1\n")  # stands for a Python that says it is too old
    old.chmod(0o755)
    run = subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup_venv.sh"), ""],
        env={"PATH": "/usr/bin:/bin", "PYTHON": str(old), "VENV": str(tmp_path / "venv")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert "needs Python 3.11 or newer (set PYTHON=" in run.stderr
    assert not (tmp_path / "venv").exists()


@pytest.mark.slow
def test_setup_venv_makes_a_half_made_venv_again(tmp_path):
    """An interrupted first run leaves a venv without pip; the next run must not trust it."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    run = subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup_venv.sh"), ""],
        env={**os.environ, "VENV": str(venv)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    assert "incomplete or too old; making it again" in run.stderr
    check = [str(venv / "bin" / "python"), "-c", "import pip, gofish_env"]
    assert subprocess.run(check, capture_output=True).returncode == 0
