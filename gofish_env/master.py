"""The ``master`` CPU: determinized search over hidden worlds sampled from its view.

It plays as ``expert`` until the pool holds ``pool_limit`` cards or fewer (by default 12 at
two players, 16 at three and four, 8 at five and six: ``default_pool_limit``): near the
end of the pool few cards stay hidden, the sampled worlds tell the candidates apart, and
that is where a search beats ``expert`` (earlier, its overrides were noise and it was
level with ``expert``: docs/baselines.md). From then on, at each decision with a real choice,
``master``:

1. takes ``expert``'s choice and the next best asks (one per target and rank) by its
   scores, ``candidates`` in all; a sure hit proved by the public history is asked at
   once (it keeps the turn whatever the hidden cards are);
2. draws ``simulations // candidates`` worlds (at least one; by default 4096 simulations
   at two players and 1024 at the other tables: ``default_simulations``) from its
   ``PlayerView`` with the world sampler (``gofish_env.worlds``: consistent with the
   public log and its own hand, read as the play of seats that take sure hits and ask for
   the rank they hold most of: ``assume_sure_hits``, ``most_held``);
3. in every world makes every candidate ask and has compiled CPUs (``rollouts``; by
   default ``hard`` at two players; at three or more ``hard`` while the pool holds more
   than 8 cards and ``expert`` from 8: ``default_rollouts``; ``others_rollouts``, where
   named, plays the other seats) play all seats to the end,
   every rollout in one call of the vector engine (``gofish_env.rollouts``); the same
   worlds and the same CPU seeds serve every candidate (common random numbers), so the
   candidates differ by their ask only;
4. values each rollout by its share of the win, plus ``CATCH_WEIGHT`` times its catches
   ahead of the best other seat's (a smoother signal than the win alone, worth less than
   any win), and asks the candidate with the best mean only if it beats ``expert``'s
   choice by more than ``margin`` standard errors of the paired difference; otherwise it
   asks what ``expert`` would (the search overrides the heuristic only on evidence; with
   one world a candidate there is no standard error, and it asks ``expert``'s choice).

Where the sampler draws no world (``SamplerError``), that decision is ``expert``'s
(``fallbacks_made`` counts them): a failed search never stops the game.

Under exact-card asks and in matches it plays as ``expert`` (the sampler reads rank asks,
the vector engine plays single games). Everything it uses is in the ``PlayerView``: its
own hand and the public log. The budget is a number of simulations (rollouts), not a
time, so the same seed gives the same choices on a busy machine. ``docs/baselines.md``
measures it against ``expert``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from gofish_env.cpus import COMPILED_LEVELS, CPU, CPU_LEVELS, ExpertCPU, LegalAsk, group_asks
from gofish_env.knowledge import PlayerView
from gofish_env.rules import is_integer, is_number

BY_TABLE = "table"  # a setting taken from the number of players
DEFAULT_SIMULATIONS = BY_TABLE  # rollouts a search plays, over all its candidates
SIMULATIONS = {2: 4096}  # by players; OTHER_SIMULATIONS at the other tables
OTHER_SIMULATIONS = 1024  # a searching decision in about 39 ms at 4 players
DEFAULT_CANDIDATES = 6
CATCH_WEIGHT = 0.05
DEFAULT_MARGIN = 1.0  # standard errors a candidate must gain over expert's choice
DEFAULT_POOL_LIMIT = BY_TABLE  # search once the pool holds this many cards or fewer
DEFAULT_ROLLOUTS = BY_TABLE  # the compiled level that plays every seat of a rollout
DEFAULT_OTHERS_ROLLOUTS = None  # a level for the other seats only (None: ``rollouts``'s)
DEFAULT_ASSUME_SURE_HITS = True  # sample worlds where the others took every sure hit
DEFAULT_MOST_HELD = 8.0  # weight against worlds where the others asked a rank they held fewer of
HARD_ROLLOUTS_ABOVE = 8  # from 3 players, hard rollouts while the pool holds more cards
POOL_LIMITS = {2: 12, 3: 16, 4: 16}  # by players; OTHER_POOL_LIMIT at the other tables
OTHER_POOL_LIMIT = 8
# The tables above in words, for help texts.
SIMULATIONS_TABLE = (
    ", ".join(f"{count} at {players} players" for players, count in SIMULATIONS.items())
    + f", {OTHER_SIMULATIONS} otherwise"
)
POOL_LIMIT_TABLE = (
    ", ".join(f"{limit} at {players} players" for players, limit in POOL_LIMITS.items())
    + f", {OTHER_POOL_LIMIT} otherwise"
)
ROLLOUTS_TABLE = (
    f"hard at 2 players, and at 3 or more while the pool holds more than {HARD_ROLLOUTS_ABOVE} "
    "cards; expert otherwise"
)
OVERRIDE_LEAD = 1.0  # how far the searched ask is put above expert's best in ``scores``


def _whole(value, least: int) -> bool:
    """Whether ``value`` is an integer (Python's or NumPy's, not a bool) of at least
    ``least``."""
    return is_integer(value) and value >= least


def _position(view: PlayerView) -> tuple:
    """What tells one decision of a game from another: the table's knowledge (the object
    itself, held, so that its id cannot pass to another game's), the seat, its hand, and how
    far the public log has gone."""
    return (view.knowledge, view.seat, view.knowledge.num_events, tuple(view.own_counts))


def _same_position(kept: tuple, view: PlayerView) -> bool:
    """Whether ``kept`` (a ``_position``) is the position ``view`` shows."""
    return kept[0] is view.knowledge and kept[1:] == _position(view)[1:]


def default_rollouts(players: int, pool_size: int) -> str:
    """The rollout level where none is named, at a search with ``pool_size`` cards in the
    pool. ``hard`` at two players, where ``expert`` gains nothing. At three players or more
    ``expert`` once the pool holds ``HARD_ROLLOUTS_ABOVE`` cards or fewer (paired with
    ``hard``, +0.007 over 6,000 deals at four and +0.015 over 2,000 at three, for about
    twice the time a search) and ``hard`` before: the earlier searches (from 16 cards at
    three and four players) are played out by ``hard``, whose rollouts cost about a third
    as much (docs/baselines.md). At five and six players ``master`` searches from 8 cards
    by default, so ``hard`` plays only under a wider ``pool_limit``."""
    if players == 2 or pool_size > HARD_ROLLOUTS_ABOVE:
        return "hard"
    return "expert"


def default_simulations(players: int) -> int:
    """The simulations a search plays where none are named. 4096 at two players: paired
    with 1024, +0.006 +/- 0.005 over 13,000 deals, at 74 ms a searching decision
    (docs/baselines.md). 1024 at three players or more: at four players 2048 would
    already cost 76 ms, over the 50 ms a decision that table is held to."""
    return SIMULATIONS.get(players, OTHER_SIMULATIONS)


def default_pool_limit(players: int) -> int:
    """The pool size from which ``master`` searches where none is named. 12 at two players:
    paired with 8, +0.011 +/- 0.006 over 8,000 deals, at 19 ms a searching decision. 16 at
    four, with ``hard`` rollouts while the pool holds more than 8 (``default_rollouts``):
    paired with 8, +0.011 +/- 0.006 over 6,000 deals, at 39 ms a searching decision. 16
    at three, the same way: paired with 8, +0.010 +/- 0.008 over 6,000 deals, at 29 ms a
    searching decision. 8 at five players (16 there measured +0.001 +/- 0.008 over 2,000
    deals, not adopted) and six (there the default wins 0.189 against five expert CPUs,
    fair 0.167, over 1,000 deals; docs/baselines.md)."""
    return POOL_LIMITS.get(players, OTHER_POOL_LIMIT)


def searches(rules) -> bool:
    """Whether ``master`` searches under these rules: rank asks (what the sampler reads)
    and single games (what the vector engine plays); otherwise it plays as ``expert``."""
    return rules.ask_for == "rank" and not rules.match_target


class MasterCPU(CPU):
    """Determinized search over sampled worlds (see the module docstring)."""

    name = "master"

    def __init__(
        self,
        seed: int | None = None,
        simulations: int | str = DEFAULT_SIMULATIONS,
        candidates: int = DEFAULT_CANDIDATES,
        margin: float = DEFAULT_MARGIN,
        pool_limit: int | str | None = DEFAULT_POOL_LIMIT,
        rollouts: str | None = DEFAULT_ROLLOUTS,
        assume_sure_hits: bool = DEFAULT_ASSUME_SURE_HITS,
        most_held: float = DEFAULT_MOST_HELD,
        others_rollouts: str | None = DEFAULT_OTHERS_ROLLOUTS,
    ):
        from gofish_env.worlds import check_play_model

        if rollouts not in (None, BY_TABLE, *COMPILED_LEVELS):
            raise ValueError(
                f"rollouts: got {rollouts!r}; allowed: {', '.join(COMPILED_LEVELS)}, or "
                f"{BY_TABLE!r} or None (by table: default_rollouts)"
            )
        self.rollouts_named = None if rollouts == BY_TABLE else rollouts
        if others_rollouts not in (None, *COMPILED_LEVELS):
            raise ValueError(
                f"others_rollouts: got {others_rollouts!r}; allowed: {', '.join(COMPILED_LEVELS)}, "
                f"or None (the other seats play at the rollouts' level)"
            )
        self.others_rollouts = others_rollouts
        if simulations != BY_TABLE and not _whole(simulations, 1):
            raise ValueError(
                f"simulations: got {simulations!r}; allowed: an integer >= 1, or "
                f"{BY_TABLE!r} (by table: default_simulations)"
            )
        if not _whole(candidates, 2):
            raise ValueError(f"candidates: got {candidates!r}; allowed: an integer >= 2")
        self.simulations = simulations if simulations == BY_TABLE else int(simulations)
        self.candidates = int(candidates)
        if not is_number(margin) or not margin >= 0:
            raise ValueError(f"margin: got {margin!r}; allowed: a number >= 0")
        self.margin = float(margin)
        if pool_limit not in (None, BY_TABLE) and not _whole(pool_limit, 0):
            raise ValueError(
                f"pool_limit: got {pool_limit!r}; allowed: an integer >= 0, None (search at "
                f"every decision), or {BY_TABLE!r} (by table: default_pool_limit)"
            )
        if _whole(pool_limit, 0):
            pool_limit = int(pool_limit)
        self.pool_limit = pool_limit  # search only when the pool holds at most this many
        check_play_model(assume_sure_hits, most_held)
        self.assume_sure_hits = assume_sure_hits
        self.most_held = float(most_held)
        self.expert = ExpertCPU(seed)
        self.searches_made = 0  # decisions that ran a search (for benchmarks and tests)
        self.overrides_made = 0  # searches whose result was not expert's choice
        self.fallbacks_made = 0  # searches the sampler drew no world for: expert's choice
        self._decided = None  # (position, ask) decided by ``scores``, for the next ``choose``
        super().__init__(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.expert.reset(seed)
        self._decided = None

    def _decide(self, view: PlayerView) -> tuple[LegalAsk, dict | None]:
        """``choose``'s decision (see the module docstring), with ``expert``'s scores of
        every group (None where ``expert`` asks its only group without scoring)."""
        groups = group_asks(view)
        if len(groups) == 1 and view.rules.ask_for != "card":
            return next(iter(groups.values()))[0], None  # as ExpertCPU.choose
        scores = self.expert.scores(view, groups)
        choice = self.expert.choose_by(view, groups, scores)  # ties: expert's generator
        keys = self.search_candidates(view, groups, scores, choice)
        if keys is None:
            return choice, scores
        from gofish_env.worlds import SamplerError  # here: its kernels compile when loaded

        try:
            values = self.rollouts(view, keys)
        except SamplerError:  # no world drawn (docs/search.md): this decision is expert's
            self.fallbacks_made += 1
            return choice, scores
        pick = self.pick(values)
        if pick == 0:
            return choice, scores
        self.overrides_made += 1
        return groups[keys[pick]][0], scores

    def search_candidates(
        self, view: PlayerView, groups: dict, scores: dict, choice: LegalAsk
    ) -> list[tuple[int, int]] | None:
        """The (target, rank) asks a search compares, ``expert``'s ``choice`` first and then
        the best others by its ``scores``; None where it does not search (one group, rules
        it cannot search, before the window, or a sure hit the history proves)."""
        if len(groups) == 1 or not searches(view.rules) or not self.in_search_window(view):
            return None
        best = (choice[0], choice[1])
        if view.least[best]:  # a sure hit: it keeps the turn whatever the hidden cards are
            return None
        others = sorted((key for key in groups if key != best), key=lambda key: -scores[key])
        return [best, *others[: self.candidates - 1]]

    def choose(self, view: PlayerView) -> LegalAsk:
        decided = self._decided
        self._decided = None
        if decided is not None and _same_position(decided[0], view):
            return decided[1]  # ``scores`` has just searched this very position
        return self._decide(view)[0]

    def scores(
        self, view: PlayerView, keys: Iterable[tuple[int, int]] | None = None
    ) -> dict[tuple[int, int], float]:
        """The teacher's scores of each (target, rank) in ``keys`` (default: every legal
        one), for imitation: ``expert``'s, with the ask the search picks raised just above
        the best of them where it overrides ``expert``, so that ``choose``'s ask always
        scores highest. The decision is made here, once: the ``choose`` that follows for
        the same position asks it without searching again."""
        ask, every = self._decide(view)
        self._decided = (_position(view), ask)
        if every is None:  # one group: expert asked it without scoring
            every = self.expert.scores(view)
        scores = every if keys is None else {key: every[key] for key in keys}
        picked = (ask[0], ask[1] // 4 if view.rules.ask_for == "card" else ask[1])
        best = max(scores.values())
        if picked in scores and scores[picked] < best:
            scores[picked] = best + OVERRIDE_LEAD
        return scores

    def pick(self, values: np.ndarray) -> int:
        """The candidate to ask, from ``values`` [worlds, candidates] (expert's best first):
        the best mean, if it beats expert's choice by more than ``margin`` standard errors
        of the paired difference (the same worlds); otherwise expert's choice. One world
        measures no standard error: with fewer than two, expert's choice. A gain the same
        in every world (no spread) is more standard errors than any finite margin."""
        if len(values) < 2 or np.isinf(self.margin):
            return 0
        gain = values - values[:, :1]
        mean = gain.mean(axis=0)
        error = gain.std(axis=0, ddof=1) / np.sqrt(len(values))
        best = int(np.argmax(mean - self.margin * error))
        return best if mean[best] - self.margin * error[best] > 0 else 0

    def search_simulations(self, players: int) -> int:
        """The rollouts a search plays at a table of ``players``, over all candidates."""
        if self.simulations == BY_TABLE:
            return default_simulations(players)
        return self.simulations

    def worlds_per_candidate(self, players: int, candidates: int) -> int:
        """The worlds a search draws: its simulations shared among ``candidates`` asks, at
        least one."""
        return max(1, self.search_simulations(players) // candidates)

    def search_limit(self, players: int) -> int | None:
        """The pool size from which it searches at a table of ``players`` (None: at every
        decision)."""
        return default_pool_limit(players) if self.pool_limit == BY_TABLE else self.pool_limit

    def in_search_window(self, view: PlayerView) -> bool:
        """Whether the pool is small enough for a search at this decision."""
        limit = self.search_limit(view.rules.players)
        return limit is None or view.pool_size <= limit

    def rollout_level(self, players: int, pool_size: int) -> str:
        """The compiled level that plays the rollouts of a search at a table of ``players``
        with ``pool_size`` cards in the pool."""
        return self.rollouts_named or default_rollouts(players, pool_size)

    def rollout_levels(self, view: PlayerView) -> str | list[str]:
        """The compiled level at every seat of a search's rollouts from ``view``:
        ``rollout_level``'s, or one per seat where ``others_rollouts`` names the level of
        the seats other than the viewer's."""
        level = self.rollout_level(view.rules.players, view.pool_size)
        if self.others_rollouts is None:
            return level
        players = range(view.rules.players)
        return [level if seat == view.seat else self.others_rollouts for seat in players]

    def values(self, view: PlayerView, keys: list[tuple[int, int]]) -> np.ndarray:
        """The mean rollout value of each (target, rank) in ``keys``."""
        return self.rollouts(view, keys).mean(axis=0)

    def rollouts(self, view: PlayerView, keys: list[tuple[int, int]]) -> np.ndarray:
        """[worlds, keys]: the value of each rollout (see the module docstring)."""
        from gofish_env.worlds import WorldSampler  # here: its kernels compile when loaded

        self.searches_made += 1
        count = self.worlds_per_candidate(view.rules.players, len(keys))
        seed = self.rng.getrandbits(63)
        sampler = WorldSampler(
            view, seed=seed, assume_sure_hits=self.assume_sure_hits, most_held=self.most_held
        )
        worlds = sampler.sample(count, keep_deals=True)
        return world_values(view, worlds, keys, self.rollout_levels(view), seed)


def world_values(
    view: PlayerView, worlds, keys: list[tuple[int, int]], level, seed: int
) -> np.ndarray:
    """[worlds, keys]: the value of each rollout when ``level`` CPUs (one level, or one
    per seat) play ``worlds`` out after each ask of ``keys``: the viewer's share of the
    win plus ``CATCH_WEIGHT`` times its catches ahead of the best other seat (see the
    module docstring)."""
    from gofish_env.rollouts import rollout_values  # here: the vector engine compiles when loaded

    share, margin = rollout_values(view, worlds, keys, level, seed=seed)
    return share + CATCH_WEIGHT * margin


CPU_LEVELS["master"] = MasterCPU
