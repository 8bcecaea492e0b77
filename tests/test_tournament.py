"""The tournament (``gofish_baselines.tournament``): ``run_tournament``'s checks of its
entrants and arguments, its progress reports, the files it writes, and its command line,
model entrants included. The harness, schedule, standings and statistics under it are
tested in tests/test_evaluation_*.py."""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import pytest
from helpers import MISMATCH_4_TO_3, first_legal, usage_error

from gofish_baselines.tournament import main, run_tournament
from gofish_env import Rules
from gofish_env.agent_files import AgentFileError, write_agent_rules
from gofish_env.cpus import CPU_LEVELS
from gofish_env.evaluation import make_entrants

LEVEL = next(iter(CPU_LEVELS))  # a CPU level that exists ("random" at least)


# ---------------------------------------------------------------------- entrants and arguments


def test_bad_entrants_and_arguments_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="unknown CPU level 'grandmaster'"):
        run_tournament(["grandmaster", LEVEL], players=2)
    with pytest.raises(ValueError, match="model file not found"):
        run_tournament(["model:/nowhere/x.zip", LEVEL], players=2)
    with pytest.raises(ValueError, match="unknown CPU level 'nobody'"):
        run_tournament({"mix": f"mix:{LEVEL},nobody", "cpu": LEVEL}, players=2)
    with pytest.raises(ValueError, match="at least 2"):
        run_tournament([LEVEL], players=2)
    with pytest.raises(ValueError, match="workers"):
        run_tournament([LEVEL, LEVEL], players=2, workers=0)
    assert [e.name for e in make_entrants([LEVEL, LEVEL, first_legal])] == [
        LEVEL,
        f"{LEVEL}#2",
        "first_legal",
    ]


# ---------------------------------------------------------------------- output


def test_results_are_written_as_json_csv_and_png(tmp_path):
    result = run_tournament([LEVEL, LEVEL], players=2, games=6, seed=1)
    paths = result.write(tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert data["config"]["games"] == 6 and len(data["games"]) == 6
    assert [row["name"] for row in data["standings"]] == [s.name for s in result.ranked()]
    assert data["head_to_head"]["ahead"][0][0] is None
    with paths["standings"].open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["entrant"] for row in rows] == [s.name for s in result.ranked()]
    assert float(rows[0]["win_rate"]) == pytest.approx(result.ranked()[0].win_rate)
    with paths["games"].open() as handle:
        assert len(list(csv.DictReader(handle))) == 6
    with paths["head_to_head"].open() as handle:
        assert next(csv.reader(handle)) == ["entrant", LEVEL, f"{LEVEL}#2"]
    assert paths["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_cli_runs_end_to_end(tmp_path, capsys):
    out = tmp_path / "tour"
    result = main(
        [
            "--players", "3", "--cpus", f"{LEVEL},{LEVEL},{LEVEL}", "--games", "6",
            "--rules", "family", "--seed", "4", "--workers", "2", "--out", str(out),
            "--no-progress",
        ]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert "6 games (2 deals x 3 seatings)" in printed
    assert "Head to head" in printed and f"{LEVEL}#3" in printed
    assert result.rules == Rules.preset("family", players=3)
    for name in ("results.json", "standings.csv", "head_to_head.csv", "games.csv"):
        assert (out / name).is_file()
    assert (out / "win_rates.png").stat().st_size > 1000
    with pytest.raises(SystemExit):
        main(["--cpus", "nobody,random", "--out", ""])


def test_entrant_names_are_written_as_typed_in_the_table_and_the_chart(tmp_path):
    # Neither rich markup ("[red]") nor matplotlib's TeX ("$...$") is read in a name.
    names = {"a[b]": LEVEL, "[red]x": LEVEL, "p$\\foo$": LEVEL}
    result = run_tournament(names, players=3, games=3)
    paths = result.write(tmp_path / "out")  # the chart's labels raised a ParseFatalException
    assert paths["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = result.table()
    assert all(f" {name} " in table for name in names)


def test_progress_is_reported_as_games_finish(capsys):
    seen: list[int] = []
    run_tournament([LEVEL, LEVEL], players=2, games=6, progress=seen.append)
    assert seen == [2, 4, 6]
    run_tournament([LEVEL, LEVEL], players=2, games=4, progress=True)
    assert "4/4" in capsys.readouterr().err


# ---------------------------------------------------------------------- the command line


def test_tournament_says_when_it_replaces_earlier_results(tmp_path, capsys):
    argv = ["--cpus", "random,easy", "--games", "4", "--out", str(tmp_path), "--no-progress"]
    main(argv)
    assert "\nWrote " in capsys.readouterr().out
    main(argv)
    assert "Replaced the earlier results: " in capsys.readouterr().out


def test_a_spec_repeated_among_named_entrants_enters_once_for_each(capsys):
    argv = ["--cpus", "hard,hard,e=easy", "--players", "3", "--games", "3", "--out", ""]
    result = main([*argv, "--no-progress"])
    assert result.names == ["hard", "hard#2", "e"]  # as hard,hard,easy names them
    assert [e.spec for e in result.entrants] == ["hard", "hard", "easy"]
    message = usage_error(capsys, main, ["--cpus", "a=easy,a=hard", "--out", ""])
    assert message.startswith("--cpus: the name 'a' is given twice; allowed: a different name")
    message = usage_error(capsys, main, ["--cpus", "hard,hard,hard#2=easy", "--out", ""])
    assert message.startswith("--cpus: the name 'hard#2' is given twice")


@pytest.mark.parametrize("cpus", ["mix:easy,hard", "m=mix:easy,hard", "easy,mix:hard"])
def test_a_mix_in_cpus_is_refused_rather_than_split_at_its_commas(tmp_path, capsys, cpus):
    out = tmp_path / "out"
    message = usage_error(capsys, main, ["--cpus", cpus, "--out", str(out)])
    assert message == (
        f"--cpus: got {cpus!r}; a mix (mix:a,b) cannot be entered here, since the list splits "
        "on commas; allowed: CPU levels and model:PATH, each optionally NAME=SPEC (mixes are "
        "entered from Python: run_tournament)"
    )
    assert not out.exists()


@pytest.mark.torch  # the saved agents
def test_tournament_refuses_a_model_entrant_trained_for_another_table(agents, capsys):
    spec = f"random,ppo=model:{agents['recorded']}"
    message = usage_error(capsys, main, ["--players", "3", "--cpus", spec, "--out", ""])
    assert message.startswith("--cpus: entrant 'ppo': ")
    assert MISMATCH_4_TO_3 in message


@pytest.mark.torch  # the saved agents
def test_tournament_refuses_a_missing_or_corrupt_model_entrant(agents, capsys):
    message = usage_error(capsys, main, ["--cpus", "random,model:nowhere/x.zip"])
    assert message == "--cpus: entrant 'x': model file not found: nowhere/x.zip"
    message = usage_error(capsys, main, ["--cpus", f"random,model:{agents['corrupt']}"])
    assert message.startswith("--cpus: entrant 'corrupt': cannot read model file")


@pytest.mark.torch  # the saved agents
def test_tournament_plays_a_model_entrant_that_fits_the_table(agents, capsys):
    argv = ["--players", "4", "--cpus", f"random,model:{agents['run']}", "--games", "4"]
    result = main([*argv, "--out", "", "--no-progress"])
    assert result.games == 4


def with_garbage_weights(model: str, path: Path) -> Path:
    """A copy of the saved agent ``model`` whose rules entry is sound but whose weights
    (``policy.pth``) are garbage: only loading the model finds out."""
    with zipfile.ZipFile(model) as source, zipfile.ZipFile(path, "w") as copy:
        for entry in source.namelist():
            copy.writestr(entry, b"garbage" if entry == "policy.pth" else source.read(entry))
    return path


@pytest.mark.torch  # the saved agents
def test_a_model_entrant_that_does_not_load_is_refused_before_any_game(agents, tmp_path, capsys):
    garbage = with_garbage_weights(agents["recorded"], tmp_path / "garbage.zip")
    module = tmp_path / "fakemod"  # an RLlib module folder with its rules and nothing else
    module.mkdir()
    write_agent_rules(module, Rules(players=4))
    out = tmp_path / "results"
    for entry, name, reason in (
        (f"model:{garbage}", "garbage", f"cannot load model file {garbage}: UnpicklingError: "),
        (f"model:{module}", "fakemod", "cannot load "),  # (RLlib module, or: no rllib extra)
    ):
        argv = ["--cpus", f"easy,{entry}", "--games", "4", "--out", str(out), "--no-progress"]
        message = usage_error(capsys, main, argv)
        assert message.startswith(f"--cpus: entrant {name!r}: {reason}"), message
        assert "In PyTorch" not in message  # the first sentence of PyTorch's paragraph
        assert not out.exists()  # nothing made, nothing kept
    games: list[int] = []
    with pytest.raises(AgentFileError, match=r"^entrant 'bad': cannot load model file "):
        run_tournament({"easy": "easy", "bad": f"mix:easy,model:{garbage}"}, progress=games.append)
    assert games == []


def without_recorded_rules(agents, folder: Path) -> Path:
    """A copy of the 4-player agent whose zip records no rules, away from the run folder
    whose args.json would say them: nothing tells which table it was made for."""
    path = folder / "loose.zip"
    path.write_bytes(Path(agents["run"]).read_bytes())
    return path


@pytest.mark.torch  # the saved agents
def test_a_model_without_recorded_rules_is_refused_at_a_table_it_does_not_fit(
    agents, tmp_path, capsys
):
    loose = without_recorded_rules(agents, tmp_path)
    out = tmp_path / "results"
    argv = ["--players", "3", "--cpus", f"model:{loose},easy", "--games", "3", "--out", str(out)]
    message = usage_error(capsys, main, argv)
    assert message == (
        f"--cpus: entrant 'loose': {loose} was made for another table: it takes observations "
        "of 481 numbers and chooses among 39 actions; this table (3 players under table "
        "rules) has observations of 198 + 23 numbers per ask of history (382 with the default "
        "8) and 26 actions"
    )
    assert not out.exists()  # refused before anything is made
