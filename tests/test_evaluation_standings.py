"""Standings from game records (``gofish_env.evaluation.standings.summarize``): win rates
with shared wins, intervals over deal-groups, head to head, copies of an entrant, ratings.
The records are made by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gofish_env import Rules
from gofish_env.cpus import CPU_LEVELS
from gofish_env.evaluation import Entrant, GameRecord
from gofish_env.evaluation.standings import MIN_RATING_GROUPS, summarize
from gofish_env.evaluation.stats import t_quantile_95

LEVEL = next(iter(CPU_LEVELS))  # a CPU level that exists ("random" at least)

TWO = [Entrant("A", LEVEL), Entrant("B", LEVEL)]


def record(deal, rotation, seats, catches, points=None, winners=None):
    """A hand-made two-or-more-seat game result; winners default to the most catches."""
    points = points or tuple(3 * count for count in catches)
    if winners is None:
        best = max(catches)
        winners = tuple(seat for seat, count in enumerate(catches) if count == best)
    return GameRecord(deal, rotation, 0, tuple(seats), tuple(catches), tuple(points), winners)


def test_one_entrant_always_winning_gets_every_win_and_an_interval_that_is_not_a_point():
    # Ten deals all alike: the win share is 1, and its interval reaches 1 but not down to
    # a point (a score interval on 20 seats: 20 / (20 + t(9)^2) = 0.798).
    records = []
    for deal in range(10):
        records.append(record(deal, 0, (0, 1), (9, 4)))
        records.append(record(deal, 1, (1, 0), (4, 9)))
    summary = summarize(records, TWO, Rules(players=2))
    a, b = summary.standings
    t = t_quantile_95(9)
    assert a.win_rate == 1.0 and a.win_rate_ci == pytest.approx((20 / (20 + t * t), 1.0))
    assert b.win_rate == 0.0 and b.win_rate_ci == pytest.approx((0.0, t * t / (20 + t * t)))
    assert (a.mean_catches, b.mean_catches) == (9.0, 4.0)
    assert (a.mean_points, b.mean_points) == (27.0, 12.0)
    assert (a.seats, a.deal_groups, a.wins) == (20, 10, 20.0)
    assert summary.head_to_head[0, 1] == 1.0 and summary.head_to_head[1, 0] == 0.0
    assert math.isnan(summary.head_to_head[0, 0])
    assert summary.meetings.tolist() == [[0, 20], [20, 0]]
    assert a.rating > 1500 > b.rating
    assert a.rating + b.rating == pytest.approx(3000)
    # Every deal alike: a bootstrap over deals has nothing to resample, so no interval
    # rather than a point.
    assert a.rating_ci is None and b.rating_ci is None


def test_shared_wins_give_each_winner_a_share_and_the_interval_is_over_deal_groups():
    records = [
        # Deal 0: A wins, then A and B share the win (level on catches and points).
        record(0, 0, (0, 1), (8, 5)),
        record(0, 1, (1, 0), (6, 6), (40, 40)),
        # Deal 1: B wins both seatings.
        record(1, 0, (0, 1), (5, 10)),
        record(1, 1, (1, 0), (9, 6)),
        # Deal 2: A wins both.
        record(2, 0, (0, 1), (7, 6)),
        record(2, 1, (1, 0), (2, 11)),
    ]
    summary = summarize(records, TWO, Rules(players=2))
    a, b = summary.standings
    assert a.wins == 3.5 and b.wins == 2.5
    assert a.win_rate == pytest.approx(3.5 / 6)
    # Group means of A: 0.75, 0, 1 -> standard error sqrt(var / 3), t with 2 df; a share's
    # interval is Wilson's on the effective number of seats, rate (1 - rate) / error^2.
    means = np.array([0.75, 0.0, 1.0])
    rate, error = 3.5 / 6, means.std(ddof=1) / math.sqrt(3)
    seats, t = rate * (1 - rate) / error**2, 4.303
    centre = (rate + t * t / (2 * seats)) / (1 + t * t / seats)
    half = t * math.sqrt(rate * (1 - rate) / seats + t * t / (4 * seats**2)) / (1 + t * t / seats)
    assert a.win_rate_ci == pytest.approx((max(0.0, centre - half), min(1.0, centre + half)))
    catches = np.array([(8 + 6) / 2, (5 + 6) / 2, (7 + 11) / 2])
    half = 4.303 * catches.std(ddof=1) / math.sqrt(3)
    assert a.mean_catches_ci == pytest.approx((catches.mean() - half, catches.mean() + half))
    # Head to head: A ahead in 3 games, level in 1 (counted half), behind in 2.
    assert summary.head_to_head[0, 1] == pytest.approx(3.5 / 6)
    assert summary.head_to_head[1, 0] == pytest.approx(2.5 / 6)


def test_ties_on_catches_follow_the_rules_tiebreak():
    # Level on catches; A has more points. Table rules: A wins and finishes ahead.
    table = [record(0, 0, (0, 1), (6, 6), (50, 40), winners=(0,))]
    summary = summarize(table, TWO, Rules(players=2))
    assert summary.head_to_head[0, 1] == 1.0
    # Shared-win rules: both win, and neither finished ahead.
    shared = [record(0, 0, (0, 1), (6, 6), (50, 40), winners=(0, 1))]
    summary = summarize(shared, TWO, Rules.preset("family", players=2))
    assert summary.head_to_head[0, 1] == 0.5
    assert [stats.win_rate for stats in summary.standings] == [0.5, 0.5]


def test_copies_of_an_entrant_count_as_seats_and_do_not_meet_themselves():
    # A B A B: seat 2 (A) wins alone.
    records = [record(0, 0, (0, 1, 0, 1), (2, 3, 5, 3))]
    summary = summarize(records, TWO, Rules(players=4))
    a, b = summary.standings
    assert (a.seats, a.wins, a.win_rate) == (2, 1.0, 0.5)
    assert (b.seats, b.wins, b.win_rate) == (2, 0.0, 0.0)
    assert summary.meetings.tolist() == [[0, 4], [4, 0]]
    # A's seats: 2 catches (behind both Bs), 5 (ahead of both): 2 of 4.
    assert summary.head_to_head[0, 1] == 0.5
    assert summary.head_to_head[1, 0] == 0.5


def test_catches_and_points_intervals_stay_within_what_a_game_holds():
    # One deal of 13 catches to 0 and one of 0 to 13: the mean is 6.5, and its interval
    # (r +- t(1) * error, t(1) = 12.7) would run far below 0 and above 13 without the bounds.
    records = [record(0, 0, (0, 1), (13, 0)), record(1, 0, (0, 1), (0, 13))]
    a, _ = summarize(records, TWO, Rules(players=2)).standings
    assert a.mean_catches == 6.5 and a.mean_catches_ci == (0.0, 13.0)
    assert a.mean_points_ci == (0.0, Rules().total_points)


def test_few_deal_groups_give_no_rating_interval():
    def summary(deals):
        # A wins both seatings of two deals in three and splits the third.
        records = [record(deal, 0, (0, 1), (7, 6)) for deal in range(deals)]
        records += [
            record(deal, 1, (1, 0), (6, 7) if deal % 3 else (7, 6)) for deal in range(deals)
        ]
        return summarize(records, TWO, Rules(players=2))

    assert summary(MIN_RATING_GROUPS - 1).standings[0].rating_ci is None
    low, high = summary(MIN_RATING_GROUPS).standings[0].rating_ci
    assert low < summary(MIN_RATING_GROUPS).standings[0].rating < high
