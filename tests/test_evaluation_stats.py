"""The statistics under the standings (``gofish_env.evaluation.stats``): intervals over
deal-groups, t quantiles, Bradley-Terry ratings on the Elo scale."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gofish_env.evaluation.stats import fit_ratings, ratio_interval, t_quantile_95


def test_ratio_interval_weights_groups_by_their_seats():
    # Group 0: 2 seats summing 1; group 1: 1 seat of 0; group 2: 1 seat of 1.
    values, counts = np.array([1.0, 0.0, 1.0]), np.array([2.0, 1.0, 1.0])
    rate, (low, high) = ratio_interval(values, counts)
    assert rate == 0.5
    residual = values - rate * counts  # 0, -0.5, 0.5
    error = math.sqrt((residual**2).sum() / (3 * 2)) / counts.mean()
    assert (low, high) == pytest.approx((0.5 - 4.303 * error, 0.5 + 4.303 * error))
    assert ratio_interval(np.array([3.0]), np.array([2.0])) == (1.5, None)
    assert ratio_interval(np.array([0.0, 1.0]), np.array([0.0, 1.0]))[1] is None


@pytest.mark.parametrize("truth", [0.02, 0.05, 0.25, 0.5])
def test_a_share_interval_covers_the_truth_95_percent_of_the_time_near_0_too(truth):
    # 30 deals of 4 seat-games, each a win with chance `truth`: r +- t * error covered a
    # share of 0.02 about 71% of the time, and was a point whenever no seat won.
    rng = np.random.default_rng(7)
    covered, points = 0, 0
    for _ in range(2000):
        wins = rng.binomial(4, truth, 30).astype(float)
        _, (low, high) = ratio_interval(wins, np.full(30, 4.0), share=True)
        covered += low <= truth <= high
        points += low == high
    assert 0.93 <= covered / 2000 <= 0.99
    assert points == 0


def test_a_share_interval_is_wilsons_on_independent_seats():
    # One seat a deal: the effective number of seats is the number of deals, and the
    # interval is Wilson's score interval with t(G - 1) for z.
    wins = np.array([1.0] * 3 + [0.0] * 7)
    rate, (low, high) = ratio_interval(wins, np.ones(10), share=True)
    t = t_quantile_95(9)
    error2 = ((wins - rate) ** 2).sum() / (10 * 9)
    seats = rate * (1 - rate) / error2
    centre = (rate + t * t / (2 * seats)) / (1 + t * t / seats)
    half = t * math.sqrt(rate * (1 - rate) / seats + t * t / (4 * seats**2)) / (1 + t * t / seats)
    assert (low, high) == pytest.approx((centre - half, centre + half))


def test_t_quantiles_approach_the_normal():
    assert t_quantile_95(1) == 12.706
    assert t_quantile_95(31) == pytest.approx(2.0395, abs=1e-4)
    assert t_quantile_95(120) == pytest.approx(1.9799, abs=1e-4)


def test_ratings_fit_bradley_terry_odds_on_the_elo_scale():
    ahead = np.array([[0.0, 75.0], [25.0, 0.0]])
    meetings = np.array([[0.0, 100.0], [100.0, 0.0]])
    ratings = fit_ratings(ahead, meetings, prior=0.0)
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(3))
    assert ratings.mean() == pytest.approx(1500)
    # Three players in a cycle of equal strength: all 1500.
    cycle = np.array([[0, 6, 4], [4, 0, 6], [6, 4, 0]], dtype=float)
    assert fit_ratings(cycle, np.full((3, 3), 10.0) - np.diag([10.0] * 3)) == pytest.approx(
        [1500, 1500, 1500]
    )
    # The prior keeps an unbeaten entrant finite.
    unbeaten = fit_ratings(np.array([[0.0, 10.0], [0.0, 0.0]]), meetings / 10)
    assert np.isfinite(unbeaten).all() and unbeaten[0] > unbeaten[1]
