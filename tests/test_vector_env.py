"""The vector environments: ``GoFishVectorEnv`` (Gymnasium's ``VectorEnv``, what
``gymnasium.make_vec("GoFish-v0")`` builds) is ``GoFishEnv`` game for game, and
``SelfPlayVectorEnv`` is the AEC env game for game.

Each sub-env starts from the same exact position as a ``GoFishEnv``, its opponents decide
as the Python levels with the same random stream (``SplitMixRandom``), the learner takes
the same random legal actions, and observation, reward, termination, truncation and every
info key are compared at every step."""

from __future__ import annotations

import copy
import pickle
import random
import re

import gymnasium as gym
import numpy as np
import pytest
from helpers import position
from test_properties import ALL_CONFIGS
from vector_helpers import SplitMixRandom

import gofish_env
from gofish_env import Game, IllegalAsk, Rules
from gofish_env.actions import ActionCodec
from gofish_env.aec_env import DEFAULT_MAX_ASKS, InvalidAction
from gofish_env.cards import parse_card, parse_rank
from gofish_env.cpus import ExpertCPU, make_cpu
from gofish_env.gym_env import INFO_KEYS, GoFishEnv, OpponentError
from gofish_env.vector import CompiledCPUs, VectorGame
from gofish_env.vector.engine import seed_state
from gofish_env.vector.gym_vector import GoFishVectorEnv
from gofish_env.vector.self_play import SelfPlayVectorEnv

REWARDS = ("catches", "zero_sum", "catches+tiebreak")


class Mirrored:
    """A Python CPU level on a fixed stream (a ``SeatPlayer`` for ``GoFishEnv``)."""

    def __init__(self, level: str, state: int):
        self.cpu = make_cpu(level)
        self.state = state

    def reset(self, seed) -> None:
        self.cpu.reset()
        self.cpu.rng = SplitMixRandom(self.state)

    def act(self, turn) -> int:
        return turn.to_action(*self.cpu.choose(turn.view))


class StreamExpert(ExpertCPU):
    """The expert on a fixed stream, in both envs (each seat gets its own copy)."""

    def __init__(self, state: int = 0):
        super().__init__()
        self.state = state

    def reset(self, seed=None) -> None:
        super().reset()
        self.rng = SplitMixRandom(self.state)


def starting_games(rules: Rules, count: int, seed: int) -> list[Game]:
    """Dealt games in which seat 0 asks first (so nothing moves before the learner)."""
    games, index = [], 0
    while len(games) < count:
        game = Game(rules, seed=seed * 1000 + index)
        index += 1
        if not game.is_over and game.current_player == 0:
            games.append(game)
    return games


def side_by_side(
    rules: Rules, level: str, reward: str, count: int, seed: int, in_python: bool = False
) -> int:
    """``count`` sub-envs beside ``count`` GoFishEnvs, to the end of every episode.
    ``in_python``: the opponents are ``StreamExpert`` objects, which the vector env plays in
    Python (``level`` is then not read)."""
    players = rules.players
    games = starting_games(rules, count, seed)
    streams = [
        [int(seed_state(np.uint64(seed), g * 8 + s)) for s in range(players)] for g in range(count)
    ]
    if in_python:
        opponents = [StreamExpert(streams[0][s]) for s in range(1, players)]
    else:
        opponents = level
    vector = GoFishVectorEnv(count, rules=rules, opponents=opponents, seat=0, reward=reward)
    observations, infos = vector.reset(options={"games": [copy.deepcopy(g) for g in games]})
    if not in_python:
        vector.learners.cpus.state.rng[:] = np.array(streams, np.uint64).ravel()
    envs = []
    for g, game in enumerate(games):
        if in_python:
            seats = [StreamExpert(streams[0][s]) for s in range(1, players)]
        else:
            seats = [Mirrored(level, streams[g][s]) for s in range(1, players)]
        env = GoFishEnv(rules=rules, opponents=seats, seat=0, reward=reward)
        observation, info = env.reset(seed=seed, options={"game": copy.deepcopy(game)})
        assert observation.tobytes() == observations[g].tobytes()
        for key in INFO_KEYS:
            assert np.array_equal(np.asarray(info[key]), infos[key][g]), key
        envs.append(env)
    chooser = np.random.default_rng(seed)
    done = np.zeros(count, bool)
    steps = 0
    while not done.all():
        masks = infos["action_mask"]
        assert np.array_equal(masks, vector.action_masks())
        actions = np.array([chooser.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        observations, rewards, terminated, truncated, infos = vector.step(actions)
        for g, env in enumerate(envs):
            if done[g]:
                continue
            observation, reward, ended, cut, info = env.step(int(actions[g]))
            where = f"env {g}, step {steps}"
            assert observation.tobytes() == observations[g].tobytes(), where
            assert reward == rewards[g], (where, reward, rewards[g])
            assert (ended, cut) == (terminated[g], truncated[g]), where
            for key in INFO_KEYS:
                assert np.array_equal(np.asarray(info[key]), infos[key][g]), (where, key)
            done[g] = ended or cut
        steps += 1
    return steps


@pytest.mark.parametrize(
    ("name", "rules"), ALL_CONFIGS[::13], ids=[name for name, _ in ALL_CONFIGS[::13]]
)
def test_the_vector_env_is_gofishenv_game_for_game_quick_sample(name, rules):
    for level in ("random", "easy", "normal", "hard", "expert"):
        assert side_by_side(rules, level, REWARDS[len(level) % 3], count=4, seed=1) > 0


@pytest.mark.slow
@pytest.mark.parametrize(("name", "rules"), ALL_CONFIGS[::2], ids=[n for n, _ in ALL_CONFIGS[::2]])
def test_the_vector_env_is_gofishenv_game_for_game(name, rules):
    for level in ("random", "easy", "normal", "hard", "expert"):
        for reward in REWARDS:
            side_by_side(rules, level, reward, count=4, seed=2)


@pytest.mark.parametrize(
    "rules", [Rules(players=3), Rules.preset("authors", players=3)], ids=["table-3", "authors-3"]
)
def test_python_opponents_play_through_the_batchs_views(rules):
    """A player object (the Python expert on a fixed stream) plays in Python from views
    built from the batch's arrays: the same choices as in GoFishEnv, the single cards
    proved under exact-card asks included."""
    side_by_side(rules, "expert", "catches", count=3, seed=3, in_python=True)


# ------------------------------------------------------------------------------ the API


def random_actions(masks: np.ndarray, chooser: np.random.Generator) -> np.ndarray:
    return np.array([chooser.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])


def rollout(env, steps: int, seed: int) -> list:
    chooser = np.random.default_rng(0)
    observations, infos = env.reset(seed=seed)
    record = [observations, infos["seat"]]
    for _ in range(steps):
        result = env.step(random_actions(infos["action_mask"], chooser))
        observations, infos = result[0], result[4]
        record += [result[0], result[1], result[2], result[3], infos["action_mask"]]
    return record


def test_a_player_object_opponent_gets_a_copy_for_each_seat_of_each_game():
    from gofish_env.cpus import make_cpu
    from gofish_env.players import make_player

    def played(opponents) -> list:
        env = GoFishVectorEnv(3, players=3, opponents=opponents, seat=0)
        return rollout(env, 60, seed=5)

    # A CPU object was always copied per seat and game; a player wrapping one is too now
    # (one shared player mixed every game's and seat's memory of its game).
    by_cpu, by_player = played(make_cpu("easy", seed=1)), played(make_player("easy"))
    for a, b in zip(by_cpu, by_player, strict=True):
        assert np.array_equal(a, b)


def test_make_vec_builds_the_vector_env_and_gymnasiums_modes_still_work():
    envs = gym.make_vec("GoFish-v0", num_envs=3, players=3, opponents="easy")
    assert isinstance(envs.unwrapped, GoFishVectorEnv)
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    assert envs.single_action_space == gym.spaces.Discrete(26)
    observations, infos = envs.reset(seed=0)
    assert envs.observation_space.contains(observations)
    assert envs.single_observation_space.shape == observations.shape[1:]
    for key in INFO_KEYS:
        assert infos[key].shape[0] == 3 and infos[f"_{key}"].all()
    assert infos["action_mask"].dtype == bool and infos["action_mask"].shape == (3, 26)
    result = envs.step(random_actions(infos["action_mask"], np.random.default_rng(0)))
    assert result[1].dtype == np.float64 and result[2].dtype == result[3].dtype == bool
    sync = gym.make_vec("GoFish-v0", num_envs=2, vectorization_mode="sync", players=3)
    assert isinstance(sync, gym.vector.SyncVectorEnv)


def test_same_seed_same_episodes_whatever_the_number_of_envs():
    kwargs = {"players": 4, "opponents": "mix:random,easy,normal,hard", "seat": "random"}
    first = rollout(GoFishVectorEnv(4, **kwargs), 150, seed=7)
    again = rollout(GoFishVectorEnv(4, **kwargs), 150, seed=7)
    for a, b in zip(first, again, strict=True):
        assert np.array_equal(a, b)
    other = rollout(GoFishVectorEnv(4, **kwargs), 150, seed=8)
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))
    # Env i's episode is its own: the first step of a batch of 9 matches.
    wide = GoFishVectorEnv(9, **kwargs)
    observations, infos = wide.reset(seed=7)
    assert np.array_equal(observations[:4], first[0])
    assert np.array_equal(infos["seat"][:4], first[1])


def test_the_rules_compiled_in_change_no_step_of_the_learners_env():
    """``compile_rules=True`` (``make_vec`` passes it on) changes how fast the engine runs,
    nothing the env returns, with compiled opponents and a Python one (a player object)."""
    kwargs = {"players": 4, "opponents": ["hard", "expert", StreamExpert(5)], "seat": "random"}
    compiled = gym.make_vec("GoFish-v0", num_envs=6, compile_rules=True, **kwargs).unwrapped
    assert type(compiled.learners.batch.kernel_constants).__name__ == "CompiledConstants"
    plain = rollout(GoFishVectorEnv(6, **kwargs), 200, seed=5)
    for a, b in zip(plain, rollout(compiled, 200, seed=5), strict=True):
        assert np.array_equal(a, b)
    assert sum(int(ended.sum()) for ended in plain[4::5]) > 6  # episodes ended and restarted


def finish_one(env, infos, chooser):
    """Step until some env ends; returns (the step's results, the env that ended)."""
    for _ in range(2000):
        result = env.step(random_actions(infos["action_mask"], chooser))
        infos = result[4]
        ended = np.flatnonzero(result[2] | result[3])
        if ended.size:
            return result, int(ended[0])
    raise AssertionError("no episode ended")


def test_next_step_autoreset_ignores_the_action_and_starts_the_next_episode():
    env = GoFishVectorEnv(3, players=2, opponents="random")
    _, infos = env.reset(seed=1)
    chooser = np.random.default_rng(1)
    result, ended = finish_one(env, infos, chooser)
    assert not result[4]["action_mask"][ended].any()  # not to move: the episode is over
    actions = random_actions(result[4]["action_mask"], chooser)
    actions[ended] = 999  # ignored: this step resets the env
    _, rewards, terminated, truncated, infos = env.step(actions)
    assert rewards[ended] == 0.0 and not terminated[ended] and not truncated[ended]
    assert infos["action_mask"][ended].any() and infos["catches"][ended] == 0


def test_same_step_autoreset_gives_the_final_observation_and_info():
    env = GoFishVectorEnv(3, players=2, opponents="random", autoreset_mode="same_step")
    _, infos = env.reset(seed=1)
    result, ended = finish_one(env, infos, np.random.default_rng(2))
    observations, _, _, _, infos = result
    assert infos["_final_obs"][ended]
    assert infos["final_obs"][ended].shape == observations[ended].shape
    assert not np.array_equal(infos["final_obs"][ended], observations[ended])
    assert infos["action_mask"][ended].any()  # the next episode's
    assert infos["final_info"]["catches"][ended] > 0 and infos["catches"][ended] == 0


def test_same_step_final_info_holds_the_ended_envs_only_as_gymnasiums_own_vector_envs():
    # The same three games in both (deterministic players): at the first step that ends some
    # but not all of them, final_info's masks are the ended envs and the other rows zeros.
    rules = Rules(players=3)
    games = starting_games(rules, 3, seed=3)
    kwargs = {"rules": rules, "seat": 0, "opponents": lowest, "reward": "catches+tiebreak"}
    vector = GoFishVectorEnv(3, autoreset_mode="same_step", **kwargs)
    _, infos = vector.reset(options={"games": [copy.deepcopy(game) for game in games]})
    sync = gym.vector.SyncVectorEnv(
        [lambda: GoFishEnv(**kwargs)] * 3, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    sync.reset(seed=0)
    for env, game in zip(sync.envs, games, strict=True):
        env.reset(options={"game": copy.deepcopy(game)})
    for _ in range(1000):
        actions = np.array([lowest(None, mask) for mask in infos["action_mask"]])
        _, _, terminated, truncated, infos = vector.step(actions)
        _, _, sync_terminated, sync_truncated, sync_infos = sync.step(actions)
        done = terminated | truncated
        assert np.array_equal(done, sync_terminated | sync_truncated)
        if done.any():
            break
    assert 0 < done.sum() < 3
    assert np.array_equal(infos["_final_info"], sync_infos["_final_info"])
    assert np.array_equal(infos["_final_obs"], sync_infos["_final_obs"])
    final, expected = infos["final_info"], sync_infos["final_info"]
    assert sorted(final) == sorted(expected)
    for key in INFO_KEYS:
        assert np.array_equal(final[f"_{key}"], done), key
        assert np.array_equal(final[key], expected[key]), key
        assert not final[key][~done].any(), key
    for row in range(3):
        if done[row]:
            assert np.array_equal(infos["final_obs"][row], sync_infos["final_obs"][row])
        else:
            assert infos["final_obs"][row] is None


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_max_episode_steps_truncates_each_episode_as_gymnasiums_time_limit(mode):
    """``make_vec(..., max_episode_steps=K)`` (Gymnasium passes it to the vector entry
    point): the same steps as ``TimeLimit`` over ``GoFishEnv`` in a ``SyncVectorEnv``, and
    each later episode is cut at K steps of its own."""
    rules, limit = Rules(players=3), 4
    games = starting_games(rules, 3, seed=5)
    kwargs = {"rules": rules, "seat": 0, "opponents": lowest, "max_episode_steps": limit}
    vector = gym.make_vec("GoFish-v0", num_envs=3, autoreset_mode=mode, **kwargs)
    _, infos = vector.reset(options={"games": [copy.deepcopy(game) for game in games]})
    sync = gym.make_vec(
        "GoFish-v0",
        num_envs=3,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode[mode.upper()]},
        **kwargs,
    )
    sync.reset(seed=0)
    for env, game in zip(sync.envs, games, strict=True):
        env.reset(options={"game": copy.deepcopy(game)})
    for _ in range(limit):
        actions = np.array([lowest(None, mask) for mask in infos["action_mask"]])
        observations, rewards, terminated, truncated, infos = vector.step(actions)
        theirs = sync.step(actions)
        for ours, expected in zip((rewards, terminated, truncated), theirs[1:4], strict=True):
            assert np.array_equal(ours, expected)
        if mode == "same_step" and truncated.any():  # the next episodes are other deals
            observations, theirs = np.stack(infos["final_obs"]), np.stack(theirs[4]["final_obs"])
        else:
            theirs = theirs[0]
        assert np.array_equal(observations, theirs)
    assert truncated.all() and not terminated.any()
    steps = 0
    while True:  # the next episodes: cut at K steps again (next_step: after the reset step)
        actions = np.array([lowest(None, mask) for mask in infos["action_mask"]])
        _, _, terminated, truncated, infos = vector.step(actions)
        steps += 1
        if truncated.any():
            break
    assert truncated.all() and not terminated.any()
    assert steps == (limit + 1 if mode == "next_step" else limit)


def test_disabled_autoreset_waits_for_a_partial_reset():
    env = GoFishVectorEnv(2, players=2, opponents="random", autoreset_mode="disabled")
    _, infos = env.reset(seed=3)
    _, ended = finish_one(env, infos, np.random.default_rng(3))
    with pytest.raises(RuntimeError, match=f"env {ended} has ended; reset it"):
        env.step(np.zeros(2, np.int64))
    mask = np.zeros(2, bool)
    mask[ended] = True
    _, infos = env.reset(options={"reset_mask": mask})
    assert infos["action_mask"][ended].any()


def test_an_illegal_action_ends_its_episode_or_raises():
    env = GoFishVectorEnv(2, players=3, opponents="random", illegal_reward=-2.5)
    _, infos = env.reset(seed=4)
    actions = random_actions(infos["action_mask"], np.random.default_rng(4))
    actions[1] = int(np.flatnonzero(~infos["action_mask"][1])[0])
    _, rewards, terminated, _, infos = env.step(actions)
    assert rewards[1] == -2.5 and terminated[1] and infos["illegal_action"][1]
    assert not infos["illegal_action"][0]
    strict = GoFishVectorEnv(2, players=3, opponents="random", illegal_action="raise")
    _, infos = strict.reset(seed=4)
    before = [array.copy() for array in strict.learners.batch.state]
    with pytest.raises(IllegalAsk, match="env 1: action"):
        strict.step(actions)
    for array, kept in zip(strict.learners.batch.state, before, strict=True):
        assert np.array_equal(array, kept)


REFUSAL_RULES = {
    "table-3": Rules(players=3),
    "authors-4": Rules.preset("authors"),
    "card-asks-3": Rules(players=3, ask_for="card"),
    "held-card-asks-3": Rules(players=3, ask_for="card", ask_for_held_card=True),
    "askable-empty-3": Rules(players=3, empty_hand_askable=True, empty_hand_draw="never"),
    "pairs-jokers-3": Rules.preset("pairs", players=3, jokers=True),
}


@pytest.mark.parametrize("rules", REFUSAL_RULES.values(), ids=REFUSAL_RULES)
def test_an_illegal_action_is_refused_with_the_python_engines_reason(rules):
    # The vector env said only "action 1 is not legal now".
    chooser, reasons = random.Random(1), set()
    for seed in range(12):
        game = Game(rules, seed=seed)
        for _ in range(chooser.randrange(80)):
            if game.is_over:
                break
            game.ask(*chooser.choice(game.legal_asks()))
        if game.is_over:
            continue
        seat = game.current_player
        env = GoFishVectorEnv(1, rules=rules, seat=seat, illegal_action="raise")
        _, infos = env.reset(options={"games": [game]})
        for action in np.flatnonzero(~infos["action_mask"][0]):
            target, wanted = ActionCodec(rules).to_ask(seat, int(action))
            with pytest.raises(IllegalAsk) as python:
                game.ask(target, wanted)
            with pytest.raises(IllegalAsk) as vector:
                env.step(np.array([action]))
            assert str(vector.value).startswith(f"env 0: action {action} (ask seat {target} for ")
            assert str(vector.value).endswith(f"): {python.value}")
            reasons.add(str(python.value))
    assert reasons  # refusals were met


@pytest.mark.parametrize(
    ("rules", "hands", "rest", "ask", "reason"),
    [
        (
            Rules(players=3, empty_hand_draw="never"),
            ["7H 7C 5S", "", "7D 7S 5C 5D 5H"],
            "pool",
            (1, "7"),
            "seat 1 holds no cards and cannot be asked",
        ),
        (
            Rules(players=3, empty_hand_draw="never"),
            ["7H 7C 5S", "", "7D 7S 5C 5D 5H"],
            0,  # the other cards in seat 0's catches: the pool is empty
            (1, "7"),
            "seat 1 is out (no cards and the pool is empty)",
        ),
        (
            Rules(players=3, ask_for="card", set_size=2),
            ["7H QS", "7S KD", "4C"],
            None,
            (1, "7C"),
            "7C is already in a catch",
        ),
        (Rules.preset("authors", players=3), None, None, (1, "2C"), "you hold 2C yourself"),
        (Rules(players=3), None, None, (2, "A"), "you hold no aces"),
    ],
    ids=["empty-hand", "out", "laid-card", "held-card", "rank-not-held"],
)
def test_each_kind_of_refusal_reads_as_in_the_python_engine(rules, hands, rest, ask, reason):
    if hands is None:  # a deal where seat 0 moves first, holds the 2C and no ace
        game = next(
            game
            for game in (Game(rules, seed=seed) for seed in range(99))
            if game.current_player == 0
            and "2C" in game.hand(0)
            and not any(card.startswith("A") for card in game.hand(0))
        )
    elif rest is None:
        game = position(hands, catches=[["7"], [], []], rules=rules)
    else:
        game = position(hands, rest=rest, rules=rules)
    with pytest.raises(IllegalAsk, match=re.escape(reason)) as python:
        game.ask(*ask)
    env = GoFishVectorEnv(1, rules=rules, seat=game.current_player, illegal_action="raise")
    env.reset(options={"games": [game]})
    target, wanted = ask
    index = parse_card(wanted) if rules.ask_for == "card" else None
    wanted = 4 * index[0] + index[1] if index else parse_rank(wanted)
    action = ActionCodec(rules).to_action(game.current_player, target, wanted)
    with pytest.raises(IllegalAsk) as vector:
        env.step(np.array([action]))
    assert str(vector.value).endswith(f"): {python.value}")


REWARD_KEYS = ("reward_catch", "reward_catch_points", "reward_tiebreak", "reward_win")


def lowest(observation, mask) -> int:
    return int(np.flatnonzero(mask)[0])


def test_the_reward_infos_of_a_catch_at_the_deal_come_with_the_step_that_pays_it():
    # Pairs, 2 players: in deal 1 the learner (seat 1) lays a pair at the deal, paid with
    # step 1. Neither env reports it at reset; a first step that is illegal pays nothing.
    rules = Rules.preset("pairs", players=2)
    game = Game(rules, seed=1)
    assert game.catches(1) and game.current_player == 0
    kwargs = {"rules": rules, "seat": 1, "opponents": lowest, "reward": "catches"}
    vector = GoFishVectorEnv(2, **kwargs)
    _, infos = vector.reset(options={"games": [copy.deepcopy(game), copy.deepcopy(game)]})
    env = GoFishEnv(**kwargs)
    _, info = env.reset(options={"game": copy.deepcopy(game)})
    for key in REWARD_KEYS:
        assert info[key] == 0.0 and not infos[key].any(), key
    legal = lowest(None, info["action_mask"])
    actions = np.array([legal, int(np.flatnonzero(~info["action_mask"])[0])])
    _, rewards, terminated, _, infos = vector.step(actions)
    _, reward, *_, info = env.step(legal)
    assert rewards[0] == reward == info["reward_catch"] == infos["reward_catch"][0] >= 2
    assert rewards[1] == -1.0 and terminated[1] and infos["illegal_action"][1]
    for key in REWARD_KEYS:
        assert infos[key][1] == 0.0, key


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_reward_infos_are_what_each_step_pays_from_reset_on(mode):
    # The pairs game lays catches at most deals: a new episode's first info (at reset, and
    # where the env restarts a game) pays nothing; each step's components are its reward.
    rules = Rules.preset("pairs", players=3)
    env = GoFishVectorEnv(
        4, rules=rules, seat="random", reward="catches+tiebreak", autoreset_mode=mode
    )
    _, infos = env.reset(seed=2)
    assert not any(infos[key].any() for key in REWARD_KEYS)
    chooser = np.random.default_rng(2)
    restarts = 0
    restarting = np.zeros(4, bool)  # next_step: the envs this step restarts
    for _ in range(300):
        actions = random_actions(infos["action_mask"], chooser)
        _, rewards, terminated, truncated, infos = env.step(actions)
        paid = {key: infos[key] for key in REWARD_KEYS}
        done = terminated | truncated
        started = done if mode == "same_step" else restarting
        for key in REWARD_KEYS:  # a new episode's first info
            assert not infos[key][started].any(), key
            if mode == "same_step" and done.any():  # the ending step's info: final_info
                paid[key] = np.where(done, infos["final_info"][key], infos[key])
        assert np.allclose(rewards, paid["reward_catch"] + paid["reward_tiebreak"])
        restarts += int((started & (infos["catches"] > 0)).sum())
        restarting = done
    assert restarts > 3  # new episodes with catches before the learner's first step


@pytest.mark.parametrize("outside", [-1, 26])
def test_an_action_outside_the_action_space_is_refused_and_changes_nothing(outside):
    env = GoFishVectorEnv(2, players=3, opponents="random")
    assert env.single_action_space.n == 26
    _, infos = env.reset(seed=4)
    actions = random_actions(infos["action_mask"], np.random.default_rng(4))
    actions[1] = outside
    before = [array.copy() for array in env.learners.batch.state]
    with pytest.raises(
        InvalidAction, match=rf"actions: got {outside} for env 1; allowed: integers from 0 to 25"
    ):
        env.step(actions)
    for array, kept in zip(env.learners.batch.state, before, strict=True):
        assert np.array_equal(array, kept)


def test_a_failing_python_opponent_is_named():
    def broken(observation, mask):
        raise RuntimeError("no model")

    env = GoFishVectorEnv(2, players=2, opponents=broken, seat=1)
    with pytest.raises(OpponentError, match=r"env 0: the opponent at seat 0 .* raised Runtime"):
        env.reset(seed=0)


def test_new_opponents_sit_down_at_the_next_deal_and_games_in_play_keep_theirs():
    moves: list[str] = []

    def logged(name):
        def play(observation, mask):
            moves.append(name)
            return int(np.flatnonzero(mask)[0])

        return play

    env = GoFishVectorEnv(4, players=3, opponents=logged("old"), seat=0)
    _, infos = env.reset(seed=3)
    env.set_opponents(logged("new"))  # Python players again, while every game is in play
    rng = np.random.default_rng(0)

    def step():
        masks = infos["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        return env.step(actions)

    ended = np.zeros(4, bool)
    while not ended.all():
        before, dealt_again = len(moves), ended.any()
        _, _, terminated, truncated, infos = step()
        if not dealt_again:
            assert set(moves[before:]) <= {"old"}  # the games in play keep their opponents
        ended |= terminated | truncated
    step()  # the last game to end is dealt again: every game now has the new opponents
    moves.clear()
    for _ in range(10):
        _, _, _, _, infos = step()
    assert moves and set(moves) == {"new"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_envs": 0}, "num_envs: got 0; allowed: an integer >= 1"),
        ({"seat": 4}, "seat: got 4; allowed: 'random' or a seat from 0 to 3"),
        ({"opponents": "grandmaster"}, "opponents: unknown CPU level 'grandmaster'"),
        ({"opponents": ["easy"]}, "opponents: got 1 specs; allowed: one spec or 3"),
        ({"render_mode": "human"}, "render_mode: got 'human'; allowed: None"),
        ({"autoreset_mode": "sometimes"}, "autoreset_mode: got 'sometimes'; allowed: next_step"),
        ({"illegal_action": "ignore"}, "illegal_action: got 'ignore'; allowed: 'terminate'"),
        ({"illegal_reward": "x"}, "illegal_reward: got 'x'; allowed: a finite number"),
        ({"illegal_reward": float("inf")}, "illegal_reward: got inf; allowed: a finite number"),
        ({"rules": "chess"}, "rules: unknown preset 'chess'; allowed: table"),
        ({"max_asks": 0}, "max_asks: got 0; allowed: an integer >= 1"),
        ({"max_episode_steps": 0}, "max_episode_steps: got 0; allowed: an integer >= 1, or None"),
        ({"max_episode_steps": 2.5}, "max_episode_steps: got 2.5; allowed: an integer >= 1"),
        ({"seat": 3, "max_asks": 3}, "max_asks: got 3; with 4 players, the learner at seat 3"),
        ({"seat": "random", "max_asks": 2}, "max_asks: got 2; .* at least 4"),
        ({"reward": "gold"}, "reward: unknown scheme 'gold'"),
        ({"rules": Rules(match_target=10)}, "match_target: got 10; the vector engine plays single"),
    ],
)
def test_bad_arguments_are_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        GoFishVectorEnv(**{"num_envs": 2, **kwargs})


def test_a_start_position_at_the_ask_limit_is_refused_saying_the_position_made_the_asks():
    game, chooser = Game(Rules(players=4), seed=3), random.Random(0)
    for _ in range(6):
        game.ask(*chooser.choice(game.legal_asks()))
    env = GoFishVectorEnv(1, players=4, max_asks=5, seat=game.current_player)
    with pytest.raises(ValueError, match="env 0: max_asks: the given game has made 6 asks"):
        env.reset(options={"games": [game]})


def test_a_reset_whose_opponents_reach_the_ask_limit_raises_instead_of_dealing_again():
    # As GoFishEnv: seat 3 moves after three misses, and a hit among them uses up
    # max_asks=4; such a deal is not dealt again (no deal lifts the limit): ValueError.
    outcomes = []
    for seed in range(12):
        env = GoFishVectorEnv(1, players=4, seat=3, max_asks=4, opponents="random")
        try:
            env.reset(seed=seed)
            outcomes.append(int(env.learners.batch.state.num_asks[0]) == 3)
        except ValueError as error:
            assert str(error).startswith("env 0: max_asks: the opponents made all 4 asks")
            outcomes.append(None)
    assert None in outcomes and True in outcomes


class Flaky:
    """A Python opponent (the first legal action) that raises while ``failing`` is set, or
    at its ``fail_at``-th move."""

    def __init__(self, fail_at: int = 0):
        self.moves, self.fail_at, self.failing = 0, fail_at, False

    def __call__(self, observation, mask):
        self.moves += 1
        if self.failing or self.moves == self.fail_at:
            raise RuntimeError("boom")
        return int(np.flatnonzero(mask)[0])


def finished_game(rules: Rules, seed: int) -> Game:
    game = Game(rules, seed=seed)
    chooser = np.random.default_rng(seed)
    while not game.is_over:
        legal = game.legal_asks()
        game.ask(*legal[chooser.integers(len(legal))])
    return game


def test_an_opponent_error_in_step_leaves_the_env_refusing_to_step_until_reset():
    opponent = Flaky(fail_at=40)
    env = GoFishVectorEnv(4, players=3, opponents=["random", opponent], seat=0)
    _, infos = env.reset(seed=1)
    chooser = np.random.default_rng(0)
    with pytest.raises(OpponentError, match="boom"):
        for _ in range(200):
            _, _, _, _, infos = env.step(random_actions(infos["action_mask"], chooser))
    # The batch is half-stepped (undoing a batch step is not offered): no step goes on from it.
    actions = random_actions(env.action_masks(), chooser)
    with pytest.raises(RuntimeError, match=r"step\(\): the last step\(\) failed part way"):
        env.step(actions)
    with pytest.raises(RuntimeError, match="must reset every sub-env"):
        env.reset(options={"reset_mask": np.array([True, False, False, False])})
    _, infos = env.reset()
    env.step(random_actions(infos["action_mask"], chooser))


def test_a_reset_that_fails_part_way_leaves_the_env_refusing_to_step():
    opponent = Flaky()
    env = GoFishVectorEnv(2, players=2, opponents=opponent, seat=1)
    env.reset(seed=0)
    opponent.failing = True
    with pytest.raises(OpponentError):
        env.reset()
    with pytest.raises(RuntimeError, match=r"step\(\): reset\(\) did not complete"):
        env.step(np.zeros(2, np.int64))
    opponent.failing = False
    _, infos = env.reset()
    env.step(random_actions(infos["action_mask"], np.random.default_rng(0)))


@pytest.mark.parametrize(
    ("last", "message"),
    [
        ("over", "options['games'][3]: the game is over; allowed: a game in play"),
        (7, "options['games'][3]: got 7; allowed: a gofish_env.Game"),
        ("3p", "options['games'][3]: its rules differ from the env's rules"),
    ],
)
def test_a_refused_games_reset_changes_nothing_the_seed_included(last, message):
    rules = Rules(players=4)
    last = {"over": finished_game(rules, 5), "3p": Game(Rules(players=3), seed=1)}.get(last, last)
    kept, env = GoFishVectorEnv(4, rules=rules, seat=2), GoFishVectorEnv(4, rules=rules, seat=2)
    kept.reset(seed=3)
    observations, infos = env.reset(seed=3)
    before = [array.copy() for array in env.learners.batch.state]
    games = [Game(rules, seed=10 + k) for k in range(3)] + [last]
    with pytest.raises(ValueError, match=re.escape(message)):
        env.reset(seed=99, options={"games": games})
    for array, was in zip(env.learners.batch.state, before, strict=True):
        assert np.array_equal(array, was)
    assert env.learners.observations().tobytes() == observations.tobytes()
    actions = random_actions(infos["action_mask"], np.random.default_rng(0))
    assert env.step(actions)[0].tobytes() == kept.step(actions)[0].tobytes()
    # The seed was not applied: the next unseeded reset is the one it would have been.
    assert env.reset()[0].tobytes() == kept.reset()[0].tobytes()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"game": Game(Rules(players=3), seed=1)}, "options['game']: GoFishEnv's key"),
        ({"games": Game(Rules(players=3), seed=1)}, "options['games']: got Game; allowed: a list"),
        ({"reset_mask": np.ones(2, int)}, "options['reset_mask']: allowed: a bool array"),
    ],
)
def test_other_refused_reset_options_apply_no_seed(options, message):
    kept, env = GoFishVectorEnv(2, players=3), GoFishVectorEnv(2, players=3)
    kept.reset(seed=1)
    env.reset(seed=1)
    with pytest.raises(ValueError, match=re.escape(message)):
        env.reset(seed=99, options=options)
    assert env.reset()[0].tobytes() == kept.reset()[0].tobytes()


@pytest.mark.parametrize("seed", [-1, 2**64, 2**64 + 5, 1.5])
def test_a_seed_the_generators_cannot_take_is_refused_and_applies_nothing(seed):
    # The generators take 64 bits: 2**64 + 5 played the episodes of 5.
    message = "seed: got .*; allowed: an integer from 0 to 2\\*\\*64 - 1, or None"
    kept, env = GoFishVectorEnv(2, players=3), GoFishVectorEnv(2, players=3)
    kept.reset(seed=5)
    env.reset(seed=5)
    with pytest.raises(ValueError, match=message):
        env.reset(seed=seed)
    assert env.reset()[0].tobytes() == kept.reset()[0].tobytes()
    kept, env = SelfPlayVectorEnv(2, players=3), SelfPlayVectorEnv(2, players=3)
    with pytest.raises(ValueError, match=message):
        env.reset(seed=seed)
    assert env.reset(seed=2**64 - 1)[0].tobytes() == kept.reset(seed=2**64 - 1)[0].tobytes()
    assert env.reset(seed=5)[0].tobytes() != kept.reset(seed=4)[0].tobytes()


def test_a_closed_env_refuses_step_and_reset():
    env = GoFishVectorEnv(2, players=3)
    env.reset(seed=0)
    env.close()
    with pytest.raises(RuntimeError, match=r"step\(\): the env is closed"):
        env.step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError, match=r"reset\(\): the env is closed"):
        env.reset()


def first_legal(observation, mask):
    return int(np.flatnonzero(mask)[0])


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_a_truncated_episode_keeps_the_learners_legal_asks_in_its_mask_as_gofishenv(mode):
    rules = Rules(players=2)
    truncated_on_its_turn = 0
    for seed in range(12):
        game = Game(rules, seed=seed)
        if game.is_over:
            continue
        kwargs = {"rules": rules, "opponents": first_legal, "seat": 0, "max_asks": 6}
        vector = GoFishVectorEnv(1, autoreset_mode=mode, **kwargs)
        _, vector_info = vector.reset(options={"games": [copy.deepcopy(game)]})
        one = GoFishEnv(**kwargs)
        _, info = one.reset(options={"game": copy.deepcopy(game)})
        ended = False
        while not ended:
            action = int(np.flatnonzero(info["action_mask"])[0])
            _, _, terminated, truncated, info = one.step(action)
            _, _, vector_terminated, vector_truncated, vector_info = vector.step(np.array([action]))
            ended = terminated or truncated
            assert (vector_terminated[0], vector_truncated[0]) == (terminated, truncated)
            last = vector_info["final_info"] if mode == "same_step" and ended else vector_info
            assert np.array_equal(last["action_mask"][0], info["action_mask"])
            if mode == "next_step":
                assert np.array_equal(vector.action_masks()[0], one.action_masks())
        truncated_on_its_turn += bool(truncated and info["action_mask"].any())
    assert truncated_on_its_turn > 3


def test_the_batched_objects_refuse_pickling_and_copying_saying_what_to_do():
    rules = Rules(players=3)
    batch = VectorGame(rules, 2, seed=0)
    made = {
        "VectorGame": (batch, "dealt_game"),
        "CompiledCPUs": (CompiledCPUs(batch, "random"), "CompiledCPUs(batch, levels, seed)"),
        "GoFishVectorEnv": (GoFishVectorEnv(2, rules=rules), "reset(seed=...)"),
        "SelfPlayVectorEnv": (SelfPlayVectorEnv(2, rules=rules), "reset(seed=...)"),
    }
    for name, (thing, advice) in made.items():
        for copier, what in (
            (pickle.dumps, "pickled"),
            (copy.deepcopy, "deep-copied"),
            (copy.copy, "copied"),
        ):
            with pytest.raises(TypeError, match=rf"^{name} cannot be {what}") as refused:
                copier(thing)
            assert "compiled (numba) structures" in str(refused.value)
            assert advice in str(refused.value)


# ------------------------------------------------------------------------------ self-play


def self_play_side_by_side(
    rules: Rules, reward: str, count: int, seed: int, max_asks: int = DEFAULT_MAX_ASKS
) -> int:
    env = SelfPlayVectorEnv(count, rules=rules, reward=reward, max_asks=max_asks)
    observations, info = env.reset(seed=seed)
    states = env.state()
    assert states.shape == (count, *env.single_state_space.shape)
    raws = []
    for g in range(count):
        raw = gofish_env.raw_env(rules=rules, reward=reward, max_asks=max_asks)
        raw.reset(options={"game": env.batch.dealt_game(g)})
        seen = raw.observe(raw.agent_selection)
        assert raw.agent_selection == f"player_{info['current_player'][g]}"
        assert seen["observation"].tobytes() == observations[g].tobytes()
        assert raw.state().tobytes() == states[g].tobytes()
        raws.append(raw)
    chooser = np.random.default_rng(seed)
    done = np.zeros(count, bool)
    steps = 0
    while not done.all():
        actions = random_actions(info["action_mask"], chooser)
        observations, rewards, terminated, truncated, info = env.step(actions)
        states = env.state()
        for g, raw in enumerate(raws):
            if done[g]:
                continue
            raw.step(int(actions[g]))
            agents = raw.possible_agents
            assert [raw.rewards[agent] for agent in agents] == rewards[g].tolist()
            ended = raw.terminations[agents[0]] or raw.truncations[agents[0]]
            assert ended == (terminated[g] or truncated[g])
            if ended:
                if terminated[g]:
                    assert np.array_equal(raw.infos[agents[0]]["winners"], info["winners"][g])
                else:  # cut off: the vector env scores it as it stands (the AEC env does not)
                    leaders = np.isin(np.arange(rules.players), raw.game.leaders())
                    assert np.array_equal(leaders, info["winners"][g])
                final = info["final_observation"][g]
                for seat, agent in enumerate(agents):
                    assert raw.observe(agent)["observation"].tobytes() == final[seat].tobytes()
                assert raw.state().tobytes() == info["final_state"][g].tobytes()
                done[g] = True
                continue
            seen = raw.observe(raw.agent_selection)
            assert raw.agent_selection == f"player_{info['current_player'][g]}"
            assert seen["observation"].tobytes() == observations[g].tobytes()
            assert np.array_equal(seen["action_mask"].astype(bool), info["action_mask"][g])
            assert raw.state().tobytes() == states[g].tobytes()
        steps += 1
    return steps


@pytest.mark.parametrize(
    ("name", "rules"), ALL_CONFIGS[::10], ids=[name for name, _ in ALL_CONFIGS[::10]]
)
def test_self_play_env_is_the_aec_env_game_for_game(name, rules):
    for reward in (*REWARDS, "win"):
        assert self_play_side_by_side(rules, reward, count=4, seed=5) > 0


def test_self_play_gives_the_final_state_of_a_game_cut_off_by_the_ask_limit():
    # Every game is truncated after 6 asks (none ends that soon), and its final state is
    # the AEC env's after the same 6 asks.
    assert self_play_side_by_side(Rules(players=3), "catches", count=4, seed=2, max_asks=6) == 6


def test_self_play_state_before_reset_is_refused():
    with pytest.raises(RuntimeError, match=r"state\(\) called before reset\(\)"):
        SelfPlayVectorEnv(2, players=2).state()


def test_self_play_refuses_an_illegal_action_and_applies_nothing():
    env = SelfPlayVectorEnv(2, players=3)
    _, info = env.reset(seed=1)
    actions = random_actions(info["action_mask"], np.random.default_rng(1))
    actions[0] = int(np.flatnonzero(~info["action_mask"][0])[0])
    before = env.batch.num_asks
    seat = int(env.batch.state.current[0])
    said = rf"^actions: env 0: seat {seat}: action {actions[0]} \(ask seat \d for \w+\): you"
    with pytest.raises(ValueError, match=said):
        env.step(actions)
    assert np.array_equal(env.batch.num_asks, before)


def test_self_play_with_the_rules_compiled_in_gives_the_same_steps():
    """``compile_rules=True`` changes how fast the engine runs, nothing it returns."""
    envs = [SelfPlayVectorEnv(32, players=4, compile_rules=flag) for flag in (False, True)]
    results = [env.reset(seed=4) for env in envs]
    chooser = np.random.default_rng(4)
    finished = 0
    for _ in range(150):
        (obs, info), (obs_c, info_c) = results[0][:2], results[1][:2]
        assert np.array_equal(obs, obs_c)
        for key in ("action_mask", "current_player", "winners", "catches"):
            assert np.array_equal(info[key], info_c[key])
        masks = info["action_mask"]
        actions = np.array([chooser.choice(np.flatnonzero(row)) for row in masks])
        steps = [env.step(actions) for env in envs]
        for plain, compiled in zip(steps[0][1:4], steps[1][1:4], strict=True):
            assert np.array_equal(plain, compiled)
        finished += int(steps[0][2].sum())
        results = [(step[0], step[4]) for step in steps]
    assert finished > 0
