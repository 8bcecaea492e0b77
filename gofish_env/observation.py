"""The observation vector: its layout, declared once, and the encoder that fills it.

Every section is a named block of a flat float32 vector with values in [0, 1]. Seats are
relative to the viewer: index 0 is the viewer, 1 the seat to its left, and so on. The env
docstring and docs/observation.md print ``ObservationLayout.markdown()``, so the docs are
generated from this declaration and cannot drift from it. ``StateLayout`` declares the
global state (``env.state()``, every hand) the same way, from the observation's public
sections.

    python -m gofish_env.observation > docs/observation.md
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numba
import numpy as np

import gofish_env.compile_interrupts  # noqa: F401  (Ctrl-C while compiling)
from gofish_env.bounds import (
    card_bounds_into,
    opponent_bounds_into,
    sure_hit_bounds_into,
    sure_hit_scratch_size,
)
from gofish_env.events import Ask, Catch, Deal, Draw, GameOver, GoFish, Hit, Out
from gofish_env.knowledge import PlayerView, PublicKnowledge
from gofish_env.rules import Rules, is_integer

DEFAULT_HISTORY = 8


@dataclass(frozen=True)
class Section:
    name: str
    shape: tuple[int, ...]
    meaning: str
    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start


class Layout:
    """Named sections of a flat float32 vector, from rows of (name, shape, meaning)."""

    def __init__(self, declared: list[tuple[str, tuple[int, ...], str]]):
        self.sections: dict[str, Section] = {}
        start = 0
        for name, shape, meaning in declared:
            stop = start + int(np.prod(shape))
            self.sections[name] = Section(name, shape, meaning, start, stop)
            start = stop
        self.size = start

    def __getitem__(self, name: str) -> Section:
        return self.sections[name]

    def markdown(self) -> str:
        """The layout as a markdown table (index ranges are half-open)."""
        lines = [
            "| section | indices | shape | meaning |",
            "|---|---|---|---|",
        ]
        for section in self.sections.values():
            shape = " x ".join(map(str, section.shape))
            lines.append(
                f"| `{section.name}` | {section.start}..{section.stop - 1} | {shape} "
                f"| {section.meaning} |"
            )
        lines.append(f"| total | {self.size} | | |")
        return "\n".join(lines)

    def split(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """The vector cut into its named sections, each in its declared shape."""
        return {
            name: vector[s.start : s.stop].reshape(s.shape) for name, s in self.sections.items()
        }


class ObservationLayout(Layout):
    """Named sections of the observation for given rules and history length."""

    def __init__(self, rules: Rules, history: int = DEFAULT_HISTORY):
        if not is_integer(history) or history < 0:
            raise ValueError(f"history: got {history!r}; allowed: an integer >= 0")
        players, ranks, asks = rules.players, rules.ranks, rules.ask_count
        self.rules = rules
        self.history = int(history)
        self.max_held = rules.set_size - 1
        self.max_hand = sum(min(rules.copies_of(r), self.max_held) for r in range(ranks))
        self.max_points = rules.total_points
        self.max_catches_of_rank = max(rules.copies_of(r) // rules.set_size for r in range(ranks))
        ask_row = 1 + players + players + asks + 3
        # Exact-card asks only: single cards, each by its index (rank * 4 + suit; the joker
        # last); every other layout leaves these sections out.
        card_asks = rules.ask_for == "card"
        what = "card" if card_asks else "rank"
        jokers = " (the joker: jokers held / 2)" if rules.jokers else ""
        declared = [
            ("own_hand", (ranks,), f"cards of each rank in your hand / {self.max_held}"),
        ]
        if card_asks:
            declared.append(("own_cards", (asks,), f"1 for each card in your hand{jokers}"))
        declared += [
            ("hand_sizes", (players,), f"cards in each seat's hand / {self.max_hand}"),
            ("catch_counts", (players,), f"catches each seat has laid / {rules.total_sets}"),
            (
                "tiebreak_points",
                (players,),
                f"tiebreak points of each seat's catches / {self.max_points}",
            ),
            (
                "caught_ranks",
                (players, ranks),
                f"catches of each rank each seat has laid / {self.max_catches_of_rank}",
            ),
            ("out", (players,), "1 if the seat is out (no cards, empty pool)"),
        ]
        if rules.match_target:  # match play only: every other layout leaves it out
            declared.append(
                (
                    "match_scores",
                    (players,),
                    f"each seat's match score (its catches in the match's finished games; "
                    f"this game's are in catch_counts) / {rules.match_target}, the target "
                    f"(1 once reached)",
                )
            )
        declared += [
            ("to_move", (players,), "1 for the seat to move"),
            ("pool_size", (1,), f"cards in the pool / {rules.deck_size}"),
            (
                "least_held",
                (players - 1, ranks),
                f"fewest cards of each rank each opponent can hold / {self.max_held}",
            ),
            (
                "most_held",
                (players - 1, ranks),
                f"most cards of each rank each opponent can hold / {self.max_held}",
            ),
            ("known_none", (players - 1, ranks), "1 if the opponent is known to hold none"),
            (
                "least_if_sure_hits",
                (players - 1, ranks),
                f"least_held, if every seat takes a sure hit when it has one / {self.max_held}",
            ),
            (
                "most_if_sure_hits",
                (players - 1, ranks),
                f"most_held, if every seat takes a sure hit when it has one (a seat that missed "
                f"while another was proved to hold a rank held none of it) / {self.max_held}",
            ),
        ]
        if card_asks:
            declared += [
                ("cards_held", (players - 1, asks), "1 if the opponent is proved to hold the card"),
                (
                    "cards_lacked",
                    (players - 1, asks),
                    "1 if the opponent is proved to hold none of the card",
                ),
            ]
        declared += [
            (
                "recent_asks",
                (history, ask_row),
                f"last {history} asks, newest first: present, asker (one-hot over {players} "
                f"seats), target (one-hot), {what} (one-hot over {asks}), cards handed over "
                f"/ {self.max_held}, a miss (told go fish, whether or not the pool had a card to "
                "draw), fished card shown",
            ),
        ]
        super().__init__(declared)


# The observation's sections that every seat sees alike but for the order of the seats.
# The state holds them in seat 0's order, which is the absolute one (those the layout has:
# ``match_scores`` only in match play).
PUBLIC_SECTIONS = (
    "hand_sizes",
    "catch_counts",
    "tiebreak_points",
    "caught_ranks",
    "out",
    "match_scores",
    "to_move",
    "pool_size",
    "recent_asks",
)


class StateLayout(Layout):
    """Named sections of the global state (``raw_env.state()``), for critics that train
    with what the seats cannot see (centralized training, decentralized execution): every
    seat's hand and what the pool holds (not its order), then the observation's public
    sections with absolute seats. No seat's observation reads any of it."""

    def __init__(self, rules: Rules, history: int = DEFAULT_HISTORY):
        observation = ObservationLayout(rules, history)
        players, asks = rules.players, rules.ask_count
        self.rules = rules
        self.history = observation.history
        self.observation = observation
        # A card index (rank * 4 + suit; the joker 52) counts for its rank, or with exact-card
        # asks for itself; each entry is divided by its copies in the deck.
        indices = np.arange(4 * rules.ranks)
        jokers = " (the jokers: how many / 2)" if rules.jokers else ""
        if rules.ask_for == "card":
            self.entry_of = np.minimum(indices, asks - 1)
            self.copies = np.ones(asks)
            hands = f"1 for each card in each seat's hand{jokers}"
            pool = f"1 for each card in the pool{jokers}, not their order"
        else:
            self.entry_of = indices // 4
            self.copies = np.full(asks, 4.0 * rules.decks)
            hands = f"cards of each rank in each seat's hand / {4 * rules.decks}{jokers}"
            pool = f"cards of each rank in the pool / {4 * rules.decks}{jokers}, not their order"
        if rules.jokers:
            self.copies[asks - 1] = rules.copies_of(rules.ranks - 1)
        declared = [("hands", (players, asks), hands), ("pool", (asks,), pool)]
        declared += [
            (name, observation[name].shape, observation[name].meaning)
            for name in PUBLIC_SECTIONS
            if name in observation.sections and observation[name].size
        ]
        super().__init__(declared)
        # Where each card index counts: hands[seat] for seats 0..P-1, the pool as seat P
        # (the pool's section follows the hands'), and what each place is divided by.
        self.card_places = [list(seat * asks + self.entry_of) for seat in range(players + 1)]
        self.cards_size = (players + 1) * asks
        self.divisors = np.tile(self.copies, players + 1)
        # The public sections as runs of indices copied from the observation.
        self.public_runs: list[tuple[int, int, int]] = []
        for name in PUBLIC_SECTIONS:
            if name not in self.sections:
                continue
            start, stop, source = self[name].start, self[name].stop, observation[name].start
            runs = self.public_runs
            if runs and runs[-1][1] == start and runs[-1][2] + start - runs[-1][0] == source:
                runs[-1] = (runs[-1][0], stop, runs[-1][2])  # it goes on where the last ended
            else:
                runs.append((start, stop, source))


def encode_state(game, layout: StateLayout, seat0_observation: np.ndarray) -> np.ndarray:
    """The global state of ``game`` as the layout's float32 vector. Its public sections are
    copied from seat 0's observation (``seat0_observation``, whose seat order is the
    absolute one); the hands and the pool are read from the game itself."""
    state = np.empty(layout.size, np.float32)
    for start, stop, source in layout.public_runs:
        state[start:stop] = seat0_observation[source : source + stop - start]
    seats = range(layout.rules.players)
    if layout.rules.ask_for == "card":
        places = layout.card_places
        where = [places[seat][index] for seat in seats for index in game.hand_indices(seat)]
        where += [places[-1][index] for index in game.pool_indices()]
        counts = np.bincount(where, minlength=layout.cards_size)
    else:
        counts = np.array([*(game.hand_counts(seat) for seat in seats), game.pool_counts()])
    state[: layout.cards_size] = counts.ravel() / layout.divisors
    return state


def encode(view: PlayerView, layout: ObservationLayout) -> np.ndarray:
    """Encode what ``view.seat`` may know as the layout's float32 vector."""
    rules = layout.rules
    players = rules.players
    seat = view.seat
    order = [(seat + k) % players for k in range(players)]
    out = np.zeros(layout.size, dtype=np.float32)
    sec = layout.sections

    def put(name: str, values) -> None:
        section = sec[name]
        out[section.start : section.stop] = np.asarray(values, dtype=np.float32).ravel()

    put("own_hand", np.asarray(view.own_counts) / layout.max_held)
    if "own_cards" in sec:
        copies = view.knowledge.card_copies
        put("own_cards", np.asarray(view.own_card_counts) / copies)
    put("hand_sizes", [view.hand_sizes[s] / layout.max_hand for s in order])
    put("catch_counts", [len(view.catches[s]) / rules.total_sets for s in order])
    put("tiebreak_points", [view.points[s] / layout.max_points for s in order])
    caught = np.zeros((players, rules.ranks), dtype=np.float32)
    for row, s in enumerate(order):
        for rank in view.catches[s]:
            caught[row, rank] += 1
    put("caught_ranks", caught / layout.max_catches_of_rank)
    put("out", [view.out[s] for s in order])
    if "match_scores" in sec:
        target = rules.match_target
        put("match_scores", [min(view.match_scores[s] / target, 1.0) for s in order])
    put("to_move", [s == view.current_player for s in order])
    put("pool_size", [view.pool_size / rules.deck_size])
    opponents = order[1:]
    least, most = view.least[opponents], view.most[opponents]
    put("least_held", least / layout.max_held)
    put("most_held", most / layout.max_held)
    put("known_none", most == 0)
    put("least_if_sure_hits", view.least_if_sure_hits[opponents] / layout.max_held)
    put("most_if_sure_hits", view.most_if_sure_hits[opponents] / layout.max_held)
    if "cards_held" in sec:
        put("cards_held", view.card_holds[opponents])
        put("cards_lacked", view.card_lacks[opponents])
    if layout.history:
        section = sec["recent_asks"]
        width = section.shape[1]
        relative = {s: k for k, s in enumerate(order)}
        asks_base = 1 + 2 * players
        for row, record in enumerate(reversed(view.asks[-layout.history :])):
            base = section.start + row * width
            wanted = record.card if record.card is not None else record.rank
            out[base] = 1.0
            out[base + 1 + relative[record.asker]] = 1.0
            out[base + 1 + players + relative[record.target]] = 1.0
            out[base + asks_base + wanted] = 1.0
            tail = base + asks_base + rules.ask_count
            out[tail] = record.hit / layout.max_held
            out[tail + 1] = float(record.fished)
            out[tail + 2] = float(record.shown)
    return out


# The sections ``fill_observation`` writes (from ``catch_counts`` on to ``out``, or in match
# play ``match_scores``: one gather of the public buffer) and the divisors it needs, by
# name: the kernel reads the layout through this named tuple, so nothing is kept in step
# with the declaration by hand.
KERNEL_SECTIONS = (
    "own_hand",
    "own_cards",
    "hand_sizes",
    "catch_counts",
    "to_move",
    "pool_size",
    "least_held",
    "most_held",
    "known_none",
    "least_if_sure_hits",
    "most_if_sure_hits",
    "cards_held",
    "cards_lacked",
    "recent_asks",
)
KernelConstants = namedtuple(
    "KernelConstants", (*KERNEL_SECTIONS, "max_held", "max_hand", "deck_size", "ask_count")
)


class ObservationEncoder:
    """The fast path used by the environments; gives exactly what ``encode`` gives.

    Public facts that change rarely (catches, tiebreak points, caught ranks, who is out,
    in match play the match's scores) are kept event by event in one buffer laid out by
    absolute seat; the last asks are kept as integers in a ring. A seat's observation is
    then one compiled call (``fill_observation``): a gather of that buffer into the viewer's
    seat order, the hand sizes, pool and recent asks turned relative to the viewer, and the
    parts only the viewer may know: its own hand and the knowledge bounds it deduces with
    it. Nothing is re-encoded that has not changed. It reads only public events and, per
    call, the viewer's own hand.
    """

    def __init__(self, layout: ObservationLayout, public: PublicKnowledge):
        rules = layout.rules
        players, ranks, history = rules.players, rules.ranks, layout.history
        self.layout = layout
        self.public = public
        self.players = players
        self.history = history
        # Divisions as in ``encode``, so both give the same float32 values bit for bit.
        self.total_sets = rules.total_sets
        self.max_points = layout.max_points
        self.max_rank_catches = layout.max_catches_of_rank
        # The buffer holds, by absolute seat, the sections from catch_counts to out (and in
        # match play match_scores, which follows out).
        self.match_target = rules.match_target if "match_scores" in layout.sections else 0
        self.catch = np.arange(players)
        self.points = self.catch + players
        self.caught = np.arange(ranks * players).reshape(players, ranks) + 2 * players
        self.out = np.arange(players) + 2 * players + ranks * players
        self.match = self.out + players if self.match_target else self.out[:0]
        self.buffer = np.zeros(3 * players + ranks * players + self.match.size, np.float32)
        self.gather = []
        for seat in range(players):
            order = [(seat + k) % players for k in range(players)]
            parts = [self.catch, self.points, self.caught, self.out, self.match]
            parts = [part[order] if part.size else part for part in parts]
            self.gather.append(np.concatenate([part.ravel() for part in parts]))
        # Recent asks: asker, target, rank or card, cards handed over, a miss, shown.
        self.ask_ring = np.zeros((history, 6), np.int64)
        self.num_asks = 0
        sections = layout.sections
        last = "match_scores" if self.match_target else "out"
        assert sections["catch_counts"].start + self.buffer.size == sections[last].stop
        self.constants = KernelConstants(
            # -1: a section this layout leaves out (the single cards under rank asks)
            **{name: sections[name].start if name in sections else -1 for name in KERNEL_SECTIONS},
            max_held=layout.max_held,
            max_hand=layout.max_hand,
            deck_size=rules.deck_size,
            ask_count=rules.ask_count,
        )
        self.num_events = 0

    def attach(self, public: PublicKnowledge) -> None:
        """Start over for a new game whose knowledge is ``public`` (the index tables are
        kept: they depend only on the layout)."""
        self.public = public
        self._clear()
        self.num_events = 0

    def _clear(self) -> None:
        self.buffer[:] = 0.0
        self.ask_ring[:] = 0
        self.num_asks = 0

    def update(self, events) -> None:
        """Fold in new public events (after ``public`` has taken them)."""
        ring = self.ask_ring
        history = self.history
        for event in events:
            kind = type(event)
            if kind is Ask:
                if history:
                    row = ring[self.num_asks % history]
                    row[0] = event.asker
                    row[1] = event.target
                    row[2] = event.rank if event.card is None else event.card
                    row[3] = row[4] = row[5] = 0
                self.num_asks += 1
            elif not history or not self.num_asks:
                pass
            elif kind is Hit:
                ring[(self.num_asks - 1) % history, 3] = event.count
            elif kind is GoFish:
                ring[(self.num_asks - 1) % history, 4] = 1
            elif kind is Draw and event.rank is not None:
                ring[(self.num_asks - 1) % history, 5] = 1
            if kind is Catch:
                self._write_catches(event.seat)
            elif kind is Out:
                self.buffer[self.out[event.seat]] = 1.0
            elif kind is GameOver:
                self._write_match_scores()
            elif kind is Deal:
                self._clear()
                for seat in range(self.players):
                    self._write_catches(seat)
                for seat in range(self.players):
                    if not event.hand_sizes[seat] and not event.pool_size:
                        self.buffer[self.out[seat]] = 1.0
                self._write_match_scores()  # the match's, kept from game to game
        self.num_events += len(events)

    def _write_match_scores(self) -> None:
        """In match play, each seat's match score (``public.match_scores``, added up at each
        ``GameOver``) over the target, 1 at most (the last game may pass the target)."""
        target = self.match_target
        if not target:
            return
        buffer, match = self.buffer, self.match
        for seat, score in enumerate(self.public.match_scores):
            buffer[match[seat]] = min(score / target, 1.0)

    def _write_catches(self, seat: int) -> None:
        public, buffer = self.public, self.buffer
        laid = public.catches[seat]
        buffer[self.catch[seat]] = len(laid) / self.total_sets
        buffer[self.points[seat]] = public.points[seat] / self.max_points
        counts = np.bincount(laid, minlength=public.ranks) if laid else 0
        buffer[self.caught[seat]] = np.asarray(counts, np.float32) / self.max_rank_catches

    def observe(
        self, seat: int, own_counts, current_player: int | None, own_cards=None
    ) -> np.ndarray:
        """``seat``'s observation vector (a new array). ``own_cards``: with exact-card asks,
        the copies of each card index in the seat's hand (``Game.hand_card_counts``)."""
        public = self.public
        obs = np.empty(self.layout.size, np.float32)
        if public.card_asks:
            if own_cards is None:
                raise ValueError("own_cards: exact-card asks need the seat's cards by index")
            own_cards = np.asarray(own_cards, np.int64)
        else:
            own_cards = public.card_copies  # empty: no card sections
        fill_observation(
            obs,
            seat,
            -1 if current_player is None else current_player,
            np.array(own_counts, np.int64),
            np.array(public.hand_sizes, np.int64),
            public.pool_size,
            self.buffer,
            self.gather[seat],
            self.ask_ring,
            self.num_asks,
            public.least,
            public.most,
            public.sure_hit_most,
            public.unlaid,
            public.hand_cap,
            public.max_copies,
            own_cards,
            public.known_holds,
            public.known_lacks,
            public.card_laid,
            public.card_copies,
            self.constants,
        )
        return obs


@numba.njit(cache=True)
def fill_observation(
    obs,
    seat,
    current,
    own,
    sizes,
    pool,
    buffer,
    gather,
    ask_ring,
    num_asks,
    least,
    most,
    sure_hit_most,
    unlaid,
    hand_cap,
    max_copies,
    own_cards,
    known_holds,
    known_lacks,
    card_laid,
    card_copies,
    at,
):
    """Write seat ``seat``'s observation into ``obs`` (every value): seats relative to
    the viewer, its own hand, and the knowledge bounds it deduces with that hand.
    ``own_cards`` to ``card_copies``: the single cards (``PublicKnowledge``'s card facts),
    empty arrays under rank asks.
    ``current`` is the seat to move (-1: nobody); ``at`` (``KernelConstants``) names the
    sections' starts and the divisors, from the layout. Divisions are done in float64 and
    stored as float32, as ``encode`` does, so both give the same values bit for bit."""
    players, ranks = least.shape
    work = observation_work(players, ranks, card_copies.size)
    fill_observation_into(
        obs,
        seat,
        current,
        own,
        sizes,
        pool,
        buffer,
        gather,
        ask_ring,
        num_asks,
        least,
        most,
        sure_hit_most,
        unlaid,
        hand_cap,
        max_copies,
        own_cards,
        known_holds,
        known_lacks,
        card_laid,
        card_copies,
        at,
        work[0],
        work[1],
        work[2],
        work[3][:0],  # no world: the view holds none
        work[4],
        work[5],
    )


@numba.njit(cache=True)
def observation_work(players, ranks, cards):
    """The arrays ``fill_observation_into`` works in: the four bounds (least, most, and the
    same if every seat takes sure hits; opponents x ranks each), an assumed ``most``
    (players x ranks), scratch for the bounds, room for the opponents' true hands
    (opponents x ranks) where the caller has them, the four bounds again as flat rows
    (the same memory: made here once, as a reshape at every observation costs a call), and
    the single cards held and lacked (2 x opponents x ``cards``; 0 under rank asks)."""
    bounds = np.empty((4, players - 1, ranks), np.int64)
    assumed = np.empty((players, ranks), np.int64)
    scratch = np.empty(sure_hit_scratch_size(players, ranks), np.int64)
    world = np.empty((players - 1, ranks), np.int64)
    flat_bounds = bounds.reshape((4, (players - 1) * ranks))
    card_bounds = np.empty((2, players - 1, cards), np.int64)
    return bounds, assumed, scratch, world, flat_bounds, card_bounds


@numba.njit(cache=True, inline="always")
def _relative(other, seat, players):
    """``(other - seat) % players`` for seats, without a division (this runs for every
    seat number an observation writes)."""
    offset = other - seat
    return offset + players if offset < 0 else offset


@numba.njit(cache=True, _nrt=False)  # allocates nothing: see ``gofish_env.bounds``
def fill_observation_into(
    obs,
    seat,
    current,
    own,
    sizes,
    pool,
    buffer,
    gather,
    ask_ring,
    num_asks,
    least,
    most,
    sure_hit_most,
    unlaid,
    hand_cap,
    max_copies,
    own_cards,
    known_holds,
    known_lacks,
    card_laid,
    card_copies,
    at,
    bounds,
    assumed,
    scratch,
    world,
    flat_bounds,
    card_bounds,
):
    """``fill_observation`` working in the arrays of ``observation_work`` instead of arrays
    of its own (a batch of games fills thousands of observations a call). It writes every
    value, the zeros too, so ``obs`` may hold anything on entry. Fractions are
    float64 divisions stored as float32, as in ``encode``: the same bits.
    ``world``: the opponents' true hands from the viewer's left, or no rows; it only saves
    work (``bounds.sure_hit_bounds_into``), the observation is the same without it."""
    max_held, max_hand, ask_count = at.max_held, at.max_hand, at.ask_count
    own_at, hand_at, public_at = at.own_hand, at.hand_sizes, at.catch_counts
    players, ranks = least.shape
    # A product with the reciprocal rounds to the float32 of the quotient (small integers
    # over a small integer) and costs a fraction of a division.
    per_held = 1.0 / max_held
    for rank in range(ranks):
        obs[own_at + rank] = own[rank] * per_held
    for k in range(players):
        other = seat + k
        obs[hand_at + k] = sizes[other - players if other >= players else other] / max_hand
    for i in range(gather.size):
        obs[public_at + i] = buffer[gather[i]]
    for k in range(players):
        obs[at.to_move + k] = 0.0
    if current >= 0:
        obs[at.to_move + _relative(current, seat, players)] = 1.0
    obs[at.pool_size] = pool / at.deck_size
    low, high, sure_low, sure_high = bounds[0], bounds[1], bounds[2], bounds[3]
    opponent_bounds_into(
        least, most, sizes, own, unlaid, hand_cap, pool, max_copies, seat, low, high, scratch
    )
    # The sure-hit bounds are deduced before any section is written, so that the five
    # sections are written by one loop over flat views, indexed from 0 by the loop's own
    # counter (the compiled code needs no check for negative indices).
    sure_hit_bounds_into(
        least,
        most,
        sure_hit_most,
        sizes,
        own,
        unlaid,
        hand_cap,
        pool,
        max_copies,
        seat,
        low,
        high,
        sure_low,
        sure_high,
        assumed,
        scratch,
        world,
    )
    cells = (players - 1) * ranks
    least_held = obs[at.least_held : at.least_held + cells]
    most_held = obs[at.most_held : at.most_held + cells]
    known_none = obs[at.known_none : at.known_none + cells]
    least_if = obs[at.least_if_sure_hits : at.least_if_sure_hits + cells]
    most_if = obs[at.most_if_sure_hits : at.most_if_sure_hits + cells]
    for cell in range(cells):  # flat_bounds: low, high, sure_low, sure_high as flat rows
        least_held[cell] = flat_bounds[0, cell] * per_held
        most_held[cell] = flat_bounds[1, cell] * per_held
        known_none[cell] = 1.0 if flat_bounds[1, cell] == 0 else 0.0
        least_if[cell] = flat_bounds[2, cell] * per_held
        most_if[cell] = flat_bounds[3, cell] * per_held
    cards = card_copies.size
    if cards:  # exact-card asks: the single cards
        for card in range(cards):
            obs[at.own_cards + card] = own_cards[card] / card_copies[card]
        holds, lacks = card_bounds[0], card_bounds[1]
        card_bounds_into(
            known_holds,
            known_lacks,
            card_laid,
            card_copies,
            own_cards,
            low,
            high,
            pool,
            seat,
            holds,
            lacks,
        )
        for k in range(players - 1):
            for card in range(cards):
                obs[at.cards_held + k * cards + card] = holds[k, card]
                obs[at.cards_lacked + k * cards + card] = lacks[k, card]
    # Recent asks, newest first: present, asker and target (one-hot, relative), what was
    # asked for (one-hot), cards handed over, a miss, fished card shown; zeros for
    # the rows no ask has reached yet.
    history = ask_ring.shape[0]
    width = 1 + 2 * players + ask_count + 3
    recent = obs[at.recent_asks : at.recent_asks + history * width]
    for i in range(history * width):
        recent[i] = 0.0
    place = (num_asks - 1) % history if history else 0  # the newest ask's row, then back
    for j in range(min(history, num_asks)):
        entry = ask_ring[place]
        place = place - 1 if place else history - 1
        base = at.recent_asks + j * width
        obs[base] = 1.0
        obs[base + 1 + _relative(entry[0], seat, players)] = 1.0
        obs[base + 1 + players + _relative(entry[1], seat, players)] = 1.0
        obs[base + 1 + 2 * players + entry[2]] = 1.0
        tail = base + 1 + 2 * players + ask_count
        obs[tail] = entry[3] * per_held
        obs[tail + 1] = entry[4]
        obs[tail + 2] = entry[5]


def observation_doc() -> str:
    """docs/observation.md, generated from the layout declaration."""
    default = ObservationLayout(Rules(), DEFAULT_HISTORY)
    parts = [
        "# Observation layout",
        "",
        "Generated by `python -m gofish_env.observation > docs/observation.md` from the",
        "declaration in `gofish_env/observation.py`; a test checks this file matches it.",
        "",
        '`obs["observation"]` is a float32 vector with values in [0, 1]. Seats are relative to',
        "the viewer: row 0 is the viewer, row 1 the seat to its left, and so on; opponent rows",
        'start at the viewer\'s left. `obs["action_mask"]` is an int8 vector with a 1 for each',
        "legal action of the seat to move (all zeros for every other seat).",
        "",
        "The least / most / known-none bounds come from `gofish_env.knowledge`: public events",
        "plus the viewer's own hand, nothing else. The `_if_sure_hits` bounds are the same",
        "deductions under one assumption about how the others play: a seat that holds a rank",
        "another seat is proved to hold asks for it (a sure hit) before anything else, as the",
        "`hard` and `expert` CPUs do; so a seat that misses while another seat is proved to",
        "hold a rank held none of that rank (rank asks only). The assumption is dropped for a",
        "seat once public facts rule it out (it is seen holding a rank it passed up, or no",
        "deal of the unseen cards fits its assumed bounds), and in one viewer's bounds where",
        "that viewer's own hand rules it out.",
        "",
        f"## Default: table rules, 4 players, history={DEFAULT_HISTORY}",
        "",
        default.markdown(),
        "",
        "The sizes scale with the rules: P players, R ranks (13, or 14 with jokers), A asks",
        "(R, or 52/53 cards with exact-card asks) and history K give",
        "R + 3P + P*R + 2P + 1 + 5(P-1)R + K(1 + 2P + A + 3) values (P more in match play;",
        "A + 2(P-1)A more with exact-card asks, below).",
        "",
    ]
    for players in (2, 3, 5, 6):
        layout = ObservationLayout(Rules(players=players), DEFAULT_HISTORY)
        parts.append(f"- table rules, {players} players: {layout.size} values")
    for preset in ("pairs", "two_decks", "authors"):
        layout = ObservationLayout(Rules.preset(preset), DEFAULT_HISTORY)
        parts.append(f"- `{preset}` preset, 4 players: {layout.size} values")
    jokers = ObservationLayout(Rules.preset("pairs", jokers=True), DEFAULT_HISTORY)
    parts.append(f"- `pairs` with jokers, 4 players: {jokers.size} values")
    authors = ObservationLayout(Rules.preset("authors"), DEFAULT_HISTORY)
    own, held, lacked = authors["own_cards"], authors["cards_held"], authors["cards_lacked"]
    parts += [
        "",
        "## Exact-card asks",
        "",
        'With `ask_for="card"` (the `authors` preset) a seat knows which cards it holds, not',
        "only how many of each rank, and the table follows single cards. Three more sections",
        "give them, each card by its index (rank * 4 + suit, suits in the order C D H S; the",
        "joker last): `own_cards` after `own_hand`, and `cards_held` and `cards_lacked` (one",
        "row per opponent from the viewer's left) after `most_if_sure_hits`.",
        "",
        "- `own_cards`: 1 for each card in the viewer's hand (the joker's entry: jokers held / 2).",
        "- `cards_held`: 1 where the opponent is proved to hold the card.",
        "- `cards_lacked`: 1 where the opponent is proved to hold none of it.",
        "",
        "The table sees a card arrive in the asker's hand on a hit or a shown draw (and leave",
        "the target's); a miss proves the target lacks the card, and so does asking for it",
        "when a card you hold may not be asked for (`ask_for_held_card=False`; not for the",
        "joker, whose asker holds the other one). A private draw may bring any card but the",
        "one asked for (an empty-hand draw any card), so it clears what the drawer was proved",
        "to lack; unless it completed a catch at once, which shows it was of the caught rank.",
        "Catches lay their cards. The viewer then adds its own hand and its rank bounds: a",
        "card is lacked where it is laid or where the opponent can hold none of its rank",
        "(`most_held` 0). Then, until nothing more follows: a card whose copies are all placed,",
        "in the viewer's hand or proved in other hands, is lacked by the rest; with the pool",
        "empty, a card's copies not placed yet go to the opponents that may hold it when there",
        "are exactly as many of them; an opponent proved to hold as many of a rank as the",
        "cards of it it may hold holds them all, and one whose held cards of a rank reach its",
        "most holds no other. What reads 1 is always true. The rank bounds are not tightened",
        "from the single cards in turn, so a card provable by an argument that needs that can",
        "still read 0 in both sections.",
        "",
        f"- `authors` preset, 4 players: {authors.size} values; `own_cards` at "
        f"{own.start}..{own.stop - 1}, `cards_held` at {held.start}..{held.stop - 1}, "
        f"`cards_lacked` at {lacked.start}..{lacked.stop - 1}",
    ]
    match = ObservationLayout(Rules(match_target=20), DEFAULT_HISTORY)
    scores = match["match_scores"]
    parts += [
        "",
        "## Match play",
        "",
        "With `match_target` set (`Rules(match_target=N)`: games until a seat's total catches",
        "reach N, [rules.md](rules.md#match-play)), `catch_counts`, `tiebreak_points` and",
        "`caught_ranks` start over at each game's deal, and one more section follows `out`:",
        "`match_scores`, each seat's match score (its catches in the match's finished games, as",
        "`Match.scores`) / N, seats relative to the viewer. It changes when a game ends; it is",
        "below 1 while the match is in play, and a score at or past the target (once the match",
        "is over) reads 1.",
        "Every rule set without a match leaves the section out: its layout is as above.",
        "",
        f"- table rules, 4 players, `match_target=20`: {match.size} values, `match_scores` at "
        f"{scores.start}..{scores.stop - 1}",
    ]
    state = StateLayout(Rules(), DEFAULT_HISTORY)
    parts += [
        "",
        "## Global state",
        "",
        "`env.state()` (PettingZoo's global state, in `env.state_space`) is a float32 vector",
        "with values in [0, 1] for critics that train with every hand in sight (centralized",
        "training, decentralized execution, as in MAPPO or QMIX). It holds every hand and what",
        "the pool holds, so it must never reach a seat's policy: no observation, mask, info or",
        "scripted CPU reads it. The pool's order is left out: it is the chance still to come.",
        "Left out as in the observation: the number of asks made (the `max_asks` clock) and,",
        'under `winner="first_empty"`, which seat emptied its hand first.',
        "The sections after `pool` are the observation's public sections with absolute seats",
        "(row 0 is seat 0), equal to those of seat 0's observation; in match play they include",
        "`match_scores`, after `out`. With exact-card asks the hands and the pool have one",
        "entry per card (rank * 4 + suit; the joker last).",
        "",
        f"### Default: table rules, 4 players, history={DEFAULT_HISTORY}",
        "",
        state.markdown(),
        "",
        "The sizes scale as P*A + A + 3P + P*R + 2P + 1 + K(1 + 2P + A + 3) values (P more in",
        "match play).",
        "",
    ]
    return "\n".join(parts)


if __name__ == "__main__":
    print(observation_doc(), end="")
