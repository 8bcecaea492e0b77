"""The CPU ladder. Every CPU sees only a ``PlayerView``: its own hand and the public history.

A CPU is seeded and deterministic for a given seed and view sequence. ``choose(view)``
returns one of ``view.legal_asks``: (target seat, wanted), ``wanted`` a rank index or, with
exact-card asks, a card index. ``reset(seed)`` is called at each new game and forgets any
plan.

Levels, weakest first (``CPU_LEVELS``; measured in ``docs/baselines.md``):

- ``random``: a uniformly random legal ask.
- ``easy``: stays with one request (same seat, same rank) while the pool has cards,
  whatever the answer; listens only to the requests made to it; varies its requests once
  the pool is empty.
- ``normal``: the recent public asks and answers: asks a seat for a rank that seat recently
  asked for, avoids a seat that just said go fish to (or gave away) that rank.
- ``hard``: the whole public history (the knowledge bounds) and its own counts: a seat
  proved to hold a rank first, otherwise the rank it holds most of, never a seat that
  cannot hold it while another may.
- ``expert``: sharper bounds (the pool's capacity), what the others' misses say if they
  take sure hits, the chance each seat holds each rank (the unseen cards spread over the
  unexplained cards and the pool within the bounds), catches and their tiebreak points first.
- ``master`` (``gofish_env.master``, docs/search.md): ``expert``, overridden near the end
  of the pool where a search over hidden worlds sampled from the view (rollouts by
  compiled ``hard`` CPUs) shows another ask does better beyond its noise.

Exact-card asks (``rules.ask_for == "card"``): every level picks a (target, rank) and then
names a card of that rank; ``hard`` and ``expert`` name one the target is proved to hold,
else one it is not proved to lack (``best_card``: ``PlayerView.card_holds`` /
``card_lacks``). ``expert`` also weighs the card when it picks: a hit is sure only where a
card it may name is proved to be there (``ExpertCPU.card_scores``).
"""

from __future__ import annotations

import inspect
import random
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence

import numpy as np

from gofish_env.cards import MAX_RANK_POINTS, RANK_POINTS
from gofish_env.knowledge import AskRecord, PlayerView
from gofish_env.rules import seeded_random

LegalAsk = tuple[int, int]  # (target seat, wanted): one of PlayerView.legal_asks


class CPU(ABC):
    """Base class: a named, seeded decision rule over a ``PlayerView``."""

    name = "cpu"

    def __init__(self, seed: int | None = None):
        self.rng = seeded_random(seed)
        self._forget()

    def reset(self, seed: int | None = None) -> None:
        """Start a new game (forget any plan), reseeding if a seed is given."""
        if seed is not None:
            self.rng = seeded_random(seed)
        self._forget()

    def _forget(self) -> None:  # noqa: B027 (most levels remember nothing)
        """Drop what this CPU remembers of the game: plans, what it has read of the asks."""

    @abstractmethod
    def choose(self, view: PlayerView) -> LegalAsk:
        """One of ``view.legal_asks``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


# ---------------------------------------------------------------------------- shared helpers


def rank_of(view: PlayerView, wanted: int) -> int:
    """The rank an ask names (a card index under exact-card asks)."""
    return wanted // 4 if view.rules.ask_for == "card" else wanted


def group_asks(view: PlayerView) -> dict[tuple[int, int], list[LegalAsk]]:
    """Legal asks grouped by (target, rank): one ask each, or the cards that may be named."""
    if view.rules.ask_for != "card":  # an ask is its own (target, rank)
        return {ask: [ask] for ask in view.legal_asks}
    groups: dict[tuple[int, int], list[LegalAsk]] = {}
    for ask in view.legal_asks:
        target, wanted = ask
        key = (target, wanted // 4)
        groups.setdefault(key, []).append(ask)
    return groups


def no_legal_ask(view: PlayerView) -> str:
    """Why ``view`` offers its seat no ask to choose, for the error a CPU raises."""
    if view.current_player is None:
        why = "the game is over"
    elif view.current_player != view.seat:
        why = f"seat {view.current_player} is to move"
    else:
        why = "its view lists no legal ask"
    return f"seat {view.seat} has no ask to choose: {why}"


def points_can_decide(rules) -> bool:
    """Whether tiebreak points can decide a game: ties on catches are broken by points, and
    catches can tie. With two players and an odd number of catches they tie only in a game
    that ends before every catch is laid: ``game_end`` other than ``"last_catch"``, or an
    empty hand that never draws (then nobody may be left to ask)."""
    if rules.winner != "catches_then_points":
        return False
    if rules.players > 2 or rules.total_sets % 2 == 0:
        return True
    return rules.game_end != "last_catch" or rules.empty_hand_draw == "never"


def card_from_hand(rng: random.Random, counts: Sequence[int], ranks: Sequence[int]) -> int:
    """A rank among ``ranks`` picked as a card drawn at random from the hand would be
    (weighted by how many of each the hand holds)."""
    weights = [counts[rank] for rank in ranks]
    if sum(weights) <= 0:
        return rng.choice(list(ranks))
    return rng.choices(list(ranks), weights=weights)[0]


def best_card(rng: random.Random, view: PlayerView, target: int, asks: list[LegalAsk]) -> LegalAsk:
    """Among the legal asks of one (target, rank) under exact-card asks, a card the target
    is proved to hold; else one it is not proved to lack; else any (at random among equals).
    """
    holds, lacks = view.card_holds[target], view.card_lacks[target]
    scores = [2 if holds[card] else 0 if lacks[card] else 1 for _, card in asks]
    top = max(scores)
    return rng.choice([ask for ask, score in zip(asks, scores, strict=True) if score == top])


# ---------------------------------------------------------------------------- the levels


class RandomCPU(CPU):
    """A uniformly random legal ask."""

    name = "random"

    def choose(self, view: PlayerView) -> LegalAsk:
        return self.rng.choice(view.legal_asks)


EASY_MEMORY = 8


class EasyCPU(CPU):
    """Stays with one request while the pool has cards.

    It picks a card from its hand and a seat at random and repeats exactly that request, "go
    fish" or not; it makes a new plan only when the request is no longer legal or has just
    been answered with cards (a hit, or the asked rank fished). The one thing it listens to
    is what it is asked: it remembers the last ``EASY_MEMORY`` requests made to it, and when
    it holds a rank a seat asked it for, it asks that seat for it. Once the pool is empty it
    varies its requests: it stays with a rank and works through the seats, not repeating a
    request until its hand changes.
    """

    name = "easy"

    def _forget(self) -> None:
        self._plan: LegalAsk | None = None
        self._asks: list[AskRecord] | None = None
        self._seen = 0
        self._asked_me: list[tuple[int, int]] = []  # (seat, rank) of requests made to it
        self._tried: set[LegalAsk] = set()
        self._hand: tuple[int, ...] = ()

    def _listen(self, view: PlayerView) -> None:
        asks = view.asks
        if asks is not self._asks or len(asks) < self._seen:
            self._forget()
            self._asks = asks
        for record in asks[self._seen :]:
            if record.target == view.seat:
                self._asked_me.append((record.asker, record.rank))
                del self._asked_me[:-EASY_MEMORY]
            elif record.asker == view.seat:
                heard = (record.target, record.rank)
                self._asked_me = [item for item in self._asked_me if item != heard]
        self._seen = len(asks)

    def choose(self, view: PlayerView) -> LegalAsk:
        self._listen(view)
        legal = view.legal_asks
        groups = group_asks(view)
        if view.pool_size:
            heard = [ask for key in self._asked_me if key in groups for ask in groups[key]]
            last = view.asks[-1] if view.asks else None
            answered = last is not None and last.asker == view.seat and (last.hit or last.shown)
            if heard and self._plan not in heard:
                self._plan = self.rng.choice(heard)
            elif self._plan not in legal or answered:
                ranks = sorted({rank for _, rank in groups})
                rank = card_from_hand(self.rng, view.own_counts, ranks)
                asks = [ask for (_, r), group in groups.items() if r == rank for ask in group]
                self._plan = self.rng.choice(asks)
            return self._plan
        hand = tuple(view.own_counts)
        if hand != self._hand:
            self._tried, self._hand = set(), hand
        fresh = [ask for ask in legal if ask not in self._tried]
        if not fresh:  # every request tried: start over, but not with the one just made
            self._tried = set()
            fresh = [ask for ask in legal if ask != self._plan] or list(legal)
        if self._plan is not None:
            rank = rank_of(view, self._plan[1])
            same = [ask for ask in fresh if rank_of(view, ask[1]) == rank]
            fresh = same or fresh
        self._plan = self.rng.choice(fresh)
        self._tried.add(self._plan)
        return self._plan


RECENT_ASKS = 48  # about half a four-player game, most of a two-player one


class NormalCPU(CPU):
    """Uses the recent public asks and answers (the last ``RECENT_ASKS`` asks at the table):
    asks a seat for a rank that seat recently asked for (or was handed), and avoids asking a
    seat for a rank it recently said go fish to or gave away. Otherwise it picks a card from
    its hand and a seat not ruled out for that rank."""

    name = "normal"

    def _forget(self) -> None:
        self._asks: list[AskRecord] | None = None
        self._seen = 0
        # (seat, rank) -> (index of the newest ask that told, whether the seat holds it)
        self._told: dict[tuple[int, int], tuple[int, bool]] = {}

    def _listen(self, view: PlayerView) -> None:
        """Folds in the asks made since the last call (each is complete by then)."""
        asks = view.asks
        if asks is not self._asks or len(asks) < self._seen:
            self._forget()
            self._asks = asks
        card_asks = view.rules.ask_for == "card"
        told = self._told
        for index in range(self._seen, len(asks)):
            record = asks[index]
            told[(record.asker, record.rank)] = (index, True)
            if not card_asks or not record.hit:
                # With exact-card asks a hit takes one card: the seat may hold more.
                told[(record.target, record.rank)] = (index, False)
        self._seen = len(asks)

    def holds(self, view: PlayerView, keys) -> dict[tuple[int, int], bool]:
        """For each (seat, rank) in ``keys`` that the recent asks tell about, whether the
        seat holds the rank (the newest ask that tells decides)."""
        self._listen(view)
        recent = len(view.asks) - RECENT_ASKS  # asks before this index are forgotten
        holds: dict[tuple[int, int], bool] = {}
        for key in keys:
            told = self._told.get(key)
            if told is not None and told[0] >= recent:
                holds[key] = told[1]
        return holds

    def choose(self, view: PlayerView) -> LegalAsk:
        groups = group_asks(view)
        holds = self.holds(view, groups)
        wanted = [key for key in groups if holds.get(key)]
        if wanted:
            return self.rng.choice(groups[self.rng.choice(wanted)])
        ranks = sorted({rank for _, rank in groups})
        while ranks:
            rank = card_from_hand(self.rng, view.own_counts, ranks)
            open_keys = [key for key in groups if key[1] == rank and holds.get(key) is None]
            if open_keys:
                return self.rng.choice(groups[self.rng.choice(open_keys)])
            ranks.remove(rank)
        return self.rng.choice(view.legal_asks)


class HardCPU(CPU):
    """Uses the whole public history through the knowledge bounds, and its own counts.

    First a seat proved to hold a rank it holds (``least > 0``), the rank it holds most of
    first (a catch first of all); otherwise the rank it holds most of, asking the seat that
    can hold the most of it (never one proved to hold none while another may hold some)."""

    name = "hard"

    def choose(self, view: PlayerView) -> LegalAsk:
        groups = group_asks(view)
        least, most = view.least, view.most
        own = view.own_counts
        sizes = view.hand_sizes
        best: list[tuple[int, int]] = []
        best_score: tuple | None = None
        for key in groups:
            target, rank = key
            proved = int(least[target, rank])
            possible = int(most[target, rank])
            if proved:
                score: tuple = (2, own[rank] + proved, own[rank], 0)
            elif possible:
                score = (1, own[rank], possible, sizes[target])
            else:
                score = (0, own[rank], 0, sizes[target])
            if best_score is None or score > best_score:
                best, best_score = [key], score
            elif score == best_score:
                best.append(key)
        key = self.rng.choice(best)
        if view.rules.ask_for == "card":
            return best_card(self.rng, view, key[0], groups[key])
        return groups[key][0]


SURE_HIT = 100.0  # expert score offsets: a sure hit, one sure if the others take sure hits,
LIKELY_HIT = 50.0  # a sure catch, a seat that may hold it
SURE_CATCH = 10.0
MAY_HIT = 5.0


class ExpertCPU(CPU):
    """The strongest CPU here, from public information only.

    - Exact bounds: ``view.least``/``view.most`` from the knowledge module (which also uses
      the pool's capacity, proving holdings before the pool is empty).
    - What the others' misses say: a seat that takes sure hits and misses while another
      seat is proved to hold a rank held none of it (``view.least_if_sure_hits`` /
      ``most_if_sure_hits``; a seat seen to play otherwise is assumed nothing of). The
      chances and the sure hits below use these bounds; a hit they make sure comes after
      the hits the history proves, so the expert itself never passes up a sure hit.
    - The chance each seat holds each rank (``hit_chances``): each opponent holds what the
      bounds prove plus unexplained cards; those and the pool are filled from the unseen
      cards not yet accounted for by iterative proportional fitting, where a seat that said
      go fish to a rank is eligible for it only with the cards it has drawn since (``most``).
      A seat's count of a rank is then its proved count plus a binomial.
    - A sure hit first (the turn goes on), a catch first of all, the higher-scoring catch
      first when catches can tie (tiebreak points).
    - Otherwise the rank it holds most of (closest to a catch, and the rank it has most
      likely asked for already, so the ask reveals least), asked of the seat most likely to
      hold it; among ranks held equally, the likelier hit (plus, when catches can tie, a
      little for the higher rank).
    - The end of the pool with one other hand left: the seat to move when the pool runs
      out sweeps every shared rank (each ask then hits), and a turn only passes on a plain
      miss (no hit, and the fished card not the rank asked for). On a miss every unseen
      card of the rank is in the pool, so it is shown with chance unseen / pool: the plain
      miss chance is weighed more the fewer cards are left (``ENDGAME_WEIGHT``).

    Measured and left out (``docs/baselines.md``): a one-step expected-value score (catch
    value, keeping the turn, holding value, an exposure cost for what an ask reveals) lost
    to this ordering against ``hard``; asking the rank held most of is what wins the race
    for the last card of a rank.
    """

    name = "expert"

    HIT_WEIGHT = 1.0  # likelier hits among ranks held equally (less than one card's worth)
    TIEBREAK_WEIGHT = 0.01  # per tiebreak point / 14, only when catches can tie
    ENDGAME_WEIGHT = 20.0  # cost of a plain miss with one card left in the pool...
    ENDGAME_DECAY = 0.6  # ...times this for each further card
    FIT_ROUNDS = 8

    def spread(
        self, view: PlayerView, low: np.ndarray, high: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(extra, pool): the expected unexplained cards of each rank at each seat (beyond
        ``low``; zero for this seat) and in the pool."""
        me = view.seat
        low = low.astype(np.float64)
        cap = high.astype(np.float64) - low
        low[me] = 0.0
        cap[me] = 0.0
        sizes = np.asarray(view.hand_sizes, dtype=np.float64)
        slots = np.maximum(sizes - low.sum(axis=1), 0.0)
        slots[me] = 0.0
        free = np.maximum(view.unseen - low.sum(axis=0), 0.0)
        rows = np.append(slots, float(view.pool_size))
        caps = np.vstack([cap, free[None, :]])
        # Prior: how many of the seat's unexplained cards may be of the rank (a seat that said
        # go fish to it and has drawn d cards since has only those d); the pool's every card.
        eligible = np.vstack([np.minimum(cap, slots[:, None]), np.full((1, len(free)), rows[-1])])
        fill = eligible * (free > 0)[None, :]
        for _ in range(self.FIT_ROUNDS):
            row_sum = fill.sum(axis=1)
            fill *= np.divide(rows, row_sum, out=np.zeros_like(rows), where=row_sum > 0)[:, None]
            col_sum = fill.sum(axis=0)
            fill *= np.divide(free, col_sum, out=np.zeros_like(free), where=col_sum > 0)[None, :]
            np.minimum(fill, caps, out=fill)
        return fill[:-1], fill[-1]

    def hit_chances(self, view: PlayerView, low: np.ndarray, high: np.ndarray) -> np.ndarray:
        """chance[s, r] that seat s holds at least one card of rank r (0 for this seat)."""
        extra, _ = self.spread(view, low, high)
        free = np.maximum(view.unseen - np.delete(low, view.seat, axis=0).sum(axis=0), 0.0)
        share = np.divide(extra, free[None, :], out=np.zeros_like(extra), where=free[None, :] > 0)
        chance = 1.0 - (1.0 - np.clip(share, 0.0, 1.0)) ** free[None, :]
        chance = np.where(low > 0, 1.0, np.where(high > 0, chance, 0.0))
        chance[view.seat] = 0.0
        return chance

    @classmethod
    def tiebreak_weight(cls, rules) -> float:
        """The score of one tiebreak point (0 where points cannot decide a game)."""
        return cls.TIEBREAK_WEIGHT / MAX_RANK_POINTS if points_can_decide(rules) else 0.0

    @staticmethod
    def weighs_endgame(rules) -> bool:
        """Whether the rules give the race at the end of the pool ``_endgame_weight``
        prices: rank asks, a fished rank asks again, the game ends at the last catch."""
        return (
            rules.ask_for == "rank"
            and rules.fished_rank_asks_again
            and rules.game_end == "last_catch"
        )

    @classmethod
    def endgame_race(cls, rules, hand_sizes, seat: int) -> bool:
        """Whether the race ``_endgame_weight`` prices can be on for ``seat`` (given cards
        left in the pool): the rules have it and exactly one other hand holds cards."""
        others = sum(1 for other, size in enumerate(hand_sizes) if size and other != seat)
        return cls.weighs_endgame(rules) and others == 1

    def _endgame_weight(self, view: PlayerView) -> float:
        """How much a plain miss (no hit, asked rank not fished) costs near the end of the
        pool when only one other seat holds cards: whoever starts a turn with the pool nearly
        empty can often chain sure hits and shown draws to its last card, then sweep every
        rank both hands share (every ask hits once the pool is empty). Zero otherwise."""
        pool = view.pool_size
        if not pool or not self.endgame_race(view.rules, view.hand_sizes, view.seat):
            return 0.0
        return self.ENDGAME_WEIGHT * self.ENDGAME_DECAY ** (pool - 1)

    def choose(self, view: PlayerView) -> LegalAsk:
        groups = group_asks(view)
        card_asks = view.rules.ask_for == "card"
        if len(groups) == 1 and not card_asks:
            return next(iter(groups.values()))[0]
        return self.choose_by(view, groups, self.scores(view, groups))

    def choose_by(
        self,
        view: PlayerView,
        groups: dict[tuple[int, int], list[LegalAsk]],
        scores: dict[tuple[int, int], float],
    ) -> LegalAsk:
        """``choose``'s ask given the ``scores`` of every group: one of the highest, ties
        broken by this CPU's generator."""
        if not scores:
            raise ValueError(no_legal_ask(view))
        card_asks = view.rules.ask_for == "card"
        top = max(scores.values())
        key = self.rng.choice([k for k, score in scores.items() if score > top - 1e-9])
        if card_asks:
            return best_card(self.rng, view, key[0], groups[key])
        return groups[key][0]

    def scores(
        self, view: PlayerView, keys: Iterable[tuple[int, int]] | None = None
    ) -> dict[tuple[int, int], float]:
        """The score of each (target, rank) in ``keys`` (default: every legal one):
        ``choose`` asks one of the highest."""
        rules = view.rules
        if rules.ask_for == "card":
            return self.card_scores(view, keys)
        sure = view.least
        low, high = view.least_if_sure_hits, view.most_if_sure_hits
        chance = self.hit_chances(view, low, high)
        own = view.own_counts
        set_size = rules.set_size
        tiebreak = self.tiebreak_weight(rules)

        endgame = self._endgame_weight(view)
        unseen = view.unseen
        pool = view.pool_size

        def score(key: tuple[int, int]) -> float:
            target, rank = key
            held = own[rank]
            proved = int(low[target, rank])
            if proved:  # a sure hit: the turn goes on, so those come first
                completes = held + proved >= set_size
                bonus = completes * (SURE_CATCH + RANK_POINTS[rank] * tiebreak)
                # A hit sure only if the others take sure hits comes after the proved ones,
                # so that this CPU itself never passes up a sure hit.
                tier = SURE_HIT if sure[target, rank] else LIKELY_HIT
                return tier + bonus + held + proved
            chance_hit = float(chance[target, rank])
            value = held + self.HIT_WEIGHT * chance_hit + RANK_POINTS[rank] * tiebreak
            if high[target, rank] > 0:
                value += MAY_HIT
            if endgame:
                # On a miss every unseen card of the rank is in the pool: shown with u/pool.
                plain_miss = (1.0 - chance_hit) * max(0.0, 1.0 - unseen[rank] / pool)
                value -= endgame * plain_miss
            return value

        return {key: score(key) for key in (group_asks(view) if keys is None else keys)}

    def card_scores(
        self, view: PlayerView, keys: Iterable[tuple[int, int]] | None = None
    ) -> dict[tuple[int, int], float]:
        """``scores`` under exact-card asks, where a hit needs the right card: sure only
        where the target is proved to hold a card of the rank this seat may name
        (``view.card_holds``); otherwise the chance that a card it may hold is there, the
        fitted count of the rank at the target (``spread``, beyond its proved cards) shared
        among the cards of the rank not proved lacked there."""
        groups = group_asks(view)
        low, high = view.least_if_sure_hits, view.most_if_sure_hits
        extra, _ = self.spread(view, low, high)
        holds, lacks = view.card_holds, view.card_lacks
        own = view.own_counts
        set_size = view.rules.set_size
        tiebreak = self.tiebreak_weight(view.rules)
        cards = holds.shape[1]

        def score(key: tuple[int, int]) -> float:
            target, rank = key
            held = own[rank]
            of_rank = range(4 * rank, min(4 * rank + 4, cards))
            known = int(sum(holds[target, card] for card in of_rank))
            if any(holds[target, card] for _, card in groups[key]):
                completes = held + known >= set_size
                bonus = completes * (SURE_CATCH + RANK_POINTS[rank] * tiebreak)
                return SURE_HIT + bonus + held + known
            open_cards = sum(
                1 for card in of_rank if not (holds[target, card] or lacks[target, card])
            )
            chance = 0.0
            if open_cards:
                expected = low[target, rank] + extra[target, rank] - known
                chance = min(max(expected / open_cards, 0.0), 1.0)
            value = held + self.HIT_WEIGHT * chance + RANK_POINTS[rank] * tiebreak
            if open_cards:
                value += MAY_HIT
            return value

        return {key: score(key) for key in (groups if keys is None else keys)}


CPU_LEVELS: dict[str, type[CPU]] = {
    "random": RandomCPU,
    "easy": EasyCPU,
    "normal": NormalCPU,
    "hard": HardCPU,
    "expert": ExpertCPU,
}

# The levels the batched engine also plays, compiled (gofish_env.vector.cpus), named here so
# that choosing an engine does not load the kernels.
COMPILED_LEVELS = ("random", "easy", "normal", "hard", "expert")

# The searching level lives in its own module (it builds on ExpertCPU above) and adds
# itself to CPU_LEVELS, whichever of the two modules is imported first.
import gofish_env.master  # noqa: E402, F401


def make_cpu(name: str, seed: int | None = None, **options) -> CPU:
    """A CPU by level name; ``options`` go to its constructor (``master``'s settings, for
    example ``rollouts="hard"``)."""
    if name not in CPU_LEVELS:
        raise ValueError(f"cpu: unknown level {name!r}; allowed: {', '.join(CPU_LEVELS)}")
    if options:  # checked apart: a TypeError inside the constructor is not a wrong option
        signature = inspect.signature(CPU_LEVELS[name])
        try:
            signature.bind(seed, **options)
        except TypeError as error:
            allowed = [option for option in signature.parameters if option != "seed"]
            raise ValueError(
                f"cpu: {name!r} takes no option among {sorted(options)}; allowed: "
                f"{', '.join(allowed) or 'none'}"
            ) from error
    return CPU_LEVELS[name](seed, **options)
