"""Tournaments between Go Fish players, with rotated seats and duplicate deals.

python -m baselines.tournament --players 4 --cpus easy,normal,hard,expert --games 400 \
    --rules table --seed 0 --workers 2 --out results/tournament

An entrant is any opponent spec ``gofish_env.opponents.make_opponent`` accepts: a CPU level
name, ``"model:PATH.zip"`` (a saved MaskablePPO), an SB3 model, a CPU object with
``choose(view)``, an ``Opponent``, a callable ``(observation, action_mask) -> action``, or
(from Python) ``"mix:a,b"``, a member drawn each game. Every game is driven through
``gofish_env.raw_env``, so every kind of entrant plays the same way.

Schedule (see docs/tournament.md):
- Line-ups. With as many entrants as seats there is one line-up. With more entrants, every
  combination of ``players`` entrants is a line-up and the deals cycle through them, so each
  pair meets equally often (the number of deals is rounded up to whole cycles). With fewer
  entrants the table is filled with copies: line-up k seats entrants k, k+1, ... (mod N)
  around the table, and the deals cycle through those, so every entrant gets as many seats.
- Seating order. Deal d uses its line-up's first entrant followed by one of the orders of the
  others (cycling with d), so who sits to whose left changes over the tournament.
- Duplicate deals. Each shuffled deal is played ``players`` times, once per rotation of the
  seating: every entrant of the line-up holds every seat's hand of that deal once, so the
  luck of the deal cancels. ``games`` is rounded up to a whole number of such deal-groups.

Every seed derives from (seed, deal index, ...), and results are collected in deal order, so
the same seed gives the same result whatever the number of worker processes.

Statistics, per entrant (each seat it held counts once; with copies, each copy is a seat):
win rate (a win shared by k seats gives 1/k to each), mean catches and mean tiebreak points,
each with a 95% confidence interval computed over deal-groups, since the games of one deal
are not independent (a ratio estimator's standard error and Student's t with G - 1 degrees
of freedom for G deal-groups, clipped to the possible range); a head-to-head
matrix (how often the row entrant finished ahead of the column entrant at the same table,
ties counted half); and an Elo-scale Bradley-Terry rating fitted to the pairwise finishes of
every game (400 points = 10:1 odds of finishing ahead, mean 1500), with a 95% bootstrap
interval over deal-groups.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import hashlib
import json
import math
import multiprocessing
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations, permutations
from pathlib import Path
from typing import Any

import numpy as np

from gofish_env.aec_env import DEFAULT_MAX_ASKS
from gofish_env.agent_files import AgentFileError, check_agent_rules, read_agent_rules
from gofish_env.cli import check_count, check_output, rules_or_error
from gofish_env.game import Game
from gofish_env.opponents import MIX_PREFIX, MODEL_PREFIX, Opponent, make_opponent
from gofish_env.rules import Rules

Z_95 = 1.959963984540054  # the normal distribution's 97.5% quantile
# Student's t 97.5% quantiles for 1..30 degrees of freedom (beyond: a series in 1/df).
T_95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip
ELO_SCALE = 400.0  # rating points for odds of 10:1
ELO_MEAN = 1500.0
BOOTSTRAP_SAMPLES = 200
PRIOR_GAMES = 1.0  # virtual drawn meetings per pair that keep ratings finite (see fit_ratings)


# ---------------------------------------------------------------------- entrants


@dataclass(frozen=True)
class Entrant:
    """A named player of the tournament; ``spec`` is anything ``make_opponent`` accepts."""

    name: str
    spec: Any = field(compare=False)

    @property
    def description(self) -> str:
        spec = self.spec
        if isinstance(spec, str):
            return spec
        if hasattr(spec, "predict"):
            return f"SB3 model {type(spec).__name__}"
        if hasattr(spec, "choose"):
            return f"CPU object {type(spec).__name__}"
        if isinstance(spec, Opponent):
            return f"opponent {type(spec).__name__}"
        return f"callable {getattr(spec, '__name__', type(spec).__name__)}"


def _default_name(spec: Any) -> str:
    if isinstance(spec, str):
        if spec.startswith(MODEL_PREFIX):
            return Path(spec[len(MODEL_PREFIX) :]).stem or spec
        return spec
    if hasattr(spec, "choose"):
        return str(getattr(spec, "name", "") or type(spec).__name__)
    if hasattr(spec, "predict") or isinstance(spec, Opponent):
        return type(spec).__name__
    name = getattr(spec, "__name__", "")
    return name if name and name != "<lambda>" else "callable"


def make_entrants(
    entrants: Mapping[str, Any] | Sequence[Any], rules: Rules | None = None
) -> list[Entrant]:
    """Entrants from ``{name: spec}`` or a list of specs (named after the spec; a repeated
    name gets ``#2``, ``#3``, ...). String specs are checked here, before any game: CPU
    levels exist, model files can be read and, given the table's ``rules``, were trained
    for that table (``gofish_env.agent_files``)."""
    if isinstance(entrants, Mapping):
        pairs = [(str(name), spec) for name, spec in entrants.items()]
    elif isinstance(entrants, Sequence) and not isinstance(entrants, str):
        pairs = []
        seen: dict[str, int] = {}
        for spec in entrants:
            base = _default_name(spec)
            seen[base] = seen.get(base, 0) + 1
            pairs.append((base if seen[base] == 1 else f"{base}#{seen[base]}", spec))
    else:
        raise ValueError(
            f"entrants: got {entrants!r}; allowed: a dict of name -> spec, or a list of specs"
        )
    if len(pairs) < 2:
        raise ValueError(f"entrants: got {len(pairs)}; a tournament needs at least 2")
    for name, spec in pairs:
        if isinstance(spec, str):
            _check_spec(name, spec, rules)
    return [Entrant(name, spec) for name, spec in pairs]


def _check_spec(name: str, spec: str, rules: Rules | None = None) -> None:
    if spec.startswith(MIX_PREFIX):
        for member in spec[len(MIX_PREFIX) :].split(","):
            _check_spec(name, member, rules)
        return
    if spec.startswith(MODEL_PREFIX):
        path = spec[len(MODEL_PREFIX) :]
        try:
            if rules is None:
                read_agent_rules(path)  # a missing or corrupt file
            else:
                check_agent_rules(path, rules)
        except AgentFileError as error:
            raise AgentFileError(f"entrant {name!r}: {error}") from None
        return
    from gofish_env.cpus import CPU_LEVELS

    if spec not in CPU_LEVELS:
        raise ValueError(
            f"entrant {name!r}: unknown CPU level {spec!r}; allowed: {', '.join(CPU_LEVELS)}, "
            f"or model:PATH.zip"
        )


# ---------------------------------------------------------------------- schedule


def make_lineups(entrants: int, players: int) -> list[tuple[int, ...]]:
    """The table line-ups (entrant indices, one per seat) the deals cycle through.

    ``entrants >= players``: every combination of ``players`` entrants. Fewer entrants: the
    table is filled with copies, line-up k being entrants k, k+1, ... mod N around the table
    (line-ups that are rotations of an earlier one are dropped).
    """
    if entrants >= players:
        return list(combinations(range(entrants), players))
    lineups: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    for start in range(entrants):
        lineup = tuple((start + i) % entrants for i in range(players))
        rotations = {lineup[k:] + lineup[:k] for k in range(players)}
        if not rotations & seen:
            lineups.append(lineup)
            seen.add(lineup)
    return lineups


def seating_order(lineups: Sequence[tuple[int, ...]], deal: int) -> tuple[int, ...]:
    """Deal ``deal``'s entrants in seat order, before rotation: its line-up's first entrant,
    then the others in the ``deal // len(lineups)``-th of their orders (mod their count)."""
    lineup = lineups[deal % len(lineups)]
    orders = _orders(lineup[1:])
    return (lineup[0], *orders[(deal // len(lineups)) % len(orders)])


_ORDER_CACHE: dict[tuple[int, ...], list[tuple[int, ...]]] = {}


def _orders(rest: tuple[int, ...]) -> list[tuple[int, ...]]:
    if rest not in _ORDER_CACHE:
        # Distinct orders only (copies of an entrant make permutations repeat).
        _ORDER_CACHE[rest] = list(dict.fromkeys(permutations(rest)))
    return _ORDER_CACHE[rest]


def rotated(order: Sequence[int], rotation: int) -> tuple[int, ...]:
    """The entrant at each seat in rotation ``rotation``: seat s holds ``order[s + rotation]``
    (mod P), so over the P rotations every entrant holds every seat once."""
    players = len(order)
    return tuple(order[(seat + rotation) % players] for seat in range(players))


def derive_seed(seed: int, *keys: int) -> int:
    """A 63-bit seed from the tournament seed and keys (deal, rotation, seat, ...)."""
    text = ":".join(str(int(part)) for part in (seed, *keys))
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def deal_count(games: int, players: int, lineups: int) -> int:
    """Deals needed for at least ``games`` games: whole deal-groups (``players`` games each),
    rounded up to whole cycles of the line-ups."""
    deals = max(1, math.ceil(games / players))
    return math.ceil(deals / lineups) * lineups


# ---------------------------------------------------------------------- playing


@dataclass(frozen=True)
class GameRecord:
    """One finished game: which entrant sat where, and how the seats did."""

    deal: int
    rotation: int
    deal_seed: int
    seats: tuple[int, ...]  # entrant index at each seat
    catches: tuple[int, ...]
    points: tuple[int, ...]
    winners: tuple[int, ...]
    truncated: bool = False
    asks: int = 0


@dataclass
class _Setup:
    entrants: list[Entrant]
    rules: Rules
    seed: int
    lineups: list[tuple[int, ...]]
    max_asks: int


class _Table:
    """Plays deals in one process: one env and one opponent per (entrant, copy), reused."""

    def __init__(self, setup: _Setup):
        from gofish_env.aec_env import raw_env

        self.setup = setup
        self.env = raw_env(rules=setup.rules, max_asks=setup.max_asks)
        self._opponents: dict[tuple[int, int], Opponent] = {}

    def opponent(self, entrant: int, copy_index: int) -> Opponent:
        key = (entrant, copy_index)
        if key not in self._opponents:
            self._opponents[key] = self._build(entrant, copy_index)
        return self._opponents[key]

    def _build(self, entrant: int, copy_index: int) -> Opponent:
        spec = self.setup.entrants[entrant].spec
        if copy_index and (isinstance(spec, Opponent) or hasattr(spec, "choose")):
            # Copies of a stateful player at one table must not share its state.
            spec = copy.deepcopy(spec)
        # A saved model is loaded once per process (load_model caches it) and shared.
        return make_opponent(spec, self.setup.rules)

    def play_deal(self, deal: int) -> list[GameRecord]:
        setup = self.setup
        players = setup.rules.players
        deal_seed = derive_seed(setup.seed, deal)
        game = Game(setup.rules, seed=deal_seed)
        order = seating_order(setup.lineups, deal)
        return [
            self.play_game(game, deal, deal_seed, rotation, rotated(order, rotation))
            for rotation in range(players)
        ]

    def play_game(
        self, game: Game, deal: int, deal_seed: int, rotation: int, seats: tuple[int, ...]
    ) -> GameRecord:
        setup = self.setup
        env = self.env
        env.reset(options={"game": game})  # the env plays a copy: the deal is replayed as is
        copies: dict[int, int] = {}
        seat_players = []
        for seat, entrant in enumerate(seats):
            opponent = self.opponent(entrant, copies.get(entrant, 0))
            copies[entrant] = copies.get(entrant, 0) + 1
            opponent.reset(derive_seed(setup.seed, deal, rotation, seat))
            seat_players.append(opponent)
        with _seeded_torch(derive_seed(setup.seed, deal, rotation, -1)):
            played = env.game
            while not played.is_over and not env.truncations[env.agent_selection]:
                seat = played.current_player
                action = seat_players[seat].act(env, seat)
                try:
                    env.step(action)
                except ValueError as error:  # IllegalAsk is a ValueError too
                    name = setup.entrants[seats[seat]].name
                    raise ValueError(
                        f"entrant {name!r} (seat {seat}) chose an illegal action {action!r}: "
                        f"{error}"
                    ) from error
        catches = tuple(len(played.catches(seat)) for seat in range(len(seats)))
        points = tuple(played.tiebreak_points(seat) for seat in range(len(seats)))
        truncated = not played.is_over
        winners = played.winners if not truncated else leaders(catches, points, setup.rules)
        return GameRecord(
            deal=deal,
            rotation=rotation,
            deal_seed=deal_seed,
            seats=seats,
            catches=catches,
            points=points,
            winners=tuple(winners),
            truncated=truncated,
            asks=played.num_asks,
        )


@contextlib.contextmanager
def _seeded_torch(seed: int) -> Iterator[None]:
    """Seed torch for one game (SB3 models sample their actions from torch's generator),
    restoring the caller's generator afterwards. Nothing to do if torch is not in use."""
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def leaders(catches: Sequence[int], points: Sequence[int], rules: Rules) -> tuple[int, ...]:
    """The seats at the top by the rules' scoring (for a game cut off by the ask limit)."""
    keys = [finish_key(catches, points, (), seat, rules) for seat in range(len(catches))]
    best = max(keys)
    return tuple(seat for seat, key in enumerate(keys) if key == best)


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


_WORKER_TABLE: _Table | None = None


def _init_worker(setup: _Setup) -> None:
    global _WORKER_TABLE
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)  # one process per core already
    _WORKER_TABLE = _Table(setup)


def _worker_deal(deal: int) -> list[GameRecord]:
    assert _WORKER_TABLE is not None
    return _WORKER_TABLE.play_deal(deal)


def _play_deals(setup: _Setup, deals: int, workers: int) -> Iterator[list[GameRecord]]:
    """Each deal's games, in deal order, from this process or a pool of workers."""
    if workers <= 1 or deals <= 1:
        table = _Table(setup)
        for deal in range(deals):
            yield table.play_deal(deal)
        return
    methods = multiprocessing.get_all_start_methods()
    # fork lets unpicklable entrants (lambdas, loaded models) reach the workers as they are.
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    with context.Pool(min(workers, deals), _init_worker, (setup,)) as pool:
        yield from pool.imap(_worker_deal, range(deals), chunksize=1)


# ---------------------------------------------------------------------- statistics


@dataclass
class EntrantStats:
    """One entrant's results; each ``*_ci`` is a 95% interval (None with one deal-group)."""

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
    values: np.ndarray, counts: np.ndarray, low: float = -math.inf, high: float = math.inf
) -> tuple[float, tuple | None]:
    """Mean over seats of grouped data and its 95% interval, clipped to [low, high].

    ``values[g]`` is the sum over the seats of deal-group g, ``counts[g]`` the number of seats
    (groups with no seats are left out). The estimate is r = sum(values) / sum(counts); its
    standard error is the ratio estimator's, sqrt(sum((values - r * counts)^2) / (G (G - 1)))
    / mean(counts), which is the standard error of the group means when every group has as
    many seats; the interval is r +- t(G - 1) * error (Student's t, G groups).
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
    half = t_quantile_95(groups - 1) * error
    return rate, (max(low, rate - half), min(high, rate + half))


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
    if len(deals) >= 2 and bootstrap:
        rng = np.random.default_rng(derive_seed(seed, -2))
        samples = np.empty((bootstrap, count))
        for b in range(bootstrap):
            weights = np.bincount(rng.integers(len(deals), size=len(deals)), minlength=len(deals))
            samples[b] = fit_ratings(
                np.tensordot(weights, ahead_groups, axes=1),
                np.tensordot(weights, meet_groups, axes=1),
            )
        low, high = np.percentile(samples, [2.5, 97.5], axis=0)
        rating_cis = [(float(low[e]), float(high[e])) for e in range(count)]
    standings = []
    for e, entrant in enumerate(entrants):
        win_rate, win_ci = ratio_interval(wins[e], seats[e], 0.0, 1.0)
        mean_catches, catches_ci = ratio_interval(catches[e], seats[e], 0.0)
        mean_points, points_ci = ratio_interval(points[e], seats[e], 0.0)
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


# ---------------------------------------------------------------------- result


@dataclass
class TournamentResult:
    entrants: list[Entrant]
    rules: Rules
    seed: int
    deals: int
    lineups: list[tuple[int, ...]]
    records: list[GameRecord]
    summary: Summary

    @property
    def names(self) -> list[str]:
        return [entrant.name for entrant in self.entrants]

    @property
    def standings(self) -> list[EntrantStats]:
        """Per entrant, in entrant order."""
        return self.summary.standings

    @property
    def head_to_head(self) -> np.ndarray:
        return self.summary.head_to_head

    @property
    def games(self) -> int:
        return len(self.records)

    def ranked(self) -> list[EntrantStats]:
        """Standings best first: by rating, then win rate."""
        return sorted(self.standings, key=lambda s: (-s.rating, -s.win_rate, s.name))

    def to_dict(self) -> dict:
        return {
            "config": {
                "players": self.rules.players,
                "rules": self.rules.describe(),
                "rules_fields": asdict(self.rules),
                "seed": self.seed,
                "deals": self.deals,
                "games": self.games,
                "truncated_games": sum(record.truncated for record in self.records),
                "entrants": [
                    {"name": entrant.name, "spec": entrant.description} for entrant in self.entrants
                ],
                "lineups": [[self.names[e] for e in lineup] for lineup in self.lineups],
            },
            "standings": [_json_ready(asdict(stats)) for stats in self.ranked()],
            "head_to_head": {
                "entrants": self.names,
                "ahead": _json_ready(self.summary.head_to_head.tolist()),
                "meetings": self.summary.meetings.astype(int).tolist(),
            },
            "games": [
                {
                    **asdict(record),
                    "seats": [self.names[e] for e in record.seats],
                    "winners": list(record.winners),
                }
                for record in self.records
            ],
        }

    def table(self) -> str:
        """The standings and head-to-head matrix as plain text."""

        def interval(ci: tuple[float, float] | None, digits: int) -> str:
            return "-" if ci is None else f"{ci[0]:.{digits}f}..{ci[1]:.{digits}f}"

        width = max(6, *(len(name) for name in self.names))
        lines = [
            f"{self.games} games ({self.deals} deals x {self.rules.players} seatings), "
            f"{self.rules.players} players, {rules_text(self.rules)}, seed {self.seed}",
            "",
            f"{'#':>2} {'entrant':<{width}} {'rating':>6} {'95% CI':>11}  {'win %':>5} "
            f"{'95% CI':>11}  {'catches':>7} {'95% CI':>11}  {'points':>6} {'95% CI':>13}",
        ]
        for place, stats in enumerate(self.ranked(), 1):
            win_ci = stats.win_rate_ci and (stats.win_rate_ci[0] * 100, stats.win_rate_ci[1] * 100)
            lines.append(
                f"{place:>2} {stats.name:<{width}} {stats.rating:>6.0f} "
                f"{interval(stats.rating_ci, 0):>11}  {stats.win_rate * 100:>5.1f} "
                f"{interval(win_ci, 1):>11}  {stats.mean_catches:>7.2f} "
                f"{interval(stats.mean_catches_ci, 2):>11}  {stats.mean_points:>6.1f} "
                f"{interval(stats.mean_points_ci, 1):>13}"
            )
        lines += ["", "Head to head (row finished ahead of column, % of meetings, ties half):"]
        widths = [max(6, len(name)) for name in self.names]
        header = " ".join(f"{name:>{w}}" for name, w in zip(self.names, widths, strict=True))
        lines.append(" " * (width + 1) + header)
        for a, name in enumerate(self.names):
            cells = [
                f"{'-':>{w}}" if math.isnan(value) else f"{value * 100:>{w}.1f}"
                for value, w in zip(self.summary.head_to_head[a], widths, strict=True)
            ]
            lines.append(f"{name:<{width}} " + " ".join(cells))
        return "\n".join(lines)

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write results.json, standings.csv, head_to_head.csv, games.csv and win_rates.png."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {
            "json": out / "results.json",
            "standings": out / "standings.csv",
            "head_to_head": out / "head_to_head.csv",
            "games": out / "games.csv",
            "chart": out / "win_rates.png",
        }
        paths["json"].write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        with paths["standings"].open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(
                [
                    "rank", "entrant", "spec", "seats", "deal_groups", "wins",
                    "win_rate", "win_rate_low", "win_rate_high",
                    "mean_catches", "mean_catches_low", "mean_catches_high",
                    "mean_points", "mean_points_low", "mean_points_high",
                    "rating", "rating_low", "rating_high",
                ]
            )  # fmt: skip
            for place, stats in enumerate(self.ranked(), 1):
                writer.writerow(
                    [
                        place, stats.name, stats.spec, stats.seats, stats.deal_groups,
                        _num(stats.wins),
                        _num(stats.win_rate), *_pair(stats.win_rate_ci),
                        _num(stats.mean_catches), *_pair(stats.mean_catches_ci),
                        _num(stats.mean_points), *_pair(stats.mean_points_ci),
                        _num(stats.rating), *_pair(stats.rating_ci),
                    ]
                )  # fmt: skip
        with paths["head_to_head"].open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["entrant", *self.names])
            for a, name in enumerate(self.names):
                row = self.summary.head_to_head[a]
                writer.writerow([name, *("" if math.isnan(v) else _num(v) for v in row)])
        with paths["games"].open("w", newline="") as handle:
            writer = csv.writer(handle)
            players = self.rules.players
            writer.writerow(
                ["deal", "rotation", "deal_seed", "asks", "truncated", "winners"]
                + [f"{kind}_{seat}" for seat in range(players) for kind in ("entrant", "catches")]
                + [f"points_{seat}" for seat in range(players)]
            )
            for record in self.records:
                writer.writerow(
                    [
                        record.deal,
                        record.rotation,
                        record.deal_seed,
                        record.asks,
                        int(record.truncated),
                        " ".join(map(str, record.winners)),
                    ]
                    + [
                        value
                        for seat in range(players)
                        for value in (self.names[record.seats[seat]], record.catches[seat])
                    ]
                    + list(record.points)
                )
        self.plot(paths["chart"])
        return paths

    def plot(self, path: str | Path) -> None:
        """A bar chart of win rates with their 95% intervals (matplotlib, no pyplot state)."""
        from matplotlib.figure import Figure

        ranked = self.ranked()
        rates = np.array([stats.win_rate * 100 for stats in ranked])
        errors = np.array(
            [
                [0.0, 0.0]
                if stats.win_rate_ci is None
                else [
                    stats.win_rate * 100 - stats.win_rate_ci[0] * 100,
                    stats.win_rate_ci[1] * 100 - stats.win_rate * 100,
                ]
                for stats in ranked
            ]
        ).T
        figure = Figure(figsize=(max(4.0, 1.2 * len(ranked) + 2), 4.0), layout="constrained")
        axes = figure.subplots()
        positions = np.arange(len(ranked))
        axes.bar(positions, rates, yerr=errors, capsize=6, color="tab:blue", alpha=0.8)
        axes.axhline(100 / self.rules.players, color="gray", linestyle="--", linewidth=1)
        axes.set_xticks(positions, [stats.name for stats in ranked])
        axes.set_ylabel("win rate (%), 95% CI")
        axes.set_ylim(0, max(100 / self.rules.players, float((rates + errors[1]).max())) * 1.15)
        axes.set_title(
            f"{self.games} games, {self.rules.players} players, {rules_text(self.rules)}",
            fontsize=10,
        )
        figure.savefig(path, dpi=100)


def rules_text(rules: Rules) -> str:
    """The house rules in force apart from the player count, e.g. ``set_size=2``."""
    parts = [part for part in rules.describe().split(", ") if not part.startswith("players=")]
    return ", ".join(parts) or "table rules"


def _num(value: float) -> str:
    return f"{value:.6g}"


def _pair(ci: tuple[float, float] | None) -> list[str]:
    return ["", ""] if ci is None else [_num(ci[0]), _num(ci[1])]


def _json_ready(value: Any) -> Any:
    """NaN -> None and tuples -> lists, for strict JSON."""
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(item) for item in value]
    return value


# ---------------------------------------------------------------------- entry points


def run_tournament(
    entrants: Mapping[str, Any] | Sequence[Any],
    players: int | None = None,
    games: int = 100,
    rules: str | Rules = "table",
    seed: int = 0,
    workers: int = 1,
    max_asks: int = DEFAULT_MAX_ASKS,
    progress: bool | Callable[[int], None] = False,
) -> TournamentResult:
    """Play a tournament and return its games and statistics.

    ``entrants``: ``{name: spec}`` or a list of specs (see the module docstring). ``players``:
    seats at each table (default 4, or the ``Rules``' count). ``games``: at least this many
    games are played (rounded up to whole deal-groups and line-up cycles). ``rules``: a
    preset name or a ``Rules``. ``workers``: processes to play in (the result is the same for
    any count). ``max_asks``: asks after which a game is cut off and scored as it stands.
    ``progress``: show a progress bar on stderr, or a callable given the games played so far.
    """
    rules = _resolve_rules(players, rules)
    if rules.match_target:
        raise ValueError("rules: match play (match_target) is not supported; play single games")
    for name, value, low in (("games", games, 1), ("workers", workers, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name}: got {value!r}; allowed: an integer >= {low}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed: got {seed!r}; allowed: an integer")
    entrant_list = make_entrants(entrants, rules)
    lineups = make_lineups(len(entrant_list), rules.players)
    deals = deal_count(games, rules.players, len(lineups))
    setup = _Setup(entrant_list, rules, seed, lineups, max_asks)
    records: list[GameRecord] = []
    with _progress(progress, deals * rules.players) as advance:
        for deal_records in _play_deals(setup, deals, workers):
            records.extend(deal_records)
            advance(len(records))
    summary = summarize(records, entrant_list, rules, seed)
    return TournamentResult(entrant_list, rules, seed, deals, lineups, records, summary)


def _resolve_rules(players: int | None, rules: str | Rules) -> Rules:
    if isinstance(rules, Rules):
        if players is not None and players != rules.players:
            raise ValueError(f"players: got {players} but the rules are for {rules.players}")
        return rules
    if isinstance(rules, str):
        return Rules.preset(rules, players=4 if players is None else players)
    raise ValueError(f"rules: got {rules!r}; allowed: a preset name or a gofish_env.Rules")


@contextlib.contextmanager
def _progress(
    progress: bool | Callable[[int], None], total: int
) -> Iterator[Callable[[int], None]]:
    if callable(progress):
        yield progress
        return
    if not progress:
        yield lambda done: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(
        TextColumn("games"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
    ) as bar:
        task = bar.add_task("games", total=total)
        yield lambda done: bar.update(task, completed=done)


def _parse_entrants(text: str) -> dict[str, str] | list[str]:
    """``easy,hard,ppo=model:runs/x.zip`` -> specs (a dict when any is named); a list with
    an empty entry is refused."""
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise ValueError(f"got {text!r}; allowed: a comma-separated list with no empty entries")
    if any("=" in item for item in items):
        named: dict[str, str] = {}
        for item in items:
            name, _, spec = item.partition("=") if "=" in item else ("", "", item)
            if not spec.strip():
                raise ValueError(f"got {item!r}; allowed: NAME=SPEC with a spec")
            name = name.strip() or _default_name(spec.strip())
            if name in named:
                raise ValueError(f"the name {name!r} is given twice")
            named[name] = spec.strip()
        return named
    return items


def main(argv: list[str] | None = None) -> TournamentResult:
    parser = argparse.ArgumentParser(
        prog="python -m baselines.tournament",
        description="Play a tournament between CPUs and models with rotated seats and "
        "duplicate deals; print the standings and write JSON, CSV and a chart.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    from gofish_env.cpus import CPU_LEVELS

    parser.add_argument("--players", type=int, default=4, help="seats at each table, 2..6")
    parser.add_argument(
        "--cpus",
        default=",".join(CPU_LEVELS),
        help="comma list of entrants: CPU levels and/or model:PATH.zip (a saved agent, "
        "which must have been trained for this table), each optionally NAME=SPEC",
    )
    parser.add_argument(
        "--games", type=int, default=200, help="at least this many games (rounded up)"
    )
    parser.add_argument("--rules", default="table", help=f"preset: {', '.join(Rules.PRESETS)}")
    parser.add_argument("--seed", type=int, default=0, help="seed of every deal and player")
    parser.add_argument("--workers", type=int, default=1, help="processes to play in")
    parser.add_argument(
        "--max-asks", type=int, default=DEFAULT_MAX_ASKS, help="cut a game off after this many"
    )
    parser.add_argument(
        "--out",
        default="results/tournament",
        help="folder for the result files ('' for none); files of the same names already "
        "there are overwritten",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    # Every argument is checked before the first game.
    rules = rules_or_error(parser, args.rules, args.players)
    if rules.match_target:
        parser.error("--rules: match play (match_target) is not supported; play single games")
    check_count(parser, "--games", args.games)
    check_count(parser, "--workers", args.workers)
    check_count(parser, "--max-asks", args.max_asks)
    try:
        entrants = _parse_entrants(args.cpus)
        make_entrants(entrants, rules)
    except ValueError as error:
        parser.error(f"--cpus: {error}")
    if args.out:
        check_output(parser, "--out", args.out, directory=True)

    result = run_tournament(
        entrants,
        players=args.players,
        games=args.games,
        rules=rules,
        seed=args.seed,
        workers=args.workers,
        max_asks=args.max_asks,
        progress=not args.no_progress,
    )
    print(result.table())
    if args.out:
        had_results = (Path(args.out) / "results.json").exists()
        paths = result.write(args.out)
        verb = "Replaced the earlier results:" if had_results else "Wrote"
        print(f"\n{verb} " + ", ".join(str(path) for path in paths.values()))
    return result


if __name__ == "__main__":
    main()
