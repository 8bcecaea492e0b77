"""The PettingZoo AEC env (issue 3): PettingZoo's own API and seed tests, the mask, illegal
actions, copies, truncation, exact positions, when and to whom rewards are paid, render,
observation bounds, match play and the infos. The action codec is tested in
tests/test_actions.py, the reward schemes in tests/test_rewards.py and the observation layout
in tests/test_observation.py.

Positions come from ``helpers.position`` (named hands, named pool top, every other card after
it in deck order, or with ``rest=seat`` laid as that seat's catches: a position in play).
Rank indices: 2 -> 0, 5 -> 3, 7 -> 5, 9 -> 7, K -> 11, A -> 12.
"""

from __future__ import annotations

import copy
import pickle
import random
import re

import gymnasium as gym
import numpy as np
import pytest
from helpers import (
    TABLE_POINTS,
    mask_of,
    plain_infos,
    position,
    preset,
    random_action,
    rank,
    rewards_after,
    snapshot,
)
from pettingzoo.test import api_test, seed_test

import gofish_env
from gofish_env import Game, IllegalAsk, Rules
from gofish_env.aec_env import INFO_KEYS
from gofish_env.events import Ask, Catch, EmptyHandDraw, GameOver, Hit
from gofish_env.observation import ObservationLayout

PRESETS = ("table", "bicycle", "family", "quick", "ocean", "pairs", "two_decks", "authors")
FIVE, SEVEN, NINE, KING = rank("5"), rank("7"), rank("9"), rank("K")


def pettingzoo_wrapped(**kwargs):
    """``env()`` with PettingZoo's own wrapper chain instead of the one-layer classic one."""
    return gofish_env.env(wrappers="pettingzoo", **kwargs)


FACTORIES = [gofish_env.env, pettingzoo_wrapped, gofish_env.raw_env]
FACTORY_IDS = ["env", "env_pettingzoo_wrappers", "raw_env"]
WRAPPERS = ["classic", "pettingzoo"]


def play_to_end(env, rng: random.Random, limit: int = 100_000) -> None:
    """Legal random actions until every agent has taken its dead step."""
    for _ in range(limit):
        if not env.agents:
            return
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
        else:
            env.step(random_action(env, rng))
    raise AssertionError("the episode did not end")


def env_state(env) -> tuple:
    """Everything an AEC env shows, for comparing two envs (or one env before and after)."""
    raw = env.unwrapped
    observations = {
        agent: {key: value.tolist() for key, value in raw.observe(agent).items()}
        for agent in raw.possible_agents
    }
    return (
        raw.agent_selection,
        list(raw.agents),
        dict(raw.rewards),
        dict(raw._cumulative_rewards),
        dict(raw.terminations),
        dict(raw.truncations),
        plain_infos(raw.infos),
        observations,
        snapshot(raw.game),
    )


# ----------------------------------------------------------------------------- PettingZoo tests

API_CASES = [
    ("table", 2),
    ("table", 3),
    ("table", 4),
    ("table", 5),
    ("table", 6),
    ("bicycle", 3),
    ("bicycle", 6),
    ("family", 5),
    ("quick", 2),
    ("quick", 4),
    ("ocean", 3),
    ("pairs", 4),
    ("pairs", 6),
    ("pairs_jokers", 3),
    ("pairs_jokers", 5),
    ("two_decks", 6),
    ("two_decks", 2),
    ("authors", 4),
    ("authors", 5),
]


# api_test's advice for plain Box observations does not apply to PettingZoo's action-mask
# convention (a Dict of observation and action_mask), which classic envs use too.
@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
@pytest.mark.parametrize("factory", FACTORIES, ids=FACTORY_IDS)
@pytest.mark.parametrize(("name", "players"), API_CASES)
def test_pettingzoo_api_test_passes(factory, name, players):
    api_test(factory(rules=preset(name, players)), num_cycles=1000)


@pytest.mark.parametrize("factory", FACTORIES, ids=FACTORY_IDS)
@pytest.mark.parametrize(("name", "players"), API_CASES)
def test_pettingzoo_seed_test_passes(factory, name, players):
    seed_test(lambda: factory(rules=preset(name, players)), num_cycles=300)


def test_reset_seed_fixes_the_deal_and_different_seeds_deal_differently():
    env_a, env_b = gofish_env.raw_env(players=4), gofish_env.raw_env(players=4)
    env_a.reset(seed=11)
    env_b.reset(seed=11)
    assert snapshot(env_a.game) == snapshot(env_b.game)
    deals = set()
    for seed in range(6):
        env_a.reset(seed=seed)
        deals.add(tuple(env_a.game.pool_cards()))
    assert len(deals) == 6
    # Without a seed each reset continues the seeded stream: two envs seeded alike agree.
    env_a.reset(seed=3)
    env_b.reset(seed=3)
    env_a.reset()
    env_b.reset()
    assert snapshot(env_a.game) == snapshot(env_b.game)


def test_metadata_agents_and_spaces():
    env = gofish_env.env(players=5)
    env.reset(seed=0)
    raw = env.unwrapped
    assert raw.metadata["name"] == "gofish_v0"
    assert set(raw.metadata["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert raw.possible_agents == [f"player_{seat}" for seat in range(5)]
    assert env.agents == raw.possible_agents
    for agent in raw.possible_agents:
        assert env.action_space(agent).n == 4 * 13
        space = env.observation_space(agent)
        assert space["observation"].shape == (ObservationLayout(Rules(players=5)).size,)
        assert space["observation"].dtype == np.float32
        assert space["action_mask"].shape == (4 * 13,)
        assert space["action_mask"].dtype == np.int8
    assert gofish_env.raw_env(rules=Rules.preset("pairs", jokers=True)).action_space(
        "player_0"
    ).n == (3 * 14)
    assert gofish_env.raw_env(rules=Rules.preset("authors", players=3)).action_space(
        "player_0"
    ).n == (2 * 52)


def test_players_defaults_to_four_or_to_the_rules():
    assert gofish_env.raw_env().rules == Rules()
    assert gofish_env.raw_env(players=3).rules == Rules(players=3)
    rules = Rules.preset("ocean", players=2)
    assert gofish_env.raw_env(rules=rules).rules == rules
    assert gofish_env.raw_env(players=2, rules=rules).rules == rules


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"players": 3, "rules": Rules(players=4)}, "players"),
        ({"players": 5, "rules": Rules.preset("pairs")}, "players"),
        ({"players": 7}, "players"),
        ({"players": 1}, "players"),
        ({"rules": "chess"}, "rules: unknown preset 'chess'; allowed: table, bicycle"),
        ({"rules": {"players": 3}}, "rules"),
        ({"max_asks": 0}, "max_asks"),
        ({"max_asks": 2.5}, "max_asks"),
        ({"history": -1}, "history"),
        ({"render_mode": "rgb"}, "render_mode"),
        ({"render_view": 4}, "render_view"),
        ({"reward": "points"}, "reward"),
    ],
)
@pytest.mark.parametrize("factory", FACTORIES, ids=FACTORY_IDS)
def test_bad_arguments_raise_value_error_naming_the_field(factory, kwargs, field):
    with pytest.raises(ValueError, match=field):
        factory(**kwargs)


def test_bad_illegal_action_and_wrappers_choices_raise():
    with pytest.raises(ValueError, match="illegal_action"):
        gofish_env.env(illegal_action="ignore")
    with pytest.raises(ValueError, match="wrappers"):
        gofish_env.env(wrappers="none")


@pytest.mark.parametrize("penalty", ["x", "1.5", True, None, float("nan"), float("inf")])
@pytest.mark.parametrize("wrappers", ["classic", "pettingzoo"])
def test_an_illegal_reward_that_is_not_a_finite_number_is_refused(penalty, wrappers):
    with pytest.raises(ValueError, match=r"illegal_reward: got .*; allowed: a finite number"):
        gofish_env.env(illegal_reward=penalty, wrappers=wrappers)


def test_an_illegal_reward_may_be_a_numpy_number():
    env = gofish_env.env(players=2, illegal_reward=np.float32(-2.0))
    env.reset(seed=0)
    offender = env.agent_selection
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"] == 0)[0]))
    assert env.rewards[offender] == -2.0 and type(env.rewards[offender]) is float


# ----------------------------------------------------------------------------- the mask


@pytest.mark.parametrize(
    ("name", "players"),
    [
        ("table", 4),
        ("table", 2),
        ("bicycle", 5),
        ("quick", 3),
        ("pairs_jokers", 4),
        ("authors", 3),
        ("two_decks", 3),
        ("family", 6),
        ("ocean", 4),
    ],
)
def test_mask_is_exactly_the_legal_asks_of_the_seat_to_move(name, players):
    rules = preset(name, players)
    env = gofish_env.env(rules=rules)
    raw = env.unwrapped
    codec = raw.codec
    rng = random.Random(players)
    checked = 0
    for seed in range(3):
        env.reset(seed=seed)
        while not raw.game.is_over and env.agents:
            agent = env.agent_selection
            seat = raw.agent_name_mapping[agent]
            assert raw.game.current_player == seat
            legal = {codec.to_action(seat, *ask) for ask in raw.game.legal_asks()}
            assert legal
            for other in raw.possible_agents:
                mask = env.observe(other)["action_mask"]
                assert mask.dtype == np.int8
                assert mask.shape == (codec.size,)
                assert set(np.unique(mask)) <= {0, 1}
                if other == agent:
                    assert set(np.flatnonzero(mask)) == legal
                else:
                    assert not mask.any(), f"{other} is not to move but has a mask"
                checked += 1
            if raw.truncations[agent]:
                break
            env.step(random_action(env, rng))
        if raw.game.is_over:
            for other in raw.possible_agents:
                assert not env.observe(other)["action_mask"].any()
    assert checked > 100


# ----------------------------------------------------------------------------- illegal actions


def midgame_raw_env(rules: Rules, seed: int, steps: int):
    env = gofish_env.raw_env(rules=rules)
    env.reset(seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if env.game.is_over:
            break
        env.step(random_action(env, rng))
    assert not env.game.is_over
    return env


@pytest.mark.parametrize("name", ["table", "bicycle", "authors", "pairs_jokers"])
def test_raw_env_illegal_action_raises_illegal_ask_and_changes_nothing(name):
    env = midgame_raw_env(preset(name, 3), seed=5, steps=12)
    mask = mask_of(env)
    illegal = np.flatnonzero(mask == 0)
    assert illegal.size
    before = env_state(env)
    events = env.game.events
    asks = env.game.num_asks
    for action in illegal[:: max(1, illegal.size // 25)]:
        with pytest.raises(IllegalAsk):
            env.step(int(action))
        assert env_state(env) == before
        assert env.game.events == events
    for action in (-1, mask.size):
        with pytest.raises(ValueError):
            env.step(action)
        assert env_state(env) == before
    # The env still plays on from the same place.
    env.step(int(np.flatnonzero(mask)[0]))
    assert env.game.num_asks == asks + 1


def test_raw_env_refuses_asking_a_seat_with_no_cards():
    # Seat 2 is out (no cards, empty pool): asking it is refused with the reason.
    game = position(["KH KC 9D", "KD KS 9C 9H 9S", ""], pool_top=[], rules=Rules(players=3), rest=1)
    env = gofish_env.raw_env(players=3)
    env.reset(options={"game": game})
    assert not mask_of(env)[env.codec.to_action(0, 2, KING)]
    before = env_state(env)
    with pytest.raises(IllegalAsk, match="seat 2"):
        env.step(env.codec.to_action(0, 2, KING))
    assert env_state(env) == before


@pytest.mark.parametrize("wrappers", WRAPPERS)
@pytest.mark.parametrize("illegal_reward", [-1.0, -5.0])
def test_wrapped_env_ends_the_game_on_an_illegal_action_with_the_penalty(illegal_reward, wrappers):
    env = gofish_env.env(players=3, illegal_reward=illegal_reward, wrappers=wrappers)
    env.reset(seed=2)
    rng = random.Random(2)
    for _ in range(5):
        env.step(random_action(env, rng))
    offender = env.agent_selection
    asks = env.unwrapped.game.num_asks
    bad = int(np.flatnonzero(mask_of(env) == 0)[0])
    env.step(bad)
    assert env.unwrapped.game.num_asks == asks  # the illegal ask was not played
    assert all(env.terminations.values())
    assert env.rewards[offender] == illegal_reward
    assert all(reward == 0 for agent, reward in env.rewards.items() if agent != offender)
    finals = {}
    while env.agents:
        agent = env.agent_selection
        _, reward, terminated, _, _ = env.last()
        assert terminated
        finals[agent] = reward
        env.step(None)
    assert finals[offender] == illegal_reward
    assert set(finals) == set(env.unwrapped.possible_agents)


@pytest.mark.parametrize("wrappers", WRAPPERS)
def test_wrapped_env_with_illegal_action_raise_raises_and_changes_nothing(wrappers):
    env = gofish_env.env(players=4, illegal_action="raise", wrappers=wrappers)
    env.reset(seed=9)
    before = env_state(env)
    bad = int(np.flatnonzero(mask_of(env) == 0)[0])
    with pytest.raises(IllegalAsk):
        env.step(bad)
    assert env_state(env) == before


@pytest.mark.parametrize("wrappers", WRAPPERS)
def test_wrapped_env_refuses_out_of_range_actions(wrappers):
    env = gofish_env.env(players=4, wrappers=wrappers)
    env.reset(seed=1)
    with pytest.raises((AssertionError, ValueError)):
        env.step(3 * 13)


# ----------------------------------------------------------------------------- copies


@pytest.mark.parametrize("factory", FACTORIES, ids=FACTORY_IDS)
@pytest.mark.parametrize("name", ["table", "bicycle", "authors", "two_decks", "pairs_jokers"])
def test_pickle_and_deepcopy_mid_game_continue_identically(factory, name):
    env = factory(rules=preset(name, 3), reward="catches+tiebreak", render_mode="ansi")
    env.reset(seed=21)
    rng = random.Random(21)
    for _ in range(15):
        env.step(random_action(env, rng))
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    steps = 0
    while env.agents:
        state, text, last = env_state(env), env.render(), last_of(env)
        for clone in clones:
            assert env_state(clone) == state
            assert clone.render() == text
            assert last_of(clone) == last
        agent = env.agent_selection
        dead = env.terminations[agent] or env.truncations[agent]
        action = None if dead else random_action(env, rng)
        for each in (env, *clones):
            each.step(action)
        steps += 1
    assert steps > 5
    assert all(not clone.agents for clone in clones)


def last_of(env) -> tuple:
    observation, reward, terminated, truncated, info = env.last()
    plain = {key: value.tolist() for key, value in observation.items()}
    return plain, reward, terminated, truncated, plain_infos({"info": info})


# ----------------------------------------------------------------------------- truncation


@pytest.mark.parametrize("factory", FACTORIES, ids=FACTORY_IDS)
def test_truncation_after_max_asks_is_truncation_not_termination(factory):
    env = factory(players=4, max_asks=5)
    env.reset(seed=4)
    rng = random.Random(4)
    for ask in range(5):
        assert not any(env.truncations.values())
        assert env.unwrapped.game.num_asks == ask
        env.step(random_action(env, rng))
    assert not env.unwrapped.game.is_over
    assert all(env.truncations.values())
    assert not any(env.terminations.values())
    seen = set()
    while env.agents:
        agent = env.agent_selection
        _, _, terminated, truncated, _ = env.last()
        assert truncated and not terminated
        seen.add(agent)
        env.step(None)
    assert seen == set(env.unwrapped.possible_agents)


# ----------------------------------------------------------------------------- exact positions


def test_reset_with_a_game_starts_from_that_exact_position():
    rules = Rules(players=3)
    hands = [["7H", "7C", "QS", "4D", "9C"], ["7S", "2C", "2D"], ["QH", "QD", "AC", "KS"]]
    pool = position(hands, pool_top=["2H"], rules=rules).pool_cards()
    assert pool[0] == "2H" and len(pool) == 52 - 12
    game = Game.from_hands(hands, pool, rules=rules, first_player=2)
    env = gofish_env.raw_env(rules=rules)
    env.reset(seed=123, options={"game": game})
    assert env.agent_selection == "player_2"
    for seat in range(3):
        assert env.game.hand(seat) == game.hand(seat)
        own = env.layout.split(env.observe(f"player_{seat}")["observation"])["own_hand"]
        assert np.allclose(own * env.layout.max_held, game.hand_counts(seat))
    assert env.game.pool_cards() == pool
    # The env plays a copy: the game given is left as it was.
    before = snapshot(game)
    env.step(env.codec.to_action(2, 0, rank("Q")))
    assert snapshot(game) == before
    assert env.game.hand(2).count("QS") == 1
    # A later reset without a game deals a fresh random game again.
    env.reset(seed=5)
    assert env.game.pool_size == 52 - 3 * 7


def test_a_position_in_play_pays_nothing_for_the_catches_before_it():
    # 37 random asks into a game, three catches laid: the first step from there pays only
    # what it earns, as the same position written out with Game.from_hands does.
    rules = Rules(players=3)
    game = Game(rules, seed=3)
    chooser = random.Random(0)
    while sum(len(game.catches(seat)) for seat in range(3)) < 3:
        game.ask(*chooser.choice(game.legal_asks()))
    written = Game.from_hands(
        [game.hand(seat) for seat in range(3)],
        game.pool_cards(),
        rules=rules,
        first_player=game.current_player,
        catches=[game.catches(seat) for seat in range(3)],
    )
    paid = []
    for start in (game, written):
        env = gofish_env.raw_env(rules=rules, reward="catches")
        env.reset(options={"game": start})
        assert all(reward == 0 for reward in env.rewards.values())
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
        paid.append(env.rewards)
    assert paid[0] == paid[1]
    assert sum(paid[0].values()) <= 1  # at most the one catch this ask can lay
    # The same in the single-agent envs, the compiled one included.
    learner = game.current_player

    def lowest(observation, mask):
        return int(np.flatnonzero(mask)[0])

    for make in (
        lambda: gofish_env.GoFishEnv(rules=rules, seat=learner, opponents=lowest),
        lambda: gym.make_vec("GoFish-v0", 1, rules=rules, seat=learner, opponents=lowest),
    ):
        first = []
        for start in (game, written):
            env = make()
            if isinstance(env, gym.vector.VectorEnv):
                _, infos = env.reset(options={"games": [start]})
                action = np.array([lowest(None, infos["action_mask"][0])])
            else:
                _, info = env.reset(options={"game": start})
                action = lowest(None, info["action_mask"])
            first.append(float(np.sum(env.step(action)[1])))
        assert first[0] == first[1] <= 1


@pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be")
@pytest.mark.filterwarnings("ignore:Observation is not a NumPy array")
def test_a_game_that_is_over_is_refused_and_a_deal_that_ends_the_game_is_dealt_again():
    # Pairs of a 2-card deal to 6 seats, the first hand emptied by a catch wins: about a
    # third of the deals are over at once. An episode starts at zero reward with a move.
    rules = Rules(players=6, set_size=2, winner="first_empty", deal=2)
    over = next(game for game in (Game(rules, seed=s) for s in range(100)) if game.is_over)
    env = gofish_env.raw_env(rules=rules)
    with pytest.raises(ValueError, match=r"options\['game'\]: the game is over"):
        env.reset(options={"game": over})
    for seed in range(40):
        env.reset(seed=seed)
        assert not env.game.is_over and env.agents
        assert all(reward == 0 for reward in env._cumulative_rewards.values())
    api_test(gofish_env.env(rules=rules), num_cycles=30)


def test_reset_with_a_game_of_other_rules_raises():
    env = gofish_env.raw_env(players=3)
    with pytest.raises(ValueError, match="options"):
        env.reset(options={"game": Game(Rules(players=4), seed=1)})
    with pytest.raises(ValueError, match="options"):
        env.reset(options={"game": Game(Rules.preset("family", players=3), seed=1)})


def test_reset_with_a_game_under_match_play_raises_since_a_match_starts_from_a_deal():
    rules = Rules(players=3, match_target=15)
    env = gofish_env.raw_env(rules=rules)
    with pytest.raises(ValueError, match=r"options\['game'\]: the rules play a match"):
        env.reset(options={"game": Game(rules, seed=1)})


@pytest.mark.parametrize("game", ["x", None, 7])
def test_reset_with_something_that_is_not_a_game_raises_and_keeps_the_episode(game):
    env, twin = gofish_env.raw_env(players=3), gofish_env.raw_env(players=3)
    env.reset(seed=2)
    twin.reset(seed=2)
    before = env.game
    with pytest.raises(ValueError, match=r"options\['game'\]: got .*; allowed: a gofish_env.Game"):
        env.reset(seed=99, options={"game": game})
    assert env.game is before
    env.reset()  # the refused reset did not take its seed either
    twin.reset()
    assert [env.game.hand(seat) for seat in range(3)] == [twin.game.hand(s) for s in range(3)]
    assert env.game.pool_cards() == twin.game.pool_cards()


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda env: env.observe("player_0"), "observe"),
        (lambda env: env.render(), "render"),
        (lambda env: env.last(), "last"),
        (lambda env: env.state(), "state"),
    ],
)
def test_the_raw_env_refuses_reading_before_reset_by_name(call, name):
    env = gofish_env.raw_env(players=3, render_mode="ansi")
    with pytest.raises(RuntimeError, match=rf"{name}\(\) before reset\(\): call reset\(\) first"):
        call(env)


# ----------------------------------------------------------------------------- paying rewards


def catch_by_target_refill() -> Game:
    # Empty hands refill 4 cards. Seat 0 takes seat 1's only card (a 5); seat 1 draws the
    # four 9s at once, on seat 0's turn, and lays them; then draws the 10C, the last card.
    rules = Rules(players=3, empty_hand_draw_count=4)
    return position(
        ["5C 10D 10H 10S", "5D", "5H 5S"],
        pool_top=["9C", "9D", "9H", "9S", "10C"],
        rules=rules,
        rest=2,
    )


@pytest.mark.parametrize(
    ("reward", "expected"),
    [
        ("catches", 1.0),
        ("catch_points", 9 / 14),
        ("catches+tiebreak", 1 + 9 / (TABLE_POINTS + 1)),
        ({"catch": 3.0}, 3.0),
    ],
)
def test_catch_by_the_targets_empty_hand_draw_pays_the_target_on_the_askers_turn(reward, expected):
    env = rewards_after(catch_by_target_refill(), reward, [(1, FIVE)])
    assert env.game.events[1:] == [
        Ask(0, 1, FIVE),
        Hit(0, 1, FIVE, 1),
        EmptyHandDraw(1, 4),
        Catch(1, NINE),
        EmptyHandDraw(1, 1),
    ]
    assert env.agent_selection == "player_0"
    assert env.rewards["player_1"] == pytest.approx(expected)
    assert env.rewards["player_0"] == 0
    assert env.rewards["player_2"] == 0
    assert env.infos["player_1"]["reward_catch"] == 1
    # player_1 receives it in last() on its own next turn.
    assert env._cumulative_rewards["player_1"] == pytest.approx(expected)


@pytest.mark.parametrize("factory", FACTORIES, ids=FACTORY_IDS)
def test_catch_at_the_deal_is_paid_with_the_first_step(factory):
    # An opening deal: seat 2 is dealt four 5s and lays them before the first ask.
    rules = Rules(players=3)
    game = position(
        ["2C 3C 4C 6C 7C 8C 9C", "2D 3D 4D 6D 7D 8D 9D", "5C 5D 5H 5S 2H 3H 4H"],
        pool_top=["JC", "10C"],
        rules=rules,
    )
    assert game.events[1] == Catch(2, FIVE)
    env = factory(rules=rules, reward="catch_points")
    env.reset(options={"game": game})
    # An episode starts at zero reward (PettingZoo's api_test checks it)...
    assert all(reward == 0 for reward in env.rewards.values())
    assert env.last()[1] == 0
    assert env.infos["player_2"]["catches"] == 1
    assert env.infos["player_2"]["tiebreak_points"] == 5
    returns = dict.fromkeys(env.possible_agents, 0.0)
    # ... and the first step (seat 0 takes seat 1's 2: no catch) pays what the deal earned.
    env.step(env.unwrapped.codec.to_action(0, 1, rank("2")))
    assert env.rewards == {"player_0": 0, "player_1": 0, "player_2": pytest.approx(5 / 14)}
    assert env.infos["player_2"]["reward_catch"] == 1
    rng = random.Random(0)
    seen_turn = False
    while not env.unwrapped.game.is_over:
        for agent, reward in env.rewards.items():
            returns[agent] += reward
        if env.agent_selection == "player_2" and not seen_turn:
            # player_2 gets it in last() on its first turn (empty-hand draws are 1 card, so
            # nothing else can have been laid for it in between).
            assert env.last()[1] == pytest.approx(5 / 14)
            seen_turn = True
        env.step(random_action(env, rng))
    for agent, reward in env.rewards.items():
        returns[agent] += reward
    assert seen_turn
    # Paid once: over the game each seat receives exactly its catches' points / 14.
    for seat, agent in enumerate(env.possible_agents):
        assert returns[agent] == pytest.approx(env.unwrapped.game.tiebreak_points(seat) / 14)


# ----------------------------------------------------------------------------- render


def render_position() -> Game:
    return position(
        ["7H 7C QS 4D 9C", "2C 2D 3S", "JH JD 8S AC", "KC KD 6H"], pool_top=["5H"], rules=Rules()
    )


def shown_cards(text: str, cards: list[str]) -> list[str]:
    return [card for card in cards if re.search(rf"(?<![0-9A-Z]){card}(?![0-9A-Z])", text)]


@pytest.mark.parametrize("seat", [0, 1, 2, 3])
def test_render_from_a_seat_shows_its_hand_and_hides_the_others(seat):
    game = render_position()
    env = gofish_env.raw_env(render_mode="ansi", render_view=seat)
    env.reset(options={"game": game})
    env.step(env.codec.to_action(0, 2, SEVEN))  # a miss: seat 0 draws the 5H, privately
    text = env.render()
    assert isinstance(text, str)
    assert shown_cards(text, env.game.hand(seat)) == env.game.hand(seat)
    hidden = [c for s in range(4) if s != seat for c in env.game.hand(s)] + env.game.pool_cards()
    assert shown_cards(text, hidden) == []
    assert f"seat {seat} (you)" in text
    assert env.render_text(seat) == text


def test_render_table_shows_every_hand_and_current_follows_the_seat_to_move(capsys):
    game = render_position()
    env = gofish_env.raw_env(render_mode="ansi", render_view="table")
    env.reset(options={"game": game})
    text = env.render()
    for seat in range(4):
        assert shown_cards(text, game.hand(seat)) == game.hand(seat)
    current = gofish_env.raw_env(render_mode="ansi")
    current.reset(options={"game": game})
    assert current.render() == current.render_text(0)
    current.step(current.codec.to_action(0, 1, SEVEN))  # a miss: seat 1 is to move
    assert current.render() == current.render_text(1)
    assert "seat 1 (you)" in current.render()
    human = gofish_env.raw_env(render_mode="human", render_view=2)
    human.reset(options={"game": game})
    capsys.readouterr()
    assert human.render() is None
    assert capsys.readouterr().out.strip() == human.render_text(2).strip()
    silent = gofish_env.raw_env()
    silent.reset(seed=0)
    assert silent.render() is None


# ----------------------------------------------------------------------------- observation


OBSERVATION_CASES = [
    (name, players)
    for name in (*PRESETS, "pairs_jokers")
    for players in (2, 4, 6)
    if players <= Rules.PRESET_MAX_PLAYERS.get(name, 6)
]


@pytest.mark.parametrize(("name", "players"), OBSERVATION_CASES)
def test_observation_is_float32_in_bounds_and_of_the_declared_size(name, players):
    rules = preset(name, players)
    env = gofish_env.raw_env(rules=rules)
    layout = ObservationLayout(rules)
    rng = random.Random(players)
    checked = 0
    for seed in range(2):
        env.reset(seed=seed)
        while True:
            for agent in env.possible_agents:
                seat = env.agent_name_mapping[agent]
                obs = env.observe(agent)
                vector = obs["observation"]
                assert vector.dtype == np.float32
                assert vector.shape == (layout.size,)
                assert vector.min() >= 0.0 and vector.max() <= 1.0, layout.split(vector)
                assert env.observation_space(agent).contains(obs)
                parts = layout.split(vector)
                assert np.allclose(parts["own_hand"] * layout.max_held, env.game.hand_counts(seat))
                sizes = [env.game.hand_size((seat + k) % players) for k in range(players)]
                assert np.allclose(parts["hand_sizes"] * layout.max_hand, sizes)
                assert parts["pool_size"][0] * rules.deck_size == pytest.approx(env.game.pool_size)
                current = env.game.current_player
                expected_to_move = np.zeros(players)
                if current is not None:
                    expected_to_move[(current - seat) % players] = 1
                assert np.array_equal(parts["to_move"], expected_to_move)
                checked += 1
            if env.game.is_over or env.truncations[env.agent_selection]:
                break
            env.step(random_action(env, rng))
    assert checked > players * 10


@pytest.mark.parametrize("bad", [1.0, True, -1, 4, "seat"])
def test_render_view_must_be_a_seat_current_or_table(bad):
    with pytest.raises(ValueError, match="render_view"):
        gofish_env.raw_env(players=4, render_view=bad)


def test_match_play_pays_the_win_once_for_the_match_not_for_each_game():
    env = gofish_env.raw_env(rules=Rules(players=3, match_target=15), reward="win")
    env.reset(seed=2)
    chooser = random.Random(2)
    paid = dict.fromkeys(env.possible_agents, 0.0)
    while env.game.current_player is not None:
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(chooser.choice(np.flatnonzero(mask).tolist()))
        for agent, reward in env.rewards.items():
            paid[agent] += reward
    match = env.game
    assert match.games_played >= 2
    assert sum(isinstance(event, GameOver) for event in match.events) == match.games_played
    expected = {f"player_{seat}": 1.0 / len(match.winners) for seat in match.winners}
    assert paid == {agent: expected.get(agent, 0.0) for agent in env.possible_agents}


def test_match_play_caps_the_asks_of_each_game_not_of_the_whole_match():
    # Random play: each game here takes well under 200 asks, the match far more.
    env = gofish_env.raw_env(rules=Rules(players=3, match_target=40), max_asks=200)
    env.reset(seed=4)
    chooser = random.Random(4)
    while env.agents and not any(env.truncations.values()):
        if env.terminations[env.agent_selection]:
            env.step(None)
            continue
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(chooser.choice(np.flatnonzero(mask).tolist()))
    match = env.game
    assert match.is_over and not any(env.truncations.values())
    assert max(game.num_asks for game in match.games) < 200 < match.num_asks


def test_match_play_is_truncated_by_a_game_that_makes_max_asks_asks():
    env = gofish_env.raw_env(rules=Rules(players=3, match_target=40), max_asks=5)
    env.reset(seed=4)
    chooser = random.Random(4)
    while not any(env.truncations.values()):
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(chooser.choice(np.flatnonzero(mask).tolist()))
    assert env.game.games_played == 0 and env.game.game.num_asks == 5


def test_match_play_infos_tell_the_game_in_play_after_a_game_ends_without_a_catch():
    # Under "hand_or_pool_empty" a game often ends on a step that lays no catch.
    rules = Rules(players=3, match_target=25, game_end="hand_or_pool_empty")
    env = gofish_env.raw_env(rules=rules)
    env.reset(seed=0)
    chooser = random.Random(0)
    games_without_a_last_catch = 0
    while env.game.current_player is not None:
        games = env.game.games_played
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(chooser.choice(np.flatnonzero(mask).tolist()))
        match = env.game
        if match.games_played > games:
            ended = max(i for i, event in enumerate(match.events) if type(event) is GameOver)
            games_without_a_last_catch += type(match.events[ended - 1]) is not Catch
        for seat, agent in enumerate(env.possible_agents):
            assert env.infos[agent]["catches"] == len(match.catches(seat))
            assert env.infos[agent]["tiebreak_points"] == match.tiebreak_points(seat)
    assert games_without_a_last_catch >= 1


# ----------------------------------------------------------------------------- infos


def assert_fixed_info(info: dict, players: int) -> None:
    assert tuple(info) == INFO_KEYS
    for key, value in info.items():
        if key == "winners":
            assert isinstance(value, np.ndarray) and value.shape == (players,), key
            assert value.dtype == np.int8 and set(value.tolist()) <= {0, 1}
        else:
            assert isinstance(value, int | float) and not isinstance(value, bool), key


@pytest.mark.parametrize("preset", ["table", "family", "pairs", "authors"])
def test_infos_are_numbers_and_fixed_shape_arrays_with_the_same_keys_from_reset(preset):
    rules = Rules.preset(preset, players=3)
    env = gofish_env.env(rules=rules)
    rng = random.Random(5)
    shared_wins = 0
    for seed in range(12):
        env.reset(seed=seed)
        for agent in env.possible_agents:
            assert_fixed_info(env.infos[agent], 3)
            assert not env.infos[agent]["winners"].any()
        game = env.unwrapped.game
        for agent in env.agent_iter():
            observation, _, terminated, truncated, info = env.last()
            assert_fixed_info(info, 3)
            if terminated or truncated:
                flags = [int(seat in game.winners) for seat in range(3)]
                assert info["winners"].tolist() == (flags if terminated else [0, 0, 0])
                assert info["catches"] == len(game.catches(env.possible_agents.index(agent)))
                env.step(None)
                continue
            assert not info["winners"].any()
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        shared_wins += len(game.winners) > 1
    if preset == "family":  # ties share the win there: the arrays keep their shape
        assert shared_wins > 0
