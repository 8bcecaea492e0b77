"""Ranks, suits and card strings.

Inside the engine a rank is an index (0..12 = 2..A, 13 = joker) and a card is an int id
``rank << 3 | copy << 2 | suit``: ``id >> 3`` is its rank, ``id & 3`` its suit and the
copy bit tells the two decks apart. Card strings such as ``"10H"`` live only at the edges.
"""

from __future__ import annotations

RANK_NAMES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "JK")
NUM_STANDARD_RANKS = 13
JOKER = 13
SUITS = "CDHS"
JOKER_CARD = "JK"

# Tiebreak points of a catch: face value, J 11, Q 12, K 13, A 14; jokers have no face value.
RANK_POINTS = (*range(2, 15), 0)
MAX_RANK_POINTS = max(RANK_POINTS)  # an ace: the reward scales catch points by it

_RANK_ALIASES = {name: index for index, name in enumerate(RANK_NAMES)}
_RANK_ALIASES.update({"T": 8, "JOKER": JOKER, "JACK": 9, "QUEEN": 10, "KING": 11, "ACE": 12})
# The rank of a card string: a short name only (a rank word and an S is a plural, no spade).
_CARD_RANKS = {name: index for index, name in enumerate(RANK_NAMES[:NUM_STANDARD_RANKS])}
_CARD_RANKS["T"] = 8


def card_id(rank: int, suit: int, copy: int = 0) -> int:
    return rank << 3 | copy << 2 | suit


def card_rank(card: int) -> int:
    return card >> 3


def card_index(card: int) -> int:
    """The card's place among distinct cards: rank * 4 + suit (the joker is 52)."""
    return (card >> 3) * 4 + (card & 3)


def card_from_index(index: int) -> int:
    return card_id(index // 4, index % 4)


def card_str(card: int) -> str:
    rank = card >> 3
    if rank == JOKER:
        return JOKER_CARD
    return RANK_NAMES[rank] + SUITS[card & 3]


def rank_list(jokers: bool = True) -> str:
    """The ranks a person may type, for messages: ``2, 3, ..., A`` (and JK with jokers)."""
    names = ", ".join(RANK_NAMES[:NUM_STANDARD_RANKS])
    return f"{names}, or JK for a joker" if jokers else names


def parse_rank(text: str, jokers: bool = True) -> int:
    """``"7"``, ``"10"``, ``"q"``, ``"JK"`` -> rank index; raises ValueError otherwise
    (``jokers``: whether its message names JK)."""
    try:
        return _RANK_ALIASES[text.strip().upper()]
    except (KeyError, AttributeError):
        raise ValueError(f"not a rank: {text!r} (ranks are {rank_list(jokers)})") from None


def parse_card(text: str, jokers: bool = True) -> tuple[int, int]:
    """``"10H"`` -> (rank, suit); ``"JK"`` -> (JOKER, 0). Raises ValueError otherwise
    (``jokers``: whether its message names JK). A card is a rank's short name and a suit:
    ``"kings"`` is no ``KS`` nor ``"queenh"`` a ``QH``."""
    examples = "7H, 10S, QD, AC or JK" if jokers else "7H, 10S, QD or AC"
    if not isinstance(text, str):
        raise ValueError(f"not a card: {text!r} (cards look like {examples})")
    cleaned = text.strip().upper()
    if cleaned in ("JK", "JOKER"):
        return JOKER, 0
    rank_text, suit_text = cleaned[:-1], cleaned[-1:]
    if suit_text not in SUITS or rank_text not in _CARD_RANKS:
        raise ValueError(f"not a card: {text!r} (cards look like {examples}; suits are C, D, H, S)")
    return _CARD_RANKS[rank_text], SUITS.index(suit_text)


def build_deck(decks: int, jokers: bool) -> list[int]:
    """Every card of the game, in a fixed order (the shuffle starts from this)."""
    deck = [
        card_id(rank, suit, copy)
        for copy in range(decks)
        for rank in range(NUM_STANDARD_RANKS)
        for suit in range(4)
    ]
    if jokers:
        deck += [card_id(JOKER, 0, 0), card_id(JOKER, 0, 1)]
    return deck


def sort_key(card: int) -> tuple[int, int]:
    return card >> 3, card & 3


def index_strings(indices: list[int]) -> list[str]:
    """Card indices (``card_index``) as strings, in their order: sorted indices are a hand
    sorted by rank then suit, as ``Game.hand`` shows it."""
    return [card_str(card_from_index(index)) for index in indices]
