"""The compiled deductions behind ``PlayerView.least`` / ``most`` and their sure-hit
variants: what one viewer may deduce from the public bounds, the hand sizes and its own
hand, and whether a set of bounds admits any world at all.

``admits_world_into`` is the check behind the sure-hit assumption: an assumption about how the
others play is kept only while some assignment of the unseen cards to the hands and the
pool satisfies it (every hand its size, every rank within its bounds). It is a small
bipartite flow (hands x ranks), so it is exact, not a heuristic.

The kernels that work in arrays they are given, and allocate and return none, are compiled
with ``_nrt=False`` (numba's reference counting off): every array they touch is owned by the
caller for the whole call, and counting the views they take cost about a third of the
bounds deductions' time.
"""

from __future__ import annotations

import numba
import numpy as np

import gofish_env.compile_interrupts  # noqa: F401  (Ctrl-C while compiling)

UNBOUNDED = 1 << 20  # an upper bound the history has not limited yet


@numba.njit(cache=True)
def opponent_bounds_kernel(
    least, most, sizes, own, unlaid, hand_cap, pool, max_copies, seat, low, high
):
    """Fill ``low`` / ``high`` (opponents from the viewer's left x ranks) with what seat
    ``seat`` may deduce from the public ``least`` / ``most``, the hand ``sizes``, its own
    counts ``own`` and the cards not laid (``max_copies``: most copies of any rank in the
    deck). Compiled because the observation needs it at every step, and whole-array numpy
    calls on arrays this small cost their call overhead rather than their arithmetic."""
    players, ranks = least.shape
    scratch = np.empty(bounds_scratch_size(players, ranks), np.int64)
    opponent_bounds_into(
        least, most, sizes, own, unlaid, hand_cap, pool, max_copies, seat, low, high, scratch
    )


@numba.njit(cache=True)
def bounds_scratch_size(players, ranks):
    """Integers ``opponent_bounds_into`` works in."""
    return 3 * ranks + 3 * (players - 1)


@numba.njit(cache=True, _nrt=False)
def opponent_bounds_into(
    least, most, sizes, own, unlaid, hand_cap, pool, max_copies, seat, low, high, scratch
):
    """``opponent_bounds_kernel`` working in ``scratch`` (``bounds_scratch_size``
    integers) instead of arrays of its own: a batch of games fills thousands of bounds a
    call, and allocations would cost more than the deductions. The row and column sums
    each step needs are added up while the step before writes the values."""
    players, ranks = least.shape
    opponents = players - 1
    unseen = scratch[:ranks]  # the cards of each rank the viewer has not seen
    low_columns = scratch[ranks : 2 * ranks]  # column sums of ``low``, then of ``high``
    high_columns = scratch[2 * ranks : 3 * ranks]
    opponent_sizes = scratch[3 * ranks : 3 * ranks + opponents]
    low_rows = scratch[3 * ranks + opponents : 3 * ranks + 2 * opponents]
    high_rows = scratch[3 * ranks + 2 * opponents : 3 * ranks + 3 * opponents]
    for rank in range(ranks):
        unseen[rank] = unlaid[rank] - own[rank]
        low_columns[rank] = 0
    for k in range(opponents):
        seat_k = seat + 1 + k
        seat_k = seat_k - players if seat_k >= players else seat_k
        size = np.int64(sizes[seat_k])
        opponent_sizes[k] = size
        total = 0
        for rank in range(ranks):
            # No hand holds a complete set: it would have been laid.
            top = min(np.int64(most[seat_k, rank]), size)
            top = min(top, unseen[rank])
            top = min(top, np.int64(hand_cap[rank]))
            high[k, rank] = top
            proved = min(np.int64(least[seat_k, rank]), top)
            low[k, rank] = proved
            total += proved
            low_columns[rank] += proved
        low_rows[k] = total
    # Near the end of the pool the rules feed each other: a second pass finds more, but
    # only where the first raised a least (with ``low`` as it was, each update gives what
    # it gave: min and max with the values they wrote).
    near_end = pool < max_copies
    raised = True
    for _ in range(2 if near_end else 1):
        if not raised:
            break
        raised = False
        for rank in range(ranks):
            high_columns[rank] = 0
        for k in range(opponents):
            room = opponent_sizes[k] - low_rows[k]
            total = 0
            for rank in range(ranks):
                # What the other opponents are proved to hold is not in this one's hand,
                # and what its own other ranks are proved to hold leaves room for no more.
                proved = low[k, rank]
                left = unseen[rank] - low_columns[rank] + proved
                top = min(min(high[k, rank], left), room + proved)
                high[k, rank] = top
                total += top
                high_columns[rank] += top
            high_rows[k] = total
        for rank in range(ranks):
            low_columns[rank] = 0
        for k in range(opponents):
            room = opponent_sizes[k] - high_rows[k]
            total = 0
            for rank in range(ranks):
                # A hand of n cards holds at least n minus what its other ranks can hold;
                floor = max(low[k, rank], room + high[k, rank])
                if near_end:
                    # a pool of n cards holds at most n of a rank; the rest are in hands.
                    rest = unseen[rank] - pool - high_columns[rank]
                    floor = max(floor, rest + high[k, rank])
                raised |= floor != low[k, rank]
                low[k, rank] = floor
                total += floor
                low_columns[rank] += floor
            low_rows[k] = total


@numba.njit(cache=True)
def sure_hit_bounds_kernel(
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
):
    """Fill ``sure_low`` / ``sure_high`` with the bounds ``opponent_bounds_kernel`` deduces
    when every seat takes a sure hit (``most`` cut by ``sure_hit_most``), kept within the
    proved bounds ``low`` / ``high`` (the assumption may be wrong about a seat).

    The viewer's own hand can rule the assumption out where the public facts alone do
    not: if no world fits the assumed bounds, it is dropped for each seat that alone
    leaves no world, then for every seat if they still leave none together."""
    players, ranks = most.shape
    assumed = np.empty((players, ranks), np.int64)
    scratch = np.empty(sure_hit_scratch_size(players, ranks), np.int64)
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
        np.zeros((0, ranks), np.int64),
    )


@numba.njit(cache=True)
def sure_hit_scratch_size(players, ranks):
    """Integers ``sure_hit_bounds_into`` works in (``opponent_bounds_into``'s first)."""
    rest = 3 * players + ranks + players - 1 + world_work_size(players - 1, ranks)
    return bounds_scratch_size(players, ranks) + rest


@numba.njit(cache=True, _nrt=False)
def sure_hit_bounds_into(
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
):
    """``sure_hit_bounds_kernel`` working in ``assumed`` (players x ranks) and ``scratch``
    (``sure_hit_scratch_size`` integers), so that a call allocates nothing: a batch of
    games fills thousands of observations a call.

    ``world`` (opponents from the viewer's left x ranks) is the opponents' true hands, or
    has no rows. A world that fits the assumed bounds proves that some world does, so the
    flow check is skipped where it fits: the result is the same as with no world (which
    reads nothing hidden), only cheaper."""
    players, ranks = most.shape
    at = bounds_scratch_size(players, ranks)  # opponent_bounds_into's part comes first
    made = scratch[at : at + players]  # the seats the assumption is made of (1)
    kept = scratch[at + players : at + 2 * players]
    alone = scratch[at + 2 * players : at + 3 * players]
    at += 3 * players
    unseen = scratch[at : at + ranks]
    opp_sizes = scratch[at + ranks : at + ranks + players - 1]
    flow_work = scratch[at + ranks + players - 1 :]
    for rank in range(ranks):
        unseen[rank] = unlaid[rank] - own[rank]
    # The assumption is made of a seat only where it changes what the deduction starts
    # from (``opponent_bounds_into``'s first bounds): elsewhere it changes nothing after.
    # Every rank is looked at, without a branch on the bounds: which ranks differ is the
    # processor's guess to get wrong, and a wrong guess costs more than the ranks left.
    count = 0
    for other in range(players):
        made[other] = 0
        if other == seat:
            continue
        size = np.int64(sizes[other])
        differs = False
        for rank in range(ranks):
            top = np.int64(most[other, rank])
            sure = np.int64(sure_hit_most[other, rank])
            cap = min(min(size, unseen[rank]), np.int64(hand_cap[rank]))
            cut = max(min(top, sure), np.int64(least[other, rank]))
            differs |= (sure < top) & (min(cut, cap) != min(top, cap))
        made[other] = differs
        count += differs
    if not count:  # until a seat passes up a sure hit that matters, nothing changes
        _copy_bounds(low, high, sure_low, sure_high)
        return
    other = seat
    for k in range(players - 1):
        other = other + 1 if other + 1 < players else 0  # to the left, without a division
        opp_sizes[k] = sizes[other]
    args = (least, most, sure_hit_most, sizes, own, unlaid, hand_cap, pool, max_copies, seat)
    _assumed_bounds(*args, made, low, high, sure_low, sure_high, assumed, scratch)
    if _admits(sure_low, sure_high, opp_sizes, unseen, world, flow_work):
        return
    for other in range(players):
        kept[other] = 0
        if made[other]:
            for seat_k in range(players):
                alone[seat_k] = 0
            alone[other] = 1
            _assumed_bounds(*args, alone, low, high, sure_low, sure_high, assumed, scratch)
            kept[other] = _admits(sure_low, sure_high, opp_sizes, unseen, world, flow_work)
    _assumed_bounds(*args, kept, low, high, sure_low, sure_high, assumed, scratch)
    if not _admits(sure_low, sure_high, opp_sizes, unseen, world, flow_work):
        _copy_bounds(low, high, sure_low, sure_high)


@numba.njit(cache=True, inline="always")
def _copy_bounds(low, high, to_low, to_high):
    """``to_low[:] = low`` and ``to_high[:] = high`` as plain loops: numba's slice
    assignment walks a general broadcast and costs several times as much."""
    for k in range(low.shape[0]):
        for rank in range(low.shape[1]):
            to_low[k, rank] = low[k, rank]
            to_high[k, rank] = high[k, rank]


@numba.njit(cache=True, _nrt=False)
def _admits(low, high, sizes, capacity, world, work):
    """``admits_world_into``, answered at once where ``world`` (hands that fit ``sizes``
    and ``capacity``, or no rows) lies within ``low`` / ``high``."""
    if world.shape[0] == low.shape[0]:
        fits = True
        for k in range(low.shape[0]):
            for rank in range(low.shape[1]):
                fits &= low[k, rank] <= world[k, rank] <= high[k, rank]
        if fits:
            return True
    return admits_world_into(low, high, sizes, capacity, world, work)


@numba.njit(cache=True, _nrt=False)
def _assumed_bounds(
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
    made,
    low,
    high,
    sure_low,
    sure_high,
    capped,
    scratch,
):
    """``sure_hit_bounds_kernel``'s bounds with the assumption made of the seats in
    ``made`` only (the proved bounds ``low`` / ``high`` for the others); ``capped``
    (players x ranks) and ``scratch`` are work space."""
    players, ranks = most.shape
    for other in range(players):
        for rank in range(ranks):
            if made[other]:
                top = min(most[other, rank], sure_hit_most[other, rank])
                capped[other, rank] = max(top, least[other, rank])
            else:
                capped[other, rank] = most[other, rank]
    opponent_bounds_into(
        least,
        capped,
        sizes,
        own,
        unlaid,
        hand_cap,
        pool,
        max_copies,
        seat,
        sure_low,
        sure_high,
        scratch,
    )
    for k in range(low.shape[0]):
        for rank in range(low.shape[1]):
            top = min(max(sure_high[k, rank], low[k, rank]), high[k, rank])
            sure_high[k, rank] = top
            sure_low[k, rank] = min(max(sure_low[k, rank], low[k, rank]), top)


@numba.njit(cache=True)
def drop_ruled_out_assumptions(
    least, most, sure_hit_most, skips_sure_hits, sizes, unlaid, hand_cap
):
    """``drop_ruled_out_assumptions_into`` in arrays of its own, with no world to try."""
    players, ranks = least.shape
    no_world = np.zeros((0, ranks), np.int64)
    work = np.empty(assumption_work_size(players, ranks), np.int64)
    drop_ruled_out_assumptions_into(
        least, most, sure_hit_most, skips_sure_hits, sizes, unlaid, hand_cap, no_world, work
    )


@numba.njit(cache=True)
def assumption_work_size(players, ranks):
    """Integers ``drop_ruled_out_assumptions_into`` works in."""
    return 2 * players * ranks + 2 * players + world_work_size(players, ranks)


@numba.njit(cache=True, _nrt=False)
def drop_ruled_out_assumptions_into(
    least, most, sure_hit_most, skips_sure_hits, sizes, unlaid, hand_cap, world, work
):
    """Public facts that rule out the sure-hit assumption about a seat: it is proved to hold
    a rank it is assumed not to, or no world fits its assumed bounds (its hand size, the
    cards left). Such a seat is assumed nothing of from then on (``skips_sure_hits``); if
    the seats' assumptions only clash together, none is kept. Rows are every seat, and
    ``unlaid`` the cards of each rank not in catches (in hands or the pool).

    ``world`` (hands x ranks) is a world known to fit the proved bounds, such as the true
    hands, or has no rows. Where it also fits the assumptions, or does once some cards of
    the seats that break them are swapped for cards it leaves out of hands (the pool), no
    flow check can rule an assumption out, so none runs: the result is the same as with
    no world, and far cheaper. ``work``: ``assumption_work_size`` integers, so that a call
    allocates nothing."""
    players, ranks = least.shape
    if world.shape[0] == players and _fits_after_swaps(
        least, most, sure_hit_most, skips_sure_hits, sizes, unlaid, hand_cap, world, work
    ):
        return
    size = players * ranks
    active = work[:players]  # the seats the assumption is made of (1) or not (0)
    count = 0
    for seat in range(players):
        active[seat] = 0
        if skips_sure_hits[seat]:
            continue
        for rank in range(ranks):
            if sure_hit_most[seat, rank] < most[seat, rank]:
                active[seat] = 1
                count += 1
                break
    if not count:
        return
    fits = work[players : 2 * players]  # the world fits the seat's assumption as it is (1)
    high = work[2 * players : 2 * players + size].reshape((players, ranks))
    assumed = work[2 * players + size : 2 * players + 2 * size].reshape((players, ranks))
    flow_work = work[2 * players + 2 * size :]
    for seat in range(players):
        fits[seat] = world.shape[0] == players
        for rank in range(ranks):
            high[seat, rank] = _proved_top(most, hand_cap, unlaid, sizes, seat, rank)
            if fits[seat] and world[seat, rank] > sure_hit_most[seat, rank]:
                fits[seat] = 0
    for seat in range(players):
        for rank in range(ranks):
            assumed[seat, rank] = high[seat, rank]
    for seat in range(players):
        if not active[seat] or fits[seat]:
            continue
        ruled_out = False
        for rank in range(ranks):
            assumed[seat, rank] = min(high[seat, rank], sure_hit_most[seat, rank])
            ruled_out |= assumed[seat, rank] < least[seat, rank]
        if ruled_out or not admits_world_into(least, assumed, sizes, unlaid, world, flow_work):
            _skip(sure_hit_most, skips_sure_hits, seat)
            active[seat] = 0
            count -= 1
        for rank in range(ranks):
            assumed[seat, rank] = high[seat, rank]
    if count < 2:
        return
    all_fit = True
    for seat in range(players):
        if active[seat]:
            all_fit &= fits[seat] == 1
            for rank in range(ranks):
                assumed[seat, rank] = min(high[seat, rank], sure_hit_most[seat, rank])
    if all_fit:  # the world fits them all at once
        return
    if not admits_world_into(least, assumed, sizes, unlaid, world, flow_work):
        for seat in range(players):
            if active[seat]:
                _skip(sure_hit_most, skips_sure_hits, seat)


@numba.njit(cache=True, inline="always")
def _proved_top(most, hand_cap, unlaid, sizes, seat, rank):
    """The most of ``rank`` the proved facts leave room for in ``seat``'s hand."""
    return min(most[seat, rank], hand_cap[rank], unlaid[rank], sizes[seat])


@numba.njit(cache=True, inline="always")
def _assumed_top(most, sure_hit_most, hand_cap, unlaid, sizes, seat, rank):
    """``_proved_top`` cut by the sure-hit assumption."""
    return min(_proved_top(most, hand_cap, unlaid, sizes, seat, rank), sure_hit_most[seat, rank])


@numba.njit(cache=True, _nrt=False)
def _fits_after_swaps(
    least, most, sure_hit_most, skips_sure_hits, sizes, unlaid, hand_cap, world, work
):
    """Whether ``world`` (within the proved bounds) fits every seat's assumption at once
    after each seat that holds more of a rank than assumed puts the excess out of hands
    and takes as many cards left out of hands, of ranks it has room for: then a world
    fits each assumption and all together. Written without early exits where it can be,
    so that the loops compile to vector code: this runs after every ask."""
    players, ranks = least.shape
    broken = 0  # cards held beyond the assumptions
    for seat in range(players):
        for rank in range(ranks):
            # A seat assumed nothing of has sure_hit_most >= most >= world: never broken.
            broken += max(world[seat, rank] - sure_hit_most[seat, rank], 0)
    if not broken:  # the usual case: no seat breaks its assumption
        return True
    rest = work[:ranks]  # the cards of each rank the world leaves out of hands
    for rank in range(ranks):
        rest[rank] = unlaid[rank]
    for seat in range(players):
        for rank in range(ranks):
            rest[rank] -= world[seat, rank]
    for seat in range(players):
        if skips_sure_hits[seat]:
            continue
        excess = 0
        ruled_out = False
        for rank in range(ranks):
            assumed = sure_hit_most[seat, rank]
            ruled_out |= assumed < least[seat, rank]
            excess += max(world[seat, rank] - assumed, 0)
        if ruled_out:
            return False  # the full check drops it
        if not excess:
            continue
        room = 0
        for rank in range(ranks):
            top = _assumed_top(most, sure_hit_most, hand_cap, unlaid, sizes, seat, rank)
            room += min(max(top - world[seat, rank], 0), rest[rank])
        if room < excess:
            return False
        if broken == excess:
            return True  # no other seat holds more than assumed
        broken -= excess
        # Take the cards, so that the next seats find what is left.
        for rank in range(ranks):
            top = _assumed_top(most, sure_hit_most, hand_cap, unlaid, sizes, seat, rank)
            taken = min(max(top - world[seat, rank], 0), rest[rank], excess)
            rest[rank] -= taken
            excess -= taken
    return True


@numba.njit(cache=True)
def _skip(sure_hit_most, skips_sure_hits, seat):
    skips_sure_hits[seat] = True
    sure_hit_most[seat] = UNBOUNDED


@numba.njit(cache=True)
def world_work_size(rows, ranks):
    """Integers ``admits_world_into`` works in, for at most ``rows`` hands."""
    return rows * ranks + 3 * rows + 2 * ranks


@numba.njit(cache=True, _nrt=False)
def admits_world_into(low, high, sizes, capacity, start, work):
    """Whether some ``x`` with ``low <= x <= high`` (hands x ranks) has row sums ``sizes``
    and column sums at most ``capacity`` (the unseen cards of each rank; the pool holds
    the rest). A maximum flow from the hands to the ranks: a greedy fill, then augmenting
    paths (the hands and ranks are few, so each search is short). The fill takes as much
    as it can of ``start`` first, a world close to one that fits, such as the true hands
    (or no rows): then few paths are left to find. ``work``: at least ``world_work_size``
    integers."""
    rows, ranks = low.shape
    flow = work[: rows * ranks].reshape((rows, ranks))
    at = rows * ranks
    need = work[at : at + rows]
    room = work[at + rows : at + rows + ranks]
    from_rank = work[at + rows + ranks : at + rows + 2 * ranks]  # the hand each rank came from
    from_row = work[at + rows + 2 * ranks : at + 2 * rows + 2 * ranks]  # the rank (-1: start)
    queue = work[at + 2 * rows + 2 * ranks : at + 3 * rows + 2 * ranks]
    for rank in range(ranks):
        room[rank] = capacity[rank]
    for k in range(rows):
        need[k] = sizes[k]
        for rank in range(ranks):
            flow[k, rank] = 0
            if high[k, rank] < low[k, rank]:
                return False
            need[k] -= low[k, rank]
            room[rank] -= low[k, rank]
        if need[k] < 0:
            return False
    for rank in range(ranks):
        if room[rank] < 0:
            return False
    if start.shape[0] == rows:
        for k in range(rows):
            for rank in range(ranks):
                wanted = min(start[k, rank], high[k, rank]) - low[k, rank]
                push = min(need[k], room[rank], wanted)
                if push > 0:
                    flow[k, rank] += push
                    need[k] -= push
                    room[rank] -= push
    for k in range(rows):
        for rank in range(ranks):
            push = min(need[k], room[rank], high[k, rank] - low[k, rank] - flow[k, rank])
            if push > 0:
                flow[k, rank] += push
                need[k] -= push
                room[rank] -= push
    # Augmenting paths: hand -> rank (spare edge) -> hand holding flow of that rank -> ...
    for start in range(rows):
        while need[start] > 0:
            # Plain loops: numba's slice assignment costs several times as much.
            for rank in range(ranks):
                from_rank[rank] = -2
            for k in range(rows):
                from_row[k] = -2
            from_row[start] = -1
            queue[0] = start
            head, tail, found = 0, 1, -1
            while head < tail and found < 0:
                k = queue[head]
                head += 1
                for rank in range(ranks):
                    if from_rank[rank] != -2 or flow[k, rank] >= high[k, rank] - low[k, rank]:
                        continue
                    from_rank[rank] = k
                    if room[rank] > 0:
                        found = rank
                        break
                    for other in range(rows):
                        if from_row[other] == -2 and flow[other, rank] > 0:
                            from_row[other] = rank
                            queue[tail] = other
                            tail += 1
            if found < 0:
                return False
            # Push one card along the path, back to the start.
            rank = found
            room[rank] -= 1
            while True:
                k = from_rank[rank]
                flow[k, rank] += 1
                back = from_row[k]
                if back < 0:
                    break
                flow[k, back] -= 1
                rank = back
            need[start] -= 1
    return True


@numba.njit(cache=True, _nrt=False)
def card_bounds_into(
    known_holds, known_lacks, laid, card_copies, own_cards, low, high, pool, seat, holds, lacks
):
    """Exact-card asks: which single cards each opponent of seat ``seat`` is proved to hold
    (``holds``) or to hold none of (``lacks``), both opponents from the viewer's left x card
    indices, 0/1. It reads the public facts (``known_holds`` / ``known_lacks``, absolute
    seats x cards; ``laid``: the card's copies are in catches), the viewer's own cards and
    its rank bounds ``low`` / ``high`` (from ``opponent_bounds_into``).

    A card is held where the table saw it arrive; it is lacked where the table proved it,
    where it is laid, or where the opponent can hold none of its rank. Then, until nothing
    changes (each step only adds facts, so it ends):

    1. a card whose copies are all placed, in the viewer's hand or proved in other hands,
       is lacked by the rest; with the pool empty, a card's copies not placed yet are held
       by the opponents left that may hold it, when there are exactly as many of them;
    2. an opponent proved to hold at least as many of a rank as the cards of it it may
       hold holds them all; one whose held cards of a rank reach its most holds no other.

    Every hand holds at most one copy of a card index (one deck; the two jokers only in
    pairs, which are laid together), so each answer is 0 or 1."""
    players, cards = known_holds.shape
    opponents = players - 1
    for k in range(opponents):
        other = seat + 1 + k
        other = other - players if other >= players else other
        for card in range(cards):
            held = known_holds[other, card] != 0
            holds[k, card] = 1 if held else 0
            ruled_out = known_lacks[other, card] or laid[card] or high[k, card // 4] == 0
            lacks[k, card] = 1 if ruled_out and not held else 0
    changed = True
    while changed:
        changed = False
        for card in range(cards):
            if laid[card]:
                continue
            placed = own_cards[card]
            open_seats = 0
            for k in range(opponents):
                placed += holds[k, card]
                open_seats += 1 - holds[k, card] - lacks[k, card]
            left = card_copies[card] - placed
            if open_seats and (left <= 0 or (pool == 0 and open_seats == left)):
                for k in range(opponents):
                    if not holds[k, card] and not lacks[k, card]:
                        if left <= 0:
                            lacks[k, card] = 1
                        else:
                            holds[k, card] = 1
                changed = True
        for k in range(opponents):
            for rank in range(low.shape[1]):
                first = 4 * rank
                last = min(first + 4, cards)
                held = 0
                open_cards = 0
                for card in range(first, last):
                    held += holds[k, card]
                    open_cards += 1 - holds[k, card] - lacks[k, card]
                if not open_cards:
                    continue
                if low[k, rank] >= held + open_cards:
                    for card in range(first, last):
                        if not lacks[k, card]:
                            holds[k, card] = 1
                    changed = True
                elif held >= high[k, rank]:
                    for card in range(first, last):
                        if not holds[k, card]:
                            lacks[k, card] = 1
                    changed = True
