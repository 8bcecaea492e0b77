"""What table a saved agent was trained for, kept with the agent.

A saved agent only fits tables whose observation and actions have the layout it was trained
on, so the rules it was trained under travel with it in a small ``gofish_env.json``:

- an SB3 agent is a ``.zip``; ``write_agent_rules`` adds the entry to the zip after SB3 has
  written it. Older zips carry no such entry; their run folder's ``args.json``
  (``runs/NAME/model.zip``, ``runs/NAME/checkpoints/model_X.zip`` or
  ``runs/NAME/snapshots/snapshot_X.zip``) says the same;
- an RLlib module exported by ``gofish-rllib-train`` is a folder
  (``runs/NAME/module``); the file sits in it.

Only the standard library is used here: nothing of SB3, RLlib or torch.
"""

from __future__ import annotations

import dataclasses
import json
import re
import zipfile
from pathlib import Path

from gofish_env.rules import Rules, rules_name

METADATA_ENTRY = "gofish_env.json"


class AgentFileError(ValueError):
    """A model file that is missing, unreadable, or made for another table; the message is
    one line meant for the user."""


def load_failure(what: str, error: Exception) -> AgentFileError:
    """A library's refusal to load an agent as one line: ``what`` ("cannot load model file
    PATH"), the error's type, and the first sentence of its first line (PyTorch's reason is
    a paragraph)."""
    lines = str(error).strip().splitlines()
    reason = first_sentence(lines[0]) if lines else ""
    return AgentFileError(f"{what}: {type(error).__name__}: {reason}")


# A sentence ends at ".", "!" or "?" followed by a space and a capital letter.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def first_sentence(text: str) -> str:
    """The first sentence of an error message, or all of it where no cut is safe: the cut
    is made only where the quotes (' " `) on both sides of it are balanced, so never inside
    a quoted path or name."""
    for end in _SENTENCE_END.finditer(text):
        head, tail = text[: end.start()], text[end.end() :]
        if all(head.count(quote) % 2 == 0 == tail.count(quote) % 2 for quote in "'\"`"):
            return head
    return text


def write_agent_rules(path: str | Path, rules: Rules) -> None:
    """Record ``rules`` with the saved agent at ``path``: inside a model zip, or in a folder."""
    record = json.dumps({"rules": dataclasses.asdict(rules)})
    if Path(path).is_dir():
        (Path(path) / METADATA_ENTRY).write_text(record)
        return
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr(METADATA_ENTRY, record)


def read_agent_rules(path: str | Path) -> Rules | None:
    """The rules the agent at ``path`` was trained under: from the zip, else from its run
    folder's ``args.json``; ``None`` if neither says. Raises ``AgentFileError`` for a
    missing or corrupt file."""
    path = Path(path)
    if path.is_dir():
        return _folder_rules(path)
    if not path.is_file():
        raise AgentFileError(f"model file not found: {path}")
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if "data" not in names:
                raise AgentFileError(f"not a saved SB3 model (no 'data' entry): {path}")
            if METADATA_ENTRY in names:
                return Rules(**json.loads(archive.read(METADATA_ENTRY))["rules"])
    except (zipfile.BadZipFile, OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise AgentFileError(f"cannot read model file {path}: {error}") from None
    for folder in (path.parent, path.parent.parent):
        args_file = folder / "args.json"
        if args_file.is_file():
            try:
                args = json.loads(args_file.read_text())
                return Rules.preset(args["rules"], players=args["players"])
            except (OSError, ValueError, KeyError, TypeError):
                return None
    return None


def _folder_rules(folder: Path) -> Rules:
    metadata = folder / METADATA_ENTRY
    if not metadata.is_file():
        raise AgentFileError(f"not a saved agent (a folder with no {METADATA_ENTRY}): {folder}")
    try:
        return Rules(**json.loads(metadata.read_text())["rules"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise AgentFileError(f"cannot read {metadata}: {error}") from None


def check_agent_rules(path: str | Path, rules: Rules) -> None:
    """Refuse, in one line, an agent trained for another table than ``rules``."""
    trained = read_agent_rules(path)
    if trained is not None and trained != rules:
        raise AgentFileError(
            f"{path} was trained for {trained.players} players under {rules_name(trained)}; "
            f"this table is {rules.players} players under {rules_name(rules)}"
        )
