"""What the batch shows: legal asks as masks in the envs' relative layout, observations
(the reference's compiled ``fill_observation``, per game), and the check of asks before any
is applied."""

from __future__ import annotations

import numba
import numpy as np

import gofish_env.compile_interrupts  # noqa: F401  (Ctrl-C while compiling)
from gofish_env.observation import fill_observation_into, observation_work
from gofish_env.vector.engine import left_of
from gofish_env.vector.state import JOKER_INDEX
from gofish_env.vector.structs import borrow, keep_alive

# Why an ask is refused, by code (``check_asks``); the Python side words the message.
NOT_A_SEAT, ASKS_ITSELF, TARGET_OUT, TARGET_EMPTY, NOT_WANTED, NOT_HELD = 1, 2, 3, 4, 5, 6
LAID_CARD, HELD_CARD = 7, 8


@numba.njit(cache=True, inline="always", error_model="numpy")
def target_open(S, K, g, asker, target):
    """Whether the seat to move may ask ``target`` (``Game._compute_legal``'s targets)."""
    if target == asker:
        return False
    if K.askable_empty and S.pool_len[g]:
        return not S.out[g, target]
    for seat in range(K.players):
        if S.sizes[g, seat] == 0:
            return S.sizes[g, target] > 0
    return True


@numba.njit(cache=True, inline="always", error_model="numpy")
def wanted_open(S, K, g, asker, wanted):
    """Whether the seat to move may name ``wanted`` (a rank, or a card index)."""
    if not K.card_asks:
        return S.counts[g, asker, wanted] > 0
    rank = wanted // 4
    if S.counts[g, asker, rank] == 0:
        return False
    if wanted == JOKER_INDEX:
        return True
    return not S.laid_cards[g, wanted] and (K.allow_held or S.cards[g, asker, wanted] == 0)


@numba.njit(cache=True, inline="always", error_model="numpy")
def legal_sets(S, K, g):
    """What the seat to move may ask, as two sets and their sizes: (bit w set: it may name
    w, at most 53 of them; how many; bit k set: it may ask the seat k places to its left;
    how many). ``target_open`` and ``wanted_open`` written out, and without branches on
    the cards where it can be: this runs at every decision, and random hands make such
    branches guesses the processor often gets wrong."""
    asker = S.current[g]
    players, ask_count = K.players, K.ask_count
    wanted = np.uint64(0)
    names = 0
    if K.card_asks:
        for w in range(ask_count):
            if wanted_open(S, K, g, asker, w):
                wanted |= np.uint64(1) << np.uint64(w)
                names += 1
    else:
        for w in range(ask_count):
            bit = 1 if S.counts[g, asker, w] > 0 else 0
            wanted |= np.uint64(bit) << np.uint64(w)
            names += bit
    empty_ok = K.askable_empty and S.pool_len[g] > 0
    to_any = True  # every other seat may be asked, or (when a hand is empty) the non-empty
    if not empty_ok:
        for seat in range(players):
            to_any &= S.sizes[g, seat] != 0
    targets = 0
    opened = 0
    target = asker
    for offset in range(players - 1):
        target = left_of(target, players)
        if empty_ok:
            bit = 0 if S.out[g, target] else 1
        else:
            bit = 1 if to_any or S.sizes[g, target] != 0 else 0
        targets |= bit << offset
        opened += bit
    return wanted, names, targets, opened


@numba.njit(cache=True, inline="always", error_model="numpy")
def legal_actions(S, K, g, out):
    """The legal actions of game ``g``'s seat to move, ascending (the order of
    ``Game.legal_asks``), into ``out``; returns how many."""
    if S.over[g]:
        return 0
    wanted, _, targets, _ = legal_sets(S, K, g)
    ask_count = K.ask_count
    count = 0
    for offset in range(K.players - 1):
        if (targets >> offset) & 1:
            for w in range(ask_count):
                if (wanted >> np.uint64(w)) & np.uint64(1):
                    out[count] = offset * ask_count + w
                    count += 1
    return count


@numba.njit(cache=True, inline="always", error_model="numpy")
def legal_ask_at(K, wanted, names, targets, index):
    """The legal ask at place ``index`` of the ascending list the two sets make (each open
    target times each of the ``names``), as (target offset, what is named), without making
    the list. The place within each set is found by counting down its members: each loop
    runs to its end, without a branch that depends on the cards."""
    row = index // names
    column = index - row * names
    offset = 0
    for k in range(K.players - 1):
        bit = (targets >> k) & 1
        offset = k if bit == 1 and row == 0 else offset  # once: row goes below 0 after
        row -= bit
    w = 0
    for rank in range(K.ask_count):
        bit = np.int64((wanted >> np.uint64(rank)) & np.uint64(1))
        w = rank if bit == 1 and column == 0 else w
        column -= bit
    return offset, w


@numba.njit(cache=True, inline="always", error_model="numpy")
def _mask_into(S, K, g, masks, row):
    """Row ``row`` of ``masks``: game ``g``'s legal actions as booleans, each bit written
    from the two sets ``legal_sets`` gives (one open target and one open name), with no
    list of actions and no branch on the cards."""
    ask_count = K.ask_count
    if S.over[g]:
        for action in range(K.actions):
            masks[row, action] = False
        return
    wanted, _, targets, _ = legal_sets(S, K, g)
    for offset in range(K.players - 1):
        target_bit = np.uint64((targets >> offset) & 1)
        for w in range(ask_count):
            bit = target_bit & (wanted >> np.uint64(w))
            masks[row, offset * ask_count + w] = (bit & np.uint64(1)) != 0


@numba.njit(cache=True, error_model="numpy")
def legal_masks(S, K, masks):
    """Each game's legal actions as a boolean row (all False for a finished game)."""
    for g in range(masks.shape[0]):
        _mask_into(S, K, g, masks, g)


@numba.njit(cache=True, error_model="numpy")
def legal_mask_one(S, K, g, row):
    """Game ``g``'s legal actions as a boolean row (``row``: shape [1, actions])."""
    _mask_into(S, K, g, row, 0)


@numba.njit(cache=True, error_model="numpy", _nrt=False)  # see ``gofish_env.bounds``
def observe_into(S, K, at, gather, g, seat, row, work):
    """Seat ``seat``'s observation of game ``g`` into ``row`` (every value written), working in
    ``work`` (``observation_work``)."""
    fill_observation_into(
        row,
        seat,
        S.current[g],
        S.counts[g, seat],
        S.sizes[g],
        S.pool_len[g],
        S.buffer[g],
        gather[seat],
        S.ring[g],
        S.num_asks[g],
        S.least[g],
        S.most[g],
        S.sure[g],
        S.unlaid[g],
        S.hand_cap,
        K.max_copies,
        S.cards[g, seat],
        S.known_holds[g],
        S.known_lacks[g],
        S.laid_cards[g],
        S.card_copies,
        at,
        work[0],
        work[1],
        work[2],
        true_hands(S, K, g, seat, work[3]),
        work[4],
        work[5],
    )


@numba.njit(cache=True, inline="always", error_model="numpy")
def true_hands(S, K, g, seat, world):
    """``world``: the opponents' hands of game ``g`` from ``seat``'s left. The observation
    and the compiled ``expert`` do not read them; they spare the sure-hit bounds a flow
    check whose answer they already prove (``bounds.sure_hit_bounds_into``)."""
    for k in range(K.players - 1):
        other = seat + 1 + k
        other = other - K.players if other >= K.players else other
        for rank in range(K.ranks):
            world[k, rank] = S.counts[g, other, rank]
    return world


@numba.njit(cache=True, error_model="numpy")
def observe(S, K, at, gather, games, seats, out):
    """Row i of ``out``: the observation of game ``games[i]`` for seat ``seats[i]``."""
    work = observation_work(K.players, K.ranks, K.card_indices)
    # Borrowed (structs.borrow): handed to the helpers at every game without counting.
    borrowed = (
        borrow(work[0]),
        borrow(work[1]),
        borrow(work[2]),
        borrow(work[3]),
        borrow(work[4]),
        borrow(work[5]),
    )
    # The caller's arrays borrowed too: each row handed on would otherwise be counted.
    rows, gathers = borrow(out), borrow(gather)
    for i in range(games.shape[0]):
        observe_into(S, K, at, gathers, games[i], seats[i], rows[i], borrowed)
    # Used after the loop so that numba frees ``work`` only now: the borrowed arrays point
    # into it (freed earlier, its memory went to the next allocation in the loop).
    keep_alive(work)
    keep_alive(out)
    keep_alive(gather)


@numba.njit(cache=True, error_model="numpy")
def observe_one(S, K, at, gather, g, seat, out):
    """``out[0]``: game ``g``'s observation for ``seat``."""
    work = observation_work(K.players, K.ranks, K.card_indices)
    observe_into(S, K, at, gather, g, seat, out[0], work)


@numba.njit(cache=True, error_model="numpy")
def check_asks(S, K, targets, wanted):
    """(game, reason code) of the first ask a live game refuses, or (-1, 0)."""
    for g in range(targets.shape[0]):
        if S.over[g]:
            continue
        asker = S.current[g]
        target = targets[g]
        if target < 0 or target >= K.players:
            return g, NOT_A_SEAT
        if wanted[g] < 0 or wanted[g] >= K.ask_count:
            return g, NOT_WANTED
        if target == asker:
            return g, ASKS_ITSELF
        if S.out[g, target]:
            return g, TARGET_OUT
        if not target_open(S, K, g, asker, target):
            return g, TARGET_EMPTY
        rank = wanted[g] // 4 if K.card_asks else wanted[g]
        if S.counts[g, asker, rank] == 0:
            return g, NOT_HELD
        if not wanted_open(S, K, g, asker, wanted[g]):
            return g, LAID_CARD if S.laid_cards[g, wanted[g]] else HELD_CARD
    return -1, 0
