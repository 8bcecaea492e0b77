"""How the web table holds up under many tables at once.

    python benchmarks/web_load.py --tables 60

Starts ``gofish-web --port 0`` (a subprocess on 127.0.0.1), then plays ``--tables`` games at
once, each from its own client thread (httpx): two in three tables with a person whose asks
are chosen at random from the legal ones the page is sent, the rest watched; every CPU move
through ``advance``. Each finished game is fetched as a replay and played again by the
engine, and its log must equal the log the table's page was last sent. Prints the wall
time, the requests made and the time per request. Ctrl-C stops the server and prints the
figures of the tables played to the end.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from gofish_env.cli import (
    HelpFormatter,
    check_count,
    interrupted_note,
    progress_bar,
    require_extra,
)
from gofish_env.replay import Replay
from gofish_web import WEB_LIBRARIES

COMMAND = "python benchmarks/web_load.py"


def play(url: str, number: int) -> tuple[int, list[float]]:
    """Play table ``number`` to the end; (requests made, their durations in seconds)."""
    players = 2 + number % 5
    seats = [("easy", "normal", "hard", "expert")[(number + s) % 4] for s in range(players)]
    if number % 3:
        seats[number % players] = "human"
    chooser = random.Random(number)
    spent: list[float] = []
    import httpx  # the dev extra, checked by main

    with httpx.Client(base_url=url, timeout=60) as client:

        def call(method: str, path: str, **kwargs) -> dict:
            start = time.perf_counter()
            answer = client.request(method, path, **kwargs)
            spent.append(time.perf_counter() - start)
            answer.raise_for_status()
            return answer.json()

        body = {"players": players, "seats": seats, "seed": number}
        table = call("POST", "/api/tables", json=body)
        token, path = table["token"], f"/api/tables/{table['id']}"
        payload = call("GET", path, params={"token": token})
        while not payload["over"]:
            if payload["waiting"] == "you":
                target, wanted = chooser.choice(payload["legal"])
                ask = {"token": token, "target": target, "wanted": wanted}
                payload = call("POST", f"{path}/ask", json=ask)
            else:
                payload = call("POST", f"{path}/advance", json={"token": token})
        game = Replay.from_dict(call("GET", f"{path}/replay", params={"token": token})).game()
        if [entry["text"] for entry in payload["log"]] != [str(e) for e in game.events]:
            raise AssertionError(f"table {number}: its page's log differs from its game")
    return len(spent), spent


def play_at_once(url: str, tables: int, results: list[tuple[int, list[float]]]) -> None:
    """Tables 0 .. ``tables`` - 1 played at once, each by a thread of its own; each table's
    (requests made, their durations) is added to ``results`` as it ends. On a Ctrl-C the
    tables still playing are not waited for: they fail once the server stops."""
    pool = ThreadPoolExecutor(max_workers=tables)
    try:
        playing = [pool.submit(play, url, number) for number in range(tables)]
        with progress_bar(True, tables, "tables played to the end", transient=True) as advance:
            for table in as_completed(playing):
                results.append(table.result())
                advance(len(results))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def stop(server: subprocess.Popen) -> None:
    """Stop the server and wait for it, a second Ctrl-C or not (it would be left running)."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        server.terminate()
        server.wait(30)
    finally:
        signal.signal(signal.SIGINT, previous)


def main(argv: list[str] | None = None) -> None:
    require_extra(COMMAND, "dev", ["httpx"], "pip install -e '.[dev]'")  # its client
    require_extra(COMMAND, "web", WEB_LIBRARIES, "pip install -e '.[web]'")
    parser = argparse.ArgumentParser(
        prog=COMMAND,
        description=__doc__.splitlines()[0],
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--tables", type=int, default=60, help="tables played at once")
    args = parser.parse_args(argv)
    check_count(parser, "--tables", args.tables)
    command = [sys.executable, "-m", "gofish_web.server", "--port", "0"]
    # A process group of its own: a Ctrl-C reaches this process only, which stops the
    # server as at the end of a run.
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, process_group=0)
    results: list[tuple[int, list[float]]] = []
    interrupted = False
    start = time.perf_counter()
    try:
        url = server.stdout.readline().split()[4].rstrip("/")
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        start = time.perf_counter()
        play_at_once(url, args.tables, results)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        elapsed = time.perf_counter() - start
        stop(server)
    if not results:
        print(interrupted_note(0, args.tables, "tables"))
        raise SystemExit(130)
    durations = sorted(d for _, spent in results for d in spent)
    requests = len(durations)
    p95 = durations[int(0.95 * (requests - 1))]
    # Cut short, the tables still playing made requests too: no rate from these alone.
    rate = "-" if interrupted else f"{requests / elapsed:.0f}"
    print(
        f"{len(results)} tables played to the end at once in {elapsed:.1f} s: {requests} "
        f"requests, {rate} per second; per request median "
        f"{1000 * statistics.median(durations):.1f} ms, 95th percentile {1000 * p95:.1f} ms"
    )
    print("every game replayed by the engine equals what its page was sent")
    if interrupted:
        print(interrupted_note(len(results), args.tables, "tables"))
        raise SystemExit(130)


if __name__ == "__main__":
    main()
