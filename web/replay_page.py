"""``gofish-replay FILE``: a replay file as one self-contained HTML page.

    gofish-replay results/replays/deal000000-rotation0.json -o game.html

The page steps through the game forward and back (buttons, the arrow keys, a slider, or
Play), from any seat's eyes or with every hand face up, with the event log beside the
table; a seat's eyes show its own draws in the log. Everything is in the one file (data,
script and style inline; nothing is fetched), so it opens from disk and can be mailed. The
game is played again by the engine first: a file that does not replay as recorded is
refused.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gofish_env.cli import check_output, output_path
from gofish_env.events import Draw
from gofish_env.replay import Replay, ReplayError
from gofish_env.scene import rules_name, table_scene

STATIC = Path(__file__).parent / "static"


def static_text(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def asks(count: int) -> str:
    """``"1 ask"``, ``"2 asks"``."""
    return f"{count} ask" if count == 1 else f"{count} asks"


@contextmanager
def nesting_refused() -> Iterator[None]:
    """A file nested deeper than Python's JSON reader (or a comparison) recurses is refused
    as ``ReplayError``, not a ``RecursionError`` traceback or a 500."""
    try:
        yield
    except RecursionError:
        raise ReplayError("not JSON this reads: nested too deeply") from None


def page_data(replay: Replay) -> dict:
    """What the page shows: the table (every hand face up) after the deal and after each
    ask, and the log with the step of each event and the cards of each private draw.
    Raises ``ReplayError`` when the engine does not replay the file as recorded."""
    labels = replay.players or None
    steps, log = [], []
    game = None
    for number, (game, events, drawn) in enumerate(replay.steps()):
        notes = {index: (seat, cards) for index, seat, cards in drawn}
        for index, event in enumerate(events):
            entry = {"text": str(event), "kind": event.kind, "step": number}
            if index in notes and not (type(event) is Draw and event.shown):
                entry["seat"], entry["cards"] = notes[index]
            log.append(entry)
        steps.append({"scene": table_scene(game, labels).to_dict(), "log_end": len(log)})
    replay.check(game)
    rules = replay.rules
    about = [f"{rules.players} players, {rules_name(rules)}"]
    if replay.seed is not None:
        about.append(f"Deal seed {replay.seed}")
    if game.is_over:
        about.append(table_scene(game, labels).status)
    elif replay.meta.get("cut_off") is True:  # by an ask limit (gofish-web, the harness)
        names = [replay.label(seat) for seat in game.leaders()]
        standing = " and ".join(names) + (" share the win" if len(names) > 1 else " wins")
        about.append(
            f"Cut off after {asks(len(replay.asks))} (the ask limit), before the end of the "
            f"game; as it stands, {standing}."
        )
    else:
        about.append(f"Stopped after {asks(len(replay.asks))}, before the end of the game.")
    source = replay.meta.get("source")
    if source:
        about.append(f"Played by {source}")
    return {
        "heading": "Go Fish replay",
        "about": about,
        "labels": [labels[seat] if labels else "" for seat in range(rules.players)],
        "steps": steps,
        "log": log,
    }


def render_page(replay: Replay, title: str = "Go Fish replay") -> str:
    """The whole page as one HTML string."""
    with nesting_refused():  # the recorded events are compared with the engine's
        data = page_data(replay)
    # ensure_ascii: U+2028 and U+2029 come out escaped too.
    data = json.dumps(data, separators=(",", ":"), ensure_ascii=True)
    # Inside <script>, "</script", "<!--" and "<script" change where the HTML parser ends
    # the element (a label "<!--<script>" ran it past its end); as JSON escapes these
    # characters read the same to JSON.parse and are no markup.
    for char in "<>&":
        data = data.replace(char, f"\\u{ord(char):04x}")
    page = static_text("replay.html")
    parts = {
        "__TITLE__": html.escape(title),
        "/*GOFISH_CSS*/": static_text("table.css"),
        "/*GOFISH_TABLE_JS*/": static_text("table.js"),
        "/*GOFISH_REPLAY_JS*/": static_text("replay.js"),
        "__DATA__": data,
    }
    # One pass: a marker inside what is put in (a file named __DATA__.json) stays as it is.
    markers = re.compile("|".join(map(re.escape, parts)))
    return markers.sub(lambda found: parts[found.group(0)], page)


def write_page(replay: Replay, path: str | Path, title: str = "Go Fish replay") -> Path:
    """Write the page (made first: a replay that does not replay writes nothing)."""
    page = render_page(replay, title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(
        prog="gofish-replay",
        description="Write a replay file as one self-contained HTML page that steps through "
        "the game, from any seat's eyes or with every hand face up.",
    )
    parser.add_argument("file", help="a replay file (JSON), e.g. from gofish-tournament --replays")
    parser.add_argument(
        "-o",
        "--output",
        type=output_path,
        default=None,
        help="the page to write (default: the replay's name with .html); replaced if it exists",
    )
    args = parser.parse_args(argv)
    output = Path(args.output) if args.output else Path(args.file).with_suffix(".html")
    if output.resolve() == Path(args.file).resolve():
        parser.error("--output: the page would replace the replay file; name another file")
    check_output(parser, "--output", output)
    try:
        replay = Replay.load(args.file)
        write_page(replay, output, f"Go Fish replay: {Path(args.file).name}")
    except ReplayError as error:
        parser.error(f"{args.file}: {error}")
    print(f"Wrote {output} ({asks(len(replay.asks))}); open it in a browser.")
    return output


def cli() -> None:
    """The ``gofish-replay`` command."""
    main()


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
