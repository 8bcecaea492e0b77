"""One scenario per rule and per house rule of docs/rules.md, each from an exact position.

Positions are built with ``helpers.position``: the hands named, the pool's top cards named,
and every other card after them in the pool in deck order (2C 2D 2H 2S 3C ...), or with
``rest=seat`` laid as that seat's catches (a position in play).
Seats: 0..P-1; ranks in events are indices (2 -> 0, 7 -> 5, Q -> 10, A -> 12, joker -> 13).
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from helpers import dealt, deck_cards, position, rank, snapshot

from gofish_env import Game, IllegalAsk, Rules
from gofish_env.cards import parse_card
from gofish_env.events import (
    Ask,
    Catch,
    Deal,
    Draw,
    EmptyHandDraw,
    GameOver,
    GoFish,
    Hit,
    Out,
    Pass,
)

SEVEN, NINE, QUEEN, KING, JACK = rank("7"), rank("9"), rank("Q"), rank("K"), rank("J")


def card(text: str) -> int:
    """Card index (rank * 4 + suit, suits C D H S) as used by exact-card asks and events."""
    r, suit = parse_card(text)
    return 4 * r + suit


def play_out(game: Game, seed: int = 0, limit: int = 20_000) -> None:
    chooser = random.Random(seed)
    for _ in range(limit):
        if game.is_over:
            return
        game.ask(*chooser.choice(game.legal_asks()))
    raise AssertionError("game did not end")


def assert_refused(game: Game, target, what, pattern: str) -> None:
    before = snapshot(game)
    with pytest.raises(IllegalAsk, match=pattern):
        game.ask(target, what)
    assert snapshot(game) == before


# ----------------------------------------------------------------------------- the deal (rule 2)


@pytest.mark.parametrize(
    ("players", "size", "pool"), [(2, 7, 38), (3, 7, 31), (4, 5, 32), (5, 5, 27), (6, 5, 22)]
)
def test_deal_gives_seven_each_to_two_or_three_players_and_five_to_four_or_more(
    players, size, pool
):
    game = Game(Rules(players=players), seed=3)
    assert game.events[0] == Deal((size,) * players, pool, 0)
    caught = sum(len(game.catches(seat)) for seat in range(players))
    held = sum(len(game.hand(seat)) for seat in range(players))
    assert held + game.pool_size + 4 * caught == 52


@pytest.mark.parametrize("first_player", ["dealer_left", 2])
def test_deal_is_one_card_at_a_time_from_the_top_starting_with_the_first_player(first_player):
    rules = Rules(players=4, first_player=first_player)
    checked = 0
    for seed in range(12):
        game = Game(rules, seed=seed)
        hands, pool, first = dealt(rules, seed)
        assert game.events[0].first_player == first
        if len(game.events) > 1:  # an opening catch changed a hand; checked elsewhere
            continue
        assert [sorted(game.hand(seat)) for seat in range(4)] == [sorted(hand) for hand in hands]
        assert game.pool_cards() == pool
        checked += 1
    assert checked >= 6


def test_whole_deck_deal_gives_the_extra_cards_to_the_seats_from_the_dealers_left():
    game = Game(Rules(players=5, deal="whole_deck", first_player=3), seed=0)
    # Dealer is seat 2; seats 3 and 4 get the two extra cards.
    assert game.events[0] == Deal((10, 10, 10, 11, 11), 0, 3)


def test_dealer_is_the_seat_before_the_first_player_and_opening_catches_go_from_the_dealer():
    hands = ["2C 2D 2H 2S 9C", "3C 3D 3H 3S 9D", "5C 6C", "4C 4D 4H 4S 9H"]
    # First player 2: the dealer is seat 1, so catches are laid by seats 1, (2), 3, 0.
    game = position(hands, first_player=2)
    assert game.events[1:] == [Catch(1, rank("3")), Catch(3, rank("4")), Catch(0, rank("2"))]
    assert game.current_player == 2
    # First player 0 (the default): the dealer is the last seat, 3.
    game = position(hands)
    assert game.events[1:] == [Catch(3, rank("4")), Catch(0, rank("2")), Catch(1, rank("3"))]
    assert game.current_player == 0


def test_same_seed_gives_the_same_deal_and_another_seed_another():
    rules = Rules(players=3)
    one, two, other = Game(rules, seed=42), Game(rules, seed=42), Game(rules, seed=43)
    assert snapshot(one) == snapshot(two)
    assert [one.hand(s) for s in range(3)] != [other.hand(s) for s in range(3)]


def test_first_player_random_is_drawn_by_the_seed_and_the_deal_starts_there():
    rules = Rules(players=3, first_player="random", deal="whole_deck")
    firsts = set()
    for seed in range(30):
        game = Game(rules, seed=seed)
        deal = game.events[0]
        firsts.add(deal.first_player)
        assert deal.hand_sizes[deal.first_player] == 18  # the extra card goes to the first
        assert game.current_player == deal.first_player
        assert Game(rules, seed=seed).events[0] == deal
    assert firsts == {0, 1, 2}


@pytest.mark.parametrize(("rules_first", "expected"), [(2, 2), ("dealer_left", 0), ("random", 0)])
def test_an_exact_position_starts_at_the_rules_seat_unless_told(rules_first, expected):
    rules = Rules(players=3, first_player=rules_first)
    pool = ["2C"]
    rest = [card for card in deck_cards(rules) if card not in ("7H", "QS", "7C", "2C")]
    hands = [["7H", "QS"], ["7C"], rest]
    game = Game.from_hands(hands, pool, rules=rules)
    assert game.current_player == game.events[0].first_player == expected
    assert Game.from_hands(hands, pool, rules, first_player=1).current_player == 1


def test_first_player_given_seat_asks_first():
    game = Game(Rules(players=4, first_player=2), seed=5)
    assert game.events[0].first_player == 2
    assert game.current_player == 2
    assert all(target != 2 for target, _ in game.legal_asks())


def test_deal_event_reads_as_a_sentence():
    assert str(Game(Rules(players=4), seed=1).events[0]) == (
        "Dealt 5, 5, 5, 5 cards; 32 in the pool; seat 0 asks first."
    )


# ----------------------------------------------------------------------- opening catches (rule 3)


def test_opening_catches_are_laid_from_the_dealer_going_left_then_empty_hands_draw_in_order():
    game = position(
        ["KC KD KH KS 3C", "9C 9D 9H 9S", "5C 5D 5H 5S"], pool_top=["2C", "2D"]
    )  # 3 players: the dealer is seat 2
    assert game.events == [
        Deal((5, 4, 4), 39, 0),
        Catch(2, rank("5")),
        Catch(0, KING),
        Catch(1, NINE),
        EmptyHandDraw(2, 1),
        EmptyHandDraw(1, 1),
    ]
    assert game.hand(2) == ["2C"]
    assert game.hand(1) == ["2D"]
    assert game.hand(0) == ["3C"]
    assert game.pool_size == 37
    assert game.current_player == 0


def test_hand_dealt_only_catches_lays_them_all_and_draws_one_card():
    game = position(["7C 7D 7H 7S 9C 9D 9H 9S", "2C", "3C"], pool_top=["KD", "KH"])
    assert game.events[1:] == [Catch(0, SEVEN), Catch(0, NINE), EmptyHandDraw(0, 1)]
    assert game.hand(0) == ["KD"]
    assert game.catches(0) == [SEVEN, NINE]


def test_opening_empty_hand_waits_for_its_own_turn_under_own_turn_draws():
    game = position(
        ["7C QS", "9C 9D 9H 9S", "4C"],
        pool_top=["2C", "KD"],
        rules=Rules.preset("family", players=3),
    )
    assert game.events[1:] == [Catch(1, NINE)]
    assert game.hand(1) == []
    assert {target for target, _ in game.legal_asks()} == {2}
    game.ask(2, "Q")  # miss, fishes 2C: the turn passes to seat 1, which draws to start it
    assert game.events[-4:] == [
        Ask(0, 2, QUEEN),
        GoFish(0, 2, QUEEN),
        Draw(0, None),
        EmptyHandDraw(1, 1),
    ]
    assert game.hand(1) == ["KD"]
    assert game.current_player == 1


def test_opening_position_holding_every_card_in_one_hand_is_over_at_once():
    game = Game.from_hands([deck_cards(Rules()), [], []], [], rules=Rules(players=3))
    assert game.is_over
    assert game.catches(0) == list(range(13))
    assert game.winners == (0,)
    assert isinstance(game.events[-1], GameOver)


# ------------------------------------------------------------------------ refused asks (rule 4)


def test_asking_yourself_is_refused_and_changes_nothing():
    game = position(["7H QS", "7C", "4C"])
    assert_refused(game, 0, "7", r"cannot ask yourself")


def test_asking_a_seat_with_no_cards_is_refused_and_changes_nothing():
    game = position(["7H QS", "9C 9D 9H 9S", "4C"], rules=Rules.preset("family", players=3))
    assert game.hand(1) == [] and not game.is_out(1)
    assert_refused(game, 1, "7", r"seat 1 holds no cards")


def test_asking_an_out_seat_is_refused_and_changes_nothing():
    game = position(["7H 7C", "", "7D 7S"], rest=1)  # pool empty: seat 1 is out
    assert game.is_out(1)
    assert_refused(game, 1, "7", r"seat 1 is out")


def test_asking_for_a_rank_you_do_not_hold_is_refused_and_changes_nothing():
    game = position(["7H QS", "7C KD", "4C"])
    assert_refused(game, 1, "K", r"you hold no kings")
    assert_refused(game, 1, 0, r"you hold no 2s")


def test_an_ask_by_numpy_integers_is_the_ask_by_ints():
    """An action read from an array (np.int64) asks as plain ints do; the log holds ints."""
    by_ints, by_numpy = position(["7H QS", "7C", "4C"]), position(["7H QS", "7C", "4C"])
    assert by_numpy.ask(np.int64(1), np.int64(5)) == by_ints.ask(1, 5)
    assert by_numpy.events == by_ints.events
    ask = by_numpy.events[1]
    assert (type(ask.target), type(ask.rank)) == (int, int)
    assert by_numpy.hand(np.int8(0)) == by_ints.hand(0)


@pytest.mark.parametrize("target", [3, -1, 7, "1", True, None, 1.0, np.True_, np.float64(1)])
def test_asking_something_that_is_not_a_seat_is_refused_and_changes_nothing(target):
    game = position(["7H QS", "7C", "4C"])
    assert_refused(game, target, "7", r"not a seat")


@pytest.mark.parametrize("what", ["Z", "11", 13, -1, 2.5, None, "JK", np.float64(5), np.int64(13)])
def test_asking_for_something_that_is_not_a_rank_is_refused_and_changes_nothing(what):
    game = position(["7H QS", "7C", "4C"])
    assert_refused(game, 1, what, r"not a rank")


def test_asking_after_the_game_is_over_is_refused_and_changes_nothing():
    game = position(["7H 7C 7D", "7S"], rest=1)
    game.ask(1, "7")
    assert game.is_over
    assert_refused(game, 1, "7", r"game is over")


def test_asking_for_a_card_you_hold_under_exact_card_asks_is_refused_and_changes_nothing():
    game = position(["7H QS", "7C", "4C"], rules=Rules(players=3, ask_for="card"))
    assert (1, card("7H")) not in game.legal_asks()
    assert_refused(game, 1, "7H", r"you hold 7H yourself")
    assert_refused(game, 1, card("7H"), r"you hold 7H yourself")


def test_asking_for_a_card_already_in_a_catch_is_refused():
    rules = Rules(players=2, set_size=2, ask_for="card")
    game = position(["7H QS", "7S KD"], catches=[["7"], []], rules=rules)  # 7C 7D laid
    assert game.laid_cards == frozenset({card("7C"), card("7D")})
    assert_refused(game, 1, "7C", r"7C is already in a catch")
    assert {what for _, what in game.legal_asks()} == {card("7S"), card("QC"), card("QD")} | {
        card("QH")
    }


def test_asking_for_a_card_of_a_rank_you_do_not_hold_is_refused():
    game = position(["7H QS", "7C KD", "4C"], rules=Rules(players=3, ask_for="card"))
    assert_refused(game, 1, "KD", r"you hold no kings")
    assert_refused(game, 1, "KZ", r"not a card")
    assert_refused(game, 1, 52, r"not a card")


# ------------------------------------------------------------------------------ asks (rules 5, 6)


def test_hit_hands_over_every_card_of_the_rank_and_the_asker_asks_again():
    game = position(["7H QS", "7C 7D 4C", "5C", "6C"])
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 2)]
    assert [str(event) for event in events] == [
        "Seat 0 asks seat 1 for 7s.",
        "Seat 1 hands over 2 cards to seat 0.",
    ]
    assert game.hand(0) == ["7C", "7D", "7H", "QS"]
    assert game.hand(1) == ["4C"]
    assert game.current_player == 0
    assert game.num_asks == 1


def test_ask_takes_rank_strings_and_indices_alike():
    one, two = position(["7H QS", "7C 4C", "5C"]), position(["7H QS", "7C 4C", "5C"])
    assert one.ask(1, "7") == two.ask(1, SEVEN)
    assert str(Hit(0, 1, SEVEN, 1)) == "Seat 1 hands over 1 card to seat 0."


def test_go_fish_and_drawing_the_asked_rank_shows_it_and_the_asker_asks_again():
    game = position(["7H QS", "4C", "5C"], pool_top=["7C"])
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), GoFish(0, 1, SEVEN), Draw(0, SEVEN)]
    assert events[2].shown
    assert [str(event) for event in events[1:]] == [
        "Seat 1 says go fish.",
        "Seat 0 draws from the pool and shows a 7!",
    ]
    assert game.hand(0) == ["7C", "7H", "QS"]
    assert game.current_player == 0


def test_go_fish_drawing_another_rank_keeps_it_private_and_the_turn_passes_left():
    game = position(["7H QS", "4C", "5C"], pool_top=["2H"])
    pool_before = game.pool_size
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), GoFish(0, 1, SEVEN), Draw(0, None)]
    assert not events[2].shown
    assert str(events[2]) == "Seat 0 draws a card from the pool."
    assert "2H" in game.hand(0)
    assert game.pool_size == pool_before - 1
    assert game.current_player == 1


def test_miss_with_the_pool_empty_passes_the_turn_without_a_draw():
    game = position(["7H 8H", "8C 8D", "7C 7D 7S 8S"], rest=2)
    assert game.pool_size == 0
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), GoFish(0, 1, SEVEN)]
    assert game.current_player == 1
    assert game.hand(0) == ["7H", "8H"]


def test_miss_passes_the_turn_to_the_left_wrapping_round():
    game = position(["7H QS", "4C", "5C"], pool_top=["2H"], first_player=2)
    game.ask(0, "5")  # seat 2 holds 5C only: a miss, and the turn passes to seat 0
    assert game.current_player == 0


# ----------------------------------------------------------------------------- catches (rule 7)


def test_catch_completed_by_an_ask_is_laid_at_once_and_the_asker_asks_again():
    game = position(["7H 7C 7D QS", "7S 4C", "5C"])
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 1), Catch(0, SEVEN)]
    assert str(events[2]) == "Seat 0 lays a catch of 7s."
    assert game.catches(0) == [SEVEN]
    assert game.tiebreak_points(0) == 7
    assert game.hand(0) == ["QS"]
    assert game.current_player == 0


def test_catch_completed_by_drawing_the_asked_rank_is_laid_and_the_asker_asks_again():
    game = position(["7H 7C 7D QS", "4C", "5C"], pool_top=["7S"])
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), GoFish(0, 1, SEVEN), Draw(0, SEVEN), Catch(0, SEVEN)]
    assert game.hand(0) == ["QS"]
    assert game.current_player == 0


def test_catch_completed_by_an_off_rank_draw_is_laid_and_the_turn_still_passes():
    game = position(["9H 9C 9D QS", "4C", "5C"], pool_top=["9S"])
    events = game.ask(1, "Q")
    assert events == [Ask(0, 1, QUEEN), GoFish(0, 1, QUEEN), Draw(0, None), Catch(0, NINE)]
    assert game.catches(0) == [NINE]
    assert game.current_player == 1


def test_house_rule_off_rank_catch_asks_again():
    rules = Rules(players=3, off_rank_catch_asks_again=True)
    game = position(["9H 9C 9D QS", "4C", "5C"], pool_top=["9S"], rules=rules)
    events = game.ask(1, "Q")
    assert events == [Ask(0, 1, QUEEN), GoFish(0, 1, QUEEN), Draw(0, None), Catch(0, NINE)]
    assert game.current_player == 0
    # An off-rank draw that completes nothing still passes the turn.
    game = position(["9H QS", "4C", "5C"], pool_top=["9S"], rules=rules)
    game.ask(1, "Q")
    assert game.current_player == 1


# ------------------------------------------------------------------------- empty hands (rule 8)


def test_empty_hand_draws_one_card_at_once_even_on_another_players_turn():
    game = position(["7H QS", "7C 7D", "5C"], pool_top=["KD", "KH"])
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 2), EmptyHandDraw(1, 1)]
    assert str(events[2]) == "Seat 1 has an empty hand and draws a card."
    assert game.hand(1) == ["KD"]
    assert game.current_player == 0


def test_asker_emptied_by_laying_a_catch_draws_at_once_and_asks_again():
    game = position(["7H 7C 7D", "7S 4C", "5C"], pool_top=["KD"])
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 1), Catch(0, SEVEN), EmptyHandDraw(0, 1)]
    assert game.hand(0) == ["KD"]
    assert game.current_player == 0


# ------------------------------------------------------------------------ out and passing (rule 9)


def test_empty_hand_with_the_pool_empty_is_out_cannot_be_asked_and_its_turns_are_skipped():
    game = position(["7H 9H", "7C", "7D 7S", "9C 9D 9S"], rest=3)
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 1), Out(1)]
    assert str(events[2]) == "Seat 1 is out of cards and sits out."
    assert game.is_out(1)
    assert all(target != 1 for target, _ in game.legal_asks())
    events = game.ask(2, "9")  # a miss: the turn passes left, over seat 1, to seat 2
    assert events == [Ask(0, 2, NINE), GoFish(0, 2, NINE)]
    assert game.current_player == 2
    assert_refused(game, 1, "7", r"seat 1 is out")


def test_out_players_catches_still_count():
    game = position(["7H 7C 7D", "7S"], rest=1)
    game.ask(1, "7")
    assert game.winners == (1,)
    assert len(game.catches(1)) == 12


def test_player_to_move_with_no_legal_ask_passes():
    # Family rules: seat 1's hand is empty (it waits for its turn), so seat 0 has nobody to ask.
    game = position(["7H", ""], pool_top=["KD"], rules=Rules.preset("family", players=2))
    assert game.events[1:] == [Pass(0), EmptyHandDraw(1, 1)]
    assert str(game.events[1]) == "Seat 0 cannot ask and passes."
    assert game.current_player == 1
    assert game.hand(1) == ["KD"]


def test_taking_the_last_card_from_the_only_hand_left_to_ask_ends_the_turn_even_on_a_hit():
    # The short page's example (ocean rules): seat 2 is empty and waiting; seat 0 takes seat
    # 1's last card.
    rules = Rules.preset("ocean", players=3)
    game = position(["7H 9C", "7C", ""], pool_top=["KD", "KH"], rules=rules)
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 1), Pass(0), EmptyHandDraw(1, 1)]
    assert game.current_player == 1  # the next player draws to start their turn
    assert game.hand(1) == ["KD"]
    assert game.hand(2) == []


def test_only_one_hand_holding_cards_with_the_pool_empty_means_the_game_is_over():
    game = position(["7H 7C 8H 8C", "7D 7S", "8D 8S"], rest=2)
    game.ask(1, "7")  # seat 1 is now out
    assert not game.is_over
    events = game.ask(2, "8")  # takes seat 2's last cards: only seat 0 holds cards now
    assert events[-2] == Catch(0, rank("8"))
    assert isinstance(events[-1], GameOver)
    assert game.is_over
    assert all(game.hand(seat) == [] for seat in range(3))


# --------------------------------------------------------------------------- the end (rule 10)


def test_game_ends_when_the_last_catch_is_laid():
    game = position(["7H 7C 7D", "7S"], rest=1)
    events = game.ask(1, "7")
    points = tuple(game.tiebreak_points(seat) for seat in range(2))
    assert events == [
        Ask(0, 1, SEVEN),
        Hit(0, 1, SEVEN, 1),
        Catch(0, SEVEN),
        GameOver((1,), (1, 12), points, "every catch is laid"),
    ]
    assert points == (7, sum(range(2, 15)) - 7)
    assert game.is_over and game.current_player is None
    assert game.legal_asks() == ()
    assert str(events[-1]) == (
        f"Game over (every catch is laid): seat 1 wins. Catches: seat 0: 1 (7 pts), "
        f"seat 1: 12 ({points[1]} pts)."
    )


def test_most_catches_wins_the_family_pages_worked_example():
    # The family page's example: 3 players, 7 each and 31 in the pool; the game ends
    # 4 / 5 / 4 and the 5 wins.
    deal = Game(Rules(players=3), seed=0).events[0]
    assert deal.hand_sizes == (7, 7, 7) and deal.pool_size == 31
    game = position(
        ["", "2H 2C 2D", "2S"],
        catches=[["7", "3", "9", "Q"], ["A", "4", "6", "J"], ["5", "8", "10", "K"]],
        first_player=1,
    )
    events = game.ask(2, "2")
    assert events[-2] == Catch(1, rank("2"))
    assert events[-1].catches == (4, 5, 4)
    assert sum(events[-1].catches) == 13
    assert game.winners == (1,)


def _tiebreak_position(rules: Rules) -> Game:
    # The card-table rules' example: 5, 10, Q, K = 40 against A, 4, 6, 7 = 31, both with four
    # catches.
    return position(
        ["", "", "JS", "JC JD JH"],
        catches=[["5", "10", "Q", "K"], ["A", "4", "6", "7"], ["2", "3", "8"], ["9"]],
        first_player=3,
        rules=rules,
    )


def test_level_on_catches_is_won_on_tiebreak_points_the_card_table_example():
    game = _tiebreak_position(Rules())
    assert game.tiebreak_points(0) == 40
    assert game.tiebreak_points(1) == 31
    events = game.ask(2, "J")
    assert events[-1] == GameOver((0,), (4, 4, 3, 2), (40, 31, 13, 20), "every catch is laid")
    assert game.winners == (0,)
    assert "seat 0 wins" in str(events[-1])


def test_level_on_catches_and_points_share_the_win():
    game = position(
        ["", "QH QC QD", "QS"],
        catches=[["2", "5", "6", "9", "A"], ["3", "4", "7", "10"], ["8", "J", "K"]],
        first_player=1,
    )
    game.ask(2, "Q")
    over = game.events[-1]
    assert over.catches == (5, 5, 3) and over.points == (36, 36, 32)
    assert game.winners == (0, 1)
    assert "seats 0, 1 share the win" in str(over)


def test_house_rule_catches_shared_ignores_tiebreak_points():
    game = _tiebreak_position(Rules(winner="catches_shared"))
    game.ask(2, "J")
    assert game.winners == (0, 1)


# ------------------------------------------------------------------------------- house rules


def test_house_rule_deal_seven_for_everyone_and_seven_for_two_only():
    assert Game(Rules(players=5, deal="seven"), seed=1).events[0].hand_sizes == (7,) * 5
    assert Game(Rules(players=3, deal="seven_for_two"), seed=1).events[0].hand_sizes == (5,) * 3
    assert Game(Rules(players=2, deal="seven_for_two"), seed=1).events[0].hand_sizes == (7, 7)
    assert Game(Rules(players=3, deal=4), seed=1).events[0].hand_sizes == (4, 4, 4)


def test_house_rule_whole_deck_leaves_no_pool_and_a_miss_passes_the_turn():
    game = Game(Rules(players=3, deal="whole_deck"), seed=9)
    assert game.pool_size == 0
    chooser = random.Random(9)
    misses = 0
    while not game.is_over:
        asker = game.current_player
        events = game.ask(*chooser.choice(game.legal_asks()))
        if isinstance(events[1], GoFish):
            misses += 1
            assert not any(isinstance(event, Draw | EmptyHandDraw) for event in events)
            assert game.is_over or game.current_player != asker
    assert misses > 0


def test_own_turn_draw_player_emptied_on_another_turn_draws_when_its_turn_comes():
    rules = Rules.preset("family", players=3)
    game = position(["7H QS", "7C 7D", "5C"], pool_top=["2H", "KD"], rules=rules)
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 2)]  # no draw yet
    assert game.hand(1) == [] and not game.is_out(1)
    assert_refused(game, 1, "Q", r"seat 1 holds no cards")
    events = game.ask(2, "Q")  # miss, fishes 2H; seat 1's turn starts with its draw
    assert events == [Ask(0, 2, QUEEN), GoFish(0, 2, QUEEN), Draw(0, None), EmptyHandDraw(1, 1)]
    assert game.hand(1) == ["KD"]
    assert game.current_player == 1


def test_own_turn_draw_asker_emptied_while_it_keeps_asking_draws_at_once():
    rules = Rules.preset("family", players=3)
    game = position(["7H 7C 7D", "7S 4C", "5C"], pool_top=["KD"], rules=rules)
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 1), Catch(0, SEVEN), EmptyHandDraw(0, 1)]
    assert game.current_player == 0
    assert game.hand(0) == ["KD"]


def test_own_turn_draw_asker_emptied_as_its_turn_ends_waits_for_its_next_turn():
    # The catch comes from fishing the asked rank, but that draw ends the turn
    # (fished_rank_asks_again=False), so the empty asker waits.
    rules = Rules.preset("family", players=3, fished_rank_asks_again=False)
    game = position(["7H 7C 7D", "4C", "5C"], pool_top=["7S", "KD", "KH"], rules=rules)
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), GoFish(0, 1, SEVEN), Draw(0, SEVEN), Catch(0, SEVEN)]
    assert game.hand(0) == [] and game.current_player == 1
    game.ask(2, "4")  # seat 1 misses and fishes KD
    game.ask(1, "5")  # seat 2 misses and fishes KH; seat 0's turn starts with its draw
    assert game.events[-1] == EmptyHandDraw(0, 1)
    assert game.current_player == 0
    assert len(game.hand(0)) == 1


def test_own_turn_draw_asker_whose_hit_leaves_no_one_to_ask_waits_for_its_next_turn():
    # Taking the last cards of the only hand left to ask ends the turn even on a hit: the
    # emptied asker does not draw at once; the next player draws to start its turn.
    rules = Rules.preset("ocean", players=2)
    game = position(["7C 7D", "7H 7S"], pool_top=["2C", "2D"], rules=rules)
    events = game.ask(1, "7")
    assert events == [
        Ask(0, 1, SEVEN),
        Hit(0, 1, SEVEN, 2),
        Catch(0, SEVEN),
        Pass(0),
        EmptyHandDraw(1, 1),  # seat 1 draws the 2C to start its turn, has no one to ask
        Pass(1),
        EmptyHandDraw(0, 1),  # and seat 0 draws the 2D to start its own
    ]
    assert (game.hand(0), game.hand(1), game.current_player) == (["2D"], ["2C"], 0)


def test_never_draw_target_emptied_by_a_hit_does_not_draw():
    rules = Rules(players=3, empty_hand_draw="never")
    game = position(["7H QS", "7C 7D", "5C"], pool_top=["2H", "KD"], rules=rules)
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 2)]
    assert game.hand(1) == [] and not game.is_out(1)
    assert game.pool_cards()[:2] == ["2H", "KD"]


def test_never_draw_asker_emptied_while_it_keeps_asking_does_not_draw_and_passes():
    rules = Rules(players=3, empty_hand_draw="never")
    game = position(["7H 7D", "7S 7C 9C", "8C"], pool_top=["2H", "3H"], rules=rules)
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 2), Catch(0, SEVEN), Pass(0)]
    assert game.hand(0) == [] and game.pool_cards()[:2] == ["2H", "3H"]
    assert game.current_player == 1 and not game.is_out(0)


def test_never_draw_when_nobody_can_ask_each_seat_passes_once_and_the_game_ends():
    # Seat 0 empties its hand on a hit; seat 1 has no one to ask. Seat 0's pass is logged
    # once (it was logged twice, by the ask and by the round of passes after it).
    rules = Rules(players=2, empty_hand_draw="never")
    game = position(["7C 7D", "7H 7S 9C"], pool_top=["2H"], rules=rules)
    events = game.ask(1, "7")
    assert events[:5] == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 2), Catch(0, SEVEN), Pass(0), Pass(1)]
    assert len(events) == 6 and events[5].kind == "game_over"
    assert events[5].reason == "nobody can ask" and game.is_over


def test_never_draw_empty_hand_is_out_once_the_pool_is_empty():
    rules = Rules(players=3, empty_hand_draw="never")
    game = position(
        ["7H 7D", "7S 7C 9C 9D 9H 5H 5S", "5C 5D"], pool_top=["9S"], rest=2, rules=rules
    )
    game.ask(1, "7")  # seat 0 lays its 7s and is left with an empty hand
    assert not game.is_out(0) and game.pool_size == 1
    events = game.ask(2, "9")  # seat 1 fishes the pool's last card
    assert events == [Ask(1, 2, NINE), GoFish(1, 2, NINE), Draw(1, NINE), Catch(1, NINE), Out(0)]
    assert game.is_out(0) and game.current_player == 1


def test_house_rule_refill_draws_n_cards():
    rules = Rules(players=3, empty_hand_draw_count=5)
    game = position(["7H QS", "7C 7D", "5C"], pool_top="2H 3H 4H 5H 6H 8H", rules=rules)
    events = game.ask(1, "7")
    assert events[-1] == EmptyHandDraw(1, 5)
    assert str(events[-1]) == "Seat 1 has an empty hand and draws 5 cards."
    assert game.hand(1) == ["2H", "3H", "4H", "5H", "6H"]
    assert game.hand_sizes() == (4, 5, 1)
    assert game.pool_cards()[0] == "8H"


def test_house_rule_refill_takes_what_is_left_when_the_pool_is_short():
    rules = Rules(players=3, empty_hand_draw_count=5)
    game = position(
        ["7H QS", "7C 7D", "2S 7S QH QC QD"], pool_top=["2C", "2D", "2H"], rest=2, rules=rules
    )
    events = game.ask(1, "7")
    assert events[-1] == EmptyHandDraw(1, 3)
    assert game.hand(1) == ["2C", "2D", "2H"]
    assert game.hand_size(1) == 3
    assert game.pool_size == 0
    assert not any(game.is_out(seat) for seat in range(3))


def test_house_rule_refill_at_the_start_of_your_own_turn():
    rules = Rules.preset("family", players=3, empty_hand_draw_count=5)
    game = position(["7H QS", "7C 7D", "5C"], pool_top="2H 3H 4H 5H 6H 8H", rules=rules)
    game.ask(1, "7")
    assert game.hand(1) == []
    game.ask(2, "Q")  # fishes 2H, the turn passes to seat 1: it draws 5
    assert game.events[-1] == EmptyHandDraw(1, 5)
    assert game.hand(1) == ["3H", "4H", "5H", "6H", "8H"]


def test_house_rule_empty_hand_may_be_asked_while_the_pool_lasts_and_says_go_fish():
    rules = Rules.preset("bicycle", players=3)
    game = position(["7H QS", "9C 9D 9H 9S", "4C"], pool_top=["2H"], rules=rules)
    assert game.hand(1) == []
    assert (1, SEVEN) in game.legal_asks()
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), GoFish(0, 1, SEVEN), Draw(0, None), EmptyHandDraw(1, 1)]


def test_house_rule_empty_hand_askable_but_not_once_the_pool_is_empty():
    rules = Rules.preset("bicycle", players=3)
    game = position(["7H 7C", "", "7D 7S"], rest=1, rules=rules)
    assert game.is_out(1)
    assert_refused(game, 1, "7", r"seat 1 is out")


def test_house_rule_fishing_the_asked_rank_ends_the_turn():
    rules = Rules(players=3, fished_rank_asks_again=False)
    game = position(["7H QS", "4C", "5C"], pool_top=["7C"], rules=rules)
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), GoFish(0, 1, SEVEN), Draw(0, SEVEN)]
    assert game.current_player == 1


def test_house_rule_after_a_miss_the_turn_goes_to_the_player_asked():
    rules = Rules(players=4, after_miss="asked")
    game = position(["7H QS", "4C", "5C", "6C"], pool_top=["2H", "7C"], rules=rules)
    game.ask(2, "Q")
    assert game.current_player == 2
    # A hit or a shown fish still asks again.
    game = position(["7H QS", "4C", "5C", "6C"], pool_top=["7C"], rules=rules)
    game.ask(2, "7")
    assert game.current_player == 0


def test_house_rule_after_a_miss_with_the_pool_empty_goes_to_the_player_asked():
    rules = Rules(players=4, after_miss="asked")
    game = position(["7H 8H", "7C", "8C 8D", "7D 7S 8S"], rest=3, rules=rules)
    game.ask(2, "7")
    assert game.current_player == 2


def test_house_rule_after_a_shown_fish_that_leaves_no_ask_the_turn_passes_left():
    # The fish of the asked rank did not fail, so the turn does not go to the player asked:
    # the asker, out of cards with the pool empty, passes to its left (rule 9).
    rules = Rules(players=3, after_miss="asked")
    caught = [[], ["4", "5", "6", "8", "9"], ["10", "J", "Q", "K", "A"]]
    hands = ["7C 7D 7H", "2C 2D 3C 3H", "2H 2S 3D 3S"]
    game = position(hands, pool_top=["7S"], rules=rules, catches=caught)
    assert game.pool_cards() == ["7S"]
    events = game.ask(2, "7")
    assert events[:4] == [Ask(0, 2, SEVEN), GoFish(0, 2, SEVEN), Draw(0, SEVEN), Catch(0, SEVEN)]
    assert game.is_out(0) and game.current_player == 1


def test_exact_card_asks_with_pairs_a_catch_names_the_cards_it_lays():
    # Which two queens lie in the catch decides which queens may still be asked for, so the
    # catch shows them, as on the table.
    rules = Rules(players=3, ask_for="card", set_size=2)
    game = position(["QH 2C", "QS 3C", "QC 4C"], pool_top=["5H", "5S"], rules=rules)
    events = game.ask(1, "QS")
    laid = (card("QH"), card("QS"))
    assert events == [Ask(0, 1, QUEEN, card("QS")), Hit(0, 1, QUEEN, 1), Catch(0, QUEEN, laid)]
    assert str(events[-1]) == "Seat 0 lays a catch of queens (QH and QS)."
    game.ask(1, "2D")  # seat 0 misses; seat 1 misses: seat 2 asks with the catch in view
    game.ask(0, "3D")
    assert game.current_player == 2
    assert {wanted for _, wanted in game.legal_asks() if wanted // 4 == QUEEN} == {card("QD")}


def test_exact_card_asks_with_pairs_a_position_in_play_names_the_cards_in_its_catches():
    rules = Rules(players=3, ask_for="card", set_size=2)
    game = position(["QH 2C", "3C", "4C"], rules=rules, catches=[[], ["Q"], []])
    deal = game.events[0]
    assert deal.catches == ((), (QUEEN,), ()) and deal.laid_cards == (card("QC"), card("QD"))
    assert "laid_cards" in deal.fields()
    assert {wanted for _, wanted in game.legal_asks() if wanted // 4 == QUEEN} == {card("QS")}
    # Where a catch is every copy of its rank, the deal names no cards (replay files as before).
    table = position(["7H 2C", "3C", "4C"], rules=Rules(players=3), catches=[[], ["Q"], []])
    assert table.events[0].laid_cards is None and "laid_cards" not in table.events[0].fields()


def test_exact_card_ask_hands_over_just_that_card_and_asks_again():
    game = position(["7H QS", "7C 7D", "5C"], rules=Rules(players=3, ask_for="card"))
    events = game.ask(1, "7C")
    assert events == [Ask(0, 1, SEVEN, card("7C")), Hit(0, 1, SEVEN, 1)]
    assert str(events[0]) == "Seat 0 asks seat 1 for the 7C."
    assert game.hand(1) == ["7D"]
    assert game.current_player == 0
    assert game.legal_asks() == tuple(
        (target, card(name)) for target in (1, 2) for name in ("7D", "7S", "QC", "QD", "QH")
    )


def test_exact_card_ask_fish_is_shown_only_when_it_is_the_very_card_asked_for():
    rules = Rules(players=3, ask_for="card")
    game = position(["7H QS", "7C", "5C"], pool_top=["7D"], rules=rules)
    events = game.ask(1, "7S")  # 7D is the rank but not the card: private, turn passes
    assert events == [Ask(0, 1, SEVEN, card("7S")), GoFish(0, 1, SEVEN), Draw(0, None)]
    assert game.current_player == 1
    game = position(["7H QS", "7C", "5C"], pool_top=["7S"], rules=rules)
    events = game.ask(1, "7S")
    assert events[-1] == Draw(0, SEVEN)
    assert game.current_player == 0


def test_exact_card_asks_with_held_card_switch_allow_a_bluff_that_always_misses():
    rules = Rules(players=3, ask_for="card", ask_for_held_card=True)
    game = position(["7H QS", "7C", "5C"], pool_top=["2H"], rules=rules)
    assert (1, card("7H")) in game.legal_asks()
    events = game.ask(1, "7H")
    assert events == [Ask(0, 1, SEVEN, card("7H")), GoFish(0, 1, SEVEN), Draw(0, None)]
    assert game.current_player == 1


def test_authors_preset_deals_the_whole_deck_and_asks_for_exact_cards():
    game = Game(Rules.preset("authors", players=3), seed=2)
    assert game.pool_size == 0
    assert game.events[0].hand_sizes == (18, 17, 17)
    assert all(0 <= what < 52 for _, what in game.legal_asks())


def test_house_rule_pairs_lays_a_pair_at_once():
    game = position(["7H QS", "7C 4D", "5C"], rules=Rules.preset("pairs", players=3))
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 1), Catch(0, SEVEN)]
    assert game.hand(0) == ["QS"]


def test_house_rule_pairs_deal_lays_every_dealt_pair():
    game = position(["7H 7C 7D QS", "4D", "5C"], rules=Rules.preset("pairs", players=3))
    assert game.events[1:] == [Catch(0, SEVEN)]
    assert len(game.hand(0)) == 2 and "QS" in game.hand(0)
    assert game.hand_counts(0)[SEVEN] == 1
    game = position(["7H 7C 7D 7S QS", "4D", "5C"], rules=Rules.preset("pairs", players=3))
    assert game.events[1:] == [Catch(0, SEVEN), Catch(0, SEVEN)]


def test_house_rule_jokers_pair_with_each_other():
    rules = Rules.preset("pairs", players=3, jokers=True)
    assert rules.total_sets == 27
    game = position(["JK QS", "JK 4D", "5C"], rules=rules)
    assert (1, rank("JK")) in game.legal_asks()
    events = game.ask(1, "JK")
    assert events == [Ask(0, 1, 13), Hit(0, 1, 13, 1), Catch(0, 13)]
    assert str(events[0]) == "Seat 0 asks seat 1 for jokers."
    assert str(events[2]) == "Seat 0 lays a catch of jokers."
    assert game.tiebreak_points(0) == 0
    assert len(game.hand_counts(0)) == 14


def test_house_rule_two_decks_five_of_a_rank_lays_four_and_keeps_one():
    rules = Rules.preset("two_decks", players=2)
    game = position(["7H 7H 7C QS", "7D 7S 4C"], rules=rules)
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 2), Catch(0, SEVEN)]
    assert game.hand_counts(0)[SEVEN] == 1
    assert game.current_player == 0


def test_house_rule_two_decks_eight_of_a_rank_lays_two_catches():
    rules = Rules.preset("two_decks", players=2)
    game = position(["7H 7H 7C 7C 7D 7D 7S 7S QS", "4C"], rules=rules)
    assert game.events[1:] == [Catch(0, SEVEN), Catch(0, SEVEN)]
    assert game.catches(0) == [SEVEN, SEVEN]
    assert game.hand(0) == ["QS"]


def test_house_rule_two_decks_six_of_a_rank_from_a_hit_lays_four_and_keeps_two():
    rules = Rules.preset("two_decks", players=2)
    game = position(["7H 7H 7C QS", "7D 7D 7S 4C"], rules=rules)
    events = game.ask(1, "7")
    assert events == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 3), Catch(0, SEVEN)]
    assert game.hand_counts(0)[SEVEN] == 2


def test_house_rule_two_decks_deal_with_five_of_a_rank_lays_four():
    rules = Rules.preset("two_decks", players=2)
    game = position(["7H 7H 7C 7D 7S", "4C"], pool_top=["KD"], rules=rules)
    assert game.events[1:] == [Catch(0, SEVEN)]
    assert game.hand_counts(0)[SEVEN] == 1


def test_house_rule_game_ends_when_the_first_player_is_out():
    rules = Rules(players=3, game_end="first_out")
    game = position(["7H 9H", "7C", "7D 7S 9C 9D 9S"], rest=2, rules=rules)
    events = game.ask(1, "7")
    assert events[-2] == Out(1)
    assert events[-1].reason == "seat 1 is out of cards"
    assert game.is_over
    assert game.winners == (2,)


def test_quick_preset_ends_the_moment_any_hand_is_empty():
    rules = Rules.preset("quick", players=3)
    game = position(["7H QS", "7C 7D", "5C"], pool_top=["KD"], rules=rules)
    events = game.ask(1, "7")
    assert events[:2] == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 2)]
    assert isinstance(events[-1], GameOver) and len(events) == 3
    assert events[-1].reason == "seat 1's hand is empty"
    assert game.hand(1) == [] and game.pool_size > 0
    assert game.winners == (0, 1, 2)  # nobody has a catch: all share


def test_quick_preset_ends_the_moment_the_last_card_is_drawn():
    rules = Rules.preset("quick", players=3)
    game = position(["7H 8H", "7C", "7D 8C 8D 8S"], pool_top=["7S"], rest=2, rules=rules)
    events = game.ask(1, "8")
    assert events == [
        Ask(0, 1, rank("8")),
        GoFish(0, 1, rank("8")),
        Draw(0, None),
        GameOver((2,), (0, 0, 11), events[-1].points, "the pool is empty"),
    ]


def test_quick_preset_hand_emptied_at_the_deal_ends_the_game():
    rules = Rules.preset("quick", players=3)
    game = position(["7H 7C 7D 7S", "4C", "5C"], rules=rules)
    assert game.events[1] == Catch(0, SEVEN)
    assert game.is_over and game.winners == (0,)


def test_house_rule_first_to_empty_their_hand_by_laying_a_catch_wins():
    rules = Rules(players=3, winner="first_empty")
    game = position(
        ["7H 7C 7D", "7S 8C", "8D 8H 8S 9C"], catches=[[], ["2", "3", "4"], []], rules=rules
    )
    events = game.ask(1, "7")
    assert events[-2] == Catch(0, SEVEN)
    assert events[-1].reason == "seat 0 emptied their hand by laying a catch"
    assert game.winners == (0,)  # fewer catches than seat 1, but first to empty
    assert game.first_to_empty == 0


def test_house_rule_first_empty_handing_over_your_last_cards_does_not_win():
    rules = Rules(players=3, winner="first_empty")
    game = position(["7H QS", "7C 7D", "5C"], rules=rules)
    game.ask(1, "7")
    assert not game.is_over
    assert game.events[-1] == EmptyHandDraw(1, 1)
    assert game.first_to_empty is None


def test_house_rule_first_empty_laying_the_last_catch_empties_the_hand_and_wins():
    # Seat 0 lays the final catch and so empties its hand by laying: it is the first (and
    # only) player to do so, even though seat 2 has far more catches.
    rules = Rules(players=3, winner="first_empty")
    game = position(["7H 7C 7D", "7S", ""], rest=2, rules=rules)
    events = game.ask(1, "7")
    assert events[-2] == Catch(0, SEVEN)
    assert isinstance(events[-1], GameOver)
    assert game.winners == (0,)


@pytest.mark.parametrize("name", list(Rules.PRESETS))
@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_preset_plays_a_full_game_to_its_end(name, players):
    rules = Rules.preset(name, players=players)
    for seed in range(3):
        game = Game(rules, seed=seed)
        play_out(game, seed)
        over = game.events[-1]
        assert isinstance(over, GameOver)
        assert game.winners and game.winners == over.winners
        caught = sum(len(game.catches(seat)) for seat in range(players))
        if rules.game_end == "last_catch":
            assert caught == rules.total_sets
            assert game.pool_size == 0
            assert all(game.hand(seat) == [] for seat in range(players))
        else:  # quick: a hand or the pool ran out
            assert game.pool_size == 0 or any(game.hand(s) == [] for s in range(players))


# --------------------------------------------------------------------------- worked examples


def test_the_bicycle_pagat_example_a_turn_that_carries_on_then_ends():
    you, leo, maya = 0, 1, 2
    game = position(
        ["7H 7C QS 4D 9C", "7S 2C 3C 5C 6C", "2D 3D 5D 6D 8C", "8D 8H 10C JC KC"],
        pool_top=["2H"],
    )
    assert game.ask(leo, "7") == [Ask(you, leo, SEVEN), Hit(you, leo, SEVEN, 1)]
    assert game.current_player == you  # got the rank asked for: ask again
    events = game.ask(maya, "Q")
    assert events == [Ask(you, maya, QUEEN), GoFish(you, maya, QUEEN), Draw(you, None)]
    assert game.current_player == leo  # fished a 2, not a queen: the turn ends
    assert game.hand(you) == ["2H", "4D", "7C", "7H", "7S", "9C", "QS"]
    assert game.hand_counts(you)[SEVEN] == 3


# ------------------------------------------------------------------------ the public event log

CARD_TEXT = re.compile(r"\b(10|[2-9JQKA])[CDHS]\b")


@pytest.mark.parametrize("name", ["table", "bicycle", "pairs", "two_decks", "quick"])
def test_event_log_holds_no_private_information(name):
    rules = Rules.preset(name, players=3, **({"jokers": True} if name == "pairs" else {}))
    private_draws = 0
    for seed in range(5):
        game = Game(rules, seed=seed)
        play_out(game, seed)
        asked = None
        for event in game.events:
            text = str(event)
            assert not CARD_TEXT.search(text), text
            assert all(
                value is None or isinstance(value, int | str | tuple)
                for value in event.fields().values()
            )
            if isinstance(event, Ask):
                asked = event.rank
                assert event.card is None
            if isinstance(event, Draw):
                # Shown only when it is the rank asked for; otherwise the rank stays private.
                assert event.rank is None or event.rank == asked
        private_draws += sum(isinstance(e, Draw) and not e.shown for e in game.events)
    assert private_draws > 0


def test_event_log_under_exact_card_asks_names_only_the_card_asked_for():
    rules = Rules(players=3, ask_for="card")
    game = Game(rules, seed=4)
    play_out(game, 4)
    asked = None
    for event in game.events:
        if isinstance(event, Ask):
            asked = event.card
            assert event.rank == asked // 4
        elif isinstance(event, Draw) and event.shown:
            assert event.rank == asked // 4
        else:
            assert not CARD_TEXT.search(str(event))


def test_events_compare_hash_and_pickle_by_fields():
    import pickle

    assert Hit(0, 1, 5, 2) == Hit(0, 1, 5, 2) != Hit(0, 1, 5, 1)
    assert Draw(0, None) != EmptyHandDraw(0, None)
    assert hash(Catch(1, 3)) == hash(Catch(1, 3))
    assert pickle.loads(pickle.dumps(Ask(0, 2, 5, 22))) == Ask(0, 2, 5, 22)
    assert Ask(0, 2, 5).fields() == {"asker": 0, "target": 2, "rank": 5, "card": None}
    assert repr(Out(2)) == "Out(seat=2)"


def test_an_asker_who_goes_out_by_laying_its_last_cards_does_not_also_pass():
    # Pool empty; seat 0 completes its 7s from seat 1 and has no cards left: it is out,
    # and the turn moves on with no Pass from a seat that is out.
    game = position(["7H 7C 7D", "7S 9H", "9C 9D 9S"], rest=2, rules=Rules(players=3))
    events = game.ask(1, "7")
    assert events[:4] == [Ask(0, 1, SEVEN), Hit(0, 1, SEVEN, 1), Catch(0, SEVEN), Out(0)]
    assert Pass(0) not in events
    assert game.current_player == 1


def test_position_in_play_with_an_empty_hand_under_quick_rules_is_already_over():
    rules = Rules.preset("quick", players=3)
    game = position(["7H", "", "7C 7D"], pool_top=["7S"], rest=2, rules=rules)
    assert game.is_over
    assert game.events[-1].reason == "seat 1's hand is empty"


def test_position_in_play_with_a_seat_out_under_first_out_is_already_over():
    rules = Rules(players=3, game_end="first_out")
    game = position(["7H", "", "7C 7D 7S"], rest=2, rules=rules)
    assert game.is_over and game.is_out(1)
    assert game.events[-1].reason == "seat 1 is out of cards"


def test_hand_or_pool_empty_needs_a_pool_for_any_deal():
    with pytest.raises(ValueError, match="game_end: 'hand_or_pool_empty' needs a pool"):
        Rules(players=4, deal=13, game_end="hand_or_pool_empty")
