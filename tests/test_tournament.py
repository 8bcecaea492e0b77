"""The tournament: schedule, duplicate deals, statistics, entrant kinds, workers, files, CLI."""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from gofish_baselines.tournament import main, run_tournament
from gofish_env import Game, Rules
from gofish_env.cpus import CPU_LEVELS
from gofish_env.evaluation import Entrant, GameRecord, deal_count, make_entrants, make_lineups
from gofish_env.evaluation.schedule import rotated, seating_order
from gofish_env.evaluation.standings import summarize
from gofish_env.evaluation.stats import fit_ratings, ratio_interval, t_quantile_95

LEVEL = next(iter(CPU_LEVELS))  # a CPU level that exists ("random" at least)
TWO = [Entrant("A", LEVEL), Entrant("B", LEVEL)]


def record(deal, rotation, seats, catches, points=None, winners=None):
    """A hand-made two-or-more-seat game result; winners default to the most catches."""
    points = points or tuple(3 * count for count in catches)
    if winners is None:
        best = max(catches)
        winners = tuple(seat for seat, count in enumerate(catches) if count == best)
    return GameRecord(deal, rotation, 0, tuple(seats), tuple(catches), tuple(points), winners)


# ---------------------------------------------------------------------- statistics


def test_one_entrant_always_winning_gets_every_win_and_a_zero_width_interval():
    records = []
    for deal in range(3):
        records.append(record(deal, 0, (0, 1), (9, 4)))
        records.append(record(deal, 1, (1, 0), (4, 9)))
    summary = summarize(records, TWO, Rules(players=2))
    a, b = summary.standings
    assert (a.win_rate, a.win_rate_ci) == (1.0, (1.0, 1.0))
    assert (b.win_rate, b.win_rate_ci) == (0.0, (0.0, 0.0))
    assert (a.mean_catches, b.mean_catches) == (9.0, 4.0)
    assert (a.mean_points, b.mean_points) == (27.0, 12.0)
    assert (a.seats, a.deal_groups, a.wins) == (6, 3, 6.0)
    assert summary.head_to_head[0, 1] == 1.0 and summary.head_to_head[1, 0] == 0.0
    assert math.isnan(summary.head_to_head[0, 0])
    assert summary.meetings.tolist() == [[0, 6], [6, 0]]
    assert a.rating > 1500 > b.rating
    assert a.rating + b.rating == pytest.approx(3000)
    assert a.rating_ci is not None and a.rating_ci[0] > 1500


def test_shared_wins_give_each_winner_a_share_and_the_interval_is_over_deal_groups():
    records = [
        # Deal 0: A wins, then A and B share the win (level on catches and points).
        record(0, 0, (0, 1), (8, 5)),
        record(0, 1, (1, 0), (6, 6), (40, 40)),
        # Deal 1: B wins both seatings.
        record(1, 0, (0, 1), (5, 10)),
        record(1, 1, (1, 0), (9, 6)),
        # Deal 2: A wins both.
        record(2, 0, (0, 1), (7, 6)),
        record(2, 1, (1, 0), (2, 11)),
    ]
    summary = summarize(records, TWO, Rules(players=2))
    a, b = summary.standings
    assert a.wins == 3.5 and b.wins == 2.5
    assert a.win_rate == pytest.approx(3.5 / 6)
    # Group means of A: 0.75, 0, 1 -> standard error sqrt(var / 3), t with 2 df.
    means = np.array([0.75, 0.0, 1.0])
    half = 4.303 * means.std(ddof=1) / math.sqrt(3)
    assert a.win_rate_ci == pytest.approx((max(0.0, 3.5 / 6 - half), min(1.0, 3.5 / 6 + half)))
    catches = np.array([(8 + 6) / 2, (5 + 6) / 2, (7 + 11) / 2])
    half = 4.303 * catches.std(ddof=1) / math.sqrt(3)
    assert a.mean_catches_ci == pytest.approx((catches.mean() - half, catches.mean() + half))
    # Head to head: A ahead in 3 games, level in 1 (counted half), behind in 2.
    assert summary.head_to_head[0, 1] == pytest.approx(3.5 / 6)
    assert summary.head_to_head[1, 0] == pytest.approx(2.5 / 6)


def test_ratio_interval_weights_groups_by_their_seats():
    # Group 0: 2 seats summing 1; group 1: 1 seat of 0; group 2: 1 seat of 1.
    values, counts = np.array([1.0, 0.0, 1.0]), np.array([2.0, 1.0, 1.0])
    rate, (low, high) = ratio_interval(values, counts)
    assert rate == 0.5
    residual = values - rate * counts  # 0, -0.5, 0.5
    error = math.sqrt((residual**2).sum() / (3 * 2)) / counts.mean()
    assert (low, high) == pytest.approx((0.5 - 4.303 * error, 0.5 + 4.303 * error))
    assert ratio_interval(np.array([3.0]), np.array([2.0])) == (1.5, None)
    assert ratio_interval(np.array([0.0, 1.0]), np.array([0.0, 1.0]))[1] is None


def test_t_quantiles_approach_the_normal():
    assert t_quantile_95(1) == 12.706
    assert t_quantile_95(31) == pytest.approx(2.0395, abs=1e-4)
    assert t_quantile_95(120) == pytest.approx(1.9799, abs=1e-4)


def test_ties_on_catches_follow_the_rules_tiebreak():
    # Level on catches; A has more points. Table rules: A wins and finishes ahead.
    table = [record(0, 0, (0, 1), (6, 6), (50, 40), winners=(0,))]
    summary = summarize(table, TWO, Rules(players=2))
    assert summary.head_to_head[0, 1] == 1.0
    # Shared-win rules: both win, and neither finished ahead.
    shared = [record(0, 0, (0, 1), (6, 6), (50, 40), winners=(0, 1))]
    summary = summarize(shared, TWO, Rules.preset("family", players=2))
    assert summary.head_to_head[0, 1] == 0.5
    assert [stats.win_rate for stats in summary.standings] == [0.5, 0.5]


def test_copies_of_an_entrant_count_as_seats_and_do_not_meet_themselves():
    # A B A B: seat 2 (A) wins alone.
    records = [record(0, 0, (0, 1, 0, 1), (2, 3, 5, 3))]
    summary = summarize(records, TWO, Rules(players=4))
    a, b = summary.standings
    assert (a.seats, a.wins, a.win_rate) == (2, 1.0, 0.5)
    assert (b.seats, b.wins, b.win_rate) == (2, 0.0, 0.0)
    assert summary.meetings.tolist() == [[0, 4], [4, 0]]
    # A's seats: 2 catches (behind both Bs), 5 (ahead of both): 2 of 4.
    assert summary.head_to_head[0, 1] == 0.5
    assert summary.head_to_head[1, 0] == 0.5


def test_ratings_fit_bradley_terry_odds_on_the_elo_scale():
    ahead = np.array([[0.0, 75.0], [25.0, 0.0]])
    meetings = np.array([[0.0, 100.0], [100.0, 0.0]])
    ratings = fit_ratings(ahead, meetings, prior=0.0)
    assert ratings[0] - ratings[1] == pytest.approx(400 * math.log10(3))
    assert ratings.mean() == pytest.approx(1500)
    # Three players in a cycle of equal strength: all 1500.
    cycle = np.array([[0, 6, 4], [4, 0, 6], [6, 4, 0]], dtype=float)
    assert fit_ratings(cycle, np.full((3, 3), 10.0) - np.diag([10.0] * 3)) == pytest.approx(
        [1500, 1500, 1500]
    )
    # The prior keeps an unbeaten entrant finite.
    unbeaten = fit_ratings(np.array([[0.0, 10.0], [0.0, 0.0]]), meetings / 10)
    assert np.isfinite(unbeaten).all() and unbeaten[0] > unbeaten[1]


# ---------------------------------------------------------------------- schedule


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


# ---------------------------------------------------------------------- playing


class DealProbe:
    """Plays the first legal ask and notes its seat and hand at the first ask of a game."""

    def __init__(self, name, log):
        self.name = name
        self.log = log

    def reset(self, seed):
        pass

    def act(self, turn):
        view = turn.view
        if not view.asks:
            self.log.append((self.name, turn.seat, tuple(view.own_cards), view.pool_size))
        return turn.to_action(*view.legal_asks[0])


def test_duplicate_deals_replay_the_same_deal_with_the_seats_rotated():
    log: list = []
    entrants = {name: DealProbe(name, log) for name in "PQR"}
    result = run_tournament(entrants, players=3, games=6, seed=11)
    assert result.deals == 2 and result.games == 6
    assert len(log) == 6  # one probe moves first in every game
    for deal in range(2):
        games = [r for r in result.records if r.deal == deal]
        assert [r.rotation for r in games] == [0, 1, 2]
        assert len({r.deal_seed for r in games}) == 1
        # The entrants sit in every seat once: the seatings are the rotations of one order.
        assert {r.seats for r in games} == {rotated(games[0].seats, k) for k in range(3)}
        # Every seating played the very deal Game(rules, deal_seed) deals.
        dealt = Game(result.rules, seed=games[0].deal_seed)
        expected = (tuple(dealt.hand(0)), dealt.pool_size)
        logged = log[3 * deal : 3 * deal + 3]
        assert {(hand, pool) for _, _, hand, pool in logged} == {expected}
        # The same seat moves first; a different entrant holds it each time.
        assert {seat for _, seat, _, _ in logged} == {0}
        assert sorted(name for name, _, _, _ in logged) == ["P", "Q", "R"]
    seeds = {r.deal_seed for r in result.records}
    assert len(seeds) == 2


def test_the_same_seed_gives_the_same_result_with_one_or_two_workers():
    levels = list(CPU_LEVELS)
    entrants = [levels[k % len(levels)] for k in range(3)]
    one = run_tournament(entrants, players=3, games=30, seed=5, workers=1)
    two = run_tournament(entrants, players=3, games=30, seed=5, workers=2)
    assert one.records == two.records
    assert one.to_dict() == two.to_dict()
    other = run_tournament(entrants, players=3, games=30, seed=6, workers=1)
    assert other.records != one.records


def first_legal(observation, action_mask):
    return int(np.flatnonzero(action_mask)[0])


def test_a_callable_and_a_saved_sb3_model_are_entrants_like_the_cpus(tmp_path):
    from sb3_contrib import MaskablePPO

    from gofish_env import GoFishEnv

    rules = Rules(players=3)
    model = MaskablePPO(
        "MlpPolicy",
        GoFishEnv(rules=rules),
        n_steps=64,
        batch_size=32,
        n_epochs=1,
        policy_kwargs={"net_arch": [16]},
        seed=0,
        device="cpu",
    )
    path = tmp_path / "tiny.zip"
    model.save(path)
    entrants = {"cpu": LEVEL, "first": first_legal, "ppo": f"model:{path}", "object": model}
    result = run_tournament(entrants, rules=rules, games=8, seed=2)
    assert result.games == 12  # 4 line-ups of 3, one deal each, 3 seatings
    by_name = {stats.name: stats for stats in result.standings}
    assert {name: stats.seats for name, stats in by_name.items()} == dict.fromkeys(entrants, 9)
    assert by_name["ppo"].spec == f"model:{path}"
    assert by_name["first"].spec == "callable first_legal"
    assert by_name["object"].spec == "model MaskablePPO"
    assert all(not record.truncated for record in result.records)
    again = run_tournament(entrants, rules=rules, games=8, seed=2, workers=2)
    assert again.records == result.records


def test_a_mix_entrant_plays_a_member_drawn_each_game():
    result = run_tournament({"mix": f"mix:{LEVEL},{LEVEL}", "cpu": LEVEL}, players=2, games=4)
    assert [stats.seats for stats in result.standings] == [4, 4]
    assert result.standings[0].spec == f"mix:{LEVEL},{LEVEL}"


def test_an_entrant_that_asks_illegally_is_named():
    def bad(observation, action_mask):
        return int(np.flatnonzero(action_mask == 0)[0])

    with pytest.raises(ValueError, match="entrant 'bad'"):
        run_tournament({"bad": bad, "cpu": LEVEL}, players=2, games=2)


def test_bad_entrants_and_arguments_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="unknown CPU level 'grandmaster'"):
        run_tournament(["grandmaster", LEVEL], players=2)
    with pytest.raises(ValueError, match="model file not found"):
        run_tournament(["model:/nowhere/x.zip", LEVEL], players=2)
    with pytest.raises(ValueError, match="unknown CPU level 'nobody'"):
        run_tournament({"mix": f"mix:{LEVEL},nobody", "cpu": LEVEL}, players=2)
    with pytest.raises(ValueError, match="at least 2"):
        run_tournament([LEVEL], players=2)
    with pytest.raises(ValueError, match="workers"):
        run_tournament([LEVEL, LEVEL], players=2, workers=0)
    assert [e.name for e in make_entrants([LEVEL, LEVEL, first_legal])] == [
        LEVEL,
        f"{LEVEL}#2",
        "first_legal",
    ]


# ---------------------------------------------------------------------- output


def test_results_are_written_as_json_csv_and_png(tmp_path):
    result = run_tournament([LEVEL, LEVEL], players=2, games=6, seed=1)
    paths = result.write(tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert data["config"]["games"] == 6 and len(data["games"]) == 6
    assert [row["name"] for row in data["standings"]] == [s.name for s in result.ranked()]
    assert data["head_to_head"]["ahead"][0][0] is None
    with paths["standings"].open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["entrant"] for row in rows] == [s.name for s in result.ranked()]
    assert float(rows[0]["win_rate"]) == pytest.approx(result.ranked()[0].win_rate)
    with paths["games"].open() as handle:
        assert len(list(csv.DictReader(handle))) == 6
    with paths["head_to_head"].open() as handle:
        assert next(csv.reader(handle)) == ["entrant", LEVEL, f"{LEVEL}#2"]
    assert paths["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_cli_runs_end_to_end(tmp_path, capsys):
    out = tmp_path / "tour"
    result = main(
        [
            "--players", "3", "--cpus", f"{LEVEL},{LEVEL},{LEVEL}", "--games", "6",
            "--rules", "family", "--seed", "4", "--workers", "2", "--out", str(out),
            "--no-progress",
        ]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert "6 games (2 deals x 3 seatings)" in printed
    assert "Head to head" in printed and f"{LEVEL}#3" in printed
    assert result.rules == Rules.preset("family", players=3)
    for name in ("results.json", "standings.csv", "head_to_head.csv", "games.csv"):
        assert (out / name).is_file()
    assert (out / "win_rates.png").stat().st_size > 1000
    with pytest.raises(SystemExit):
        main(["--cpus", "nobody,random", "--out", ""])


def test_progress_is_reported_as_games_finish(capsys):
    seen: list[int] = []
    run_tournament([LEVEL, LEVEL], players=2, games=6, progress=seen.append)
    assert seen == [2, 4, 6]
    run_tournament([LEVEL, LEVEL], players=2, games=4, progress=True)
    assert "4/4" in capsys.readouterr().err
