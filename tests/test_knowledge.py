"""Public knowledge: one exact position per deduction, and soundness over random games.

``KnowledgeTracker(game).view(seat)`` is what a seat may know; ``view.least[s, r]`` and
``view.most[s, r]`` bound how many cards of rank r seat s holds (absolute seats; the viewer's
own row is exact). ``tracker.public.least/most`` are the history's own deductions before the
viewer's hand, hand sizes and unseen cards cut them.
Rank indices: 2 -> 0, 5 -> 3, 7 -> 5, J -> 9, K -> 11.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import position, rank

from gofish_env import Game, Rules
from gofish_env.bounds import (
    admits_world_into,
    sure_hit_bounds_into,
    sure_hit_scratch_size,
    world_work_size,
)
from gofish_env.cpus import make_cpu
from gofish_env.events import Catch, Draw, EmptyHandDraw, GoFish, Hit
from gofish_env.knowledge import KnowledgeTracker

TWO, FIVE, SEVEN, JACK, KING = rank("2"), rank("5"), rank("7"), rank("J"), rank("K")


def public_rows(tracker: KnowledgeTracker) -> tuple[np.ndarray, np.ndarray]:
    public = tracker.sync()
    return np.asarray(public.least), np.asarray(public.most)


def true_counts(game: Game) -> np.ndarray:
    return np.array([game.hand_counts(seat) for seat in range(game.players)])


def four_seats(hands: list[str], pool_top: list[str], rules: Rules | None = None) -> Game:
    return position(hands, pool_top=pool_top, rules=rules or Rules())


# ----------------------------------------------------------------------------- one rule each


def test_an_ask_proves_the_asker_holds_at_least_one():
    game = four_seats(["7H 2C 3D 4S 5C", "8C 8D 9C 9D JC", "10C 10D QC QD KC", "AC AD 6C"], ["3C"])
    tracker = KnowledgeTracker(game)
    assert tracker.view(2).least[0, SEVEN] == 0
    game.ask(1, SEVEN)  # a miss; seat 0 draws the 3C, privately
    assert game.events[-2:] == [GoFish(0, 1, SEVEN), Draw(0, None)]
    least, _ = public_rows(tracker)
    assert least[0, SEVEN] == 1
    for viewer in (1, 2, 3):
        view = tracker.view(viewer)
        assert view.least[0, SEVEN] == 1
        assert view.most[0, SEVEN] >= 1


def test_a_hit_moves_a_known_count_and_leaves_the_target_none():
    game = four_seats(["7H 2C 3C", "7D 7S 8C", "7C 9C 9D", "10C 10D QC"], [])
    tracker = KnowledgeTracker(game)
    game.ask(1, SEVEN)
    assert game.events[-1] == Hit(0, 1, SEVEN, 2)
    least, most = public_rows(tracker)
    assert least[0, SEVEN] == 3  # the one the ask proved, plus the two handed over
    assert least[1, SEVEN] == most[1, SEVEN] == 0
    view = tracker.view(3)
    assert view.least[0, SEVEN] == view.most[0, SEVEN] == 3  # three: a fourth would be laid
    assert view.least[1, SEVEN] == view.most[1, SEVEN] == 0
    # Seat 2 holds the fourth 7 itself: it knows where all the others are.
    view = tracker.view(2)
    assert view.least[:, SEVEN].tolist() == [3, 0, 1, 0]
    assert view.most[:, SEVEN].tolist() == [3, 0, 1, 0]


def test_a_miss_proves_the_target_holds_none():
    game = four_seats(["7H 2C 3C", "8C 8D 9C", "7C 9D 10H", "10C 10D QC"], ["4C"])
    tracker = KnowledgeTracker(game)
    assert tracker.view(3).most[1, SEVEN] > 0
    game.ask(1, SEVEN)
    _, most = public_rows(tracker)
    assert most[1, SEVEN] == 0
    for viewer in (0, 2, 3):
        assert tracker.view(viewer).most[1, SEVEN] == 0
        assert tracker.view(viewer).least[1, SEVEN] == 0


def test_a_shown_draw_adds_one_known_card():
    game = four_seats(["7H 2C 3C", "8C 8D 9C", "9D 10H JD", "10C 10D QC"], ["7C"])
    tracker = KnowledgeTracker(game)
    game.ask(1, SEVEN)
    assert game.events[-1] == Draw(0, SEVEN)
    least, _ = public_rows(tracker)
    assert least[0, SEVEN] == 2
    assert tracker.view(2).least[0, SEVEN] == 2
    assert tracker.view(3).least[0, SEVEN] == 2


def test_a_private_draw_widens_upper_bounds_by_one_except_for_the_rank_asked():
    game = four_seats(["5C 2C 3C", "5D", "8C 8D 9C", "10C 10D QC"], ["JC", "4D", "KC"])
    tracker = KnowledgeTracker(game)
    game.ask(1, FIVE)  # hit: seat 1 is empty and draws one card at once (the JC)
    assert game.events[-1] == EmptyHandDraw(1, 1)
    _, most = public_rows(tracker)
    assert most[1].tolist() == [1] * 13  # one card: at most one of each rank
    game.ask(2, TWO)  # a miss: seat 0 draws the 4D privately; seat 1 to move
    game.ask(2, JACK)  # a miss: seat 1 draws the KC privately (not a jack: it would show)
    assert game.events[-1] == Draw(1, None)
    least, most = public_rows(tracker)
    assert most[1, JACK] == 1
    assert [most[1, r] for r in range(13) if r != JACK] == [2] * 12
    assert least[1, JACK] == 1
    view = tracker.view(3)
    assert view.most[1, JACK] == 1
    # Seat 1 holds two cards, one of them a proved jack: at most one of any other rank.
    assert [view.most[1, r] for r in range(13) if r != JACK] == [1] * 12


def test_a_private_draw_followed_by_a_catch_was_of_the_caught_rank():
    # Seat 1 asks seat 0 for 7s and misses: seat 0 is proved to hold none. Seat 0 then
    # fishes privately and lays a catch of aces at once: only the drawn card can have
    # completed it, so it was an ace, and seat 0 still holds no 7.
    game = position(
        ["AC AD AH 9C", "7C 8C"],
        pool_top=["2C", "AS", "3C", "4C"],
        rules=Rules(players=2),
        first_player=1,
    )
    tracker = KnowledgeTracker(game)
    game.ask(0, SEVEN)  # seat 1: go fish, draws the 2C
    game.ask(1, rank("9"))  # seat 0: go fish, draws the AS and lays the aces
    assert game.events[-2:] == [Draw(0, None), Catch(0, rank("A"))]
    _, most = public_rows(tracker)
    assert most[0, SEVEN] == 0
    assert tracker.view(1).most[0, SEVEN] == 0
    # A private draw with no catch after it may be any rank but the one asked for.
    game.ask(0, rank("8"))  # seat 1: go fish, draws the 3C
    game.ask(1, rank("9"))  # seat 0: go fish, draws the 4C
    assert game.events[-1] == Draw(0, None)
    _, most = public_rows(tracker)
    assert most[0, SEVEN] == 1


def test_an_empty_hand_draw_of_n_cards_caps_every_rank_at_n():
    rules = Rules(empty_hand_draw_count=3)
    game = four_seats(["5C 2C 3C", "5D", "8C 8D 9C", "10C 10D QC"], ["JC", "JD", "KC"], rules)
    tracker = KnowledgeTracker(game)
    game.ask(1, FIVE)
    assert game.events[-1] == EmptyHandDraw(1, 3)
    least, most = public_rows(tracker)
    assert most[1].tolist() == [3] * 13
    assert least[1].tolist() == [0] * 13
    view = tracker.view(3)
    assert view.most[1].max() == 3
    assert view.most[1, FIVE] == 2  # seat 0 is proved to hold two of the four 5s
    assert view.least[1].tolist() == [0] * 13


def test_a_catch_removes_the_rank():
    game = four_seats(["7H 2C 3C", "7D 7S 8C", "7C 9C 9D", "10C 10D QC"], [])
    tracker = KnowledgeTracker(game)
    game.ask(1, SEVEN)
    game.ask(2, SEVEN)  # the fourth 7: seat 0 lays the catch
    assert game.catches(0) == [SEVEN]
    public = tracker.sync()
    assert np.asarray(public.laid)[SEVEN] == 4
    for viewer in range(4):
        view = tracker.view(viewer)
        assert view.least[:, SEVEN].tolist() == [0] * 4
        assert view.most[:, SEVEN].tolist() == [0] * 4
        assert view.unseen[SEVEN] == 0


def test_two_sets_of_a_rank_laid_one_after_the_other_leave_a_sound_bound():
    """Two decks and pairs: five 7s in one hand lay two pairs at the deal and keep one 7.
    The first catch says fewer than a pair is left, the second comes from a hand that
    still held two."""
    rules = Rules(players=2, decks=2, set_size=2)
    game = position(["7H 7D 7S 7C 7H 2C", "3C 4C 5C 6C 8C 9C"], rules=rules)
    assert game.catches(0) == [SEVEN, SEVEN]
    assert game.hand_counts(0)[SEVEN] == 1
    public = KnowledgeTracker(game).sync()
    assert public.least[0, SEVEN] == 0
    assert public.most[0, SEVEN] == 1  # not 1 - 2 = -1: a pair is left only at the end
    view = KnowledgeTracker(game).view(1)
    assert view.least[0, SEVEN] <= 1 <= view.most[0, SEVEN]


def test_bounds_are_cut_by_hand_sizes_by_complete_sets_and_by_the_unseen_cards():
    game = four_seats(["7H 7C 7D 2C 3C", "8C 9D", "KC KD KH 9C 10C 10D JC", "QC"], [])
    view = KnowledgeTracker(game).view(0)
    # Hand sizes: seat 1 holds two cards, seat 3 one.
    assert view.most[1].max() == 2 and view.most[1].min() <= 1
    assert view.most[3].max() == 1
    # Seat 0 holds three 7s: only one 7 is unseen.
    assert view.most[1:, SEVEN].tolist() == [1, 1, 1]
    # Seven cards, but no hand holds a complete set: at most three of a rank.
    assert view.most[2].max() == 3
    # Nothing is proved at the deal.
    assert view.least[1:].sum() == 0
    # The viewer's own row is exact.
    assert view.least[0].tolist() == view.most[0].tolist() == game.hand_counts(0)


def test_an_empty_pool_puts_every_unseen_card_in_a_hand():
    # Two players, pool empty: the opponent holds exactly the cards seat 0 has not seen.
    game = position(
        ["7H 7C 2C 9S", "7D 7S 2D 2H 2S 9C 9D 9H"], pool_top=[], rules=Rules(players=2), rest=0
    )
    view = KnowledgeTracker(game).view(0)
    assert view.least[1].tolist() == view.most[1].tolist() == game.hand_counts(1)
    # Three players: seat 1 says go fish to a 2, so seat 2 holds all three unseen 2s.
    game = position(
        ["7H 2C", "7C 7D 3C 3H", "2D 2H 2S 3D 3S 7S"],
        pool_top=[],
        rules=Rules(players=3),
        rest=0,
    )
    tracker = KnowledgeTracker(game)
    assert tracker.view(0).least[2, TWO] == 0
    game.ask(1, TWO)
    view = tracker.view(0)
    assert view.most[1, TWO] == 0
    assert view.least[2, TWO] == view.most[2, TWO] == 3


def test_exact_card_asks_prove_the_rank_and_a_miss_clears_only_that_card():
    rules = Rules.preset("authors", players=3)
    hands = ["7H", "7C 7D 8C", "7S 8D 8H 8S"]
    game = position(hands, pool_top=[], rules=rules, rest=0)
    tracker = KnowledgeTracker(game)
    game.ask(1, "7S")  # seat 1 does not hold the 7S: a miss
    assert isinstance(game.events[-1], GoFish)
    least, most = public_rows(tracker)
    assert least[0, SEVEN] == 1
    assert most[1, SEVEN] > 0  # seat 1 may still hold other 7s
    # Seat 2 sees three 7s unseen, seat 0 holds one card and there is no pool: seat 1
    # holds the other two.
    view = tracker.view(2)
    assert view.least[1, SEVEN] == view.most[1, SEVEN] == 2
    game = position(hands, pool_top=[], rules=rules, rest=0)
    tracker = KnowledgeTracker(game)
    game.ask(1, "7C")  # a hit: one card moves
    assert game.events[-1] == Hit(0, 1, SEVEN, 1)
    least, _ = public_rows(tracker)
    assert least[0, SEVEN] == 2
    assert tracker.view(2).least[0, SEVEN] == 2


# --------------------------------------------------- the bounds if every seat takes sure hits


def test_a_miss_while_another_seat_is_proved_to_hold_a_rank_assumes_the_asker_held_none():
    game = four_seats(
        ["7H 2C 3D 4S 5C", "8C 9C JC QH KH", "10C 10D 6C 6D 9D", "AC AD AH 3C 4C"], ["2D", "KS"]
    )
    tracker = KnowledgeTracker(game)
    game.ask(2, SEVEN)  # seat 0 misses: it is proved to hold a 7; it draws the 2D
    game.ask(2, rank("8"))  # seat 1 misses: with a 7 it would have asked seat 0 for it
    assert game.events[-1] == Draw(1, None)  # the KS, privately
    view = tracker.view(3)
    assert view.most[1, SEVEN] == 3  # as far as the history proves, up to three 7s
    assert view.most_if_sure_hits[1, SEVEN] == 1  # none then, at most the card drawn since
    assert view.least_if_sure_hits[1, SEVEN] == 0
    # No seat but seat 1 is proved to hold an 8, a queen...: nothing is assumed of those.
    for other in (rank("8"), rank("Q"), KING):
        assert view.most_if_sure_hits[1, other] == view.most[1, other]
    # Seat 2 was asked, not asking: the assumption says nothing new about it.
    assert (view.most_if_sure_hits[2] == view.most[2]).all()


def test_a_seat_seen_holding_a_rank_it_passed_up_is_assumed_nothing_of():
    # An empty pool: a miss draws nothing, so a passed-up rank is held by none at all.
    hands = ["7H 9C", "7C 8C 10C", "8D 9D 10D 10H", "7D 7S 8H 8S 9H 9S 10S"]
    game = position(hands, pool_top=[], rest=3)
    tracker = KnowledgeTracker(game)
    game.ask(2, SEVEN)  # seat 0 misses: proved to hold a 7
    game.ask(0, rank("8"))  # seat 1 misses while holding the 7C: it passed up a sure hit
    view = tracker.view(2)
    assert view.most_if_sure_hits[1, SEVEN] == 0 < view.most[1, SEVEN]
    assert not tracker.sync().skips_sure_hits[1]
    game.ask(0, rank("8"))  # seat 2 misses
    game.ask(0, rank("8"))  # seat 3 misses
    game.ask(2, SEVEN)  # seat 0 misses again
    game.ask(0, SEVEN)  # seat 1 asks for the 7 it was assumed not to hold
    public = tracker.sync()
    assert public.skips_sure_hits[1]
    assert (public.sure_hit_most[1] >= public.most[1]).all()  # nothing assumed of seat 1
    # Seat 1 misses again while seat 2 is proved to hold an 8 (and seat 1 holds the 8C):
    # nothing is assumed of seat 1 any more.
    game.ask(0, rank("10"))
    assert game.events[-1] == GoFish(1, 0, rank("10"))
    public = tracker.sync()
    assert public.least[2, rank("8")] == 1
    assert (public.sure_hit_most[1] >= public.most[1]).all()


def test_a_seat_that_hands_over_a_rank_it_passed_up_is_assumed_nothing_of():
    hands = ["7H 9C", "7C 8C 10C", "8D 9D 10D 10H", "7D 7S 8H 8S 9H 9S 10S"]
    game = position(hands, pool_top=[], rest=3)
    tracker = KnowledgeTracker(game)
    game.ask(2, SEVEN)  # seat 0 misses: proved to hold a 7
    game.ask(0, rank("8"))  # seat 1 misses while holding the 7C
    game.ask(0, rank("8"))  # seat 2 misses
    game.ask(1, SEVEN)  # seat 3 takes seat 1's 7C: a card it was assumed not to hold
    assert game.events[-1] == Hit(3, 1, SEVEN, 1)
    assert tracker.sync().skips_sure_hits[1]


def test_a_seat_that_lays_a_set_of_a_rank_it_passed_up_is_assumed_nothing_of():
    # Pairs: seat 1 is proved to hold a 7, seat 2 a 3. Seat 0, holding the 7H and the 3H
    # (two sure hits), asks for 2s, draws the 7D unseen and lays 7s: it held a 7 when it
    # passed the sure hit up, so nothing is assumed of it (its 3s included).
    rules = Rules.preset("pairs", players=3)
    hands = ["7H 3H 2C", "7C 5C 9C", "3C 4C 6C"]
    game = position(hands, pool_top=["8C", "10C", "7D"], rules=rules, first_player=1)
    tracker = KnowledgeTracker(game)
    game.ask(2, SEVEN)  # seat 1 asks seat 2: a miss, seat 1 holds a 7; it draws the 8C
    game.ask(1, rank("3"))  # seat 2 asks seat 1: a miss, seat 2 holds a 3; the 10C
    game.ask(1, rank("2"))  # seat 0 asks seat 1 for 2s: a miss; it draws the 7D
    assert game.events[-2:] == [Draw(0, None), Catch(0, SEVEN)]
    assert tracker.sync().skips_sure_hits.tolist() == [True, False, False]
    view = tracker.view(1)
    assert game.hand_counts(0)[rank("3")] == 1
    assert view.most_if_sure_hits[0, rank("3")] == view.most[0, rank("3")] == 1


def test_the_second_set_of_a_rank_laid_at_once_rules_nothing_out():
    # Two decks, pairs, refills of 5: seat 0 takes seat 1's 7 (a pair, laid), empties, and
    # draws four 7s and a 9, two more pairs of 7s laid one after the other. The first leaves
    # its bounds at one 7, below a set: that is the cap of a set just laid, not a sign that
    # it held more 7s than assumed.
    rules = Rules(players=2, decks=2, set_size=2, empty_hand_draw_count=5)
    game = position(["7H", "7C 2C 3C"], pool_top=["7D", "7S", "7H", "7C", "9C"], rules=rules)
    tracker = KnowledgeTracker(game)
    game.ask(1, SEVEN)
    assert game.events.count(Catch(0, SEVEN)) == 3
    assert not tracker.sync().skips_sure_hits.any()


def test_the_sure_hit_assumption_is_dropped_once_a_hand_size_rules_it_out():
    # seat 1 (easy) passes sure hits up all the time; after 49 asks it holds 8 cards, more
    # than the assumption leaves room for. Before the fix the assumed bounds of seat 1
    # summed to 4, and said no 3s where the history proves it may hold two.
    game = Game(Rules(players=2), 834)
    cpus = [make_cpu("random", 834), make_cpu("easy", 835)]
    tracker = KnowledgeTracker(game)
    for _ in range(49):
        seat = game.current_player
        game.ask(*cpus[seat].choose(tracker.view(seat)))
    view = tracker.view(0)
    assert view.hand_sizes[1] == 8
    assert tracker.sync().skips_sure_hits[1]
    assert view.most_if_sure_hits[1].sum() >= 8
    assert view.most_if_sure_hits[1, rank("3")] == view.most[1, rank("3")] == 2
    truth = game.hand_counts(1)
    assert (view.least_if_sure_hits[1] <= truth).all()
    assert (truth <= view.most_if_sure_hits[1]).all()


def some_world(low: np.ndarray, high: np.ndarray, sizes: list[int], unseen) -> list | None:
    """An assignment of the unseen cards to the hands (rows) within ``low``..``high``, each
    hand its size, the rest in the pool; found by depth-first search, rank by rank (an
    independent check of ``bounds.admits_world_into``). None if there is none."""
    rows, ranks = low.shape
    # What the ranks from r on can still give each hand, at least and at most.
    most_after = np.concatenate([np.cumsum(high[:, ::-1], axis=1)[:, ::-1], np.zeros((rows, 1))], 1)
    least_after = np.concatenate([np.cumsum(low[:, ::-1], axis=1)[:, ::-1], np.zeros((rows, 1))], 1)
    unseen_after = np.concatenate([np.cumsum(np.asarray(unseen)[::-1])[::-1], [0]])
    counts = np.zeros((rows, ranks), np.int64)
    dead_ends: set[tuple] = set()

    def place(rank: int, row: int, need: list[int], left: int) -> bool:
        if row == rows:
            if sum(need) > unseen_after[rank + 1]:
                return False
            return place(rank + 1, 0, need, int(unseen[rank + 1])) if rank + 1 < ranks else True
        if (
            rank == 0
            and row == 0
            and not all(least_after[k, 0] <= need[k] <= most_after[k, 0] for k in range(rows))
        ):
            return False
        key = (rank, row, tuple(need), left)
        if key in dead_ends:
            return False
        for count in range(int(low[row, rank]), int(min(high[row, rank], left, need[row])) + 1):
            rest = need[row] - count
            if not least_after[row, rank + 1] <= rest <= most_after[row, rank + 1]:
                continue
            counts[row, rank] = count
            need[row] = rest
            if place(rank, row + 1, need, left - count):
                return True
            need[row] = rest + count
        dead_ends.add(key)
        return False

    found = place(0, 0, list(sizes), int(unseen[0]))
    return counts.tolist() if found else None


ASSUMED_WORLD_CASES = [
    ("table-2", Rules(players=2), 10),
    ("table-4", Rules(), 6),
    ("table-5", Rules(players=5), 3),
    ("pairs-3", Rules.preset("pairs", players=3), 3),
    ("two-decks-3", Rules.preset("two_decks", players=3), 2),
    ("quick-2", Rules.preset("quick", players=2), 6),
]


@pytest.mark.parametrize(
    ("rules", "games"),
    [case[1:] for case in ASSUMED_WORLD_CASES],
    ids=[case[0] for case in ASSUMED_WORLD_CASES],
)
def test_the_assumed_bounds_always_admit_a_world(rules, games):
    # Seats that pass sure hits up (random, easy) next to seats that take them (hard,
    # expert): wherever the assumption is wrong, the assumed bounds still fit some world.
    levels = ["random", "easy", "hard", "expert", "normal"]
    checked = sharper = 0
    for seed in range(games):
        game = Game(rules, seed=seed)
        tracker = KnowledgeTracker(game)
        cpus = [
            make_cpu(levels[(seed + s) % len(levels)], seed * 7 + s) for s in range(rules.players)
        ]
        while not game.is_over and game.num_asks < 400:
            for viewer in range(rules.players):
                view = tracker.view(viewer)
                others = [(viewer + k) % rules.players for k in range(1, rules.players)]
                low, high = view.least_if_sure_hits[others], view.most_if_sure_hits[others]
                sizes = [view.hand_sizes[s] for s in others]
                world = some_world(low, high, sizes, view.unseen)
                assert world is not None, (seed, game.num_asks, viewer)
                checked += 1
                sharper += int((high < view.most[others]).any())
            seat = game.current_player
            game.ask(*cpus[seat].choose(tracker.view(seat)))
    assert checked > 100 and sharper > 0


def test_the_world_search_of_these_tests_finds_none_where_there_is_none():
    low = np.zeros((2, 3), np.int64)
    high = np.array([[1, 1, 0], [2, 0, 1]])
    assert some_world(low, high, [2, 2], np.array([2, 1, 1])) is not None
    assert some_world(low, high, [2, 3], np.array([2, 1, 1])) is None  # row 1 holds 3 at most
    assert some_world(low, high, [2, 3], np.array([1, 1, 1])) is None  # too few 2s... or 0s


def sure_hit_run(rules: Rules, seed: int, policy: str) -> dict[str, int]:
    """One game where every seat plays ``policy`` ("random", or CPU levels that take sure
    hits); after every ask, for every viewer: the assumed bounds lie within the proved
    ones, and with CPUs that take sure hits they hold the true counts."""
    from gofish_env.cpus import make_cpu

    stats = {"checks": 0, "sharper": 0}
    game = Game(rules, seed=seed)
    tracker = KnowledgeTracker(game)
    chooser = random.Random(seed)
    levels = ["hard", "expert"]
    cpus = [make_cpu(levels[(seed + s) % 2], seed=seed * 10 + s) for s in range(rules.players)]
    while True:
        truth = true_counts(game)
        for viewer in range(rules.players):
            view = tracker.view(viewer)
            low, high = view.least_if_sure_hits, view.most_if_sure_hits
            assert (view.least <= low).all() and (low <= high).all()
            assert (high <= view.most).all()
            if policy == "cpus":
                assert (low <= truth).all() and (truth <= high).all(), (seed, game.num_asks)
            stats["checks"] += 1
            stats["sharper"] += int((high < view.most).sum())
        if game.is_over or game.num_asks >= 3000:
            return stats
        seat = game.current_player
        if policy == "cpus":
            game.ask(*cpus[seat].choose(tracker.view(seat)))
        else:
            game.ask(*chooser.choice(game.legal_asks()))


SURE_HIT_CASES = [
    ("table-4", Rules(), 12),
    ("table-2", Rules(players=2), 12),
    ("table-6", Rules(players=6), 6),
    ("bicycle-3", Rules.preset("bicycle", players=3), 8),
    ("quick-4", Rules.preset("quick"), 8),
    ("pairs-4", Rules.preset("pairs"), 6),
    ("two-decks-3", Rules.preset("two_decks", players=3), 4),
    ("asked-moves", Rules(players=4, after_miss="asked", fished_rank_asks_again=False), 8),
    ("askable-empty", Rules(players=4, empty_hand_draw="own_turn", empty_hand_askable=True), 8),
    ("authors-4", Rules.preset("authors"), 4),
]


@pytest.mark.parametrize(
    ("rules", "games"),
    [case[1:] for case in SURE_HIT_CASES],
    ids=[case[0] for case in SURE_HIT_CASES],
)
def test_sure_hit_bounds_hold_the_truth_when_every_seat_takes_sure_hits(rules, games):
    stats = [sure_hit_run(rules, seed, "cpus") for seed in range(games)]
    assert sum(s["checks"] for s in stats) > games * 20
    if rules.ask_for == "rank":  # not vacuous: the assumption sharpens some bounds
        assert sum(s["sharper"] for s in stats) > 0


@pytest.mark.parametrize(
    ("rules", "games"),
    [case[1:] for case in SURE_HIT_CASES],
    ids=[case[0] for case in SURE_HIT_CASES],
)
def test_sure_hit_bounds_stay_within_the_proved_bounds_whatever_the_play(rules, games):
    stats = [sure_hit_run(rules, seed, "random") for seed in range(games)]
    assert sum(s["checks"] for s in stats) > games * 20


# ----------------------------------------------------------------------------- soundness


def soundness_run(rules: Rules, seeds: range, asks_limit: int = 3000) -> dict[str, int]:
    """Plays random games; after every ask checks least <= true <= most for every viewer,
    opponent and rank. Returns counts, including how often the bounds were exact."""
    stats = {"checks": 0, "exact": 0, "positions": 0}
    for seed in seeds:
        game = Game(rules, seed=seed)
        tracker = KnowledgeTracker(game)
        chooser = random.Random(seed)
        while True:
            truth = true_counts(game)
            for viewer in range(rules.players):
                view = tracker.view(viewer)
                least, most = view.least, view.most
                assert least.shape == most.shape == truth.shape
                bad = np.argwhere((least > truth) | (truth > most))
                assert not bad.size, (
                    f"{rules.describe()} seed {seed} ask {game.num_asks} viewer {viewer}: "
                    f"(seat, rank) {bad[0].tolist()} least {least[tuple(bad[0])]} "
                    f"true {truth[tuple(bad[0])]} most {most[tuple(bad[0])]}; "
                    f"recent {game.events[-4:]}"
                )
                assert (least[viewer] == truth[viewer]).all()
                assert (most[viewer] == truth[viewer]).all()
                stats["checks"] += truth.size
                stats["exact"] += int((least == most).sum())
                if rules.players == 2 and not game.pool_size:
                    # Two players, empty pool: the opponent holds every unseen card.
                    assert (least == truth).all() and (most == truth).all()
            stats["positions"] += 1
            if game.is_over or game.num_asks >= asks_limit:
                break
            game.ask(*chooser.choice(game.legal_asks()))
    return stats


SOUNDNESS_CASES = [
    ("table-4", Rules(), 60),
    ("table-2", Rules(players=2), 75),
    ("table-6", Rules(players=6), 30),
    ("bicycle-3", Rules.preset("bicycle", players=3), 40),
    ("family-5", Rules.preset("family", players=5), 30),
    ("quick-3", Rules.preset("quick", players=3), 75),
    ("ocean-4", Rules.preset("ocean"), 40),
    ("pairs-4", Rules.preset("pairs"), 40),
    ("pairs-jokers-3", Rules.preset("pairs", jokers=True, players=3), 40),
    ("two-decks-3", Rules.preset("two_decks", players=3), 15),
    ("authors-4", Rules.preset("authors"), 20),
    ("authors-2", Rules.preset("authors", players=2), 30),
    ("refill-5", Rules(players=3, empty_hand_draw_count=5, empty_hand_draw="own_turn"), 30),
    ("asked-moves", Rules(players=4, after_miss="asked", fished_rank_asks_again=False), 30),
    ("first-out", Rules(players=3, game_end="first_out"), 30),
    ("askable-empty", Rules(players=4, empty_hand_draw="own_turn", empty_hand_askable=True), 30),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rules", "games"),
    [case[1:] for case in SOUNDNESS_CASES],
    ids=[case[0] for case in SOUNDNESS_CASES],
)
def test_bounds_are_sound_over_random_games(rules, games):
    stats = soundness_run(rules, range(games))
    assert stats["positions"] > games * 10
    # Not vacuous: many bounds are exact (own rows, laid ranks, misses, empty pools).
    assert stats["exact"] > stats["checks"] // 4


# ----------------------------------------------------- the compiled kernel against numpy


def numpy_opponent_bounds(public, seat: int, own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The same deductions as ``opponent_bounds_kernel``, written with whole-array numpy
    operations (the implementation the kernel replaced), as an independent reference."""
    players = public.players
    opponents = [(seat + k) % players for k in range(1, players)]
    sizes = np.array(public.hand_sizes)[opponents, None]
    unseen = (public.copies - public.laid) - own
    high = np.minimum(public.most[opponents], sizes)
    high = np.minimum(high, np.minimum(unseen, public.hand_cap))
    low = np.minimum(public.least[opponents], high)
    pool = public.pool_size
    near_end = pool < public.copies.max()
    for _ in range(2 if near_end else 1):
        high = np.minimum(high, unseen - low.sum(0) + low)
        high = np.minimum(high, sizes - low.sum(1)[:, None] + low)
        low = np.maximum(low, sizes - high.sum(1)[:, None] + high)
        if near_end:
            low = np.maximum(low, unseen - pool - high.sum(0) + high)
    return low, high


def random_play_positions(rules: Rules, games: int):
    """(game, its public knowledge) after every ask of seeded games of random legal asks
    (random play passes up sure hits, so the sure-hit assumption is often wrong)."""
    for seed in range(max(games // 3, 5)):
        game = Game(rules, seed=seed)
        tracker = KnowledgeTracker(game)
        chooser = random.Random(seed)
        while not game.is_over and game.num_asks < 3000:
            yield game, tracker.sync()
            game.ask(*chooser.choice(game.legal_asks()))


@pytest.mark.parametrize(
    ("rules", "games"),
    [case[1:] for case in SOUNDNESS_CASES],
    ids=[case[0] for case in SOUNDNESS_CASES],
)
def test_compiled_bounds_equal_the_numpy_reference(rules, games):
    compared = differing_ranks = 0
    for game, public in random_play_positions(rules, games):
        for viewer in range(rules.players):
            own = np.array(game.hand_counts(viewer))
            low, high = public.opponent_bounds(viewer, own)
            ref_low, ref_high = numpy_opponent_bounds(public, viewer, own)
            np.testing.assert_array_equal(low, ref_low)
            np.testing.assert_array_equal(high, ref_high)
            compared += 1
            differing_ranks += int((low != high).sum())
    assert compared > 100
    # Not only trivial positions (two players with the whole deck dealt know everything).
    everything_known = rules.players == 2 and Game(rules, seed=0).pool_size == 0
    assert differing_ranks > 0 or everything_known


@pytest.mark.parametrize(
    ("rules", "games"),
    [case[1:] for case in SOUNDNESS_CASES],
    ids=[case[0] for case in SOUNDNESS_CASES],
)
def test_the_true_hands_only_save_the_sure_hit_bounds_work(rules, games):
    # The batched observation hands ``sure_hit_bounds_into`` the opponents' true hands to
    # skip a flow check they prove; the bounds must be the same as from the public facts
    # alone, where the hands fit the assumed bounds and where they do not.
    fitted = missed = 0
    for game, public in random_play_positions(rules, games):
        for viewer in range(rules.players):
            own = np.array(game.hand_counts(viewer), np.int64)
            low, high = public.opponent_bounds(viewer, own)
            expected = public.opponent_bounds(viewer, own, if_sure_hits=True)
            opponents = [(viewer + k) % rules.players for k in range(1, rules.players)]
            world = np.array([game.hand_counts(seat) for seat in opponents], np.int64)
            shape = (rules.players - 1, public.ranks)
            sure_low, sure_high = np.empty(shape, np.int64), np.empty(shape, np.int64)
            sure_hit_bounds_into(
                public.least,
                public.most,
                public.sure_hit_most,
                np.array(public.hand_sizes, np.int64),
                own,
                public.unlaid,
                public.hand_cap,
                public.pool_size,
                public.max_copies,
                viewer,
                low,
                high,
                sure_low,
                sure_high,
                np.empty((rules.players, public.ranks), np.int64),
                np.empty(sure_hit_scratch_size(rules.players, public.ranks), np.int64),
                world,
            )
            np.testing.assert_array_equal(sure_low, expected[0])
            np.testing.assert_array_equal(sure_high, expected[1])
            inside = ((sure_low <= world) & (world <= sure_high)).all()
            fitted += int(inside)
            missed += int(not inside)
    assert fitted > 0
    # Both ways are tried where the assumption can be wrong (rank asks, more than two).
    assert missed > 0 or rules.players == 2 or rules.ask_for == "card"


@pytest.mark.parametrize(
    ("rules", "games"),
    [case[1:] for case in SOUNDNESS_CASES],
    ids=[case[0] for case in SOUNDNESS_CASES],
)
def test_sure_hit_bounds_are_the_deduction_with_every_assumption_made(rules, games):
    # ``sure_hit_bounds_into`` leaves out the seats whose assumption cannot change the
    # deduction; the bounds must be those of the numpy reference run with every seat that
    # passed up a sure hit capped, kept within the proved bounds, wherever those admit a
    # world (elsewhere assumptions are dropped, another test's matter).
    compared = assumed = 0
    for game, public in random_play_positions(rules, games):
        for viewer in range(rules.players):
            own = np.array(game.hand_counts(viewer), np.int64)
            low, high = public.opponent_bounds(viewer, own)
            capped = public.most.copy()
            for seat in range(rules.players):
                if seat != viewer and (public.sure_hit_most[seat] < public.most[seat]).any():
                    top = np.minimum(public.most[seat], public.sure_hit_most[seat])
                    capped[seat] = np.maximum(top, public.least[seat])
            fields = ("players", "hand_sizes", "copies", "laid", "least", "hand_cap", "pool_size")
            each_capped = SimpleNamespace(most=capped, **{f: getattr(public, f) for f in fields})
            ref_low, ref_high = numpy_opponent_bounds(each_capped, viewer, own)
            ref_high = np.minimum(np.maximum(ref_high, low), high)
            ref_low = np.minimum(np.maximum(ref_low, low), ref_high)
            opponents = [(viewer + k) % rules.players for k in range(1, rules.players)]
            sizes = np.array(public.hand_sizes, np.int64)[opponents]
            work = np.empty(world_work_size(rules.players - 1, public.ranks), np.int64)
            no_world = np.zeros((0, public.ranks), np.int64)
            unseen = public.unlaid - own
            if not admits_world_into(ref_low, ref_high, sizes, unseen, no_world, work):
                continue
            sure_low, sure_high = public.opponent_bounds(viewer, own, if_sure_hits=True)
            np.testing.assert_array_equal(sure_low, ref_low)
            np.testing.assert_array_equal(sure_high, ref_high)
            compared += 1
            assumed += int((ref_low != low).any() or (ref_high != high).any())
    assert compared > 100
    assert assumed > 0 or rules.players == 2 or rules.ask_for == "card"


def test_knowledge_bounds_hold_the_true_hands_and_prove_more_than_the_history():
    # Whole games: the bounds a CPU decides with always contain the true counts, and
    # often prove a holding the history alone does not (hand sizes, the pool's capacity).
    sharper = 0
    for seed in range(40):
        rules = Rules(players=3 + seed % 3)
        game = Game(rules, seed)
        tracker = KnowledgeTracker(game)
        cpus = [make_cpu("hard", seed=seat) for seat in range(rules.players)]
        while not game.is_over:
            seat = game.current_player
            view = tracker.view(seat)
            low, high = view.least, view.most
            for other in range(rules.players):
                truth = game.hand_counts(other)
                assert all(low[other] <= truth) and all(truth <= high[other])
            # The pool's capacity proves holdings the history alone does not.
            if view.pool_size:
                sharper += int((low > tracker.public.least).any())
            game.ask(*cpus[seat].choose(view))
    assert sharper > 0
