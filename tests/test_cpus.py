"""The CPU levels (``gofish_env.cpus``): legal asks under every preset, determinism, each
level's defining trait on exact positions, and their speed. The ladder that measures them
against each other is tested in tests/test_ladder.py.

Positions are built with ``helpers.position`` (named hands, the pool's top cards named, every
other card after them in the pool, or with ``rest=seat`` laid as that seat's catches).
Ranks are indices: 5 -> 3, 7 -> 5, 9 -> 7, K -> 11.
"""

from __future__ import annotations

import random

import pytest
from helpers import position, rank

from gofish_env import Game, Match, Rules
from gofish_env.cpus import (
    CPU,
    CPU_LEVELS,
    RECENT_ASKS,
    SURE_HIT,
    EasyCPU,
    ExpertCPU,
    NormalCPU,
    best_card,
    make_cpu,
)
from gofish_env.knowledge import KnowledgeTracker

LEVELS = list(CPU_LEVELS)
PRESETS = ["table", "bicycle", "family", "quick", "ocean", "pairs", "two_decks", "authors"]
TWO, THREE, FOUR, FIVE = rank("2"), rank("3"), rank("4"), rank("5")
SEVEN, NINE, KING = rank("7"), rank("9"), rank("K")


def preset_rules(name: str, players: int) -> Rules:
    if name == "pairs+jokers":
        return Rules.preset("pairs", players=players, jokers=True)
    return Rules.preset(name, players=players)


def rule_sets() -> list[tuple[str, int]]:
    cases = []
    for name in [*PRESETS, "pairs+jokers"]:
        limit = Rules.PRESET_MAX_PLAYERS.get(name, 6)
        cases += [(name, players) for players in range(2, limit + 1)]
    return cases


def play_checked(game, cpus: list[CPU], max_asks: int = 3000) -> int:
    """Play with each seat's CPU deciding from its own view; every ask must be legal."""
    tracker = KnowledgeTracker(game)
    asks = 0
    while not game.is_over and asks < max_asks:
        seat = game.current_player
        view = tracker.view(seat)
        ask = cpus[seat].choose(view)
        assert ask in view.legal_asks, (type(cpus[seat]).__name__, ask)
        game.ask(*ask)
        asks += 1
    return asks


# ----------------------------------------------------------------------------- legality


@pytest.mark.parametrize(("preset", "players"), rule_sets())
def test_every_cpu_makes_only_legal_asks(preset, players):
    rules = preset_rules(preset, players)
    for offset in range(2):
        # Every level sits at some seat; two deals with the levels rotated.
        names = [LEVELS[(seat + offset * 2) % len(LEVELS)] for seat in range(players)]
        cpus = [make_cpu(name, seed=seat) for seat, name in enumerate(names)]
        game = Game(rules, seed=100 * offset + players)
        play_checked(game, cpus)


@pytest.mark.parametrize("name", LEVELS)
def test_each_cpu_plays_whole_games_alone(name):
    # A table of one level only, under the default rules and with exact-card asks.
    for rules in (Rules(players=4), Rules.preset("authors", players=3)):
        for seed in range(3):
            cpus = [make_cpu(name, seed=seed * 10 + seat) for seat in range(rules.players)]
            game = Game(rules, seed)
            play_checked(game, cpus, max_asks=5000)
            assert game.is_over


@pytest.mark.parametrize("name", LEVELS)
def test_cpus_play_match_play(name):
    # In a match the knowledge starts over at each deal; the CPUs must follow.
    rules = Rules(players=3, match_target=14)  # more than one game holds
    match = Match(rules, seed=3)
    cpus = [make_cpu(name, seed=seat) for seat in range(3)]
    play_checked(match, cpus, max_asks=20_000)
    assert match.is_over
    assert match.games_played >= 2


def test_make_cpu_refuses_an_unknown_level():
    with pytest.raises(ValueError, match="unknown level 'grandmaster'; allowed: random"):
        make_cpu("grandmaster")


def test_make_cpu_passes_options_to_the_level_and_refuses_one_it_does_not_take():
    assert make_cpu("master", 3, rollouts="random").rollout_level(4, 8) == "random"
    with pytest.raises(ValueError, match=r"cpu: 'hard' takes no option among \['rollouts'\]"):
        make_cpu("hard", 3, rollouts="random")


# ----------------------------------------------------------------------------- determinism


@pytest.mark.parametrize("name", LEVELS)
def test_same_seed_same_ask_for_the_same_views(name):
    rules = Rules(players=3)
    game = Game(rules, seed=7)
    tracker = KnowledgeTracker(game)
    first = [make_cpu(name, seed=seat) for seat in range(3)]
    second = [make_cpu(name, seed=seat) for seat in range(3)]
    while not game.is_over:
        seat = game.current_player
        view = tracker.view(seat)
        ask = first[seat].choose(view)
        assert second[seat].choose(view) == ask
        game.ask(*ask)


@pytest.mark.parametrize("name", LEVELS)
def test_reset_with_a_seed_replays_the_same_game(name):
    rules = Rules(players=4)
    cpus = [make_cpu(name, seed=99) for _ in range(4)]

    def replay() -> list:
        for seat, cpu in enumerate(cpus):
            cpu.reset(seed=seat)
        game = Game(rules, seed=5)
        play_checked(game, cpus)
        return game.events

    assert replay() == replay()


# ----------------------------------------------------------------------------- easy


def test_easy_repeats_its_request_while_the_pool_lasts():
    # Nobody holds 7s or kings but seat 0; seat 1's asks are scripted misses.
    for seed in range(10):
        game = position([["7H", "KS"], ["2C", "3C"]], pool_top=["4C", "5C", "6C", "8C", "4D", "5D"])
        tracker = KnowledgeTracker(game)
        easy = make_cpu("easy", seed=seed)
        requests = []
        for _ in range(3):
            ask = easy.choose(tracker.view(0))
            requests.append(ask)
            game.ask(*ask)  # go fish; seat 0 draws a card of another rank
            assert game.current_player == 1
            game.ask(0, TWO)  # go fish for seat 1 as well
        assert requests[0] in {(1, SEVEN), (1, KING)}
        assert requests == [requests[0]] * 3


def test_easy_asks_a_seat_for_a_rank_that_seat_asked_it_for():
    for seed in range(10):
        game = position([["7H", "KS"], ["9C", "3C"]], pool_top=["4C", "9D", "5C"], first_player=1)
        game.ask(0, NINE)  # seat 1 asks seat 0 for 9s: go fish, seat 1 draws 4C
        game.ask(1, SEVEN)  # seat 0: go fish, draws 9D
        game.ask(0, THREE)  # seat 1: go fish, draws 5C
        view = KnowledgeTracker(game).view(0)
        assert view.own_counts[NINE] == 1
        assert make_cpu("easy", seed=seed).choose(view) == (1, NINE)


def test_easy_varies_its_requests_once_the_pool_is_empty():
    # Whole games of easy CPUs: after the pool is empty, an easy seat never makes the same
    # request twice in a row while its hand is unchanged (when it has another request).
    checked = 0
    for seed in range(30):
        rules = Rules(players=3)
        game = Game(rules, seed)
        tracker = KnowledgeTracker(game)
        cpus = [EasyCPU(seed * 3 + seat) for seat in range(3)]
        last: dict[int, tuple] = {}
        for _ in range(3000):
            if game.is_over:
                break
            seat = game.current_player
            view = tracker.view(seat)
            ask = cpus[seat].choose(view)
            hand = tuple(view.own_counts)
            if not view.pool_size:
                previous = last.get(seat)
                if previous and previous[0] == ask and previous[1] == hand:
                    assert len(view.legal_asks) == 1
                checked += previous is not None
                last[seat] = (ask, hand)
            game.ask(*ask)
    assert checked > 100


# ----------------------------------------------------------------------------- normal


def test_normal_asks_a_seat_for_a_rank_it_recently_asked_for():
    for seed in range(20):
        game = position(
            [["9H", "2C", "2D"], ["9S", "3C"], ["4C", "5C"]],
            pool_top=["6C", "6D"],
            first_player=1,
        )
        game.ask(2, NINE)  # seat 1 asks seat 2 for 9s: go fish, draws 6C
        game.ask(0, FOUR)  # seat 2 asks seat 0 for 4s: go fish, draws 6D
        assert game.current_player == 0
        view = KnowledgeTracker(game).view(0)
        # Seat 0 holds more 2s than 9s, but seat 1 just showed it holds a 9.
        assert make_cpu("normal", seed=seed).choose(view) == (1, NINE)


def test_normal_avoids_a_seat_that_just_said_go_fish_to_that_rank():
    for seed in range(20):
        game = position([["7H"], ["3C", "4C"], ["5C", "6C"]], pool_top=["7D"])
        game.ask(1, SEVEN)  # go fish; seat 0 draws 7D, shown, and asks again
        assert game.current_player == 0
        view = KnowledgeTracker(game).view(0)
        assert view.legal_asks == ((1, SEVEN), (2, SEVEN))
        assert make_cpu("normal", seed=seed).choose(view) == (2, SEVEN)


class NormalReference(NormalCPU):
    """``normal`` as first written: it reads the last ``RECENT_ASKS`` asks afresh at every
    decision. ``NormalCPU`` keeps what it has read between decisions instead."""

    def holds(self, view, keys):
        card_asks = view.rules.ask_for == "card"
        holds = {}
        for record in view.asks[-RECENT_ASKS:]:
            holds[(record.asker, record.rank)] = True
            if not card_asks or not record.hit:
                holds[(record.target, record.rank)] = False
        return {key: holds[key] for key in keys if key in holds}


@pytest.mark.parametrize("name", [*PRESETS, "pairs+jokers"])
def test_normal_decides_as_if_it_reread_the_recent_asks_every_time(name):
    """Whole games (past the recent-ask window) under every preset, one CPU object per seat
    kept across games: the same ask as the reference at every decision."""
    decisions = longest = 0
    for players in (2, Rules.PRESET_MAX_PLAYERS.get(name, 6)):
        rules = preset_rules(name, players)
        fast = [make_cpu("normal", seed=seat) for seat in range(players)]
        reference = [NormalReference(seed=seat) for seat in range(players)]
        for game_seed in range(3):
            game = Game(rules, seed=game_seed)
            tracker = KnowledgeTracker(game)
            while not game.is_over and game.num_asks < 3000:
                seat = game.current_player
                view = tracker.view(seat)
                ask = fast[seat].choose(view)
                assert ask == reference[seat].choose(view)
                game.ask(*ask)
                decisions += 1
            longest = max(longest, game.num_asks)
    assert decisions > 100
    if name == "table":
        assert longest > RECENT_ASKS  # the window was passed: old asks forgotten


# ----------------------------------------------------------------------------- hard and expert


def proved_nine_position(hand0: list[str]):
    """Seat 1 asks seat 2 for 9s (go fish), seat 2 asks seat 0 for 4s (go fish): seat 1 is
    proved to hold a 9 when seat 0 is to move."""
    game = position(
        [hand0, ["9S", "3C"], ["4C", "5C"]],
        pool_top=["6C", "6D"],
        first_player=1,
    )
    game.ask(2, NINE)
    game.ask(0, FOUR)
    assert game.current_player == 0
    return KnowledgeTracker(game).view(0)


@pytest.mark.parametrize("name", ["hard", "expert"])
def test_hard_and_expert_ask_a_seat_proved_to_hold_the_rank(name):
    for seed in range(20):
        # Three kings, one 9: the 9 is a sure hit from seat 1, the kings are not.
        view = proved_nine_position(["9H", "KH", "KS", "KD"])
        assert view.least[1, NINE] == 1
        assert make_cpu(name, seed=seed).choose(view) == (1, NINE)


@pytest.mark.parametrize("name", ["hard", "expert"])
def test_hard_and_expert_never_ask_a_seat_that_cannot_hold_the_rank(name):
    # Seat 1 said go fish to 7s and has drawn nothing since; seat 2 may hold some.
    for seed in range(20):
        game = position([["7H"], ["3C", "4C"], ["5C", "6C"]], pool_top=["7D"])
        game.ask(1, SEVEN)  # go fish, seat 0 draws 7D (shown) and asks again
        view = KnowledgeTracker(game).view(0)
        assert view.most[1, SEVEN] == 0
        assert make_cpu(name, seed=seed).choose(view) == (2, SEVEN)


def test_expert_counts_on_the_others_taking_sure_hits():
    # After a miss the asked seat moves. Seat 0 asks seat 3 for a 7 (proving it holds one);
    # seat 3 misses, then seat 1 misses: holding a 7 either would have asked seat 0 for it.
    # Seats 1 and 2 then hold eight and seven cards: on the history alone (``hard``) seat 1,
    # the bigger hand, is where to look for the two unseen 7s; but a seat that takes sure
    # hits holds at most the one card it drew since; so the expert asks seat 2.
    rules = Rules(players=4, after_miss="asked")
    hands = ["7H 7D KH", "QC QD JC JD 5C 5D 8D", "7C 4C 4D 3D 10D JH 2D", "9C 9D 10C"]
    game = position(hands, pool_top=["2C", "3C", "6C"], rules=rules)
    game.ask(3, SEVEN)
    game.ask(1, rank("9"))
    game.ask(0, rank("Q"))
    assert game.current_player == 0
    view = KnowledgeTracker(game).view(0)
    assert view.most[1, SEVEN] == view.most[2, SEVEN] == 2
    assert view.most_if_sure_hits[1, SEVEN] == 1
    for seed in range(20):
        assert make_cpu("hard", seed=seed).choose(view) == (1, SEVEN)
        assert make_cpu("expert", seed=seed).choose(view) == (2, SEVEN)


@pytest.mark.parametrize("preset", ["table", "bicycle", "ocean", "pairs", "two_decks"])
def test_expert_never_passes_up_a_sure_hit_itself(preset):
    # A sure hit only if the others take them comes after one the history proves, so the
    # others may count on the expert taking sure hits too.
    rules = Rules.preset(preset)
    checked = 0
    for seed in range(16):
        game = Game(rules, seed=seed)
        tracker = KnowledgeTracker(game)
        cpus = [make_cpu("expert" if s % 2 else "hard", seed=seed * 10 + s) for s in range(4)]
        while not game.is_over and game.num_asks < 2000:
            seat = game.current_player
            view = tracker.view(seat)
            target, what = cpus[seat].choose(view)
            if seat % 2 and any(view.least[t, r] for t, r in view.legal_asks):
                assert view.least[target, what] > 0, (preset, seed, game.num_asks)
                checked += 1
            game.ask(target, what)
    assert checked > 60


def test_expert_asks_one_of_its_highest_scored_asks():
    for seed in range(6):
        game = Game(Rules(), seed=seed)
        tracker = KnowledgeTracker(game)
        cpus = [make_cpu("expert", seed=seed * 10 + s) for s in range(4)]
        while not game.is_over and game.num_asks < 200:
            view = tracker.view(game.current_player)
            scores = cpus[view.seat].scores(view)
            assert set(scores) == set(view.legal_asks)
            ask = cpus[view.seat].choose(view)
            assert scores[ask] > max(scores.values()) - 1e-9
            game.ask(*ask)


def test_expert_completes_a_catch_first():
    # Seat 1 is proved to hold a 9 and seat 2 a king; seat 0 holds one 9 and three kings.
    for seed in range(20):
        game = position(
            [["9H", "KH", "KS", "KD"], ["9S", "3C"], ["KC", "5C"]],
            pool_top=["6C", "6D"],
            first_player=1,
        )
        game.ask(2, NINE)  # seat 1: go fish, draws 6C
        game.ask(1, KING)  # seat 2 asks seat 1 for kings: go fish, draws 6D
        view = KnowledgeTracker(game).view(0)
        assert view.least[1, NINE] == 1 and view.least[2, KING] == 1
        assert make_cpu("expert", seed=seed).choose(view) == (2, KING)


def test_expert_prefers_the_catch_worth_more_tiebreak_points():
    # Two sure catches, 5s from seat 1 and kings from seat 2: under the table rules with
    # four players catches can tie, and kings (13 points) beat 5s (5 points).
    def view_for(rules: Rules):
        game = position(
            [["5H", "5S", "5D", "KH", "KS", "KD"], ["5C", "3C"], ["KC", "4C"], ["2C", "2D"]],
            pool_top=["6C", "6D", "6H"],
            first_player=1,
            rules=rules,
        )
        game.ask(2, FIVE)  # seat 1 asks seat 2 for 5s: go fish
        game.ask(3, KING)  # seat 2 asks seat 3 for kings: go fish
        game.ask(0, TWO)  # seat 3 asks seat 0 for 2s: go fish
        assert game.current_player == 0
        return KnowledgeTracker(game).view(0)

    view = view_for(Rules(players=4))
    assert view.least[1, FIVE] == 1 and view.least[2, KING] == 1
    for seed in range(20):
        assert make_cpu("expert", seed=seed).choose(view) == (2, KING)
    # When ties on catches are shared, the points do not matter: either catch may come first.
    shared = view_for(Rules(players=4, winner="catches_shared"))
    chosen = {make_cpu("expert", seed=seed).choose(shared) for seed in range(20)}
    assert chosen == {(1, FIVE), (2, KING)}


def test_expert_counts_tiebreak_points_when_two_players_can_tie_on_catches():
    # Two players, 13 catches: a game that lays every catch cannot tie on catches, but one
    # that ends when a hand or the pool is empty can. Seat 0 holds two 5s and two kings at
    # the deal, nothing else twice: the two ranks are equally good asks, and kings are
    # worth 13 tiebreak points against 5s' 5.
    def view_for(rules: Rules):
        game = position(
            [["5H", "5S", "KH", "KS", "2C", "3C", "4C"], ["6C", "7C", "8C", "9C", "10C", "JC"]],
            pool_top=["QC"],
            rules=rules,
        )
        return KnowledgeTracker(game).view(0)

    early_end = view_for(Rules(players=2, game_end="hand_or_pool_empty"))
    for seed in range(20):
        assert make_cpu("expert", seed=seed).choose(early_end) == (1, KING)
    every_catch = view_for(Rules(players=2))
    chosen = {make_cpu("expert", seed=seed).choose(every_catch) for seed in range(20)}
    assert chosen == {(1, FIVE), (1, KING)}


def test_expert_keeps_the_turn_when_the_pool_is_nearly_empty():
    # Two players, two cards left in the pool (7C on top, then 7S). Seat 0 holds three kings
    # and pairs of 7s, 9s and 5s. Hard asks for kings (the rank it holds most of); but the
    # last king may be in the pool, and a plain miss now hands seat 1 the turn with one
    # card left: it would then chain asks to the empty pool and sweep. Every other ask
    # either hits or fishes the rank asked for, so the expert asks one of those.
    game = position(
        [["7H", "7D", "KH", "KS", "KD", "9H", "9S", "5H", "5S"], ["KC", "9C", "9D", "5C", "5D"]],
        pool_top=["7C", "7S"],
        rest=1,
    )
    view = KnowledgeTracker(game).view(0)
    assert not view.least[1].any()  # nothing is proved yet
    for seed in range(20):
        assert make_cpu("hard", seed=seed).choose(view) == (1, KING)
        assert make_cpu("expert", seed=seed).choose(view) in {(1, SEVEN), (1, NINE), (1, FIVE)}


def test_hard_and_expert_name_the_card_the_target_is_proved_to_hold():
    # Exact-card asks, no pool. Seat 1 asked for the QS (so it lacks it) and missed; the
    # viewer holds QD and QC: the QS can only be in seat 0's hand, though no event named it
    # there. Between seat 0's QH and QS, the card to name is the QS.
    hands = ["QS 5C 5H", "QH 5D 5S", "QD QC"]
    game = position(hands, rules=Rules.preset("authors", players=3), rest=0, first_player=1)
    game.ask(2, "QS")
    view = KnowledgeTracker(game).view(2)
    queens = [(0, 4 * rank("Q") + suit) for suit in (2, 3)]  # QH, QS
    assert queens == [ask for ask in view.legal_asks if ask[0] == 0]
    for seed in range(20):
        assert best_card(random.Random(seed), view, 0, queens) == queens[1]


def test_expert_under_exact_card_asks_counts_a_hit_as_sure_only_on_a_proved_card():
    # Seat 1 asked for the QC: it holds a queen, the QH or the QS, so asking it for a queen
    # hits one time in two. Seats 1 and 2 lack the QC and the pool is empty: it is in seat
    # 0's hand. The sure hit is asking seat 0 for the QC.
    hands = ["5C 8C QC", "QH 5D 8S QS", "5S 8H", "QD 5H 8D"]
    game = position(hands, rules=Rules.preset("authors"), rest=0, first_player=1)
    game.ask(2, "QC")  # a miss
    game.ask(0, "5H")  # a miss: the viewer, seat 3, is to move
    view = KnowledgeTracker(game).view(3)
    queen = rank("Q")
    assert view.least_if_sure_hits[1, queen] == 1
    scores = ExpertCPU(0).scores(view)
    assert scores[(1, queen)] < SURE_HIT <= scores[(0, queen)]
    for seed in range(5):
        assert ExpertCPU(seed).choose(view) == (0, 4 * queen)  # the QC
