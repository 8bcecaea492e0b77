"""Ctrl-C in a benchmark: it stops measuring, prints the figures of the measurements it
completed, then a line saying how many of how many those are ("interrupted after k of n
..."), and exits with status 130, with no traceback. Each test runs a benchmark's ``main``
and raises a real KeyboardInterrupt, as Ctrl-C does, in the function that takes one
measurement once the first measurement is done (where that function needs Ray, a training
run or a server's tables, those are stood in for)."""

from __future__ import annotations

import contextlib
import importlib
import re
from types import SimpleNamespace

import pytest
from test_cli import _benchmark


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    """Tables as wide as they need (rich reads COLUMNS), so that no cell is wrapped."""
    monkeypatch.setenv("COLUMNS", "200")


def interrupted_on_call(number: int, function=None):
    """``function``, but its ``number``-th call raises KeyboardInterrupt (as a Ctrl-C then
    would) instead."""
    calls = 0

    def call(*args, **kwargs):
        nonlocal calls
        calls += 1
        if calls == number:
            raise KeyboardInterrupt
        return function(*args, **kwargs)

    return call


def stopped(capfd, main, argv: list[str]) -> tuple[list[list[str]], str]:
    """Run ``main(argv)``, which a Ctrl-C stops: it must exit with status 130, and print
    no traceback (nor any process it started). Its table rows (the cells of each), and all
    it printed with the whitespace made single spaces."""
    try:
        main(argv)
    except SystemExit as stop:
        assert stop.code == 130
    except KeyboardInterrupt:
        pytest.fail("the KeyboardInterrupt escaped main: a Ctrl-C ends in a traceback")
    else:
        pytest.fail("main went on after the Ctrl-C")
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in out.splitlines()]
    return [cells for cells in rows if cells], " ".join((out + err).split())


def test_master_speed_prints_the_games_timed(capfd, monkeypatch):
    """Stopped as the second table's game starts: the first table's rows, not the second's."""
    benchmark = _benchmark("master_speed")
    monkeypatch.setattr(benchmark, "time_game", interrupted_on_call(2, benchmark.time_game))
    argv = ["--players", "2,4", "--simulations", "8,16", "--games", "1"]
    rows, said = stopped(capfd, benchmark.main, argv)
    assert [cells[:2] for cells in rows] == [["2", "8"], ["2", "16"]]
    assert all(float(cells[2]) > 0 for cells in rows)
    assert "interrupted after 1 of 2 games: the figures above are from those; run the" in said


def test_render_speed_prints_the_views_rendered(capfd, monkeypatch):
    benchmark = _benchmark("render_speed")
    monkeypatch.setattr(benchmark, "game_frames", interrupted_on_call(2, benchmark.game_frames))
    _, said = stopped(capfd, benchmark.main, ["--players", "2", "--games", "1"])
    assert re.search(r"view +0: \d+ frames, mean [\d.]+ ms", said)
    assert "view table" not in said
    assert "interrupted after 1 of 2 games: the figures above are from those" in said


def test_a_benchmark_stopped_before_its_first_measurement_says_so(capfd, monkeypatch):
    benchmark = _benchmark("render_speed")
    monkeypatch.setattr(benchmark, "game_frames", interrupted_on_call(1))
    _, said = stopped(capfd, benchmark.main, ["--players", "2", "--games", "3"])
    assert "view" not in said
    assert said.endswith(
        "interrupted before the first of 6 games was complete: nothing to show; run the same "
        "command again to measure them"
    )


def test_cpu_speed_prints_the_rates_measured(capfd, monkeypatch):
    """Stopped at expert's compiled run: hard's rates in full, expert's Python rate alone."""
    benchmark = _benchmark("cpu_speed")
    monkeypatch.setattr(benchmark, "time_compiled", interrupted_on_call(2, benchmark.time_compiled))
    argv = ["--players", "2", "--levels", "hard,expert", "--seconds", "0.05", "--repeats", "1"]
    rows, said = stopped(capfd, benchmark.main, argv)
    rows = [cells for cells in rows if cells[0] == "2"]
    assert [cells[1] for cells in rows] == ["hard", "expert"]
    hard, expert = rows
    assert hard[4].endswith("x") and expert[2] != "-" and expert[3:] == ["-", "-"]
    assert "interrupted after 3 of 4 measurements" in said


def test_engine_speed_prints_the_engines_measured(capfd, monkeypatch):
    """Stopped after the Python engine's run (the warm-up, which compiles for minutes, is
    left out here): its row alone, its memory not measured."""
    benchmark = _benchmark("engine_speed")
    monkeypatch.setattr(benchmark, "warm_up", lambda *args: None)
    monkeypatch.setattr(benchmark, "measure", interrupted_on_call(2, benchmark.measure))
    argv = ["--seconds", "0.05", "--repeats", "1", "--players", "2", "--batch", "1"]
    rows, said = stopped(capfd, benchmark.main, [*argv, "--no-openspiel"])
    ((_, engine, games, *_, memory, ratio),) = [r for r in rows if r[0] == "2"]
    assert engine == "Python Game (table)" and float(games.replace(",", "")) > 0
    assert (memory, ratio) == ("-", "")
    assert "met" not in said  # no target verdict from part of the measurements
    assert "target: no verdict, the run is incomplete" in said
    assert "interrupted after 1 of 5 measurements" in said


@pytest.mark.torch  # OpenSpiel comes with the ecosystem extra
def test_env_speed_prints_the_environments_measured(capfd, monkeypatch):
    """Stopped at the third environment, the AEC env (after OpenSpiel's two drivers): their
    rows, each against the faster of the two, and no target verdict."""
    benchmark = _benchmark("env_speed")
    monkeypatch.setattr(benchmark, "warm_up", lambda *args: None)
    monkeypatch.setattr(benchmark, "ours_aec", interrupted_on_call(1))
    argv = ["--players", "2", "--seconds", "0.05", "--repeats", "1", "--batch", "8"]
    rows, said = stopped(capfd, benchmark.main, argv)
    assert [cells[1] for cells in rows] == ["OpenSpiel, pyspiel direct", "OpenSpiel rl_environment"]
    ratios = sorted(float(cells[4].rstrip("x")) for cells in rows)
    assert ratios[1] == 1.0 and ratios[0] < 1.0  # the fastest driver is the reference
    assert "| 2 | OpenSpiel rl_environment |" in said  # the markdown table too
    assert "met" not in said  # no target verdict from part of the measurements
    assert "target: no verdict, the run is incomplete" in said
    assert re.search(r"interrupted after 2 of \d+ measurements", said)


def test_world_sampler_prints_the_table_being_filled(capfd, monkeypatch):
    """Stopped in the first table, at its second row (two timings a row)."""
    benchmark = _benchmark("world_sampler")
    monkeypatch.setattr(benchmark, "time_sampler", interrupted_on_call(3, benchmark.time_sampler))
    argv = ["--players", "2", "--worlds", "20", "--repeats", "1"]
    rows, said = stopped(capfd, benchmark.main, argv)
    assert "World sampler speed" in said and "exact distribution" not in said
    ((players, asks, *figures),) = rows
    assert (players, asks) == ("2", "10") and all(figures)
    total = len(benchmark.STAGES) + 3 + len(list(benchmark.small_positions()))
    assert f"interrupted after 1 of {total} measurements" in said


@pytest.mark.torch
@pytest.mark.parametrize(
    "stop", [KeyboardInterrupt(), SystemExit(130)], ids=["ctrl-c", "training-stopped"]
)
def test_training_speed_prints_the_runs_done(capfd, monkeypatch, stop):
    """Stopped in the second training run, by a Ctrl-C between steps of training or by
    training's own exit after one (it saves the run, in a temporary folder here)."""
    benchmark = _benchmark("training_speed")

    def train(argv):
        if "--vec-env=vector" in argv:
            raise stop
        return {"timing": {"steps_per_second": 512.0, "train_seconds": 90, "env_fraction": 0.4}}

    # The benchmark imports gofish_training.train once it has checked the train extra.
    monkeypatch.setattr(importlib.import_module("gofish_training.train"), "main", train)
    argv = ["--timesteps", "100", "--vec-envs", "dummy,vector"]
    rows, said = stopped(capfd, benchmark.main, argv)
    assert rows[-1] == ["dummy", "512", "1.5", "40%", "60%"]
    assert "interrupted after 1 of 2 training runs" in said
    assert ("nothing to resume" in said) == isinstance(stop, SystemExit)


@pytest.mark.torch
def test_training_speed_passes_a_failed_run_s_exit_on(monkeypatch):
    benchmark = _benchmark("training_speed")

    def fail(argv):
        raise SystemExit(1)

    monkeypatch.setattr(importlib.import_module("gofish_training.train"), "main", fail)
    with pytest.raises(SystemExit) as stop:
        benchmark.main(["--timesteps", "100", "--vec-envs", "dummy"])
    assert stop.value.code == 1


@pytest.fixture
def no_ray(monkeypatch):
    """Ray's session stood in for: the measuring that needs it is stood in for too."""
    from gofish_training import rllib_cluster

    monkeypatch.setattr(rllib_cluster, "ray_session", lambda *args: contextlib.nullcontext())


@pytest.mark.torch
def test_rllib_speed_prints_the_set_ups_sampled(capfd, monkeypatch, no_ray):
    benchmark = _benchmark("rllib_speed")
    monkeypatch.setattr(benchmark, "env_alone", lambda steps, seed: 40_000.0)

    def sampled(*args):
        return 1234.0, 2500.0

    monkeypatch.setattr(benchmark, "rllib_rate", interrupted_on_call(2, sampled))
    argv = ["--runners", "1", "--envs", "1,8", "--steps", "100", "--markdown"]
    rows, said = stopped(capfd, benchmark.main, argv)
    assert rows == [["gofish rllib_env", "1", "1", "1,234", "2,500", "375"]]
    assert "| gofish rllib_env | 1 | 1 | 1,234 | 2,500 | 375 |" in said
    assert "interrupted after 2 of 3 measurements" in said  # the env alone, then one set-up


@pytest.mark.torch
def test_rllib_scaling_prints_the_iterations_timed(capfd, monkeypatch, no_ray):
    """Stopped in the second timed iteration (after the warm-up one): the first's time, and
    no model (it needs the runners' sampling time, not measured)."""
    benchmark = _benchmark("rllib_scaling")
    iteration = interrupted_on_call(3, lambda: {"env_runners": {"num_env_steps_sampled": 400}})
    algorithm = SimpleNamespace(train=iteration, stop=lambda: None)
    monkeypatch.setattr(benchmark, "build_algorithm", lambda *args: algorithm)
    argv = ["--iterations", "3", "--runners", "1", "--envs", "1"]
    _, said = stopped(capfd, benchmark.main, argv)
    assert re.search(r"an iteration of 400 env steps takes [\d.]+ s \(median of 1\)", said)
    assert "Model:" not in said
    assert "interrupted after 1 of 4 measurements" in said


@pytest.mark.web
def test_web_load_prints_the_tables_played_and_stops_the_server(capfd, monkeypatch):
    """The Ctrl-C reaches the main thread once the first table has ended, the other still
    playing: its figures are the first table's, and the server is stopped."""
    benchmark = _benchmark("web_load")
    as_completed = benchmark.as_completed

    def first_then_ctrl_c(playing):
        yield next(as_completed(playing))
        raise KeyboardInterrupt

    monkeypatch.setattr(benchmark, "as_completed", first_then_ctrl_c)
    servers = []
    stop = benchmark.stop
    monkeypatch.setattr(benchmark, "stop", lambda server: (servers.append(server), stop(server)))
    _, said = stopped(capfd, benchmark.main, ["--tables", "2"])
    assert re.search(r"1 tables played to the end at once in [\d.]+ s: \d+ requests, - per", said)
    assert "interrupted after 1 of 2 tables: the figures above are from those" in said
    (server,) = servers
    assert server.poll() is not None
