"""The rules over arrays: ``gofish_env.game.Game`` written once more as numba kernels.

Each function here is the reference method of the same name (``_lay``, ``_refill``,
``_start_turn``, ``ask``, ...) for game ``g`` of a ``State``; where the reference appends an
event, the matching step of ``gofish_env.vector.knowledge`` runs. ``S`` is the ``State``,
``K`` the rules' ``Constants``. The batch kernels at the end loop over the games.
"""

from __future__ import annotations

import numba
import numpy as np

import gofish_env.compile_interrupts  # noqa: F401  (Ctrl-C while compiling)
from gofish_env.vector import knowledge as public
from gofish_env.vector.state import JOKER_INDEX

# ---------------------------------------------------------------------------- randomness

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@numba.njit(cache=True, error_model="numpy")
def mix64(z):
    """splitmix64's output function."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@numba.njit(cache=True, error_model="numpy")
def uniform(states, index):
    """A float in [0, 1) from the splitmix64 generator ``states[index]`` (53 bits)."""
    state = states[index] + _GOLDEN
    states[index] = state
    return (mix64(state) >> np.uint64(11)) * _TO_UNIT


@numba.njit(cache=True, error_model="numpy")
def below(states, index, n):
    """An integer in [0, n): floor(uniform * n), as the tests' mirror of ``random.choice``."""
    return int(uniform(states, index) * n)


@numba.njit(cache=True, error_model="numpy")
def seed_state(seed, stream):
    """The starting state of stream ``stream`` of ``seed``: independent streams for every
    game and seat, the same whatever the batch size."""
    return mix64(np.uint64(seed) * _GOLDEN + mix64(np.uint64(stream) + _GOLDEN))


# ---------------------------------------------------------------------------- cards


@numba.njit(cache=True, inline="always", error_model="numpy")
def left_of(seat, players):
    """The seat to ``seat``'s left, ``(seat + 1) % players`` without a division (this runs
    at every ask)."""
    return seat + 1 if seat + 1 < players else 0


@numba.njit(cache=True, inline="always", error_model="numpy")
def rank_of_index(index):
    return index // 4  # the joker's index 52 gives rank 13


@numba.njit(cache=True, inline="always", error_model="numpy")
def give(S, K, g, seat, index):
    """A card (by card index) arrives in a hand; the caller keeps the hand size."""
    S.counts[g, seat, rank_of_index(index)] += 1
    if K.card_asks:
        S.cards[g, seat, index] += 1
        S.stamps[g, seat, index] = S.next_stamp[g]
        S.next_stamp[g] += 1


@numba.njit(cache=True, inline="always", error_model="numpy")
def draw_top(S, K, g, seat):
    """The pool's top card goes to ``seat``; returns its card index."""
    S.pool_len[g] -= 1
    index = np.int64(S.pool[g, S.pool_len[g]])
    give(S, K, g, seat, index)
    return index


# ---------------------------------------------------------------------------- consequences


@numba.njit(cache=True, error_model="numpy")
def lay(S, K, g, seat, rank):
    """``Game._lay``: lay every complete set of ``rank`` in the seat's hand."""
    set_size = K.set_size
    if S.counts[g, seat, rank] < set_size:
        return
    while S.counts[g, seat, rank] >= set_size:
        S.counts[g, seat, rank] -= set_size
        if K.card_asks:
            _lay_oldest_cards(S, K, g, seat, rank)
        S.sizes[g, seat] -= set_size
        S.caught[g, seat, rank] += 1
        S.catch_count[g, seat] += 1
        S.points[g, seat] += S.rank_points[rank]
        S.num_caught[g] += 1
        if K.knowledge:
            public.on_catch(S, K, g, seat, rank)
    if K.winner == 2 and S.sizes[g, seat] == 0 and S.first_empty[g] < 0:
        S.first_empty[g] = seat
        end(S, K, g)
    elif S.num_caught[g] == K.total_sets:
        end(S, K, g)


@numba.njit(cache=True, error_model="numpy")
def _lay_oldest_cards(S, K, g, seat, rank):
    """A catch under exact-card asks lays the rank's cards that arrived first (the
    reference keeps each rank's cards in a list in arrival order)."""
    if rank == JOKER_INDEX // 4:
        S.cards[g, seat, JOKER_INDEX] -= K.set_size
        S.laid_cards[g, JOKER_INDEX] = True
        return
    for _ in range(K.set_size):
        oldest = -1
        for index in range(4 * rank, 4 * rank + 4):
            if S.cards[g, seat, index] and (
                oldest < 0 or S.stamps[g, seat, index] < S.stamps[g, seat, oldest]
            ):
                oldest = index
        S.cards[g, seat, oldest] -= 1
        S.laid_cards[g, oldest] = True


@numba.njit(cache=True, error_model="numpy")
def lay_all(S, K, g, seat):
    """``Game._lay_all``: every complete set in the hand, lowest rank first."""
    for rank in range(K.ranks):
        if S.counts[g, seat, rank] >= K.set_size:
            lay(S, K, g, seat, rank)
            if S.over[g]:
                return


@numba.njit(cache=True, inline="always", error_model="numpy")
def emptied(S, K, g, seat, draw_now):
    """``Game._emptied``: a hand has just become empty (or is empty at its turn)."""
    if K.ends_on_empty_hand:
        end(S, K, g)
    elif S.pool_len[g] == 0:
        go_out(S, K, g, seat)
    elif draw_now:
        refill(S, K, g, seat)


@numba.njit(cache=True, error_model="numpy")
def refill(S, K, g, seat):
    """``Game._refill``: draw the empty-hand cards while the hand stays empty."""
    while S.sizes[g, seat] == 0 and S.pool_len[g] and not S.over[g]:
        count = min(K.draw_count, S.pool_len[g])
        for _ in range(count):
            draw_top(S, K, g, seat)
        S.sizes[g, seat] = count
        if K.knowledge:
            public.on_empty_hand_draw(S, g, seat, count)
        lay_all(S, K, g, seat)
        if S.pool_len[g] == 0:
            pool_emptied(S, K, g)
    if S.sizes[g, seat] == 0 and not S.over[g]:
        # Game._emptied(seat, False): never draws, so this is not recursive.
        if K.ends_on_empty_hand:
            end(S, K, g)
        elif S.pool_len[g] == 0:
            go_out(S, K, g, seat)


@numba.njit(cache=True, inline="always", error_model="numpy")
def pool_emptied(S, K, g):
    """``Game._pool_emptied``: the last card has left the pool."""
    if S.over[g]:
        return
    if K.ends_on_empty_hand:
        end(S, K, g)
        return
    for seat in range(K.players):
        if S.sizes[g, seat] == 0 and not S.out[g, seat]:
            go_out(S, K, g, seat)
            if S.over[g]:
                return


@numba.njit(cache=True, inline="always", error_model="numpy")
def go_out(S, K, g, seat):
    if S.out[g, seat]:
        return
    S.out[g, seat] = True
    if K.knowledge:
        public.on_out(S, K, g, seat)
    if K.ends_on_out:
        end(S, K, g)


@numba.njit(cache=True, inline="always", error_model="numpy")
def has_card_to_ask(S, K, g, seat):
    """``bool(Game._wanted_cards(hand))``: exact-card asks leave it a card to name."""
    for rank in range(K.ranks):
        if S.counts[g, seat, rank] == 0:
            continue
        if 4 * rank == JOKER_INDEX:
            return True
        for index in range(4 * rank, 4 * rank + 4):
            if not S.laid_cards[g, index] and (K.allow_held or S.cards[g, seat, index] == 0):
                return True
    return False


@numba.njit(cache=True, inline="always", error_model="numpy")
def can_ask(S, K, g, seat):
    """``Game._can_ask``."""
    if S.sizes[g, seat] == 0:
        return False
    if K.askable_empty and S.pool_len[g]:
        for other in range(K.players):
            if other != seat and not S.out[g, other]:
                break
        else:
            return False
    else:
        total = 0
        for other in range(K.players):
            total += S.sizes[g, other]
        if total == S.sizes[g, seat]:
            return False
    if K.card_asks:
        return has_card_to_ask(S, K, g, seat)
    return True


@numba.njit(cache=True, inline="always", error_model="numpy")
def has_someone_to_ask(S, K, g, seat):
    """``Game._has_someone_to_ask``."""
    for other in range(K.players):
        if other != seat:
            if K.askable_empty and S.pool_len[g]:
                if not S.out[g, other]:
                    return True
            elif S.sizes[g, other]:
                return True
    return False


@numba.njit(cache=True, inline="always", error_model="numpy")
def start_turn(S, K, g, seat):
    """``Game._start_turn``: the next seat able to ask, from ``seat`` going left."""
    passes = 0
    while passes < K.players:
        if not S.out[g, seat]:
            if S.sizes[g, seat] == 0 and K.draw_on_turn and S.pool_len[g]:
                refill(S, K, g, seat)
                if S.over[g]:
                    return
                passes = 0
            if can_ask(S, K, g, seat):
                S.current[g] = seat
                return
        passes += 1
        seat = left_of(seat, K.players)
    end(S, K, g)


@numba.njit(cache=True, error_model="numpy")
def end(S, K, g):
    """``Game._end`` with ``Game.leaders``."""
    if S.over[g]:
        return
    S.over[g] = True
    S.current[g] = -1
    leaders(S, K, g, S.winners[g])
    if K.knowledge:
        public.on_game_over(S, g)


@numba.njit(cache=True, error_model="numpy")
def leaders(S, K, g, winners):
    """``Game.leaders``: 1 in ``winners`` for each seat that wins if the game ends now."""
    winners[:] = 0
    if K.winner == 2 and S.first_empty[g] >= 0:
        winners[S.first_empty[g]] = 1
        return
    best_catches = -1
    best_points = -1
    for seat in range(K.players):
        catches = S.catch_count[g, seat]
        points = S.points[g, seat] if K.winner == 0 else 0
        if catches > best_catches or (catches == best_catches and points > best_points):
            best_catches, best_points = catches, points
    for seat in range(K.players):
        points = S.points[g, seat] if K.winner == 0 else 0
        if S.catch_count[g, seat] == best_catches and points == best_points:
            winners[seat] = 1


# ---------------------------------------------------------------------------- the deal


@numba.njit(cache=True, error_model="numpy")
def clear_game(S, K, g):
    """A blank table for game ``g``: no cards anywhere, knowledge forgotten."""
    S.counts[g] = 0
    S.cards[g] = 0
    S.stamps[g] = 0
    S.next_stamp[g] = 0
    S.sizes[g] = 0
    S.pool_len[g] = 0
    S.caught[g] = 0
    S.catch_count[g] = 0
    S.points[g] = 0
    S.num_caught[g] = 0
    S.laid_cards[g] = False
    S.out[g] = False
    S.over[g] = False
    S.current[g] = -1
    S.winners[g] = 0
    S.first_empty[g] = -1
    S.num_asks[g] = 0
    if K.knowledge:
        public.new_game(S, K, g)


@numba.njit(cache=True, error_model="numpy")
def deal(S, K, g):
    """``Game(rules, seed)`` with game ``g``'s own generator: shuffle, deal one card at a
    time from the first player, then the opening (catches, empty hands, the first turn)."""
    deck = S.dealt[g]
    size = 0
    for _copy in range(K.decks):
        for index in range(JOKER_INDEX):
            deck[size] = index
            size += 1
    if K.jokers:
        deck[size] = JOKER_INDEX
        deck[size + 1] = JOKER_INDEX
    # random.shuffle's walk: for i from the end, swap with a place in [0, i].
    for i in range(K.deck_size - 1, 0, -1):
        j = below(S.deal_rng, g, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    first = K.first_player if K.first_player >= 0 else below(S.deal_rng, g, K.players)
    S.dealt_first[g] = first
    clear_game(S, K, g)
    top = K.deck_size - 1
    for i in range(K.dealt):
        seat = (first + i) % K.players
        give(S, K, g, seat, np.int64(deck[top - i]))
        S.sizes[g, seat] += 1
    remaining = K.deck_size - K.dealt
    S.pool[g, :remaining] = deck[:remaining]
    S.pool_len[g] = remaining
    opening(S, K, g, first)


@numba.njit(cache=True, error_model="numpy")
def opening(S, K, g, first):
    """``Game._setup`` for a deal: opening catches from the dealer going left, then empty
    hands in the same order, then the first turn."""
    for k in range(K.players):
        lay_all(S, K, g, (first - 1 + k) % K.players)
        if S.over[g]:
            return
    for k in range(K.players):
        seat = (first - 1 + k) % K.players
        if S.sizes[g, seat] == 0:
            emptied(S, K, g, seat, K.draw_now)
            if S.over[g]:
                return
    start_turn(S, K, g, first)


# ---------------------------------------------------------------------------- asking


@numba.njit(cache=True, error_model="numpy")
def ask(S, K, g, target, wanted):
    """``Game.ask`` for a legal ask by the seat to move (checked by the caller): a rank,
    or a card index under exact-card asks."""
    asker = S.current[g]
    S.num_asks[g] += 1
    card_asks = K.card_asks
    rank = rank_of_index(wanted) if card_asks else wanted
    if K.knowledge:
        public.on_ask(S, K, g, asker, rank, wanted)
    if card_asks:
        count = 1 if S.cards[g, target, wanted] else 0
        if count:
            S.cards[g, target, wanted] -= 1
            S.counts[g, target, rank] -= 1
    else:
        count = S.counts[g, target, rank]
        S.counts[g, target, rank] = 0
    fished = 0
    shown = 0
    if count:
        if card_asks:
            give(S, K, g, asker, wanted)
        else:
            S.counts[g, asker, rank] += count
        S.sizes[g, target] -= count
        S.sizes[g, asker] += count
        if K.knowledge:
            public.on_hit(S, K, g, asker, target, rank, count, wanted)
        if S.counts[g, asker, rank] >= K.set_size:
            lay(S, K, g, asker, rank)
        asks_again = True
        next_seat = left_of(asker, K.players)
        empty_target = S.sizes[g, target] == 0
        empty_asker = S.sizes[g, asker] == 0
    else:
        fished = 1
        if K.knowledge:
            public.on_go_fish(S, K, g, asker, target, rank, wanted)
        asks_again = False
        next_seat = target if K.after_miss_to_asked else left_of(asker, K.players)
        if S.pool_len[g]:
            index = draw_top(S, K, g, asker)
            drawn_rank = rank_of_index(index)
            S.sizes[g, asker] += 1
            if card_asks:
                shown = 1 if index == wanted else 0
            else:
                shown = 1 if drawn_rank == rank else 0
            if K.knowledge:
                public.on_draw(S, K, g, asker, drawn_rank if shown else -1, rank, wanted)
            asks_again = shown == 1 and K.fished_again
            if S.counts[g, asker, drawn_rank] >= K.set_size:
                lay(S, K, g, asker, drawn_rank)
                if not shown:
                    public.catch_after_draw(S, K, g, asker, drawn_rank, rank)
                    if K.off_rank_again:
                        asks_again = True
            if S.pool_len[g] == 0:
                pool_emptied(S, K, g)
        if asks_again:  # the fish did not fail: a pass from here goes left
            next_seat = left_of(asker, K.players)
        empty_target = False
        empty_asker = S.sizes[g, asker] == 0
    if K.knowledge:
        public.record_ask(S, K, g, asker, target, wanted, count, fished, shown)
    # Hands emptied by the ask: the target first, then the asker (Game.ask's ``emptied``).
    for k in range(2):
        seat = target if k == 0 else asker
        empty = empty_target if k == 0 else empty_asker
        if empty and not S.over[g] and not S.out[g, seat]:
            keeps_asking = asks_again and seat == asker and has_someone_to_ask(S, K, g, seat)
            draw = K.draw_now or (K.draw_on_turn and keeps_asking)
            emptied(S, K, g, seat, draw)
    if not S.over[g]:
        if asks_again and can_ask(S, K, g, asker):
            S.current[g] = asker
        else:
            start_turn(S, K, g, next_seat)
    if K.knowledge:
        public.check_assumptions(S, g)


@numba.njit(cache=True, error_model="numpy")
def deal_games(S, K, games):
    """Deal a new game at each index of ``games``."""
    for g in games:
        deal(S, K, g)


@numba.njit(cache=True, error_model="numpy")
def leaders_of(S, K, games, out):
    """``out[i]``: ``leaders`` of game ``games[i]``."""
    for i in range(games.shape[0]):
        leaders(S, K, games[i], out[i])


@numba.njit(cache=True, error_model="numpy")
def apply_asks(S, K, targets, wanted):
    """One checked ask in every live game: ``targets[g]`` is a seat, ``wanted[g]`` a rank
    or card index."""
    for g in range(targets.shape[0]):
        if not S.over[g]:
            ask(S, K, g, targets[g], wanted[g])


@numba.njit(cache=True, inline="always", error_model="numpy")
def action_ask(K, seat, action):
    """``ActionCodec.to_ask``: (target, wanted) of an action by ``seat``."""
    offset = action // K.ask_count
    return (seat + 1 + offset) % K.players, action % K.ask_count
