"""Games kept as they are played, so that a long measurement stopped by Ctrl-C, a kill or a
crash goes on from where it stopped when the same command is run again.

A measurement's games depend only on its settings and each deal's index (``harness``), so
the games of deals 0..k-1 kept in a file are the very games a new run would play first.
The file holds one game a JSON line (``run_files``), appended as each deal ends; the
settings the games were played with sit beside it (``NAME.settings.json``). A run with the
same settings reads the whole deals kept and plays from the next one (asking for fewer
deals than are kept reads the first ones, and leaves the others in the file); with other
settings the file is begun again, the old one moved aside first (``set_aside``: nothing
kept is lost).
A model entrant's settings include its file's size and time, so a retrained model at the
same path is not taken for the old one.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from gofish_env.cli import (
    exit_interrupted,
    first_missing_folder,
    interrupts_raise,
    remove_empty_folders,
)
from gofish_env.evaluation.harness import GameRecord, Measurement, engine_used, play_deals
from gofish_env.evaluation.run_files import read_json_lines
from gofish_env.players import MODEL_PREFIX


def read_games(path: Path) -> tuple[list[GameRecord], int, str]:
    """The games of ``path``'s whole deals, the file's length that holds them, and what
    was left out: a cut last line and a last deal without all its seatings, which a write
    stopped midway leaves ("" when nothing was). A file damaged before its last line
    raises ``ValueError``."""
    lines = read_json_lines(path)
    records = []
    for fields in lines.rows:
        for name, value in fields.items():
            if isinstance(value, list):
                fields[name] = tuple(value)
        records.append(GameRecord(**fields))
    left_out = [f"a cut last line ({lines.cut} bytes)"] if lines.cut else []
    whole = len(records)
    if records:
        last = records[-1]
        seatings = sum(record.deal == last.deal for record in records)
        if seatings < len(last.seats):  # a deal is played once with each seat rotation
            whole -= seatings
            left_out.append(f"deal {last.deal} with {seatings} of its {len(last.seats)} games")
    return records[:whole], lines.size(whole), " and ".join(left_out)


def game_line(record: GameRecord) -> str:
    """One game as the line a kept file holds (its fields are plain: ``vars`` is
    ``asdict`` without the deep copy, five times faster)."""
    return json.dumps(vars(record)) + "\n"


def settings_path(path: Path) -> Path:
    """Where the settings of the games kept in ``path`` sit: ``a.jsonl`` -> ``a.settings.json``."""
    return path.with_suffix(".settings.json")


def read_settings(path: Path) -> dict | None:
    """The settings kept at ``path``, or None when there are none to read."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def measurement_settings(measurement: Measurement) -> dict[str, Any]:
    """What decides a measurement's games, as JSON: the table, the seed, the line-ups, the
    ask limit, the engine played in and every entrant (a model's file by size and time).
    An entrant given as an object (a CPU, a loaded model, a callable) is known by its
    description only (``Entrant.description``): keep the games of such entrants only while
    they do not change."""
    return {
        "rules": asdict(measurement.rules),
        "seed": measurement.seed,
        "lineups": [list(lineup) for lineup in measurement.lineups],
        "max_asks": measurement.max_asks,
        "deterministic": measurement.deterministic,
        "engine": engine_used(measurement),
        "replays": None if measurement.replays is None else str(measurement.replays),
        "entrants": [
            [entrant.name, entrant.description, file_stamp(entrant.spec)]
            for entrant in measurement.entrants
        ],
    }


def file_stamp(spec: Any) -> list | None:
    """A saved model's files by name, size and modification time (None for other specs):
    enough to tell a retrained model from the one whose games were kept."""
    if not (isinstance(spec, str) and spec.startswith(MODEL_PREFIX)):
        return None
    root = Path(spec[len(MODEL_PREFIX) :])
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
    stamps = []
    for file in files:
        stat = file.stat()
        stamps.append(
            [str(file.relative_to(root)) if file != root else "", stat.st_size, stat.st_mtime_ns]
        )
    return stamps


def play_kept(
    measurement: Measurement,
    deals: int,
    path: str | Path,
    workers: int = 1,
    on_games: Callable[[int], None] | None = None,
    say: Callable[[str], None] = lambda message: None,
    play: Callable[..., list[GameRecord]] = play_deals,
    more_settings: dict[str, Any] | None = None,
) -> list[GameRecord]:
    """Every game of deals 0..``deals - 1``, as ``play`` plays them (``play_deals``, or a
    function of its signature): those kept in ``path`` read back, the others played and
    appended to it deal by deal. ``say`` is told what was found there (games gone on from,
    a cut write dropped, other settings). ``more_settings`` (JSON) join the measurement's
    own: what else decides the games (an entrant object's options)."""
    path = Path(path)
    settings = {**measurement_settings(measurement), **(more_settings or {})}
    settings = json.loads(json.dumps(settings))
    kept_settings = settings_path(path)
    records: list[GameRecord] = []
    size = 0
    if path.exists():
        if read_settings(kept_settings) == settings:
            try:
                records, size, left_out = read_games(path)
            except ValueError as error:  # damaged before its last line: set aside, not lost
                aside = free_path(lambda n: path.with_name(f"{path.name}.damaged{n}"))
                path.replace(aside)
                say(f"{error}. It was moved to {aside}, and the games are begun again")
                records, size, left_out = [], 0, ""
            if left_out:
                say(f"{path}: {left_out} dropped (a write stopped midway); played again")
            kept_deals = sorted({record.deal for record in records})
            if kept_deals != list(range(len(kept_deals))):  # not a run's first deals
                aside = set_aside(path)
                say(f"{path}: its deals are not 0, 1, 2, ...; moved to {aside}, and begun again")
                records, size = [], 0
            records = [record for record in records if record.deal < deals]
        elif path.stat().st_size:  # another run's games: set aside, not lost
            aside = set_aside(path)
            beside = settings_path(aside)
            their = f" (their settings to {beside.name})" if beside.exists() else ""
            say(
                f"{path}: its games were played with other settings; moved to {aside}{their}, "
                "and begun again"
            )
    made = first_missing_folder(path.parent)  # removed again if nothing is kept
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _play_into(
            measurement, deals, path, workers, on_games, say, play, settings, records, size
        )
    except BaseException:
        # Stopped (or failed) before a whole deal was kept: no empty file and settings are
        # left for a later run to take for a stopped one.
        if path.exists() and path.stat().st_size == 0:
            forget_kept(path)
            remove_empty_folders(path.parent, made)
        raise


def _play_into(
    measurement: Measurement,
    deals: int,
    path: Path,
    workers: int,
    on_games: Callable[[int], None] | None,
    say: Callable[[str], None],
    play: Callable[..., list[GameRecord]],
    settings: dict[str, Any],
    records: list[GameRecord],
    size: int,
) -> list[GameRecord]:
    """``play_kept``'s work once ``path``'s folder exists: the file begun (``size`` bytes
    of it kept, holding ``records``) and the games played into it."""
    kept_settings = settings_path(path)
    # The games of other settings go before the new settings are written, and the settings
    # are written whole (a kill midway leaves the old file): no file holds games that its
    # settings do not describe.
    with path.open("r+b" if path.exists() else "wb") as file:
        file.truncate(size)  # a cut write, or another run's games, goes
    part = kept_settings.with_suffix(".part")
    part.write_text(json.dumps(settings, indent=1) + "\n")
    os.replace(part, kept_settings)
    played = len({record.deal for record in records})
    if played:
        deals_kept = f"{played} deal{'' if played == 1 else 's'}"
        say(f"{path}: {deals_kept} kept; going on from deal {played}")
    if on_games is not None:
        on_games(len(records))
    if played >= deals:
        return records
    with path.open("a") as file:

        def keep(deal_records: list[GameRecord]) -> None:
            file.writelines(game_line(record) for record in deal_records)
            file.flush()  # to the system: a Ctrl-C, a kill or a crash of this process keeps it

        new = play(
            measurement,
            deals,
            workers,
            on_games_after(on_games, len(records)),
            first=played,
            on_deal=keep,
        )
    return records + new


def set_aside(path: Path) -> Path:
    """Move the games kept in ``path``, and their settings, to a free name beside it that
    says when they were last written (``played.jsonl`` -> ``played.20261207-104312.jsonl``
    and ``played.20261207-104312.settings.json``), so that a run of other settings into the
    same place loses none of them. Returns where they went."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(path.stat().st_mtime))
    aside = free_path(lambda n: path.with_name(f"{path.stem}.{stamp}{n}{path.suffix}"))
    path.replace(aside)
    if settings_path(path).exists():
        settings_path(path).replace(settings_path(aside))
    return aside


def free_path(name: Callable[[str], Path]) -> Path:
    """``name("")``, or ``name("-2")``, ``name("-3")``, ... : the first that is not taken
    (nor its settings' name)."""
    count = 1
    while True:
        candidate = name("" if count == 1 else f"-{count}")
        if not (candidate.exists() or settings_path(candidate).exists()):
            return candidate
        count += 1


def on_games_after(on_games: Callable[[int], None] | None, kept: int):
    """``on_games`` counting the ``kept`` games before the new ones."""
    if on_games is None:
        return None
    return lambda done: on_games(kept + done)


def forget_kept(path: Path) -> None:
    """Remove the games kept in ``path`` and their settings (once a run is done with them)."""
    path.unlink(missing_ok=True)
    settings_path(path).unlink(missing_ok=True)


# What a command stopped before its first game (as it checks its arguments and loads its
# models) says: it has made nothing yet.
BEFORE_THE_FIRST_GAME = "interrupted before the first game: nothing kept, nothing created"


def run_until_interrupted(work: Callable[[list], Any], interrupted: Callable[[], str]) -> Any:
    """``work(stage)``, stopped by Ctrl-C or SIGTERM at any point with one line and exit
    status 128 + the signal: ``BEFORE_THE_FIRST_GAME`` while ``stage[0]`` is still
    ``"checking"`` (work sets it on once its arguments and models are checked), else
    ``interrupted()`` (what was kept and how to go on)."""
    stage = ["checking"]
    try:
        with interrupts_raise():
            return work(stage)
    except KeyboardInterrupt as interrupt:
        said = BEFORE_THE_FIRST_GAME if stage[0] == "checking" else interrupted()
        exit_interrupted(said, interrupt)


def interrupted_message(keep: Path | None, flag: str = "--keep DIR") -> str:
    """What a command stopped by Ctrl-C says, given where it keeps its games (``flag``)."""
    if keep is None:
        return (
            f"interrupted: nothing kept; with {flag} the games are kept as they are "
            "played, and the same command goes on from them"
        )
    return f"interrupted: the games played are kept in {keep}; run the same command to go on"
