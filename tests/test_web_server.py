"""The web table's server (gofish-web) through its HTTP API, served by uvicorn on 127.0.0.1:
whole games against the CPUs and watched, the engine's refusals, bad requests answered 4xx
with a reason, many tables at once, replays, and no hidden card in what a seat's page is
sent (counterfactual deals, as in tests/test_no_leak.py)."""

from __future__ import annotations

import base64
import copy
import json
import pickle
import random
import signal
import subprocess
import sys
import zipfile

import httpx
import pytest
from helpers import ctrl_c_reaches_it
from test_no_leak import alternative_worlds, make_scenario
from web_helpers import check_payloads, play_through_api

import gofish_web.server
from gofish_env import Game, IllegalAsk, Rules
from gofish_env.aec_env import DEFAULT_MAX_ASKS
from gofish_env.cpus import CPU_LEVELS
from gofish_env.replay import Replay
from gofish_web.server import MAX_BODY_BYTES, create_app, running
from gofish_web.tables import HUMAN, TableRegistry, WebTable

pytestmark = pytest.mark.web


@pytest.fixture
def server(tmp_path):
    """(client, registry, replay folder) of a fresh server."""
    registry = TableRegistry(limit=50, replays=tmp_path / "replays")
    app = create_app(registry, replays=tmp_path / "replays")
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client, registry, tmp_path / "replays"


def new_table(client, **body) -> dict:
    answer = client.post("/api/tables", json=body)
    assert answer.status_code == 201, answer.text
    return answer.json()


@pytest.mark.parametrize(
    ("players", "rules", "cpus"),
    [
        (4, "table", ["hard", "easy", "expert"]),
        (2, "authors", ["normal"]),
        (6, "pairs", ["random"] * 5),
    ],
)
def test_a_person_plays_a_whole_game_against_the_cpus(server, players, rules, cpus):
    client, registry, folder = server
    table = new_table(client, players=players, rules=rules, seats=[HUMAN, *cpus], seed=11)
    assert table["human"] == 0
    payloads = play_through_api(client, table)
    assert payloads[-1]["over"] and payloads[-1]["scene"]["status"].startswith("Game over")
    answer = client.get(f"/api/tables/{table['id']}/replay", params={"token": table["token"]})
    assert answer.status_code == 200
    replay = Replay.from_dict(answer.json())
    game = replay.game()  # the engine replays it exactly
    assert replay.seed == 11 and replay.rules == Rules.preset(rules, players=players)
    assert game.events == registry.get(table["id"]).game.events
    assert check_payloads(payloads, replay, seat=0) == len(payloads)
    # A person's draws are noted for that person (authors deals the whole deck: no draws).
    notes = [entry["note"] for entry in payloads[-1]["log"] if "note" in entry]
    assert all(note.startswith("you drew ") for note in notes)
    assert len(notes) == sum(
        1
        for entry in payloads[-1]["log"]
        if entry["text"] == "Seat 0 draws a card from the pool."
        or entry["text"].startswith("Seat 0 has an empty hand and draws")
    )
    # Every finished game is saved in the replay folder.
    assert Replay.load(folder / f"web-{table['id']}.json").game().events == game.events


def test_a_watched_table_shows_any_seat_or_every_hand(server):
    client, _, _ = server
    table = new_table(client, players=3, seats=["easy", "hard", "expert"], seed=5)
    assert table["human"] is None
    payloads = play_through_api(client, table, view="table")
    replay = Replay.from_dict(client.get(f"/api/tables/{table['id']}/replay").json())
    assert check_payloads(payloads, replay, seat=None) == len(payloads)
    for seat in range(3):
        answer = client.get(f"/api/tables/{table['id']}", params={"view": seat})
        assert check_payloads([answer.json()], replay, seat=seat) == 1


def test_an_illegal_click_gets_the_engines_refusal(server):
    client, registry, _ = server
    table = new_table(client, players=3, seats=[HUMAN, "hard", "hard"], seed=3)
    game = registry.get(table["id"]).game
    rank = game.hand(0)[0][:-1]
    before = client.get(f"/api/tables/{table['id']}", params={"token": table["token"]}).json()
    for target, wanted in [(0, rank), (1, "NOT HELD"), (7, rank)]:
        if wanted == "NOT HELD":
            held = {card[:-1] for card in game.hand(0)}
            wanted = next(
                r for r in ("2", "3", "4", "5", "6", "7", "8", "9", "10") if r not in held
            )
        with pytest.raises(IllegalAsk) as refusal:
            copy.deepcopy(game).ask(target, wanted)
        body = {"token": table["token"], "target": target, "wanted": wanted}
        answer = client.post(f"/api/tables/{table['id']}/ask", json=body)
        assert answer.status_code == 409
        assert answer.json() == {"detail": str(refusal.value)}
    after = client.get(f"/api/tables/{table['id']}", params={"token": table["token"]}).json()
    assert after == before  # refused asks changed nothing


def authors_seed_holding_an_ace_but_not_as() -> int:
    """A seed of the 3-player authors deal where seat 0 holds an ace but not the AS: there
    ``aces`` read as a card (the AS) was an ask the engine played."""
    return next(
        seed
        for seed in range(100)
        if (hand := Game(Rules.preset("authors", players=3), seed=seed).hand(0))
        and any(card.startswith("A") for card in hand)
        and "AS" not in hand
    )


@pytest.mark.parametrize(
    ("rules", "wanted", "reason"),
    [
        ("authors", "aces", "not a card: 'aces' (cards look like 7H, 10S, QD or AC; suits are"),
        ("authors", "JK", "not a card: 'JK' (there are no jokers in this game)"),
        ("table", "JK", "not a rank: 'JK' (there are no jokers in this game)"),
        ("table", "11", "not a rank: '11' (ranks are 2, 3, 4, 5, 6, 7, 8, 9, 10, J, Q, K, A)"),
    ],
)
def test_a_rank_word_under_exact_card_asks_or_a_joker_without_jokers_is_refused(
    server, rules, wanted, reason
):
    client, _, _ = server
    seed = authors_seed_holding_an_ace_but_not_as()
    table = new_table(client, players=3, rules=rules, seats=[HUMAN, "hard", "hard"], seed=seed)
    before = client.get(f"/api/tables/{table['id']}", params={"token": table["token"]}).json()
    body = {"token": table["token"], "target": 1, "wanted": wanted}
    answer = client.post(f"/api/tables/{table['id']}/ask", json=body)
    assert answer.status_code == 409, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith(reason)
    assert "JK for a joker" not in detail and "or JK" not in detail
    assert "rank indices" not in detail and "card indices" not in detail
    if rules == "authors" and wanted != "JK":
        assert detail.endswith("; these rules ask for one exact card")
    after = client.get(f"/api/tables/{table['id']}", params={"token": table["token"]}).json()
    assert after == before  # nothing was played


def bad_requests(table: dict, watched: dict) -> list:
    url = f"/api/tables/{table['id']}"
    token = table["token"]
    return [
        ("get", "/api/tables/nope", None, None, 404, "no table 'nope'"),
        ("get", url, {"token": "wrong"}, None, 403, "token"),
        ("get", url, None, None, 403, "token"),
        ("get", url, {"token": token, "view": "2"}, None, 403, "view: 2 is not shown"),
        ("get", url, {"token": token, "view": "table"}, None, 403, "view: 'table'"),
        ("get", url, {"token": token, "view": "x"}, None, 422, "view: got 'x'"),
        ("post", "/api/tables", None, {"players": 9}, 422, "less than or equal to 6"),
        ("post", "/api/tables", None, {"colour": "red"}, 422, "Extra inputs"),
        ("post", "/api/tables", None, {"players": 4, "seats": [HUMAN]}, 422, "1 given for 4"),
        ("post", "/api/tables", None, {"players": 3, "seats": []}, 422, "0 given for 3"),
        (
            "post",
            "/api/tables",
            None,
            {"players": 5, "rules": "quick"},
            422,
            "players: the 'quick'",
        ),
        ("post", "/api/tables", None, {"players": True}, 422, "valid integer"),
        ("post", "/api/tables", None, {"seed": True}, 422, "valid integer"),
        ("post", "/api/tables", None, {"seed": "1.5"}, 422, "valid integer"),
        ("post", "/api/tables", None, {"seed": "\u00b2"}, 422, "valid integer"),
        ("post", "/api/tables", None, {"seed": str(2**63)}, 422, "less than or equal to"),
        ("get", url, {"token": token, "view": "\u00b2"}, None, 422, "view: got"),
        ("get", url, {"token": token, "view": "9" * 5000}, None, 422, "view: got"),
        ("post", "/api/tables", None, {"rules": "chess"}, 422, "unknown preset 'chess'"),
        ("post", "/api/tables", None, {"players": 2, "seats": [HUMAN, HUMAN]}, 422, "at most one"),
        ("post", "/api/tables", None, {"players": 2, "seats": [HUMAN, "boss"]}, 422, "'boss'"),
        (
            "post",
            "/api/tables",
            None,
            {"players": 2, "seats": [HUMAN, "model:/no.zip"]},
            422,
            "/no.zip",
        ),
        ("post", "/api/tables", None, {"seed": -1}, 422, "greater than or equal to 0"),
        ("post", f"{url}/ask", None, {"token": token, "target": 1}, 422, "wanted"),
        (
            "post",
            f"{url}/ask",
            None,
            {"token": token, "target": "one", "wanted": "Q"},
            422,
            "target",
        ),
        ("post", f"{url}/ask", None, {"token": "x", "target": 1, "wanted": "Q"}, 403, "token"),
        (
            "post",
            f"{url}/ask",
            None,
            {"token": token, "target": True, "wanted": "Q"},
            422,
            "target",
        ),
        ("post", f"{url}/advance", None, {"token": token}, 409, "it is your turn"),
        ("get", f"{url}/replay", {"token": token}, None, 409, "once the game is over"),
        (
            "post",
            f"/api/tables/{watched['id']}/ask",
            None,
            {"token": "", "target": 1, "wanted": "2"},
            409,
            "watched",
        ),
        ("post", "/api/replays", None, {"format": "chess"}, 422, "replay: format"),
        ("get", "/replays/missing.json", None, None, 404, "no replay 'missing.json'"),
        ("get", "/replays/..%2F..%2Fpyproject.toml", None, None, 404, "Not Found"),
    ]


def test_a_bad_request_gets_a_4xx_answer_with_a_reason(server):
    client, _, _ = server
    table = new_table(client, players=3, seats=[HUMAN, "hard", "hard"], seed=1)
    watched = new_table(client, players=2, seats=["easy", "easy"], seed=1)
    for method, url, params, body, status, reason in bad_requests(table, watched):
        answer = client.request(method.upper(), url, params=params, json=body)
        assert answer.status_code == status, (url, body, answer.text)
        assert reason in answer.text, (url, body, answer.text)


@pytest.mark.parametrize("field", ["rules", "wanted", "token", "seats"])
def test_a_huge_value_is_refused_without_being_sent_back(server, field):
    client, _, _ = server
    table = new_table(client, players=3, seats=[HUMAN, "hard", "hard"], seed=1)
    huge = "x" * 1_000_000
    if field in ("rules", "seats"):
        url, body = "/api/tables", {"players": 3, field: huge if field == "rules" else [huge] * 3}
    else:
        url = f"/api/tables/{table['id']}/ask"
        body = {"token": table["token"], "target": 1, "wanted": "Q", field: huge}
    answer = client.post(url, json=body)
    assert answer.status_code == 422
    assert len(answer.content) < 1_000, answer.text[:200]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"players": 3', "JSON decode error"),
        (b"[" * 5000 + b"]" * 5000, "JSON decode error: nested too deeply"),
        (b'{"seed": ' + b"9" * 5000 + b"}", "JSON decode error: Exceeds the limit"),
        (b'{"rules": "\xff"}', "JSON decode error: not UTF-8"),
    ],
    ids=["cut", "nested", "5000-digits", "not-utf-8"],
)
def test_a_body_that_is_no_json_is_refused_422(server, body, reason):
    """As the docs say: malformed input is a 422, a list of ``{type, loc, msg}``."""
    client, _, _ = server
    headers = {"content-type": "application/json"}
    for url in ("/api/tables", "/api/replays"):
        answer = client.post(url, content=body, headers=headers)
        assert answer.status_code == 422, answer.text
        (detail,) = answer.json()["detail"]
        assert detail["type"] == "json_invalid" and detail["msg"].startswith(reason)


def test_head_is_answered_as_get(server):
    client, _, _ = server
    for url in ("/", "/api/options", "/api/replays", "/static/app.js", "/api/openapi.json"):
        got, head = client.get(url), client.head(url)
        assert head.status_code == got.status_code == 200, url
        assert head.content == b""
        assert head.headers["content-length"] == str(len(got.content))
    assert client.head("/api/tables/nope").status_code == 404


def test_a_replay_that_cannot_be_saved_loses_neither_the_move_nor_the_game(tmp_path, caplog):
    """The replay folder gone when the game ends: the last move is answered as any other,
    with the reason the replay was not saved (logged too); the replay can be downloaded."""
    folder = tmp_path / "replays"
    folder.write_text("not a folder")
    registry = TableRegistry(replays=folder)
    app = create_app(registry, replays=folder)
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        table = new_table(client, players=2, seats=["easy", "easy"], seed=3)
        payloads = play_through_api(client, table)  # every answer a 200
        assert payloads[-1]["over"]
        assert not any(payload["save_error"] for payload in payloads[:-1])
        error = payloads[-1]["save_error"]
        assert error.startswith(f"the replay was not saved as {folder / 'web-'}")
        answer = client.get(f"/api/tables/{table['id']}/replay")
        assert answer.status_code == 200
        assert Replay.from_dict(answer.json()).game().is_over
    assert [record.getMessage() for record in caplog.records if record.levelname == "ERROR"] == [
        f"gofish-web table {table['id']}: {error}"
    ]


def test_an_ask_out_of_turn_is_refused(server):
    client, _, _ = server
    table = new_table(client, players=3, seats=["hard", HUMAN, "hard"], seed=2)
    token = table["token"]
    payload = client.get(f"/api/tables/{table['id']}", params={"token": token}).json()
    assert payload["waiting"] == "cpu" and payload["legal"] == []
    body = {"token": token, "target": 0, "wanted": "2"}
    answer = client.post(f"/api/tables/{table['id']}/ask", json=body)
    assert answer.status_code == 409
    assert answer.json()["detail"] == "it is not your turn: hard CPU is to ask"


def test_an_ask_from_a_page_behind_the_table_is_refused_and_changes_nothing(server):
    """``seen`` (the log entries the page showed): another tab played since, so an ask made
    on the old hand is refused, even a legal one."""
    client, registry, _ = server
    table = new_table(client, players=3, seats=[HUMAN, "hard", "hard"], seed=3)
    url = f"/api/tables/{table['id']}"
    game = registry.get(table["id"]).game
    shown = client.get(url, params={"token": table["token"]}).json()
    target, wanted = shown["legal"][0]
    body = {"token": table["token"], "target": target, "wanted": wanted}
    stale = {**body, "seen": len(shown["log"]) - 1}
    answer = client.post(f"{url}/ask", json=stale)
    assert answer.status_code == 409
    assert answer.json()["detail"].startswith("the game has moved on since this page last showed")
    assert client.get(url, params={"token": table["token"]}).json() == shown
    assert client.post(f"{url}/ask", json={**body, "seen": len(game.events)}).status_code == 200


def test_many_tables_each_keep_their_own_game(server):
    client, _, _ = server
    tables = [
        {**new_table(client, players=3, seats=[HUMAN, "easy", "hard"], seed=s), "seed": s}
        for s in range(6)
    ]
    tables += [
        {**new_table(client, players=4, seats=["easy"] * 4, seed=s), "seed": s} for s in range(6)
    ]
    received = {table["id"]: [] for table in tables}
    rng = random.Random(0)
    live = list(tables)
    while live:  # one move at a time, at tables taken in turn
        for table in list(live):
            token = table["token"]
            payload = client.get(f"/api/tables/{table['id']}", params={"token": token}).json()
            received[table["id"]].append(payload)
            if payload["over"]:
                live.remove(table)
            elif payload["waiting"] == "you":
                target, wanted = rng.choice(payload["legal"])
                body = {"token": token, "target": target, "wanted": wanted}
                assert client.post(f"/api/tables/{table['id']}/ask", json=body).status_code == 200
            else:
                answer = client.post(f"/api/tables/{table['id']}/advance", json={"token": token})
                assert answer.status_code == 200
    for table in tables:
        answer = client.get(f"/api/tables/{table['id']}/replay", params={"token": table["token"]})
        replay = Replay.from_dict(answer.json())
        replay.game()
        check_payloads(received[table["id"]], replay, table["human"])
    seeds = {
        Replay.from_dict(
            client.get(f"/api/tables/{t['id']}/replay", params={"token": t["token"]}).json()
        ).seed
        for t in tables
    }
    assert seeds == set(range(6))


def test_a_seed_may_be_sent_as_its_digits(server):
    """The page sends the seed's digits: a JavaScript number rounds above 2**53."""
    client, registry, _ = server
    for seed in (0, 2**53 + 1, 2**63 - 1):
        table = new_table(client, players=2, seats=["easy", "easy"], seed=str(seed))
        assert registry.get(table["id"]).seed == seed


def test_the_oldest_tables_are_dropped_past_the_limit():
    registry = TableRegistry(limit=3)
    tables = [registry.create(Rules(players=2), [HUMAN, "easy"], seed) for seed in range(4)]
    assert len(registry) == 3
    registry.get(tables[1].id)  # used: kept
    registry.create(Rules(players=2), [HUMAN, "easy"], 9)
    with pytest.raises(Exception, match="no table"):
        registry.get(tables[0].id)
    with pytest.raises(Exception, match="no table"):
        registry.get(tables[2].id)
    assert registry.get(tables[1].id) is tables[1]


def test_replays_are_listed_and_opened(server):
    client, _, folder = server
    table = new_table(client, players=2, seats=["easy", "hard"], seed=4)
    play_through_api(client, table)
    listed = client.get("/api/replays").json()
    assert {"name": f"web-{table['id']}.json", "url": f"/replays/web-{table['id']}.json"} in listed
    page = client.get(f"/replays/web-{table['id']}.json")
    assert page.status_code == 200 and 'id="gofish-replay-data"' in page.text
    data = json.loads((folder / f"web-{table['id']}.json").read_text())
    opened = client.post("/api/replays", json=data)
    assert opened.status_code == 201
    assert client.get(opened.json()["url"]).status_code == 200
    data["asks"][0][2] = "NOPE"
    refused = client.post("/api/replays", json=data)
    assert refused.status_code == 422 and "asks[0]: the engine refuses it" in refused.text
    page = client.get(f"/tables/{table['id']}/replay.html")
    assert page.status_code == 200 and "<!doctype html>" in page.text


def test_a_game_is_cut_off_at_the_ask_limit(tmp_path):
    """Saved agents play deterministically and can repeat the same asks for ever: a game
    still on after ``max_asks`` asks is cut off there (as in the envs and the harness),
    scored as it stands, saved, and marked so in its payload and its replay."""
    assert TableRegistry().max_asks == WebTable(Rules(players=2), ["easy"] * 2).max_asks
    assert TableRegistry().max_asks == DEFAULT_MAX_ASKS
    folder = tmp_path / "replays"
    registry = TableRegistry(replays=folder, max_asks=6)
    app = create_app(registry, replays=folder)
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        for seats in (["easy"] * 3, [HUMAN, "easy"]):
            table = new_table(client, players=len(seats), seats=seats, seed=1)
            payloads = play_through_api(client, table)
            assert not any(payload["truncated"] for payload in payloads[:-1])
            game = registry.get(table["id"]).game
            assert game.num_asks == 6 and not game.is_over
            last = payloads[-1]
            assert last["over"] and last["truncated"]
            assert last["waiting"] is None and last["legal"] == []
            assert last["scene"]["current_player"] is None
            status = last["scene"]["status"]
            assert status.startswith("Cut off after 6 asks (the limit); as it stands, ")
            token = table["token"]
            moves = [("advance", {"token": token})]
            if HUMAN in seats:
                moves.append(("ask", {"token": token, "target": 1, "wanted": "2"}))
            for move, body in moves:
                answer = client.post(f"/api/tables/{table['id']}/{move}", json=body)
                assert answer.status_code == 409 and "cut off after 6 asks" in answer.text
            replay = Replay.from_dict(
                client.get(f"/api/tables/{table['id']}/replay", params={"token": token}).json()
            )
            assert replay.meta["cut_off"] is True and replay.meta["max_asks"] == 6
            assert replay.meta["leaders"] == list(game.leaders())
            assert Replay.load(folder / f"web-{table['id']}.json").to_dict() == replay.to_dict()
            page = client.get(f"/replays/web-{table['id']}.json").text
            assert "Cut off after 6 asks (the ask limit), before the end of the game" in page
    assert registry.count_unfinished() == 0  # saved as it ended, not as unfinished


def test_a_body_over_the_limit_is_refused_413(server):
    """Bodies are bounded (``MAX_BODY_BYTES``): by their Content-Length, or as they arrive
    when they come in chunks."""
    client, _, _ = server
    big = json.dumps({"format": "gofish-replay", "meta": {"x": "x" * MAX_BODY_BYTES}}).encode()

    def chunks():
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536]

    headers = {"content-type": "application/json"}
    for url in ("/api/replays", "/api/tables"):
        for content in (big, chunks()):
            answer = client.post(url, content=content, headers=headers)
            assert answer.status_code == 413, answer.text[:200]
            assert answer.json() == {
                "detail": f"request body: larger than {MAX_BODY_BYTES} bytes, the most this "
                "server takes"
            }
    assert client.post("/api/tables", json={"players": 2}).status_code == 201


def test_replays_opened_are_kept_within_a_memory_bound(server, monkeypatch):
    """Replays opened through the page are kept (as their JSON) up to ``MAX_UPLOAD_BYTES``
    in all, the oldest dropped first."""
    client, _, _ = server
    game = Game(Rules(players=2), seed=1)
    while not game.is_over:
        game.ask(*game.legal_asks()[0])
    data = Replay.from_game(game, 1).to_dict()
    size = len(Replay.from_dict(data).to_json().encode())
    monkeypatch.setattr(gofish_web.server, "MAX_UPLOAD_BYTES", 3 * size)
    urls = []
    for _ in range(5):
        answer = client.post("/api/replays", json=data)
        assert answer.status_code == 201
        urls.append(answer.json()["url"])
    listed = [item["url"] for item in client.get("/api/replays").json()]
    assert listed == urls[:1:-1]  # the last three, newest first
    assert [client.get(url).status_code for url in urls] == [404, 404, 200, 200, 200]


DEEP = b"[" * 100_000 + b"]" * 100_000  # nested past what Python's JSON reader recurses


def test_an_odd_file_in_the_replay_folder_is_refused_or_left_out(server):
    """A file nested too deeply is a 422 (it was a RecursionError, 500); a dangling link in
    the folder is left out of the list (its stat() made the whole list a 500)."""
    client, _, folder = server
    folder.mkdir()
    (folder / "deep.json").write_bytes(DEEP)
    (folder / "dangling.json").symlink_to(folder / "gone.json")
    answer = client.get("/replays/deep.json")
    assert answer.status_code == 422
    assert answer.json() == {"detail": "replay: not JSON this reads: nested too deeply"}
    listed = client.get("/api/replays")
    assert listed.status_code == 200
    assert [item["name"] for item in listed.json()] == ["deep.json"]
    assert client.get("/replays/dangling.json").status_code == 404


@pytest.mark.parametrize("length", [255, 256, 1000])
def test_a_replay_name_too_long_for_the_file_system_is_404(server, length):
    # The name passes REPLAY_NAME; is_file() raised ENAMETOOLONG past 255 bytes (a 500).
    client, _, folder = server
    folder.mkdir()
    name = "a" * (length - len(".json")) + ".json"
    answer = client.get(f"/replays/{name}")
    assert answer.status_code == 404
    assert answer.json() == {"detail": f"no replay {name!r}"}
    assert client.get("/api/replays").status_code == 200  # the connection still serves


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_replay_version_must_be_the_integer_1(server, tmp_path, capsys, version):
    from helpers import usage_error

    from gofish_web.replay_page import main

    client, _, _ = server
    game = Game(Rules(players=2), seed=1)
    game.ask(*game.legal_asks()[0])
    data = {**Replay.from_game(game, 1).to_dict(), "version": version}
    answer = client.post("/api/replays", json=data)
    assert answer.status_code == 422
    assert answer.json() == {"detail": f"replay: version: got {version!r}; allowed: 1"}
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data))
    said = usage_error(capsys, main, [str(path)])
    assert said == f"{path}: version: got {version!r}; allowed: 1"


def test_gofish_replay_refuses_a_file_nested_too_deeply(tmp_path, capsys):
    from helpers import usage_error

    from gofish_web.replay_page import main

    path = tmp_path / "deep.json"
    path.write_bytes(DEEP)
    said = usage_error(capsys, main, [str(path)])
    assert said == f"{path}: not JSON this reads: nested too deeply"
    assert not path.with_suffix(".html").exists()


@pytest.mark.torch  # the saved agents
def test_a_saved_agent_takes_a_seat(agents):
    spec = "model:" + agents["recorded"]
    app = create_app(TableRegistry(), agents=[agents["recorded"]])
    with running(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        offered = client.get("/api/options").json()["agents"]
        assert offered == [{"spec": spec, "label": "model tiny"}]
        table = new_table(client, players=4, seats=[HUMAN, spec, "hard", spec], seed=6)
        payloads = play_through_api(client, table)
        refused = client.post("/api/tables", json={"players": 3, "seats": [HUMAN, spec, "hard"]})
    assert payloads[-1]["labels"] == ["you", "model tiny", "hard CPU", "model tiny"]
    assert refused.status_code == 422 and "trained for 4 players" in refused.text


class Unpickled:
    """What a crafted agent file holds: unpickling it creates the file ``marker``."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_only_the_agents_given_with_agent_may_be_seats(server, tmp_path):
    """A saved agent is unpickled when loaded: a page may name only the agents the server
    was started with, and any other path is refused without looking at the file (nothing
    loaded, and the same answer whether the file exists or not)."""
    client, _, _ = server
    marker = tmp_path / "unpickled"
    crafted = tmp_path / "agent.zip"
    with zipfile.ZipFile(crafted, "w") as archive:
        serialized = base64.b64encode(pickle.dumps(Unpickled(marker))).decode()
        archive.writestr("data", json.dumps({"policy_class": {":serialized:": serialized}}))
    answers = {}
    for path in (crafted, tmp_path / "missing.zip", tmp_path):
        spec = f"model:{path}"
        answer = client.post("/api/tables", json={"players": 2, "seats": [HUMAN, spec]})
        assert answer.status_code == 422
        answers[path] = answer.json()["detail"].replace(str(path), "PATH")
    assert not marker.exists()
    assert len(set(answers.values())) == 1
    assert answers[crafted] == (
        "seats: 'model:PATH' is not a player this server offers (saved agents are the ones "
        f"given with gofish-web --agent); allowed: 'human', {', '.join(CPU_LEVELS)}"
    )
    assert client.get("/api/options").json()["agents"] == []


# ----------------------------------------------------------------------------- no leaks


class Script:
    """Seat players that make the asks of a scenario in order, whichever seat moves (the
    person's asks are posted by the test from the same list)."""

    def __init__(self, asks: list[tuple[int, int]]):
        self.asks = asks
        self.next = 0

    def seat(self):
        script = self

        class Player:
            def reset(self, seed):
                pass

            def act(self, turn):
                target, wanted = script.asks[script.next]
                script.next += 1
                return turn.to_action(target, wanted)

        return Player()


def seat_trace(client, registry, world, asks, viewer) -> list[str]:
    """Every body the viewer's page is sent while the scenario's asks are played."""
    script = Script(asks)
    seats = [HUMAN if seat == viewer else script.seat() for seat in range(world.rules.players)]
    table = registry.add(WebTable(world.rules, seats, game=world.game()))
    url, token = f"/api/tables/{table.id}", table.token
    bodies = [client.get(url, params={"token": token}).text]
    while script.next < len(asks):
        if table.game.current_player == viewer:
            target, wanted = asks[script.next]
            script.next += 1
            body = {"token": token, "target": target, "wanted": table.wanted_name(wanted)}
            answer = client.post(f"{url}/ask", json=body)
        else:
            answer = client.post(f"{url}/advance", json={"token": token})
        assert answer.status_code == 200, answer.text
        bodies.append(answer.text)
        bodies.append(client.get(url, params={"token": token}).text)
    return [body.replace(table.id, "TABLE") for body in bodies]


@pytest.mark.parametrize(
    ("rules", "seed"),
    [(Rules(players=3), 20), (Rules(players=4), 21), (Rules.preset("authors", players=3), 22)],
    ids=["table-3", "table-4", "authors-3"],
)
def test_no_hidden_card_reaches_a_seats_page(server, rules, seed):
    client, registry, _ = server
    scenario = make_scenario(rules, seed, max_asks=40)
    compared = 0
    for viewer in range(rules.players):
        worlds, controls = alternative_worlds(
            scenario, viewer, random.Random(seed + viewer), tries=800, keep=3
        )
        expected = seat_trace(client, registry, scenario.world, scenario.asks, viewer)
        for world in worlds:
            assert seat_trace(client, registry, world, scenario.asks, viewer) == expected
            compared += 1
        for world in controls:  # the viewer's own hand does show
            assert seat_trace(client, registry, world, scenario.asks, viewer) != expected
    assert compared >= rules.players


# ----------------------------------------------------------------------------- the command


def test_gofish_web_serves_on_127_0_0_1_and_prints_its_address(tmp_path):
    command = [sys.executable, "-m", "gofish_web.server", "--port", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            line = process.stdout.readline()
            assert line.startswith("Go Fish web table: http://127.0.0.1:")
            url = line.split()[4]
            options = httpx.get(url + "api/options", timeout=10).json()
            assert options["cpus"][0] == "random" and "table" in options["presets"]
            assert "<title>Go Fish</title>" in httpx.get(url, timeout=10).text
        finally:
            process.terminate()
            process.wait(10)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--port", "70000"], "--port: got 70000"),
        (["--agent", "/no/such.zip"], "--agent: "),
        (["--max-tables", "0"], "--max-tables: got 0"),
        (  # refused before the server starts, not by uvicorn (a KeyError) once it has
            ["--log-level", "bogus", "--port", "0"],
            "argument --log-level: invalid choice: 'bogus' (choose from 'critical', 'error', "
            "'warning', 'info', 'debug', 'trace')",
        ),
    ],
)
def test_gofish_web_refuses_bad_arguments(argv, message, capsys):
    from helpers import usage_error

    from gofish_web.server import main

    assert message in usage_error(capsys, main, argv)


@pytest.mark.torch
def test_gofish_web_refuses_an_agent_no_installed_loader_reads(agents, monkeypatch, capsys):
    from helpers import usage_error

    import gofish_env.players
    from gofish_web.server import main

    monkeypatch.setattr(gofish_env.players, "_agent_loaders", lambda: ())  # no train extra
    said = usage_error(capsys, main, ["--agent", agents["recorded"], "--port", "0"])
    assert "--agent: cannot load" in said and "no agent loader is installed" in said


def test_gofish_web_refuses_a_port_in_use(capsys):
    from helpers import usage_error

    from gofish_web.server import bind, main

    taken = bind(0)
    try:
        port = taken.getsockname()[1]
        assert f"--port: cannot listen on 127.0.0.1:{port}" in usage_error(
            capsys, main, ["--port", str(port)]
        )
    finally:
        taken.close()


def stop_after_five_asks(arguments, signum):
    """Start ``gofish-web`` with ``arguments``, play five asks of a CPU table, send
    ``signum``; the table, the exit status, stdout and stderr."""
    command = [sys.executable, "-m", "gofish_web.server", "--port", "0", *arguments]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with subprocess.Popen(command, text=True, preexec_fn=ctrl_c_reaches_it, **pipes) as process:
        try:
            url = process.stdout.readline().split()[4]
            body = {"players": 3, "seats": ["easy", "hard", "expert"], "seed": 2}
            table = httpx.post(url + "api/tables", json=body, timeout=10).json()
            for _ in range(5):
                answer = httpx.post(f"{url}api/tables/{table['id']}/advance", json={}, timeout=10)
                assert answer.status_code == 200
            process.send_signal(signum)
            out, err = process.communicate(timeout=30)
        finally:
            process.kill()
    return table, process.returncode, out, err


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_gofish_web_saves_the_games_still_on_when_it_stops(tmp_path, signum, status):
    """Ctrl-C (SIGINT), or SIGTERM (``kill``, a service manager), stops the server: the games
    still on are saved, it says so, and it exits with status 128 + the signal, no
    traceback."""
    folder = tmp_path / "replays"
    table, returncode, out, err = stop_after_five_asks(["--replays", str(folder)], signum)
    assert returncode == status, err
    assert err == ""  # uvicorn logs nothing at --log-level warning; no traceback
    assert out.splitlines() == [f"Saved 1 unfinished game in {folder}"]
    replay = Replay.load(folder / f"web-{table['id']}-unfinished.json")
    assert len(replay.asks) == 5 and replay.seed == 2
    assert not replay.game().is_over


def test_gofish_web_without_a_replay_folder_says_what_stopping_dropped(tmp_path):
    _, returncode, out, err = stop_after_five_asks([], signal.SIGINT)
    assert returncode == 130, err
    assert out.splitlines() == [
        "1 unfinished game was not saved (start with --replays DIR to keep them)"
    ]


def test_a_one_ask_replay_says_1_ask(tmp_path, capsys):
    from gofish_web.replay_page import main, page_data

    game = Game(Rules(players=3), seed=4)
    game.ask(*game.legal_asks()[0])
    replay = Replay.from_game(game, 4)
    assert "Stopped after 1 ask, before" in " ".join(page_data(replay)["about"])
    page = main([str(replay.save(tmp_path / "one.json"))])
    assert capsys.readouterr().out == f"Wrote {page} (1 ask); open it in a browser.\n"


def test_a_replay_pages_data_holds_no_markup(tmp_path):
    """``<``, ``>``, ``&`` and the line separators are JSON escapes in the embedded data, and
    a marker of the page's template in its title or data is left as it is."""
    from gofish_web.replay_page import page_data, render_page

    game = Game(Rules(players=2), seed=1)
    game.ask(*game.legal_asks()[0])
    labels = ["Ann <!--<script>", "</script>&amp; __DATA__ /*GOFISH_CSS*/ \u2028\u2029"]
    replay = Replay.from_game(game, 1, labels, {"source": "<!--"})
    page = render_page(replay, "Go Fish replay: __DATA__.json")
    start = page.index('id="gofish-replay-data">') + len('id="gofish-replay-data">')
    data = page[start : page.index("</script>", start)]
    assert not set(data) & set("<>&\u2028\u2029")
    assert json.loads(data) == json.loads(json.dumps(page_data(replay)))
    assert "<title>Go Fish replay: __DATA__.json</title>" in page


def test_the_api_schema_is_served_and_the_page_needs_nothing_from_outside(server):
    client, _, _ = server
    schema = client.get("/api/openapi.json").json()
    assert {"/api/tables", "/api/tables/{table_id}/ask", "/api/replays"} <= set(schema["paths"])
    assert client.get("/api/docs").status_code == 404  # Swagger's page would need a CDN
    page = client.get("/").text
    assert 'src="/static/table.js"' in page and "http" not in page.replace('href="data:,"', "")
