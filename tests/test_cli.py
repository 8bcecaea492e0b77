"""Every command refuses bad arguments before it starts work: a usage line, one "error:" line
naming the option, exit code 2, no traceback (the checks of ``gofish_env.cli``); output paths
are checked before any work too; ``--help`` shows the defaults. How each program checks the
saved agents it is given against its table is tested with the program: tests/test_evaluate.py,
test_tournament.py, test_play.py, and test_players.py for ``make_player``/``load_agent``."""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import usage_error

from gofish_baselines import ladder, master_strength, tournament
from gofish_env import cli, play
from gofish_env.cli import (
    add_one_search_flags,
    add_search_flags,
    output_problem,
    read_one_search_flags,
    read_search_flags,
)
from gofish_env.master import DEFAULT_ROLLOUTS, MasterCPU, default_simulations
from gofish_training import evaluate
from gofish_web import replay_page

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _benchmark(name: str):
    """A benchmark script as a module (``benchmarks/`` is not a package)."""
    module_name = f"benchmarks_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[module_name]


def _play_main(argv):
    return play.main(argv, input_fn=lambda prompt: "quit", output=lambda text: None)


COMMANDS = {
    "evaluate": evaluate.main,
    "ladder": ladder.main,
    "tournament": tournament.main,
    "play": _play_main,
    "engine_speed": lambda argv: _benchmark("engine_speed").main(argv),
    "env_speed": lambda argv: _benchmark("env_speed").main(argv),
    "cpu_speed": lambda argv: _benchmark("cpu_speed").main(argv),
    "world_sampler": lambda argv: _benchmark("world_sampler").main(argv),
    "master_oracle": lambda argv: _benchmark("master_oracle").main(argv),
    "master_speed": lambda argv: _benchmark("master_speed").main(argv),
    "master_regret": lambda argv: _benchmark("master_regret").main(argv),
    "training_speed": lambda argv: _benchmark("training_speed").main(argv),
    "render_speed": lambda argv: _benchmark("render_speed").main(argv),
    "web_load": lambda argv: _benchmark("web_load").main(argv),
    "replay": lambda argv: replay_page.main(argv),
    "web": lambda argv: importlib.import_module("gofish_web.server").main(argv),
}


# benchmarks/training_speed.py imports gofish_training.train, which needs the train extra;
# the web table and its load benchmark need the web extra.
NEEDS_TORCH = {"training_speed"}
NEEDS_WEB = {"web", "web_load"}


def torch_marks(command: str):
    if command in NEEDS_WEB:
        return pytest.mark.web
    return pytest.mark.torch if command in NEEDS_TORCH else ()


def refused(capsys, command: str, argv: list[str]) -> str:
    """Run the command, expect exit code 2; the one error line it printed."""
    return usage_error(capsys, COMMANDS[command], argv)


# ---------------------------------------------------------------------- bad arguments

BAD_ARGUMENTS = [
    # gofish_training.evaluate (the model path is checked last, so any path will do)
    ("evaluate", ["m.zip", "--deals", "0"], "--deals: got 0; allowed: an integer >= 1"),
    ("evaluate", ["m.zip", "--players", "1"], "--players: got 1; allowed: an integer from 2 to 6"),
    ("evaluate", ["m.zip", "--players", "7"], "--players: got 7; allowed: an integer from 2 to 6"),
    ("evaluate", ["m.zip", "--rules", "chess"], "--rules: unknown preset 'chess'; allowed: "),
    (
        "evaluate",
        ["m.zip", "--rules", "quick", "--players", "5"],
        "--players: the 'quick' preset is for 2..4 players, got 5",
    ),
    ("evaluate", ["m.zip", "--cpus", "random,wizard"], "--cpus: unknown CPU level 'wizard'"),
    ("evaluate", ["m.zip", "--cpus", "random,,easy"], "--cpus: got 'random,,easy'; allowed: "),
    ("evaluate", ["m.zip", "--cpus", ""], "--cpus: got ''; allowed: a comma-separated list"),
    # gofish_baselines.ladder
    ("ladder", ["--games", "0"], "--games: got 0; allowed: an integer >= 1"),
    ("ladder", ["--games", "-3"], "--games: got -3; allowed: an integer >= 1"),
    ("ladder", ["--players", "2,7"], "--players: got 7; allowed: an integer from 2 to 6"),
    ("ladder", ["--players", "1"], "--players: got 1; allowed: an integer from 2 to 6"),
    ("ladder", ["--players", "2,four"], "--players: got '2,four'; allowed: comma-separated"),
    ("ladder", ["--players", "2,"], "--players: got '2,'; allowed: a comma-separated list"),
    ("ladder", ["--levels", "random,wizard"], "--levels: unknown CPU level 'wizard'"),
    ("ladder", ["--levels", "random"], "--levels: got 'random'; allowed: at least 2 CPU levels"),
    ("ladder", ["--levels", "easy,easy"], "--levels: 'easy' is given twice; allowed: each CPU"),
    ("ladder", ["--levels", "random,easy,random"], "--levels: 'random' is given twice"),
    ("ladder", ["--out", "ladder.png"], "--out: got 'ladder.png'; the chart is saved as OUT.png"),
    # gofish_baselines.tournament
    ("tournament", ["--games", "0"], "--games: got 0; allowed: an integer >= 1"),
    ("tournament", ["--workers", "0"], "--workers: got 0; allowed: an integer >= 1"),
    ("tournament", ["--max-asks", "0"], "--max-asks: got 0; allowed: an integer >= 1"),
    ("tournament", ["--players", "1"], "--players: got 1; allowed: an integer from 2 to 6"),
    ("tournament", ["--players", "7"], "--players: got 7; allowed: an integer from 2 to 6"),
    ("tournament", ["--rules", "chess"], "--rules: unknown preset 'chess'; allowed: "),
    (
        "tournament",
        ["--rules", "ocean", "--players", "6"],
        "--players: the 'ocean' preset is for 2..4 players, got 6",
    ),
    ("tournament", ["--cpus", "random,wizard"], "--cpus: entrant 'wizard': unknown CPU level"),
    ("tournament", ["--cpus", "random,,easy"], "--cpus: got 'random,,easy'; allowed: "),
    ("tournament", ["--cpus", "random"], "--cpus: entrants: got 1; a tournament needs at least 2"),
    (
        "ladder",
        ["--games", "1", "--players", "2,2", "--levels", "random,easy"],
        "--players: 2 is given twice; allowed: each table size",
    ),
    ("engine_speed", ["--players", "4,2,4"], "--players: 4 is given twice; allowed: "),
    (
        "evaluate",
        ["m.zip", "--seed", "-1"],
        "--seed: got -1; allowed: an integer from 0 to 9223372036854775807 (2**63 - 1)",
    ),
    (
        "ladder",
        ["--games", "1", "--players", "2", "--levels", "random,easy", "--seed", "-1"],
        "--seed: got -1; allowed: an integer from 0 to 9223372036854775807",
    ),
    ("play", ["--seed", "-1"], "--seed: got -1; allowed: an integer from 0 to 9223372036854775807"),
    ("play", ["--seed", str(2**63)], f"--seed: got {2**63}; allowed: an integer from 0 to "),
    (
        "tournament",
        ["--cpus", "random,easy", "--games", "4", "--no-progress", "--seed", str(2**64)],
        f"--seed: got {2**64}; allowed: an integer from 0 to 9223372036854775807 (2**63 - 1)",
    ),
    (
        "tournament",
        ["--cpus", "nope"],
        "--cpus: entrant 'nope': unknown CPU level 'nope'; allowed: ",
    ),
    ("tournament", ["--cpus", "a=random,a=easy"], "--cpus: the name 'a' is given twice"),
    ("tournament", ["--cpus", "a=,random"], "--cpus: got 'a='; allowed: NAME=SPEC with a name"),
    ("tournament", ["--cpus", "=easy,hard"], "--cpus: got '=easy'; allowed: NAME=SPEC with a name"),
    ("tournament", ["--cpus", " = easy,hard"], "--cpus: got '= easy'; allowed: NAME=SPEC with "),
    (
        "tournament",
        ["--cpus", "easy,mix:"],
        "--cpus: got 'easy,mix:'; a mix (mix:a,b) cannot be entered here, since the list "
        "splits on commas; allowed: CPU levels and model:PATH, each optionally NAME=SPEC",
    ),
    # gofish_env.play
    ("play", ["--players", "1"], "--players: got 1; allowed: an integer from 2 to 6"),
    ("play", ["--players", "7"], "--players: got 7; allowed: an integer from 2 to 6"),
    ("play", ["--rules", "chess"], "--rules: unknown preset 'chess'; allowed: "),
    (
        "play",
        ["--rules", "quick", "--players", "5"],
        "--players: the 'quick' preset is for 2..4 players, got 5",
    ),
    ("play", ["--cpus", "wizard"], "--cpus: unknown CPU level 'wizard'"),
    ("play", ["--cpus", "random,,easy"], "--cpus: got 'random,,easy'; allowed: "),
    ("play", ["--humans", "5"], "--humans: got 5; allowed: 0 to 4"),
    ("play", ["--seat", "4"], "--seat: got 4; allowed: 0 to 3"),
    ("play", ["--delay", "-1"], "--delay: got -1; allowed: 0 to 60 seconds"),
    ("play", ["--cpus", "model:nowhere/x.zip"], "model file not found: nowhere/x.zip"),
    # benchmarks
    ("engine_speed", ["--seconds", "0"], "--seconds: got 0; allowed: a number of seconds > 0"),
    ("engine_speed", ["--repeats", "0"], "--repeats: got 0; allowed: an integer >= 1"),
    ("engine_speed", ["--players", "2,7"], "--players: got 7; allowed: an integer from 2 to 6"),
    ("engine_speed", ["--players", "2;4"], "--players: got '2;4'; allowed: comma-separated"),
    ("engine_speed", ["--rules", "chess"], "--rules: unknown preset 'chess'; allowed: "),
    (
        "engine_speed",
        ["--rules", "quick"],  # the default --players 2,4,6 includes 6
        "--players: the 'quick' preset is for 2..4 players, got 6",
    ),
    ("env_speed", ["--seconds", "-1"], "--seconds: got -1; allowed: a number of seconds > 0"),
    ("env_speed", ["--repeats", "0"], "--repeats: got 0; allowed: an integer >= 1"),
    ("env_speed", ["--players", "1"], "--players: got 1; allowed: an integer from 2 to 6"),
    ("world_sampler", ["--truth-pool", "-1"], "--truth-pool: got -1; allowed: an integer >= 0"),
    ("world_sampler", ["--truth-games", "0"], "--truth-games: got 0; allowed: an integer >= 1"),
    ("world_sampler", ["--fit-games", "0"], "--fit-games: got 0; allowed: an integer >= 1"),
    (
        "world_sampler",
        ["--calibration-games", "0"],
        "--calibration-games: got 0; allowed: an integer >= 1",
    ),
    ("master_oracle", ["--deals", "0"], "--deals: got 0; allowed: an integer >= 1"),
    ("master_oracle", ["--players", "7"], "--players: got 7; allowed: an integer from 2 to 6"),
    ("master_oracle", ["--compare", "nowhere.jsonl"], "--compare: no such file: nowhere.jsonl"),
    ("master_oracle", ["--rollouts", "master"], "--rollouts: got 'master'; allowed: random, "),
    ("master_speed", ["--games", "0"], "--games: got 0; allowed: an integer >= 1"),
    ("master_speed", ["--rollouts", "master"], "--rollouts: got 'master'; allowed: random, "),
    ("master_speed", ["--margin", "-1"], "--margin: got -1.0; allowed: a number >= 0"),
    ("master_speed", ["--pool-limit", "-3"], "--pool-limit: got '-3'; allowed: an integer >= 0"),
    ("master_regret", ["--margin", "-1"], "--margin: got -1.0; allowed: a number >= 0"),
    ("master_regret", ["--rollouts", "hard"], "unrecognized arguments: --rollouts hard"),
    (
        "master_regret",
        ["--simulations", "64/others_rollouts=table"],
        "--simulations: others_rollouts: got 'table'; allowed: random, ",
    ),
    ("master_regret", ["--games", "0"], "--games: got 0; allowed: an integer >= 1"),
    ("master_regret", ["--players", "2,4"], "--players: got '2,4'; allowed: one seat count"),
    ("master_regret", ["--simulations", "64,x"], "--simulations: got 'x'; allowed: integers >= 2"),
    ("master_regret", ["--reference", "1"], "--reference: got 1; allowed: an integer >= 2"),
    (
        "master_regret",
        ["--simulations", "64/colour=red"],
        "--simulations: got 'colour=red'; allowed after a budget: /NAME=VALUE with NAME one of "
        "margin, most_held, assume_sure_hits, rollouts, others_rollouts",
    ),
    (
        "master_regret",
        ["--simulations", "64/margin=-1"],
        "--simulations: margin: got -1.0; allowed: a number >= 0",
    ),
    (
        "master_regret",
        ["--simulations", "64/rollouts=master"],
        "--simulations: rollouts: got 'master'; allowed: random, ",
    ),
    ("master_regret", ["--simulations", "64,64"], "--simulations: '64' is named twice"),
    (
        "master_regret",
        ["--simulations", "64/margin=wide"],
        "--simulations: margin: got 'wide'; allowed: a number >= 0",
    ),
    (
        "master_regret",
        ["--simulations", "64/assume_sure_hits=yes"],
        "--simulations: assume_sure_hits: got 'yes'; allowed: 0, 1, true, false",
    ),
    (
        "master_regret",
        ["--pools", "5-2"],
        "--pools: got '5-2'; allowed: LOW-HIGH, whole numbers, LOW <= HIGH",
    ),
    (
        "master_regret",
        ["--pool-limit", "x"],
        "--pool-limit: got 'x'; allowed: an integer >= 0, none, or table",
    ),
    (
        "master_regret",
        ["--reference-rollouts", "master"],
        "--reference-rollouts: got 'master'; allowed: random, ",
    ),
    ("master_regret", ["--summary", "nowhere.jsonl"], "--summary: no such file: nowhere.jsonl"),
    ("cpu_speed", ["--seconds", "0"], "--seconds: got 0; allowed: a number of seconds > 0"),
    ("cpu_speed", ["--batch", "0"], "--batch: got 0; allowed: an integer >= 1"),
    ("cpu_speed", ["--levels", "hard,master"], "--levels: got 'master'; allowed: random, "),
    ("training_speed", ["--timesteps", "0"], "--timesteps: got 0; allowed: an integer >= 1"),
    ("training_speed", ["--envs", "0"], "--envs: got 0; allowed: an integer >= 1"),
    ("training_speed", ["--vec-envs", "dummy,warp"], "--vec-envs: unknown vec env 'warp'"),
    ("training_speed", ["--vec-envs", "dummy,"], "--vec-envs: got 'dummy,'; allowed: "),
    ("render_speed", ["--games", "0"], "--games: got 0; allowed: an integer >= 1"),
    ("render_speed", ["--players", "9"], "--players: got 9; allowed: an integer from 2 to 6"),
    ("web_load", ["--tables", "0"], "--tables: got 0; allowed: an integer >= 1"),
    ("web", ["--port", "-1"], "--port: got -1; allowed: 0 to 65535"),
    ("replay", ["game.json", "-o", "game.json"], "--output: the page would replace the replay"),
]


@pytest.mark.parametrize(
    ("command", "argv", "message"),
    [
        pytest.param(
            command, argv, message, id=f"{command} {' '.join(argv)}", marks=torch_marks(command)
        )
        for command, argv, message in BAD_ARGUMENTS
    ],
)
def test_bad_arguments_are_refused_before_any_work(capsys, command, argv, message):
    assert refused(capsys, command, argv).startswith(message)


def test_the_search_flags_default_to_masters_settings_and_read_into_them():
    parser = argparse.ArgumentParser()
    add_search_flags(parser)
    args = parser.parse_args([])
    read_search_flags(parser, args)
    master = MasterCPU()
    assert (args.margin, args.pool_limit) == (master.margin, master.pool_limit)
    assert args.rollouts == DEFAULT_ROLLOUTS
    args = parser.parse_args(["--margin", "0.5", "--pool-limit", "none", "--rollouts", "expert"])
    read_search_flags(parser, args)
    assert (args.margin, args.pool_limit, args.rollouts) == (0.5, None, "expert")
    args = parser.parse_args(["--pool-limit", "12"])
    read_search_flags(parser, args)
    assert args.pool_limit == 12
    without_rollouts = argparse.ArgumentParser()
    add_search_flags(without_rollouts, pool_limit_help="positions", rollouts=False)
    args = without_rollouts.parse_args(["--margin", "2"])
    read_search_flags(without_rollouts, args)
    assert "rollouts" not in vars(args) and args.margin == 2.0


def test_one_searchs_flags_read_the_table_budget_at_the_tables_players_and_same_as_none():
    parser = argparse.ArgumentParser()
    add_one_search_flags(parser)
    args = parser.parse_args([])
    assert read_one_search_flags(parser, args, 2) is True
    assert args.simulations == default_simulations(2) != default_simulations(4)
    assert (args.candidates, args.others_rollouts) == (MasterCPU().candidates, None)
    assert args.margin == MasterCPU().margin  # add_search_flags' flags come with them
    args = parser.parse_args(["--simulations", "64", "--others-rollouts", "easy"])
    assert read_one_search_flags(parser, args, 4) is False
    assert (args.simulations, args.others_rollouts) == (64, "easy")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--simulations", "0"], "--simulations: got '0'; allowed: an integer >= 1, or table"),
        (["--others-rollouts", "master"], "--others-rollouts: got 'master'; allowed: "),
    ],
)
def test_one_searchs_bad_flags_are_refused_by_name(capsys, argv, message):
    parser = argparse.ArgumentParser()
    add_one_search_flags(parser)
    with pytest.raises(SystemExit) as stopped:
        read_one_search_flags(parser, parser.parse_args(argv), 2)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def _training_main(name: str):
    return lambda argv: importlib.import_module(f"gofish_training.{name}").main(argv)


# Every command with a parser: COMMANDS, master_strength and the two training commands.
PARSED = COMMANDS | {
    "master_strength": master_strength.main,
    "train": _training_main("train"),
    "rllib_train": _training_main("rllib_train"),
}
PARSED_PARAMS = [pytest.param(command, marks=torch_marks(command)) for command in COMMANDS] + [
    "master_strength",
    pytest.param("train", marks=pytest.mark.torch),
    pytest.param("rllib_train", marks=pytest.mark.torch),
]


def parser_of(monkeypatch, command: str) -> argparse.ArgumentParser:
    """The parser ``command`` builds, caught as it parses (before any work)."""
    parsers = []

    def keep_the_parser(self, args=None, namespace=None):
        parsers.append(self)
        raise SystemExit(0)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", keep_the_parser)
    with pytest.raises(SystemExit):
        PARSED[command]([])
    return parsers[0]


@pytest.mark.parametrize("command", PARSED_PARAMS)
def test_every_flag_says_what_it_is_for(monkeypatch, command):
    actions = parser_of(monkeypatch, command)._actions
    silent = [action.option_strings or action.dest for action in actions if not action.help]
    assert not silent, f"{command}: no help for {silent}"


@pytest.mark.parametrize("command", PARSED_PARAMS)
def test_the_help_shows_a_default_only_where_there_is_one(monkeypatch, command):
    parser = parser_of(monkeypatch, command)
    help_text = " ".join(parser.format_help().split())
    assert "(default: None" not in help_text and "(default: [])" not in help_text
    assert "(default: )" not in help_text  # an empty string default: unset unless given
    assert not re.search(r"\(default: [^)]*\) \(default:", help_text)  # never two
    # A plain switch is off unless given; only a --name/--no-name pair says which holds.
    pairs = sum(
        isinstance(action, argparse.BooleanOptionalAction) and action.default is False
        for action in parser._actions
    )
    assert help_text.count("(default: False)") == pairs


# ---------------------------------------------------------------------- output paths


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "a_file.txt"
    path.write_text("not a folder\n")
    return path


def test_evaluate_refuses_a_json_file_inside_a_file(a_file, capsys):
    target = a_file / "out.json"
    message = refused(capsys, "evaluate", ["m.zip", "--json", str(target)])
    assert message == f"--json: cannot write to {target}: {a_file} is a file, not a folder"


def test_evaluate_refuses_a_json_path_that_is_a_folder(tmp_path, capsys):
    message = refused(capsys, "evaluate", ["m.zip", "--json", str(tmp_path)])
    assert message == f"--json: cannot write to {tmp_path}: it is a folder, not a file"


def test_ladder_refuses_an_out_file_inside_a_file(a_file, capsys):
    target = a_file / "sub" / "ladder.md"
    message = refused(capsys, "ladder", ["--games", "1", "--out", str(target)])
    assert message == f"--out: cannot write to {target}: {a_file} is a file, not a folder"


def test_tournament_refuses_an_out_folder_that_is_a_file(a_file, capsys):
    message = refused(capsys, "tournament", ["--out", str(a_file)])
    assert message == f"--out: cannot write to {a_file}: it is a file, not a folder"


def test_an_output_in_a_folder_that_is_not_writable_is_refused(tmp_path, capsys, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    real_temporary_file = cli.tempfile.TemporaryFile

    def temporary_file(*args, dir=None, **kwargs):  # as chmod 0o500 would do (but for root)
        if Path(dir) == locked:
            raise PermissionError(13, "Permission denied")
        return real_temporary_file(*args, dir=dir, **kwargs)

    monkeypatch.setattr(cli.tempfile, "TemporaryFile", temporary_file)
    message = refused(capsys, "tournament", ["--out", str(locked / "results")])
    assert (
        message
        == f"--out: cannot write to {locked / 'results'}: the folder {locked} is not writable"
    )
    message = refused(capsys, "evaluate", ["m.zip", "--json", str(locked / "e.json")])
    assert message.endswith(f"the folder {locked} is not writable")
    message = refused(capsys, "tournament", ["--out", str(locked)])
    assert message == f"--out: cannot write to {locked}: it is not writable"


# Every output flag of the commands that play or train: a path given as X ends in X.
OUTPUT_FLAGS = [
    ("tournament", ["--cpus", "random,easy", "--games", "4", "--no-progress"], "--out", "{}"),
    ("tournament", ["--cpus", "random,easy", "--games", "4", "--no-progress"], "--replays", "{}"),
    ("evaluate", ["m.zip", "--deals", "1", "--cpus", "random"], "--replays", "{}"),
    ("evaluate", ["m.zip", "--deals", "1", "--cpus", "random"], "--keep", "{}"),
    ("evaluate", ["m.zip", "--deals", "1", "--cpus", "random"], "--json", "{}/y.json"),
    ("ladder", ["--games", "1", "--players", "2", "--levels", "random,easy"], "--keep", "{}"),
    ("ladder", ["--games", "1", "--players", "2", "--levels", "random,easy"], "--out", "{}/y.md"),
    pytest.param("web", ["--port", "0"], "--replays", "{}", marks=pytest.mark.web),
    pytest.param("train", ["--timesteps", "256"], "--out", "{}", marks=pytest.mark.torch),
]


def _output_refused(capsys, monkeypatch, command: str, argv: list[str]) -> str:
    if command == "train":  # marked torch: run only where the train extra is installed
        from gofish_training import train

        return usage_error(capsys, train.main, argv)
    if command == "web":  # marked web, likewise
        server = importlib.import_module("gofish_web.server")

        def serve(port):  # an accepted path would start the server, which never returns
            raise AssertionError("the server started")

        monkeypatch.setattr(server, "bind", serve)
    return refused(capsys, command, argv)


@pytest.mark.parametrize(("command", "argv", "flag", "shape"), OUTPUT_FLAGS)
def test_an_output_through_a_broken_symlink_is_refused_before_anything_is_made(
    command, argv, flag, shape, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    os.symlink("nowhere", "dangling")  # mkdir on it raised FileExistsError
    given = shape.format("dangling")
    message = _output_refused(capsys, monkeypatch, command, [*argv, flag, given])
    broken = "it" if given == "dangling" else "dangling"
    assert message == (
        f"{flag}: cannot write to {given}: {broken} is a symlink to nowhere, which does not exist"
    )
    assert sorted(os.listdir(tmp_path)) == ["dangling"]  # no results/ or played.jsonl


@pytest.mark.parametrize(("command", "argv", "flag", "shape"), OUTPUT_FLAGS)
def test_an_output_back_through_a_new_folder_onto_a_file_makes_no_folder(
    command, argv, flag, shape, tmp_path, monkeypatch, capsys
):
    # mkdir(parents=True) would make adir/new before finding that afile is a file.
    monkeypatch.chdir(tmp_path)
    Path("afile").write_text("text\n")
    Path("adir").mkdir()
    given = shape.format("adir/new/../../afile")
    message = _output_refused(capsys, monkeypatch, command, [*argv, flag, given])
    if given.endswith("afile"):
        assert message == f"{flag}: cannot write to {given}: it is a file, not a folder"
    else:
        assert message == (
            f"{flag}: cannot write to {given}: adir/new/../../afile is a file, not a folder"
        )
    assert sorted(os.listdir(tmp_path)) == ["adir", "afile"]
    assert os.listdir("adir") == []


def test_output_problem_follows_a_working_symlink_and_dots(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    assert output_problem(tmp_path / "link", directory=True) is None
    assert output_problem(tmp_path / "link" / "new" / "out.json") is None
    assert output_problem(tmp_path / "real" / "new" / ".." / "out.json") is None
    assert sorted(path.name for path in tmp_path.iterdir()) == ["link", "real"]


def test_output_problem_accepts_new_and_existing_paths(tmp_path):
    assert output_problem(tmp_path / "new" / "deeper" / "out.json") is None
    existing = tmp_path / "old.json"
    existing.write_text("{}")
    assert output_problem(existing) is None  # overwritten, as the help says
    assert output_problem(tmp_path, directory=True) is None
    assert existing.read_text() == "{}"  # the check changed nothing
    assert sorted(path.name for path in tmp_path.iterdir()) == ["old.json"]  # nor made


EMPTY_OUTPUTS = [
    ("evaluate", ["m.zip", "--json", ""]),
    ("evaluate", ["m.zip", "--replays", ""]),
    ("evaluate", ["m.zip", "--keep", ""]),
    ("ladder", ["--out", ""]),
    ("ladder", ["--keep", ""]),
    ("tournament", ["--replays", ""]),
    ("replay", ["x.jsonl", "--output", ""]),
    ("web", ["--replays", ""]),
    ("master_oracle", ["--out", ""]),
    ("master_regret", ["--out", ""]),
    ("master_strength", ["--out", ""]),
    ("train", ["--out", ""]),
    ("rllib_train", ["--out", ""]),
]


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        pytest.param(
            command,
            argv,
            id=f"{command} {argv[-2]}",
            marks=pytest.mark.torch if command.endswith("train") else torch_marks(command),
        )
        for command, argv in EMPTY_OUTPUTS
    ],
)
def test_an_empty_output_path_is_refused_not_taken_for_the_current_folder(
    capsys, tmp_path, monkeypatch, command, argv
):
    # Path("") is ".": the command would have written into the folder it ran in.
    monkeypatch.chdir(tmp_path)
    message = usage_error(capsys, PARSED[command], argv)
    assert message.endswith(f"{argv[-2]}: {cli.EMPTY_PATH}")
    assert list(tmp_path.iterdir()) == []


def test_the_tournament_takes_an_empty_out_as_none_as_its_help_says(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tournament.main(["--players", "2", "--games", "2", "--out", "", "--no-progress"])
    assert "expert" in capsys.readouterr().out  # the standings, printed only
    assert list(tmp_path.iterdir()) == []


def test_an_output_where_no_file_can_be_made_is_refused_even_for_root(capsys):
    # /proc refuses new files whatever the permission bits say (and root passes those).
    message = refused(capsys, "tournament", ["--out", "/proc/gofish-results"])
    assert message == (
        "--out: cannot write to /proc/gofish-results: the folder /proc is not writable"
    )
    assert output_problem("/proc/gofish.json") == (
        "cannot write to /proc/gofish.json: the folder /proc is not writable"
    )
    assert output_problem("/proc/version") == "cannot write to /proc/version: it is not writable"


@pytest.mark.parametrize("command", ["master_strength", "master_regret"])
def test_the_search_measurements_refuse_an_out_they_cannot_write_before_any_game(command, capsys):
    main = PARSED[command]
    message = usage_error(
        capsys,
        main,
        [
            "--games" if command == "master_regret" else "--deals",
            "1",
            "--out",
            "/proc/gofish.jsonl",
        ],
    )
    assert message == "--out: cannot write to /proc/gofish.jsonl: the folder /proc is not writable"


# ---------------------------------------------------------------------- a closed output


def run_with_closed_output(folder: Path, argv: list[str]) -> int:
    """Run ``python ARGV`` in ``folder`` with its stdout a pipe whose reader is gone before
    the first line (``... | head -0``); its exit status. It must print no traceback. Its
    output is unbuffered (``-u``), as a long one is: each line meets the closed pipe."""
    read, write = os.pipe()
    os.close(read)
    try:
        process = subprocess.run(
            [sys.executable, "-u", *argv],
            cwd=folder,
            stdout=write,
            stderr=subprocess.PIPE,
            timeout=600,
        )
    finally:
        os.close(write)
    err = process.stderr.decode()
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    return process.returncode


CLOSED_OUTPUT = {  # the command, and a file it must write
    "tournament": (
        "gofish_baselines.tournament --cpus random,easy --players 2 --games 2 --no-progress "
        "--out out",
        "out/results.json",
    ),
    "ladder": (
        "gofish_baselines.ladder --levels random,easy --players 2 --games 1 --out out/ladder.md",
        "out/ladder.md",
    ),
}


@pytest.mark.parametrize("command", sorted(CLOSED_OUTPUT))
def test_an_output_closed_early_ends_the_command_quietly_with_its_files_written(tmp_path, command):
    argv, written = CLOSED_OUTPUT[command]
    assert run_with_closed_output(tmp_path, ["-m", *argv.split()]) == 1  # as Python's docs advise
    assert (tmp_path / written).is_file()


@pytest.mark.torch  # the saved agents
def test_an_evaluation_whose_output_is_closed_early_ends_quietly_with_its_json(agents, tmp_path):
    argv = ["-m", "gofish_training.evaluate", agents["recorded"], "--cpus", "random"]
    argv += ["--deals", "1", "--json", "out/eval.json"]
    assert run_with_closed_output(tmp_path, argv) == 1
    assert (tmp_path / "out" / "eval.json").is_file()


# ---------------------------------------------------------------------- help


HELP_DEFAULTS = {
    "evaluate": ["(default: 200)", "(default: random,easy,normal,hard)", "(default: table)"],
    "ladder": ["(default: 500)", "(default: 2,4)", "(default: print only)"],
    "tournament": ["(default: 200)", "(default: results/tournament)", "(default: 1000)"],
    "play": ["(default: 4)", "(default: table)", "(default: 0.0)"],
    "engine_speed": ["(default: 3.0)", "(default: 2,4,6)", "(default: best)"],
    "env_speed": ["(default: 3.0)", "(default: 2,4,6)"],
    "cpu_speed": ["(default: 2,4)", "(default: random,easy,normal,hard,expert)", "(default: 1024)"],
    "training_speed": ["(default: 100000)", "(default: 2)", "(default: mix:random,easy,normal)"],
    "render_speed": ["(default: 4)", "(default: 20)"],
    "world_sampler": ["(default: 2000)", "(default: 2,4)", "(default: 170)", "(default: 100)"],
    "master_oracle": ["(default: 2)", "(default: 600)", "(default: 1)", "(default: table)"],
    "master_speed": ["(default: 2,4)", "(default: 64,256,1024,4096)", "(default: table)"],
    "master_regret": ["(default: 2)", "(default: 1024,4096,8192)", "(default: 16384)"],
    "web_load": ["(default: 60)"],
    "replay": ["(default: the replay's name with .html)"],
    "web": ["(default: 8000)", "(default: 1000)", "(default: none saved)"],
}


@pytest.mark.parametrize(
    "command", [pytest.param(command, marks=torch_marks(command)) for command in COMMANDS]
)
def test_help_shows_the_defaults(capsys, command):
    with pytest.raises(SystemExit) as exit_info:
        COMMANDS[command](["--help"])
    assert exit_info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps long lines
    for default in HELP_DEFAULTS[command]:
        assert default in out
    if command in ("evaluate", "tournament"):
        assert "replaced" in out


def test_the_engine_help_names_every_level_auto_plays_in_the_vector_engine(capsys):
    from gofish_env.evaluation.batched import COMPILED

    with pytest.raises(SystemExit):
        tournament.main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert f"compiled CPU level ({COMPILED[0]}..{COMPILED[-1]}) and no --replays" in out


def test_the_cpu_benchmark_times_each_level_in_python_and_compiled(capsys):
    _benchmark("cpu_speed").main(
        ["--players", "2", "--levels", "hard,expert", "--seconds", "0.05", "--repeats", "1"]
    )
    rows = [line for line in capsys.readouterr().out.splitlines() if "│" in line]
    for level in ("hard", "expert"):
        (row,) = [cells for line in rows if (cells := line.split("│"))[2].strip() == level]
        python, compiled = (float(cells.strip().replace(",", "")) for cells in row[3:5])
        assert python > 0 and compiled > 0 and row[5].strip().endswith("x")


def test_the_master_benchmark_times_every_budget_at_the_same_positions(capsys):
    _benchmark("master_speed").main(["--players", "2", "--simulations", "8,16", "--games", "1"])
    rows = [line.split("│") for line in capsys.readouterr().out.splitlines() if "│" in line]
    timed = {cells[2].strip(): cells for cells in rows if cells[1].strip() == "2"}
    assert sorted(timed) == ["16", "8"]
    # Both budgets are timed at every decision of the same game, and some of them search.
    shares = {budget: cells[6].strip() for budget, cells in timed.items()}
    assert shares["8"].split(" of ")[1] == shares["16"].split(" of ")[1]
    for cells in timed.values():
        assert float(cells[3]) > 0 and float(cells[4]) > 0
        assert not cells[6].strip().startswith("0%")


def test_a_table_into_a_pipe_keeps_each_figure_on_one_line():
    """Into a file or a pipe (as here, under pytest) a report is wide enough that rich does
    not split a cell such as ``[0.491, 0.569]`` over two lines."""
    import io

    from rich.table import Table

    from gofish_env.cli import report_console

    console = report_console()
    assert console.width == 240
    table = Table()
    for header in ("players", "engine", "decisions/s", "95% CI", "vs OpenSpiel"):
        table.add_column(header)
    table.add_row(
        "4",
        "VectorGame N=1,024 play, rules only, rules compiled in",
        "11,448,121",
        "[0.491, 0.569]",
        "6.88x",
    )
    console.file = io.StringIO()
    console.print(table)
    row = next(line for line in console.file.getvalue().splitlines() if "VectorGame" in line)
    assert "[0.491, 0.569]" in row and "11,448,121" in row and "6.88x" in row
