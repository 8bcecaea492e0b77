"""Command lines from dataclasses: one flag per field, its help from the field's metadata,
as CleanRL's ``Args`` are (``gofish-train`` and ``gofish-rllib-train`` use it)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import shlex
import sys
from pathlib import Path

from gofish_env.cli import HelpFormatter


def dataclass_parser(
    args_class: type, prog: str, description: str, suppress_defaults: bool = False
) -> argparse.ArgumentParser:
    """A parser with ``--field-name`` for every field of ``args_class`` (booleans take
    ``--name`` / ``--no-name``); with ``suppress_defaults`` only the flags given appear in
    the result (which arguments a resume overrides). A field whose metadata has
    ``hide_default`` says its default in its help: the "(default: ...)" is not added."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description=description,
        formatter_class=HelpFormatter,
        argument_default=argparse.SUPPRESS if suppress_defaults else None,
    )
    for arg in dataclasses.fields(args_class):
        flag = f"--{arg.name.replace('_', '-')}"
        default = argparse.SUPPRESS if suppress_defaults else arg.default
        text = arg.metadata["help"]
        if arg.metadata.get("hide_default"):  # the help says the default in words
            text += "%(default).0s"  # the formatter adds none to a help that names it
        if arg.type == "bool":
            parser.add_argument(
                flag,
                action=argparse.BooleanOptionalAction,
                default=default,
                help=text,
            )
        else:
            kind = {"int": int, "float": float, "str": str}[arg.type]
            parser.add_argument(flag, type=kind, default=default, help=text)
    return parser


def resume_command(module: str, folder: Path) -> str:
    """The command that goes on with the run in ``folder``: ``python -m MODULE --resume``,
    with this Python as a path typed from here (the project's venv)."""
    python = Path(sys.executable)
    with contextlib.suppress(ValueError):
        python = python.relative_to(Path.cwd())
    return f"{shlex.quote(str(python))} -m {module} --resume {shlex.quote(str(folder))}"
