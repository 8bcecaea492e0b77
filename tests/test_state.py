"""The AEC env's global state (``env.state()``, ``env.state_space``): every hand and the
pool's cards, then the public table with absolute seats, for centralized critics."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from helpers import position, preset, random_action
from pettingzoo.test.state_test import test_state as pettingzoo_state_check
from pettingzoo.test.state_test import test_state_space as pettingzoo_state_space_check

import gofish_env
from gofish_env import Rules
from gofish_env.cards import parse_card
from gofish_env.observation import PUBLIC_SECTIONS, StateLayout


def split_state(env) -> dict[str, np.ndarray]:
    return env.unwrapped.state_layout.split(env.state())


def copies_in_deck(rules: Rules, entry: int) -> int:
    """Copies of a state entry's rank (or, with exact-card asks, card) in the deck."""
    if rules.ask_for == "card":
        return 2 if entry == 52 else 1
    return rules.copies_of(entry)


@pytest.mark.parametrize("wrappers", ["classic", "pettingzoo"])
def test_pettingzoo_state_checks_pass_without_a_warning(wrappers):
    env = gofish_env.env(players=3, wrappers=wrappers, illegal_action="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pettingzoo_state_space_check(env)
        # Random actions from the mask only: an illegal one would end the game at once.
        env.reset(seed=5)
        state_0 = env.state()
        rng = random.Random(5)
        for agent in env.agent_iter():
            dead = env.terminations[agent] or env.truncations[agent]
            env.step(None if dead else random_action(env, rng))
            state = env.state()
            assert state.shape == state_0.shape and state.dtype == np.float32
            assert env.state_space.contains(state)
        # PettingZoo's own loop (random actions, so illegal ones end games early).
        env = gofish_env.env(players=3, wrappers=wrappers)
        warnings.filterwarnings("ignore", message=".*Illegal move made.*")
        pettingzoo_state_check(env, num_cycles=30)


def test_the_state_of_an_exact_position():
    # Seat 1 to move; the pool's top is 9S then KD, the rest of the deck under them.
    game = position(
        [["2C", "2D", "7H"], ["2H", "KS", "KC", "AD"], ["QS"]],
        pool_top=["9S", "KD"],
        first_player=1,
    )
    env = gofish_env.raw_env(players=3)
    env.reset(options={"game": game})
    state = split_state(env)
    expected_hands = np.zeros((3, 13))
    for seat, hand in enumerate([["2C", "2D", "7H"], ["2H", "KS", "KC", "AD"], ["QS"]]):
        for card in hand:
            expected_hands[seat, parse_card(card)[0]] += 1
    np.testing.assert_array_equal(state["hands"] * 4, expected_hands)
    in_pool = 4 - expected_hands.sum(axis=0)
    np.testing.assert_array_equal(state["pool"] * 4, in_pool)
    assert in_pool.sum() == 52 - 8 == game.pool_size
    np.testing.assert_array_equal(state["to_move"], [0, 1, 0])
    assert state["pool_size"][0] == np.float32(44 / 52)


def public_sections(layout) -> list[str]:
    """The public sections the layout has (``match_scores`` only in match play)."""
    return [name for name in PUBLIC_SECTIONS if name in layout.sections]


@pytest.mark.parametrize(
    "rules",
    [
        Rules(players=4),
        Rules(players=3, match_target=15),
        Rules(players=4, match_target=12, game_end="hand_or_pool_empty"),
    ],
    ids=["table", "match", "match-hand-or-pool-empty"],
)
def test_the_public_sections_are_seat_0s_observation(rules):
    env = gofish_env.raw_env(rules=rules)
    env.reset(seed=11)
    rng = random.Random(11)
    layout = env.state_layout
    names = public_sections(layout)
    assert ("match_scores" in names) == bool(rules.match_target)
    steps = 0
    while env.agents:
        state = layout.split(env.state())
        seen = env.layout.split(env.observe("player_0")["observation"])
        for name in names:
            np.testing.assert_array_equal(state[name], seen[name], err_msg=name)
        if rules.match_target:  # the match's scores, by absolute seat, over the target
            expected = [min(score / rules.match_target, 1.0) for score in env.game.scores]
            np.testing.assert_array_equal(state["match_scores"], np.float32(expected))
        agent = env.agent_selection
        dead = env.terminations[agent] or env.truncations[agent]
        env.step(None if dead else random_action(env, rng))
        steps += 1
        if not rules.match_target and steps == 40:
            break
    assert env.game.num_asks > 10
    if rules.match_target:
        assert env.game.is_over and env.game.games_played > 1
        assert layout.split(env.state())["match_scores"].max() == 1.0


@pytest.mark.parametrize(
    "rules",
    [
        Rules(players=4),
        Rules(players=2),
        preset("two_decks"),
        Rules.preset("pairs", jokers=True),
        preset("authors"),
        Rules.preset("authors", jokers=True, set_size=2),
        Rules(players=3, match_target=15),
        Rules.preset("authors", players=3, match_target=12),
    ],
    ids=[
        "table",
        "two-players",
        "two_decks",
        "pairs-jokers",
        "authors",
        "authors-jokers",
        "match",
        "authors-match",
    ],
)
def test_the_state_holds_every_card_at_every_step(rules):
    env = gofish_env.raw_env(rules=rules)
    layout = env.state_layout
    card_asks = rules.ask_for == "card"
    copies = np.array([copies_in_deck(rules, entry) for entry in range(rules.ask_count)])
    rng = random.Random(3)
    steps = 0
    for seed in range(3):
        env.reset(seed=seed)
        while env.agents:
            game = env.game
            state = env.state()
            assert env.state_space.contains(state)
            parts = layout.split(state)
            hands = np.rint(parts["hands"] * copies).astype(int)
            pool = np.rint(parts["pool"] * copies).astype(int)
            for seat in range(rules.players):
                if card_asks:
                    held = np.bincount(game.hand_indices(seat), minlength=rules.ask_count)
                else:
                    held = game.hand_counts(seat)
                np.testing.assert_array_equal(hands[seat], held)
            assert pool.sum() == game.pool_size
            # Every copy of every rank is in a hand, in the pool or in a catch.
            by_rank = np.zeros(rules.ranks, int)
            np.add.at(by_rank, np.arange(rules.ask_count) // (4 if card_asks else 1), pool)
            np.add.at(by_rank, np.arange(rules.ask_count) // (4 if card_asks else 1), hands.sum(0))
            for seat in range(rules.players):
                np.add.at(by_rank, game.catches(seat), rules.set_size)
            np.testing.assert_array_equal(
                by_rank, [rules.copies_of(rank) for rank in range(rules.ranks)]
            )
            agent = env.agent_selection
            dead = env.terminations[agent] or env.truncations[agent]
            env.step(None if dead else random_action(env, rng))
            steps += 1
    assert steps > 60


def test_exact_card_asks_give_one_entry_per_card():
    rules = preset("authors", players=3)
    game = position([["QH", "QS", "2C"], ["QD"], ["5C", "AS"]], pool_top=["KH"], rules=rules)
    env = gofish_env.raw_env(rules=rules)
    env.reset(options={"game": game})
    state = split_state(env)
    assert state["hands"].shape == (3, 52)
    index = {card: (lambda r, s: r * 4 + s)(*parse_card(card)) for card in ["QH", "QS", "QD"]}
    assert set(np.flatnonzero(state["hands"][0])) == {index["QH"], index["QS"], 0}
    assert list(np.flatnonzero(state["hands"][1])) == [index["QD"]]
    assert state["pool"][index["QH"]] == 0 and state["pool"].sum() == 52 - 6


@pytest.mark.parametrize("ask_for", ["rank", "card"])
def test_a_joker_counts_as_one_of_two(ask_for):
    rules = Rules.preset("pairs", jokers=True, ask_for=ask_for, players=3)
    game = position([["JK", "2C"], ["3C"], ["4C"]], pool_top=["JK"], rules=rules)
    env = gofish_env.raw_env(rules=rules)
    env.reset(options={"game": game})
    state = split_state(env)
    joker = rules.ask_count - 1
    assert state["hands"][0, joker] == 0.5 and state["pool"][joker] == 0.5
    assert state["hands"][1:, joker].sum() == 0


def test_reading_the_state_changes_nothing():
    def play(read_state: bool):
        env = gofish_env.env(players=4)
        env.reset(seed=21)
        rng = random.Random(21)
        seen = []
        for agent in env.agent_iter():
            if read_state:
                env.state()
            observation, reward, terminated, truncated, _ = env.last()
            seen.append((agent, observation["observation"].tobytes(), reward))
            dead = terminated or truncated
            env.step(None if dead else random_action(env, rng))
        return seen, env.unwrapped.game.events

    assert play(True) == play(False)


def test_the_state_before_reset_is_refused():
    with pytest.raises(RuntimeError, match=r"state\(\) before reset\(\)"):
        gofish_env.raw_env(players=2).state()
    with pytest.raises(AssertionError, match="reset"):
        gofish_env.env(players=2).state()


def test_the_hidden_cards_change_the_state_but_not_its_public_sections():
    # The same public start, seat 1 and seat 2 holding different cards of the ranks unseen.
    first = position([["2C", "3C"], ["4C", "5C"], ["6C", "7C"]], pool_top=["8C"])
    second = position([["2C", "3C"], ["6C", "7C"], ["4C", "5C"]], pool_top=["8C"])
    states = []
    for game in (first, second):
        env = gofish_env.raw_env(players=3)
        env.reset(options={"game": game})
        env.step(env.codec.to_action(0, 1, 0))  # seat 0 asks seat 1 for 2s: a miss either way
        states.append(split_state(env))
    for name in public_sections(env.state_layout):
        np.testing.assert_array_equal(states[0][name], states[1][name], err_msg=name)
    assert not np.array_equal(states[0]["hands"], states[1]["hands"])


def test_the_state_layout_scales_as_the_docs_say():
    plain = (Rules(players=2), Rules(players=6), preset("authors"), preset("two_decks"))
    matches = tuple(rules.replace(match_target=20) for rules in plain)
    for rules in plain + matches:
        for history in (0, 8):
            layout = StateLayout(rules, history)
            players, asks, ranks = rules.players, rules.ask_count, rules.ranks
            expected = (
                players * asks
                + asks
                + 3 * players
                + players * ranks
                + 2 * players
                + 1
                + history * (1 + 2 * players + asks + 3)
                + (players if rules.match_target else 0)  # match_scores
            )
            assert layout.size == expected
            assert gofish_env.raw_env(rules=rules, history=history).state_space.shape == (expected,)


# Sizes (history 0 and 8) at the commit before match_scores: rules without a match keep them.
@pytest.mark.parametrize(
    ("rules", "size_0", "size_8"),
    [
        (Rules(), 138, 338),
        (Rules(players=2), 76, 244),
        (Rules.preset("authors", players=3), 263, 759),
        (Rules.preset("pairs", jokers=True), 147, 355),
        (Rules.preset("two_decks", players=5), 169, 385),
    ],
)
def test_a_state_without_a_match_is_as_before_and_a_match_adds_its_scores(rules, size_0, size_8):
    for history, size in ((0, size_0), (8, size_8)):
        plain = StateLayout(rules, history)
        assert plain.size == size and "match_scores" not in plain.sections
        match = StateLayout(rules.replace(match_target=25), history)
        assert match.size == size + rules.players
        section = match["match_scores"]
        assert section.start == plain["out"].stop and section.shape == (rules.players,)
        # Still copied from the observation in as few runs as before: it follows out in both.
        assert len(match.public_runs) == len(plain.public_runs)
