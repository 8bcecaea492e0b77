"""The rules in force for a game: one field per house rule of docs/rules.md, and the presets.

``Rules()`` is the table rules. ``Rules.preset("bicycle", players=3)`` picks a named bundle and
overrides fields. Every value is checked when the object is made: a bad value or an impossible
combination raises ``ValueError`` naming the field, the value and what is allowed.
"""

from __future__ import annotations

import dataclasses
import numbers
import random
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from gofish_env.cards import NUM_STANDARD_RANKS, RANK_POINTS

DEAL_CHOICES = ("table", "seven", "seven_for_two", "whole_deck")
FIRST_PLAYER_CHOICES = ("dealer_left", "random")
EMPTY_HAND_DRAW_CHOICES = ("immediately", "own_turn", "never")
AFTER_MISS_CHOICES = ("left", "asked")
ASK_FOR_CHOICES = ("rank", "card")
SET_SIZE_CHOICES = (4, 2)
DECKS_CHOICES = (1, 2)
GAME_END_CHOICES = ("last_catch", "first_out", "hand_or_pool_empty")
WINNER_CHOICES = ("catches_then_points", "catches_shared", "first_empty")


@dataclass(frozen=True)
class Rules:
    """Go Fish rules; each field is a house rule, the defaults are the table rules."""

    players: int = 4
    """Number of seats, 2..6."""
    deal: str | int = "table"
    """Cards dealt: "table" (7 with 2-3 players, 5 with 4+), "seven" (7 each), "seven_for_two"
    (7 with 2 players, 5 with 3+), "whole_deck" (everything, no pool), or a number."""
    first_player: str | int = "dealer_left"
    """Who asks first: "dealer_left" (seat 0; the dealer is the last seat), "random", or a seat."""
    empty_hand_draw: str = "immediately"
    """When an empty hand draws: "immediately" (the moment it empties, even on another's turn),
    "own_turn" (at the start of its own turn, or at once if it empties while it keeps asking),
    or "never"."""
    empty_hand_draw_count: int = 1
    """How many cards an empty hand draws (a refill takes what is left if the pool has fewer)."""
    empty_hand_askable: bool = False
    """May a player with an empty hand be asked while the pool has cards (the answer: go fish)."""
    fished_rank_asks_again: bool = True
    """Fishing the rank you asked for earns another ask (False: the turn ends after any draw)."""
    off_rank_catch_asks_again: bool = False
    """A catch completed by a drawn card of another rank earns another ask."""
    after_miss: str = "left"
    """Who moves after a miss: "left" (asker + 1) or "asked" (the seat that said go fish)."""
    ask_for: str = "rank"
    """"rank" (every card of a rank) or "card" (one exact card of a rank you hold)."""
    ask_for_held_card: bool = False
    """With exact-card asks: may you ask for a card you hold yourself (always a miss: a bluff)."""
    set_size: int = 4
    """Cards in a catch: 4 (books) or 2 (pairs)."""
    jokers: bool = False
    """Two jokers that pair with each other (pairs game only)."""
    decks: int = 1
    """Decks shuffled together: 1 or 2."""
    game_end: str = "last_catch"
    """"last_catch", "first_out" (a hand empty while the pool is empty), or "hand_or_pool_empty"
    (any hand empties, or the last card leaves the pool)."""
    winner: str = "catches_then_points"
    """"catches_then_points" (tiebreak points, then shared), "catches_shared", or "first_empty"
    (the first player to empty their hand by laying a catch wins, and the game ends then)."""
    match_target: int = 0
    """0 for one game; otherwise games are played until a seat reaches this many catches."""

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {
        "table": {},
        "bicycle": {
            "empty_hand_draw": "own_turn",
            "empty_hand_askable": True,
            "winner": "catches_shared",
        },
        "family": {"empty_hand_draw": "own_turn", "winner": "catches_shared"},
        "quick": {
            "deal": "seven_for_two",
            "empty_hand_draw": "never",
            "game_end": "hand_or_pool_empty",
            "winner": "catches_shared",
        },
        "ocean": {
            "deal": "seven",
            "first_player": 0,
            "empty_hand_draw": "own_turn",
            "winner": "catches_shared",
        },
        "pairs": {"set_size": 2},
        "two_decks": {"decks": 2, "deal": 5},
        "authors": {"deal": "whole_deck", "ask_for": "card"},
    }
    # Presets drawn from pages written for 2-4 players.
    PRESET_MAX_PLAYERS: ClassVar[dict[str, int]] = {"quick": 4, "ocean": 4}

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Rules:
        """The named bundle of house rules, with any field overridden."""
        if name not in cls.PRESETS:
            raise ValueError(f"preset: unknown preset {name!r}; allowed: {', '.join(cls.PRESETS)}")
        fields = [field.name for field in dataclasses.fields(cls)]
        unknown = [key for key in overrides if key not in fields]
        if unknown:
            raise TypeError(
                f"Rules.preset: unknown option {unknown[0]!r}; allowed: {', '.join(fields)}"
            )
        rules = cls(**{**cls.PRESETS[name], **overrides})
        limit = cls.PRESET_MAX_PLAYERS.get(name)
        if limit is not None and rules.players > limit:
            raise ValueError(
                f"players: the {name!r} preset is for 2..{limit} players, got {rules.players}"
            )
        return rules

    def replace(self, **changes: Any) -> Rules:
        return dataclasses.replace(self, **changes)

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):  # NumPy's integers are kept as Python's
            value = getattr(self, field.name)
            if is_integer(value) and type(value) is not int:
                object.__setattr__(self, field.name, int(value))
        _check_int("players", self.players, 2, 6)
        _check_choice("set_size", self.set_size, SET_SIZE_CHOICES)
        _check_choice("decks", self.decks, DECKS_CHOICES)
        _check_bool("jokers", self.jokers)
        if self.jokers and self.set_size != 2:
            raise ValueError(
                f"jokers: jokers pair with each other, so they need set_size=2, "
                f"got set_size={self.set_size}"
            )
        most_each = self.deck_size // self.players
        if type(self.deal) is int and self.deal > most_each:
            raise ValueError(
                f"deal: {self.deal} cards to each of {self.players} players is "
                f"{self.deal * self.players}, more than the {self.deck_size}-card deck; "
                f"allowed: at most {most_each} each"
            )
        _check_choice_or_int("deal", self.deal, DEAL_CHOICES, 1, most_each, "cards each")
        _check_choice_or_int(
            "first_player", self.first_player, FIRST_PLAYER_CHOICES, 0, self.players - 1, "a seat"
        )
        _check_choice("empty_hand_draw", self.empty_hand_draw, EMPTY_HAND_DRAW_CHOICES)
        _check_int("empty_hand_draw_count", self.empty_hand_draw_count, 1, self.deck_size)
        for name in (
            "empty_hand_askable",
            "fished_rank_asks_again",
            "off_rank_catch_asks_again",
            "ask_for_held_card",
        ):
            _check_bool(name, getattr(self, name))
        _check_choice("after_miss", self.after_miss, AFTER_MISS_CHOICES)
        _check_choice("ask_for", self.ask_for, ASK_FOR_CHOICES)
        _check_choice("game_end", self.game_end, GAME_END_CHOICES)
        _check_choice("winner", self.winner, WINNER_CHOICES)
        _check_int("match_target", self.match_target, 0, 10_000)
        if self.ask_for_held_card and self.ask_for != "card":
            raise ValueError(
                "ask_for_held_card: only meaningful with ask_for='card'; "
                f"got ask_for={self.ask_for!r}"
            )
        if self.ask_for == "card" and self.decks != 1:
            raise ValueError(
                "ask_for: exact-card asks need every card to be unique, so decks must be 1; "
                f"got decks={self.decks}"
            )
        if self.off_rank_catch_asks_again and not self.fished_rank_asks_again:
            raise ValueError(
                "off_rank_catch_asks_again: with fished_rank_asks_again=False the turn ends "
                "after any draw, so a catch completed by a draw cannot earn another ask; "
                "allowed: False, or True with fished_rank_asks_again=True"
            )
        # The whole deck leaves no pool even where it does not divide evenly (hand_size is
        # the smaller share then).
        leaves_no_pool = (
            self.deal == "whole_deck" or self.hand_size * self.players >= self.deck_size
        )
        if self.game_end == "hand_or_pool_empty" and leaves_no_pool:
            raise ValueError(
                f"game_end: 'hand_or_pool_empty' needs a pool, but deal={self.deal!r} with "
                f"{self.players} players leaves none; allowed without a pool: "
                f"{', '.join(repr(choice) for choice in GAME_END_CHOICES[:2])}"
            )

    @property
    def ranks(self) -> int:
        """Ranks in play: 13, or 14 with jokers."""
        return NUM_STANDARD_RANKS + (1 if self.jokers else 0)

    @property
    def deck_size(self) -> int:
        return 52 * self.decks + (2 if self.jokers else 0)

    def copies_of(self, rank: int) -> int:
        """Cards of one rank in the deck."""
        return 2 if rank == NUM_STANDARD_RANKS else 4 * self.decks

    @property
    def total_sets(self) -> int:
        """Catches in a full game: 13, 26 (pairs or two decks), 27 (pairs and jokers), ..."""
        return sum(self.copies_of(rank) // self.set_size for rank in range(self.ranks))

    @property
    def hand_size(self) -> int:
        """Cards dealt to each seat (with the whole deck, the seats nearest the dealer's left
        get one more when the deck does not divide evenly)."""
        if isinstance(self.deal, int):
            return self.deal
        if self.deal == "whole_deck":
            return self.deck_size // self.players
        if self.deal == "seven" or self.players == 2:
            return 7
        if self.deal == "table" and self.players == 3:
            return 7
        return 5

    @property
    def ask_count(self) -> int:
        """What an ask names: 13/14 ranks, or with exact-card asks 52/53 distinct cards."""
        if self.ask_for == "card":
            return 4 * NUM_STANDARD_RANKS + (1 if self.jokers else 0)
        return self.ranks

    def first_seat(self, rng: random.Random) -> int:
        """The seat that asks first under ``first_player`` (a "random" one drawn from
        ``rng``)."""
        if self.first_player == "random":
            return rng.randrange(self.players)
        if self.first_player == "dealer_left":
            return 0
        return self.first_player

    @property
    def total_points(self) -> int:
        """Tiebreak points of every catch together (each catch counts its rank's points)."""
        return sum(
            RANK_POINTS[rank] * (self.copies_of(rank) // self.set_size)
            for rank in range(self.ranks)
        )

    @classmethod
    def resolve(cls, players: int | None = None, rules: Rules | str | None = None) -> Rules:
        """The rules of a table from the two arguments the envs and the harness take: a
        ``Rules``, a preset name or None (the table rules), and a player count (default 4,
        or the ``Rules``' own). Both given must agree."""
        if rules is None:
            rules = "table"
        if isinstance(rules, str):
            if rules not in cls.PRESETS:
                raise ValueError(
                    f"rules: unknown preset {rules!r}; allowed: {', '.join(cls.PRESETS)}, or a "
                    f"gofish_env.Rules"
                )
            return cls.preset(rules, players=4 if players is None else players)
        if not isinstance(rules, Rules):
            raise ValueError(f"rules: got {rules!r}; allowed: a preset name or a gofish_env.Rules")
        if players is not None and players != rules.players:
            raise ValueError(
                f"players: got {players} but rules.players is {rules.players}; give one, or "
                f"both equal"
            )
        return rules

    def describe(self, leave_out: tuple[str, ...] = ()) -> str:
        """The fields that differ from the table rules, e.g. ``players=3, set_size=2``;
        those named in ``leave_out`` are not told."""
        table = Rules()
        changed = [
            f"{field.name}={getattr(self, field.name)!r}"
            for field in dataclasses.fields(self)
            if field.name not in leave_out
            and getattr(self, field.name) != getattr(table, field.name)
        ]
        return ", ".join(changed) or "table rules"


@lru_cache(maxsize=64)
def rules_name(rules: Rules) -> str:
    """``"table rules"``, ``"pairs rules"``, ...: the preset the rules are, whatever the
    player count; otherwise the fields that differ from the table rules."""
    for name in Rules.PRESETS:
        try:
            if Rules.preset(name, players=rules.players) == rules:
                return f"{name} rules"
        except ValueError:  # a preset for fewer players
            continue
    return rules.describe(leave_out=("players",))


def is_integer(value: Any) -> bool:
    """Whether ``value`` is an integer, Python's or NumPy's (any ``numbers.Integral``), and
    not a bool: every integer setting takes both (and keeps a Python ``int``)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a real number, Python's or NumPy's, and not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def seeded_random(seed: int | None) -> random.Random:
    """A generator from an integer seed (Python's or NumPy's), or unseeded for None."""
    if seed is not None and not is_integer(seed):
        raise ValueError(f"seed: got {seed!r}; allowed: an integer, or None (unseeded)")
    return random.Random(None if seed is None else int(seed))


def _check_int(field: str, value: Any, low: int, high: int) -> None:
    if not is_integer(value) or not low <= value <= high:
        raise ValueError(f"{field}: got {value!r}; allowed: an integer from {low} to {high}")


def _check_choice(field: str, value: Any, choices: tuple) -> None:
    # By type as well as value: 4.0 == 4, but a float set size or deck count breaks the game.
    if not any(type(value) is type(choice) and value == choice for choice in choices):
        allowed = ", ".join(repr(choice) for choice in choices)
        raise ValueError(f"{field}: got {value!r}; allowed: {allowed}")


def _check_choice_or_int(
    field: str, value: Any, choices: tuple, low: int, high: int, what: str
) -> None:
    """A named choice, or an integer from ``low`` to ``high`` (``what`` it counts)."""
    if isinstance(value, str) and value in choices:
        return
    if is_integer(value) and low <= value <= high:
        return
    named = ", ".join(repr(choice) for choice in choices)
    raise ValueError(
        f"{field}: got {value!r}; allowed: {named}, or {what} as an integer from {low} to {high}"
    )


def _check_bool(field: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{field}: got {value!r}; allowed: True or False")
