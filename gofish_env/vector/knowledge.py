"""Public knowledge per game, event by event: ``gofish_env.knowledge.PublicKnowledge.update``
and ``ObservationEncoder.update`` written once more over arrays.

The engine calls one function here at each point where the reference ``Game`` appends an
event to its log, in the same order, so the bounds follow the same steps. The two event
steps the reference compiles (``go_fish_kernel``, ``private_draw_kernel``) are written out
here over the game's index: handing them a game's rows as array views costs more than
their few loops, at every miss. The differential tests (tests/test_vector_engine.py)
compare the results with the reference bit for bit after every ask.
"""

from __future__ import annotations

import numba
import numpy as np

import gofish_env.compile_interrupts  # noqa: F401  (Ctrl-C while compiling)
from gofish_env.bounds import drop_ruled_out_assumptions_into
from gofish_env.cards import MAX_RANK_POINTS
from gofish_env.knowledge import UNBOUNDED, most_after_catch
from gofish_env.vector.state import EASY_MEMORY


@numba.njit(cache=True, error_model="numpy")
def new_game(S, K, g):
    """The ``Deal`` event: forget the last game's knowledge (the hand sizes and pool are
    the game's own arrays)."""
    S.least[g] = 0
    S.most[g] = UNBOUNDED
    S.sure[g] = UNBOUNDED
    S.skips[g] = False
    S.unlaid[g] = S.copies
    S.buffer[g] = 0.0
    S.ring[g] = 0
    S.last[g] = -1
    S.parts[g] = 0.0
    S.told_index[g] = -1
    S.told_holds[g] = False
    S.asked_me_len[g] = 0
    S.known_holds[g] = False
    S.known_lacks[g] = False


@numba.njit(cache=True, inline="always", error_model="numpy")
def skips_sure_hits(S, g, seat):
    S.skips[g, seat] = True
    S.sure[g, seat] = UNBOUNDED


@numba.njit(cache=True, inline="always", error_model="numpy")
def on_ask(S, K, g, asker, rank, wanted):
    if S.least[g, asker, rank] < 1:
        S.least[g, asker, rank] = 1
    if S.sure[g, asker, rank] < 1:
        skips_sure_hits(S, g, asker)  # it holds a rank it passed up
    if K.card_asks and not K.allow_held and S.card_copies[wanted] == 1:
        S.known_lacks[g, asker, wanted] = True  # a joker's asker holds the other


@numba.njit(cache=True, inline="always", error_model="numpy")
def card_moves(S, g, card, to_seat, from_seat):
    """``PublicKnowledge._card_moves``: the table saw ``card`` arrive in ``to_seat``'s hand,
    from ``from_seat``'s (-1: the pool)."""
    S.known_holds[g, to_seat, card] = True
    S.known_lacks[g, to_seat, card] = False
    if from_seat >= 0:
        S.known_holds[g, from_seat, card] = False
        S.known_lacks[g, from_seat, card] = True


@numba.njit(cache=True, inline="always", error_model="numpy")
def on_hit(S, K, g, asker, target, rank, count, wanted):
    if count > S.sure[g, target, rank]:
        skips_sure_hits(S, g, target)  # it held what it was assumed not to
    S.least[g, asker, rank] += count
    S.most[g, asker, rank] += count
    S.sure[g, asker, rank] += count
    if K.card_asks:
        S.least[g, target, rank] = max(S.least[g, target, rank] - count, 0)
        S.most[g, target, rank] -= count
        S.sure[g, target, rank] = max(S.sure[g, target, rank] - count, 0)
        card_moves(S, g, wanted, asker, target)
    else:
        S.least[g, target, rank] = 0
        S.most[g, target, rank] = 0
        S.sure[g, target, rank] = 0


@numba.njit(cache=True, inline="always", error_model="numpy")
def on_go_fish(S, K, g, asker, target, rank, wanted):
    """``go_fish_kernel``: the target holds none of the rank; and had the asker held a rank
    another seat is proved to hold, it would have asked for that instead (rank asks).
    Under exact-card asks: the target lacks the card."""
    if K.card_asks:
        S.known_lacks[g, target, wanted] = True
        return
    least = S.least[g]  # one game's rows: the loops below index them directly
    least[target, rank] = 0
    S.most[g, target, rank] = 0
    S.sure[g, target, rank] = 0
    if S.skips[g, asker]:
        return
    sure = S.sure[g, asker]
    for seat in range(K.players):
        if seat == asker:
            continue
        proved = least[seat]
        for other in range(K.ranks):
            if proved[other] > 0 and other != rank:
                sure[other] = 0


@numba.njit(cache=True, inline="always", error_model="numpy")
def on_draw(S, K, g, seat, shown_rank, asked_rank, wanted):
    """A fished card: ``shown_rank`` when it is shown, else -1: ``private_draw_kernel``, one
    more of any rank but the one asked for (which it may be under exact-card asks). Under
    exact-card asks a private draw may be any card but the one asked for (``wanted``)."""
    most, sure = S.most[g, seat], S.sure[g, seat]  # the seat's rows
    if shown_rank >= 0:
        S.least[g, seat, shown_rank] += 1
        most[shown_rank] += 1
        sure[shown_rank] += 1
        if K.card_asks:
            card_moves(S, g, wanted, seat, -1)
        return
    if K.card_asks:
        for card in range(K.card_indices):
            S.lacks_before_draw[g, card] = S.known_lacks[g, seat, card]
            if card != wanted:
                S.known_lacks[g, seat, card] = False
    for rank in range(K.ranks):
        most[rank] += 1
        sure[rank] += 1
    if not K.card_asks:
        most[asked_rank] -= 1
        sure[asked_rank] -= 1


@numba.njit(cache=True, inline="always", error_model="numpy")
def catch_after_draw(S, K, g, seat, rank, asked_rank):
    """``catch_after_draw_kernel``: a catch right after ``seat`` drew unseen, so the drawn
    card was of the caught rank: undo ``on_draw``'s widening of every other rank."""
    most, sure = S.most[g, seat], S.sure[g, seat]
    asked = -1 if K.card_asks else asked_rank
    for other in range(K.ranks):
        if other != rank and other != asked:
            most[other] -= 1
            sure[other] -= 1
    if K.card_asks:
        for card in range(K.card_indices):
            S.known_lacks[g, seat, card] = S.lacks_before_draw[g, card]


@numba.njit(cache=True, inline="always", error_model="numpy")
def check_assumptions(S, g):
    """``PublicKnowledge._check_assumptions`` after an ask and what followed it: drop the
    sure-hit assumption about every seat public facts rule it out for. The true hands are
    the candidate world: where they fit a seat's assumption, no check can rule it out, so
    the flow check runs only for seats whose hands break it (the result is the same)."""
    drop_ruled_out_assumptions_into(
        S.least[g],
        S.most[g],
        S.sure[g],
        S.skips[g],
        S.sizes[g],
        S.unlaid[g],
        S.hand_cap,
        S.counts[g],
        S.assumption_work,
    )


@numba.njit(cache=True, inline="always", error_model="numpy")
def on_catch(S, K, g, seat, rank):
    """A catch laid (the game's arrays already count it): bounds, the encoder's buffer and
    the reward components."""
    set_size = K.set_size
    if S.most[g, seat, rank] >= set_size and S.sure[g, seat, rank] < set_size:
        skips_sure_hits(S, g, seat)  # it held a set of a rank it passed up (as Catch)
    S.unlaid[g, rank] -= set_size
    S.least[g, seat, rank] = max(S.least[g, seat, rank] - set_size, 0)
    S.most[g, seat, rank] = most_after_catch(S.most[g, seat, rank], set_size)
    S.sure[g, seat, rank] = max(min(S.sure[g, seat, rank] - set_size, set_size - 1), 0)
    if K.card_asks:  # the cards laid (``laid_cards`` already says so) leave the hand
        for card in range(4 * rank, min(4 * rank + 4, K.card_indices)):
            if S.laid_cards[g, card]:
                S.known_holds[g, seat, card] = False
    write_catches(S, K, g, seat, rank)
    points = S.rank_points[rank]
    S.parts[g, seat, 0] += 1.0
    S.parts[g, seat, 1] += points / MAX_RANK_POINTS
    S.parts[g, seat, 2] += points * K.tiebreak_scale


@numba.njit(cache=True, inline="always", error_model="numpy")
def write_catches(S, K, g, seat, rank):
    """The encoder's buffer for one seat's catches: count, points and one rank's count."""
    S.buffer[g, seat] = S.catch_count[g, seat] / K.total_sets_divisor
    S.buffer[g, K.players + seat] = S.points[g, seat] / K.max_points
    # The reference divides a float32 array by the divisor: float32 arithmetic.
    S.buffer[g, K.caught_at + seat * K.ranks + rank] = np.float32(
        S.caught[g, seat, rank]
    ) / np.float32(K.max_rank_catches)


@numba.njit(cache=True, inline="always", error_model="numpy")
def on_empty_hand_draw(S, g, seat, count):
    S.least[g, seat] = 0
    S.most[g, seat] = count
    S.sure[g, seat] = count
    S.known_holds[g, seat] = False
    S.known_lacks[g, seat] = False


@numba.njit(cache=True, inline="always", error_model="numpy")
def on_out(S, K, g, seat):
    S.buffer[g, K.out_at + seat] = 1.0


@numba.njit(cache=True, error_model="numpy")
def on_game_over(S, g):
    """The win component of the rewards: 1/k to each of k winners."""
    winners = 0
    for seat in range(S.winners.shape[1]):
        winners += S.winners[g, seat]
    for seat in range(S.winners.shape[1]):
        if S.winners[g, seat]:
            S.parts[g, seat, 3] += 1.0 / winners


@numba.njit(cache=True, inline="always", error_model="numpy")
def record_ask(S, K, g, asker, target, wanted, hit, fished, shown):
    """A finished ask (its answer known): the encoder's ring, the last record, the ask log,
    and what the compiled CPUs remember of it."""
    index = S.num_asks[g] - 1
    _write_record(S.last[g], asker, target, wanted, hit, fished, shown)
    history = S.ring.shape[1]
    if history:
        _write_record(S.ring[g, index % history], asker, target, wanted, hit, fished, shown)
    if index < S.log.shape[1]:
        _write_record(S.log[g, index], asker, target, wanted, hit, fished, shown)
    remember(S, K, g, index, asker, target, wanted, hit, fished, shown)


@numba.njit(cache=True, inline="always", error_model="numpy")
def _write_record(record, asker, target, wanted, hit, fished, shown):
    """One public ask's six fields into ``record`` (the last ask, the ring, the log)."""
    record[0] = asker
    record[1] = target
    record[2] = wanted
    record[3] = hit
    record[4] = fished
    record[5] = shown


@numba.njit(cache=True, inline="always", error_model="numpy")
def remember(S, K, g, index, asker, target, wanted, hit, fished, shown):
    """What the compiled CPUs keep of public ask number ``index`` (``gofish_env.cpus``:
    normal's ``_told``, easy's ``_asked_me``). Each is a function
    of the public asks alone, so one copy per game serves every seat."""
    rank = wanted // 4 if K.card_asks else wanted
    # normal: the asker holds the rank; the target does not (unless one card was taken).
    S.told_index[g, asker, rank] = index
    S.told_holds[g, asker, rank] = True
    if not K.card_asks or not hit:
        S.told_index[g, target, rank] = index
        S.told_holds[g, target, rank] = False
    # easy: each seat remembers the last requests made to it; asking drops them.
    memory = S.asked_me
    length = S.asked_me_len[g, target]
    if length == EASY_MEMORY:
        for i in range(EASY_MEMORY - 1):
            memory[g, target, i, 0] = memory[g, target, i + 1, 0]
            memory[g, target, i, 1] = memory[g, target, i + 1, 1]
        length -= 1
    memory[g, target, length, 0] = asker
    memory[g, target, length, 1] = rank
    S.asked_me_len[g, target] = length + 1
    kept = 0
    for i in range(S.asked_me_len[g, asker]):
        if not (memory[g, asker, i, 0] == target and memory[g, asker, i, 1] == rank):
            memory[g, asker, kept, 0] = memory[g, asker, i, 0]
            memory[g, asker, kept, 1] = memory[g, asker, i, 1]
            kept += 1
    S.asked_me_len[g, asker] = kept
