"""The compiled part of the world sampler (``gofish_env.worlds``): the public history as
per-seat count constraints, a search for a first consistent world, and a Markov chain
that moves between consistent worlds.

A world gives a rank to every slot a card came from: each hand as dealt, each card drawn,
each card still in the pool. ``assign[slot]`` is that rank. Each seat's history is a list
of operations on its counts, in the order of the public log:

- ``DEALT``: the dealt hand (the seat's dealt slots, counted in ``dealt_counts``);
- ``DRAW``: one card from a slot (shown, private, or an empty hand's draw);
- ``GAIN``: cards received on a hit; ``GIVE``: cards handed over on a hit (the count
  held must be exactly that), ``NONE``: a miss (none held), ``HAS``: an ask (at least one
  held), ``CATCH``: a catch laid (a full set held);
- ``MOST``: an ask the model of the others' play weighs (``seat_energy``): no
  constraint, a weight on worlds where other ranks outnumbered the rank asked (its value:
  the ranks no other seat could hold, left out, as bits);
- ``ends`` marks the last operation of a group (a deal, a hit received, a draw, with the
  catches they complete): after it no rank may hold a full set, or it would have been laid.

A world is consistent when every (seat, rank) count follows its operations without a
violation and no private draw is the rank asked for (it would have been shown). The
random numbers come from a SplitMix64 stream held in a one-element array, so a sampler's
output depends on its seed only.
"""

from __future__ import annotations

import numba
import numpy as np

import gofish_env.compile_interrupts  # noqa: F401  (Ctrl-C while compiling)

DEALT, DRAW, GAIN, CATCH, HAS, NONE, GIVE, MOST = range(8)
NO_SEAT = -1  # the owner of a slot still in the pool

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@numba.njit(cache=True)
def next_random(state):
    """The next 64 bits of the SplitMix64 stream in ``state`` (a uint64 array of one)."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True)
def below(state, n):
    """A random integer in 0 .. n - 1 (n is small: the modulo's bias is below 2**-50)."""
    return np.int64(next_random(state) % np.uint64(n))


@numba.njit(cache=True)
def uniform(state):
    """A random float in [0, 1)."""
    return (next_random(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@numba.njit(cache=True)
def rank_timelines(ops, op_start, ranks):
    """Each (seat, rank) history's own operations (``timeline_violations`` reads them): the
    seat's draws and its operations on that rank, in order, after a first row that changes
    nothing. A row's last column counts the group ends from it to the next row: the count
    cannot change between two rows, so a full hand is counted as often as in the whole
    list. The lines of (seat, rank) are ``lines[line_start[seat * ranks + rank]:
    line_start[seat * ranks + rank + 1]]``."""
    seats = op_start.size - 1
    line_start = np.zeros(seats * ranks + 1, np.int64)
    per_rank = np.zeros(ranks, np.int64)
    total = 0
    for seat in range(seats):
        per_rank[:] = 0
        draws = 0
        for i in range(op_start[seat], op_start[seat + 1]):
            if ops[i, 0] == DRAW:
                draws += 1
            elif _counted(ops[i, 0]):
                per_rank[ops[i, 1]] += 1
        for rank in range(ranks):
            line_start[seat * ranks + rank] = total
            total += 1 + draws + per_rank[rank]
    line_start[seats * ranks] = total
    lines = np.zeros((total, 4), np.int64)
    for seat in range(seats):
        for rank in range(ranks):
            row = line_start[seat * ranks + rank]
            lines[row, 0], lines[row, 1] = DEALT, -1
            for i in range(op_start[seat], op_start[seat + 1]):
                kind = ops[i, 0]
                if kind == DRAW or (_counted(kind) and ops[i, 1] == rank):
                    row += 1
                    lines[row, 0], lines[row, 1], lines[row, 2] = kind, ops[i, 1], ops[i, 2]
                lines[row, 3] += ops[i, 3]
    return lines, line_start


@numba.njit(cache=True)
def energy_operations(ops, op_start):
    """The operations ``seat_energy`` reads (those that move a count, and ``MOST``), seat
    by seat as ``ops`` and ``op_start`` hold them."""
    seats = op_start.size - 1
    kept = np.zeros(ops.shape[0], np.bool_)
    energy_start = np.zeros(seats + 1, np.int64)
    for seat in range(seats):
        energy_start[seat + 1] = energy_start[seat]
        for i in range(op_start[seat], op_start[seat + 1]):
            kind = ops[i, 0]
            if kind in (DRAW, GAIN, GIVE, CATCH, MOST):
                kept[i] = True
                energy_start[seat + 1] += 1
    return ops[kept], energy_start


@numba.njit(cache=True)
def _counted(kind):
    """Whether an operation on a rank bears on that rank's count (``MOST`` does not)."""
    return kind in (GAIN, CATCH, HAS, NONE, GIVE)


@numba.njit(cache=True, inline="always")
def _count_after(kind, value, count, rank, assign, set_size):
    """A line's count of ``rank`` after one of its rows (``count`` before it)."""
    if kind == DRAW:
        return count + (assign[value] == rank)
    if kind == GAIN:
        return count + value
    if kind == CATCH:
        return count - set_size
    if kind == GIVE:
        return 0
    return count


@numba.njit(cache=True)
def timeline_violations(seat, rank, assign, dealt_counts, lines, line_start, set_size, first_only):
    """How far the counts of ``rank`` in ``seat``'s hand stray from its history (its
    ``rank_timelines`` lines): 0 when they follow it (``first_only``: stop at the first
    violation, returning 1)."""
    count = dealt_counts[seat, rank]
    line = seat * dealt_counts.shape[1] + rank
    bad = 0
    for i in range(line_start[line], line_start[line + 1]):
        kind, value = lines[i, 0], lines[i, 2]
        if kind == CATCH and count < set_size:
            bad += set_size - count
        elif kind == HAS and count < 1:
            bad += 1 - count
        elif kind == NONE and count != 0:
            bad += abs(count)
        elif kind == GIVE and count != value:
            bad += abs(count - value)
        count = _count_after(kind, value, count, rank, assign, set_size)
        if lines[i, 3] and count >= set_size:
            bad += lines[i, 3] * (count - set_size + 1)
        if bad and first_only:
            return 1
    return bad


@numba.njit(cache=True)
def _swap(i, j, assign, dealt_counts, slot_seat, slot_dealt):
    a, b = assign[i], assign[j]
    assign[i], assign[j] = b, a
    if slot_dealt[i]:
        dealt_counts[slot_seat[i], a] -= 1
        dealt_counts[slot_seat[i], b] += 1
    if slot_dealt[j]:
        dealt_counts[slot_seat[j], b] -= 1
        dealt_counts[slot_seat[j], a] += 1


@numba.njit(cache=True)
def _affected_violations(i, j, assign, dealt_counts, lines, line_start, slot_seat, set_size):
    """Violations of the (seat, rank) histories a swap of slots i and j touches (the local
    search's measure; the chain checks a swap with ``_swap_breaks``)."""
    a, b = assign[i], assign[j]
    bad = 0
    for slot in (i, j):
        seat = slot_seat[slot]
        if seat == NO_SEAT:
            continue
        if slot == j and seat == slot_seat[i]:
            continue  # both slots in one hand: its two ranks are counted once
        for rank in (a, b):
            bad += timeline_violations(
                seat, rank, assign, dealt_counts, lines, line_start, set_size, False
            )
    return bad


@numba.njit(cache=True)
def total_violations(assign, dealt_counts, lines, line_start, slot_rank_forbidden, set_size):
    """Every history's violations, and a point for each private draw of the rank asked."""
    seats, ranks = dealt_counts.shape
    bad = 0
    for seat in range(seats):
        for rank in range(ranks):
            bad += timeline_violations(
                seat, rank, assign, dealt_counts, lines, line_start, set_size, False
            )
    for slot in range(assign.size):
        if assign[slot] == slot_rank_forbidden[slot]:
            bad += 1
    return bad


@numba.njit(cache=True)
def find_consistent(
    assign,
    dealt_counts,
    lines,
    line_start,
    slot_seat,
    slot_dealt,
    slot_rank_forbidden,
    free,
    free_group,
    set_size,
    state,
    max_moves,
    noise,
    temperature,
):
    """Move the free slots' ranks (swaps within a group) until the world is consistent: a
    local search that repairs one violated history (seat, rank) at a time, taking the best
    of a few swaps that move that rank into the hand, out of it, or to another time. To
    leave local minima, one move in ``noise`` (0: none) makes the first of those swaps
    whatever it breaks, and a best swap that adds ``d`` violations is made with chance
    ``exp(-d / temperature)`` (0: never). Returns the moves used, or -1 if ``max_moves``
    were not enough (the caller starts afresh from another ``greedy_fill``)."""
    seats, ranks = dealt_counts.shape
    total = total_violations(assign, dealt_counts, lines, line_start, slot_rank_forbidden, set_size)
    bad_pairs = np.empty((seats * ranks + free.size, 2), np.int64)
    for move in range(max_moves):
        if total == 0:
            return move
        # A violated history (seat, rank), or a private draw holding the rank asked.
        found = 0
        for seat in range(seats):
            for rank in range(ranks):
                if timeline_violations(
                    seat, rank, assign, dealt_counts, lines, line_start, set_size, True
                ):
                    bad_pairs[found, 0] = seat
                    bad_pairs[found, 1] = rank
                    found += 1
        for k in range(free.size):
            slot = free[k]
            if assign[slot] == slot_rank_forbidden[slot]:
                bad_pairs[found, 0] = -2 - slot
                bad_pairs[found, 1] = assign[slot]
                found += 1
        if found == 0:  # cannot happen while ``total`` counts what is found here
            break
        pick = below(state, found)
        seat, rank = bad_pairs[pick, 0], bad_pairs[pick, 1]
        best_delta, best_i, best_j = 1 << 30, -1, -1
        random_move = noise > 0 and below(state, noise) == 0
        for _ in range(CANDIDATES):
            # Bring the rank in (j holds it), or move it out or to another time (i does).
            inward = below(state, 2) == 0
            if seat <= -2:
                i, inward = -2 - seat, False
            else:
                i = _random_slot(slot_seat, seat, rank, not inward, assign, free, state)
                if i < 0:
                    continue
            j = _random_slot(free_group, free_group[i], rank, inward, assign, free, state)
            if j < 0 or j == i or assign[j] == assign[i]:
                continue
            delta = _swap_delta(
                i,
                j,
                assign,
                dealt_counts,
                lines,
                line_start,
                slot_seat,
                slot_dealt,
                slot_rank_forbidden,
                set_size,
            )
            if delta < best_delta or random_move:
                best_delta, best_i, best_j = delta, i, j
            if random_move:
                break
        if best_i < 0:
            continue
        if (
            best_delta <= 0
            or random_move
            or (temperature > 0 and uniform(state) < np.exp(-best_delta / temperature))
        ):
            _swap(best_i, best_j, assign, dealt_counts, slot_seat, slot_dealt)
            total += best_delta
    return -1 if total else max_moves


CANDIDATES = 12  # swaps weighed per move


@numba.njit(cache=True)
def _swap_delta(
    i, j, assign, dealt_counts, lines, line_start, slot_seat, slot_dealt, forbidden, set_size
):
    """How many violations a swap of slots i and j adds (negative: removes)."""
    before = _affected_violations(
        i, j, assign, dealt_counts, lines, line_start, slot_seat, set_size
    )
    before += (assign[i] == forbidden[i]) + (assign[j] == forbidden[j])
    _swap(i, j, assign, dealt_counts, slot_seat, slot_dealt)
    after = _affected_violations(i, j, assign, dealt_counts, lines, line_start, slot_seat, set_size)
    after += (assign[i] == forbidden[i]) + (assign[j] == forbidden[j])
    _swap(i, j, assign, dealt_counts, slot_seat, slot_dealt)
    return after - before


@numba.njit(cache=True)
def _random_slot(label, wanted, rank, holding, assign, free, state):
    """A random free slot whose ``label`` (its seat, or its group) is ``wanted`` and that
    holds ``rank`` (``holding``) or another rank; -1 if there is none."""
    count = 0
    for k in range(free.size):
        slot = free[k]
        if label[slot] == wanted and (assign[slot] == rank) == holding:
            count += 1
    if count == 0:
        return -1
    pick = below(state, count)
    for k in range(free.size):
        slot = free[k]
        if label[slot] == wanted and (assign[slot] == rank) == holding:
            if pick == 0:
                return slot
            pick -= 1
    return -1


@numba.njit(cache=True)
def seat_energy(seat, assign, dealt_counts, ops, op_start, set_size, counts):
    """How far ``seat``'s asks marked ``MOST`` stray from asking the rank it held most of:
    at each, the cards by which other ranks outnumbered the rank asked (``counts`` is a
    scratch row of ranks). ``ops`` may leave out what does not change a count (``HAS``,
    ``NONE``): ``HistoryModel.energy_ops``."""
    counts[:] = dealt_counts[seat]
    energy = 0
    for i in range(op_start[seat], op_start[seat + 1]):
        kind, rank, value = ops[i, 0], ops[i, 1], ops[i, 2]
        if kind == DRAW:
            counts[assign[value]] += 1
        elif kind == GAIN:
            counts[rank] += value
        elif kind == GIVE:
            counts[rank] = 0
        elif kind == CATCH:
            counts[rank] -= set_size
        elif kind == MOST:  # ``value``: the ranks left out, as bits
            for other in range(counts.size):
                if counts[other] > counts[rank] and not (value >> other) & 1:
                    energy += counts[other] - counts[rank]
    return energy


@numba.njit(cache=True)
def slot_rows(lines, line_start, slots, ranks):
    """[slots, ranks]: the row of each drawn slot's draw in its seat's line of each rank,
    counted from the line's start (0, the line's first row, for a dealt slot)."""
    rows = np.zeros((slots, ranks), np.int64)
    for line in range(line_start.size - 1):
        for row in range(line_start[line], line_start[line + 1]):
            if lines[row, 0] == DRAW:
                rows[lines[row, 2], line % ranks] = row - line_start[line]
    return rows


@numba.njit(cache=True)
def chain_cache(assign, dealt_counts, lines, line_start, energy_ops, energy_start, set_size, beta):
    """What the chain keeps about its world from swap to swap: each line row's count
    after the row (``post``, in ``lines``' order; the count before a row is the one after
    the row before it, and a line's first row changes nothing), which hands have
    weighed asks and their energy now (both by seat + 1; 0 is the pool, never weighed; with
    ``beta`` 0 none is), and a scratch row of ranks."""
    ranks = dealt_counts.shape[1]
    post = np.empty(lines.shape[0], np.int64)
    for line in range(line_start.size - 1):
        rank = line % ranks
        count = dealt_counts[line // ranks, rank]
        for row in range(line_start[line], line_start[line + 1]):
            count = _count_after(lines[row, 0], lines[row, 2], count, rank, assign, set_size)
            post[row] = count
    seats = energy_start.size - 1
    weighed = np.zeros(seats + 1, np.bool_)
    energy = np.zeros(seats + 1, np.int64)
    counts = np.zeros(ranks, np.int64)
    if beta > 0:
        for seat in range(seats):
            for k in range(energy_start[seat], energy_start[seat + 1]):
                if energy_ops[k, 0] == MOST:
                    weighed[seat + 1] = True
            if weighed[seat + 1]:
                energy[seat + 1] = seat_energy(
                    seat, assign, dealt_counts, energy_ops, energy_start, set_size, counts
                )
    return post, weighed, energy, counts


@numba.njit(cache=True)
def _shifted(line, r1, d1, r2, d2, lines, line_start, post, set_size, commit):
    """Whether a consistent world's line breaks a rule once its count moves by ``d1``
    from row ``r1`` and by ``d2`` from row ``r2`` (a row's own draw moves the count after
    it, and both counts of the rows after it); with ``commit``, move the kept counts
    instead. Rows before the first move, and from where the moves cancel, are as they were:
    consistent."""
    start, end = line_start[line], line_start[line + 1]
    first = r1 if d2 == 0 or r1 < r2 else r2
    last = r1 if d2 == 0 or r1 > r2 else r2
    for k in range(first, end - start):
        moved_before = (d1 if r1 < k else 0) + (d2 if r2 < k else 0)
        moved_after = (d1 if r1 <= k else 0) + (d2 if r2 <= k else 0)
        if k > last and moved_before == 0:
            return False
        row = start + k
        if commit:
            post[row] += moved_after
            continue
        kind = lines[row, 0]
        count = post[row - 1] + moved_before if k > 0 else 0  # the first row is no check
        if kind == HAS:
            broken = count < 1
        elif kind == NONE:
            broken = count != 0
        elif kind == GIVE:  # it held exactly the count handed over
            broken = moved_before != 0
        elif kind == CATCH:
            broken = count < set_size
        else:
            broken = False
        if broken or (lines[row, 3] and post[row] + moved_after >= set_size):
            return True
    return False


@numba.njit(cache=True)
def _swap_breaks(i, j, a, b, slot_seat, slot_row, lines, line_start, post, set_size, commit):
    """Whether slot i going from rank a to b and slot j from b to a breaks a rule in the
    lines they touch (``commit``: move the kept counts of those lines instead)."""
    ranks = slot_row.shape[1]
    together = slot_seat[i] != NO_SEAT and slot_seat[i] == slot_seat[j]
    # Slot i's seat loses an a and gains a b; slot j's seat loses a b and gains an a.
    for k in range(4):
        slot = i if k < 2 else j
        seat = slot_seat[slot]
        if seat == NO_SEAT or (together and k >= 2):
            continue
        rank = a if k == 0 or k == 3 else b
        move = -1 if k % 2 == 0 else 1
        other_row, other_move = 0, 0
        if together:  # slot j moves the same line the other way
            other_row, other_move = slot_row[j, rank], -move
        if _shifted(
            seat * ranks + rank,
            slot_row[slot, rank],
            move,
            other_row,
            other_move,
            lines,
            line_start,
            post,
            set_size,
            commit,
        ):
            return True
    return False


@numba.njit(cache=True)
def walk(
    assign,
    dealt_counts,
    lines,
    line_start,
    slot_row,
    energy_ops,
    energy_start,
    slot_seat,
    slot_dealt,
    slot_rank_forbidden,
    movers,
    free,
    free_group,
    set_size,
    state,
    steps,
    beta,
    cache,
):
    """``steps`` proposals of a Metropolis chain over consistent worlds: swap the ranks of
    a random slot in a hand (``movers``) and a random free slot of the same group (a hand
    or the pool); keep the swap if the world stays consistent. The proposal is symmetric
    and every consistent world has the same target weight, so the chain leaves the uniform
    distribution over consistent worlds (slot by slot) unchanged. With ``beta`` > 0 a world
    is weighted ``exp(-beta * energy)`` (``seat_energy``, reading ``energy_ops``: the
    operations it counts), and a consistent swap is kept with the Metropolis chance.
    ``cache`` is the world's ``chain_cache``, kept up to date: a swap is checked against
    the kept counts of the lines it touches (``_swap_breaks``), and a weighed hand's energy
    is worked out only after the swap. Returns swaps kept."""
    post, weighed, energy, counts = cache
    kept = 0
    for _ in range(steps):
        i = movers[below(state, movers.size)]
        j = free[below(state, free.size)]
        if i == j or free_group[i] != free_group[j]:
            continue
        a, b = assign[i], assign[j]
        if a == b or slot_rank_forbidden[i] == b or slot_rank_forbidden[j] == a:
            continue
        if slot_seat[i] == slot_seat[j] and slot_dealt[i] and slot_dealt[j]:
            continue  # two cards of one dealt hand: the same counts
        if _swap_breaks(i, j, a, b, slot_seat, slot_row, lines, line_start, post, set_size, False):
            continue
        _swap(i, j, assign, dealt_counts, slot_seat, slot_dealt)
        hand_i, hand_j = slot_seat[i] + 1, slot_seat[j] + 1
        weigh_i, weigh_j = weighed[hand_i], weighed[hand_j] and hand_j != hand_i
        if beta > 0 and (weigh_i or weigh_j):
            rise, after_i, after_j = 0, 0, 0
            if weigh_i:
                after_i = seat_energy(
                    hand_i - 1, assign, dealt_counts, energy_ops, energy_start, set_size, counts
                )
                rise += after_i - energy[hand_i]
            if weigh_j:
                after_j = seat_energy(
                    hand_j - 1, assign, dealt_counts, energy_ops, energy_start, set_size, counts
                )
                rise += after_j - energy[hand_j]
            if rise > 0 and uniform(state) >= np.exp(-beta * rise):
                _swap(i, j, assign, dealt_counts, slot_seat, slot_dealt)
                continue
            if weigh_i:
                energy[hand_i] = after_i
            if weigh_j:
                energy[hand_j] = after_j
        _swap_breaks(i, j, a, b, slot_seat, slot_row, lines, line_start, post, set_size, True)
        kept += 1
    return kept


@numba.njit(cache=True)
def current_counts(assign, dealt_counts, slot_seat, draw_slots, change, out):
    """Each seat's hand now: dealt + drawn + the public changes (``change``: cards received
    minus handed over minus laid), into ``out`` (seats x ranks)."""
    out[:] = dealt_counts + change
    for k in range(draw_slots.size):
        slot = draw_slots[k]
        out[slot_seat[slot], assign[slot]] += 1


@numba.njit(cache=True)
def shuffle_pool(assign, pool_slots, state, out):
    """The pool's ranks in a uniformly random order (its slots carry no constraint)."""
    count = pool_slots.size
    for k in range(count):
        out[k] = assign[pool_slots[k]]
    for k in range(count - 1, 0, -1):
        other = below(state, k + 1)
        out[k], out[other] = out[other], out[k]


@numba.njit(cache=True)
def sample_worlds(
    assign,
    dealt_counts,
    lines,
    line_start,
    slot_row,
    energy_ops,
    energy_start,
    slot_seat,
    slot_dealt,
    slot_rank_forbidden,
    movers,
    free,
    free_group,
    set_size,
    state,
    steps,
    beta,
    draw_slots,
    change,
    pool_slots,
    hands,
    pools,
    deals,
):
    """``hands.shape[0]`` worlds in one call: before each, ``steps`` proposals of ``walk``
    (none if no slot moves); then each seat's hand now (``current_counts``), the pool in a
    random order (``shuffle_pool``) and, if ``deals`` has rows, the whole assignment with
    that pool order. The same stream as one call of each per world, without a return to
    Python between worlds."""
    cache = chain_cache(
        assign, dealt_counts, lines, line_start, energy_ops, energy_start, set_size, beta
    )
    for k in range(hands.shape[0]):
        if movers.size:
            walk(
                assign,
                dealt_counts,
                lines,
                line_start,
                slot_row,
                energy_ops,
                energy_start,
                slot_seat,
                slot_dealt,
                slot_rank_forbidden,
                movers,
                free,
                free_group,
                set_size,
                state,
                steps,
                beta,
                cache,
            )
        current_counts(assign, dealt_counts, slot_seat, draw_slots, change, hands[k])
        shuffle_pool(assign, pool_slots, state, pools[k])
        if deals.shape[0]:
            deals[k] = assign
            for p in range(pool_slots.size):
                deals[k, pool_slots[p]] = pools[k, p]


@numba.njit(cache=True)
def greedy_fill(
    assign,
    dealt_counts,
    budget,
    ops,
    op_start,
    lines,
    line_start,
    slot_seat,
    slot_op,
    slot_dealt,
    slot_rank_forbidden,
    free,
    free_group,
    set_size,
    state,
):
    """A first world close to consistent, for ``find_consistent`` to finish: the free
    slots (``assign`` -1) are filled from each group's ``budget`` (ranks x count). First,
    seat by seat through its history, each ask, hit handed over or catch that needs more of
    a rank than the filled slots give takes it into the latest open slot of the seat since
    that rank was last seen to be empty; then the other slots of the hands, oldest first,
    take a rank that breaks nothing (a random one among those); the pool takes the rest."""
    seats, ranks = dealt_counts.shape
    counts = np.zeros(ranks, np.int64)
    emptied_at = np.zeros(ranks, np.int64)
    for seat in range(seats):
        counts[:] = 0
        emptied_at[:] = op_start[seat]
        for i in range(op_start[seat], op_start[seat + 1]):
            kind, rank, value = ops[i, 0], ops[i, 1], ops[i, 2]
            need = 0
            if kind == DRAW:
                if assign[value] >= 0:
                    counts[assign[value]] += 1
            elif kind == GAIN:
                counts[rank] += value
            elif kind == HAS:
                need = 1 - counts[rank]
            elif kind == GIVE:
                need = value - counts[rank]
            elif kind == CATCH:
                need = set_size - counts[rank]
            while need > 0:
                slot = _open_slot(
                    seat,
                    rank,
                    emptied_at[rank],
                    i,
                    assign,
                    budget,
                    slot_seat,
                    slot_op,
                    slot_rank_forbidden,
                    free,
                    free_group,
                    state,
                )
                if slot < 0:
                    break
                _fill(slot, rank, assign, dealt_counts, budget, slot_seat, slot_dealt, free_group)
                counts[rank] += 1
                need -= 1
            if kind in (GIVE, NONE):
                counts[rank] = 0
                emptied_at[rank] = i
            elif kind == CATCH:
                counts[rank] -= set_size
                emptied_at[rank] = i
    # The other slots of the hands, dealt cards first, then draws in order.
    for dealt_first in (True, False):
        for k in range(free.size):
            slot = free[k]
            if assign[slot] >= 0 or slot_seat[slot] == NO_SEAT or slot_dealt[slot] != dealt_first:
                continue
            seat, group = slot_seat[slot], free_group[slot]
            best, best_bad, ties = -1, 1 << 30, 0
            for rank in range(ranks):
                if budget[group, rank] <= 0 or rank == slot_rank_forbidden[slot]:
                    continue
                assign[slot] = rank
                if slot_dealt[slot]:
                    dealt_counts[seat, rank] += 1
                bad = timeline_violations(
                    seat, rank, assign, dealt_counts, lines, line_start, set_size, False
                )
                if slot_dealt[slot]:
                    dealt_counts[seat, rank] -= 1
                assign[slot] = -1
                if bad < best_bad:
                    best, best_bad, ties = rank, bad, 1
                elif bad == best_bad:
                    ties += 1
                    if below(state, ties) == 0:
                        best = rank
            if best < 0:  # only the forbidden rank is left: the search will move it
                for rank in range(ranks):
                    if budget[group, rank] > 0:
                        best = rank
            _fill(slot, best, assign, dealt_counts, budget, slot_seat, slot_dealt, free_group)
    for k in range(free.size):
        slot = free[k]
        if assign[slot] < 0:
            group = free_group[slot]
            pick = below(state, budget[group].sum())
            for rank in range(ranks):
                pick -= budget[group, rank]
                if pick < 0:
                    _fill(
                        slot,
                        rank,
                        assign,
                        dealt_counts,
                        budget,
                        slot_seat,
                        slot_dealt,
                        free_group,
                    )
                    break


@numba.njit(cache=True)
def _fill(slot, rank, assign, dealt_counts, budget, slot_seat, slot_dealt, free_group):
    assign[slot] = rank
    budget[free_group[slot], rank] -= 1
    if slot_dealt[slot]:
        dealt_counts[slot_seat[slot], rank] += 1


@numba.njit(cache=True)
def _open_slot(
    seat,
    rank,
    since,
    before,
    assign,
    budget,
    slot_seat,
    slot_op,
    forbidden,
    free,
    free_group,
    state,
):
    """An open slot of ``seat`` that arrived in ``[since, before)`` (its history's operation
    indices; dealt cards arrive at the first) and may take ``rank``: the latest one half the
    time, else a random one; -1 if none."""
    best, best_op, count = -1, -1, 0
    for k in range(free.size):
        slot = free[k]
        if slot_seat[slot] != seat or assign[slot] >= 0 or forbidden[slot] == rank:
            continue
        op = slot_op[slot]
        if since <= op < before and budget[free_group[slot], rank] > 0:
            count += 1
            if op > best_op:
                best, best_op = slot, op
    if count < 2 or below(state, 2) == 0:
        return best
    pick = below(state, count)
    for k in range(free.size):
        slot = free[k]
        if slot_seat[slot] != seat or assign[slot] >= 0 or forbidden[slot] == rank:
            continue
        if since <= slot_op[slot] < before and budget[free_group[slot], rank] > 0:
            if pick == 0:
                return slot
            pick -= 1
    return best
