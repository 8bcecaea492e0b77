"""Hidden worlds drawn from what one seat may know: the sampler behind the ``master`` CPU.

``WorldSampler(view, seed)`` reads a ``PlayerView`` only (the seat's own hand and the
public log of the game so far, ``view.knowledge.events``) and draws complete worlds:
every hand as it was dealt, every card drawn since, and the pool's order. Each world is
consistent with everything public: replaying the public asks from its deal gives the same
public log (hits and their counts, misses, shown draws, catches, empty-hand draws, the end)
and leaves the viewer with its own hand. ``SampledWorlds`` holds a batch: the hands now,
the pool now, and (``deals``) the dealt worlds themselves.

How (``gofish_env.world_kernels``): each slot a card came from (a dealt card, a drawn
card, a card still in the pool) gets a rank. The public log turns into constraints on each
(seat, rank) count over time: an ask needs at least one, a miss none, a hit exactly the
count handed over, a catch a full set, and after each deal, hit or draw no rank may hold
a full set (it would have been laid); a private draw is not the rank just asked for, and
one followed at once by a catch was of that rank. The viewer's own cards from the deal
and its draws add up to a known multiset (its hand now, plus what it handed over and laid,
minus what it received), so its slots and the others' are filled from two separate
multisets. A local search repairs a random filling until it is consistent; then a
Metropolis chain swaps the ranks of two slots (a hand's and any other of the same group)
and keeps the swap if the world stays consistent.

The distribution. The chain's stationary distribution is uniform over consistent
assignments of cards to slots, that is over consistent deals: the posterior of a shuffled
deck given the public log and the viewer's hand, if the others' choices of ask carry no
information beyond what they prove. It is not uniform over the worlds *now* (the hands and
pool at this moment): a world now is weighted by the number of deals that lead to it, as
the deck's shuffle weights it. Samples come from a chain, ``steps`` proposals apart, so
they are slightly correlated, and the chain is only known to reach every consistent world
where it was measured: tests/test_worlds.py and ``benchmarks/world_sampler.py`` measure
the distance to the exact distribution on positions small enough to enumerate.

A model of how the others play (``assume_sure_hits``, ``most_held``): every seat but the
viewer is assumed to take a sure hit when it holds one (at each ask that was not a sure
hit, the asker held none of the ranks another seat was proved to hold just before: one more
``NONE`` constraint), and to ask for the rank it holds most of (a ``MOST`` mark at each
such ask, outside the end ``ENDGAME_POOL`` describes; a world is weighted ``exp(-most_held
x energy)``, the energy being the cards by which other ranks outnumbered the rank asked,
ranks no other seat could hold left out: ``barred_ranks``).
The chain's stationary distribution is then the uniform one over the deals consistent with
the log and the assumption, reweighted by the energy. A seat seen passing up a sure hit is
assumed nothing of; if no world fits the assumption, the sampler drops it (and the weight).

Exact-card asks are not sampled (their constraints are per card, not per rank): the
sampler refuses them.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import numpy as np

from gofish_env import world_kernels as kernels
from gofish_env.cards import build_deck, card_rank, card_str, parse_card
from gofish_env.cpus import ExpertCPU
from gofish_env.events import Ask, Catch, Deal, Draw, EmptyHandDraw, GoFish, Hit
from gofish_env.game import Game
from gofish_env.knowledge import PlayerView, PublicKnowledge
from gofish_env.rules import Rules, is_integer, is_number

DEFAULT_STEPS = 4  # chain proposals between two worlds, per slot in a hand
BURN_IN = 20  # the same, before the first world
SEARCH_MOVES = 2_000  # the local search's moves from one start (most need under 100)
SEARCH_STARTS = 100  # fresh starts before the sampler gives up
ASSUMED_STARTS = 5  # the same with the sure-hit assumption, before it is dropped
# How the local search leaves a local minimum (``kernels.find_consistent``). The first
# start makes a random swap one move in FIRST_NOISE; it is the search the distribution and
# strength figures were measured with, and under the table rules it nearly always succeeds.
# Every later start anneals instead: a swap that adds d violations is made with chance
# exp(-d / RESTART_TEMPERATURE). Under two decks the first start fails at about half the
# decisions where ``master`` searches, and a later start succeeds 97 times in 100
# (docs/search.md).
FIRST_NOISE = 10
RESTART_TEMPERATURE = 0.7
VIEWER_GROUP, OTHERS_GROUP = 0, 1
# Asks with this many cards in the pool or fewer, one other hand holding cards, are not
# weighed by ``most_held``: there ``expert``'s price of a plain miss (20 x 0.6 ** (pool - 1))
# outweighs a card.
ENDGAME_POOL = 6


class SamplerError(ValueError):
    """The sampler cannot draw worlds for this view (rules it does not handle, or a log it
    cannot read)."""


@dataclass
class HistoryModel:
    """The public log of one game as slots and per-seat operations (see the module
    docstring); built once per view, shared by every world drawn from it."""

    rules: Rules
    viewer: int
    slot_seat: np.ndarray  # owner of each slot (-1: the pool)
    slot_dealt: np.ndarray  # the slot is a dealt card
    slot_forbidden: np.ndarray  # the rank a private draw cannot be (-1: none)
    slot_fixed: np.ndarray  # the known rank of a shown or proved draw (-1: unknown)
    slot_group: np.ndarray  # VIEWER_GROUP, OTHERS_GROUP, or -1 for a fixed slot
    slot_op: np.ndarray  # the operation a slot's card arrives with (-1: still in the pool)
    group_ranks: list[np.ndarray]  # the ranks each group's free slots hold, as a multiset
    ops: np.ndarray  # [n, 4]: kind, rank, value (count or slot), ends a group
    op_start: np.ndarray  # seat s's operations are ops[op_start[s]:op_start[s + 1]]
    lines: np.ndarray  # each (seat, rank) history's own operations (``rank_timelines``)
    line_start: np.ndarray
    slot_row: np.ndarray  # [slots, ranks]: a slot's row in its seat's lines (``slot_rows``)
    energy_ops: np.ndarray  # the operations ``seat_energy`` reads, per seat as ``ops``
    energy_start: np.ndarray
    change: np.ndarray  # [seats, ranks]: received - handed over - laid, per seat
    first_player: int
    deal_catches: tuple[tuple[int, ...], ...]
    draws_in_order: list[int] = field(default_factory=list)  # drawn slots, oldest first

    @property
    def pool_slots(self) -> np.ndarray:
        return np.flatnonzero(self.slot_seat == kernels.NO_SEAT)

    @property
    def draw_slots(self) -> np.ndarray:
        return np.array(self.draws_in_order, np.int64)


def build_model(
    view: PlayerView, assume_sure_hits: bool = False, most_held: bool = False
) -> HistoryModel:
    """The ``HistoryModel`` of the game ``view`` sees, from its public log and own hand.
    ``assume_sure_hits``: also assume every other seat asks for a sure hit when it holds
    one; ``most_held``: mark the others' asks the energy of ``most_held`` weighs (see the
    module docstring)."""
    rules = view.rules
    if rules.ask_for != "rank":
        raise SamplerError("ask_for: the world sampler handles rank asks only (got 'card')")
    events = view.knowledge.events
    if not events or not isinstance(events[0], Deal):
        raise SamplerError("the view's public log does not start with the game's deal")
    players, ranks, set_size = rules.players, rules.ranks, rules.set_size
    deal = events[0]
    slot_seat: list[int] = []
    slot_dealt: list[bool] = []
    slot_forbidden: list[int] = []
    slot_fixed: list[int] = []
    draws_in_order: list[int] = []
    ops: list[list[list[int]]] = [[] for _ in range(players)]
    open_group: list[int | None] = [None] * players

    slot_arrives: list[int] = []  # the arriving operation's index in the seat's list

    def new_slot(seat: int, dealt: bool, forbidden: int = -1, fixed: int = -1) -> int:
        slot_arrives.append(0 if dealt or seat < 0 else len(ops[seat]))
        slot_seat.append(seat)
        slot_dealt.append(dealt)
        slot_forbidden.append(forbidden)
        slot_fixed.append(fixed)
        return len(slot_seat) - 1

    def add(seat: int, kind: int, rank: int = -1, value: int = 0, opens: bool = False) -> None:
        ops[seat].append([kind, rank, value, 0])
        if opens:
            open_group[seat] = len(ops[seat]) - 1

    def close_groups() -> None:
        for seat, index in enumerate(open_group):
            if index is not None:
                ops[seat][index][3] = 1
                open_group[seat] = None

    for seat in range(players):
        for _ in range(deal.hand_sizes[seat]):
            new_slot(seat, True)
        add(seat, kernels.DEALT, opens=True)
    asked = -1
    # What the table knew at each ask: which asks were sure hits, which ranks were sure
    # hits for the asker, whether it was the endgame ``expert`` prices differently.
    facts = ask_facts(view) if assume_sure_hits or most_held else {}
    skips = view.knowledge.skips_sure_hits  # seats seen passing one up: assumed nothing of
    for index, event in enumerate(events[1:], start=1):
        kind = type(event)
        if kind is Catch:
            if open_group[event.seat] is None:
                raise SamplerError(f"event {index}: a catch that nothing completed")
            add(event.seat, kernels.CATCH, event.rank, opens=True)
            continue
        close_groups()
        if kind is Ask:
            asker = event.asker
            if facts and asker != view.seat and not skips[asker]:
                sure, others_proved, endgame, barred = facts[index]
                if not sure:  # it held no rank another seat was proved to hold
                    if assume_sure_hits:
                        for rank in np.flatnonzero(others_proved):
                            if rank != event.rank:
                                add(asker, kernels.NONE, int(rank))
                    if most_held and not endgame:
                        add(asker, kernels.MOST, event.rank, rank_mask(barred))
            add(asker, kernels.HAS, event.rank)
            asked = event.rank
        elif kind is Hit:
            add(event.target, kernels.GIVE, event.rank, event.count)
            add(event.asker, kernels.GAIN, event.rank, event.count, opens=True)
        elif kind is GoFish:
            add(event.target, kernels.NONE, event.rank)
        elif kind is Draw:
            fixed = -1 if event.rank is None else event.rank
            after = events[index + 1] if index + 1 < len(events) else None
            if fixed < 0 and type(after) is Catch and after.seat == event.seat:
                fixed = after.rank  # only the drawn card can complete a catch here
            slot = new_slot(event.seat, False, asked if fixed < 0 else -1, fixed)
            draws_in_order.append(slot)
            add(event.seat, kernels.DRAW, value=slot, opens=True)
        elif kind is EmptyHandDraw:
            for _ in range(event.count):
                slot = new_slot(event.seat, False)
                draws_in_order.append(slot)
                add(event.seat, kernels.DRAW, value=slot, opens=True)
        elif kind is Deal:
            raise SamplerError(f"event {index}: a second deal in one game's log")
    close_groups()
    for _ in range(view.pool_size):
        new_slot(kernels.NO_SEAT, False)

    flat = np.array([op for seat_ops in ops for op in seat_ops], np.int64).reshape(-1, 4)
    op_start = np.cumsum([0] + [len(seat_ops) for seat_ops in ops]).astype(np.int64)
    # What the chain reads at each proposal, cut down from ``flat``: a (seat, rank) count's
    # own operations, and the operations that move counts or are weighed.
    lines, line_start = kernels.rank_timelines(flat, op_start, ranks)
    energy_ops, energy_start = kernels.energy_operations(flat, op_start)
    change = np.zeros((players, ranks), np.int64)
    for seat, seat_ops in enumerate(ops):
        for kind, rank, value, _ in seat_ops:
            if kind == kernels.GAIN:
                change[seat, rank] += value
            elif kind == kernels.GIVE:
                change[seat, rank] -= value
            elif kind == kernels.CATCH:
                change[seat, rank] -= set_size

    seats = np.array(slot_seat, np.int64)
    slot_op = np.where(seats >= 0, op_start[np.maximum(seats, 0)] + slot_arrives, -1)
    fixed = np.array(slot_fixed, np.int64)
    copies = np.array([rules.copies_of(rank) for rank in range(ranks)], np.int64)
    for laid in deal.catches:
        for rank in laid:
            copies[rank] -= set_size
    # The viewer's dealt and drawn cards: its hand now, undone by the public changes.
    viewer = view.seat
    viewer_cards = np.asarray(view.own_counts, np.int64) - change[viewer]
    known = np.zeros((2, ranks), np.int64)
    for slot in np.flatnonzero(fixed >= 0):
        known[0 if seats[slot] == viewer else 1, fixed[slot]] += 1
    free_viewer = viewer_cards - known[0]
    free_others = copies - viewer_cards - known[1]
    group = np.where(seats == viewer, VIEWER_GROUP, OTHERS_GROUP)
    group[fixed >= 0] = -1
    for name, counts, slots in (
        ("viewer", free_viewer, group == VIEWER_GROUP),
        ("others", free_others, group == OTHERS_GROUP),
    ):
        if (counts < 0).any() or counts.sum() != slots.sum():
            raise SamplerError(
                f"the {name}' cards do not add up: the view's hand does not fit its public log"
            )
    group_ranks = [np.repeat(np.arange(ranks), counts) for counts in (free_viewer, free_others)]
    return HistoryModel(
        rules=rules,
        viewer=viewer,
        slot_seat=seats,
        slot_dealt=np.array(slot_dealt, np.bool_),
        slot_forbidden=np.array(slot_forbidden, np.int64),
        slot_fixed=fixed,
        slot_group=group.astype(np.int64),
        slot_op=slot_op.astype(np.int64),
        group_ranks=group_ranks,
        ops=flat,
        op_start=op_start,
        lines=lines,
        line_start=line_start,
        slot_row=kernels.slot_rows(lines, line_start, seats.size, ranks),
        energy_ops=energy_ops,
        energy_start=energy_start,
        change=change,
        first_player=deal.first_player,
        deal_catches=deal.catches,
        draws_in_order=draws_in_order,
    )


_FACTS: dict[int, tuple] = {}  # id(Deal) -> (events read, PublicKnowledge, events fed, facts)
_KEPT_FACTS = 16


def ask_facts(view: PlayerView) -> dict[int, tuple[bool, np.ndarray, bool, np.ndarray]]:
    """For the index of each ask in the view's public log, what the table knew just before
    it: (whether it was a sure hit, the ranks another seat than the asker was proved to
    hold, whether it came in the endgame ``ExpertCPU`` weighs: one other hand holding
    cards, ``ENDGAME_POOL`` or fewer in the pool, and the ranks no other seat could hold,
    ``barred_ranks``). The public knowledge is replayed as the table's own tracker reads
    the log, an ask's events together (``PublicKnowledge`` checks the sure-hit assumption
    after each update: between a hit and the catch it makes, a full set in hand would admit
    no world). It is replayed once per game and carried on from decision to decision: kept
    with the very events read, and used again only for a log that begins with those same
    event objects."""
    events = view.knowledge.events
    kept = _FACTS.get(id(events[0]))
    if (
        kept is None
        or len(kept[0]) > len(events)
        or any(old is not new for old, new in zip(kept[0], events, strict=False))
    ):
        if len(_FACTS) >= _KEPT_FACTS:
            _FACTS.pop(next(iter(_FACTS)))
        kept = ([events[0]], PublicKnowledge(view.rules), 0, {})
    read, public, fed, facts = kept
    for index in range(len(read), len(events)):
        event = events[index]
        if type(event) is Ask:
            public.update(events[fed:index])  # every event before this ask, at once
            fed = index
            facts[index] = table_facts(view.rules, public, event)
    _FACTS[id(events[0])] = (list(events), public, fed, facts)
    return facts


def table_facts(
    rules: Rules, public: PublicKnowledge, ask: Ask
) -> tuple[bool, np.ndarray, bool, np.ndarray]:
    """What ``ask_facts`` keeps of ``public`` (the table's knowledge just before ``ask``)."""
    least, asker = public.least, ask.asker
    others_proved = np.delete(least, asker, axis=0).max(axis=0) > 0
    endgame = public.pool_size <= ENDGAME_POOL and ExpertCPU.endgame_race(
        rules, public.hand_sizes, asker
    )
    return (
        bool(least[ask.target, ask.rank]),
        others_proved,
        endgame,
        barred_ranks(public, asker),
    )


def barred_ranks(public: PublicKnowledge, asker: int) -> np.ndarray:
    """The ranks no seat but ``asker`` may hold, as the table sees it (none of them holds
    cards, or each is proved to hold none, or holds none if it takes sure hits). An ask for
    one could not hit, and ``expert`` asks one only when no other rank may (``MAY_HIT``),
    so the model leaves them out of the rank held most of."""
    may_hold = np.minimum(public.most, public.sure_hit_most) > 0
    may_hold &= np.array(public.hand_sizes)[:, None] > 0
    may_hold[asker] = False
    return ~may_hold.any(axis=0)


def rank_mask(ranks: np.ndarray) -> int:
    """A boolean row of ranks as the bits of one integer (rank r is bit r)."""
    return int(sum(1 << int(rank) for rank in np.flatnonzero(ranks)))


def check_play_model(assume_sure_hits: bool, most_held: float) -> None:
    """Refuse settings of the model of the others' play, naming the field."""
    if not isinstance(assume_sure_hits, bool):
        raise ValueError(f"assume_sure_hits: got {assume_sure_hits!r}; allowed: True, False")
    if not is_number(most_held) or not most_held >= 0:
        raise ValueError(f"most_held: got {most_held!r}; allowed: a number >= 0")


class WorldSampler:
    """Draws worlds consistent with what ``view.seat`` may know (see the module docstring).

    ``WorldSampler(view, seed).sample(n)`` gives ``n`` worlds; the same view and seed give
    the same worlds (``seed=None``: unseeded, from the system's entropy). Building the
    sampler finds a first consistent world and runs the chain ``BURN_IN`` proposals per
    hand slot; ``steps`` (per hand slot) separate two worlds of a sample."""

    def __init__(
        self,
        view: PlayerView,
        seed: int | None = 0,
        steps: int = DEFAULT_STEPS,
        assume_sure_hits: bool = False,
        most_held: float = 0.0,
    ):
        if not is_integer(steps) or steps < 1:
            raise ValueError(f"steps: got {steps!r}; allowed: an integer >= 1")
        check_play_model(assume_sure_hits, most_held)
        self.view = view
        self.steps = int(steps)
        if seed is None:
            seed = secrets.randbits(64)
        elif not is_integer(seed):
            raise ValueError(f"seed: got {seed!r}; allowed: an integer, or None (unseeded)")
        self._state = np.array([int(seed) % 2**64], np.uint64)
        self.search_moves = 0
        self.assumes_sure_hits = assume_sure_hits
        self.beta = float(most_held)
        assumed = assume_sure_hits or most_held > 0
        if not (
            assumed
            and self._start(build_model(view, assume_sure_hits, most_held > 0), ASSUMED_STARTS)
        ):
            self.assumes_sure_hits = False
            self.beta = 0.0
            if not self._start(build_model(view), SEARCH_STARTS):
                raise SamplerError(
                    f"no consistent world found from {SEARCH_STARTS} starts of the local search"
                )
        model = self.model
        slots = model.slot_seat.size
        if self.movers.size:
            self._walk(BURN_IN)
        self._pool_slots = model.pool_slots
        self._draw_slots = model.draw_slots
        self.slots = slots

    def _start(self, model: HistoryModel, starts: int) -> bool:
        """Find a first consistent world of ``model`` in at most ``starts`` starts."""
        self.model = model
        self.free = np.flatnonzero(model.slot_group >= 0)
        self.movers = self.free[model.slot_seat[self.free] != kernels.NO_SEAT]
        for start in range(starts):
            self._fill()
            noise, temperature = (FIRST_NOISE, 0.0) if start == 0 else (0, RESTART_TEMPERATURE)
            moves = kernels.find_consistent(*self._search_args(), SEARCH_MOVES, noise, temperature)
            self.search_moves += moves if moves >= 0 else SEARCH_MOVES
            if moves >= 0:
                return True
        return False

    def _fill(self) -> None:
        """A fresh first world from ``greedy_fill``: the fixed slots, the rest near
        consistent."""
        model = self.model
        rules = model.rules
        self.assign = np.where(model.slot_fixed >= 0, model.slot_fixed, -1).astype(np.int64)
        self.dealt_counts = np.zeros((rules.players, rules.ranks), np.int64)
        for slot in np.flatnonzero(model.slot_dealt & (model.slot_fixed >= 0)):
            self.dealt_counts[model.slot_seat[slot], model.slot_fixed[slot]] += 1
        budget = np.array(
            [np.bincount(ranks, minlength=rules.ranks) for ranks in model.group_ranks], np.int64
        )
        kernels.greedy_fill(
            self.assign,
            self.dealt_counts,
            budget,
            model.ops,
            model.op_start,
            model.lines,
            model.line_start,
            model.slot_seat,
            model.slot_op,
            model.slot_dealt,
            model.slot_forbidden,
            self.free,
            model.slot_group,
            rules.set_size,
            self._state,
        )

    def _search_args(self) -> tuple:
        model = self.model
        return (
            self.assign,
            self.dealt_counts,
            model.lines,
            model.line_start,
            model.slot_seat,
            model.slot_dealt,
            model.slot_forbidden,
            self.free,
            model.slot_group,
            model.rules.set_size,
            self._state,
        )

    def _chain_args(self) -> tuple:
        """The chain's world and the model, as the kernels that move it take them."""
        model = self.model
        return (
            self.assign,
            self.dealt_counts,
            model.lines,
            model.line_start,
            model.slot_row,
            model.energy_ops,
            model.energy_start,
            model.slot_seat,
            model.slot_dealt,
            model.slot_forbidden,
            self.movers,
            self.free,
            model.slot_group,
            model.rules.set_size,
            self._state,
        )

    def _walk(self, per_slot: int) -> int:
        model = self.model
        cache = kernels.chain_cache(
            self.assign,
            self.dealt_counts,
            model.lines,
            model.line_start,
            model.energy_ops,
            model.energy_start,
            model.rules.set_size,
            self.beta,
        )
        return kernels.walk(*self._chain_args(), per_slot * self.movers.size, self.beta, cache)

    def is_consistent(self) -> bool:
        """Whether the chain's current world follows the public log (it always should)."""
        model = self.model
        return not kernels.total_violations(
            self.assign,
            self.dealt_counts,
            model.lines,
            model.line_start,
            model.slot_forbidden,
            model.rules.set_size,
        )

    def sample(self, count: int, keep_deals: bool = False) -> SampledWorlds:
        """``count`` worlds: the hands and the pool now (and the dealt worlds with
        ``keep_deals``)."""
        if not is_integer(count) or count < 1:
            raise ValueError(f"count: got {count!r}; allowed: an integer >= 1")
        count = int(count)
        model = self.model
        rules = model.rules
        hands = np.empty((count, rules.players, rules.ranks), np.int64)
        pools = np.empty((count, self._pool_slots.size), np.int64)
        deals = np.empty((count if keep_deals else 0, self.slots), np.int64)
        kernels.sample_worlds(
            *self._chain_args(),
            self.steps * self.movers.size,
            self.beta,
            self._draw_slots,
            model.change,
            self._pool_slots,
            hands,
            pools,
            deals,
        )
        return SampledWorlds(model, self.view, hands, pools, deals if keep_deals else None)


@dataclass
class SampledWorlds:
    """A batch of worlds: ``hands[i, seat, rank]`` now (the viewer's row is its own hand),
    ``pools[i]`` the pool's ranks top first, and with ``deals`` each world's rank per slot
    (dealt cards, drawn cards, pool) for ``dealt_game``."""

    model: HistoryModel
    view: PlayerView
    hands: np.ndarray
    pools: np.ndarray
    deals: np.ndarray | None = None

    def __len__(self) -> int:
        return self.hands.shape[0]

    def game(self, index: int) -> Game:
        """World ``index`` now, as a ``Game`` position in play (the public history is not
        in its log: its knowledge starts from the position). The viewer holds its own
        cards; the others' suits are any the viewer has not seen."""
        view = self.view
        if view.current_player is None:
            raise ValueError("the game is over: there is no position to play on")
        rules = view.rules
        unseen = _cards_by_rank(rules, exclude=view.own_cards)
        hands = []
        for seat in range(rules.players):
            if seat == view.seat:
                hands.append(list(view.own_cards))
            else:
                hands.append(_take(unseen, self.hands[index, seat]))
        pool = [unseen[rank].pop() for rank in self.pools[index]]
        return Game.from_hands(
            hands,
            pool,
            rules=rules,
            first_player=view.current_player,
            catches=[list(laid) for laid in view.catches],
        )

    def dealt_game(self, index: int) -> Game:
        """World ``index`` as it was dealt: replaying the public asks from it gives the
        public log the view saw."""
        if self.deals is None:
            raise ValueError("these worlds were sampled without keep_deals=True")
        model = self.model
        rules = model.rules
        assign = self.deals[index]
        cards = _cards_by_rank(rules)
        hands: list[list[str]] = [[] for _ in range(rules.players)]
        for slot in np.flatnonzero(model.slot_dealt):
            hands[model.slot_seat[slot]].append(cards[assign[slot]].pop())
        drawn = [cards[assign[slot]].pop() for slot in model.draws_in_order]
        pool = drawn + [cards[assign[slot]].pop() for slot in model.pool_slots]
        catches = [list(laid) for laid in model.deal_catches] if model.deal_catches else None
        return Game.from_hands(
            hands, pool, rules=rules, first_player=model.first_player, catches=catches
        )


def true_worlds(game: Game, view: PlayerView, count: int, seed: int) -> SampledWorlds:
    """``count`` copies of ``game``'s true hands, each with the pool in a fresh random
    order: what the sampler's worlds stand in for. It reads hidden cards, so it is for
    benchmarks that measure a search against the truth, never for a seat's decisions.
    No one can know the pool's order, so a shuffle of its cards is the truth's own
    uncertainty."""
    seats = range(game.rules.players)
    hands = np.array([game.hand_counts(seat) for seat in seats], np.int64)
    pool = np.array([parse_card(card)[0] for card in game.pool_cards()], np.int64)
    shuffle = np.random.default_rng(seed)
    pools = np.array([shuffle.permutation(pool) for _ in range(count)], np.int64)
    return SampledWorlds(None, view, np.tile(hands, (count, 1, 1)), pools.reshape(count, -1))


def _cards_by_rank(rules: Rules, exclude: list[str] = ()) -> list[list[str]]:
    """The deck's card strings by rank (two decks: each twice), without ``exclude``; each
    list ends with its first card in deck order, so ``pop()`` hands them out in order."""
    cards: list[list[str]] = [[] for _ in range(rules.ranks)]
    for card in sorted(build_deck(rules.decks, rules.jokers), reverse=True):
        cards[card_rank(card)].append(card_str(card))
    for text in exclude:
        cards[parse_card(text)[0]].remove(text)
    return cards


def _take(cards: list[list[str]], counts) -> list[str]:
    return [cards[rank].pop() for rank, count in enumerate(counts) for _ in range(count)]
