"""Every command refuses bad arguments before it starts work: a usage line, one "error:" line
naming the option, exit code 2, no traceback. Saved agents are checked against the table
they are asked to play at (``gofish_env.agent_files``)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from gofish_baselines import ladder, tournament
from gofish_env import cli, play
from gofish_env.agent_files import AgentFileError, write_agent_rules
from gofish_env.cli import output_problem
from gofish_env.players import load_agent, make_player
from gofish_env.rules import Rules
from gofish_training import evaluate
from gofish_training.agents import load_model

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
    "training_speed": lambda argv: _benchmark("training_speed").main(argv),
}


def refused(capsys, command: str, argv: list[str]) -> str:
    """Run the command, expect exit code 2; the one error line it printed."""
    with pytest.raises(SystemExit) as exit_info:
        COMMANDS[command](argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if ": error: " in line]
    assert len(lines) == 1, err
    assert err.startswith("usage: ")
    return lines[0].split(": error: ", 1)[1]


# ---------------------------------------------------------------------- saved agents


@pytest.fixture(scope="module")
def agents(tmp_path_factory):
    """A tiny untrained 4-player model with its rules in the zip; the same model without
    them in a run folder whose args.json says so; and a checkpoint below that folder."""
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


MISMATCH_4_TO_3 = "was trained for 4 players under table rules; this table is 3 players"


@pytest.mark.parametrize("which", ["recorded", "run", "checkpoint"])
def test_evaluate_refuses_a_model_trained_for_another_player_count(agents, capsys, which):
    message = refused(capsys, "evaluate", [agents[which], "--players", "3"])
    assert message == (
        f"{agents[which]} was trained for 4 players under table rules; "
        "this table is 3 players under players=3"
    )


def test_evaluate_refuses_a_model_trained_for_other_rules(agents, capsys):
    message = refused(capsys, "evaluate", [agents["recorded"], "--rules", "pairs"])
    assert "trained for 4 players under table rules" in message
    assert message.endswith("this table is 4 players under set_size=2")


def test_evaluate_reports_a_missing_model_with_the_path_as_typed(tmp_path, capsys):
    typed = str(tmp_path / "runs" / "NAME.zip")
    message = refused(capsys, "evaluate", [typed])
    assert message == f"model file not found: {typed}"
    assert ".zip.zip" not in message


def test_evaluate_reports_a_corrupt_model_in_one_line(agents, capsys):
    message = refused(capsys, "evaluate", [agents["corrupt"]])
    assert message.startswith(f"cannot read model file {agents['corrupt']}")


def test_evaluate_runs_a_model_that_fits_the_table(agents, tmp_path, capsys):
    out = tmp_path / "new" / "folder" / "eval.json"
    argv = [agents["recorded"], "--cpus", "random", "--deals", "1", "--json", str(out)]
    (result,) = evaluate.main(argv)
    assert result.games == 4
    assert json.loads(out.read_text())[0]["cpu"] == "random"
    assert f"Wrote {out}" in capsys.readouterr().out


def test_evaluate_says_when_it_replaces_a_json_file(agents, tmp_path, capsys):
    out = tmp_path / "eval.json"
    out.write_text("[]")
    evaluate.main([agents["recorded"], "--cpus", "random", "--deals", "1", "--json", str(out)])
    assert f"Replaced {out}" in capsys.readouterr().out
    assert json.loads(out.read_text())[0]["cpu"] == "random"


def test_tournament_says_when_it_replaces_earlier_results(tmp_path, capsys):
    argv = ["--cpus", "random,easy", "--games", "4", "--out", str(tmp_path), "--no-progress"]
    tournament.main(argv)
    assert "\nWrote " in capsys.readouterr().out
    tournament.main(argv)
    assert "Replaced the earlier results: " in capsys.readouterr().out


def test_tournament_refuses_a_model_entrant_trained_for_another_table(agents, capsys):
    spec = f"random,ppo=model:{agents['recorded']}"
    message = refused(capsys, "tournament", ["--players", "3", "--cpus", spec, "--out", ""])
    assert message.startswith("--cpus: entrant 'ppo': ")
    assert MISMATCH_4_TO_3 in message


def test_tournament_refuses_a_missing_or_corrupt_model_entrant(agents, capsys):
    message = refused(capsys, "tournament", ["--cpus", "random,model:nowhere/x.zip"])
    assert message == "--cpus: entrant 'x': model file not found: nowhere/x.zip"
    message = refused(capsys, "tournament", ["--cpus", f"random,model:{agents['corrupt']}"])
    assert message.startswith("--cpus: entrant 'corrupt': cannot read model file")


def test_tournament_plays_a_model_entrant_that_fits_the_table(agents, capsys):
    argv = ["--players", "4", "--cpus", f"random,model:{agents['run']}", "--games", "4"]
    result = tournament.main([*argv, "--out", "", "--no-progress"])
    assert result.games == 4


def test_play_refuses_a_model_seat_trained_for_another_table(agents, capsys):
    argv = ["--players", "3", "--humans", "0", "--cpus", f"model:{agents['recorded']}"]
    assert MISMATCH_4_TO_3 in refused(capsys, "play", argv)


def test_load_agent_checks_the_rules_it_is_given_and_loads_a_model_once_per_path(agents):
    with pytest.raises(AgentFileError, match=MISMATCH_4_TO_3):
        load_agent(agents["recorded"], Rules(players=3))
    with pytest.raises(AgentFileError, match=r"^model file not found: nowhere\.zip$"):
        load_agent("nowhere.zip")
    with pytest.raises(AgentFileError, match="cannot read model file"):
        load_agent(agents["corrupt"])
    first = load_agent(agents["recorded"], Rules(players=4))
    second = load_agent(agents["recorded"])
    assert first is not second  # each player keeps its own random state
    assert first.model is second.model is load_model(agents["recorded"])


def test_a_model_opponent_is_checked_against_the_rules_it_is_given(agents):
    with pytest.raises(AgentFileError, match=MISMATCH_4_TO_3):
        make_player(f"model:{agents['recorded']}", Rules(players=3))
    with pytest.raises(AgentFileError, match="under set_size=2"):
        make_player(f"mix:random,model:{agents['run']}", Rules.preset("pairs"))
    make_player(f"model:{agents['checkpoint']}", Rules(players=4))


def test_a_mismatched_model_opponent_is_refused_when_the_env_is_built(agents):
    from gofish_env.gym_env import GoFishEnv

    with pytest.raises(AgentFileError, match=MISMATCH_4_TO_3):
        GoFishEnv(players=3, opponents=f"model:{agents['recorded']}")


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
    ("tournament", ["--cpus", "a=random,a=easy"], "--cpus: the name 'a' is given twice"),
    ("tournament", ["--cpus", "a=,random"], "--cpus: got 'a='; allowed: NAME=SPEC with a spec"),
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
    ("play", ["--delay", "-1"], "--delay: got -1; allowed: a number of seconds >= 0"),
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
    ("training_speed", ["--timesteps", "0"], "--timesteps: got 0; allowed: an integer >= 1"),
    ("training_speed", ["--envs", "0"], "--envs: got 0; allowed: an integer >= 1"),
    ("training_speed", ["--vec-envs", "dummy,warp"], "--vec-envs: unknown vec env 'warp'"),
    ("training_speed", ["--vec-envs", "dummy,"], "--vec-envs: got 'dummy,'; allowed: "),
]


@pytest.mark.parametrize(
    ("command", "argv", "message"),
    BAD_ARGUMENTS,
    ids=[f"{command} {' '.join(argv)}" for command, argv, _ in BAD_ARGUMENTS],
)
def test_bad_arguments_are_refused_before_any_work(capsys, command, argv, message):
    assert refused(capsys, command, argv).startswith(message)


# ---------------------------------------------------------------------- output paths


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "a_file.txt"
    path.write_text("not a folder\n")
    return path


def test_evaluate_refuses_a_json_file_inside_a_file(a_file, capsys):
    target = a_file / "out.json"
    message = refused(capsys, "evaluate", ["m.zip", "--json", str(target)])
    assert message == f"--json: cannot write {target}: {a_file} is a file, not a folder"


def test_evaluate_refuses_a_json_path_that_is_a_folder(tmp_path, capsys):
    message = refused(capsys, "evaluate", ["m.zip", "--json", str(tmp_path)])
    assert message == f"--json: {tmp_path} is a folder, not a file"


def test_ladder_refuses_an_out_file_inside_a_file(a_file, capsys):
    target = a_file / "sub" / "ladder.md"
    message = refused(capsys, "ladder", ["--games", "1", "--out", str(target)])
    assert message == f"--out: cannot write {target}: {a_file} is a file, not a folder"


def test_tournament_refuses_an_out_folder_that_is_a_file(a_file, capsys):
    message = refused(capsys, "tournament", ["--out", str(a_file)])
    assert message == f"--out: {a_file} is a file, not a folder"


def test_an_output_in_a_folder_that_is_not_writable_is_refused(tmp_path, capsys, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access

    def access(path, mode):  # as chmod 0o500 would do for anyone but root
        return False if Path(path) == locked and mode & os.W_OK else real_access(path, mode)

    monkeypatch.setattr(cli.os, "access", access)
    message = refused(capsys, "tournament", ["--out", str(locked / "results")])
    assert (
        message == f"--out: cannot write {locked / 'results'}: the folder {locked} is not writable"
    )
    message = refused(capsys, "evaluate", ["m.zip", "--json", str(locked / "e.json")])
    assert message.endswith(f"the folder {locked} is not writable")
    message = refused(capsys, "tournament", ["--out", str(locked)])
    assert message == f"--out: {locked} is not writable"


def test_output_problem_accepts_new_and_existing_paths(tmp_path):
    assert output_problem(tmp_path / "new" / "deeper" / "out.json") is None
    existing = tmp_path / "old.json"
    existing.write_text("{}")
    assert output_problem(existing) is None  # overwritten, as the help says
    assert output_problem(tmp_path, directory=True) is None


# ---------------------------------------------------------------------- help


HELP_DEFAULTS = {
    "evaluate": ["(default: 200)", "(default: random,easy,normal,hard)", "(default: table)"],
    "ladder": ["(default: 500)", "(default: 2,4)", "(default: None: print only)"],
    "tournament": ["(default: 200)", "(default: results/tournament)", "(default: 1000)"],
    "play": ["(default: 4)", "(default: table)", "(default: 0.0)"],
    "engine_speed": ["(default: 5.0)", "(default: 2,4,6)", "(default: best)"],
    "env_speed": ["(default: 3.0)", "(default: 2,4,6)"],
    "training_speed": ["(default: 100000)", "(default: 2)"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_shows_the_defaults(capsys, command):
    with pytest.raises(SystemExit) as exit_info:
        COMMANDS[command](["--help"])
    assert exit_info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps long lines
    for default in HELP_DEFAULTS[command]:
        assert default in out
    if command in ("evaluate", "tournament"):
        assert "replaced" in out
