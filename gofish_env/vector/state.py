"""The arrays of a batch of games, and the rules as numbers the compiled kernels read.

Python code holds the arrays as a named tuple (``State``); the kernels get them as a numba
StructRef of borrowed arrays (``state_struct``; ``structs`` says why). ``Constants`` holds
numbers only, so the kernels take it as it is. Every field of ``State`` but the per-rank
tables and the work space at its end (``SHARED_FIELDS``) is one array whose first axis is
the game. The truth (hands, pool, catches, who is out, whose turn) sits next to what the
table knows in public (the bounds of ``gofish_env.knowledge.PublicKnowledge``, the
observation encoder's buffer and ask ring) and what the compiled CPUs remember of the
public asks. Sizes that a rule set does not
need (the card-level arrays under rank asks, the ask log without a Python opponent) are
allocated with length 0 on their last axis, so one compiled signature serves every rule.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

import gofish_env.compile_interrupts  # noqa: F401  (Ctrl-C while compiling)
from gofish_env.bounds import assumption_work_size
from gofish_env.cards import NUM_STANDARD_RANKS, RANK_POINTS
from gofish_env.cpus import EASY_MEMORY, ExpertCPU
from gofish_env.knowledge import UNBOUNDED, PublicKnowledge
from gofish_env.observation import ObservationEncoder, ObservationLayout
from gofish_env.rules import Rules
from gofish_env.vector.structs import borrowing_builder, struct_types

JOKER_INDEX = 4 * NUM_STANDARD_RANKS  # the joker's card index (both jokers share it)
RECORD_FIELDS = 6  # asker, target, wanted, cards handed over, a miss, shown

WINNER_CODES = {"catches_then_points": 0, "catches_shared": 1, "first_empty": 2}

CONSTANT_FIELDS = (
    "players",
    "ranks",
    "ask_count",  # what an ask names: ranks, or card indices with exact-card asks
    "actions",  # (players - 1) * ask_count
    "card_indices",  # 52, or 53 with jokers (card-level arrays; 0 under rank asks)
    "set_size",
    "total_sets",
    "card_asks",
    "allow_held",
    "draw_now",
    "draw_on_turn",
    "draw_count",
    "askable_empty",
    "ends_on_empty_hand",
    "ends_on_out",
    "winner",  # WINNER_CODES
    "after_miss_to_asked",
    "fished_again",
    "off_rank_again",
    "decks",
    "jokers",
    "deck_size",
    "dealt",  # cards dealt in all
    "first_player",  # a seat, or -1 for a random one
    "max_copies",
    "tiebreak_scale",  # 1 / (all points + 1), as gofish_env.rewards
    "total_sets_divisor",  # the observation buffer's divisors, as ObservationEncoder
    "max_points",
    "max_rank_catches",
    "caught_at",  # where the buffer's caught-ranks block starts
    "out_at",  # where its out block starts
    "knowledge",  # whether the public knowledge is kept (observations, rewards, CPU memory)
    "expert_tiebreak",  # the expert CPU's weight of a tiebreak point (0: points cannot decide)
    "expert_endgame",  # whether the expert weighs plain misses near the end of the pool
)

STATE_FIELDS = (
    # The truth.
    "counts",  # [N, P, R] cards of each rank in each hand
    "cards",  # [N, P, C] cards of each card index (exact-card asks only)
    "stamps",  # [N, P, C] when each card arrived: a catch lays the oldest
    "next_stamp",  # [N]
    "sizes",  # [N, P] hand sizes
    "pool",  # [N, D] card indices, the top at pool_len - 1
    "pool_len",  # [N]
    "caught",  # [N, P, R] catches of each rank each seat has laid
    "catch_count",  # [N, P]
    "points",  # [N, P] tiebreak points
    "num_caught",  # [N]
    "laid_cards",  # [N, C] card indices in catches (exact-card asks only)
    "out",  # [N, P]
    "over",  # [N]
    "current",  # [N] the seat to move, -1 when over
    "winners",  # [N, P] 0/1
    "first_empty",  # [N] the first seat to empty its hand by laying (-1: none yet)
    "num_asks",  # [N]
    "deal_rng",  # [N] each game's own generator (splitmix64 state)
    "dealt",  # [N, D] the shuffled deck of the last deal (card indices)
    "dealt_first",  # [N] its first player (-1: not dealt here)
    # What the table knows: PublicKnowledge and ObservationEncoder, per game.
    "least",  # [N, P, R]
    "most",  # [N, P, R]
    "sure",  # [N, P, R] sure_hit_most
    "skips",  # [N, P] skips_sure_hits
    "unlaid",  # [N, R]
    "known_holds",  # [N, P, C] the single cards each seat is seen to hold (exact-card asks)
    "known_lacks",  # [N, P, C] and proved to lack
    "lacks_before_draw",  # [N, C] the drawer's known_lacks before its last private draw
    "buffer",  # [N, B] the encoder's public buffer
    "ring",  # [N, H, 6] the encoder's ask ring
    "last",  # [N, 6] the last ask's record (-1 asker: none yet)
    "log",  # [N, L, 6] every ask's record, for Python opponents (L may be 0)
    "parts",  # [N, P, 4] reward components earned since the env last read them
    # What the compiled CPUs remember of the public asks (same for every seat).
    "told_index",  # [N, P, R] normal: newest ask that told about (seat, rank), -1 none
    "told_holds",  # [N, P, R] normal: whether it said the seat holds the rank
    "asked_me",  # [N, P, EASY_MEMORY, 2] easy: requests made to each seat (seat, rank)
    "asked_me_len",  # [N, P]
    # Per-rank tables of the rules (the same for every game).
    "copies",  # [R] cards of each rank in the deck
    "card_copies",  # [C] copies of each card index (exact-card asks only)
    "hand_cap",  # [R] most of a rank one hand can hold
    "rank_points",  # [R] tiebreak points of a catch
    # Work space the kernels reuse at every call, instead of allocating (not per game).
    "assumption_work",  # bounds.assumption_work_size integers
)
SHARED_FIELDS = (
    "copies",
    "card_copies",
    "hand_cap",
    "rank_points",
    "assumption_work",
)  # not per game


State, StateStructType = struct_types("State", STATE_FIELDS, __name__)
_build_state = borrowing_builder(StateStructType)


@numba.njit(cache=True, error_model="numpy")
def state_struct(state):
    """The struct the kernels get: the state's arrays, borrowed (``structs``)."""
    return _build_state(state)


Constants = namedtuple("Constants", CONSTANT_FIELDS, module=__name__)


def constants(rules: Rules, knowledge: bool = True) -> Constants:
    ranks = rules.ranks
    copies = np.array([rules.copies_of(rank) for rank in range(ranks)], np.int64)
    layout = ObservationLayout(rules, 0)
    players = rules.players
    card_asks = rules.ask_for == "card"
    values = dict(
        players=players,
        ranks=ranks,
        ask_count=rules.ask_count,
        actions=(players - 1) * rules.ask_count,
        card_indices=rules.ask_count if card_asks else 0,
        set_size=rules.set_size,
        total_sets=rules.total_sets,
        card_asks=card_asks,
        allow_held=rules.ask_for_held_card,
        draw_now=rules.empty_hand_draw == "immediately",
        draw_on_turn=rules.empty_hand_draw == "own_turn",
        draw_count=rules.empty_hand_draw_count,
        askable_empty=rules.empty_hand_askable,
        ends_on_empty_hand=rules.game_end == "hand_or_pool_empty",
        ends_on_out=rules.game_end == "first_out",
        winner=WINNER_CODES[rules.winner],
        after_miss_to_asked=rules.after_miss == "asked",
        fished_again=rules.fished_rank_asks_again,
        off_rank_again=rules.off_rank_catch_asks_again,
        decks=rules.decks,
        jokers=rules.jokers,
        deck_size=rules.deck_size,
        dealt=rules.deck_size if rules.deal == "whole_deck" else rules.hand_size * players,
        first_player=-1 if rules.first_player == "random" else rules.first_seat(None),
        max_copies=int(copies.max()),
        tiebreak_scale=1.0 / (rules.total_points + 1),
        total_sets_divisor=rules.total_sets,
        max_points=layout.max_points,
        max_rank_catches=layout.max_catches_of_rank,
        caught_at=2 * players,
        out_at=2 * players + ranks * players,
        knowledge=knowledge,
        expert_tiebreak=ExpertCPU.tiebreak_weight(rules),
        expert_endgame=ExpertCPU.weighs_endgame(rules),
    )
    return Constants(*(values[field] for field in CONSTANT_FIELDS))


def encoder_tables(rules: Rules, history: int):
    """The observation kernel's constants and each seat's gather of the public buffer,
    from the same ``ObservationEncoder`` the environments use."""
    encoder = ObservationEncoder(ObservationLayout(rules, history), PublicKnowledge(rules))
    return encoder.constants, np.stack(encoder.gather), encoder.buffer.size


def allocate(rules: Rules, num_games: int, history: int, log_size: int = 0) -> State:
    """Arrays for ``num_games`` games, every one blank (not dealt). Each holds its values
    in the smallest integer type that fits them: the less memory a game takes, the more
    games stay in the processor's caches."""
    n, players, ranks = num_games, rules.players, rules.ranks
    cards = rules.ask_count if rules.ask_for == "card" else 0
    deck = rules.deck_size
    _, _, buffer_size = encoder_tables(rules, history)
    copies = np.array([rules.copies_of(rank) for rank in range(ranks)], np.int64)
    i64 = np.int64
    arrays = dict(
        counts=np.zeros((n, players, ranks), np.int8),
        cards=np.zeros((n, players, cards), np.int8),
        stamps=np.zeros((n, players, cards), np.int32),
        next_stamp=np.zeros(n, i64),
        sizes=np.zeros((n, players), np.int16),
        pool=np.zeros((n, deck), np.int8),
        pool_len=np.zeros(n, i64),
        caught=np.zeros((n, players, ranks), np.int8),
        catch_count=np.zeros((n, players), np.int16),
        points=np.zeros((n, players), np.int16),
        num_caught=np.zeros(n, i64),
        laid_cards=np.zeros((n, cards), np.bool_),
        out=np.zeros((n, players), np.bool_),
        over=np.ones(n, np.bool_),
        current=np.full(n, -1, i64),
        winners=np.zeros((n, players), np.int8),
        first_empty=np.full(n, -1, i64),
        num_asks=np.zeros(n, i64),
        deal_rng=np.zeros(n, np.uint64),
        dealt=np.zeros((n, deck), np.int8),
        dealt_first=np.full(n, -1, i64),
        least=np.zeros((n, players, ranks), np.int32),
        most=np.full((n, players, ranks), UNBOUNDED, np.int32),
        sure=np.full((n, players, ranks), UNBOUNDED, np.int32),
        skips=np.zeros((n, players), np.bool_),
        unlaid=np.zeros((n, ranks), np.int16),
        known_holds=np.zeros((n, players, cards), np.bool_),
        known_lacks=np.zeros((n, players, cards), np.bool_),
        lacks_before_draw=np.zeros((n, cards), np.bool_),
        buffer=np.zeros((n, buffer_size), np.float32),
        ring=np.zeros((n, history, RECORD_FIELDS), np.int16),
        last=np.full((n, RECORD_FIELDS), -1, i64),
        log=np.zeros((n, log_size, RECORD_FIELDS), np.int16),
        parts=np.zeros((n, players, 4), np.float64),
        told_index=np.full((n, players, ranks), -1, np.int32),
        told_holds=np.zeros((n, players, ranks), np.bool_),
        asked_me=np.zeros((n, players, EASY_MEMORY, 2), np.int8),
        asked_me_len=np.zeros((n, players), np.int8),
        copies=copies,
        card_copies=PublicKnowledge(rules).card_copies,
        hand_cap=np.minimum(copies, rules.set_size - 1),
        rank_points=np.array(RANK_POINTS[:ranks], np.int64),
        assumption_work=np.zeros(assumption_work_size(players, ranks), np.int64),
    )
    return State(*(arrays[field] for field in STATE_FIELDS))


def state_bytes(state: State) -> int:
    """Memory the arrays hold, in bytes."""
    return sum(array.nbytes for array in state)
