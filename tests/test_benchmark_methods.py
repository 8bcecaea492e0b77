"""What the speed benchmarks measure is what their pages say: the env benchmark's direct
OpenSpiel driver observes exactly what OpenSpiel's observation tensor says, every "vs
OpenSpiel" ratio and the target are against the fastest OpenSpiel driver, learner steps get
no ratio; the render benchmark times each view from empty sprite caches."""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_cli import _benchmark


@pytest.fixture(autouse=True)
def wide_console(monkeypatch):
    """Tables as wide as they need (rich reads COLUMNS), so that no cell is wrapped."""
    monkeypatch.setenv("COLUMNS", "200")


@pytest.mark.torch  # OpenSpiel comes with the ecosystem extra
@pytest.mark.parametrize("players", [2, 4, 6])
def test_the_direct_openspiel_observation_is_the_observation_tensor(players):
    """The buffer ``openspiel_direct`` fills (``make_observation`` + ``set_from``) equals
    ``state.observation_tensor(player)`` at every decision of random games, bit for bit."""
    import pyspiel
    from open_spiel.python.observation import make_observation

    benchmark = _benchmark("env_speed")
    assert benchmark.direct_observations_differ(players, seed=1, games=3) == 0
    game = pyspiel.load_game("go_fish", {"players": players})
    observer = make_observation(game)
    sampler, chooser = benchmark.WalkingSampler(2), random.Random(2)
    state, compared = game.new_initial_state(), 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sampler(state))
            continue
        player = state.current_player()
        observer.set_from(state, player)
        expected = np.array(state.observation_tensor(player), dtype=np.float32)
        assert observer.tensor.tobytes() == expected.tobytes()
        compared += 1
        state.apply_action(chooser.choice(state.legal_actions()))
    assert compared > 10


@pytest.mark.torch
def test_env_speed_compares_with_the_fastest_openspiel_driver(capfd, monkeypatch):
    """Stand-in runners with known rates: the ratios are over the faster OpenSpiel driver's
    rate (the direct one here), the learner-step rows have none, and the verdict too is
    against the faster driver."""
    benchmark = _benchmark("env_speed")
    rates = {
        "openspiel_direct": 100_000.0,
        "openspiel_rl": 20_000.0,
        "ours_aec": 10_000.0,
        "ours_self_play": 900_000.0,
        "ours_single_agent": 5_000.0,
        "ours_vector_single": 400_000.0,
    }
    for name, rate in rates.items():
        monkeypatch.setattr(benchmark, name, lambda *args, rate=rate, **kwargs: (rate, 1.0))
    monkeypatch.setattr(benchmark, "warm_up", lambda *args: None)
    benchmark.main(["--players", "4", "--seconds", "0.01", "--repeats", "1", "--batch", "8"])
    out = capfd.readouterr().out
    rows = {
        cells[1]: cells[4].rstrip(" |")
        for cells in (line.split(" | ") for line in out.splitlines() if line.startswith("| 4 |"))
    }
    assert rows["OpenSpiel, pyspiel direct"] == "1.00x"
    assert rows["OpenSpiel rl_environment"] == "0.20x"
    assert rows["ours: SelfPlayVectorEnv N=8"] == "9.00x"
    assert all(ratio == "-" for name, ratio in rows.items() if "learner steps" in name)
    said = " ".join(out.split())
    assert "the fastest OpenSpiel driver's steps/s at 4 players: 9.00x, NOT met" in said
    assert "4 players 481 vs 251" in said


def test_render_speed_times_each_view_from_empty_caches(monkeypatch):
    """The table view, timed after seat 0's, starts with the sprite caches empty, as seat
    0's view does: neither is timed with the sprites the other drew."""
    from gofish_env import picture

    benchmark = _benchmark("render_speed")
    caches = [f for f in vars(picture).values() if callable(getattr(f, "cache_info", None))]
    assert caches
    entries_at_start = []

    def game_frames(env, seed, rng):
        entries_at_start.append(sum(f.cache_info().currsize for f in caches))
        env.reset(seed=seed)
        env.render()  # fills the caches
        assert sum(f.cache_info().currsize for f in caches) > 0
        return [(0.0, 0.0), (0.0, 0.0)]

    monkeypatch.setattr(benchmark, "game_frames", game_frames)
    benchmark.main(["--players", "2", "--games", "1"])
    assert entries_at_start == [0, 0]
