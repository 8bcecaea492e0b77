"""``gofish-evaluate`` (``gofish_training.evaluate``): an agent's win rates against each CPU
level over duplicate deals, its results as JSON, and its command line: the saved agent is
checked against the table before any game (the command-line checks of every option are in
tests/test_cli.py; the end-to-end run on a trained model in tests/test_training.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import usage_error

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


def test_level_result_beats_only_when_the_interval_clears_the_fair_share():
    beats = evaluate.LevelResult("easy", 40, 0.6, (0.3, 0.9), 2.0, 0.25)
    unsure = evaluate.LevelResult("easy", 40, 0.4, (0.2, 0.6), 2.0, 0.25)
    assert beats.beats and not unsure.beats


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
        "this table (3 players under table rules) has observations of 382 numbers and 26 actions"
    )
    assert not keep.exists()  # refused before anything is made
