"""Match play (``Rules.match_target``): games to a target score, 1 point a catch."""

from __future__ import annotations

import copy
import pickle
import random

import pytest

import gofish_env.match as match_module
from gofish_env import Game, IllegalAsk, Match, Rules
from gofish_env.cards import RANK_NAMES, SUITS
from gofish_env.events import Deal, GameOver
from gofish_env.match import new_game


def play_on(match: Match, rng: random.Random, max_asks: int = 100_000) -> list:
    """Uniformly random asks until the match is over; the events they returned."""
    events = []
    for _ in range(max_asks):
        if match.is_over:
            return events
        events += match.ask(*rng.choice(match.legal_asks()))
    raise AssertionError("the match did not end")


def play_until(match: Match, rng: random.Random, games: int, asks_into_game: int) -> None:
    """Random asks until ``games`` games are finished and a few asks are made in the next."""
    while match.games_played < games:
        match.ask(*rng.choice(match.legal_asks()))
    for _ in range(asks_into_game):
        match.ask(*rng.choice(match.legal_asks()))
    assert not match.is_over and match.games_played == games


def snapshot(match: Match) -> tuple:
    seats = range(match.players)
    return (
        match.current_player,
        match.is_over,
        match.winners,
        match.scores,
        match.games_played,
        match.num_asks,
        match.pool_size,
        match.pool_cards(),
        match.events,
        match.legal_asks(),
        [match.hand(seat) for seat in seats],
        [match.catches(seat) for seat in seats],
        [match.is_out(seat) for seat in seats],
    )


@pytest.mark.parametrize("players", [2, 4, 6])
def test_match_ends_in_the_game_where_a_score_reaches_the_target(players):
    match = Match(Rules(players=players, match_target=20), seed=players)
    play_on(match, random.Random(1))
    assert match.is_over and match.current_player is None and match.legal_asks() == ()
    assert max(match.scores) >= 20
    before_last = [sum(column) for column in zip(*match.results[:-1], strict=True)]
    assert not before_last or max(before_last) < 20
    assert match.games_played == len(match.results) >= 2


def test_scores_add_each_games_catches():
    match = Match(Rules(players=3, match_target=25), seed=5)
    rng = random.Random(5)
    totals = [0, 0, 0]
    while not match.is_over:
        played = match.games_played
        game = match.game
        match.ask(*rng.choice(match.legal_asks()))
        if match.games_played > played:
            catches = tuple(len(game.catches(seat)) for seat in range(3))
            assert sum(catches) == 13
            totals = [total + count for total, count in zip(totals, catches, strict=True)]
            assert match.scores == tuple(totals)
            assert match.results[-1] == catches
    game_overs = [event for event in match.events if isinstance(event, GameOver)]
    assert [event.catches for event in game_overs] == list(match.results)


def test_catches_and_points_are_the_current_games():
    match = Match(Rules(match_target=15), seed=2)
    rng = random.Random(2)
    play_until(match, rng, games=1, asks_into_game=0)
    assert all(match.catches(seat) == match.game.catches(seat) for seat in range(4))
    assert all(match.tiebreak_points(seat) == match.game.tiebreak_points(seat) for seat in range(4))
    assert sum(len(match.catches(seat)) for seat in range(4)) < 13


@pytest.mark.parametrize(
    ("first_player", "start"), [("dealer_left", 0), (2, 2), (0, 0), ("random", None)]
)
def test_first_player_moves_one_seat_left_each_game(first_player, start):
    match = Match(Rules(players=4, first_player=first_player, match_target=30), seed=11)
    play_on(match, random.Random(11))
    firsts = [event.first_player for event in match.events if isinstance(event, Deal)]
    assert len(firsts) == match.games_played >= 3
    start = firsts[0] if start is None else start
    assert firsts == [(start + k) % 4 for k in range(len(firsts))]


def test_each_game_uses_the_rules_with_its_first_player():
    rules = Rules.preset("family", players=3, match_target=20)
    match = Match(rules, seed=4)
    assert match.game.rules == rules.replace(first_player=0)
    play_until(match, random.Random(4), games=1, asks_into_game=0)
    assert match.game.rules == rules.replace(first_player=1)
    assert match.current_player is not None


def test_the_same_seed_replays_the_same_match():
    rules = Rules(players=4, match_target=20)
    first = Match(rules, seed=123)
    second = Match(rules, seed=123)
    play_on(first, random.Random(9))
    play_on(second, random.Random(9))
    assert first.events == second.events
    assert first.scores == second.scores and first.winners == second.winners
    again, other = Match(rules, seed=123), Match(rules, seed=124)
    assert [again.hand(seat) for seat in range(4)] != [other.hand(seat) for seat in range(4)]


def test_an_ask_that_ends_a_game_returns_the_next_games_opening():
    match = Match(Rules(players=2, match_target=20), seed=8)
    rng = random.Random(8)
    while match.games_played == 0:
        events = match.ask(*rng.choice(match.legal_asks()))
    kinds = [event.kind for event in events]
    over = kinds.index("game_over")
    assert kinds[over + 1] == "deal"
    assert events[over + 1 :] == match.game.events
    assert match.events[-len(events) :] == events
    assert events[over + 1].first_player == 1


def test_event_log_covers_the_whole_match():
    match = Match(Rules(players=3, match_target=20), seed=6)
    returned = list(match.events)
    returned += play_on(match, random.Random(6))
    assert returned == match.events
    deals = [i for i, event in enumerate(match.events) if isinstance(event, Deal)]
    overs = [i for i, event in enumerate(match.events) if isinstance(event, GameOver)]
    assert deals[0] == 0 and len(deals) == len(overs) == match.games_played
    assert all(over + 1 == deal for over, deal in zip(overs, deals[1:], strict=False))
    assert match.num_asks == sum(event.kind == "ask" for event in match.events)
    assert match.events_since(deals[-1]) == match.events[deals[-1] :]
    assert match.num_events == len(match.events)


def test_an_illegal_ask_raises_and_changes_nothing():
    match = Match(Rules(players=4, match_target=20), seed=3)
    rng = random.Random(3)
    play_until(match, rng, games=1, asks_into_game=2)
    asker = match.current_player
    held = {rank for target, rank in match.legal_asks()}
    missing = next(rank for rank in range(13) if rank not in held)
    before = snapshot(match)
    for target, rank in [(asker, next(iter(held))), ((asker + 1) % 4, missing), (9, 0), (1, "Z")]:
        with pytest.raises(IllegalAsk):
            match.ask(target, rank)
        assert snapshot(match) == before
    play_on(match, rng)
    after = snapshot(match)
    with pytest.raises(IllegalAsk, match="match is over"):
        match.ask(0, 0)
    assert snapshot(match) == after


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda m: pickle.loads(pickle.dumps(m))])
def test_a_copy_mid_match_continues_identically(clone):
    match = Match(Rules.preset("bicycle", players=3, match_target=25), seed=21)
    play_until(match, random.Random(21), games=1, asks_into_game=5)
    twin = clone(match)
    assert snapshot(twin) == snapshot(match)
    play_on(match, random.Random(77))
    play_on(twin, random.Random(77))
    assert twin.events == match.events
    assert twin.scores == match.scores and twin.winners == match.winners


def _stacked_deal(split: int):
    """A stand-in for ``Game``: every set lies complete in a hand at the deal, so each game
    ends before the first ask; the first player's hand holds ``split`` of the 13 ranks."""

    def deal(rules: Rules, seed: int) -> Game:
        first = rules.first_player
        hands: list[list[str]] = [[] for _ in range(rules.players)]
        for rank in range(13):
            seat = first if rank < split else (first + 1) % rules.players
            hands[seat] += [RANK_NAMES[rank] + suit for suit in SUITS]
        return Game.from_hands(hands, [], rules=rules, first_player=first)

    return deal


def test_winners_share_a_tie_at_the_top(monkeypatch):
    monkeypatch.setattr(match_module, "Game", _stacked_deal(7))
    match = Match(Rules(players=2, match_target=13), seed=0)
    # Game 1: seat 0 moves first and lays 7 catches to 6; game 2: seat 1 does.
    assert match.is_over and match.games_played == 2
    assert match.results == ((7, 6), (6, 7))
    assert match.scores == (13, 13)
    assert match.winners == (0, 1)


def test_a_single_top_score_wins_alone(monkeypatch):
    monkeypatch.setattr(match_module, "Game", _stacked_deal(7))
    match = Match(Rules(players=3, match_target=14), seed=0)
    # Seats 0, 1, 2, 0 move first in turn; level at 13 each after three games.
    assert match.results == ((7, 6, 0), (0, 7, 6), (6, 0, 7), (7, 6, 0))
    assert match.scores == (20, 19, 13)
    assert match.is_over and match.winners == (0,)


def test_a_natural_tie_is_shared():
    rules = Rules(players=3, match_target=1)
    for seed in range(500):
        match = Match(rules, seed=seed)
        play_on(match, random.Random(seed))
        top = max(match.scores)
        if match.scores.count(top) > 1:
            assert match.winners == tuple(s for s in range(3) if match.scores[s] == top)
            return
        assert match.winners == (match.scores.index(top),)
    raise AssertionError("no tie at the top in 500 matches")


def test_target_zero_is_one_game_with_the_games_winners():
    rules = Rules(players=3)
    match = Match(rules, seed=5)
    play_on(match, random.Random(5))
    assert match.games_played == 1
    assert match.winners == match.game.winners
    assert match.num_asks == match.game.num_asks


def test_new_game_picks_a_match_only_with_a_target():
    assert type(new_game(Rules(), seed=1)) is Game
    assert type(new_game(Rules(match_target=5), seed=1)) is Match
    assert new_game(Rules(), seed=1).events == Game(Rules(), seed=1).events


def test_match_has_the_surface_of_a_game():
    match = Match(Rules(match_target=10), seed=1)
    game = Game(Rules(), seed=1)
    for name in [
        "current_player",
        "is_over",
        "winners",
        "legal_asks",
        "ask",
        "hand",
        "hand_counts",
        "hand_size",
        "hand_sizes",
        "catches",
        "tiebreak_points",
        "is_out",
        "pool_size",
        "num_asks",
        "events",
        "num_events",
        "events_since",
        "players",
        "rules",
        "laid_cards",
        "pool_cards",
    ]:
        assert hasattr(game, name) and hasattr(match, name), name
    game = match.game
    assert match.hand_counts(0) == game.hand_counts(0)
    assert match.hand_size(2) == game.hand_size(2)
    assert match.hand_sizes() == game.hand_sizes()
    assert match.players == 4 and match.rules.match_target == 10
    assert match.scores == (0, 0, 0, 0) and match.games_played == 0


@pytest.mark.parametrize("preset", list(Rules.PRESETS))
def test_every_preset_plays_a_match_to_its_end(preset):
    match = Match(Rules.preset(preset, players=3, match_target=15), seed=13)
    play_on(match, random.Random(13))
    assert max(match.scores) >= 15 and match.winners
    assert match.scores == tuple(sum(column) for column in zip(*match.results, strict=True))
