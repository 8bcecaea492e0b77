"""The harness's engines (``Measurement.engine``, ``--engine``): compiled CPU levels play
in the vector engine under ``auto`` and ``vector``, everything else in the reference engine;
bad choices are refused before any game; the vector engine plays the same deals and
seatings, and with Python CPUs drawing the compiled CPUs' random stream it gives the very
same records as the reference engine."""

from __future__ import annotations

import pytest
from helpers import first_legal, usage_error
from vector_helpers import SplitMixRandom, seed_state

from gofish_baselines import ladder, tournament
from gofish_baselines.tournament import run_tournament
from gofish_env import Rules
from gofish_env.cpus import make_cpu
from gofish_env.evaluation import harness


def test_a_bad_engine_is_refused_naming_the_allowed_values(tmp_path, capsys):
    with pytest.raises(ValueError, match="engine: got 'gpu'; allowed: 'auto', 'python', 'vector'"):
        run_tournament(["random", "easy"], players=2, games=2, engine="gpu")
    with pytest.raises(ValueError, match="engine: got 'gpu'; allowed: 'auto', 'python'"):
        ladder.run_ladder(2, levels=["random", "easy"], players=[2], engine="gpu")
    out = tmp_path / "out"
    error = usage_error(
        capsys, tournament.main, ["--cpus", "random,easy", "--engine", "gpu", "--out", str(out)]
    )
    assert "--engine: invalid choice: 'gpu'" in error and "'vector'" in error
    assert not out.exists()


def test_the_vector_engine_refuses_entrants_that_are_not_compiled(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"compiled CPU levels only .*not compiled: 'master'"):
        run_tournament(["random", "master"], players=2, games=2, engine="vector")
    with pytest.raises(ValueError, match="not compiled: 'first_legal'"):
        run_tournament(["easy", first_legal], players=2, games=2, engine="vector")
    with pytest.raises(ValueError, match="not compiled: master; use 'auto'"):
        ladder.run_ladder(2, levels=["expert", "master"], players=[2], engine="vector")
    out = tmp_path / "out"
    argv = ["--cpus", "hard,master", "--engine", "vector", "--out", str(out), "--no-progress"]
    assert "not compiled: 'master'" in usage_error(capsys, tournament.main, argv)
    assert not out.exists()
    argv = ["--levels", "expert,master", "--engine", "vector", "--games", "2"]
    assert "--engine: 'vector' plays compiled" in usage_error(capsys, ladder.main, argv)


def spy_on_batches(monkeypatch) -> list[range]:
    """The harness's calls to the vector engine: the deals of each."""
    calls: list[range] = []
    played = harness.batched_records

    def counted(measurement, deals, levels):
        calls.append(deals)
        yield from played(measurement, deals, levels)

    monkeypatch.setattr(harness, "batched_records", counted)
    return calls


def test_auto_plays_compiled_levels_in_the_vector_engine_and_falls_back_to_python(monkeypatch):
    calls = spy_on_batches(monkeypatch)
    compiled = run_tournament(["random", "hard"], players=2, games=4, seed=3)
    assert calls == [range(2)] and compiled.engine == "vector"
    assert compiled.to_dict()["config"]["engine"] == "vector"
    for entrants in (["random", "master"], ["easy", first_legal]):
        mixed = run_tournament(entrants, players=2, games=4, seed=3)
        assert mixed.engine == "python" and mixed.games == 4
    python = run_tournament(["random", "hard"], players=2, games=4, seed=3, engine="python")
    assert python.engine == "python"
    assert calls == [range(2)]  # no other call reached the vector engine


def test_the_same_seed_gives_the_same_tournament_in_the_vector_engine():
    entrants = ["random", "easy", "normal", "hard"]
    one = run_tournament(entrants, players=4, games=48, seed=8, engine="vector")
    two = run_tournament(entrants, players=4, games=48, seed=8, engine="vector", workers=2)
    assert one.records == two.records and one.to_dict() == two.to_dict()
    other = run_tournament(entrants, players=4, games=48, seed=9, engine="vector")
    assert other.records != one.records
    assert all(sum(record.decisions) == record.asks for record in one.records)


def test_the_vector_engine_plays_the_python_engines_deals_and_seatings():
    entrants = ["random", "easy", "normal"]
    rules = Rules.preset("family", players=3)
    vector = run_tournament(entrants, rules=rules, games=18, seed=5, engine="vector")
    python = run_tournament(entrants, rules=rules, games=18, seed=5, engine="python")

    def plan(result):
        return [(r.deal, r.rotation, r.deal_seed, r.seats) for r in result.records]

    assert plan(vector) == plan(python) and len(plan(vector)) == 18


class SplitMixCPU:
    """A Python CPU level whose random choices come from the compiled CPU's stream for the
    same seat seed (``CompiledCPUs.seed_seats``)."""

    def __init__(self, level: str):
        self.cpu = make_cpu(level)

    def reset(self, seed):
        self.cpu.reset()
        self.cpu.rng = SplitMixRandom(seed_state(seed, 0))

    def choose(self, view):
        return self.cpu.choose(view)


@pytest.mark.parametrize(
    ("preset", "max_asks"), [("table", 10_000), ("authors", 10_000), ("two_decks", 30)]
)
def test_vector_records_are_the_python_records_given_the_compiled_random_stream(preset, max_asks):
    levels = ["easy", "hard", "random", "normal"]
    rules = Rules.preset(preset, players=4)
    run = {"rules": rules, "games": 32, "seed": 12, "max_asks": max_asks}
    vector = run_tournament(levels, engine="vector", **run)
    python = run_tournament({level: SplitMixCPU(level) for level in levels}, **run)
    assert python.engine == "python"
    assert vector.records == python.records
    decisions = [(r.decisions, r.truncated) for r in vector.records]
    assert decisions == [(r.decisions, r.truncated) for r in python.records]
    assert any(r.truncated for r in vector.records) == (max_asks == 30)


def test_replays_are_played_in_the_python_engine_and_refused_by_vector(tmp_path, monkeypatch):
    calls = spy_on_batches(monkeypatch)
    result = run_tournament(["random", "easy"], players=2, games=4, replays=tmp_path / "r")
    assert calls == [] and result.engine == "python"
    assert len(list((tmp_path / "r").glob("*.json"))) == 4
    with pytest.raises(ValueError, match="engine: 'vector' saves no replays"):
        run_tournament(["random", "easy"], players=2, engine="vector", replays=tmp_path / "v")
    assert not (tmp_path / "v").exists()
