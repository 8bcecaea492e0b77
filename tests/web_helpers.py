"""Helpers for the web table's tests: playing a table to the end through its HTTP API (any
client with ``get`` and ``post``: FastAPI's TestClient or an httpx client), and checking
every payload a page was sent against the engine replaying the table's game."""

from __future__ import annotations

import random
from collections.abc import Callable

from gofish_env.replay import Replay


def play_through_api(
    client, table: dict, choose: Callable[[dict], list] | None = None, view: str | None = None
) -> list[dict]:
    """Play the table ``table`` (the answer of ``POST /api/tables``) to the end: the
    person's asks chosen by ``choose(payload)`` (default: a random legal ask), the other
    moves by ``advance``. Every payload received, in order."""
    chooser = random.Random(table["id"])
    choose = choose or (lambda payload: chooser.choice(payload["legal"]))
    token = table["token"]
    query = {"token": token} | ({"view": view} if view is not None else {})
    answer = client.get(f"/api/tables/{table['id']}", params=query)
    assert answer.status_code == 200, answer.text
    payloads = [answer.json()]
    while not payloads[-1]["over"]:
        payload = payloads[-1]
        if payload["waiting"] == "you":
            target, wanted = choose(payload)
            body = {"token": token, "target": target, "wanted": wanted}
            answer = client.post(f"/api/tables/{table['id']}/ask", json=body)
        else:
            answer = client.post(
                f"/api/tables/{table['id']}/advance", json={"token": token, "view": view}
            )
        assert answer.status_code == 200, answer.text
        payloads.append(answer.json())
    return payloads


def snapshots(replay: Replay) -> dict[int, dict]:
    """The game's state after the deal and after each ask, by the number of events then."""
    states = {}
    for game, _, _ in replay.steps():
        players = game.players
        states[game.num_events] = {
            "hands": [tuple(game.hand(seat)) for seat in range(players)],
            "sizes": [game.hand_size(seat) for seat in range(players)],
            "pool": game.pool_size,
            "current": game.current_player,
            "log": [str(event) for event in game.events],
        }
    return states


def check_payloads(payloads: list[dict], replay: Replay, seat: int | None) -> int:
    """Each payload shows the state of the replayed game when it was sent: the log, the hand
    sizes, the pool, whose turn, and the cards of ``seat`` (every hand when None) and no
    other. Returns how many payloads were checked."""
    states = snapshots(replay)
    for payload in payloads:
        state = states[len(payload["log"])]
        assert [entry["text"] for entry in payload["log"]] == state["log"]
        scene = payload["scene"]
        assert scene["pool_size"] == state["pool"]
        assert scene["current_player"] == state["current"]
        for shown in scene["seats"]:
            number = shown["seat"]
            assert shown["hand_size"] == state["sizes"][number]
            if seat is None or number == seat:
                assert tuple(shown["cards"]) == state["hands"][number]
            else:
                assert shown["cards"] is None
    return len(payloads)
