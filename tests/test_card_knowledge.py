"""Exact-card asks: the single cards the table follows (``PublicKnowledge.known_holds`` /
``known_lacks``), what one viewer proves from them (``PlayerView.card_holds`` /
``card_lacks``, ``bounds.card_bounds_into``) and the observation sections that carry them
(``own_cards``, ``cards_held``, ``cards_lacked``).

Each scenario builds an exact position, plays the asks the rule needs and reads one
viewer's deductions; the last tests check that nothing proved is ever false, over random
games of every exact-card variant.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from helpers import position

from gofish_env import Rules, env
from gofish_env.cards import parse_card
from gofish_env.cpus import make_cpu
from gofish_env.game import Game
from gofish_env.knowledge import KnowledgeTracker


def card(text: str) -> int:
    """Card index (rank * 4 + suit, suits C D H S)."""
    rank, suit = parse_card(text)
    return 4 * rank + suit


def proved(game, viewer: int) -> tuple[np.ndarray, np.ndarray]:
    """(holds, lacks) as ``viewer`` proves them now, absolute seats x card indices."""
    view = KnowledgeTracker(game).view(viewer)
    return view.card_holds, view.card_lacks


CARD_ASKS = Rules(players=3, ask_for="card")
AUTHORS = Rules.preset("authors", players=3)


def test_a_hit_shows_the_card_in_the_askers_hand_and_gone_from_the_targets():
    game = position(["7H QS", "7C KD", "4C"], rules=CARD_ASKS)
    game.ask(1, "7C")
    holds, lacks = proved(game, 2)
    assert holds[0, card("7C")] == 1 and lacks[0, card("7C")] == 0
    assert holds[1, card("7C")] == 0 and lacks[1, card("7C")] == 1


def test_a_miss_proves_the_target_lacks_the_card_and_asking_proves_the_asker_lacks_it():
    game = position(["7H QS", "7C KD", "4C"], pool_top="2C", rules=CARD_ASKS)
    holds, lacks = proved(game, 2)
    assert lacks[0, card("7D")] == 0 and lacks[1, card("7D")] == 0  # nothing said yet
    game.ask(1, "7D")  # a miss; seat 0 draws the 2C unseen
    holds, lacks = proved(game, 2)
    assert lacks[1, card("7D")] == 1
    assert lacks[0, card("7D")] == 1  # it asked for it, and the card it drew was not it
    assert not holds[:2].any()


def test_with_held_card_asks_asking_proves_nothing_about_the_asker():
    rules = CARD_ASKS.replace(ask_for_held_card=True)
    game = position(["7H QS", "7C KD", "4C"], pool_top="2C", rules=rules)
    game.ask(1, "7D")
    _, lacks = proved(game, 2)
    assert lacks[1, card("7D")] == 1
    assert lacks[0, card("7D")] == 0  # it may hold the 7D and have bluffed


def test_a_private_draw_may_bring_any_card_but_the_one_asked_for():
    game = position(["7H QS", "7C KD", "4C"], pool_top="2C 2D", rules=CARD_ASKS)
    game.ask(1, "QH")  # seat 1 lacks the QH; seat 0 draws the 2C unseen
    assert proved(game, 2)[1][1, card("QH")] == 1
    game.ask(2, "KC")  # seat 1 misses on the KC and draws the 2D unseen
    _, lacks = proved(game, 2)
    assert lacks[1, card("QH")] == 0  # the 2D might have been the QH
    assert lacks[1, card("KC")] == 1  # it was not the KC: that would have been shown


def test_a_catch_right_after_a_private_draw_shows_the_draw_was_of_the_caught_rank():
    rules = Rules(players=2, ask_for="card", set_size=2)
    game = position(["7H QS", "7C KD"], pool_top="2C QD", rules=rules, first_player=1)
    game.ask(0, "7S")  # a miss: seat 0 lacks the 7S; seat 1 draws the 2C unseen
    assert proved(game, 1)[1][0, card("7S")] == 1
    game.ask(1, "QH")  # a miss; seat 0 draws the QD unseen and lays QS QD at once
    assert game.catches(0) == [parse_card("QS")[0]]
    _, lacks = proved(game, 1)
    assert lacks[0, card("7S")] == 1  # the drawn card was a queen, not the 7S


def test_a_seat_that_draws_into_an_empty_hand_may_hold_any_card():
    game = position(["7H 7D QS", "7C", "7S 4C"], pool_top="2C 2D", rules=CARD_ASKS)
    game.ask(1, "QH")  # seat 1 lacks the QH; seat 0 draws the 2C unseen
    assert proved(game, 2)[1][1, card("QH")] == 1
    for target, wanted in ((0, "7H"), (2, "7S"), (0, "7D")):
        game.ask(target, wanted)  # seat 1 takes three sevens and lays them
    assert game.catches(1) == [parse_card("7C")[0]]
    _, lacks = proved(game, 2)
    assert lacks[1, card("QH")] == 0  # its one card, drawn when its hand emptied


def test_cards_in_the_viewers_hand_or_in_catches_are_lacked_by_every_opponent():
    rules = Rules(players=3, ask_for="card", set_size=2)
    game = position(["7H QS", "7S KD", "4C"], catches=[["9"], [], []], rules=rules)
    _, lacks = proved(game, 2)
    assert (lacks[:2, card("4C")] == 1).all()  # the viewer's own
    assert (lacks[:2, card("9C")] == 1).all() and (lacks[:2, card("9D")] == 1).all()  # laid
    assert (lacks[:2, card("9H")] == 0).all()  # its pair is still out


def test_with_the_pool_empty_a_card_only_one_opponent_may_hold_is_held_by_it():
    hands = ["QS 5C", "QH 5D", "QD QC 5H 5S"]
    game = position(hands, rules=AUTHORS, rest=0, first_player=2)
    game.ask(1, "QS")  # seat 1 lacks the QS: the one place left for it is seat 0's hand
    holds, lacks = proved(game, 2)
    assert lacks[1, card("QS")] == 1
    assert holds[0, card("QS")] == 1
    assert holds[0, card("QH")] == 0 and holds[1, card("QH")] == 0  # either may hold it


def test_while_the_pool_has_cards_a_card_no_opponent_is_known_to_hold_may_be_in_it():
    hands = ["QS 5C", "QH 5D", "QD QC 5H"]
    game = position(hands, pool_top="5S", rules=CARD_ASKS, first_player=2)
    game.ask(1, "QS")  # a miss again, but the QS might be in the pool
    holds, lacks = proved(game, 2)
    assert lacks[1, card("QS")] == 1
    assert holds[0, card("QS")] == 0


def test_an_opponent_proved_to_hold_a_rank_holds_the_one_card_of_it_it_may_hold():
    hands = ["QS 5C", "QH 5D", "QD QC 5H 5S"]
    game = position(hands, rules=AUTHORS, rest=1, first_player=0)
    game.ask(2, "QH")  # seat 0 holds a queen, not the QH; the viewer holds QD and QC
    holds, lacks = proved(game, 2)
    assert lacks[0, card("QH")] == 1
    assert holds[0, card("QS")] == 1


def test_a_card_proved_held_by_one_step_is_lacked_by_the_other_opponents():
    # The proofs go on until nothing more follows: the QS, proved at seat 0 from its rank
    # (not seen arrive), is then lacked at seat 1.
    hands = ["QS 5C", "QH 5D", "QD QC 5H"]
    game = position(hands, pool_top="5S", rules=CARD_ASKS, first_player=0)
    game.ask(2, "QH")  # seat 0 holds a queen, not the QH; the viewer holds QD and QC
    holds, lacks = proved(game, 2)
    assert holds[0, card("QS")] == 1
    assert lacks[1, card("QS")] == 1  # while the pool holds a card


def test_an_opponent_whose_known_cards_of_a_rank_reach_its_most_lacks_the_others():
    hands = ["QH 5C", "QS QC 5D 5S", "QD 5H"]
    game = position(hands, rules=AUTHORS, rest=1, first_player=0)
    game.ask(1, "QS")  # seat 0 takes the QS
    game.ask(2, "5S")  # a miss: seat 1 is to move
    game.ask(0, "QH")  # seat 1 takes the QH: seat 0 holds the QS and at most one queen
    game.ask(2, "5C")  # a miss
    view = KnowledgeTracker(game).view(2)
    assert view.most[0, parse_card("QS")[0]] == 1
    holds, lacks = view.card_holds, view.card_lacks
    assert holds[0, card("QS")] == 1
    assert lacks[0, card("QC")] == 1  # no event named the QC to seat 0
    assert holds[1, card("QC")] == 1  # seat 1 holds two queens: the QH and the one left


def test_the_observation_carries_the_seats_cards_and_what_it_proves():
    aec = env(rules=AUTHORS)
    aec.reset(seed=4)
    layout = aec.unwrapped.layout
    for _ in range(6):
        agent = aec.agent_selection
        seat = aec.agents.index(agent)
        sections = layout.split(aec.observe(agent)["observation"])
        game = aec.unwrapped.game
        view = KnowledgeTracker(game).view(seat)
        opponents = [(seat + k) % 3 for k in (1, 2)]
        assert sections["own_cards"].tolist() == game.hand_card_counts(seat)
        assert (sections["cards_held"] == view.card_holds[opponents]).all()
        assert (sections["cards_lacked"] == view.card_lacks[opponents]).all()
        mask = aec.observe(agent)["action_mask"]
        aec.step(int(np.flatnonzero(mask)[0]))
    assert sections["cards_lacked"].any()


def test_rank_asks_have_no_single_card_sections():
    layout = env(players=4).unwrapped.layout
    assert not {"own_cards", "cards_held", "cards_lacked"} & set(layout.sections)
    view = KnowledgeTracker(Game(Rules(), 1)).view(0)
    with pytest.raises(ValueError, match="ask for ranks, not cards"):
        view.card_holds  # noqa: B018


CARD_VARIANTS = {
    "authors-3": AUTHORS,
    "authors-4": Rules.preset("authors"),
    "card-asks-4": Rules(ask_for="card"),
    "held-card-asks-3": Rules(players=3, ask_for="card", ask_for_held_card=True),
    "card-pairs-jokers-3": Rules(players=3, ask_for="card", set_size=2, jokers=True),
    "card-pairs-refill-3": Rules(
        players=3, ask_for="card", set_size=2, empty_hand_draw_count=5, deal=3
    ),
    "card-asks-own-turn-2": Rules(players=2, ask_for="card", empty_hand_draw="own_turn"),
}


@pytest.mark.parametrize("rules", CARD_VARIANTS.values(), ids=CARD_VARIANTS)
def test_what_a_viewer_proves_about_single_cards_is_true(rules):
    """Across random games, every card proved held is in that hand and every card proved
    lacked is not, for every viewer after every ask; and the proofs are not empty."""
    players = rules.players
    totals = np.zeros(2, np.int64)
    for seed in range(6):
        game = Game(rules, seed)
        tracker = KnowledgeTracker(game)
        cpus = [make_cpu("normal" if s % 2 else "random", seed * 10 + s) for s in range(players)]
        rng = random.Random(seed)
        for _ in range(300):
            if game.is_over:
                break
            truth = np.array([game.hand_card_counts(s) for s in range(players)])
            viewer = rng.randrange(players)
            view = tracker.view(viewer)
            holds, lacks = view.card_holds, view.card_lacks
            assert not ((holds == 1) & (truth == 0)).any(), f"seed {seed}: a held card is not"
            assert not ((lacks == 1) & (truth > 0)).any(), f"seed {seed}: a lacked card is held"
            totals += holds.sum() - truth[viewer].astype(bool).sum(), lacks.sum()
            seat = game.current_player
            target, wanted = cpus[seat].choose(tracker.view(seat))
            game.ask(target, wanted)
    assert totals[0] > 0 and totals[1] > 0
