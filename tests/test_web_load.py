"""A load test of the web table: 60 tables played at once against the real server
(``python -m gofish_web.server --port 0`` on 127.0.0.1), each by its own client thread, all
to the end, with no error and no game mixed up with another: every payload a table's page
received matches its own game, replayed by the engine. Bounded in time: the whole run must
end within LIMIT seconds (benchmarks/web_load.py measures how long it takes)."""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, wait

import httpx
import pytest
from web_helpers import check_payloads, play_through_api

from gofish_env.replay import Replay

pytestmark = pytest.mark.web
TABLES = 60
LIMIT = 300.0  # seconds for every table to finish (about 20 s on 2 idle cores)


def table_request(number: int) -> dict:
    """Tables of 2 to 6 seats under several presets, two in three with a person."""
    players = 2 + number % 5
    rules = ("table", "bicycle", "pairs", "two_decks")[number % 4]
    cpus = ["easy", "normal", "hard", "expert", "random"]
    seats = [cpus[(number + seat) % len(cpus)] for seat in range(players)]
    if number % 3:
        seats[number % players] = "human"
    return {"players": players, "rules": rules, "seats": seats, "seed": 1000 + number}


def play_one(url: str, number: int) -> tuple[dict, list[dict], dict]:
    with httpx.Client(base_url=url, timeout=60) as client:
        request = table_request(number)
        answer = client.post("/api/tables", json=request)
        assert answer.status_code == 201, answer.text
        table = answer.json()
        payloads = play_through_api(client, table)
        answer = client.get(f"/api/tables/{table['id']}/replay", params={"token": table["token"]})
        assert answer.status_code == 200, answer.text
        return table, payloads, answer.json()


@pytest.fixture
def server_url():
    command = [sys.executable, "-m", "gofish_web.server", "--port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("Go Fish web table: http://127.0.0.1:"), line
        yield line.split()[4].rstrip("/")
    finally:
        process.terminate()
        process.wait(30)


@pytest.mark.slow
def test_sixty_tables_at_once_play_to_the_end_each_with_its_own_game(server_url):
    start = time.monotonic()
    pool = ThreadPoolExecutor(max_workers=TABLES)
    futures = [pool.submit(play_one, server_url, number) for number in range(TABLES)]
    _, not_done = wait(futures, timeout=LIMIT)
    # Clients still playing stop when the server does (the fixture ends it).
    pool.shutdown(wait=not not_done, cancel_futures=True)
    elapsed = time.monotonic() - start
    assert not not_done, f"{len(not_done)} tables had not finished after {LIMIT:.0f} s"
    ids = set()
    for number, future in enumerate(futures):
        table, payloads, data = future.result()  # raises the client's error, if any
        request = table_request(number)
        replay = Replay.from_dict(data)
        game = replay.game()
        assert game.is_over and replay.seed == request["seed"]
        assert replay.rules.players == request["players"]
        assert table["human"] == (
            request["seats"].index("human") if "human" in request["seats"] else None
        )
        assert {payload["table"] for payload in payloads} == {table["id"]}
        check_payloads(payloads, replay, table["human"] if table["human"] is not None else None)
        ids.add(table["id"])
    assert len(ids) == TABLES
    print(f"{TABLES} tables played to the end in {elapsed:.1f} s")
