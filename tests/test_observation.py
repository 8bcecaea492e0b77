"""The observation (``gofish_env.observation``): the layout is declared once and documents
itself (docs/observation.md is generated from it), and the fast ObservationEncoder gives
exactly what the reference ``encode`` gives. The observation each env seat gets (dtype,
bounds, contents) is checked in tests/test_aec_env.py."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gofish_env
from gofish_env import Rules
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.match import new_game
from gofish_env.observation import ObservationEncoder, ObservationLayout, encode, observation_doc

ROOT = Path(__file__).resolve().parent.parent

SETUPS = [
    ("table", 2),
    ("table", 4),
    ("table", 6),
    ("bicycle", 3),
    ("family", 4),
    ("quick", 3),
    ("ocean", 4),
    ("pairs", 3),
    ("two_decks", 5),
    ("authors", 4),
]


def play_and_compare(rules: Rules, seed: int, history: int, batch: int) -> int:
    """Random play; every ``batch`` asks, every seat's fast observation is compared with
    the reference. Returns the number of comparisons."""
    layout = ObservationLayout(rules, history)
    game = new_game(rules, seed)
    tracker = KnowledgeTracker(game)
    encoder = ObservationEncoder(layout, tracker.public)
    chooser = random.Random(seed)
    compared = 0
    while True:
        tracker.sync()
        encoder.update(game.events_since(encoder.num_events))
        for seat in range(rules.players):
            fast = encoder.observe(
                seat, game.hand_counts(seat), game.current_player, game.hand_card_counts(seat)
            )
            reference = encode(tracker.view(seat), layout)
            assert fast.dtype == reference.dtype == np.float32
            assert np.array_equal(fast, reference), (seat, game.num_asks)
            compared += 1
        if game.is_over:
            return compared
        for _ in range(batch):
            if game.is_over:
                break
            game.ask(*chooser.choice(game.legal_asks()))


@pytest.mark.parametrize(("preset", "players"), SETUPS)
def test_fast_encoder_matches_the_reference_after_every_ask(preset, players):
    rules = Rules.preset(preset, players=players)
    assert sum(play_and_compare(rules, seed, 8, batch=1) for seed in range(4)) > 0


@pytest.mark.parametrize("batch", [2, 5])
def test_fast_encoder_matches_when_events_arrive_in_batches(batch):
    compared = sum(play_and_compare(Rules(players=4), seed, 3, batch) for seed in range(5))
    assert compared > 0


@pytest.mark.parametrize(
    "rules",
    [
        Rules(players=3, match_target=12),
        Rules(players=2, match_target=20, game_end="hand_or_pool_empty"),
        Rules.preset("authors", players=4, match_target=9),
    ],
    ids=["table-3", "hand-or-pool-empty-2", "authors-4"],
)
def test_fast_encoder_matches_across_the_games_of_a_match(rules):
    # match_scores included: the layout has it, and both encoders fill it.
    assert "match_scores" in ObservationLayout(rules, 4).sections
    assert play_and_compare(rules, 7, 4, batch=3) > 0


def test_fast_encoder_without_history():
    assert play_and_compare(Rules(players=4), 1, 0, batch=1) > 0


# ----------------------------------------------------------------------------- match play

MATCHES = [
    Rules(players=2, match_target=20),
    Rules(players=3, match_target=20),
    Rules(players=4, match_target=12, game_end="hand_or_pool_empty"),
    Rules(players=3, match_target=9, game_end="hand_or_pool_empty", deal=3),
    Rules.preset("authors", players=3, match_target=10),
    Rules.preset("pairs", players=2, match_target=40),
]


def expected_match_scores(match, seat: int) -> np.ndarray:
    """``Match.scores`` from ``seat``'s seat on, over the target (1 at most)."""
    players, target = match.players, match.rules.match_target
    scores = match.scores
    return np.array(
        [min(scores[(seat + k) % players] / target, 1.0) for k in range(players)], np.float32
    )


@pytest.mark.parametrize("rules", MATCHES, ids=lambda rules: rules.describe())
def test_every_seat_sees_the_match_scores_at_every_step(rules):
    env = gofish_env.raw_env(rules=rules, history=2)
    rng = np.random.default_rng(0)
    steps = games = 0
    seen_nonzero = seen_mid_game = False
    for seed in range(3):
        env.reset(seed=seed)
        while True:
            match = env.game
            for agent, seat in env.agent_name_mapping.items():
                observation = env.observe(agent)["observation"]
                assert env.observation_space(agent)["observation"].contains(observation)
                parts = env.layout.split(observation)
                np.testing.assert_array_equal(
                    parts["match_scores"], expected_match_scores(match, seat), err_msg=agent
                )
                seen_nonzero |= parts["match_scores"].any()
                seen_mid_game |= bool(parts["match_scores"].any() and parts["catch_counts"].any())
            if not env.agents:
                break
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            mask = env.observe(agent)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
            steps += 1
        assert match.is_over
        # At the end: the winners' scores reached the target.
        final = expected_match_scores(match, 0)
        assert all(final[seat] == 1.0 for seat in match.winners)
        games += match.games_played
    assert games > 3 and steps > 100
    assert seen_nonzero and seen_mid_game


def test_a_game_ending_without_a_catch_leaves_the_match_scores_as_they_were():
    # game_end="hand_or_pool_empty" with one card dealt to each of 6 seats ends many games
    # at the first emptied hand, before any catch.
    rules = Rules(players=6, match_target=3, game_end="hand_or_pool_empty", deal=1)
    env = gofish_env.raw_env(rules=rules, history=0)
    rng = np.random.default_rng(1)
    catchless = 0
    for seed in range(10):
        env.reset(seed=seed)
        while env.agents:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
            for seat in range(rules.players):
                observed = env.layout.split(env.observe(f"player_{seat}")["observation"])
                np.testing.assert_array_equal(
                    observed["match_scores"], expected_match_scores(env.game, seat)
                )
        catchless += sum(1 for result in env.game.results if not any(result))
    assert catchless > 0


def test_match_scores_past_the_target_read_1():
    # Two seats, a target of 3: the first game's 13 catches put a seat past it.
    env = gofish_env.raw_env(rules=Rules(players=2, match_target=3))
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    while env.agents:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
    match = env.game
    assert max(match.scores) > 3
    for seat in range(2):
        observation = env.observe(f"player_{seat}")["observation"]
        scores = env.layout.split(observation)["match_scores"]
        assert list(scores) == [min(match.scores[(seat + k) % 2] / 3, 1.0) for k in range(2)]
        assert scores.max() == 1.0 and observation.max() <= 1.0


def test_match_scores_follow_the_events_alone():
    # The encoder reads the match's score from its public events (each GameOver), so one made
    # partway through a match and given the whole log agrees with the one that followed it.
    rules = Rules(players=3, match_target=25)
    match = new_game(rules, 3)
    chooser = random.Random(3)
    while match.games_played < 2:
        match.ask(*chooser.choice(match.legal_asks()))
    tracker = KnowledgeTracker(match)
    layout = ObservationLayout(rules)
    encoder = ObservationEncoder(layout, tracker.public)
    encoder.update(match.events)
    assert sum(match.scores) > 0
    for seat in range(3):
        view = tracker.view(seat)
        assert list(view.match_scores) == list(match.scores)
        fast = encoder.observe(
            seat, match.hand_counts(seat), match.current_player, match.hand_card_counts(seat)
        )
        np.testing.assert_array_equal(
            layout.split(fast)["match_scores"], expected_match_scores(match, seat)
        )
        np.testing.assert_array_equal(fast, encode(view, layout))


# ----------------------------------------------------------------------------- the layout

# Sizes (history 0 and 8) at the commit before match_scores: rules without a match keep them.
SIZES_WITHOUT_A_MATCH = [
    (Rules(), 281, 481),
    (Rules(players=2), 115, 283),
    # 198 + 52 own cards + 2 x 2 opponents x 52 cards held and lacked
    (Rules.preset("authors", players=3), 458, 954),
    (Rules.preset("pairs", jokers=True), 301, 509),
    (Rules.preset("two_decks", players=5), 364, 580),
]


@pytest.mark.parametrize(("rules", "size_0", "size_8"), SIZES_WITHOUT_A_MATCH)
def test_layouts_without_a_match_have_no_match_scores(rules, size_0, size_8):
    assert ObservationLayout(rules, 0).size == size_0
    assert ObservationLayout(rules, 8).size == size_8
    assert "match_scores" not in ObservationLayout(rules).sections


@pytest.mark.parametrize(("rules", "size_0", "size_8"), SIZES_WITHOUT_A_MATCH)
def test_match_play_adds_match_scores_after_out(rules, size_0, size_8):
    match = rules.replace(match_target=30)
    players = rules.players
    for history, size in ((0, size_0), (8, size_8)):
        plain, layout = ObservationLayout(rules, history), ObservationLayout(match, history)
        assert layout.size == size + players
        before = list(plain.sections)
        after_out = before.index("out") + 1
        assert list(layout.sections) == [
            *before[:after_out],
            "match_scores",
            *before[after_out:],
        ]
        section = layout["match_scores"]
        assert section.shape == (players,) and section.start == plain["out"].stop
        assert "/ 30" in section.meaning


def test_observation_layout_is_declared_once_with_sections_covering_the_vector():
    layout = ObservationLayout(Rules())
    stops = 0
    for section in layout.sections.values():
        assert section.start == stops
        assert section.size == int(np.prod(section.shape))
        stops = section.stop
    assert stops == layout.size
    assert layout.markdown() in gofish_env.raw_env.__doc__


def test_docs_observation_md_is_the_generated_layout():
    doc = (ROOT / "docs" / "observation.md").read_text()
    assert doc == observation_doc()
    printed = subprocess.run(
        [sys.executable, "-m", "gofish_env.observation"],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout
    assert printed == doc
