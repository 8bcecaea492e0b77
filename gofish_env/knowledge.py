"""What a seat may know: public deductions from the event log, plus its own hand.

This is the one place hidden information is projected out. ``PublicKnowledge`` reads only
public events (the ``Game.events`` log) and keeps, for every seat and rank, the least the
seat is proved to hold and the most it can hold given the history. ``PlayerView`` joins
that with one seat's own hand into what that seat may use: the observation encoder and
the scripted CPUs both decide from a ``PlayerView`` and nothing else.

Deductions (rank asks; exact-card asks deduce what their rank-level events allow):
- an ask proves the asker holds at least one card of the rank;
- a hit moves a known count: the target now holds none, the asker holds what it was proved
  to hold plus the cards received;
- a miss proves the target holds none of the rank;
- a shown draw adds a known card; a private draw may be any rank but the one asked for, so
  it widens the drawer's upper bounds by one; an empty-hand draw of n cards caps every
  rank at n;
- a catch removes its cards;
- bounds are cut by hand sizes and by the cards of each rank the viewer has not seen
  (deck - laid - own hand); a pool of n cards holds at most n of a rank, so the rest of
  the unseen cards are in hands (all of them once the pool is empty).

- a private draw followed at once by a catch by the drawer was of the caught rank (only
  the drawn rank can complete a set there), so it widens nothing.

With exact-card asks the table also follows single cards (``known_holds`` /
``known_lacks``, seats x card indices): a hit or a shown draw puts the card asked for in the
asker's hand and takes it from the target's; a miss proves the target lacks it, and so does
asking for it (unless ``ask_for_held_card``, or it is a joker: its asker holds the other); a
private draw may bring any card but the one asked for, and an empty-hand draw any card; a
catch lays its cards (``card_laid``).
``bounds.card_bounds_into`` joins these with one viewer's hand and rank bounds.

A second pair of bounds assumes every seat takes a sure hit when it has one (the ``hard``
and ``expert`` CPUs always do): a seat that misses while another seat is proved to hold a
rank held none of that rank, or it would have asked for it (rank asks only). These
``if_sure_hits`` bounds are an assumption about how the others play, not a public fact: they
always lie within the proved bounds and always admit a world (``bounds.admits_world_into``). A
seat is assumed nothing of for the rest of the game once public facts rule the assumption
out: it is seen holding a rank it passed up, or after an ask no world fits its assumed
bounds (its hand size, the cards left; ``bounds.drop_ruled_out_assumptions``). Where the
viewer's own hand rules it out, that viewer's bounds drop it too.

``PublicKnowledge.events`` keeps the current game's public log (from its ``Deal``), for
readers that need the whole history in order, such as the world sampler. Everything else
starts over at each ``Deal`` but ``match_scores``: in match play, each seat's catches summed
over the games finished so far (``Match.scores``), added up from each ``GameOver``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial

import numba
import numpy as np

import gofish_env.compile_interrupts  # noqa: F401  (Ctrl-C while compiling)
from gofish_env.bounds import (
    UNBOUNDED,
    bounds_scratch_size,
    card_bounds_into,
    drop_ruled_out_assumptions,
    opponent_bounds_into,
    opponent_bounds_kernel,
    sure_hit_bounds_into,
    sure_hit_bounds_kernel,
)
from gofish_env.cards import RANK_POINTS, index_strings
from gofish_env.events import (
    Ask,
    Catch,
    Deal,
    Draw,
    EmptyHandDraw,
    Event,
    GameOver,
    GoFish,
    Hit,
    Out,
)
from gofish_env.rules import Rules

__all__ = [
    "UNBOUNDED",
    "AskRecord",
    "KnowledgeTracker",
    "PlayerView",
    "PublicKnowledge",
    "bounds_scratch_size",
    "opponent_bounds_into",
    "opponent_bounds_kernel",
    "sure_hit_bounds_into",
    "sure_hit_bounds_kernel",
]


class PublicKnowledge:
    """Deductions every seat at the table shares, updated event by event.

    ``least[s, r]`` / ``most[s, r]`` are what the history alone proves about seat s and
    rank r (``most`` may be ``UNBOUNDED``); ``bounds`` sharpens them for one viewer.
    ``sure_hit_most[s, r]`` is the most seat s can hold if every seat takes a sure hit when
    it has one (it drops to 0 where a seat passed one up); a seat later seen holding a rank
    it passed up (it asks for it, hands it over, or lays a set of it) does not take sure
    hits (``skips_sure_hits``), and is assumed nothing of from then on.
    ``match_scores[s]``: seat s's catches over the finished games of the log (a match's
    score, as ``Match.scores``); a new game's ``Deal`` keeps it.
    """

    def __init__(self, rules: Rules):
        self.rules = rules
        players, ranks = rules.players, rules.ranks
        self.players = players
        self.ranks = ranks
        self.set_size = rules.set_size
        self.card_asks = rules.ask_for == "card"
        self.copies = np.array([rules.copies_of(rank) for rank in range(ranks)], np.int64)
        # Most of a rank one hand can hold: a complete set would have been laid.
        self.hand_cap = np.minimum(self.copies, self.set_size - 1)
        self.max_copies = int(self.copies.max())
        # Exact-card asks: copies of each card index (1; the joker's index 2), else none.
        cards = rules.ask_count if self.card_asks else 0
        self.card_copies = np.ones(cards, np.int64)
        if rules.jokers and self.card_asks:
            self.card_copies[-1] = rules.copies_of(ranks - 1)
        self.hand_sizes = [0] * players
        self.pool_size = 0
        self.num_events = 0
        # Each viewer's opponents from its left, as index arrays for ``bounds``.
        self._opponents = [
            np.array([(seat + k) % players for k in range(1, players)]) for seat in range(players)
        ]
        self.match_scores = [0] * players
        self._new_game()

    def _new_game(self) -> None:
        players, ranks = self.players, self.ranks
        self.least = np.zeros((players, ranks), np.int64)
        self.most = np.full((players, ranks), UNBOUNDED, np.int64)
        self.sure_hit_most = self.most.copy()
        self.skips_sure_hits = np.zeros(players, np.bool_)  # seen passing up a sure hit
        self.laid = np.zeros(ranks, np.int64)
        self.unlaid = self.copies.copy()  # cards of each rank not in catches
        self.catches: list[list[int]] = [[] for _ in range(players)]
        self.points = [0] * players
        self.out = [False] * players
        self.winners: tuple[int, ...] | None = None
        self.asks: list[AskRecord] = []
        self.events: list[Event] = []  # this game's public log, from its Deal
        self._unchecked = False  # events since the sure-hit assumption was last checked
        self._fished_unseen = -1  # the seat whose private draw was the last event
        self._fished_asked = -1  # and the rank it had asked for (-1: exact-card asks)
        cards = self.card_copies.size
        self.known_holds = np.zeros((players, cards), np.bool_)  # seen arriving, still held
        self.known_lacks = np.zeros((players, cards), np.bool_)  # proved not held
        self.card_laid = np.zeros(cards, np.bool_)  # every copy in catches
        self._lacks_before_draw = np.zeros(cards, np.bool_)

    def update(self, events: Sequence[Event]) -> None:
        """Fold in new public events (in order)."""
        sizes = self.hand_sizes
        for event in events:
            kind = type(event)
            if kind is Ask and self._unchecked:
                self._check_assumptions()  # the position after the previous ask
            least, most, sure = self.least, self.most, self.sure_hit_most
            fished, self._fished_unseen = self._fished_unseen, -1
            if kind is Ask:
                if least[event.asker, event.rank] < 1:
                    least[event.asker, event.rank] = 1
                if sure[event.asker, event.rank] < 1:
                    self._skips_sure_hits(event.asker)  # it holds a rank it passed up
                self.asks.append(AskRecord(event.asker, event.target, event.rank, event.card))
                # Asking for a card you may not hold proves you lack it; but a joker is
                # asked for by a seat holding the other one.
                if (
                    self.card_asks
                    and not self.rules.ask_for_held_card
                    and self.card_copies[event.card] == 1
                ):
                    self.known_lacks[event.asker, event.card] = True
            elif kind is Hit:
                asker, target, rank, count = event.asker, event.target, event.rank, event.count
                sizes[asker] += count
                sizes[target] -= count
                if count > sure[target, rank]:
                    self._skips_sure_hits(target)  # it held what it was assumed not to
                least[asker, rank] += count
                most[asker, rank] += count
                sure[asker, rank] += count
                if self.card_asks:
                    least[target, rank] = max(least[target, rank] - count, 0)
                    most[target, rank] -= count
                    sure[target, rank] = max(sure[target, rank] - count, 0)
                    self._card_moves(self.asks[-1].card, asker, target)
                else:
                    least[target, rank] = most[target, rank] = sure[target, rank] = 0
                self.asks[-1].hit = count
            elif kind is GoFish:
                if not self.card_asks:
                    go_fish_kernel(
                        least,
                        most,
                        sure,
                        self.skips_sure_hits,
                        event.asker,
                        event.target,
                        event.rank,
                    )
                else:
                    self.known_lacks[event.target, self.asks[-1].card] = True
                self.asks[-1].fished = True
            elif kind is Draw:
                seat = event.seat
                sizes[seat] += 1
                self.pool_size -= 1
                if event.rank is not None:
                    least[seat, event.rank] += 1
                    most[seat, event.rank] += 1
                    sure[seat, event.rank] += 1
                    self.asks[-1].shown = True
                    if self.card_asks:
                        self._card_moves(self.asks[-1].card, seat, -1)
                else:
                    # A private card, but not the rank asked for (with rank asks).
                    asked = -1 if self.card_asks else self.asks[-1].rank
                    private_draw_kernel(most, sure, seat, asked)
                    if self.card_asks:  # any card but the one asked for
                        lacks = self.known_lacks[seat]
                        self._lacks_before_draw[:] = lacks
                        lacks[:] = False
                        lacks[self.asks[-1].card] = self._lacks_before_draw[self.asks[-1].card]
                    self._fished_unseen, self._fished_asked = seat, asked
            elif kind is Catch:
                seat, rank = event.seat, event.rank
                # It held a set: more than assumed, if it passed the rank up as a sure hit
                # (a proved bound below a set is the cap of a set of the rank just laid).
                if most[seat, rank] >= self.set_size > sure[seat, rank]:
                    self._skips_sure_hits(seat)
                if fished == seat:  # the card just drawn completed this catch: it was one
                    catch_after_draw_kernel(most, sure, seat, rank, self._fished_asked)
                    if self.card_asks:
                        self.known_lacks[seat] = self._lacks_before_draw
                if self.card_asks:
                    self._lay_cards(seat, rank, event.cards)
                sizes[seat] -= self.set_size
                self.laid[rank] += self.set_size
                self.unlaid[rank] -= self.set_size
                self.catches[seat].append(rank)
                self.points[seat] += RANK_POINTS[rank]
                least[seat, rank] = max(least[seat, rank] - self.set_size, 0)
                most[seat, rank] = most_after_catch(most[seat, rank], self.set_size)
                sure[seat, rank] = max(min(sure[seat, rank] - self.set_size, self.set_size - 1), 0)
            elif kind is EmptyHandDraw:
                seat = event.seat
                sizes[seat] += event.count
                self.pool_size -= event.count
                least[seat] = 0
                most[seat] = sure[seat] = event.count
                self.known_holds[seat] = self.known_lacks[seat] = False
            elif kind is Out:
                self.out[event.seat] = True
            elif kind is Deal:
                self._deal(event)
            elif kind is GameOver:
                self.winners = event.winners
                for seat, count in enumerate(event.catches):
                    self.match_scores[seat] += count
            self.events.append(event)
            self._unchecked = True
        if self._unchecked:
            self._check_assumptions()
        self.num_events += len(events)

    def _check_assumptions(self) -> None:
        """Drop the sure-hit assumption about every seat public facts now rule it out for.
        ``update`` checks before each ask and at the end of each call: fed whole asks (as
        ``KnowledgeTracker`` feeds a game's events), it checks the position after each ask,
        however many asks a call holds. A call that ends inside an ask checks that passing
        state too (between a hit and the catch it makes, a full set in hand admits no
        world), and may drop the assumption where whole asks would not: feed an ask's
        events together (``worlds.ask_facts`` does)."""
        self._unchecked = False
        drop_ruled_out_assumptions(
            self.least,
            self.most,
            self.sure_hit_most,
            self.skips_sure_hits,
            np.array(self.hand_sizes, np.int64),
            self.unlaid,
            self.hand_cap,
        )

    def _card_moves(self, card: int, to_seat: int, from_seat: int) -> None:
        """The table saw ``card`` arrive in ``to_seat``'s hand, from ``from_seat``'s (-1:
        the pool), which held one copy at most and so holds none now."""
        self.known_holds[to_seat, card] = True
        self.known_lacks[to_seat, card] = False
        if from_seat >= 0:
            self.known_holds[from_seat, card] = False
            self.known_lacks[from_seat, card] = True

    def _lay_cards(self, seat: int, rank: int, cards: Sequence[int] | None) -> None:
        """A catch's cards leave ``seat``'s hand for the table: ``cards``, or when a catch
        is every copy of its rank (``cards`` None), the rank's cards."""
        if cards is None:
            cards = range(4 * rank, min(4 * rank + 4, self.card_copies.size))
        for card in cards:
            self.card_laid[card] = True
            self.known_holds[seat, card] = False

    def _skips_sure_hits(self, seat: int) -> None:
        """``seat`` was seen to hold a rank it passed up as a sure hit: assume nothing of it."""
        self.skips_sure_hits[seat] = True
        self.sure_hit_most[seat] = UNBOUNDED

    def _deal(self, event: Deal) -> None:
        """A new game (in a match, the next one): start over from its deal."""
        self._new_game()
        self.hand_sizes[:] = event.hand_sizes
        self.pool_size = event.pool_size
        for seat, laid in enumerate(event.catches):
            for rank in laid:
                self.catches[seat].append(rank)
                self.points[seat] += RANK_POINTS[rank]
                self.laid[rank] += self.set_size
                self.unlaid[rank] -= self.set_size
                if self.card_asks and event.laid_cards is None:
                    self._lay_cards(seat, rank, None)
        if self.card_asks and event.laid_cards is not None:
            self.card_laid[list(event.laid_cards)] = True
        for seat in range(self.players):
            if not self.hand_sizes[seat] and not self.pool_size:
                self.out[seat] = True

    def bounds(
        self, seat: int, own_counts: Sequence[int], if_sure_hits: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """(least, most) each seat holds of each rank, as seat ``seat`` may deduce them from
        the history and its own hand (``own_counts``). Rows are absolute seats; the viewer's
        own row is exact. ``if_sure_hits``: assuming every seat takes a sure hit when it has
        one (``sure_hit_most``)."""
        own = np.asarray(own_counts, dtype=np.int64)
        low = np.empty((self.players, self.ranks), np.int64)
        high = np.empty_like(low)
        opponents = self._opponents[seat]
        low[opponents], high[opponents] = self.opponent_bounds(seat, own, if_sure_hits)
        low[seat] = high[seat] = own
        return low, high

    def card_bounds(
        self, seat: int, own_cards: np.ndarray, least: np.ndarray, most: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """(holds, lacks), seats x card indices, 0/1: the single cards seat ``seat`` may
        prove each seat holds or lacks, from the public card facts, its own cards
        ``own_cards`` and its rank bounds ``least`` / ``most`` (absolute rows, as
        ``bounds``). The viewer's own row is its hand."""
        opponents = self._opponents[seat]
        shape = (self.players - 1, self.card_copies.size)
        holds, lacks = np.empty(shape, np.int64), np.empty(shape, np.int64)
        card_bounds_into(
            self.known_holds,
            self.known_lacks,
            self.card_laid,
            self.card_copies,
            np.asarray(own_cards, np.int64),
            np.ascontiguousarray(least[opponents]),
            np.ascontiguousarray(most[opponents]),
            self.pool_size,
            seat,
            holds,
            lacks,
        )
        all_holds = np.empty((self.players, shape[1]), np.int64)
        all_lacks = np.empty_like(all_holds)
        all_holds[opponents], all_lacks[opponents] = holds, lacks
        all_holds[seat] = np.asarray(own_cards) > 0
        all_lacks[seat] = np.asarray(own_cards) == 0
        return all_holds, all_lacks

    def opponent_bounds(
        self, seat: int, own: np.ndarray, if_sure_hits: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """``bounds`` for the opponents only, in order from the viewer's left."""
        shape = (self.players - 1, self.ranks)
        low, high = np.empty(shape, np.int64), np.empty(shape, np.int64)
        args = (
            np.array(self.hand_sizes, np.int64),
            np.asarray(own, np.int64),
            self.unlaid,
            self.hand_cap,
            self.pool_size,
            self.max_copies,
            seat,
        )
        opponent_bounds_kernel(self.least, self.most, *args, low, high)
        if not if_sure_hits:
            return low, high
        sure_low, sure_high = np.empty(shape, np.int64), np.empty(shape, np.int64)
        sure_hit_bounds_kernel(
            self.least, self.most, self.sure_hit_most, *args, low, high, sure_low, sure_high
        )
        return sure_low, sure_high


# Event steps compiled because they run at every miss and every draw, and numpy calls on
# rows this short cost their call overhead rather than their arithmetic.


@numba.njit(cache=True)
def most_after_catch(most, set_size):
    """The most a seat can hold of a rank once it lays a set of it: fewer than a set, but a
    hand with two sets of a rank (several decks) lays them one after the other, and the
    first catch's cap then says too little for the second to subtract from."""
    if most < set_size:  # capped by a catch just laid: this is the next set of the rank
        return set_size - 1
    return min(most - set_size, set_size - 1)


@numba.njit(cache=True)
def go_fish_kernel(least, most, sure_hit_most, skips_sure_hits, asker, target, rank):
    """A miss (rank asks): the target holds none of the rank; and had the asker held a rank
    another seat is proved to hold, a sure hit, it would have asked for that instead (if it
    takes sure hits)."""
    least[target, rank] = most[target, rank] = sure_hit_most[target, rank] = 0
    if skips_sure_hits[asker]:
        return
    players, ranks = least.shape
    for other in range(ranks):
        if other == rank:
            continue
        for seat in range(players):
            if seat != asker and least[seat, other] > 0:
                sure_hit_most[asker, other] = 0
                break


@numba.njit(cache=True)
def catch_after_draw_kernel(most, sure_hit_most, seat, rank, asked):
    """A catch of ``rank`` right after ``seat`` drew unseen: the drawn card was of that rank,
    so undo ``private_draw_kernel``'s widening of every other rank."""
    for other in range(most.shape[1]):
        if other != rank and other != asked:
            most[seat, other] -= 1
            sure_hit_most[seat, other] -= 1


@numba.njit(cache=True)
def private_draw_kernel(most, sure_hit_most, seat, asked):
    """A card drawn unseen: one more of any rank, but not the rank asked for (``asked``;
    -1 under exact-card asks, where it may be)."""
    for rank in range(most.shape[1]):
        most[seat, rank] += 1
        sure_hit_most[seat, rank] += 1
    if asked >= 0:
        most[seat, asked] -= 1
        sure_hit_most[seat, asked] -= 1


@dataclass(slots=True)
class AskRecord:
    """One public ask and its answer, for the recent-history part of an observation."""

    asker: int
    target: int
    rank: int
    card: int | None = None
    hit: int = 0
    fished: bool = False
    shown: bool = False


@dataclass
class PlayerView:
    """Everything one seat may know: its own hand plus public information. Seats are
    absolute (0..P-1); the observation encoder turns them relative to the viewer.

    A view is of one moment: read it before the game moves on. Its public part
    (``knowledge``: ``asks``, ``unseen``, the bounds not yet read) is the tracker's, shared
    and kept up to date, not copied at each decision; after another event take a new view
    (``KnowledgeTracker.view``)."""

    seat: int
    rules: Rules
    own_counts: list[int]
    hand_sizes: list[int]
    pool_size: int
    catches: list[list[int]]
    points: list[int]
    out: list[bool]
    current_player: int | None
    legal_asks: tuple[tuple[int, int], ...]
    knowledge: PublicKnowledge = field(repr=False)
    # The viewer's own cards as strings, made only when asked for (sorting is not free).
    _own_cards: Callable[[], list[str]] = field(repr=False, default=list)
    _bounds: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    _sure_hit_bounds: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    own_card_counts: np.ndarray | None = field(default=None, repr=False)
    """With exact-card asks: copies of each card index in the viewer's hand."""
    _card_bounds: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)

    @property
    def players(self) -> int:
        return self.rules.players

    @cached_property
    def own_cards(self) -> list[str]:
        """The viewer's own cards as strings, sorted by rank then suit."""
        return self._own_cards()

    @property
    def to_move(self) -> bool:
        return self.current_player == self.seat

    @property
    def least(self) -> np.ndarray:
        """least[s, r]: the fewest cards of rank r seat s can hold."""
        return self._get_bounds()[0]

    @property
    def most(self) -> np.ndarray:
        """most[s, r]: the most cards of rank r seat s can hold."""
        return self._get_bounds()[1]

    @property
    def least_if_sure_hits(self) -> np.ndarray:
        """``least``, assuming every seat takes a sure hit when it has one."""
        return self._get_sure_hit_bounds()[0]

    @property
    def most_if_sure_hits(self) -> np.ndarray:
        """``most``, assuming every seat takes a sure hit when it has one: a seat that missed
        while another was proved to hold a rank holds at most what it has drawn since."""
        return self._get_sure_hit_bounds()[1]

    @property
    def unseen(self) -> np.ndarray:
        """Cards of each rank this seat has not seen: in other hands or the pool."""
        return (
            np.asarray(self.knowledge.copies)
            - np.asarray(self.knowledge.laid)
            - np.asarray(self.own_counts)
        )

    @property
    def asks(self) -> list[AskRecord]:
        """Every public ask so far with its answer, oldest first."""
        return self.knowledge.asks

    @property
    def match_scores(self) -> tuple[int, ...]:
        """Each seat's catches over the finished games (in match play the match's score;
        this game's catches are in ``catches``)."""
        return tuple(self.knowledge.match_scores)

    @property
    def card_holds(self) -> np.ndarray:
        """With exact-card asks, card_holds[s, c]: 1 if seat s is proved to hold card index
        c (``bounds.card_bounds_into``; the viewer's own row is its hand)."""
        return self._get_card_bounds()[0]

    @property
    def card_lacks(self) -> np.ndarray:
        """With exact-card asks, card_lacks[s, c]: 1 if seat s is proved to hold no copy of
        card index c."""
        return self._get_card_bounds()[1]

    def _get_card_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        if self._card_bounds is None:
            if self.own_card_counts is None:
                raise ValueError("card_holds / card_lacks: the rules ask for ranks, not cards")
            self._card_bounds = self.knowledge.card_bounds(
                self.seat, self.own_card_counts, self.least, self.most
            )
        return self._card_bounds

    def _get_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        if self._bounds is None:
            self._bounds = self.knowledge.bounds(self.seat, self.own_counts)
        return self._bounds

    def _get_sure_hit_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        if self._sure_hit_bounds is None:
            self._sure_hit_bounds = self.knowledge.bounds(self.seat, self.own_counts, True)
        return self._sure_hit_bounds


class KnowledgeTracker:
    """Keeps a game's ``PublicKnowledge`` current and hands out ``PlayerView``s.

    It reads the game only through public accessors (events, current player, legal asks of
    the seat to move) and the viewer's own hand.
    """

    def __init__(self, game):
        self.game = game
        self.public = PublicKnowledge(game.rules)
        self.sync()

    def sync(self) -> PublicKnowledge:
        game = self.game
        if game.num_events != self.public.num_events:
            self.public.update(game.events_since(self.public.num_events))
        return self.public

    def view(self, seat: int) -> PlayerView:
        public = self.sync()
        game = self.game
        current = game.current_player
        return PlayerView(
            seat=seat,
            rules=game.rules,
            own_counts=game.hand_counts(seat),
            # A copy of the cards, not the game: a view holds (and pickles) nothing hidden.
            _own_cards=partial(index_strings, game.hand_indices(seat)),
            hand_sizes=list(public.hand_sizes),
            pool_size=public.pool_size,
            catches=[list(laid) for laid in public.catches],
            points=list(public.points),
            out=list(public.out),
            current_player=current,
            legal_asks=game.legal_asks() if current == seat else (),
            knowledge=public,
            own_card_counts=(
                np.array(game.hand_card_counts(seat), np.int64) if public.card_asks else None
            ),
        )
