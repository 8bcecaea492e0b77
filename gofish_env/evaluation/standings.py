"""Standings from game records: each entrant's win rate, catches and tiebreak points with
95% intervals over deal-groups, the head-to-head matrix, and Elo-scale ratings.

Per entrant, each seat it held counts once (with copies, each copy is a seat): win rate (a
win shared by k seats gives 1/k to each), mean catches and mean tiebreak points, each with a
95% interval over deal-groups (``stats.ratio_interval``); a head-to-head matrix (how often
the row entrant finished ahead of the column entrant at the same table, ties counted half);
and a Bradley-Terry rating fitted to the pairwise finishes of every game (400 points = 10:1
odds of finishing ahead, mean 1500), with a 95% bootstrap interval over deal-groups.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from gofish_env.evaluation.entrants import Entrant
from gofish_env.evaluation.harness import GameRecord
from gofish_env.evaluation.stats import (
    BOOTSTRAP_SAMPLES,
    Z_95,
    derive_seed,
    fit_ratings,
    ratio_interval,
    t_quantile_95,
)
from gofish_env.rules import Rules

# Fewer deal-groups give a rating interval that covers the truth far less than 95% of the
# time (47% of them zero-wide with 2 groups): none is given.
MIN_RATING_GROUPS = 10


@dataclass
class EntrantStats:
    """One entrant's results; each ``*_ci`` is a 95% interval (None with one deal-group; the
    rating's with fewer than ``MIN_RATING_GROUPS``)."""

    name: str
    spec: str
    seats: int  # seat-games played (a game with two copies counts twice)
    deal_groups: int
    wins: float  # shared wins count 1/k
    win_rate: float
    win_rate_ci: tuple[float, float] | None
    mean_catches: float
    mean_catches_ci: tuple[float, float] | None
    mean_points: float
    mean_points_ci: tuple[float, float] | None
    rating: float
    rating_ci: tuple[float, float] | None


def finish_key(
    catches: Sequence[int],
    points: Sequence[int],
    winners: Sequence[int],
    seat: int,
    rules: Rules,
) -> tuple[int, int, int]:
    """How a seat finished, for pairwise comparisons: winners first, then catches, then
    tiebreak points (only under rules that break ties by points)."""
    by_points = rules.winner == "catches_then_points"
    return (int(seat in winners), catches[seat], points[seat] if by_points else 0)


def pairwise_counts(
    records: Iterable[GameRecord], entrants: int, rules: Rules
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """Per deal-group pairwise finishes: ``ahead[g, a, b]`` (a ahead of b, ties half) and
    ``meetings[g, a, b]`` (seat pairs of a and b at one table), and the deal of each group."""
    groups: dict[int, int] = {}
    ahead_rows: list[np.ndarray] = []
    meet_rows: list[np.ndarray] = []
    for record in records:
        if record.deal not in groups:
            groups[record.deal] = len(groups)
            ahead_rows.append(np.zeros((entrants, entrants)))
            meet_rows.append(np.zeros((entrants, entrants)))
        ahead, meet = ahead_rows[groups[record.deal]], meet_rows[groups[record.deal]]
        keys = [
            finish_key(record.catches, record.points, record.winners, seat, rules)
            for seat in range(len(record.seats))
        ]
        for i, a in enumerate(record.seats):
            for j, b in enumerate(record.seats):
                if a == b:
                    continue
                meet[a, b] += 1
                if keys[i] > keys[j]:
                    ahead[a, b] += 1
                elif keys[i] == keys[j]:
                    ahead[a, b] += 0.5
    shape = (len(groups), entrants, entrants)
    ahead_all = np.array(ahead_rows) if ahead_rows else np.zeros(shape)
    meet_all = np.array(meet_rows) if meet_rows else np.zeros(shape)
    return ahead_all, meet_all, list(groups)


@dataclass
class Summary:
    standings: list[EntrantStats]
    head_to_head: np.ndarray  # [a, b]: share of meetings a finished ahead of b (nan: none)
    meetings: np.ndarray  # [a, b]: seat pairs of a and b at one table


def summarize(
    records: Sequence[GameRecord],
    entrants: Sequence[Entrant],
    rules: Rules,
    seed: int = 0,
    bootstrap: int = BOOTSTRAP_SAMPLES,
) -> Summary:
    """The statistics of a list of games (see the module docstring)."""
    count = len(entrants)
    deals = sorted({record.deal for record in records})
    group_of = {deal: g for g, deal in enumerate(deals)}
    shape = (count, len(deals))
    wins, catches, points, seats = (np.zeros(shape) for _ in range(4))
    for record in records:
        g = group_of[record.deal]
        share = 1.0 / len(record.winners) if record.winners else 0.0
        for seat, entrant in enumerate(record.seats):
            seats[entrant, g] += 1
            catches[entrant, g] += record.catches[seat]
            points[entrant, g] += record.points[seat]
            if seat in record.winners:
                wins[entrant, g] += share
    ahead_groups, meet_groups, _ = pairwise_counts(records, count, rules)
    ahead, meetings = ahead_groups.sum(axis=0), meet_groups.sum(axis=0)
    ratings = fit_ratings(ahead, meetings)
    rating_cis: list[tuple[float, float] | None] = [None] * count
    if len(deals) >= MIN_RATING_GROUPS and bootstrap:
        rng = np.random.default_rng(derive_seed(seed, -2))
        samples = np.empty((bootstrap, count))
        for b in range(bootstrap):
            weights = np.bincount(rng.integers(len(deals), size=len(deals)), minlength=len(deals))
            samples[b] = fit_ratings(
                np.tensordot(weights, ahead_groups, axes=1),
                np.tensordot(weights, meet_groups, axes=1),
            )
        low, high = np.percentile(samples, [2.5, 97.5], axis=0)
        # A bootstrap over G groups spreads sqrt((G - 1) / G) too little, and its normal
        # tails are too thin for few groups: widened by t(G - 1) / z * sqrt(G / (G - 1)).
        groups = len(deals)
        widen = t_quantile_95(groups - 1) / Z_95 * math.sqrt(groups / (groups - 1))
        low = ratings - widen * np.maximum(ratings - low, 0.0)
        high = ratings + widen * np.maximum(high - ratings, 0.0)
        # Every resample alike (every deal-group came out the same): the bootstrap has
        # nothing to tell, and a point would claim certainty. No interval, as below 10.
        rating_cis = [
            (float(low[e]), float(high[e])) if high[e] > low[e] else None for e in range(count)
        ]
    # A seat lays at most every set of its game (the harness plays single games).
    most_catches, most_points = rules.total_sets, rules.total_points
    standings = []
    for e, entrant in enumerate(entrants):
        win_rate, win_ci = ratio_interval(wins[e], seats[e], share=True)
        mean_catches, catches_ci = ratio_interval(catches[e], seats[e], 0.0, most_catches)
        mean_points, points_ci = ratio_interval(points[e], seats[e], 0.0, most_points)
        standings.append(
            EntrantStats(
                name=entrant.name,
                spec=entrant.description,
                seats=int(seats[e].sum()),
                deal_groups=int(np.count_nonzero(seats[e])),
                wins=float(wins[e].sum()),
                win_rate=win_rate,
                win_rate_ci=win_ci,
                mean_catches=mean_catches,
                mean_catches_ci=catches_ci,
                mean_points=mean_points,
                mean_points_ci=points_ci,
                rating=float(ratings[e]),
                rating_ci=rating_cis[e],
            )
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        head_to_head = np.where(meetings > 0, ahead / np.where(meetings > 0, meetings, 1), np.nan)
    return Summary(standings, head_to_head, meetings)
