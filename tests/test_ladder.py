"""The CPU ladder (``gofish_baselines.ladder``): its levels, ``measure``'s fair count of
shared wins, and each step of the ladder beating the one below on a reduced budget (the
command line's checks are in tests/test_cli.py)."""

from __future__ import annotations

import pytest

from gofish_baselines.ladder import LADDER, measure
from gofish_env.cpus import CPU_LEVELS


def test_every_ladder_level_is_registered():
    assert list(LADDER) == ["random", "easy", "normal", "hard", "expert"]
    assert all(name in CPU_LEVELS for name in LADDER)


# (players, duplicate deals) per format: the stronger of each adjacent pair must win more
# than its fair share. About a minute in all.
LADDER_BUDGET = {2: 1500, 4: 300}


@pytest.mark.slow
@pytest.mark.parametrize("players", sorted(LADDER_BUDGET))
@pytest.mark.parametrize("step", range(len(LADDER) - 1))
def test_each_ladder_step_beats_the_one_below(players, step):
    weak, strong = LADDER[step], LADDER[step + 1]
    result = measure(strong, weak, players, LADDER_BUDGET[players], seed=2024)
    assert result.truncated == 0
    assert result.score > 1.0 / players, (strong, weak, players, result.score)


def test_measure_counts_shared_wins_fairly():
    # Two copies of the same CPU: every game's win share sums to 1 over the seats, so the
    # one "stronger" seat gets a fair share on average over the rotated deals.
    result = measure("random", "random", 3, 60, seed=1)
    assert 0.15 < result.score < 0.52
    assert result.low < result.score < result.high
    assert result.games == 180


def test_a_measurement_is_the_same_in_one_or_two_worker_processes():
    one = measure("easy", "random", 3, 6, seed=4)
    two = measure("easy", "random", 3, 6, seed=4, workers=2)
    assert (one.score, one.low, one.high, one.truncated) == (two.score, two.low, two.high, 0)
