"""Make the pictures of docs/environments.md and docs/play.md.

    .venv/bin/python scripts/docs_pictures.py --agent runs/NAME/model.zip

- docs/render_rgb_array.png: a frame of the video Gymnasium's RecordVideo records of the
  agent playing GoFish-v0 (render_mode="rgb_array") against hard CPUs;
- docs/play_web_table.png, docs/play_web_lobby.png: the web table (gofish-web) in headless
  Chromium, a person's turn with a card picked;
- docs/play_replay.png: the replay page (gofish-replay) of that table's game, from a seat's
  eyes.

Needs the train, video and web extras and Chromium (scripts/install_browser.sh). Every game
is seeded, so the pictures come out the same each time.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import httpx
import imageio_ffmpeg
import numpy as np
from gymnasium.wrappers import RecordVideo
from PIL import Image
from selenium.webdriver.common.by import By

import gofish_env  # noqa: F401 (registers GoFish-v0)
from gofish_env.players import load_agent
from gofish_web.browser import chromium
from gofish_web.replay_page import write_page
from gofish_web.server import create_app, running
from gofish_web.tables import TableRegistry

DOCS = Path(__file__).resolve().parent.parent / "docs"


def video_frame(agent_path: str, out: Path) -> None:
    """Record one episode of the agent with RecordVideo and save its middle frame."""
    env = gym.make("GoFish-v0", players=4, opponents="hard", render_mode="rgb_array")
    agent = load_agent(agent_path, env.unwrapped.rules, deterministic=True)
    agent.reset(0)
    inner = env.unwrapped
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "videos"
        env = RecordVideo(env, str(folder), name_prefix="gofish", episode_trigger=lambda _: True)
        env.reset(seed=5)
        done = False
        while not done:
            action = agent.act(inner.aec.turn(inner.seat))
            _, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
        env.close()
        (video,) = folder.glob("*.mp4")
        reader = imageio_ffmpeg.read_frames(str(video))
        meta = next(reader)
        frames = [np.frombuffer(frame, np.uint8) for frame in reader]
    width, height = meta["size"]
    middle = frames[len(frames) // 2].reshape(height, width, 3)
    Image.fromarray(middle).save(out, optimize=True)
    print(f"Wrote {out}: frame {len(frames) // 2 + 1} of {len(frames)} of {video.name}")


def play_until(table, chooser: random.Random, done) -> None:
    """Play the table on (the person's asks at random) until ``done(game)``."""
    game = table.game
    while not done(game):
        if game.current_player == table.human:
            target, wanted = chooser.choice(game.legal_asks())
            table.ask(table.human, target, table.wanted_name(wanted))
        else:
            table.advance()


def web_pictures(out_table: Path, out_lobby: Path, out_replay: Path) -> None:
    registry = TableRegistry()
    with running(create_app(registry)) as url, chromium(1400, 820) as browser:
        browser.get(url + "/")
        time.sleep(1.0)
        browser.save_screenshot(str(out_lobby))
        print(f"Wrote {out_lobby}")
        body = {"players": 4, "seats": ["human", "hard", "expert", "normal"], "seed": 8}
        answer = httpx.post(url + "/api/tables", json=body).json()
        table = registry.get(answer["id"])
        chooser = random.Random(3)
        # A little way into the game, at the person's turn.
        play_until(table, chooser, lambda game: game.num_asks >= 14 and game.current_player == 0)
        browser.get(f"{url}/?table={answer['id']}&token={answer['token']}")
        time.sleep(1.0)
        _, wanted = table.game.legal_asks()[0]
        card = next(c for c in table.game.hand(0) if c[:-1] == table.wanted_name(wanted))
        browser.find_element(By.CSS_SELECTOR, f".gf-me [data-card='{card}']").click()
        time.sleep(0.3)
        browser.save_screenshot(str(out_table))
        print(f"Wrote {out_table}")
        play_until(table, chooser, lambda game: game.is_over)
        with tempfile.TemporaryDirectory() as folder:
            page = write_page(table.replay(), Path(folder) / "replay.html")
            browser.get(page.as_uri() + "#step=20&view=2")
            time.sleep(1.0)
            browser.save_screenshot(str(out_replay))
    print(f"Wrote {out_replay}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", required=True, help="a saved agent for 4 players, table rules")
    args = parser.parse_args()
    video_frame(args.agent, DOCS / "render_rgb_array.png")
    web_pictures(DOCS / "play_web_table.png", DOCS / "play_web_lobby.png", DOCS / "play_replay.png")


if __name__ == "__main__":
    main()
