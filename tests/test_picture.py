"""The table as a picture: scenes (what a picture shows, gofish_env.scene), frames drawn from
them (gofish_env.picture) and the envs' render_mode="rgb_array". What a seat's frame may not
show is checked in tests/test_no_leak.py."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import gofish_env
from gofish_env import Game, Rules
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.picture import HEIGHT, RED, WIDTH, card_face, draw
from gofish_env.scene import recent_events, rules_name, seat_scene, table_scene

# Seat 0 holds three 7s and a queen; seat 1 a 7 and two 2s, seat 2 two 2s; 3 in the pool.
HANDS = [["7H", "7C", "7D", "QS"], ["7S", "2D", "2C"], ["2H", "2S"]]
POOL = ["QH", "QD", "QC"]
CATCHES = [["3", "4", "5"], ["6", "8", "9", "10"], ["J", "K", "A"]]


def position() -> Game:
    rules = Rules(players=3)
    return Game.from_hands(HANDS, POOL, rules=rules, catches=CATCHES)


def test_a_seats_scene_shows_its_own_cards_and_only_counts_of_the_others():
    game = position()
    game.ask(1, "7")  # a hit: seat 1 hands over its 7, seat 0 lays the 7s and asks again
    scene = seat_scene(KnowledgeTracker(game).view(0), recent_events(game), ["you", "a", "b"])
    me, one, two = scene.seats
    assert me.cards == ("QS",) and me.label == "Seat 0 · you"
    assert one.cards is None and two.cards is None
    assert [seat.hand_size for seat in scene.seats] == [1, 2, 2]
    assert me.catches == ("3", "4", "5", "7") and me.points == 3 + 4 + 5 + 7
    assert one.catches == ("6", "8", "9", "10")
    assert scene.pool_size == 3 and scene.viewer == 0 and scene.current_player == 0
    assert me.to_move and not one.to_move
    assert scene.last_ask.text == "Seat 0 asks seat 1 for 7s."
    assert scene.last_ask.handed == 1 and scene.last_ask.wanted == "7s"
    assert scene.last_ask.answer == (
        "Seat 1 hands over 1 card to seat 0.",
        "Seat 0 lays a catch of 7s.",
    )
    assert scene.status == "Your turn to ask."
    assert scene.title == "Go Fish · 3 players · table rules · seat 0's view"


def test_a_miss_is_the_answer_and_the_table_view_shows_every_hand():
    game = position()
    game.ask(2, "Q")  # seat 2 has no queens: go fish, seat 0 draws the QH and shows it
    scene = table_scene(game)
    assert [seat.cards for seat in scene.seats] == [
        ("7C", "7D", "7H", "QH", "QS"),
        ("2C", "2D", "7S"),
        ("2H", "2S"),
    ]
    assert scene.viewer is None and scene.title.endswith("every hand face up")
    assert scene.last_ask.handed == 0
    assert scene.last_ask.answer == (
        "Seat 2 says go fish.",
        "Seat 0 draws from the pool and shows a Q!",
    )


def test_the_end_of_the_game_names_the_winners():
    catches = [["2", "3", "4", "5"], ["6", "8", "9", "10", "Q"], ["J", "K", "A"]]
    game = Game.from_hands(
        [["7H", "7C", "7D"], ["7S"], []], [], rules=Rules(players=3), catches=catches
    )
    game.ask(1, "7")  # the last catch: 5 catches each for seats 0 and 1, seat 1 has more points
    assert game.is_over and game.winners == (1,)
    tracker = KnowledgeTracker(game)
    scene = seat_scene(tracker.view(2), recent_events(game))
    assert scene.over and scene.current_player is None
    assert [seat.winner for seat in scene.seats] == [False, True, False]
    assert scene.status == "Game over: Seat 1 wins."
    assert seat_scene(tracker.view(1), recent_events(game)).status == "Game over: you win."


def test_rules_are_named_by_their_preset():
    assert rules_name(Rules(players=5)) == "table rules"
    assert rules_name(Rules.preset("authors", players=3)) == "authors rules"
    assert rules_name(Rules(players=3, set_size=2, jokers=True)) == "set_size=2, jokers=True"
    # Settings that only a table of other size allows are told as they are.
    assert rules_name(Rules(players=5, first_player=4)) == "first_player=4"
    assert rules_name(Rules(players=2, deal=20)) == "deal=20"


def test_every_rule_set_draws_including_those_a_four_player_table_refuses():
    import gofish_env

    for rules in (Rules(players=6, first_player=5), Rules(players=2, deal=20)):
        env = gofish_env.raw_env(rules=rules, render_mode="rgb_array")
        env.reset(seed=0)
        assert env.render().ndim == 3


def test_a_frame_is_an_rgb_array_that_changes_with_what_it_shows():
    game = position()
    before = draw(table_scene(game))
    assert before.shape == (HEIGHT, WIDTH, 3) and before.dtype == np.uint8
    assert before.flags.writeable
    game.ask(2, "Q")
    after = draw(table_scene(game))
    assert (before != after).any()
    assert (draw(table_scene(game)) == after).all()  # the same scene, the same frame


def test_cards_are_red_for_hearts_and_diamonds_and_black_for_clubs_and_spades():
    def has_red(card: str) -> bool:
        pixels = np.asarray(card_face(card, (54, 76)).convert("RGB")).reshape(-1, 3).astype(int)
        return bool((np.abs(pixels - RED).sum(axis=1) < 60).any())

    assert has_red("QH") and has_red("10D")
    assert not has_red("QS") and not has_red("10C")
    assert (np.asarray(card_face("QH", (54, 76))) != np.asarray(card_face("KH", (54, 76)))).any()


@pytest.mark.parametrize("view", [0, 2, "table", "current"])
def test_the_aec_env_renders_rgb_frames_from_the_chosen_view(view):
    env = gofish_env.raw_env(players=3, render_mode="rgb_array", render_view=view)
    env.reset(seed=4)
    frame = env.render()
    assert frame.shape == (HEIGHT, WIDTH, 3) and frame.dtype == np.uint8
    seat = env.game.current_player if view == "current" else view
    if seat == "table":
        expected = table_scene(env.game)
    else:
        expected = seat_scene(env.view(seat), recent_events(env.game))
    assert env.render_scene(view) == expected
    assert (frame == draw(expected)).all()


def test_the_gymnasium_env_renders_the_learners_view_with_labels():
    env = gym.make(
        "GoFish-v0", players=4, opponents=["easy", "hard", "expert"], render_mode="rgb_array"
    )
    env.reset(seed=1)
    frame = env.render()
    assert frame.shape == (HEIGHT, WIDTH, 3)
    inner = env.unwrapped
    scene = inner.aec.render_scene(inner.seat, inner.seat_labels())
    assert [seat.label for seat in scene.seats] == [
        "Seat 0 · learner",
        "Seat 1 · easy CPU",
        "Seat 2 · hard CPU",
        "Seat 3 · expert CPU",
    ]
    assert scene.seats[0].cards == tuple(inner.aec.game.hand(0))
    assert (frame == draw(scene)).all()


def test_render_modes_are_declared_and_checked():
    assert "rgb_array" in gofish_env.raw_env.metadata["render_modes"]
    assert "rgb_array" in gofish_env.GoFishEnv.metadata["render_modes"]
    with pytest.raises(ValueError, match=r"render_mode: got 'rgb'; allowed: .*'rgb_array'"):
        gofish_env.raw_env(render_mode="rgb")


@pytest.mark.video
def test_record_video_writes_an_episode_of_frames(tmp_path):
    import imageio_ffmpeg
    from gymnasium.wrappers import RecordVideo

    env = gym.make("GoFish-v0", players=3, opponents="hard", render_mode="rgb_array")
    folder = tmp_path / "videos"
    env = RecordVideo(env, str(folder), name_prefix="gofish", episode_trigger=lambda _: True)
    _, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    steps, done = 0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, terminated, truncated, info = env.step(action)
        steps += 1
        done = terminated or truncated
    env.close()
    (video,) = folder.glob("*.mp4")
    reader = imageio_ffmpeg.read_frames(str(video))
    meta = next(reader)
    assert tuple(meta["size"]) == (WIDTH, HEIGHT)
    frames = sum(1 for _ in reader)
    assert frames == steps + 1  # the frame after reset, then one per step


@pytest.mark.parametrize("seat", [0, 2])
def test_the_gymnasium_env_in_human_mode_prints_the_learners_view_alone(seat, capsys):
    """Once at reset and once a step, the learner's view: never the view of an opponent
    that moved in between, nor the table face up when the game ends on their move."""
    env = gofish_env.GoFishEnv(players=3, opponents="hard", seat=seat, render_mode="human")
    _, info = env.reset(seed=0)
    printed = [capsys.readouterr().out]
    shown = [env.aec.render_text(seat)]
    rng = np.random.default_rng(seat)
    done = False
    while not done:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        _, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
        printed.append(capsys.readouterr().out)
        shown.append(env.aec.render_text(seat))
    assert len(printed) > 3
    assert printed == [text + "\n" for text in shown]
    assert all(text.count("'s view") == 1 and f"seat {seat}'s view" in text for text in printed)


def test_the_gymnasium_env_checks_its_render_mode():
    with pytest.raises(ValueError, match=r"render_mode: got 'rgb'; allowed: .*'rgb_array'"):
        gofish_env.GoFishEnv(render_mode="rgb")


def test_a_label_too_long_for_its_panel_is_cut_with_dots():
    from gofish_env.picture import line_width, shortened

    long = "Seat 0 · Grandmaster Expert CPU Number One"
    cut = shortened(long, 15, 180)
    assert cut.endswith("...") and long.startswith(cut[:-3].rstrip())
    assert line_width(cut, 15) <= 180 < line_width(long, 15)
    assert shortened("Seat 3 · hard CPU", 15, 180) == "Seat 3 · hard CPU"
