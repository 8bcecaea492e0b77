"""The statistics of the project's measurements: seeds, intervals and ratings.

- ``derive_seed``: every seed of a measurement derives from its seed and keys (deal,
  rotation, seat), so results do not depend on the order or process games are played in.
- ``ratio_interval``: a mean over seats of grouped results (the games of one duplicate deal
  are one group, since they are not independent) and its 95% interval: the ratio
  estimator's standard error and Student's t with G - 1 degrees of freedom for G groups.
- ``fit_ratings``: Bradley-Terry strengths on the Elo scale, from pairwise finishes.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

Z_95 = 1.959963984540054  # the normal distribution's 97.5% quantile
# Student's t 97.5% quantiles for 1..30 degrees of freedom (beyond: a series in 1/df).
T_95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip
ELO_SCALE = 400.0  # rating points for odds of 10:1
ELO_MEAN = 1500.0
BOOTSTRAP_SAMPLES = 200
PRIOR_GAMES = 1.0  # virtual drawn meetings per pair that keep ratings finite (see fit_ratings)


def derive_seed(seed: int, *keys: int) -> int:
    """A 63-bit seed from the tournament seed and keys (deal, rotation, seat, ...)."""
    text = ":".join(str(int(part)) for part in (seed, *keys))
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def t_quantile_95(df: int) -> float:
    """Student's t 97.5% quantile (the half-width factor of a 95% interval)."""
    if df <= len(T_95):
        return T_95[df - 1]
    z = Z_95
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


def ratio_interval(
    values: np.ndarray,
    counts: np.ndarray,
    low: float = -math.inf,
    high: float = math.inf,
    share: bool = False,
) -> tuple[float, tuple | None]:
    """Mean over seats of grouped data and its 95% interval, within [low, high].

    ``values[g]`` is the sum over the seats of deal-group g, ``counts[g]`` the number of seats
    (groups with no seats are left out). The estimate is r = sum(values) / sum(counts); its
    standard error is the ratio estimator's, sqrt(sum((values - r * counts)^2) / (G (G - 1)))
    / mean(counts), which is the standard error of the group means when every group has as
    many seats. The interval is r +- t(G - 1) * error (Student's t, G groups), clipped to
    [low, high]. A ``share`` (each seat's value in [0, 1], such as a win share) gets a score
    (Wilson) interval on the effective number of seats instead, n* = r (1 - r) / error^2
    (Korn and Graubard's for clustered samples; n* is the seat count when every group came
    out alike or the share is 0 or 1): near 0 or 1, r +- t * error shrinks, to a point when
    every deal gives the same result, and covers the truth far less than 95% of the time.
    """
    groups = int(np.count_nonzero(counts))
    keep = counts > 0
    values, counts = values[keep].astype(float), counts[keep].astype(float)
    if not groups:
        return math.nan, None
    rate = float(values.sum() / counts.sum())
    if groups < 2:
        return rate, None
    residual = values - rate * counts
    error = math.sqrt(float((residual**2).sum()) / (groups * (groups - 1))) / counts.mean()
    t = t_quantile_95(groups - 1)
    if share:
        spread = rate * (1 - rate)
        seats = spread / error**2 if error > 0 and spread > 0 else float(counts.sum())
        shrink = 1 + t * t / seats
        centre = (rate + t * t / (2 * seats)) / shrink
        half = t * math.sqrt(spread / seats + t * t / (4 * seats * seats)) / shrink
        lower = 0.0 if rate <= 0 else max(centre - half, 0.0)
        upper = 1.0 if rate >= 1 else min(centre + half, 1.0)
        return rate, (lower, upper)
    half = t * error
    return rate, (max(low, rate - half), min(high, rate + half))


def fit_ratings(ahead: np.ndarray, meetings: np.ndarray, prior: float = PRIOR_GAMES) -> np.ndarray:
    """Bradley-Terry strengths fitted by maximum likelihood, on the Elo scale.

    ``ahead[a, b]`` is how often a finished ahead of b (ties half), ``meetings[a, b]`` how
    often they met. The model: P(a ahead of b) = 1 / (1 + 10 ** ((R_b - R_a) / 400)). Each
    pair that met gets ``prior`` extra virtual meetings that end level (a weak prior that keeps
    the fit finite when someone never loses); the fit is Hunter's (2004) MM iteration. The
    ratings are shifted to average 1500; entrants with no meetings get 1500.
    """
    ahead = np.asarray(ahead, dtype=float)
    meetings = np.asarray(meetings, dtype=float)
    met = meetings > 0
    wins = ahead + prior * 0.5 * met
    games = meetings + prior * met
    total_wins = wins.sum(axis=1)
    active = games.sum(axis=1) > 0
    strength = np.ones(len(ahead))
    for _ in range(10_000):
        denominator = (games / (strength[:, None] + strength[None, :])).sum(axis=1)
        updated = np.where(active, total_wins / np.where(active, denominator, 1.0), 1.0)
        updated /= np.exp(np.log(updated[active]).mean()) if active.any() else 1.0
        change = np.abs(np.log(updated) - np.log(strength)).max()
        strength = updated
        if change < 1e-10:
            break
    ratings = ELO_SCALE * np.log10(strength)
    if active.any():
        ratings[active] += ELO_MEAN - ratings[active].mean()
    ratings[~active] = ELO_MEAN
    return ratings
