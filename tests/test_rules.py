"""Rules: validation of every field, impossible combinations, presets, deal and deck sizes."""

from __future__ import annotations

import dataclasses

import pytest

from gofish_env import Game, Rules

# (field, bad value, fragments the "allowed" part of the message must name)
INT_RANGE = "an integer from"
BOOL = "True or False"
# A named choice or a number: the message names both.
DEALS = ["'table'", "'seven'", "'seven_for_two'", "'whole_deck'"]
FIRSTS = ["'dealer_left'", "'random'"]

BAD_VALUES = [
    ("players", 1, [INT_RANGE, "2 to 6"]),
    ("players", 7, [INT_RANGE, "2 to 6"]),
    ("players", 0, [INT_RANGE, "2 to 6"]),
    ("players", "4", [INT_RANGE, "2 to 6"]),
    ("players", 4.0, [INT_RANGE, "2 to 6"]),
    ("players", True, [INT_RANGE, "2 to 6"]),
    ("deal", "eight", [*DEALS, "cards each", "1 to 13"]),
    ("deal", 0, [*DEALS, "cards each", "1 to 13"]),
    ("deal", -3, [*DEALS, "1 to 13"]),
    ("deal", 53, ["more than the 52-card deck", "at most 13 each"]),
    ("deal", 5.0, [*DEALS, "1 to 13"]),
    ("deal", True, [*DEALS, "1 to 13"]),
    ("deal", None, [*DEALS, "1 to 13"]),
    ("first_player", "left", [*FIRSTS, "a seat", "0 to 3"]),
    ("first_player", None, [*FIRSTS, "a seat", "0 to 3"]),
    ("first_player", 4, [*FIRSTS, "a seat", "0 to 3"]),
    ("first_player", -1, [*FIRSTS, "0 to 3"]),
    ("first_player", 1.0, [*FIRSTS, "0 to 3"]),
    ("first_player", True, [*FIRSTS, "0 to 3"]),
    ("empty_hand_draw", "later", ["'immediately'", "'own_turn'", "'never'"]),
    ("empty_hand_draw", None, ["'immediately'", "'own_turn'", "'never'"]),
    ("empty_hand_draw", 1, ["'immediately'", "'own_turn'", "'never'"]),
    ("empty_hand_draw_count", 0, [INT_RANGE, "1 to 52"]),
    ("empty_hand_draw_count", 53, [INT_RANGE, "1 to 52"]),
    ("empty_hand_draw_count", "5", [INT_RANGE, "1 to 52"]),
    ("empty_hand_draw_count", True, [INT_RANGE, "1 to 52"]),
    ("empty_hand_askable", 1, [BOOL]),
    ("empty_hand_askable", "yes", [BOOL]),
    ("empty_hand_askable", None, [BOOL]),
    ("fished_rank_asks_again", 0, [BOOL]),
    ("fished_rank_asks_again", "no", [BOOL]),
    ("off_rank_catch_asks_again", 1, [BOOL]),
    ("after_miss", "right", ["'left'", "'asked'"]),
    ("after_miss", None, ["'left'", "'asked'"]),
    ("ask_for", "suit", ["'rank'", "'card'"]),
    ("ask_for", 1, ["'rank'", "'card'"]),
    ("ask_for_held_card", 1, [BOOL]),
    ("ask_for_held_card", "yes", [BOOL]),
    ("set_size", 3, ["4", "2"]),
    ("set_size", 1, ["4", "2"]),
    ("set_size", "4", ["4", "2"]),
    ("set_size", True, ["4", "2"]),
    ("set_size", 4.0, ["4", "2"]),
    ("set_size", 2.0, ["4", "2"]),
    ("jokers", 1, [BOOL]),
    ("jokers", "yes", [BOOL]),
    ("decks", 3, ["1", "2"]),
    ("decks", 0, ["1", "2"]),
    ("decks", "2", ["1", "2"]),
    ("decks", 1.0, ["1", "2"]),
    ("decks", 2.0, ["1", "2"]),
    ("game_end", "never", ["'last_catch'", "'first_out'", "'hand_or_pool_empty'"]),
    ("game_end", None, ["'last_catch'", "'first_out'", "'hand_or_pool_empty'"]),
    ("winner", "most", ["'catches_then_points'", "'catches_shared'", "'first_empty'"]),
    ("winner", 0, ["'catches_then_points'", "'catches_shared'", "'first_empty'"]),
]


@pytest.mark.parametrize(("field", "value", "allowed"), BAD_VALUES)
def test_bad_field_value_raises_value_error_naming_field_value_and_allowed(field, value, allowed):
    with pytest.raises(ValueError) as info:
        Rules(**{field: value})
    message = str(info.value)
    assert message.startswith(f"{field}:"), message
    assert repr(value) in message, message
    assert "allowed" in message, message
    for fragment in allowed:
        assert fragment in message, (fragment, message)


def test_every_rules_field_has_a_bad_value_case():
    tested = {field for field, _, _ in BAD_VALUES}
    # match_target belongs to match play (gofish_env/match.py), tested with it.
    fields = {field.name for field in dataclasses.fields(Rules)} - {"match_target"}
    assert fields <= tested, fields - tested


def test_bad_value_through_preset_override_and_replace_is_refused_too():
    with pytest.raises(ValueError, match=r"^players: got 9"):
        Rules.preset("pairs", players=9)
    with pytest.raises(ValueError, match=r"^after_miss: got 'up'"):
        Rules().replace(after_miss="up")


def test_seven_players_is_refused():
    with pytest.raises(ValueError, match=r"players: got 7; allowed: an integer from 2 to 6"):
        Rules(players=7)


def test_jokers_need_pairs():
    with pytest.raises(ValueError) as info:
        Rules(jokers=True)
    message = str(info.value)
    assert message.startswith("jokers:")
    assert "set_size=2" in message and "set_size=4" in message
    assert Rules(jokers=True, set_size=2).jokers is True


@pytest.mark.parametrize(
    ("players", "deal", "deck", "most"),
    [(4, 14, 52, 13), (6, 9, 52, 8), (2, 27, 52, 26), (5, 11, 54, 10), (6, 18, 104, 17)],
)
def test_deal_larger_than_the_deck_is_refused(players, deal, deck, most):
    extra = {"set_size": 2, "jokers": True} if deck == 54 else {}
    if deck == 104:
        extra = {"decks": 2}
    with pytest.raises(ValueError) as info:
        Rules(players=players, deal=deal, **extra)
    message = str(info.value)
    assert message.startswith("deal:")
    assert f"{deal} cards to each of {players} players is {deal * players}" in message
    assert f"{deck}-card deck" in message
    assert f"allowed: at most {most} each" in message
    # The largest deal that fits is accepted.
    assert Rules(players=players, deal=most, **extra).hand_size == most


def test_unknown_preset_is_refused_with_the_preset_names():
    with pytest.raises(ValueError) as info:
        Rules.preset("poker")
    message = str(info.value)
    assert message.startswith("preset:") and "'poker'" in message
    for name in ("table", "bicycle", "family", "quick", "ocean", "pairs", "two_decks", "authors"):
        assert name in message


def test_whole_deck_with_hand_or_pool_empty_ending_is_refused():
    with pytest.raises(ValueError) as info:
        Rules(deal="whole_deck", game_end="hand_or_pool_empty")
    message = str(info.value)
    assert message.startswith("game_end:")
    assert "'hand_or_pool_empty'" in message and "whole_deck" in message
    assert "last_catch" in message and "first_out" in message


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_whole_deck_leaves_no_pool_at_any_table_size(players):
    """With 3, 5 or 6 players the deck does not divide evenly, and the whole deck still
    leaves no pool: a pool-based ending is refused there too."""
    with pytest.raises(ValueError, match=r"^game_end: 'hand_or_pool_empty' needs a pool"):
        Rules(players=players, deal="whole_deck", game_end="hand_or_pool_empty")
    with pytest.raises(ValueError, match=r"^game_end:"):
        Rules.preset("authors", players=players, game_end="hand_or_pool_empty")
    # the largest even deal leaves the remainder in the pool, where the ending is allowed
    remainder = 52 % players
    if remainder:
        rules = Rules(players=players, deal=52 // players, game_end="hand_or_pool_empty")
        assert 52 - rules.hand_size * players == remainder


def test_an_off_rank_catch_cannot_ask_again_where_every_draw_ends_the_turn():
    with pytest.raises(ValueError) as info:
        Rules(fished_rank_asks_again=False, off_rank_catch_asks_again=True)
    message = str(info.value)
    assert message.startswith("off_rank_catch_asks_again:")
    assert "fished_rank_asks_again=False" in message and "allowed" in message
    # each alone is a house rule
    assert not Rules(fished_rank_asks_again=False).off_rank_catch_asks_again
    assert Rules(off_rank_catch_asks_again=True).fished_rank_asks_again


def test_a_preset_with_an_unknown_option_names_the_options():
    with pytest.raises(TypeError) as info:
        Rules.preset("bicycle", players=3, bogus=1)
    message = str(info.value)
    assert "'bogus'" in message
    for field in ("players", "deal", "first_player", "empty_hand_draw", "match_target"):
        assert field in message


def test_card_asks_with_two_decks_are_refused():
    with pytest.raises(ValueError) as info:
        Rules(ask_for="card", decks=2)
    message = str(info.value)
    assert message.startswith("ask_for:") and "decks=2" in message and "decks must be 1" in message
    with pytest.raises(ValueError, match=r"^ask_for:"):
        Rules.preset("authors", decks=2)


def test_held_card_switch_needs_card_asks():
    with pytest.raises(ValueError, match=r"^ask_for_held_card:.*ask_for='rank'"):
        Rules(ask_for_held_card=True)
    assert Rules(ask_for="card", ask_for_held_card=True).ask_for_held_card


@pytest.mark.parametrize("name", ["quick", "ocean"])
@pytest.mark.parametrize("players", [5, 6])
def test_two_to_four_player_presets_refuse_five_or_more(name, players):
    with pytest.raises(ValueError) as info:
        Rules.preset(name, players=players)
    message = str(info.value)
    assert message.startswith("players:")
    assert f"'{name}'" in message and "2..4" in message and f"got {players}" in message


@pytest.mark.parametrize("name", ["quick", "ocean"])
def test_two_to_four_player_presets_accept_two_to_four(name):
    for players in (2, 3, 4):
        assert Rules.preset(name, players=players).players == players


PRESET_FIELDS = {
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
        "empty_hand_askable": False,
        "winner": "catches_shared",
    },
    "pairs": {"set_size": 2, "jokers": False},
    "two_decks": {"decks": 2, "deal": 5, "set_size": 4},
    "authors": {
        "deal": "whole_deck",
        "ask_for": "card",
        "ask_for_held_card": False,
        "after_miss": "left",
    },
}


@pytest.mark.parametrize("name", list(PRESET_FIELDS))
def test_preset_sets_the_fields_of_the_rules_preset_table(name):
    rules = Rules.preset(name)
    expected = {field.name: getattr(Rules(), field.name) for field in dataclasses.fields(Rules)}
    expected.update(PRESET_FIELDS[name])
    actual = {field.name: getattr(rules, field.name) for field in dataclasses.fields(Rules)}
    assert actual == expected


def test_the_preset_table_lists_every_preset():
    assert set(Rules.PRESETS) == set(PRESET_FIELDS)


def test_table_preset_is_the_default_rules_with_four_players():
    assert Rules.preset("table") == Rules()
    assert Rules().players == 4
    assert Rules().describe() == "table rules"


def test_preset_overrides_apply_on_top_of_the_bundle():
    rules = Rules.preset("bicycle", players=3, empty_hand_draw_count=5)
    assert rules.players == 3 and rules.empty_hand_draw_count == 5
    assert rules.empty_hand_draw == "own_turn" and rules.empty_hand_askable


def test_rules_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rules().players = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("deal", "sizes"),
    [
        ("table", {2: 7, 3: 7, 4: 5, 5: 5, 6: 5}),
        ("seven", {2: 7, 3: 7, 4: 7, 5: 7, 6: 7}),
        ("seven_for_two", {2: 7, 3: 5, 4: 5, 5: 5, 6: 5}),
        (3, {2: 3, 3: 3, 4: 3, 5: 3, 6: 3}),
        ("whole_deck", {2: 26, 3: 17, 4: 13, 5: 10, 6: 8}),
    ],
)
def test_hand_size_per_deal_option_and_player_count(deal, sizes):
    for players, size in sizes.items():
        assert Rules(players=players, deal=deal).hand_size == size


@pytest.mark.parametrize(
    ("deal", "players", "dealt", "pool"),
    [
        ("table", 2, [7, 7], 38),
        ("table", 3, [7, 7, 7], 31),
        ("table", 4, [5] * 4, 32),
        ("table", 5, [5] * 5, 27),
        ("table", 6, [5] * 6, 22),
        ("seven", 6, [7] * 6, 10),
        ("seven_for_two", 3, [5] * 3, 37),
        ("seven_for_two", 2, [7, 7], 38),
        (4, 5, [4] * 5, 32),
        ("whole_deck", 3, [18, 17, 17], 0),
        ("whole_deck", 5, [11, 11, 10, 10, 10], 0),
        ("whole_deck", 4, [13] * 4, 0),
    ],
)
def test_game_deals_the_hand_sizes_of_the_deal_option(deal, players, dealt, pool):
    game = Game(Rules(players=players, deal=deal), seed=11)
    deal_event = game.events[0]
    assert list(deal_event.hand_sizes) == dealt
    assert deal_event.pool_size == pool


@pytest.mark.parametrize(
    ("fields", "deck", "ranks", "sets"),
    [
        ({}, 52, 13, 13),
        ({"set_size": 2}, 52, 13, 26),
        ({"set_size": 2, "jokers": True}, 54, 14, 27),
        ({"decks": 2}, 104, 13, 26),
        ({"decks": 2, "set_size": 2}, 104, 13, 52),
    ],
)
def test_deck_size_ranks_and_total_sets(fields, deck, ranks, sets):
    rules = Rules(**fields)
    assert rules.deck_size == deck
    assert rules.ranks == ranks
    assert rules.total_sets == sets


def test_preset_deck_sizes_and_total_sets():
    assert Rules.preset("pairs").total_sets == 26
    assert Rules.preset("pairs", jokers=True).total_sets == 27
    assert Rules.preset("two_decks").total_sets == 26
    assert Rules.preset("two_decks").deck_size == 104
    assert Rules.preset("two_decks", players=6).hand_size == 5
    assert Rules.preset("authors").total_sets == 13


def test_exact_card_asks_name_52_cards_or_53_with_jokers():
    assert Rules().ask_count == 13
    assert Rules(ask_for="card").ask_count == 52
    assert Rules(ask_for="card", set_size=2, jokers=True).ask_count == 53


def test_resolve_takes_a_preset_name_or_rules_and_a_player_count_that_agrees():
    assert Rules.resolve() == Rules(players=4)
    assert Rules.resolve(3, "pairs") == Rules.preset("pairs", players=3)
    assert Rules.resolve(None, Rules(players=5)) == Rules(players=5)
    with pytest.raises(ValueError, match=r"players: got 3 but rules\.players is 5"):
        Rules.resolve(3, Rules(players=5))
    with pytest.raises(ValueError, match="unknown preset 'chess'"):
        Rules.resolve(4, "chess")
    with pytest.raises(ValueError, match="rules: got 7"):
        Rules.resolve(4, 7)
