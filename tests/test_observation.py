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
            fast = encoder.observe(seat, game.hand_counts(seat), game.current_player)
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


def test_fast_encoder_matches_across_the_games_of_a_match():
    rules = Rules(players=3, match_target=12)
    assert play_and_compare(rules, 7, 4, batch=3) > 0


def test_fast_encoder_without_history():
    assert play_and_compare(Rules(players=4), 1, 0, batch=1) > 0


# ----------------------------------------------------------------------------- the layout


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
