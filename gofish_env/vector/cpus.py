"""The ``random``, ``easy``, ``normal``, ``hard`` and ``expert`` CPUs as numba kernels over
a batch.

Each level is ``gofish_env.cpus`` written once more: the same decision rule over the same
information (the seat's own hand, the public knowledge bounds, what the public asks told),
with the same candidates in the same order. A random choice among n candidates is
``floor(u * n)`` and a choice weighted by the hand's counts is Python's
``random.choices`` walk, with u from the seat's own generator: given a ``random.Random``
that returns the same u and picks ``seq[int(random() * len(seq))]``, the Python CPU makes
the very same choices (tests/test_vector_cpus.py plays both side by side). Nothing here
reads another hand or the pool: every input is public or the seat's own.
"""

from __future__ import annotations

import numba
import numpy as np

import gofish_env.compile_interrupts  # noqa: F401  (Ctrl-C while compiling)
from gofish_env.bounds import (
    card_bounds_into,
    opponent_bounds_into,
    sure_hit_bounds_into,
    sure_hit_scratch_size,
)
from gofish_env.cpus import (
    COMPILED_LEVELS,
    LIKELY_HIT,
    MAY_HIT,
    RECENT_ASKS,
    SURE_CATCH,
    SURE_HIT,
    ExpertCPU,
)
from gofish_env.vector.engine import below, seed_state, uniform
from gofish_env.vector.structs import borrowing_builder, struct_types
from gofish_env.vector.views import legal_actions, legal_ask_at, legal_sets, true_hands

LEVEL_CODES = {name: code for code, name in enumerate(COMPILED_LEVELS)}
NOT_COMPILED = -1  # a seat played by something else (the learner, a Python player)

CPU_FIELDS = (
    "level",  # [N, P] LEVEL_CODES, or NOT_COMPILED
    "rng",  # [N * P] each seat's generator (splitmix64 state), game g seat s at g * P + s
    "plan",  # [N, P] easy: the action it keeps asking (-1: none)
    "tried",  # [N, P, A] easy: asks tried since its hand last changed (empty pool)
    "hand",  # [N, P, R] easy: its hand when it last chose with the pool empty
    "has_hand",  # [N, P]
)
CPUState, CPUStateStructType = struct_types("CPUState", CPU_FIELDS, __name__)
_build_cpu_state = borrowing_builder(CPUStateStructType)


@numba.njit(cache=True, error_model="numpy")
def cpu_state_struct(state):
    """The struct the kernels get: the CPU state's arrays, borrowed (``structs``)."""
    return _build_cpu_state(state)


def allocate_cpus(num_games: int, players: int, ranks: int, actions: int) -> CPUState:
    return CPUState(
        np.full((num_games, players), NOT_COMPILED, np.int64),  # level
        np.zeros(num_games * players, np.uint64),  # rng
        np.full((num_games, players), -1, np.int64),  # plan
        np.zeros((num_games, players, actions), np.bool_),  # tried
        np.zeros((num_games, players, ranks), np.int64),  # hand
        np.zeros((num_games, players), np.bool_),  # has_hand
    )


@numba.njit(cache=True, error_model="numpy")
def forget(C, g):
    """``CPU.reset``: a new game, no plan (the generators are reseeded by the caller)."""
    C.plan[g] = -1
    C.tried[g] = False
    C.has_hand[g] = False


# ---------------------------------------------------------------------------- shared steps


@numba.njit(cache=True, inline="always", error_model="numpy")
def wanted_rank(K, action):
    """The rank an action names (``rank_of``)."""
    wanted = action % K.ask_count
    return wanted // 4 if K.card_asks else wanted


@numba.njit(cache=True, inline="always", error_model="numpy")
def group_runs(K, legal, count, starts, ranks):
    """``group_asks``: the legal actions grouped by (target, rank), as runs of ``legal``
    (the groups of one target and rank are contiguous); returns how many groups."""
    groups = 0
    for i in range(count):
        offset = legal[i] // K.ask_count
        rank = wanted_rank(K, legal[i])
        if (
            i == 0
            or offset != legal[starts[groups - 1]] // K.ask_count
            or rank != ranks[groups - 1]
        ):
            starts[groups] = i
            ranks[groups] = rank
            groups += 1
    starts[groups] = count
    return groups


@numba.njit(cache=True, inline="always", error_model="numpy")
def card_from_hand(rng, stream, own, candidates, count):
    """``cpus.card_from_hand``: a rank among ``candidates[:count]`` weighted by how many
    the hand holds (``random.choices``: the first cumulative weight above u * total)."""
    total = 0
    for i in range(count):
        total += own[candidates[i]]
    if total <= 0:
        return candidates[below(rng, stream, count)]
    point = uniform(rng, stream) * total
    cumulative = 0
    for i in range(count - 1):
        cumulative += own[candidates[i]]
        if point < cumulative:
            return candidates[i]
    return candidates[count - 1]


@numba.njit(cache=True, inline="always", error_model="numpy")
def distinct_ranks(K, ranks, groups, out):
    """The sorted distinct ranks of the groups; returns how many."""
    count = 0
    for rank in range(K.ranks):
        for k in range(groups):
            if ranks[k] == rank:
                out[count] = rank
                count += 1
                break
    return count


# ---------------------------------------------------------------------------- the levels


@numba.njit(cache=True, error_model="numpy")
def extra_size(K):
    """Scratch for the candidates of ``choose`` (easy may hear a group up to 8 times)."""
    return 2 * K.actions + 64


@numba.njit(cache=True, error_model="numpy")
def level_work(players, ranks, actions, cards):
    """The arrays ``_hard`` and ``_expert`` work in: the opponents' bounds, proved and
    assumed, and room for their true hands [5, P - 1, R]; the bounds by absolute seat and
    an assumed ``most`` [3, P, R]; the bounds' scratch; the unseen cards [R]; the fit's
    fill and caps [2, P + 1, R], its row targets [P + 1], the free cards and column
    factors [2, R]; the scores [A]; the single cards held and lacked [2, P - 1, C] (exact-card
    asks)."""
    return (
        np.empty((5, players - 1, ranks), np.int64),
        np.empty((3, players, ranks), np.int64),
        np.empty(sure_hit_scratch_size(players, ranks), np.int64),
        np.empty(ranks, np.int64),
        np.empty((2, players + 1, ranks)),
        np.empty(players + 1),
        np.empty((2, ranks)),
        np.empty(actions),
        np.empty((2, players - 1, cards), np.int64),
    )


@numba.njit(cache=True, error_model="numpy")
def choice_work(K):
    """The arrays ``choose`` works in, made once for a batch rather than at every decision
    (small as they are, ``expert`` made sixteen a decision): the legal actions, their
    groups' starts and ranks, the candidates (``extra_size``) and ``level_work``."""
    return (
        np.empty(K.actions, np.int64),
        np.empty(K.actions + 1, np.int64),
        np.empty(K.actions + 1, np.int64),
        np.empty(extra_size(K), np.int64),
        level_work(K.players, K.ranks, K.actions, K.card_indices),
    )


@numba.njit(cache=True, error_model="numpy")
def choose(S, K, C, g, seat, work):
    """The action the compiled CPU at ``seat`` of game ``g`` (the seat to move) takes,
    working in ``work`` (``choice_work``)."""
    legal, starts, ranks, extra = work[0], work[1], work[2], work[3]
    level = C.level[g, seat]
    rng = C.rng
    stream = g * K.players + seat
    if level == 0:
        return random_choice(S, K, C, g, seat)
    count = legal_actions(S, K, g, legal)
    groups = group_runs(K, legal, count, starts, ranks)
    if level == 1:
        return _easy(S, K, C, g, seat, stream, legal, count, starts, ranks, groups, extra)
    if level == 2:
        return _normal(S, K, g, seat, rng, stream, legal, count, starts, ranks, groups, extra)
    if level == 3:
        return _hard(S, K, g, seat, rng, stream, legal, starts, ranks, groups, extra, work[4])
    return _expert(S, K, g, seat, rng, stream, legal, starts, ranks, groups, extra, work[4])


@numba.njit(cache=True, inline="always", error_model="numpy")
def _random_legal(S, K, C, g, seat):
    """``RandomCPU.choose``'s pick, legal[below(count)], as (target offset, what is named),
    without making the list."""
    wanted, names, targets, opened = legal_sets(S, K, g)
    index = below(C.rng, g * K.players + seat, names * opened)
    return legal_ask_at(K, wanted, names, targets, index)


@numba.njit(cache=True, inline="always", error_model="numpy")
def random_choice(S, K, C, g, seat):
    """``RandomCPU.choose``: the action number."""
    offset, named = _random_legal(S, K, C, g, seat)
    return offset * K.ask_count + named


@numba.njit(cache=True, inline="always", error_model="numpy")
def random_ask(S, K, C, g, seat):
    """``random_choice`` as the ask itself, (target seat, what is named): random play
    needs no action number, and taking one apart costs divisions."""
    offset, named = _random_legal(S, K, C, g, seat)
    target = seat + 1 + offset
    return (target - K.players if target >= K.players else target), named


@numba.njit(cache=True, inline="always", error_model="numpy")
def _pick_in_group(rng, stream, legal, starts, k):
    """``rng.choice(groups[key])``."""
    size = starts[k + 1] - starts[k]
    return legal[starts[k] + below(rng, stream, size)]


@numba.njit(cache=True, error_model="numpy")
def _easy(S, K, C, g, seat, stream, legal, count, starts, ranks, groups, extra):
    """``EasyCPU.choose``."""
    rng = C.rng
    plan = C.plan[g, seat]
    if S.pool_len[g]:
        heard = extra  # the asks of the groups it was asked for, in the order asked
        heard_count = 0
        plan_heard = False
        for i in range(S.asked_me_len[g, seat]):
            asked_by, rank = S.asked_me[g, seat, i, 0], S.asked_me[g, seat, i, 1]
            offset = (asked_by - seat - 1) % K.players
            for k in range(groups):
                if ranks[k] == rank and legal[starts[k]] // K.ask_count == offset:
                    for j in range(starts[k], starts[k + 1]):
                        heard[heard_count] = legal[j]
                        plan_heard = plan_heard or legal[j] == plan
                        heard_count += 1
        answered = S.last[g, 0] == seat and (S.last[g, 3] > 0 or S.last[g, 5] > 0)
        if heard_count and not plan_heard:
            plan = heard[below(rng, stream, heard_count)]
        elif not _contains(legal, count, plan) or answered:
            candidates = extra
            held = distinct_ranks(K, ranks, groups, candidates)
            rank = card_from_hand(rng, stream, S.counts[g, seat], candidates, held)
            asks = extra
            size = 0
            for k in range(groups):
                if ranks[k] == rank:
                    for j in range(starts[k], starts[k + 1]):
                        asks[size] = legal[j]
                        size += 1
            plan = asks[below(rng, stream, size)]
        C.plan[g, seat] = plan
        return plan
    own = S.counts[g, seat]
    if not C.has_hand[g, seat] or not np.array_equal(C.hand[g, seat], own):
        C.tried[g, seat] = False
        C.hand[g, seat] = own
        C.has_hand[g, seat] = True
    fresh = extra
    size = 0
    for i in range(count):
        if not C.tried[g, seat, legal[i]]:
            fresh[size] = legal[i]
            size += 1
    if size == 0:  # every request tried: start over, but not with the one just made
        C.tried[g, seat] = False
        for i in range(count):
            if legal[i] != plan:
                fresh[size] = legal[i]
                size += 1
        if size == 0:
            for i in range(count):
                fresh[i] = legal[i]
            size = count
    if plan >= 0:
        rank = wanted_rank(K, plan)
        same = 0
        for i in range(size):
            if wanted_rank(K, fresh[i]) == rank:
                fresh[same] = fresh[i]
                same += 1
        if same:
            size = same
    plan = fresh[below(rng, stream, size)]
    C.tried[g, seat, plan] = True
    C.plan[g, seat] = plan
    return plan


@numba.njit(cache=True, inline="always", error_model="numpy")
def _contains(values, count, value):
    for i in range(count):  # noqa: SIM110 (numba compiles the loop, not a generator)
        if values[i] == value:
            return True
    return False


@numba.njit(cache=True, inline="always", error_model="numpy")
def _told(S, K, g, seat, offset, rank):
    """``NormalCPU.holds`` for one (target, rank): 1 holds, 0 does not, -1 not told
    recently."""
    target = (seat + 1 + offset) % K.players
    index = S.told_index[g, target, rank]
    if index < 0 or index < S.num_asks[g] - RECENT_ASKS:
        return -1
    return 1 if S.told_holds[g, target, rank] else 0


@numba.njit(cache=True, error_model="numpy")
def _normal(S, K, g, seat, rng, stream, legal, count, starts, ranks, groups, extra):
    """``NormalCPU.choose``."""
    keys = extra[: K.actions]
    size = 0
    for k in range(groups):
        if _told(S, K, g, seat, legal[starts[k]] // K.ask_count, ranks[k]) == 1:
            keys[size] = k
            size += 1
    if size:
        k = keys[below(rng, stream, size)]
        return _pick_in_group(rng, stream, legal, starts, k)
    candidates = extra[K.actions :]
    held = distinct_ranks(K, ranks, groups, candidates)
    own = S.counts[g, seat]
    while held:
        rank = card_from_hand(rng, stream, own, candidates, held)
        size = 0
        for k in range(groups):
            if ranks[k] == rank and _told(S, K, g, seat, legal[starts[k]] // K.ask_count, rank) < 0:
                keys[size] = k
                size += 1
        if size:
            k = keys[below(rng, stream, size)]
            return _pick_in_group(rng, stream, legal, starts, k)
        kept = 0  # ranks.remove(rank)
        for i in range(held):
            if candidates[i] != rank:
                candidates[kept] = candidates[i]
                kept += 1
        held = kept
    return legal[below(rng, stream, count)]


@numba.njit(cache=True, error_model="numpy")
def _hard(S, K, g, seat, rng, stream, legal, starts, ranks, groups, extra, work):
    """``HardCPU.choose``: the knowledge bounds the seat deduces, best score first; working
    in ``work`` (``level_work``)."""
    players = K.players
    own = S.counts[g, seat]
    low, high, scratch = work[0][0], work[0][1], work[2]
    opponent_bounds_into(
        S.least[g],
        S.most[g],
        S.sizes[g],
        own,
        S.unlaid[g],
        S.hand_cap,
        S.pool_len[g],
        K.max_copies,
        seat,
        low,
        high,
        scratch,
    )
    best = extra
    size = 0
    top = (np.int64(-1), np.int64(0), np.int64(0), np.int64(0))
    for k in range(groups):
        offset = legal[starts[k]] // K.ask_count
        rank = ranks[k]
        target = (seat + 1 + offset) % players
        proved, possible = low[offset, rank], high[offset, rank]
        held = np.int64(own[rank])
        hand = np.int64(S.sizes[g, target])
        if proved:
            score = (np.int64(2), held + proved, held, np.int64(0))
        elif possible:
            score = (np.int64(1), held, possible, hand)
        else:
            score = (np.int64(0), held, np.int64(0), hand)
        if score > top:
            top = score
            size = 0
        if score == top:
            best[size] = k
            size += 1
    return _ask_one_of(S, K, g, seat, rng, stream, legal, starts, best, size, work)


@numba.njit(cache=True, inline="always", error_model="numpy")
def _ask_one_of(S, K, g, seat, rng, stream, legal, starts, best, size, work):
    """An ask of one of the groups ``best[:size]``, at random; under exact-card asks, the
    card by ``best_card`` (``best`` is reused as scratch; ``work``: ``level_work``, its
    first two rows of bounds the viewer's proved least and most)."""
    k = best[below(rng, stream, size)]
    if not K.card_asks:
        return legal[starts[k]]
    return _best_card(S, K, g, seat, rng, stream, legal, starts, k, best, work)


@numba.njit(cache=True, inline="always", error_model="numpy")
def _card_bounds(S, g, seat, work):
    """``PlayerView.card_holds`` / ``card_lacks`` of the seat's opponents (from its left)
    into ``work[8]``, from the proved bounds ``work[0][0]`` / ``[0][1]`` the caller made."""
    holds, lacks = work[8][0], work[8][1]
    card_bounds_into(
        S.known_holds[g],
        S.known_lacks[g],
        S.laid_cards[g],
        S.card_copies,
        S.cards[g, seat],
        work[0][0],
        work[0][1],
        S.pool_len[g],
        seat,
        holds,
        lacks,
    )
    return holds, lacks


@numba.njit(cache=True, inline="always", error_model="numpy")
def _best_card(S, K, g, seat, rng, stream, legal, starts, k, best, work):
    """``cpus.best_card``: among group ``k``'s cards, one the target is proved to hold, else
    one it is not proved to lack."""
    offset = legal[starts[k]] // K.ask_count  # the target, places to the seat's left
    holds, lacks = _card_bounds(S, g, seat, work)
    top_score = -1
    size = 0
    for j in range(starts[k], starts[k + 1]):
        card = legal[j] % K.ask_count
        score = 2 if holds[offset, card] else 0 if lacks[offset, card] else 1
        if score > top_score:
            top_score = score
            size = 0
        if score == top_score:
            best[size] = legal[j]
            size += 1
    return best[below(rng, stream, size)]


# ExpertCPU's weights, read here so that the two cannot drift apart.
HIT_WEIGHT = ExpertCPU.HIT_WEIGHT
ENDGAME_WEIGHT = ExpertCPU.ENDGAME_WEIGHT
ENDGAME_DECAY = ExpertCPU.ENDGAME_DECAY
FIT_ROUNDS = ExpertCPU.FIT_ROUNDS
TIE = 1e-9  # ExpertCPU.choose: scores this close to the top are ties


@numba.njit(cache=True, inline="always", error_model="numpy")
def _row_sum(values, ranks):
    """numpy's sum of a float row (pairwise: eight partial sums from 8 values on), so
    that the compiled fit adds in the order ``ExpertCPU.spread`` does."""
    if ranks < 8:
        total = 0.0
        for r in range(ranks):
            total += values[r]
        return total
    p0, p1, p2, p3 = values[0], values[1], values[2], values[3]
    p4, p5, p6, p7 = values[4], values[5], values[6], values[7]
    r = 8
    while r < ranks - ranks % 8:
        p0 += values[r]
        p1 += values[r + 1]
        p2 += values[r + 2]
        p3 += values[r + 3]
        p4 += values[r + 4]
        p5 += values[r + 5]
        p6 += values[r + 6]
        p7 += values[r + 7]
        r += 8
    total = ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))
    while r < ranks:
        total += values[r]
        r += 1
    return total


@numba.njit(cache=True, error_model="numpy")
def expert_fit(sizes, pool, unseen, seat, low, high, fill, free, caps, rows, factors):
    """``ExpertCPU.spread`` into ``fill`` [P + 1, R] (the pool last) and ``free`` [R]: the
    expected unexplained cards of each rank at each seat, from the bounds ``low`` / ``high``
    [P, R] (absolute seats), by the same iterative proportional fit in the same order of
    operations. ``caps`` [P + 1, R], ``rows`` [P + 1] and ``factors`` [R] are scratch;
    ``expert_chance`` reads a seat's hit chance from the fit."""
    players, ranks = low.shape
    for s in range(players + 1):
        rows[s] = 0.0
        for r in range(ranks):
            fill[s, r] = 0.0
            caps[s, r] = 0.0
    for r in range(ranks):
        held = 0
        for s in range(players):
            if s != seat:
                held += low[s, r]
        free[r] = max(unseen[r] - held, 0)
    for s in range(players):
        if s == seat:
            continue
        proved = 0
        for r in range(ranks):
            proved += low[s, r]
        rows[s] = max(sizes[s] - proved, 0)
        for r in range(ranks):
            caps[s, r] = high[s, r] - low[s, r]
            if free[r] > 0:
                fill[s, r] = min(caps[s, r], rows[s])
    rows[players] = pool
    for r in range(ranks):
        caps[players, r] = free[r]
        if free[r] > 0:
            fill[players, r] = pool
    for _ in range(FIT_ROUNDS):
        for s in range(players + 1):
            total = _row_sum(fill[s], ranks)
            factor = rows[s] / total if total > 0 else 0.0
            for r in range(ranks):
                fill[s, r] *= factor
        # Column by column as numpy adds them (row after row), walked row by row so that
        # the loops run along memory.
        for r in range(ranks):
            factors[r] = 0.0
        for s in range(players + 1):
            for r in range(ranks):
                factors[r] += fill[s, r]
        for r in range(ranks):
            total = factors[r]
            factors[r] = free[r] / total if total > 0 else 0.0
        for s in range(players + 1):
            for r in range(ranks):
                fill[s, r] = min(fill[s, r] * factors[r], caps[s, r])


@numba.njit(cache=True, inline="always", error_model="numpy")
def expert_chance(low, high, fill, free, seat, target, rank):
    """``ExpertCPU.hit_chances``' chance that ``target`` holds a card of ``rank``, from
    ``expert_fit``'s ``fill`` and ``free`` (0 for the seat itself)."""
    if target == seat:
        return 0.0
    if low[target, rank] > 0:
        return 1.0
    if high[target, rank] > 0:
        share = fill[target, rank] / free[rank] if free[rank] > 0 else 0.0
        return 1.0 - (1.0 - min(max(share, 0.0), 1.0)) ** free[rank]
    return 0.0


@numba.njit(cache=True, error_model="numpy")
def _expert(S, K, g, seat, rng, stream, legal, starts, ranks, groups, extra, work):
    """``ExpertCPU.choose``: the sure-hit bounds, the fitted hit chances, the scores;
    working in ``work`` (``level_work``)."""
    if groups == 1 and not K.card_asks:
        return legal[starts[0]]
    players = K.players
    own = S.counts[g, seat]
    bounds, by_seat, scratch, unseen, fit, _, columns, scores, _ = work
    proved, possible, assumed_low, assumed_high = bounds[0], bounds[1], bounds[2], bounds[3]
    args = (S.sizes[g], own, S.unlaid[g], S.hand_cap, S.pool_len[g], K.max_copies, seat)
    opponent_bounds_into(S.least[g], S.most[g], *args, proved, possible, scratch)
    sure_hit_bounds_into(
        S.least[g],
        S.most[g],
        S.sure[g],
        *args,
        proved,
        possible,
        assumed_low,
        assumed_high,
        by_seat[2],
        scratch,
        # Not read for the bounds: the true hands only spare a flow check whose answer
        # they prove (as in the observation).
        true_hands(S, K, g, seat, bounds[4]),
    )
    if K.card_asks:
        return _expert_cards(S, K, g, seat, rng, stream, legal, starts, ranks, groups, extra, work)
    tiebreak = K.expert_tiebreak
    top = -np.inf
    # Asks that hit for sure if the others take sure hits are scored first. No other ask
    # can score above ``reach`` (a hit chance is at most 1, the endgame only subtracts):
    # where that is below the top, none of them can be chosen, so the fit is not made.
    reach = -np.inf
    for k in range(groups):
        offset = legal[starts[k]] // K.ask_count
        rank = ranks[k]
        held = own[rank]
        assumed = assumed_low[offset, rank]
        if assumed:  # a sure hit if the others take sure hits; proved, or not (tier)
            bonus = 0.0
            if held + assumed >= K.set_size:
                bonus = SURE_CATCH + S.rank_points[rank] * tiebreak
            tier = SURE_HIT if proved[offset, rank] else LIKELY_HIT
            scores[k] = tier + bonus + held + assumed
            top = max(top, scores[k])
        else:
            most = held + HIT_WEIGHT + S.rank_points[rank] * tiebreak
            if assumed_high[offset, rank] > 0:
                most += MAY_HIT
            reach = max(reach, most)
            scores[k] = -np.inf
    if reach > top - TIE:
        _fit_assumed(S, K, g, seat, work)
        low, high, fill, free = by_seat[0], by_seat[1], fit[0], columns[0]
        pool = S.pool_len[g]
        endgame = 0.0
        if K.expert_endgame and pool:
            holding = 0
            for other in range(players):
                if other != seat and S.sizes[g, other]:
                    holding += 1
            if holding == 1:
                endgame = ENDGAME_WEIGHT * ENDGAME_DECAY ** float(pool - 1)  # as Python's pow
        for k in range(groups):
            offset = legal[starts[k]] // K.ask_count
            rank = ranks[k]
            if assumed_low[offset, rank]:
                continue
            target = (seat + 1 + offset) % players
            hit = expert_chance(low, high, fill, free, seat, target, rank)
            score = own[rank] + HIT_WEIGHT * hit + S.rank_points[rank] * tiebreak
            if assumed_high[offset, rank] > 0:
                score += MAY_HIT
            if endgame:
                plain_miss = (1.0 - hit) * max(0.0, 1.0 - unseen[rank] / pool)
                score -= endgame * plain_miss
            scores[k] = score
            top = max(top, score)
    return _ask_a_top_group(
        S, K, g, seat, rng, stream, legal, starts, groups, scores, top, extra, work
    )


@numba.njit(cache=True, inline="always", error_model="numpy")
def _fit_assumed(S, K, g, seat, work):
    """``ExpertCPU.spread`` of the sure-hit bounds ``_expert`` made in ``work``: their rows
    by absolute seat (``by_seat[0]``, ``[1]``; the fit skips the own row), the unseen cards,
    then the fit into ``fit[0]`` and ``columns[0]``."""
    bounds, by_seat, _, unseen, fit, rows, columns, _, _ = work
    assumed_low, assumed_high = bounds[2], bounds[3]
    low, high = by_seat[0], by_seat[1]
    for offset in range(K.players - 1):
        target = (seat + 1 + offset) % K.players
        low[target] = assumed_low[offset]
        high[target] = assumed_high[offset]
    own = S.counts[g, seat]
    for r in range(K.ranks):
        unseen[r] = S.unlaid[g, r] - own[r]
    expert_fit(
        S.sizes[g],
        S.pool_len[g],
        unseen,
        seat,
        low,
        high,
        fit[0],
        columns[0],
        fit[1],
        rows,
        columns[1],
    )


@numba.njit(cache=True, inline="always", error_model="numpy")
def _ask_a_top_group(S, K, g, seat, rng, stream, legal, starts, groups, scores, top, extra, work):
    """An ask of one of the groups scored within ``TIE`` of the ``top`` (``extra``: room
    for their indices), as ``ExpertCPU.choose_by``."""
    best = extra
    size = 0
    for k in range(groups):
        if scores[k] > top - TIE:
            best[size] = k
            size += 1
    return _ask_one_of(S, K, g, seat, rng, stream, legal, starts, best, size, work)


@numba.njit(cache=True, error_model="numpy")
def _expert_cards(S, K, g, seat, rng, stream, legal, starts, ranks, groups, extra, work):
    """``ExpertCPU.card_scores`` and the choice, after ``_expert`` has made the bounds in
    ``work``: a sure hit only where the target is proved to hold a card the seat may name;
    otherwise the fitted count of the rank at the target shared among its open cards."""
    players = K.players
    own = S.counts[g, seat]
    bounds, _, _, _, fit, _, _, scores, _ = work
    assumed_low = bounds[2]
    holds, lacks = _card_bounds(S, g, seat, work)
    _fit_assumed(S, K, g, seat, work)
    fill = fit[0]
    tiebreak = K.expert_tiebreak
    cards = K.card_indices
    top = -np.inf
    for k in range(groups):
        offset = legal[starts[k]] // K.ask_count
        target = (seat + 1 + offset) % players
        rank = ranks[k]
        held = own[rank]
        known = 0
        open_cards = 0
        for card in range(4 * rank, min(4 * rank + 4, cards)):
            known += holds[offset, card]
            if not (holds[offset, card] or lacks[offset, card]):
                open_cards += 1
        sure = False
        for j in range(starts[k], starts[k + 1]):
            if holds[offset, legal[j] % K.ask_count]:
                sure = True
        if sure:
            bonus = 0.0
            if held + known >= K.set_size:
                bonus = SURE_CATCH + S.rank_points[rank] * tiebreak
            score = SURE_HIT + bonus + held + known
        else:
            chance = 0.0
            if open_cards:
                expected = assumed_low[offset, rank] + fill[target, rank] - known
                chance = min(max(expected / open_cards, 0.0), 1.0)
            score = held + HIT_WEIGHT * chance + S.rank_points[rank] * tiebreak
            if open_cards:
                score += MAY_HIT
        scores[k] = score
        top = max(top, score)
    return _ask_a_top_group(
        S, K, g, seat, rng, stream, legal, starts, groups, scores, top, extra, work
    )


@numba.njit(cache=True, error_model="numpy")
def choose_all(S, K, C, actions):
    """``actions[g]``: the choice of the compiled CPU to move in each live game (-1 where
    the game is over or the seat to move is not a compiled CPU)."""
    work = choice_work(K)
    for g in range(actions.shape[0]):
        seat = S.current[g]
        if S.over[g] or C.level[g, seat] < 0:
            actions[g] = -1
        else:
            actions[g] = choose(S, K, C, g, seat, work)


@numba.njit(cache=True, error_model="numpy")
def reseed(K, C, games, seeds):
    """A new game at each of ``games``: plans forgotten, seat s of game g seeded from
    ``seeds[i]`` (stream g * P + s)."""
    for i in range(games.shape[0]):
        g = games[i]
        forget(C, g)
        for seat in range(K.players):
            stream = g * K.players + seat
            C.rng[stream] = seed_state(np.uint64(seeds[i]), stream)


@numba.njit(cache=True, error_model="numpy")
def seed_each(C, seeds):
    """A new game in every game: plans forgotten, seat s of game g seeded from
    ``seeds[g, s]`` alone (the same streams wherever the game sits in a batch)."""
    games, players = seeds.shape
    for g in range(games):
        forget(C, g)
        for seat in range(players):
            C.rng[g * players + seat] = seed_state(seeds[g, seat], 0)
