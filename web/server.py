"""``gofish-web``: a local web table to play against the CPUs or a saved agent, watch CPUs
and agents play, and open replays.

    gofish-web --port 8000 --agent runs/x/model.zip --replays results/web-replays

It serves on 127.0.0.1 only and prints its address. FastAPI on uvicorn; the page is plain
HTML and JavaScript (``static/``). The JSON API the page uses:

- ``GET /api/options``: CPU levels, presets, the agents given with ``--agent``;
- ``POST /api/tables`` ``{"players": 4, "rules": "table", "seats": ["human", "hard", ...],
  "seed": null}``: a new table; answers its ``id`` and the ``token`` of its page. A seat is
  ``human``, a CPU level or one of the agents given with ``--agent`` (no other file); the
  seed may also be sent as its digits (``"123"``: a JavaScript number rounds above 2**53);
- ``GET /api/tables/{id}?token=...&view=...``: what the page shows (``WebTable.payload``);
- ``POST /api/tables/{id}/ask`` ``{"token", "target", "wanted"}``: the person's ask;
- ``POST /api/tables/{id}/advance`` ``{"token", "view"}``: the next CPU's move;
- ``GET /api/tables/{id}/replay`` and ``/tables/{id}/replay.html``: once the game is over;
- ``GET /api/replays``, ``POST /api/replays`` (a replay file), ``GET /replays/{name}``.

A bad request is answered 4xx with ``{"detail": reason}``: 404 for an unknown table, 403
for a wrong token or a view the page may not see, 409 for an ask the engine refuses (its
own reason) or a move out of turn, 413 for a body over ``MAX_BODY_BYTES``, 422 for
malformed input (also a body that is no JSON). Every GET route answers HEAD too.
"""

from __future__ import annotations

import argparse
import re
import secrets
import signal
import socket
import stat
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import uvicorn
from fastapi import Body, FastAPI, HTTPException, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException
from uvicorn.config import LOG_LEVELS

from gofish_env.agent_files import AgentFileError
from gofish_env.cli import HelpFormatter, check_count, check_output
from gofish_env.cpus import CPU_LEVELS
from gofish_env.players import MODEL_PREFIX, load_agent, player_label
from gofish_env.replay import Replay, ReplayError
from gofish_env.rules import Rules
from gofish_web.replay_page import STATIC, nesting_refused, render_page
from gofish_web.tables import (
    HUMAN,
    TABLE_VIEW,
    TableError,
    TableRegistry,
    WebTable,
    check_seat_spec,
)

HOST = "127.0.0.1"
MAX_BODY_BYTES = 4_000_000  # a request body; a replay of 1,000 asks is about 150 kB
MAX_UPLOADS = 100  # replays opened through the page, kept in memory (as their JSON)...
MAX_UPLOAD_BYTES = 50_000_000  # ...and at most this many bytes of them
REPLAY_NAME = re.compile(r"^[\w.-]+\.json$")


class NewTable(BaseModel):
    model_config = ConfigDict(extra="forbid")
    players: int = Field(4, ge=2, le=6, strict=True)  # strict: true is not a number
    rules: str = Field("table", max_length=32)
    seats: list[Annotated[str, Field(max_length=4096)]] | None = Field(
        None,
        max_length=6,
        description="one per seat: 'human' (at most one), a CPU level or model:PATH.zip",
    )
    seed: int | None = Field(
        None,
        ge=0,
        le=2**63 - 1,
        strict=True,
        description="an integer, or its decimal digits as a string (the page sends these: a "
        "JavaScript number rounds a seed above 2**53)",
    )

    @field_validator("seed", mode="before")
    @classmethod
    def seed_digits(cls, value: Any) -> Any:
        if isinstance(value, str) and value.isascii() and value.isdecimal() and len(value) <= 20:
            return int(value)
        return value  # anything else is refused as no integer


class AskBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: str = Field(max_length=64)
    target: int = Field(strict=True)  # true is not seat 1
    wanted: str = Field(min_length=1, max_length=4)
    seen: int | None = Field(
        None,
        ge=0,
        strict=True,
        description="the log entries the page showed: an ask from a page behind is refused",
    )


class AdvanceBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: str | None = None
    view: str | None = None


class HeadAsGet:
    """ASGI middleware: HEAD is answered as GET (FastAPI's routes take only the methods they
    name); uvicorn sends the headers without the body."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "HEAD":
            scope = {**scope, "method": "GET"}
        await self.app(scope, receive, send)


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes is refused (413) by its
    Content-Length, or as it arrives when it has none, before it is held whole."""

    def __init__(self, app: Any, limit: int):
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        reason = f"request body: larger than {self.limit} bytes, the most this server takes"
        length = dict(scope["headers"]).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limit:
            return await JSONResponse({"detail": reason}, 413)(scope, receive, send)
        received = 0

        async def limited() -> dict:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.limit:
                raise HTTPException(413, reason)  # answered by the app, as its own errors
            return message

        return await self.app(scope, limited, send)


def parse_view(view: str | None) -> int | str | None:
    if view is None or view == TABLE_VIEW:
        return view
    if view.isascii() and view.isdecimal() and len(view) <= 2:  # "²" is a digit to isdigit
        return int(view)
    raise TableError(422, f"view: got {view!r}; allowed: 'table' or a seat number")


def create_app(
    registry: TableRegistry | None = None,
    agents: Sequence[str] = (),
    replays: str | Path | None = None,
) -> FastAPI:
    """The web table's app. ``agents``: saved agents (paths) the page offers as seats;
    ``replays``: a folder where every finished game is saved, and whose replays the page
    lists."""
    # No Swagger page: it loads its script from a CDN; the schema is at /api/openapi.json.
    app = FastAPI(
        title="Go Fish web table", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json"
    )
    registry = registry if registry is not None else TableRegistry(replays=replays)
    app.state.registry = registry
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)
    app.add_middleware(HeadAsGet)
    uploads: OrderedDict[str, bytes] = OrderedDict()  # name -> the replay's JSON
    uploads_lock = threading.Lock()
    replay_folder = None if replays is None else Path(replays)
    agent_specs = [MODEL_PREFIX + path for path in agents]  # the only model seats a page may name

    @app.exception_handler(TableError)
    def table_error(request: Request, error: TableError) -> JSONResponse:
        return JSONResponse({"detail": error.message}, status_code=error.status)

    @app.exception_handler(RequestValidationError)
    def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        # FastAPI's own answer repeats every bad value ("input"): a 5 MB field, 5 MB back.
        details = [{key: item[key] for key in ("type", "loc", "msg")} for item in error.errors()]
        return JSONResponse({"detail": jsonable_encoder(details)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        # FastAPI answers a body that json.loads raises on other than with JSONDecodeError
        # (nested too deeply, a number of thousands of digits, not UTF-8) 400 "There was an
        # error parsing the body": malformed input, answered 422 as the rest.
        if error.status_code != 400:
            return await http_exception_handler(request, error)
        cause = error.__cause__
        if isinstance(cause, RecursionError):
            reason = "nested too deeply"
        elif isinstance(cause, UnicodeDecodeError):
            reason = "not UTF-8"
        else:
            reason = str(cause)[:200]
        detail = [{"type": "json_invalid", "loc": ["body"], "msg": f"JSON decode error: {reason}"}]
        return JSONResponse({"detail": detail}, status_code=422)

    @app.exception_handler(ReplayError)
    def replay_error(request: Request, error: ReplayError) -> JSONResponse:
        return JSONResponse({"detail": f"replay: {error}"}, status_code=422)

    def table_for(table_id: str, token: str | None) -> WebTable:
        table = registry.get(table_id)
        if table.human is not None and token != table.token:
            raise TableError(403, "token: this table's page holds its token; it is not this one")
        return table

    @app.get("/", response_class=FileResponse)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/options")
    def options() -> dict:
        return {
            "cpus": list(CPU_LEVELS),
            "presets": {name: Rules.PRESET_MAX_PLAYERS.get(name, 6) for name in Rules.PRESETS},
            "agents": [{"spec": spec, "label": player_label(spec)} for spec in agent_specs],
            "replays": replay_folder is not None,
        }

    @app.post("/api/tables", status_code=201)
    def new_table(request: NewTable) -> dict:
        if request.rules not in Rules.PRESETS:
            allowed = ", ".join(Rules.PRESETS)
            raise TableError(422, f"rules: unknown preset {request.rules!r}; allowed: {allowed}")
        try:
            rules = Rules.preset(request.rules, players=request.players)
        except ValueError as error:  # a preset for fewer players: the message names players
            raise TableError(422, str(error)) from None
        seats = request.seats
        if seats is None:  # [] is no default table: it names no seat
            seats = [HUMAN] + ["hard"] * (request.players - 1)
        if len(seats) != request.players:
            raise TableError(
                422, f"seats: {len(seats)} given for {request.players} players; give one each"
            )
        for spec in seats:
            check_seat_spec(spec, rules, agent_specs)
        table = registry.create(rules, seats, request.seed)
        return {"id": table.id, "token": table.token, "human": table.human}

    # Payloads are plain JSON data: sent as they are (FastAPI's encoder would walk them).
    @app.get("/api/tables/{table_id}")
    def view(table_id: str, token: str | None = None, view: str | None = None) -> JSONResponse:
        table = table_for(table_id, token)
        with table.lock:
            return JSONResponse(table.payload(parse_view(view)))

    @app.post("/api/tables/{table_id}/ask")
    def ask(table_id: str, body: AskBody) -> JSONResponse:
        table = table_for(table_id, body.token)
        with table.lock:
            table.ask(table.human, body.target, body.wanted, body.seen)
            return JSONResponse(table.payload())

    @app.post("/api/tables/{table_id}/advance")
    def advance(table_id: str, body: AdvanceBody) -> JSONResponse:
        table = table_for(table_id, body.token)
        with table.lock:
            view = parse_view(body.view)
            table.payload(view)  # a view the page may not see is refused before the move
            table.advance()
            return JSONResponse(table.payload(view))

    @app.get("/api/tables/{table_id}/replay")
    def table_replay(table_id: str, token: str | None = None) -> JSONResponse:
        table = table_for(table_id, token)
        with table.lock:
            data = table.replay().to_dict()
        headers = {"Content-Disposition": f'attachment; filename="gofish-{table.id}.json"'}
        return JSONResponse(data, headers=headers)

    @app.get("/tables/{table_id}/replay.html", response_class=HTMLResponse)
    def table_replay_page(table_id: str, token: str | None = None) -> str:
        table = table_for(table_id, token)
        with table.lock:
            replay = table.replay()
        return render_page(replay, "Go Fish replay")

    @app.get("/api/replays")
    def list_replays() -> list[dict]:
        with uploads_lock:
            found = [{"name": name, "url": f"/replays/{name}"} for name in uploads]
        if replay_folder is not None and replay_folder.is_dir():
            found += [{"name": path.name, "url": f"/replays/{path.name}"} for path in saved()]
        return found[::-1]

    def saved() -> list[Path]:
        """The replay folder's files, oldest first; one that cannot be read (a dangling
        link, one removed meanwhile) is left out, not the whole list."""
        dated = []
        for path in replay_folder.glob("*.json"):
            try:
                info = path.stat()
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                dated.append((info.st_mtime, path.name, path))
        return [path for _, _, path in sorted(dated)]

    @app.post("/api/replays", status_code=201)
    def open_replay(data: Any = Body(...)) -> dict:  # noqa: B008 (FastAPI's way to say "the body")
        replay = Replay.from_dict(data)
        with nesting_refused():
            replay.game()  # it must replay exactly
            text = replay.to_json().encode()  # far smaller than the parsed objects
        name = f"opened-{secrets.token_hex(6)}.json"
        with uploads_lock:
            uploads[name] = text
            while len(uploads) > MAX_UPLOADS or sum(map(len, uploads.values())) > MAX_UPLOAD_BYTES:
                uploads.popitem(last=False)  # the oldest first
        return {"name": name, "url": f"/replays/{name}"}

    @app.get("/replays/{name}", response_class=HTMLResponse)
    def replay_page(name: str) -> str:
        with uploads_lock:
            text = uploads.get(name)
        replay = None if text is None else Replay.from_json(text)
        if replay is None and replay_folder is not None and REPLAY_NAME.match(name):
            path = replay_folder / name
            try:
                found = path.is_file()
            except OSError:  # a name too long for the file system (ENAMETOOLONG), ...
                found = False
            if found:
                replay = Replay.load(path)
        if replay is None:
            raise TableError(404, f"no replay {name!r}")
        return render_page(replay, f"Go Fish replay: {name}")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0: any free port)."""
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY on accepted connections only when the
    # protocol says TCP, and without it each answer waits ~40 ms for a delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as error:
        sock.close()
        raise OSError(f"cannot listen on {HOST}:{port}: {error.strerror or error}") from None
    sock.listen(128)
    return sock


@contextmanager
def running(app: FastAPI, port: int = 0, timeout: float = 30.0) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 from a background thread while the block runs (for tests
    and the docs' screenshots); gives the server's address."""
    sock = bind(port)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError("the web server did not start")
        time.sleep(0.01)
    try:
        yield f"http://{HOST}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="gofish-web",
        description=f"Play, watch and replay Go Fish in a web browser: a local server on {HOST}.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--port", type=int, default=8000, help="port; 0 for any free port")
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="PATH",
        help="a saved agent (.zip) to offer as a seat; repeat for more",
    )
    parser.add_argument(
        "--replays",
        default=None,
        help="folder to save every finished game in as a replay file (and, when the server "
        "stops, the games still on); the page lists them (default: none saved)",
    )
    parser.add_argument("--max-tables", type=int, default=1000, help="tables kept at once")
    parser.add_argument(
        "--log-level",
        default="warning",
        type=str.lower,
        choices=list(LOG_LEVELS),
        help="uvicorn's log level",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port: got {args.port}; allowed: 0 to 65535")
    check_count(parser, "--max-tables", args.max_tables)
    for path in args.agent:
        try:  # loaded now: a file no installed loader reads is refused before the server starts
            load_agent(path)
        except AgentFileError as error:
            parser.error(f"--agent: {error}")
    if args.replays is not None:
        check_output(parser, "--replays", args.replays, directory=True)
    try:
        sock = bind(args.port)
    except OSError as error:
        parser.error(f"--port: {error}; choose another, or 0 for any free port")
    registry = TableRegistry(args.max_tables, args.replays)
    app = create_app(registry, args.agent, args.replays)
    port = sock.getsockname()[1]
    print(f"Go Fish web table: http://{HOST}:{port}/  (Ctrl-C to stop)", flush=True)
    config = uvicorn.Config(app, log_level=args.log_level)
    interrupted = False
    # uvicorn shuts down on SIGTERM too, then raises it again: the default handler would end
    # the process before the games still on are saved. This one exits through the finally.
    on_main_thread = threading.current_thread() is threading.main_thread()
    if on_main_thread:
        before = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:  # Ctrl-C: uvicorn shuts down, then raises the signal again
        interrupted = True
    finally:
        if on_main_thread:
            signal.signal(signal.SIGTERM, before)
        sock.close()
        saved = registry.save_unfinished()
        if saved:
            games = "game" if len(saved) == 1 else "games"
            print(f"Saved {len(saved)} unfinished {games} in {args.replays}", flush=True)
        elif args.replays is None and (dropped := registry.count_unfinished()):
            games = "game was" if dropped == 1 else "games were"
            print(
                f"{dropped} unfinished {games} not saved (start with --replays DIR to keep them)",
                flush=True,
            )
    if interrupted:
        raise SystemExit(130)


def cli() -> None:
    """The ``gofish-web`` command."""
    main()


if __name__ == "__main__":
    sys.exit(main())
