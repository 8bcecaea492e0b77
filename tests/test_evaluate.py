"""``gofish-evaluate`` (``gofish_training.evaluate``): an agent's win rates against each CPU
level over duplicate deals, its results as JSON, and its command line: the saved agent is
checked against the table before any game (the command-line checks of every option are in
tests/test_cli.py; the end-to-end run on a trained model in tests/test_training.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from helpers import recorded_progress_bars, usage_error
from rich.console import Console

from gofish_training import evaluate


def test_evaluation_counts_shared_wins_and_rotates_the_agent_through_every_seat():
    # A "random" agent against random CPUs: every seat is played once per deal, so the
    # win shares of one deal's four games add up to at most 1 per game.
    (result,) = evaluate.evaluate("random", ["random"], deals=5, seed=1)
    assert result.games == 20
    assert 0.0 <= result.win_rate <= 1.0
    low, high = result.win_rate_ci
    assert low <= result.win_rate <= high


def test_evaluation_results_are_plain_json():
    (result,) = evaluate.evaluate("random", ["random"], deals=3, seed=2)
    assert result.win_rate_ci is not None
    assert json.loads(json.dumps(evaluate.results_json([result])))[0]["cpu"] == "random"


@pytest.mark.parametrize(
    ("cpus", "message"),
    [
        ([], "cpus: got []; allowed: a sequence of at least one CPU level ("),
        ("random", "cpus: got 'random'; allowed: a sequence of at least one CPU level ("),
        (["random", "grandmaster"], "cpus: unknown CPU level 'grandmaster'; allowed: random, "),
    ],
)
def test_evaluation_refuses_cpus_that_measure_nothing_before_any_game(tmp_path, cpus, message):
    # No CPU returned [] as if the agent had been measured; an unknown one was found at
    # its first game, after the levels before it were played.
    keep = tmp_path / "kept"
    with pytest.raises(ValueError) as refused:
        evaluate.evaluate("random", cpus, deals=1, keep=keep)
    assert str(refused.value).startswith(message)
    assert not keep.exists()


def test_level_result_beats_only_when_the_interval_clears_the_fair_share():
    beats = evaluate.LevelResult("easy", 40, 0.6, (0.3, 0.9), 2.0, 0.25)
    unsure = evaluate.LevelResult("easy", 40, 0.4, (0.2, 0.6), 2.0, 0.25)
    assert beats.beats and not unsure.beats


def test_the_table_shows_its_title_as_typed_and_a_dash_where_there_is_no_interval():
    one_deal = evaluate.LevelResult("random", 4, 0.25, None, 1.0, 0.25)
    two = evaluate.LevelResult("easy", 8, 0.5, (0.25, 0.75), 2.0, 0.25)
    console = Console(width=200, record=True, file=io.StringIO())
    for title in ("runs/[/exp]/m.zip", "runs/[red]/m.zip", "runs/[b]x[/b]"):
        console.print(evaluate.results_table([one_deal, two], title))  # no MarkupError
    text = console.export_text()
    for title in ("runs/[/exp]/m.zip", "runs/[red]/m.zip", "runs/[b]x[/b]"):
        assert title in text  # not read as rich markup
    cells = {
        line.split("│")[1].strip(): line.split("│")[4].strip()
        for line in text.splitlines()
        if line.count("│") > 4
    }
    assert cells["random"] == "-" and cells["easy"] == "[0.250, 0.750]"


# ---------------------------------------------------------------------- the command line


@pytest.mark.torch  # the saved agents
@pytest.mark.parametrize("which", ["recorded", "run", "checkpoint"])
def test_evaluate_refuses_a_model_trained_for_another_player_count(agents, capsys, which):
    message = usage_error(capsys, evaluate.main, [agents[which], "--players", "3"])
    assert message == (
        f"{agents[which]} was trained for 4 players under table rules; "
        "this table is 3 players under table rules"
    )


@pytest.mark.torch  # the saved agents
def test_evaluate_refuses_a_model_trained_for_other_rules(agents, capsys):
    message = usage_error(capsys, evaluate.main, [agents["recorded"], "--rules", "pairs"])
    assert "trained for 4 players under table rules" in message
    assert message.endswith("this table is 4 players under pairs rules")


def test_evaluate_reports_a_missing_model_with_the_path_as_typed(tmp_path, capsys):
    typed = str(tmp_path / "runs" / "NAME.zip")
    message = usage_error(capsys, evaluate.main, [typed])
    assert message == f"model file not found: {typed}"
    assert ".zip.zip" not in message


@pytest.mark.torch  # the saved agents
def test_evaluate_reports_a_corrupt_model_in_one_line(agents, capsys):
    message = usage_error(capsys, evaluate.main, [agents["corrupt"]])
    assert message.startswith(f"cannot read model file {agents['corrupt']}")


@pytest.mark.torch  # the saved agents
def test_evaluate_runs_a_model_that_fits_the_table(agents, tmp_path, capsys):
    out = tmp_path / "new" / "folder" / "eval.json"
    argv = [agents["recorded"], "--cpus", "random", "--deals", "1", "--json", str(out)]
    (result,) = evaluate.main(argv)
    assert result.games == 4
    assert json.loads(out.read_text())[0]["cpu"] == "random"
    assert f"Wrote {out}" in capsys.readouterr().out


@pytest.mark.torch  # the saved agents
def test_evaluate_says_when_it_replaces_a_json_file(agents, tmp_path, capsys):
    out = tmp_path / "eval.json"
    out.write_text("[]")
    evaluate.main([agents["recorded"], "--cpus", "random", "--deals", "1", "--json", str(out)])
    assert f"Replaced {out}" in capsys.readouterr().out
    assert json.loads(out.read_text())[0]["cpu"] == "random"


@pytest.mark.torch  # the saved agents
def test_evaluate_refuses_a_model_without_recorded_rules_that_does_not_fit_the_table(
    agents, tmp_path, capsys
):
    loose = tmp_path / "loose.zip"  # no rules in the zip, no run folder to say them
    loose.write_bytes(Path(agents["run"]).read_bytes())
    keep = tmp_path / "kept"
    message = usage_error(
        capsys, evaluate.main, [str(loose), "--players", "3", "--keep", str(keep)]
    )
    assert message.startswith(f"{loose} was made for another table: ")
    assert message.endswith(
        "this table (3 players under table rules) has observations of 198 + 23 numbers per "
        "ask of history (382 with the default 8) and 26 actions"
    )
    assert not keep.exists()  # refused before anything is made


@pytest.mark.torch  # the saved agents
def test_evaluate_prints_a_model_path_with_brackets_as_typed(agents, tmp_path, capsys):
    folder = tmp_path / "[/exp]" / "[red]"
    folder.mkdir(parents=True)
    model = folder / "m.zip"
    model.write_bytes(Path(agents["recorded"]).read_bytes())
    out = tmp_path / "e.json"
    evaluate.main([str(model), "--cpus", "random", "--deals", "1", "--json", str(out)])
    printed = "".join(capsys.readouterr().out.split())  # the title may wrap
    assert f"{model}(tablerules)" in printed  # not read as rich markup
    assert json.loads(out.read_text())[0]["win_rate_ci"] is None  # one deal: no interval


@pytest.mark.torch  # the saved agents
@pytest.mark.parametrize(("flags", "shown"), [([], True), (["--no-progress"], False)])
def test_evaluate_shows_its_progress_bar_unless_told_not_to(agents, monkeypatch, flags, shown):
    bars = recorded_progress_bars(monkeypatch, evaluate)
    evaluate.main([agents["recorded"], "--cpus", "random", "--deals", "1", *flags])
    assert bars == [shown]
