"""Who sits where (``gofish_env.evaluation.schedule``): line-ups, seating orders, their
rotations and the number of deals."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

from gofish_env.evaluation import deal_count, make_lineups
from gofish_env.evaluation.schedule import rotated, seating_order


def test_more_entrants_than_seats_play_every_combination_equally():
    lineups = make_lineups(5, 3)
    assert lineups == list(combinations(range(5), 3))
    seats = Counter(entrant for lineup in lineups for entrant in lineup)
    assert set(seats.values()) == {6}
    pairs = Counter(pair for lineup in lineups for pair in combinations(lineup, 2))
    assert set(pairs.values()) == {3}
    assert deal_count(1, 3, len(lineups)) == 10
    assert deal_count(31, 3, len(lineups)) == 20


def test_fewer_entrants_than_seats_fill_the_table_with_copies_fairly():
    assert make_lineups(2, 4) == [(0, 1, 0, 1)]
    three = make_lineups(3, 4)
    assert three == [(0, 1, 2, 0), (1, 2, 0, 1), (2, 0, 1, 2)]
    assert set(Counter(e for lineup in three for e in lineup).values()) == {4}
    assert make_lineups(4, 4) == [(0, 1, 2, 3)]


def test_each_seating_rotation_puts_every_entrant_in_every_seat_once():
    lineups = make_lineups(4, 4)
    orders = {seating_order(lineups, deal) for deal in range(6)}
    assert len(orders) == 6  # the 3! orders of the others behind entrant 0
    order = seating_order(lineups, 1)
    seats = [rotated(order, rotation) for rotation in range(4)]
    for entrant in range(4):
        assert sorted(seating.index(entrant) for seating in seats) == [0, 1, 2, 3]
