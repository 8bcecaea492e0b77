"""The harness (``gofish_env.evaluation.harness``): duplicate deals replayed with the seats
rotated, the same records with one or two worker processes, every kind of entrant (CPUs,
callables, saved and loaded SB3 models, mixes), and an illegal ask named by its entrant.
They are played through ``run_tournament``, the thinnest report on top of the harness.
``played_decisions`` gives benchmarks a played game's decisions one at a time."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import first_legal

from gofish_baselines.tournament import run_tournament
from gofish_env import Game, Rules
from gofish_env.cpus import CPU_LEVELS, make_cpu
from gofish_env.evaluation.positions import played_decisions
from gofish_env.evaluation.schedule import rotated

LEVEL = next(iter(CPU_LEVELS))  # a CPU level that exists ("random" at least)


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
    # The Python engine: compiled levels would play in one batch, whatever the workers.
    one = run_tournament(entrants, players=3, games=30, seed=5, workers=1, engine="python")
    two = run_tournament(entrants, players=3, games=30, seed=5, workers=2, engine="python")
    assert one.records == two.records
    assert one.to_dict() == two.to_dict()
    other = run_tournament(entrants, players=3, games=30, seed=6, workers=1, engine="python")
    assert other.records != one.records


@pytest.mark.torch
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


class SeatsSeen:
    """A CPU object that notes, per game, the seats it decided for."""

    name = "seats-seen"

    def __init__(self):
        self.inner = make_cpu(LEVEL)
        self.seats: set[int] = set()
        self.shared_games = 0

    def reset(self, seed=None):
        self.shared_games += len(self.seats) > 1
        self.seats = set()
        self.inner.reset(seed)

    def choose(self, view):
        self.seats.add(view.seat)
        return self.inner.choose(view)


def test_one_object_entered_under_two_names_plays_each_seat_with_its_own_copy():
    seen = SeatsSeen()
    run_tournament({"a": seen, "b": seen, "c": LEVEL}, players=3, games=6, seed=1)
    assert seen.shared_games == 0 and seen.seats  # it played, for one seat a game


def test_match_play_is_refused_since_duplicate_deals_are_single_games():
    from gofish_env.evaluation import Measurement, make_entrants

    with pytest.raises(ValueError, match=r"^rules: match play \(match_target\) is not supported"):
        Measurement(make_entrants([LEVEL, LEVEL]), Rules(players=2, match_target=30), 0, [(0, 1)])


@pytest.mark.parametrize("engine", ["vector", "python"])
@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [
        ("max_asks", 0, "an integer >= 1"),
        ("max_asks", -3, "an integer >= 1"),
        ("max_asks", 2.5, "an integer >= 1"),
        ("max_asks", True, "an integer >= 1"),
        ("seed", 1.5, "an integer"),
        ("seed", True, "an integer"),
        ("seed", "7", "an integer"),
    ],
)
def test_a_bad_ask_limit_or_seed_is_refused_before_any_game_or_kept_file(
    tmp_path, engine, field, value, allowed
):
    """From Python no command checks them: max_asks=0 played games of no ask that every
    seat won (the vector engine), or was refused only once the kept file was set up (the
    Python engine); seed=1.5 was cut to 1."""
    from gofish_env.evaluation import Measurement, make_entrants

    arguments = {"max_asks": 100, "seed": 0, field: value}
    entrants = make_entrants(["easy", "hard"])
    with pytest.raises(ValueError) as refused:
        Measurement(entrants, Rules(players=2), arguments["seed"], [(0, 1)],
                    arguments["max_asks"], engine=engine)  # fmt: skip
    assert str(refused.value) == f"{field}: got {value!r}; allowed: {allowed}"
    keep = tmp_path / "out" / "played.jsonl"
    with pytest.raises(ValueError, match=rf"^{field}: got "):
        run_tournament(["easy", "hard"], players=2, games=4, engine=engine, keep=keep,
                       **arguments)  # fmt: skip
    assert not keep.parent.exists()


def test_an_entrant_that_asks_illegally_is_named():
    def bad(observation, action_mask):
        return int(np.flatnonzero(action_mask == 0)[0])

    with pytest.raises(ValueError, match="entrant 'bad'"):
        run_tournament({"bad": bad, "cpu": LEVEL}, players=2, games=2)


def test_played_decisions_yield_each_seat_to_move_and_its_cpus_ask_before_it_is_made():
    rules = Rules(players=3)
    cpus = [make_cpu("hard", 40 + seat) for seat in range(3)]
    replay = Game(rules, seed=8)
    seen = 0
    for game, view, ask in played_decisions(rules, 8, cpus):
        assert view.seat == game.current_player == replay.current_player
        assert game.num_events == replay.num_events  # the ask is not made yet
        assert ask in view.legal_asks
        replay.ask(*ask)
        seen += 1
    assert game.is_over and replay.is_over and seen == game.num_asks
    assert [game.catches(seat) for seat in range(3)] == [replay.catches(seat) for seat in range(3)]
