"""Checks shared by the command-line programs (play, tournament, ladder, evaluate, train and
the benchmarks): each checks every argument before it starts work and refuses a bad one with
``parser.error`` (a usage line, "error: --FLAG: ...", exit code 2), with no traceback. Also
how a command ends when Ctrl-C stops it (``exit_interrupted``: status 130; with
``interrupts_raise`` SIGTERM stops it the same way, status 143) or its output is closed
(``run_command``: ``gofish-tournament | head -1``).

A flag's words are read as written, lowercase, like every level and preset name: the
search flags' ``table``, ``none`` and levels too (``TABLE`` is refused, as ``Expert`` is)."""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NoReturn

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from gofish_env.cpus import COMPILED_LEVELS, CPU_LEVELS
from gofish_env.master import (
    BY_TABLE,
    DEFAULT_CANDIDATES,
    DEFAULT_MARGIN,
    DEFAULT_POOL_LIMIT,
    DEFAULT_SIMULATIONS,
    POOL_LIMIT_TABLE,
    ROLLOUTS_TABLE,
    SIMULATIONS_TABLE,
    default_simulations,
)
from gofish_env.rules import Rules


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every command's help: each flag's default after its help, but no "(default: None)",
    "(default: [])" or "(default: )" after a flag that is unset unless given, nor "(default:
    False)" after a plain switch (a ``--name/--no-name`` pair keeps it: it says which of the
    two holds), nor a second default where the help tells its own."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        switch = action.nargs == 0 and not isinstance(action, argparse.BooleanOptionalAction)
        unset = action.default in (None, [], "")
        if unset or (switch and action.default is False) or "(default:" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def check_count(parser: argparse.ArgumentParser, flag: str, value: int, low: int = 1) -> None:
    """Refuse a count below ``low``."""
    if value < low:
        parser.error(f"{flag}: got {value}; allowed: an integer >= {low}")


SEEDS = 2**63  # seeds 0 .. 2**63 - 1, as the web lobby deals and replay pages show
NUMPY_SEEDS = 2**32  # what NumPy (and so Stable-Baselines3) takes


def check_seed(
    parser: argparse.ArgumentParser, value: int | None, flag: str = "--seed", limit: int = SEEDS
) -> None:
    """Refuse a seed outside 0 .. ``limit`` - 1 (None: none given, a new deal each time),
    in the same words for every command."""
    if value is not None and not 0 <= value < limit:
        power = {SEEDS: "2**63", NUMPY_SEEDS: "2**32"}.get(limit, str(limit))
        parser.error(
            f"{flag}: got {value}; allowed: an integer from 0 to {limit - 1} ({power} - 1)"
        )


def check_seconds(parser: argparse.ArgumentParser, flag: str, value: float) -> None:
    """Refuse a duration that is not a positive number of seconds."""
    if not (math.isfinite(value) and value > 0):
        parser.error(f"{flag}: got {value:g}; allowed: a number of seconds > 0")


def parse_integer_or_word(
    parser: argparse.ArgumentParser, flag: str, text: str, low: int, words: dict
) -> object:
    """An integer >= ``low``, or one of ``words`` (lowercase, as written, like every word of
    the command line; each maps to the value it stands for)."""
    if text in words:
        return words[text]
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low:
        allowed = "".join(f"{name}, " for name in list(words)[:-1]) + f"or {list(words)[-1]}"
        parser.error(f"{flag}: got {text!r}; allowed: an integer >= {low}, {allowed}")
    return value


def parse_pool_limit(parser: argparse.ArgumentParser, flag: str, text: str) -> int | str | None:
    """``MasterCPU``'s ``pool_limit`` from the command line: an integer >= 0, ``none``
    (search at every decision), or ``table`` (``master.POOL_LIMIT_TABLE``)."""
    return parse_integer_or_word(parser, flag, text, 0, {"none": None, BY_TABLE: BY_TABLE})


def parse_simulations(parser: argparse.ArgumentParser, flag: str, text: str) -> int | str:
    """``MasterCPU``'s ``simulations`` from the command line: an integer >= 1, or ``table``
    (``master.SIMULATIONS_TABLE``)."""
    return parse_integer_or_word(parser, flag, text, 1, {BY_TABLE: BY_TABLE})


ROLLOUTS_BY_TABLE = BY_TABLE  # on the command line and in MasterCPU: by the number of players


def parse_rollouts(
    parser: argparse.ArgumentParser,
    flag: str,
    text: str,
    word: str = ROLLOUTS_BY_TABLE,
    meaning: str = "by table",
) -> str:
    """``MasterCPU``'s ``rollouts`` from the command line: a compiled level, or ``word``
    (``table``: ``master.ROLLOUTS_TABLE``), kept as given so that a run's settings name it.
    Another ``word`` and its ``meaning`` serve a flag whose other choice is not the table's."""
    if text == word:
        return text
    if text not in COMPILED_LEVELS:
        allowed = ", ".join((*COMPILED_LEVELS, word))
        parser.error(f"{flag}: got {text!r}; allowed: {allowed} ({meaning})")
    return text


POOL_LIMIT_HELP = (
    "search once the pool holds this many cards or fewer; none: at every decision; "
    f"table: {POOL_LIMIT_TABLE}"
)


def add_search_flags(
    parser: argparse.ArgumentParser, pool_limit_help: str = POOL_LIMIT_HELP, rollouts: bool = True
) -> None:
    """``MasterCPU``'s search settings as flags with its defaults: ``--margin``,
    ``--pool-limit`` and, with ``rollouts``, ``--rollouts``. ``read_search_flags`` checks
    them."""
    parser.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_MARGIN,
        help="standard errors an override must gain over expert's choice",
    )
    parser.add_argument("--pool-limit", default=str(DEFAULT_POOL_LIMIT), help=pool_limit_help)
    if rollouts:
        parser.add_argument(
            "--rollouts",
            default=ROLLOUTS_BY_TABLE,
            help="the compiled CPU level that plays the rollouts "
            f"({', '.join(COMPILED_LEVELS)}), or {ROLLOUTS_BY_TABLE}: {ROLLOUTS_TABLE}",
        )


def read_search_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse bad values of ``add_search_flags``' flags, and turn them into ``MasterCPU``'s
    settings in ``args``."""
    if not args.margin >= 0:
        parser.error(f"--margin: got {args.margin}; allowed: a number >= 0")
    args.pool_limit = parse_pool_limit(parser, "--pool-limit", args.pool_limit)
    if "rollouts" in vars(args):
        args.rollouts = parse_rollouts(parser, "--rollouts", args.rollouts)


SAME_LEVEL = "same"  # --others-rollouts: the other seats play at the --rollouts level


def add_one_search_flags(parser: argparse.ArgumentParser, searcher: str = "master") -> None:
    """The flags of one ``MasterCPU`` search (a measurement of one budget): ``--simulations``
    and ``--candidates``, ``add_search_flags``' flags, and ``--others-rollouts`` (the seats
    other than the ``searcher``'s in the rollouts). ``read_one_search_flags`` checks them."""
    parser.add_argument(
        "--simulations",
        default=str(DEFAULT_SIMULATIONS),
        help="rollouts a search plays over all its candidates; table: "
        f"{SIMULATIONS_TABLE}; kept in a run's settings as the number",
    )
    parser.add_argument(
        "--candidates",
        type=int,
        default=DEFAULT_CANDIDATES,
        help="asks each search compares, expert's choice first",
    )
    add_search_flags(parser)
    parser.add_argument(
        "--others-rollouts",
        default=SAME_LEVEL,
        help=f"the compiled CPU level that plays the seats other than {searcher}'s in the "
        f"rollouts; {SAME_LEVEL}: the --rollouts level",
    )


def read_one_search_flags(
    parser: argparse.ArgumentParser, args: argparse.Namespace, players: int
) -> bool:
    """Refuse bad values of ``add_one_search_flags``' flags and turn them into ``MasterCPU``'s
    settings in ``args``: ``simulations`` becomes the number (the table's at ``players``).
    Returns whether the budget was the table's."""
    args.simulations = parse_simulations(parser, "--simulations", args.simulations)
    by_table = args.simulations == BY_TABLE
    if by_table:
        args.simulations = default_simulations(players)
    read_search_flags(parser, args)
    others = parse_rollouts(
        parser, "--others-rollouts", args.others_rollouts, SAME_LEVEL, "the --rollouts level"
    )
    args.others_rollouts = None if others == SAME_LEVEL else others
    return by_table


def parse_list(parser: argparse.ArgumentParser, flag: str, text: str) -> list[str]:
    """A comma list with no empty entries (``"easy,,hard"`` and ``""`` are refused)."""
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        parser.error(f"{flag}: got {text!r}; allowed: a comma-separated list with no empty entries")
    return items


def parse_players_list(parser: argparse.ArgumentParser, flag: str, text: str) -> list[int]:
    """A comma list of table sizes, each 2..6 and given once."""
    counts = []
    for item in parse_list(parser, flag, text):
        try:
            counts.append(int(item))
        except ValueError:
            parser.error(f"{flag}: got {text!r}; allowed: comma-separated integers from 2 to 6")
    for index, count in enumerate(counts):
        rules_or_error(parser, "table", count, flag)
        if count in counts[:index]:  # the same tables measured twice
            parser.error(f"{flag}: {count} is given twice; allowed: each table size (2..6) once")
    return counts


def check_cpu_levels(parser: argparse.ArgumentParser, flag: str, names: Iterable[str]) -> None:
    """Refuse names that are not CPU levels."""
    for name in names:
        if name not in CPU_LEVELS:
            parser.error(f"{flag}: unknown CPU level {name!r}; allowed: {', '.join(CPU_LEVELS)}")


def rules_or_error(
    parser: argparse.ArgumentParser, preset: str, players: int, players_flag: str = "--players"
) -> Rules:
    """``Rules.preset(preset, players=players)``, or its refusal as a usage error."""
    try:
        return Rules.preset(preset, players=players)
    except ValueError as error:
        message = str(error)
        field, _, reason = message.partition(": ")
        if field == "preset":
            parser.error(f"--rules: {reason}")
        if field == "players":
            parser.error(f"{players_flag}: {reason}")
        parser.error(f"--rules {preset} with {players} players: {message}")


def can_write(path: Path, folder: bool) -> bool:
    """Whether a file can be made in the folder ``path`` (or the file ``path`` opened to
    write), found by trying: permission bits do not tell for root, nor on a read-only or
    virtual file system. Nothing is left behind, and an existing file is not changed."""
    try:
        if folder:
            with tempfile.TemporaryFile(dir=path):
                pass
        else:
            with open(path, "a"):
                pass
    except OSError:
        return False
    return True


EMPTY_PATH = "an empty path; give a file or folder name (. for the current folder)"


def output_path(text: str) -> Path:
    """An output flag's ``type``: a path, refused when empty (``Path("")`` is the current
    folder, where nobody asked to write)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(EMPTY_PATH)
    return Path(text)


def output_problem(path: str | Path, directory: bool = False) -> str | None:
    """Why the output file (or, with ``directory``, folder) ``path`` could not be written
    ("cannot write to PATH: REASON"), or None when it can. Missing folders on the way are
    fine if they could be created; nothing is created to find out."""
    if not str(path).strip():
        return EMPTY_PATH
    path = Path(path)
    try:
        reason = _output_reason(path, directory)
    except OSError as error:
        reason = error.strerror or str(error)
    return None if reason is None else f"cannot write to {path}: {reason}"


def _output_reason(path: Path, directory: bool) -> str | None:
    # Walk the path as the kernel and mkdir(parents=True) would, so that a broken symlink,
    # a file on the way, or ".." after a folder still to be made is found before the
    # command creates anything (mkdir would make the first folders, then fail).
    target = Path(path.anchor) if path.anchor else Path.cwd()
    parts = path.parts[1:] if path.anchor else path.parts
    for index, part in enumerate(parts):
        if part == ".":
            continue
        if part == "..":
            target = target.parent  # target has no symlinks left: its parent is the real one
            continue
        step = target / part
        last = index == len(parts) - 1
        shown = "it" if last else Path(path.anchor, *parts[: index + 1])  # as written
        if step.is_symlink():
            if not step.exists():
                return f"{shown} is a symlink to {os.readlink(step)}, which does not exist"
            step = Path(os.path.realpath(step))
        if not last and step.exists() and not step.is_dir():
            return f"{shown} is a file, not a folder"
        target = step
    kind = "folder" if directory else "file"
    if target.exists():
        if directory != target.is_dir():
            return f"it is {'a file' if directory else 'a folder'}, not a {kind}"
        return None if can_write(target, directory) else "it is not writable"
    parent = target.parent
    while not parent.exists():
        parent = parent.parent
    if not can_write(parent, folder=True):
        return f"the folder {parent} is not writable"
    return None


def first_missing_folder(folder: Path) -> Path | None:
    """The topmost of ``folder`` and its parents that does not exist (what
    ``mkdir(parents=True)`` would make first), or None when ``folder`` exists."""
    missing = None
    while not folder.exists():
        missing, folder = folder, folder.parent
    return missing


def remove_empty_folders(folder: Path, made: Path | None) -> None:
    """Remove ``folder`` and the folders above it up to ``made`` (the topmost one a command
    made, ``first_missing_folder``; None: it made none) while they are empty: what a
    command stopped before it kept anything leaves."""
    while made is not None and folder.is_relative_to(made):
        try:
            folder.rmdir()
        except OSError:  # not empty (something else is in it), or gone
            return
        folder = folder.parent


def check_output(
    parser: argparse.ArgumentParser, flag: str, path: str | Path, directory: bool = False
) -> None:
    """Refuse an output path that cannot be written (see ``output_problem``)."""
    problem = output_problem(path, directory)
    if problem is not None:
        parser.error(f"{flag}: {problem}")


def report_console(stderr: bool = False) -> Console:
    """A console for a command's tables: on a terminal as wide as the terminal; into a file
    or a pipe wide enough that no table wraps its cells (rich would assume 80 columns and
    split a figure over two lines, or cut it)."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 240)


@contextlib.contextmanager
def progress_bar(
    progress: bool | Callable[[int], None],
    total: int,
    label: str = "games",
    transient: bool = False,
) -> Iterator[Callable[[int], None]]:
    """``advance(done)`` for a long job of ``total`` steps: a rich progress bar on stderr
    (erased at the end if ``transient``), the caller's own callable, or nothing
    (``progress=False``)."""
    if callable(progress):
        yield progress
        return
    if not progress:
        yield lambda done: None
        return
    columns = (
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=transient) as bar:
        task = bar.add_task(label, total=total)
        yield lambda done: bar.update(task, completed=done)


def interrupted_note(done: int, total: int, what: str = "measurements") -> str:
    """The line a benchmark stopped by Ctrl-C prints below the figures it has: how many of
    its ``total`` measurements they come from (``done``), and how to have them all."""
    if done == 0:
        return (
            f"interrupted before the first of {total} {what} was complete: nothing to show; "
            "run the same command again to measure them"
        )
    return (
        f"interrupted after {done} of {total} {what}: the figures above are from those; "
        "run the same command again to measure them all"
    )


INTERRUPTED = 130  # the exit status of a command stopped by Ctrl-C (128 + SIGINT)


class Interrupted(KeyboardInterrupt):
    """A KeyboardInterrupt that says which signal asked for it (``signum``: SIGINT for
    Ctrl-C, SIGTERM), for the exit status 128 + it."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


def exit_status(interrupt: KeyboardInterrupt) -> int:
    """128 + the signal behind ``interrupt``: 130 for Ctrl-C (or a plain KeyboardInterrupt),
    143 for SIGTERM."""
    return 128 + getattr(interrupt, "signum", signal.SIGINT)


@contextlib.contextmanager
def interrupts_raise():
    """SIGINT and SIGTERM raise KeyboardInterrupt at once: for the stretches of a run that a
    resume starts again from their beginning (an evaluation, a final report, a fit, a
    measurement that keeps its games as it plays them), where stopping half way loses
    nothing saved; so SIGTERM (``kill``, a service manager) stops a command as Ctrl-C does.

    A signal is also remembered, since Python drops an exception raised inside a finalizer
    (a ``__del__``, such as a ``ZipFile``'s as a saved part is read): the ``check`` this
    yields raises it again, and so does leaving the block. The KeyboardInterrupt raised is
    an ``Interrupted`` naming the signal (``exit_status`` makes SIGTERM's 143).

    A process forked inside the block (a pool's worker) inherits the handler; there the
    signal ends it quietly with ``SystemExit`` (status 128 + the signal), which a
    multiprocessing child exits on without a traceback: its parent is the one that stops
    and says so. Not the signal's default death: a worker killed while it holds the pool's
    task-queue lock (as it waits for a deal) hangs the parent's ``Pool.terminate``."""
    received = []
    owner = os.getpid()

    def handle(signum, frame):
        if os.getpid() != owner:
            raise SystemExit(128 + signum)  # unwinds its ``with lock:`` blocks
        received.append(signum)
        raise Interrupted(signum)

    def check() -> None:
        if received:
            raise Interrupted(received[0])

    previous = {signum: signal.signal(signum, handle) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield check
        check()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def exit_interrupted(message: str, interrupt: KeyboardInterrupt | None = None) -> NoReturn:
    """End a command that Ctrl-C (or SIGTERM) stopped: ``message`` (what was kept, how to go
    on) on stderr, and exit status 128 + the signal (``exit_status``; 130 without an
    ``interrupt``), as the shells report a program that the signal ended."""
    print(message, file=sys.stderr)
    status = INTERRUPTED if interrupt is None else exit_status(interrupt)
    raise SystemExit(status) from None


def run_command(main: Callable[[], object]) -> None:
    """Run a command's ``main``. Output to a pipe closed early (``| head -1``) ends it
    quietly with exit status 1, as Python's docs advise
    (https://docs.python.org/3/library/signal.html#note-on-sigpipe) and as rich does for
    its own output: what was printed so far reached the reader, the rest goes nowhere."""
    try:
        main()
        sys.stdout.flush()  # what is still buffered meets the closed pipe here
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at devnull so that it cannot fail.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(1) from None


def launch(
    module: str,
    command: str,
    extra: str,
    libraries: Iterable[str],
    install: str,
    parser: Callable[[], argparse.ArgumentParser] | None = None,
) -> None:
    """Run ``module``'s ``cli()``, the ``command`` an optional ``extra`` provides. If one of
    the extra's ``libraries`` is not installed, say which extra to install (``install``: the
    pip command) instead of the import's traceback; any other import error is a bug and
    raises. A Ctrl-C during the imports (seconds, with torch) ends it in one line. With
    ``parser`` (a light module's), ``--help`` and a malformed flag are answered before the
    imports."""
    import importlib

    if parser is not None:
        require_extra(command, extra, libraries, install)
        parser().parse_args(sys.argv[1:])
    try:
        entry = importlib.import_module(module).cli
    except ModuleNotFoundError as error:
        missing = (error.name or "").split(".")[0]
        if missing not in libraries:
            raise
        sys.exit(missing_extra_message(command, extra, missing, install))
    except KeyboardInterrupt:
        print(f"{command}: interrupted while starting; nothing was done", file=sys.stderr)
        raise SystemExit(130) from None
    entry()


def require_extra(command: str, extra: str, libraries: Iterable[str], install: str) -> None:
    """Exit with the line ``launch`` prints if one of ``libraries`` is not installed: for a
    script (a benchmark) that imports an optional ``extra`` only once its arguments are
    read."""
    import importlib.util

    for library in libraries:
        if importlib.util.find_spec(library) is None:
            sys.exit(missing_extra_message(command, extra, library, install))


def missing_extra_message(command: str, extra: str, library: str, install: str) -> str:
    return f"{command}: needs the {extra} extra ({library} is not installed): {install}"
