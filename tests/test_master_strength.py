"""baselines/master_strength.py: parts kept as they end, a run resumed where it stopped
gives the same games as one run, and the table of several runs."""

from __future__ import annotations

import argparse
import json
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import usage_error

from gofish_baselines import master_strength
from gofish_baselines.master_strength import (
    deal_shares,
    entrants,
    main,
    read_records,
    settings_path,
)
from gofish_env.cli import parse_pool_limit, parse_rollouts, parse_simulations
from gofish_env.evaluation.kept import game_line
from gofish_env.master import (
    DEFAULT_CANDIDATES,
    DEFAULT_POOL_LIMIT,
    DEFAULT_ROLLOUTS,
    DEFAULT_SIMULATIONS,
    OTHER_SIMULATIONS,
    SIMULATIONS,
    default_simulations,
)

# One deal at two players on a tiny budget: a run's file in a second.
ONE_DEAL = ["--players", "2", "--simulations", "8", "--workers", "1", "--deals", "1"]


def test_a_run_in_parts_is_the_same_as_one_run_and_the_table_reads_it(tmp_path, capsys):
    whole, parts = tmp_path / "p2-s8.jsonl", tmp_path / "parts" / "p2-s8.jsonl"
    common = ["--players", "2", "--simulations", "8", "--workers", "1", "--chunk", "1"]
    main([*common, "--deals", "3", "--out", str(whole)])
    main([*common, "--deals", "2", "--out", str(parts)])  # stopped after two deals
    main([*common, "--deals", "3", "--out", str(parts)])  # the same command goes on
    assert read_records(parts) == read_records(whole)
    assert len(read_records(whole)) == 6  # 3 deals x 2 seatings
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed[-1]["deals"] == 3 and 0.0 <= printed[-1]["share"] <= 1.0
    main(["--table", str(tmp_path / "chart.png"), str(whole)])
    table = capsys.readouterr().out
    # A file named p2-s8 alone: the first runs' settings, which the row says.
    assert "| 2 | 8 (?), every decision, margin 2.5 | 3 (6) |" in table
    assert (tmp_path / "chart.png").stat().st_size > 0


def test_the_settings_reach_master():
    master = entrants(2, 8, 1.0, 4)[0].spec
    assert (master.simulations, master.margin, master.pool_limit) == (8, 1.0, 4)
    assert (master.rollout_level(2, 8), master.rollout_level(4, 8)) == ("hard", "expert")
    assert master.rollout_level(4, 9) == "hard"
    assert entrants(2, 8, rollouts="expert")[0].spec.rollout_level(2, 12) == "expert"
    plain = entrants(2, 8, assume_sure_hits=False, most_held=0.0)[0].spec
    assert (plain.assume_sure_hits, plain.most_held) == (False, 0.0)
    assert entrants(2, 8)[0].spec.candidates == DEFAULT_CANDIDATES
    assert entrants(2, 8, candidates=3)[0].spec.candidates == 3
    assert entrants(2, 8)[0].spec.others_rollouts is None
    assert entrants(2, 8, others_rollouts="expert")[0].spec.others_rollouts == "expert"


@pytest.mark.parametrize(
    ("name", "flags", "row"),
    [
        ("p2-s8-l4-m1.0", [], "| 2 | 8 (?), pool <= 4, margin 1.0 | 1 (2) |"),
        (
            "p2-s8-l4-m1.0-rexpert",
            ["--rollouts", "expert"],
            "| 2 | 8 (?), pool <= 4, margin 1.0, expert rollouts | 1 (2) |",
        ),
        (
            "p2-s8-l4-m1.0-oexpert",
            ["--others-rollouts", "expert"],
            "| 2 | 8 (?), pool <= 4, margin 1.0, the other seats' rollouts expert | 1 (2) |",
        ),
        (
            "p2-s8-l4-m1.0-c3",
            ["--candidates", "3"],
            "| 2 | 8 (?), pool <= 4, margin 1.0, 3 candidates | 1 (2) |",
        ),
        (
            "p2-s8-ltable-m1.0-rtable",
            ["--pool-limit", "table", "--rollouts", "table"],
            "| 2 | 8 (?), pool by table, margin 1.0, rollouts by table | 1 (2) |",
        ),
        (
            "p2-s8-l4-m1.0-a1-h2.0",
            ["--assume-sure-hits", "--most-held", "2.0"],
            "| 2 | 8 (?), pool <= 4, margin 1.0, sure hits assumed, most held 2.0 | 1 (2) |",
        ),
    ],
)
def test_a_run_s_file_names_its_table_row(tmp_path, capsys, name, flags, row):
    path = tmp_path / f"{name}.jsonl"
    main([*ONE_DEAL, "--margin", "1.0", "--pool-limit", "4", *flags, "--out", str(path)])
    assert len(read_records(path)) == 2
    capsys.readouterr()
    main(["--table", str(tmp_path / "chart.png"), str(path)])
    assert row in capsys.readouterr().out


def test_a_bad_margin_or_pool_limit_is_refused_before_any_game(tmp_path, capsys):
    out = tmp_path / "p2-s8.jsonl"
    for flag, value in (
        ("--margin", "-1"),
        ("--pool-limit", "-2"),
        ("--rollouts", "master"),
        ("--most-held", "-1"),
        ("--candidates", "1"),
    ):
        with pytest.raises(SystemExit):
            main(["--players", "2", "--deals", "1", flag, value, "--out", str(out)])
        assert flag in capsys.readouterr().err
    assert not out.exists()


def test_the_pool_limit_defaults_to_masters_and_none_searches_at_every_decision(tmp_path):
    assert entrants(2, 8)[0].spec.pool_limit == DEFAULT_POOL_LIMIT
    parser = argparse.ArgumentParser()
    assert parse_pool_limit(parser, "--pool-limit", "none") is None
    assert parse_pool_limit(parser, "--pool-limit", "12") == 12
    assert parse_pool_limit(parser, "--pool-limit", "table") == "table" == DEFAULT_POOL_LIMIT
    for text in ("-1", "eight"):
        with pytest.raises(SystemExit):
            parse_pool_limit(parser, "--pool-limit", text)
    path = tmp_path / "p2-s8.jsonl"
    main([*ONE_DEAL, "--pool-limit", "none", "--out", str(path)])
    assert len(read_records(path)) == 2


def test_the_simulations_default_to_the_table_and_a_run_keeps_the_number(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    assert parse_simulations(parser, "--simulations", "table") == "table" == DEFAULT_SIMULATIONS
    assert parse_simulations(parser, "--simulations", "64") == 64
    for text in ("0", "many", "2.5"):
        with pytest.raises(SystemExit):
            parse_simulations(parser, "--simulations", text)
        assert f"--simulations: got {text!r}; allowed: an integer >= 1, or table" in (
            capsys.readouterr().err
        )
    # Searching only once the pool is empty keeps the runs short.
    for players, budget in ((2, SIMULATIONS[2]), (3, OTHER_SIMULATIONS)):
        path = tmp_path / f"p{players}.jsonl"
        one_deal = ["--players", str(players), "--workers", "1", "--deals", "1"]
        main([*one_deal, "--pool-limit", "0", "--out", str(path)])
        kept = json.loads(settings_path(path).read_text())
        assert kept["simulations"] == default_simulations(players) == budget
    assert SIMULATIONS[2] != OTHER_SIMULATIONS
    one_deal = [*one_deal, "--pool-limit", "0"]
    # Going on with the table's number named is the same run; another number is refused.
    main([*one_deal, "--deals", "2", "--simulations", str(OTHER_SIMULATIONS), "--out", str(path)])
    assert len({record.deal for record in read_records(path)}) == 2
    with pytest.raises(SystemExit, match=rf"simulations {OTHER_SIMULATIONS} -> 64"):
        main([*one_deal, "--deals", "3", "--simulations", "64", "--out", str(path)])


def test_the_rollouts_default_to_the_tables_and_a_level_names_them(capsys):
    parser = argparse.ArgumentParser()
    assert parse_rollouts(parser, "--rollouts", "table") == "table" == DEFAULT_ROLLOUTS
    assert parse_rollouts(parser, "--rollouts", "expert") == "expert"
    with pytest.raises(SystemExit):
        parse_rollouts(parser, "--rollouts", "None")
    assert "--rollouts: got 'None'; allowed: random, easy, normal, hard, expert, table" in (
        capsys.readouterr().err
    )


def test_the_others_rollouts_default_to_the_same_level_and_a_bad_one_is_refused(tmp_path, capsys):
    path = tmp_path / "run.jsonl"
    message = usage_error(
        capsys, main, [*ONE_DEAL, "--others-rollouts", "master", "--out", str(path)]
    )
    assert message == (
        "--others-rollouts: got 'master'; allowed: random, easy, normal, hard, expert, same "
        "(the --rollouts level)"
    )
    assert not path.exists() and not settings_path(path).exists()
    main([*ONE_DEAL, "--others-rollouts", "same", "--out", str(path)])
    assert json.loads(settings_path(path).read_text())["others_rollouts"] is None


def test_a_deal_s_share_averages_its_seatings_and_splits_a_shared_win():
    records = [
        SimpleNamespace(deal=0, seats=(0, 1), winners=(0,)),  # master in seat 0 wins
        SimpleNamespace(deal=0, seats=(1, 0), winners=(0, 1)),  # master in seat 1 shares
        SimpleNamespace(deal=1, seats=(1, 0), winners=(0,)),  # master in seat 1 loses
        SimpleNamespace(deal=1, seats=(0, 1), winners=(1,)),
    ]
    assert deal_shares(records) == {0: 0.75, 1: 0.0}
    assert deal_shares(records, entrant=1) == {0: 0.25, 1: 1.0}


def test_compare_pairs_two_runs_over_the_deals_they_share(tmp_path, capsys):
    common = ["--players", "2", "--simulations", "8", "--workers", "1", "--chunk", "3"]
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    main([*common, "--deals", "3", "--out", str(first)])
    # Another master (no margin, searching everywhere), over the first two deals only.
    main([*common, "--deals", "2", "--margin", "0", "--pool-limit", "none", "--out", str(second)])
    capsys.readouterr()
    main([*common, "--summary", "--out", str(first), "--compare", str(second)])
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert printed[0]["deals"] == 3  # the file's own summary first
    paired = printed[1]
    mine, theirs = deal_shares(read_records(first)), deal_shares(read_records(second))
    difference = [mine[deal] - theirs[deal] for deal in (0, 1)]
    assert paired["compare"] == str(second) and paired["deals"] == 2
    assert paired["share"] == round(float(np.mean([mine[0], mine[1]])), 4)
    assert paired["other"] == round(float(np.mean([theirs[0], theirs[1]])), 4)
    assert paired["paired"].startswith(f"{np.mean(difference):.4f} +/- ")
    # A run paired with itself: the same games, no difference.
    main([*common, "--summary", "--out", str(first), "--compare", str(first)])
    itself = json.loads(capsys.readouterr().out.splitlines()[1])
    assert itself["paired"] == "0.0000 +/- 0.0000" and itself["deals"] == 3


def test_compare_refuses_a_missing_file_and_one_that_shares_no_deal(tmp_path, capsys):
    run, empty = tmp_path / "run.jsonl", tmp_path / "empty.jsonl"
    missing = tmp_path / "nowhere.jsonl"
    message = usage_error(capsys, main, ["--summary", "--out", str(run), "--compare", str(missing)])
    assert message == f"--compare: no such file: {missing}"
    main([*ONE_DEAL, "--out", str(run)])
    empty.write_text("")
    with pytest.raises(SystemExit) as exit_info:
        main(["--summary", "--out", str(run), "--compare", str(empty)])
    assert exit_info.value.code == f"--compare: {empty} shares no deal with this run"


def test_compare_refuses_a_run_of_another_seed_or_table_before_it_plays(tmp_path, capsys):
    """Deal d of a seed-5 run is not deal d of a seed-1 run: pairing them by index printed
    a "paired" difference of other deals. The settings kept beside a file tell its seed and
    table; without them, each deal's deal_seed does."""
    run, seed5, three = tmp_path / "run.jsonl", tmp_path / "seed5.jsonl", tmp_path / "p3.jsonl"
    main([*ONE_DEAL, "--out", str(run)])
    main([*ONE_DEAL, "--seed", "5", "--out", str(seed5)])
    table_of_three = ["--players", "3", "--simulations", "8", "--workers", "1", "--deals", "1"]
    main([*table_of_three, "--pool-limit", "0", "--out", str(three)])
    capsys.readouterr()
    summary = ["--summary", "--out", str(run), "--compare"]
    message = usage_error(capsys, main, [*summary, str(seed5)])
    assert message == (
        f"--compare: {seed5} was played with seed 5 (its settings), this run with seed 1; "
        "only runs of the same players and seed pair"
    )
    message = usage_error(capsys, main, [*summary, str(three)])
    assert message.startswith(f"--compare: {three} was played at 3 players (its settings), ")
    # Without its settings, the seed-5 file's deal 0 is told by the seed it was dealt from.
    settings_path(seed5).unlink()
    dealt = read_records(seed5)[0].deal_seed
    message = usage_error(capsys, main, [*summary, str(seed5)])
    assert message.startswith(f"--compare: {seed5}: deal 0 was dealt from deal_seed {dealt}, ")
    settings_path(three).unlink()
    message = usage_error(capsys, main, [*summary, str(three)])
    assert message.startswith(f"--compare: {three}: deal 0 was played at 3 players, ")
    # A run with --compare is refused before it plays its first deal.
    before = run.read_bytes()
    message = usage_error(
        capsys, main, [*ONE_DEAL[:-1], "2", "--out", str(run), "--compare", str(seed5)]
    )
    assert "not the same deal" in message and run.read_bytes() == before


def test_a_summary_refuses_a_missing_or_empty_file_and_prints_no_nan(tmp_path, capsys):
    """It printed {"deals": 0, "share": NaN, ...} and exit status 0: not JSON, no word."""
    missing, empty = tmp_path / "nowhere.jsonl", tmp_path / "empty.jsonl"
    message = usage_error(capsys, main, ["--summary", "--out", str(missing)])
    assert message == f"--out: no such file: {missing} (--summary reads it)"
    empty.write_text("")
    message = usage_error(capsys, main, ["--summary", "--out", str(empty)])
    assert message == f"--out: {empty} holds no whole deal to sum up"
    line = master_strength.json_line({"share": float("nan"), "ms_master": float("inf"), "x": 1})
    assert json.loads(line) == {"share": None, "ms_master": None, "x": 1}


def test_the_table_reads_a_file_named_otherwise_by_its_settings(tmp_path, capsys):
    """--table read the players and budget from the file's name only: a file not named
    p{P}-s{S}... ended in KeyError: 'p'."""
    path, chart = tmp_path / "strength.jsonl", str(tmp_path / "chart.png")
    main([*ONE_DEAL, "--pool-limit", "4", "--out", str(path)])
    capsys.readouterr()
    main(["--table", chart, str(path)])
    assert (
        "| 2 | 8 (?), pool <= 4, margin 1.0, rollouts by table, 6 candidates, sure hits "
        "assumed, most held 8.0 | 1 (2) |"
    ) in capsys.readouterr().out
    named = tmp_path / "p4-s8.jsonl"  # a name that says otherwise than its settings
    named.write_bytes(path.read_bytes())
    settings_path(named).write_bytes(settings_path(path).read_bytes())
    message = usage_error(capsys, main, ["--table", chart, str(named)])
    assert (
        message
        == f"--table: {named}: its name says 4 players and 8 simulations, its settings 2 and 8"
    )
    settings_path(path).unlink()
    message = usage_error(capsys, main, ["--table", chart, str(path)])
    assert message == (
        f"--table: {path}: its players and budget are unknown: no strength.settings.json "
        "beside it, and its name is not p{players}-s{simulations}[-...].jsonl"
    )
    missing = tmp_path / "p2-s8.jsonl"
    message = usage_error(capsys, main, ["--table", chart, str(missing)])
    assert message == f"--table: no such file: {missing}"


def test_the_search_flags_words_are_lowercase_as_written(tmp_path, capsys):
    """--simulations TABLE and --pool-limit NONE were read case-blind, --rollouts TABLE was
    refused: one rule now, the command line's, every word as written."""
    path = tmp_path / "run.jsonl"
    for flag, word in (
        ("--simulations", "TABLE"),
        ("--pool-limit", "NONE"),
        ("--rollouts", "TABLE"),
    ):
        message = usage_error(
            capsys, main, ["--players", "2", "--deals", "1", flag, word, "--out", str(path)]
        )
        assert message.startswith(f"{flag}: got {word!r}; allowed: "), message
        assert "table" in message
    assert not path.exists()


def test_ctrl_c_while_a_part_is_written_keeps_whole_deals_only(tmp_path, monkeypatch):
    """A deal kept with one seating of two would be taken as played when the run goes on."""
    path = tmp_path / "p2-s8.jsonl"
    main([*ONE_DEAL, "--chunk", "1", "--out", str(path)])
    whole = read_records(path)
    calls = []

    def interrupted_line(record):
        calls.append(record)
        if len(calls) == 2:  # Ctrl-C between the deal's two games
            raise KeyboardInterrupt
        return game_line(record)

    monkeypatch.setattr(master_strength, "game_line", interrupted_line)
    with pytest.raises(SystemExit, match=r"interrupted: 1 deals kept .*run the same command"):
        main([*ONE_DEAL[:-1], "2", "--chunk", "1", "--out", str(path)])
    assert read_records(path) == whole  # the second deal's part was not written at all
    monkeypatch.undo()
    main([*ONE_DEAL[:-1], "2", "--chunk", "1", "--out", str(path)])  # goes on
    assert len(read_records(path)) == 4


def cut_short(path, keep_lines: int, keep_bytes: int) -> bytes:
    """``path`` as a write stopped midway leaves it: its first lines and a cut one."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:keep_lines]) + lines[keep_lines][:keep_bytes])
    return path.read_bytes()


def test_a_write_cut_short_is_dropped_and_the_run_goes_on_to_the_same_games(tmp_path, capsys):
    """A kill midway through a part's write leaves a cut line, perhaps after half a deal."""
    path = tmp_path / "p2-s8.jsonl"
    main([*ONE_DEAL[:-1], "2", "--chunk", "1", "--out", str(path)])
    whole = read_records(path)
    cut_short(path, 3, 40)  # deal 0's two games, deal 1's first and 40 bytes of its second
    capsys.readouterr()
    main([*ONE_DEAL[:-1], "2", "--chunk", "1", "--out", str(path)])
    said = capsys.readouterr().err
    assert "a cut last line (40 bytes) and deal 1 with 1 of its 2 games dropped" in said
    assert read_records(path) == whole  # deal 1 played again, the same games
    assert len(path.read_bytes().splitlines()) == 4


def test_a_summary_counts_whole_deals_and_leaves_a_cut_file_as_it_is(tmp_path, capsys):
    path = tmp_path / "p2-s8.jsonl"
    main([*ONE_DEAL[:-1], "2", "--chunk", "1", "--out", str(path)])
    cut = cut_short(path, 3, 40)
    capsys.readouterr()
    main(["--summary", "--out", str(path)])
    said = capsys.readouterr()
    assert json.loads(said.out.splitlines()[0])["deals"] == 1
    assert "deal 1 with 1 of its 2 games not counted" in said.err
    assert path.read_bytes() == cut


def test_a_line_that_is_not_json_before_the_last_is_refused_and_the_file_kept(tmp_path):
    path = tmp_path / "p2-s8.jsonl"
    main([*ONE_DEAL, "--chunk", "1", "--out", str(path)])
    first, second = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(first[:30] + b"\n" + second)
    damaged = path.read_bytes()
    with pytest.raises(SystemExit, match=r"p2-s8.jsonl, line 1: not a JSON line"):
        main([*ONE_DEAL[:-1], "2", "--out", str(path)])
    assert path.read_bytes() == damaged


def test_a_half_deal_before_the_last_is_refused(tmp_path):
    """What Ctrl-C left before parts were written in one call, once the run went on."""
    path = tmp_path / "p2-s8.jsonl"
    main([*ONE_DEAL[:-1], "2", "--chunk", "1", "--out", str(path)])
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[1:]))  # deal 0 with one game, deal 1 whole
    with pytest.raises(SystemExit, match=r"its deals are not 0..1 with 2 games each"):
        main([*ONE_DEAL[:-1], "3", "--out", str(path)])


def test_a_run_that_goes_on_with_other_settings_is_refused_before_it_plays(tmp_path):
    path = tmp_path / "p2-s8.jsonl"
    main([*ONE_DEAL, "--chunk", "1", "--out", str(path)])
    kept = json.loads((tmp_path / "p2-s8.settings.json").read_text())
    assert (kept["players"], kept["simulations"], kept["pool_limit"]) == (2, 8, "table")
    before = path.read_text()
    with pytest.raises(SystemExit, match=r"played with other settings \(margin 1.0 -> 0.5"):
        main([*ONE_DEAL[:-1], "2", "--margin", "0.5", "--out", str(path)])
    assert path.read_text() == before
    main([*ONE_DEAL[:-1], "2", "--out", str(path)])  # the same settings go on
    assert len(read_records(path)) == 4


def test_a_run_kept_when_rollouts_by_table_were_written_null_goes_on_with_the_default(tmp_path):
    path = tmp_path / "p2-s8.jsonl"
    main([*ONE_DEAL, "--chunk", "1", "--out", str(path)])
    settings = tmp_path / "p2-s8.settings.json"
    kept = json.loads(settings.read_text())
    assert kept["rollouts"] == "table"
    settings.write_text(json.dumps({**kept, "rollouts": None}))  # as such files were kept
    main([*ONE_DEAL[:-1], "2", "--out", str(path)])
    assert len(read_records(path)) == 4
    assert json.loads(settings.read_text())["rollouts"] == "table"
    with pytest.raises(SystemExit, match=r"rollouts 'table' -> 'expert'"):
        main([*ONE_DEAL[:-1], "3", "--rollouts", "expert", "--out", str(path)])


def test_a_run_kept_before_the_others_rollouts_goes_on_with_the_same_level_at_every_seat(
    tmp_path,
):
    path = tmp_path / "p2-s8.jsonl"
    main([*ONE_DEAL, "--chunk", "1", "--out", str(path)])
    settings = tmp_path / "p2-s8.settings.json"
    kept = json.loads(settings.read_text())
    assert kept["others_rollouts"] is None  # "same": the --rollouts level at every seat
    del kept["others_rollouts"]
    settings.write_text(json.dumps(kept))  # as files were kept before the setting
    main([*ONE_DEAL[:-1], "2", "--out", str(path)])
    assert len(read_records(path)) == 4
    with pytest.raises(SystemExit, match=r"others_rollouts None -> 'expert'"):
        main([*ONE_DEAL[:-1], "3", "--others-rollouts", "expert", "--out", str(path)])
    assert len(read_records(path)) == 4


def test_a_summary_reads_the_table_from_the_runs_settings(tmp_path, capsys):
    path = tmp_path / "p3.jsonl"
    main(
        [
            "--players",
            "3",
            "--simulations",
            "8",
            "--workers",
            "1",
            "--deals",
            "1",
            "--out",
            str(path),
        ]
    )
    capsys.readouterr()
    main(["--summary", "--out", str(path)])  # no --players: the file's settings say 3
    printed = json.loads(capsys.readouterr().out.splitlines()[0])
    assert (printed["players"], printed["simulations"], printed["deals"]) == (3, 8, 1)
    assert printed["fair"] == 1 / 3  # full precision; the table rounds it


def test_the_help_explains_every_flag_and_its_default(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps long lines
    for flag, default in (
        ("--players PLAYERS", "2"),
        ("--deals DEALS", "2000"),
        ("--seed SEED", "1"),
        ("--candidates CANDIDATES", "6"),
        ("--margin MARGIN", "1.0"),
        ("--pool-limit POOL_LIMIT", "table"),
        ("--rollouts ROLLOUTS", "table"),
        ("--workers WORKERS", "2"),
        ("--chunk CHUNK", "40"),
    ):
        explained = out.split(f" {flag} ")[-1]
        assert explained.split(f"(default: {default})")[0].strip(), flag  # words before it
        assert f"(default: {default})" in explained.split(" --")[0], flag
