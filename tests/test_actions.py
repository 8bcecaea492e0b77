"""The action codec (``gofish_env.actions.ActionCodec``): every action is one ask of another
seat for one rank (or card), targets counted from the acting seat's left, and back.

Rank indices: 7 -> 5, K -> 11.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import rank

import gofish_env
from gofish_env import Game, Rules
from gofish_env.actions import ActionCodec

SEVEN, KING = rank("7"), rank("K")


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize(
    "rules_for",
    [
        lambda p: Rules(players=p),
        lambda p: Rules.preset("pairs", jokers=True, players=p),
        lambda p: Rules.preset("authors", players=p),
        lambda p: Rules(players=p, ask_for="card", set_size=2, jokers=True),
    ],
    ids=["ranks", "ranks_jokers", "cards", "cards_jokers"],
)
def test_action_mapping_round_trips(players, rules_for):
    rules = rules_for(players)
    env = gofish_env.env(rules=rules)
    codec = env.unwrapped.codec
    asks = rules.ask_count
    assert asks == {13: 13, 14: 14}.get(rules.ranks) or rules.ask_for == "card"
    assert codec.size == (players - 1) * asks == env.action_space("player_0").n
    for seat in range(players):
        seen = set()
        for action in range(codec.size):
            target, what = codec.to_ask(seat, action)
            assert target == (seat + 1 + action // asks) % players
            assert what == action % asks
            assert target != seat
            assert codec.to_action(seat, target, what) == action
            seen.add((target, what))
        # Every (other seat, rank or card) is exactly one action.
        assert seen == {(t, w) for t in range(players) if t != seat for w in range(asks)}


def test_action_mapping_examples_and_errors():
    codec = gofish_env.raw_env(players=4).codec
    assert codec.to_ask(0, 0) == (1, 0)  # seat 0, action 0: the seat to the left, 2s
    assert codec.to_ask(0, 13 + SEVEN) == (2, SEVEN)
    assert codec.to_ask(3, 0) == (0, 0)  # "left" wraps around
    assert codec.to_ask(3, 2 * 13 + 12) == (2, 12)
    assert codec.to_action(2, 1, KING) == 2 * 13 + KING
    cards = gofish_env.raw_env(rules=Rules.preset("authors", players=3)).codec
    assert cards.to_ask(1, 52 + 4 * SEVEN + 2) == (0, 4 * SEVEN + 2)  # seat 1 asks seat 0: 7H
    for action in (-1, codec.size, True):
        with pytest.raises(ValueError, match="action"):
            codec.to_ask(0, action)
    with pytest.raises(ValueError, match="target"):
        codec.to_action(1, 1, 0)
    with pytest.raises(ValueError, match="target"):
        codec.to_action(1, 4, 0)
    with pytest.raises(ValueError, match="wanted"):
        codec.to_action(1, 2, 13)
    # A seat out of range would wrap round to another seat's ask.
    for seat in (-1, 4, True):
        with pytest.raises(ValueError, match=r"seat: got .*; allowed: 0 to 3"):
            codec.to_ask(seat, 0)
        with pytest.raises(ValueError, match=r"seat: got .*; allowed: 0 to 3"):
            codec.to_action(seat, 1, 0)


@pytest.mark.parametrize(
    "rules",
    [Rules(players=4), Rules.preset("authors", players=3), Rules.preset("pairs", jokers=True)],
    ids=["ranks", "cards", "ranks_jokers"],
)
def test_mask_has_a_one_exactly_at_the_actions_of_the_legal_asks(rules):
    codec = ActionCodec(rules)
    chooser = random.Random(1)
    for seed in range(3):
        game = Game(rules, seed=seed)
        while not game.is_over:
            seat, legal = game.current_player, game.legal_asks()
            mask = codec.mask(seat, legal)
            assert mask.dtype == np.int8 and mask.shape == (codec.size,)
            assert np.flatnonzero(mask).tolist() == sorted(
                codec.to_action(seat, target, wanted) for target, wanted in legal
            )
            game.ask(*chooser.choice(legal))
