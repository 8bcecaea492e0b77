"""Replays (gofish_env.replay): the file format, the engine playing a file again exactly, the
refusal of files that do not, the replays the harness saves (gofish-tournament --replays,
gofish-evaluate --replays), and the replay page (gofish-replay)."""

from __future__ import annotations

import json
import random

import pytest
from helpers import usage_error

from gofish_env import Game, Rules
from gofish_env.evaluation import Entrant, Measurement, play_deals
from gofish_env.evaluation.harness import replay_path
from gofish_env.events import Draw, EmptyHandDraw, GoFish, Hit
from gofish_env.match import Match
from gofish_env.replay import FORMAT, VERSION, Replay, ReplayError, drawn_cards, event_dict
from gofish_web import replay_page

PRESETS = [
    ("table", 4),
    ("bicycle", 3),
    ("family", 5),
    ("quick", 2),
    ("ocean", 3),
    ("pairs", 4),
    ("two_decks", 3),
    ("authors", 3),
]


def played(rules: Rules, seed: int, asks: int = 10_000) -> Game:
    game = Game(rules, seed=seed)
    chooser = random.Random(seed)
    while not game.is_over and game.num_asks < asks:
        game.ask(*chooser.choice(game.legal_asks()))
    return game


@pytest.mark.parametrize(("preset", "players"), PRESETS)
def test_a_saved_game_replays_exactly_under_every_preset(preset, players, tmp_path):
    rules = Rules.preset(preset, players=players)
    for seed in range(3):
        game = played(rules, seed)
        path = Replay.from_game(game, seed=seed, players=["a"] * players).save(tmp_path / "r.json")
        replay = Replay.load(path)
        assert replay.rules == rules and replay.seed == seed
        again = replay.game()
        assert again.events == game.events
        assert [again.hand(s) for s in range(players)] == [game.hand(s) for s in range(players)]
        assert again.winners == game.winners
        # The seed deals the same start as the exact deal the file holds.
        assert Game(rules, seed=seed).start_position() == replay.start


def test_the_file_holds_rules_start_asks_events_and_result(tmp_path):
    game = played(Rules(players=3), seed=5)
    data = json.loads(Replay.from_game(game, seed=5, meta={"source": "test"}).to_json())
    assert data["format"] == FORMAT and data["version"] == VERSION
    assert data["rules"]["players"] == 3 and data["rules"]["deal"] == "table"
    assert sorted(data["start"]) == ["catches", "first_player", "hands", "pool"]
    assert len(data["asks"]) == game.num_asks
    asker, target, wanted = data["asks"][0]
    first = game.events[1]
    assert (asker, target) == (first.asker, first.target) and isinstance(wanted, str)
    assert data["events"] == [event_dict(event) for event in game.events]
    assert data["result"]["over"] and data["result"]["winners"] == list(game.winners)
    assert data["meta"] == {"source": "test"}


def test_a_position_in_play_and_a_game_cut_off_replay_too():
    rules = Rules(players=2)
    game = Game.from_hands(
        [["7H", "7C", "QS", "2C"], ["7S", "2D", "QC", "QD"]],
        pool=["2H", "7D", "QH", "2S"],
        rules=rules,
        catches=[["3", "4", "5", "6", "8"], ["9", "10", "J", "K", "A"]],
    )
    game.ask(1, "7")
    replay = Replay.from_json(Replay.from_game(game).to_json())
    assert replay.start["catches"] == [["3", "4", "5", "6", "8"], ["9", "10", "J", "K", "A"]]
    assert replay.game().events == game.events
    cut = played(Rules(players=4), seed=2, asks=7)
    data = json.loads(Replay.from_game(cut).to_json())
    assert data["result"] == {"over": False} and len(data["asks"]) == 7
    assert Replay.from_dict(data).game().events == cut.events


def tampered(change) -> dict:
    data = json.loads(Replay.from_game(played(Rules(players=3), seed=1)).to_json())
    change(data)
    return data


def test_a_match_is_refused_and_each_of_its_games_replays():
    match = Match(Rules(players=3, match_target=15), seed=4)
    chooser = random.Random(4)
    while not match.is_over:
        match.ask(*chooser.choice(match.legal_asks()))
    with pytest.raises(TypeError, match=r"Replay.from_game\(match.games\[i\]\)"):
        Replay.from_game(match)
    assert len(match.games) == match.games_played > 1
    for game in match.games:
        replay = Replay.from_json(Replay.from_game(game).to_json())
        assert replay.game().events == game.events


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["asks"][3].__setitem__(2, "NOPE"), r"asks\[3\]: the engine refuses it"),
        (lambda d: d["asks"][0].__setitem__(0, 2), r"asks\[0\]: recorded as seat 2's ask"),
        (lambda d: d["events"][4].__setitem__("kind", "hit"), r"events\[4\]: the engine gives"),
        (lambda d: d["events"].append(d["events"][-1]), "the file records"),
        (lambda d: d["start"]["hands"][0].__setitem__(0, "ZZ"), "start: hand 0: not a card"),
        (lambda d: d["start"]["pool"].pop(), "start: hands, pool and catches must hold"),
    ],
    ids=["refused ask", "wrong asker", "changed event", "extra event", "bad card", "lost card"],
)
def test_a_file_that_does_not_replay_as_recorded_is_refused(change, message):
    replay = Replay.from_dict(tampered(change))
    with pytest.raises(ReplayError, match=message):
        replay.game()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.__setitem__("format", "chess"), "format: not a Go Fish replay"),
        (lambda d: d.__setitem__("version", 9), "version: got 9; allowed: 1"),
        (lambda d: d.__setitem__("version", True), "version: got True; allowed: 1"),
        (lambda d: d.__setitem__("version", 1.0), "version: got 1.0; allowed: 1"),
        (lambda d: d["rules"].__setitem__("players", 9), "rules: players: got 9"),
        (lambda d: d["rules"].__setitem__("colour", "red"), "rules: .*colour"),
        (lambda d: d.pop("asks"), "asks: missing"),
        (lambda d: d["asks"].__setitem__(0, [0, "1", "Q"]), r"asks\[0\]: got \[0, '1', 'Q'\]"),
        (lambda d: d["start"].pop("pool"), "start: missing 'pool'"),
        (lambda d: d.__setitem__("seed", "x"), "seed: got 'x'"),
        (lambda d: d.__setitem__("players", ["you"]), "players: got 1 seat labels for 3 seats"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_field(change, message):
    with pytest.raises(ReplayError, match=message):
        Replay.from_dict(tampered(change))


def test_files_that_are_not_replays_are_refused(tmp_path):
    with pytest.raises(ReplayError, match="not JSON"):
        Replay.from_json("{")
    with pytest.raises(ReplayError, match="cannot read"):
        Replay.load(tmp_path / "missing.json")
    with pytest.raises(ReplayError, match="format"):
        Replay.from_json("[1, 2]")
    with pytest.raises(ReplayError, match="not JSON this reads: nested too deeply"):
        Replay.from_json("[" * 100_000 + "]" * 100_000)
    deep = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ReplayError, match="not JSON this reads: nested too deeply"):
        Replay.from_dict(tampered(lambda d: d["rules"].__setitem__("players", deep)))


def test_recorded_events_nested_too_deeply_are_refused_not_a_recursion_error():
    data = tampered(lambda d: None)
    deep = []
    for _ in range(100_000):
        deep = [deep]
    data["events"][4] = {"kind": "hit", "nested": deep}
    replay = Replay.from_dict(data)
    with pytest.raises(ReplayError, match=r"events(\[4\])?: "):
        replay.game()


def test_drawn_cards_tells_each_draw_its_cards():
    events = [GoFish(0, 1, 5), Draw(0, None), Hit(1, 0, 5, 1), EmptyHandDraw(0, 2)]
    assert drawn_cards(["2H", "9D", "QH", "KC"], events) == [
        (1, 0, ["2H"]),
        (3, 0, ["9D", "QH"]),
    ]


def test_the_harness_saves_every_game_as_a_replay(tmp_path):
    rules = Rules(players=3)
    entrants = [Entrant("easy", "easy"), Entrant("hard", "hard")]
    measurement = Measurement(entrants, rules, 7, [(0, 1, 1)], max_asks=60, replays=tmp_path)
    records = play_deals(measurement, 2)
    assert len(list(tmp_path.glob("*.json"))) == len(records) == 6
    for record in records:
        replay = Replay.load(replay_path(tmp_path, record.deal, record.rotation))
        game = replay.game()
        assert replay.seed == record.deal_seed
        assert replay.players == [entrants[e].name for e in record.seats]
        assert tuple(len(game.catches(s)) for s in range(3)) == record.catches
        assert game.leaders() == record.winners and game.num_asks == record.asks
        assert replay.meta["cut_off"] == record.truncated
        assert (replay.meta["deal"], replay.meta["rotation"]) == (record.deal, record.rotation)


def test_gofish_tournament_saves_replays(tmp_path, capsys):
    from gofish_baselines.tournament import main

    folder = tmp_path / "replays"
    argv = ["--players", "2", "--cpus", "easy,hard", "--games", "4", "--out", ""]
    result = main([*argv, "--no-progress", "--replays", str(folder)])
    assert f"Saved {len(result.records)} replays in {folder}" in capsys.readouterr().out
    files = sorted(folder.glob("*.json"))
    assert len(files) == len(result.records)
    records = sorted(result.records, key=lambda r: (r.deal, r.rotation))
    for path, record in zip(files, records, strict=True):
        assert Replay.load(path).game().leaders() == record.winners


def test_a_replay_folder_keeps_its_older_files_and_the_command_says_so(tmp_path, capsys):
    # Files of the names this run writes are replaced; the others (an earlier run's, of
    # more deals) are left, and counted in the last line rather than passed over.
    from gofish_baselines.tournament import main

    folder = tmp_path / "replays"
    argv = ["--players", "2", "--cpus", "easy,hard", "--out", "", "--no-progress"]
    main([*argv, "--games", "8", "--replays", str(folder)])
    capsys.readouterr()
    (folder / "deal000000-rotation0.json").write_text("stale")
    result = main([*argv, "--games", "4", "--replays", str(folder)])
    assert capsys.readouterr().out.rstrip("\n").splitlines()[-1] == (
        f"Saved 4 replays in {folder} (the folder also holds 4 older replay files, not of this run)"
    )
    assert Replay.load(folder / "deal000000-rotation0.json").game().leaders() == (
        result.records[0].winners
    )  # replaced
    assert len(list(folder.glob("*.json"))) == 8  # deals 2 and 3 of the earlier run stay


def test_gofish_tournament_refuses_a_replay_folder_it_cannot_write(tmp_path, capsys):
    from gofish_baselines.tournament import main

    blocker = tmp_path / "file"
    blocker.write_text("x")
    error = usage_error(capsys, main, ["--games", "1", "--out", "", "--replays", str(blocker)])
    assert "--replays" in error and "is a file, not a folder" in error


@pytest.mark.torch  # the saved agents
def test_gofish_evaluate_saves_replays_by_cpu_level(agents, tmp_path):
    from gofish_training.evaluate import main

    folder = tmp_path / "replays"
    main([agents["recorded"], "--cpus", "random,easy", "--deals", "1", "--replays", str(folder)])
    for level in ("random", "easy"):
        files = sorted((folder / level).glob("*.json"))
        assert len(files) == 4  # one deal, the agent in each of the 4 seats
        for path in files:
            replay = Replay.load(path)
            replay.game()
            assert sorted(set(replay.players)) == ["agent", level]


# ----------------------------------------------------------------------------- the page


def test_the_replay_page_holds_every_step_and_the_log(tmp_path):
    game = played(Rules(players=3), seed=3)
    replay = Replay.from_game(game, seed=3, players=["you", "hard", "easy"])
    data = replay_page.page_data(replay)
    assert len(data["steps"]) == game.num_asks + 1
    assert [entry["text"] for entry in data["log"]] == [str(event) for event in game.events]
    assert data["steps"][-1]["log_end"] == len(game.events)
    middle = game.num_asks // 2
    then = played(Rules(players=3), seed=3, asks=middle)  # the same game, stopped halfway
    scene = data["steps"][middle]["scene"]
    assert [list(seat["cards"]) for seat in scene["seats"]] == [then.hand(s) for s in range(3)]
    assert scene["pool_size"] == then.pool_size and scene["current_player"] == then.current_player
    assert data["steps"][middle]["log_end"] == then.num_events
    # Each private draw carries its cards; the shown ones need none.
    drawn = [entry for entry in data["log"] if entry["kind"] == "draw" and "cards" in entry]
    assert drawn and all(len(entry["cards"]) == 1 for entry in drawn)
    assert data["labels"] == ["you", "hard", "easy"]


def test_the_replay_page_is_self_contained(tmp_path):
    game = played(Rules(players=4), seed=2)
    replay = Replay.from_game(game, players=["</script><b>x", "b", "c", "d"])
    page = replay_page.render_page(replay)
    assert page.startswith("<!doctype html>")
    for outside in ("src=", 'href="http', "@import", "fetch("):
        assert outside not in page
    assert "</script><b>x" not in page  # a label cannot end the data early
    start = page.index('id="gofish-replay-data">') + len('id="gofish-replay-data">')
    data = json.loads(page[start : page.index("</script>", start)])
    assert data["labels"][0] == "</script><b>x"


def test_gofish_replay_writes_the_page(tmp_path, capsys):
    game = played(Rules(players=3), seed=9)
    path = Replay.from_game(game).save(tmp_path / "game.json")
    written = replay_page.main([str(path)])
    assert written == tmp_path / "game.html" and written.exists()
    assert f"Wrote {written} ({game.num_asks} asks)" in capsys.readouterr().out
    other = replay_page.main([str(path), "-o", str(tmp_path / "out" / "page.html")])
    assert other.exists()


def test_gofish_replay_refuses_a_bad_file(tmp_path, capsys):
    data = json.loads(Replay.from_game(played(Rules(players=3), seed=9)).to_json())
    data["asks"][2][2] = "NOPE"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    error = usage_error(capsys, replay_page.main, [str(path)])
    assert "bad.json: asks[2]: the engine refuses it" in error
    assert not (tmp_path / "bad.html").exists()
    error = usage_error(capsys, replay_page.main, [str(tmp_path / "none.json")])
    assert "cannot read" in error
    error = usage_error(capsys, replay_page.main, [str(path), "-o", str(path)])
    assert "--output" in error
