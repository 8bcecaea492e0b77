"""The search's benchmarks: benchmarks/world_sampler.py's closeness of the sampled hands to
the true ones, and benchmarks/master_oracle.py's search over the true hands."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import usage_error
from test_cli import _benchmark

from gofish_baselines import master_strength as strength
from gofish_env import Game, Rules, rollouts
from gofish_env.cards import parse_card
from gofish_env.cpus import make_cpu
from gofish_env.evaluation.kept import read_games
from gofish_env.evaluation.run_files import JsonLines, read_json_lines
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.master import (
    CATCH_WEIGHT,
    DEFAULT_CANDIDATES,
    DEFAULT_POOL_LIMIT,
    default_simulations,
)


def test_the_sampler_s_closeness_to_the_truth_is_measured_for_each_model():
    """benchmarks/world_sampler.py's closeness table: the same decisions for every model,
    and modelling the others' play (expert's, here) puts fewer cards in the wrong hand."""
    rows = _benchmark("world_sampler").closeness(players=2, games=4, pool=8, worlds=40)
    by_name = {name: (decisions, misplaced, right) for name, decisions, misplaced, right, _ in rows}
    assert list(by_name) == [
        "plain",
        "sure hits",
        "sure hits + most held 2.0",
        "sure hits + most held 8.0",
    ]
    assert len({decisions for decisions, _, _ in by_name.values()}) == 1
    assert all(decisions > 0 and 0 <= right <= 1 for decisions, _, right in by_name.values())
    assert by_name["sure hits + most held 8.0"][1] < by_name["plain"][1]


def test_the_model_s_fit_to_expert_s_asks_is_measured_by_stage():
    """benchmarks/world_sampler.py's fit: before the end of the pool, expert's plain asks
    are for the rank it holds most of (what ``most_held`` weighs), and each stage's shares
    add up to one."""
    rows = _benchmark("world_sampler").most_held_fit(players=2, games=4)
    assert rows[0][0] == "before the end"
    assert all(stage.startswith("the end, pool ") for stage, *_ in rows[1:])
    assert all(asks > 0 and abs(sum(shares) - 1) < 1e-9 for _, asks, *shares in rows)
    assert rows[0][2] > 0.95


def test_the_sampler_s_calibration_is_measured_for_each_model():
    """benchmarks/world_sampler.py's calibration: the same predictions for every model (a
    share of worlds, and the truth), and modelling the others' play scores better than the
    plain sampler."""
    benchmark = _benchmark("world_sampler")
    by_model = benchmark.calibration(players=2, games=6, worlds=40)
    assert list(by_model) == [
        "plain",
        "sure hits",
        "sure hits + most held 2.0",
        "sure hits + most held 8.0",
    ]
    plain = by_model["plain"]
    assert len(plain) > 20
    for pairs in by_model.values():
        assert pairs.shape == plain.shape
        assert ((pairs >= 0) & (pairs <= 1)).all()
        assert (pairs[:, 1] == plain[:, 1]).all()  # the same ranks, in the same order
    assert benchmark.brier(by_model["sure hits + most held 8.0"]) < benchmark.brier(plain)


def test_calibration_bins_hold_every_prediction_once():
    """Bins of 0.1, the last holding 1.0: each bin's count, mean prediction and share true."""
    bins = _benchmark("world_sampler").calibration_bins(
        np.array([(0.05, 0), (0.15, 1), (0.12, 0), (0.95, 1), (1.0, 1)], float)
    )
    assert [(low, count) for low, count, _, _ in bins] == [(0.0, 1), (0.1, 2), (0.9, 2)]
    assert bins[1][2:] == pytest.approx((0.135, 0.5))
    assert bins[2][2:] == pytest.approx((0.975, 1.0))
    assert _benchmark("world_sampler").brier(np.array([(0.5, 1), (1.0, 1)])) == 0.125


def test_the_oracle_rolls_out_the_true_hands_and_pairs_deals_with_a_run(tmp_path, capsys):
    """benchmarks/master_oracle.py: its worlds are the true hands (the pool shuffled), and
    --compare pairs its deals with a master_strength file's."""
    oracle_module = _benchmark("master_oracle")
    game = Game(Rules(players=2), seed=3)
    tracker = KnowledgeTracker(game)
    expert = make_cpu("expert", 1)
    while game.pool_size > 8:
        game.ask(*expert.choose(tracker.view(game.current_player)))
    oracle = oracle_module.OracleMaster(0, simulations=8)
    oracle.env = SimpleNamespace(game=game)
    seen = {}
    original = rollouts.rollout_values

    def spy(view, worlds, keys, level, seed):
        seen["worlds"], seen["level"] = worlds, level
        return original(view, worlds, keys, level, seed=seed)

    view = tracker.view(game.current_player)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rollouts, "rollout_values", spy)
        oracle.rollouts(view, sorted({(t, r) for t, r in view.legal_asks})[:2])
    worlds = seen["worlds"]
    assert seen["level"] == "hard"  # master's rollouts at two players
    for seat in range(2):
        assert (worlds.hands[:, seat] == game.hand_counts(seat)).all()
    assert sorted(worlds.pools[0]) == sorted(rank for rank, _ in map(parse_card, game.pool_cards()))
    run = tmp_path / "p2.jsonl"
    strength.main(
        [
            "--players",
            "2",
            "--deals",
            "2",
            "--simulations",
            "8",
            "--workers",
            "1",
            "--out",
            str(run),
        ]
    )
    capsys.readouterr()
    levels = set()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            rollouts, "rollout_values", lambda *a, **k: levels.add(a[3]) or original(*a, **k)
        )
        oracle_module.main(["--deals", "2", "--rollouts", "random", "--compare", str(run)])
    assert levels == {"random"}
    out = capsys.readouterr().out
    assert "oracle master vs expert, 2 players, 2 deals:" in out
    paired = json.loads(out.strip().splitlines()[-1])  # the pairing of master_strength
    assert paired["compare"] == str(run) and paired["deals"] == 2
    run_shares = strength.deal_shares(strength.read_records(run))
    assert paired["other"] == round(sum(run_shares.values()) / 2, 4)


def untimed_rows(path):
    """A master_regret file's rows without their timings, which vary."""
    return [{k: v for k, v in row.items() if k != "ms"} for row in read_json_lines(path).rows]


def test_the_regret_benchmark_values_every_budget_s_picks_by_its_reference(tmp_path, capsys):
    """benchmarks/master_regret.py: a row at each position where master searches, its
    reference is master's own rollouts with the reference's worlds, every pick is one of
    the candidates, and a run stopped by Ctrl-C goes on to the same rows."""
    regret = _benchmark("master_regret")
    command = ["--games", "2", "--simulations", "8,32", "--reference", "16", "--repeats", "2"]
    whole = tmp_path / "whole.jsonl"
    regret.main([*command, "--out", str(whole), "--no-progress"])
    assert "2 players, games 0-1" in " ".join(capsys.readouterr().out.split())
    rows = read_json_lines(whole).rows
    assert rows
    for row in rows[:3]:
        view = next(v for _, d, v, _ in regret.positions(2, row["game"], 1) if d == row["decision"])
        keys = [tuple(key) for key in row["candidates"]]
        assert view.pool_size == row["pool"] <= 12  # master's window at two players
        reference = regret.MasterCPU(
            regret.seed_of(row["game"], row["decision"], 0), simulations=16 * len(keys)
        ).values(view, keys)
        assert np.allclose(row["reference"], reference, atol=1e-6)
        for repeat in range(2):  # each pick is master's own search, with that seed
            cpu = regret.MasterCPU(regret.seed_of(row["game"], row["decision"], 32, repeat + 1), 32)
            assert row["picks"]["32"][repeat] == cpu.pick(cpu.rollouts(view, keys))
    for row in rows:
        assert set(row["picks"]) == {"8", "32"}
        assert all(len(picks) == 2 for picks in row["picks"].values())
        assert all(0 <= p < len(row["candidates"]) for ps in row["picks"].values() for p in ps)
    stopped = tmp_path / "stopped.jsonl"
    measure = regret.measure
    kept = []

    def interrupted(*args):
        if len(kept) == 2:
            raise KeyboardInterrupt
        row = measure(*args)
        if row is not None:
            kept.append(row)
        return row

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(regret, "measure", interrupted)
        with pytest.raises(SystemExit) as stop:
            regret.main([*command, "--out", str(stopped), "--no-progress"])
    assert stop.value.code == 130
    said = " ".join(capsys.readouterr().out.split())
    assert f"stopped: 2 positions kept in {stopped}; the same command goes on" in said
    assert len(read_json_lines(stopped).rows) == 2 < len(rows)
    regret.main([*command, "--out", str(stopped), "--no-progress"])
    assert untimed_rows(stopped) == untimed_rows(whole)
    capsys.readouterr()
    regret.main(["--summary", str(whole)])
    table = capsys.readouterr().out
    assert f"{len(rows)} positions" in table
    gains = [
        np.mean([r["reference"][p] - r["reference"][0] for p in r["picks"]["32"]]) for r in rows
    ]
    games = np.array([r["game"] for r in rows])
    # the 32 row's gain over expert's choice
    assert regret.interval(np.array(gains), games) in table


def test_the_regret_benchmark_s_interval_counts_games_not_decisions():
    """Two games of three decisions each, alike within a game: two independent values,
    not six (t with 1 degree of freedom, 12.706, and the error of two game means)."""
    regret = _benchmark("master_regret")
    values = np.array([0.001, 0.001, 0.001, 0.003, 0.003, 0.003])
    games = np.array([7, 7, 7, 9, 9, 9])
    assert regret.interval(values, games) == "+2.00 +/- 12.71"
    # a game's decisions in any order, games in any order: the same interval
    assert regret.interval(values[::-1], games[::-1]) == "+2.00 +/- 12.71"


def test_the_regret_benchmark_drops_a_cut_last_line_and_measures_it_again(tmp_path, capsys):
    """A kill midway through a row's write leaves a cut line: a summary does not read it,
    and the same command drops it and goes on to the same rows."""
    regret = _benchmark("master_regret")
    command = ["--games", "1", "--simulations", "8", "--reference", "8", "--repeats", "1"]
    path = tmp_path / "regret.jsonl"
    regret.main([*command, "--out", str(path), "--no-progress"])
    whole = untimed_rows(path)
    assert len(whole) >= 2
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:25])
    cut = path.read_bytes()
    capsys.readouterr()
    regret.main(["--summary", str(path)])
    said = capsys.readouterr()
    assert f"{len(whole) - 1} positions" in said.out
    assert f"{path}: a cut last line (25 bytes) not read" in said.err
    assert path.read_bytes() == cut
    regret.main([*command, "--out", str(path), "--no-progress"])
    assert "a cut last line (25 bytes) dropped (a write stopped midway); measured again" in (
        capsys.readouterr().err
    )
    assert untimed_rows(path) == whole


def test_a_json_lines_file_gives_its_whole_rows_and_measures_a_cut_last_line(tmp_path):
    path = tmp_path / "rows.jsonl"
    assert read_json_lines(path) == JsonLines([], [], 0)  # no file yet: no row
    path.write_bytes(b'{"a": 1}\n[2]\n{"b"')
    lines = read_json_lines(path)
    assert (lines.rows, lines.ends, lines.cut) == ([{"a": 1}, [2]], [9, 13], 4)
    assert [lines.size(rows) for rows in (0, 1, 2)] == [0, 9, 13]
    path.write_bytes(b'{"a": 1}\n{"b\n[2]\n')
    with pytest.raises(ValueError, match=r"rows.jsonl, line 2: not a JSON line"):
        read_json_lines(path)


def test_the_regret_benchmark_s_truth_reference_plays_out_the_true_hands(tmp_path, capsys):
    """master_regret --truth: the reference rolls out the true hands with the pool
    reshuffled, by --reference-rollouts; a searcher's /NAME=VALUE settings are master's
    own; a file measured one way is neither continued nor summed up with one measured the
    other way; --pools gives each band of pool sizes its own table."""
    regret = _benchmark("master_regret")
    searchers = "16,16/rollouts=expert/margin=0"
    command = ["--games", "1", "--simulations", searchers, "--reference", "8", "--repeats", "1"]
    truth = [*command, "--truth", "--reference-rollouts", "expert", "--pool-limit", "14"]
    truth.append("--no-progress")
    out = tmp_path / "truth.jsonl"
    regret.main([*truth, "--out", str(out)])
    assert "(the true hands, expert rollouts)" in " ".join(capsys.readouterr().out.split())
    rows = read_json_lines(out).rows
    assert rows and all(set(row["picks"]) == set(searchers.split(",")) for row in rows)
    assert max(row["pool"] for row in rows) in (13, 14)  # a window wider than master's 12
    checked = 0
    for game, decision, view, live in regret.positions(2, 0, 1):
        row = next((r for r in rows if r["decision"] == decision), None)
        if row is None:
            continue
        keys = [tuple(key) for key in row["candidates"]]
        seed = regret.seed_of(game, decision, 0)
        worlds = regret.true_worlds(live, view, 8, seed)
        for seat in range(2):
            assert (worlds.hands[:, seat] == live.hand_counts(seat)).all()
        pool = sorted(parse_card(card)[0] for card in live.pool_cards())
        assert all(sorted(order) == pool for order in worlds.pools)
        share, margin = rollouts.rollout_values(view, worlds, keys, "expert", seed=seed)
        value = (share + CATCH_WEIGHT * margin).mean(axis=0)
        assert np.allclose(row["reference"], value, atol=1e-6)
        cpu = regret.MasterCPU(
            regret.seed_of(game, decision, 16, 1), 16, rollouts="expert", margin=0.0
        )
        assert row["picks"]["16/rollouts=expert/margin=0"] == [cpu.pick(cpu.rollouts(view, keys))]
        checked += 1
        if checked == 3:
            break
    assert checked == min(3, len(rows))
    with pytest.raises(SystemExit) as refused:
        regret.main([*command, "--no-progress", "--out", str(out)])
    assert refused.value.code == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "truth True -> False, reference_rollouts expert -> table, pool_limit 14 -> table" in said
    earlier = tmp_path / "earlier.jsonl"  # a run made before --truth: its settings lack it
    old = dict(rows[0]["settings"])
    del old["truth"], old["reference_rollouts"], old["pool_limit"]
    lines = [json.dumps({**row, "settings": old}) for row in rows]
    earlier.write_text("\n".join(lines) + "\n")
    regret.main([*command, "--no-progress", "--out", str(earlier)])  # goes on: nothing left
    assert len(read_json_lines(earlier).rows) == len(rows)
    capsys.readouterr()
    regret.main(["--summary", str(out), "--pools", "0-6,7-14"])  # a table a band too
    said = " ".join(capsys.readouterr().out.split())
    for low, high in ((0, 6), (7, 14)):
        band = [row for row in rows if low <= row["pool"] <= high]
        if not band:
            assert f"pool {low} to {high}: no position" in said
            continue
        assert f"pool {low} to {high}: {len(band)} positions" in said
        gains = [
            np.mean([r["reference"][p] - r["reference"][0] for p in r["picks"]["16"]]) for r in band
        ]
        games = np.array([r["game"] for r in band])
        assert regret.interval(np.array(gains), games) in said
    capsys.readouterr()
    with pytest.raises(SystemExit):  # a truth run and a model run are not one table
        regret.main(["--summary", str(out), str(earlier)])
    said = " ".join(capsys.readouterr().err.split())
    assert "--summary: the files were measured with other settings" in said


def test_the_oracle_stopped_midway_goes_on_from_its_out_file(tmp_path, capsys, monkeypatch):
    """benchmarks/master_oracle.py --out: Ctrl-C keeps the deals played, and the same
    command ends with the games of a run never stopped."""
    oracle_module = _benchmark("master_oracle")
    argv = ["--deals", "3", "--rollouts", "random"]
    real_play_kept = oracle_module.play_kept

    def ctrl_c_after_a_deal(*args, on_games, **kwargs):
        def counted(done):
            on_games(done)
            if done >= 2:
                raise KeyboardInterrupt

        return real_play_kept(*args, on_games=counted, **kwargs)

    out = tmp_path / "oracle.jsonl"
    monkeypatch.setattr(oracle_module, "play_kept", ctrl_c_after_a_deal)
    with pytest.raises(SystemExit) as stopped:
        oracle_module.main([*argv, "--out", str(out)])
    assert stopped.value.code == (
        f"interrupted: the games played are kept in {out}; run the same command to go on"
    )
    assert len(read_games(out)[0]) == 2
    monkeypatch.undo()
    capsys.readouterr()
    oracle_module.main([*argv, "--out", str(out)])
    resumed = capsys.readouterr()
    assert "1 deal kept; going on from deal 1" in resumed.err
    oracle_module.main(argv)
    fresh = capsys.readouterr().out
    assert resumed.out.splitlines()[0].split("(load")[0] == fresh.splitlines()[0].split("(load")[0]
    assert len(read_games(out)[0]) == 6


def test_the_oracle_takes_masters_search_flags_and_keeps_them_in_its_settings(tmp_path, capsys):
    """master_oracle had --rollouts only and kept only it: its budget, window, margin and
    candidates were master's defaults of the day, which its usage line did not name."""
    oracle_module = _benchmark("master_oracle")
    usage = oracle_module.__doc__.split("\n\n")[1]
    assert f"-s{default_simulations(2)}-l{DEFAULT_POOL_LIMIT}-" in usage  # today's defaults
    seen = []
    original = rollouts.rollout_values

    def spy(view, worlds, keys, level, seed):
        seen.append((view.pool_size, len(keys), len(worlds.hands), level))
        return original(view, worlds, keys, level, seed=seed)

    out = tmp_path / "oracle.jsonl"
    flags = ["--simulations", "12", "--candidates", "2", "--margin", "0.5", "--pool-limit", "6"]
    flags += ["--rollouts", "random", "--others-rollouts", "easy"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rollouts, "rollout_values", spy)
        oracle_module.main(["--deals", "1", *flags, "--out", str(out)])
    assert seen
    for pool, candidates, worlds, level in seen:
        assert pool <= 6 and candidates == 2 and worlds == 12 // 2
        assert level in (["random", "easy"], ["easy", "random"])  # its seat, the other
    kept = json.loads(out.with_suffix(".settings.json").read_text())
    assert {name: kept[name] for name in ("simulations", "candidates", "margin")} == {
        "simulations": 12,
        "candidates": 2,
        "margin": 0.5,
    }
    assert (kept["pool_limit"], kept["rollouts"], kept["others_rollouts"]) == (6, "random", "easy")
    said = capsys.readouterr().out
    assert "search: simulations 12, candidates 2, margin 0.5, pool_limit 6" in said
    # By table: the budget kept as the number it stands for at this table.
    table = tmp_path / "table.jsonl"
    oracle_module.main(["--deals", "1", "--pool-limit", "0", "--out", str(table)])
    kept = json.loads(table.with_suffix(".settings.json").read_text())
    assert (kept["simulations"], kept["candidates"]) == (default_simulations(2), DEFAULT_CANDIDATES)
    assert (kept["pool_limit"], kept["rollouts"], kept["margin"]) == (0, "table", 1.0)
    capsys.readouterr()
    for flag, value in (("--simulations", "0"), ("--pool-limit", "x"), ("--candidates", "1")):
        assert usage_error(capsys, oracle_module.main, [flag, value]).startswith(f"{flag}: got ")


def test_the_oracle_refuses_to_pair_a_run_of_another_seed(tmp_path, capsys):
    """master_oracle --compare paired its seed-1 deals with a seed-5 run's by index."""
    oracle_module = _benchmark("master_oracle")
    run = tmp_path / "seed5.jsonl"
    one_deal = ["--players", "2", "--deals", "1", "--simulations", "8", "--pool-limit", "0"]
    strength.main([*one_deal, "--workers", "1", "--seed", "5", "--out", str(run)])
    capsys.readouterr()
    oracle = ["--deals", "1", "--simulations", "8", "--pool-limit", "0", "--compare", str(run)]
    message = usage_error(capsys, oracle_module.main, oracle)
    assert message == (
        f"--compare: {run} was played with seed 5 (its settings), this run with seed 1; only "
        "runs of the same players and seed pair"
    )
    oracle_module.main([*oracle, "--seed", "5"])  # the same seed: paired
    paired = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert paired["compare"] == str(run) and paired["deals"] == 1


def regret_row(game: int, decision: int, pick: int, settings: dict) -> dict:
    """A master_regret row: two candidates valued 0.5 and 0.6 by the reference."""
    return {
        "game": game,
        "decision": decision,
        "pool": 8,
        "candidates": [[1, 0], [1, 1]],
        "reference": [0.5, 0.6],
        "picks": {"8": [pick]},
        "ms": {"8": [1.0]},
        "settings": settings,
    }


def test_the_regret_summary_counts_a_position_two_files_hold_once(tmp_path, capsys):
    """--summary a.jsonl b.jsonl, b's game also in a: its positions were counted twice."""
    regret = _benchmark("master_regret")
    settings = {"players": 2, "simulations": "8", "reference": 8, "repeats": 1, "margin": 1.0}
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    rows_a = [regret_row(game, decision, game, settings) for game in (0, 1) for decision in (3, 5)]
    rows_b = [regret_row(1, decision, 0, settings) for decision in (3, 5, 7)]
    first.write_text("".join(json.dumps(row) + "\n" for row in rows_a))
    second.write_text("".join(json.dumps(row) + "\n" for row in rows_b))
    regret.main(["--summary", str(first), str(second)])
    said = capsys.readouterr()
    assert "5 positions" in said.out  # 4 in a, and b's game 1 decision 7
    assert f"{second}: 2 positions (game, decision) already read from {first}, counted once" in (
        " ".join(said.err.split())
    )
    rows = [*rows_a, rows_b[2]]  # the first row of each position
    gains = np.array([r["reference"][r["picks"]["8"][0]] - r["reference"][0] for r in rows])
    games = np.array([r["game"] for r in rows])
    assert regret.interval(gains, games) in said.out
    regret.main(["--summary", str(first), str(first)])  # one file named twice
    said = capsys.readouterr()
    assert "4 positions" in said.out and "4 positions (game, decision) already read" in said.err
    # A file of other settings is refused even where all its positions are read already.
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(regret_row(0, 3, 0, {**settings, "margin": 0.0})) + "\n")
    with pytest.raises(SystemExit) as refused:
        regret.main(["--summary", str(first), str(other)])
    assert refused.value.code == 2
    assert "--summary: the files were measured with other settings" in capsys.readouterr().err


def test_the_speed_benchmark_reads_its_budgets_as_the_other_search_flags(capsys):
    """master_speed --simulations 0, abc and table ended in tracebacks (int() and
    MasterCPU's ValueError); its help promises master's budgets by table."""
    speed = _benchmark("master_speed")
    for text, message in (
        ("0", "--simulations: got '0'; allowed: an integer >= 1, or table"),
        ("64,abc", "--simulations: got 'abc'; allowed: an integer >= 1, or table"),
        ("TABLE", "--simulations: got 'TABLE'; allowed: an integer >= 1, or table"),
        ("8,8", "--simulations: '8' is named twice"),
    ):
        assert usage_error(capsys, speed.main, ["--simulations", text, "--games", "1"]) == message
    speed.main(["--players", "2", "--simulations", "8,table", "--games", "1", "--pool-limit", "0"])
    rows = [line.split("│") for line in capsys.readouterr().out.splitlines() if "│" in line]
    assert [cells[2].strip() for cells in rows] == ["8", f"table ({default_simulations(2)})"]
