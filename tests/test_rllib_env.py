"""The RLlib integration without an algorithm: the MultiAgentEnv (seats, rewards, the end,
seeding, illegal asks, RLlib's own env check), the masking module, and the agent mapping."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.utils.pre_checks.env import check_multiagent_environments
from ray.tune.registry import ENV_CREATOR, _global_registry

from gofish_env.game import Game, IllegalAsk
from gofish_env.rules import Rules
from gofish_training.rllib_env import (
    EnvSettings,
    GoFishMultiAgentEnv,
    OpponentPlan,
    register_env,
    role_of,
)
from gofish_training.rllib_module import MaskedActorCritic, mask_logits
from gofish_training.rllib_policies import PolicySetup, SnapshotMapping

pytestmark = pytest.mark.torch


class WorkerConfig(dict):
    """An ``env_config`` as RLlib passes it: a dict with the EnvRunner's index."""

    def __init__(self, config: dict, worker_index: int):
        super().__init__(config)
        self.worker_index = worker_index


def play(env: GoFishMultiAgentEnv, seed: int, chooser: np.random.Generator):
    """One game with random legal actions: every step's observations and rewards, and the
    last step's results."""
    observations, _ = env.reset(seed=seed)
    steps = [(observations, {})]
    while True:
        ((agent, observation),) = observations.items()
        legal = np.flatnonzero(observation["action_mask"])
        result = env.step({agent: int(chooser.choice(legal))})
        observations, rewards, terminated, truncated, _ = result
        steps.append((observations, rewards))
        if terminated["__all__"] or truncated["__all__"]:
            return steps, result


def test_register_env_puts_a_creator_in_the_tune_registry():
    name = register_env()
    assert _global_registry.contains(ENV_CREATOR, name)
    env = _global_registry.get(ENV_CREATOR, name)({"players": 3, "opponents": "easy"})
    assert isinstance(env, GoFishMultiAgentEnv) and env.rules.players == 3


def test_rllibs_env_check_passes_with_its_unmasked_random_actions():
    # RLlib steps with action_space.sample(): an illegal ask ends the game (no error).
    for opponents in ("selfplay", "easy", "mix:random,snapshot"):
        check_multiagent_environments(GoFishMultiAgentEnv({"opponents": opponents}))


def test_selfplay_exposes_every_seat_and_pays_every_catch():
    env = GoFishMultiAgentEnv({"players": 4, "opponents": "selfplay"})
    steps, (observations, rewards, terminated, _, infos) = play(env, 7, np.random.default_rng(0))
    assert env.agents == [f"learner_{seat}" for seat in range(4)]
    assert set(observations) == set(rewards) == set(env.agents)
    assert terminated == {**dict.fromkeys(env.agents, True), "__all__": True}
    earned = {agent: 0.0 for agent in env.agents}
    for _, step_rewards in steps:
        for agent, reward in step_rewards.items():
            earned[agent] += reward
    game = env.aec.game
    for agent, total in earned.items():  # the "catches" reward: 1 a catch
        assert total == len(game.catches(int(agent.rpartition("_")[2])))
    assert sum(earned.values()) == env.rules.total_sets
    assert sum(info["win_share"] for info in infos.values()) == pytest.approx(1.0)
    for agent, info in infos.items():
        seat = int(agent.rpartition("_")[2])
        assert (info["win_share"] > 0) == (seat in game.winners)


def returns_of(steps) -> dict[str, float]:
    """Each agent's episode return: the rewards of every step of ``play``, summed."""
    earned: dict[str, float] = {}
    for _, step_rewards in steps:
        for agent, reward in step_rewards.items():
            earned[agent] = earned.get(agent, 0.0) + reward
    return earned


@pytest.mark.parametrize("rules", ["table", "pairs"])
@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize(
    ("opponents", "learner_seats"),
    [("selfplay", None), ("random", None), ("easy", None), ("mix:random,snapshot", 1)],
)
def test_every_exposed_seat_is_paid_every_catch_it_laid(rules, players, opponents, learner_seats):
    # Catches laid before a seat's first move (at the deal, common in the pairs game, or on
    # the CPUs' turns when they move first) are paid too, with its next reward.
    config = {"players": players, "rules": rules, "opponents": opponents}
    if learner_seats is not None:
        config["learner_seats"] = learner_seats
    env = GoFishMultiAgentEnv(config)
    chooser = np.random.default_rng(0)
    for seed in range(25):
        steps, _ = play(env, seed, chooser)
        earned = returns_of(steps)
        game = env.aec.game
        for agent in env.agents:  # the "catches" reward: 1 a catch, deal included
            laid = len(game.catches(int(agent.rpartition("_")[2])))
            assert earned.get(agent, 0.0) == laid, (seed, agent)


def test_catches_laid_before_the_first_move_are_paid_with_the_next_reward():
    # Seed 2: a random CPU moves first, and the learner's seat has a catch pending (laid at
    # the deal or on the CPUs' turns) when reset() returns; it was once dropped.
    env = GoFishMultiAgentEnv({"players": 4, "rules": "pairs", "opponents": "random"})
    observations, _ = env.reset(seed=2)
    (agent,) = observations
    seat = int(agent.rpartition("_")[2])
    pending = env.aec._cumulative_rewards[f"player_{seat}"]
    assert env.aec.game.num_asks > 0 and pending > 0
    chooser, earned, over = np.random.default_rng(0), 0.0, False
    while not over:
        legal = np.flatnonzero(observations[agent]["action_mask"])
        result = env.step({agent: int(chooser.choice(legal))})
        observations, rewards, terminated, truncated, _ = result
        earned += rewards.get(agent, 0.0)
        over = terminated["__all__"] or truncated["__all__"]
    assert earned == len(env.aec.game.catches(seat)) == 7


def test_an_illegal_first_ask_pays_only_the_penalty_even_with_catches_pending():
    env = GoFishMultiAgentEnv({"players": 4, "rules": "pairs", "opponents": "random"})
    observations, _ = env.reset(seed=2)
    ((agent, observation),) = observations.items()
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    _, rewards, terminated, _, _ = env.step({agent: illegal})
    assert terminated["__all__"] and rewards == {agent: -1.0}


def test_each_step_shows_only_the_seat_to_move():
    env = GoFishMultiAgentEnv({"players": 3})
    steps, _ = play(env, 3, np.random.default_rng(1))
    for observations, _ in steps[:-1]:
        ((_, observation),) = observations.items()
        assert observation["action_mask"].any()


def test_cpu_seats_are_played_inside_and_never_exposed():
    env = GoFishMultiAgentEnv({"players": 4, "opponents": "easy"})
    chooser = np.random.default_rng(2)
    for seed in range(5):
        steps, _ = play(env, seed, chooser)
        (learner,) = env.agents
        assert role_of(learner) == "learner"
        assert all(set(obs) == {learner} for obs, _ in steps)
        assert env.aec.game.is_over
        # The CPUs moved inside the env: more asks than the learner's steps.
        assert env.aec.game.num_asks > len(steps) - 1


def test_snapshot_seats_are_exposed_under_their_own_role():
    env = GoFishMultiAgentEnv({"players": 4, "opponents": "snapshot", "learner_seats": 2})
    env.reset(seed=0)
    roles = sorted(role_of(agent) for agent in env.agents)
    assert roles == ["learner", "learner", "snapshot", "snapshot"]


def test_a_mix_draws_each_seat_from_its_members():
    env = GoFishMultiAgentEnv({"players": 4, "opponents": "mix:easy,snapshot"})
    counts = []
    for seed in range(30):
        env.reset(seed=seed)
        counts.append(len(env.agents))
    assert min(counts) == 1 and max(counts) == 4  # 0 to 3 snapshot seats, and the learner


def test_same_seed_same_games_and_runners_deal_apart():
    def first_observations(worker: int, seed: int) -> list[np.ndarray]:
        env = GoFishMultiAgentEnv(WorkerConfig({"opponents": "easy"}, worker))
        steps, _ = play(env, seed, np.random.default_rng(0))
        return [next(iter(obs.values()))["observation"] for obs, _ in steps]

    same = first_observations(1, 5), first_observations(1, 5)
    assert len(same[0]) == len(same[1])
    assert all(np.array_equal(a, b) for a, b in zip(*same, strict=True))
    # RLlib seeds sub-env i of runner w with seed + w + i: runner 1 env 1 and runner 2 env 0
    # get the same seed, and must still deal different games.
    other = first_observations(2, 5)
    assert not np.array_equal(same[0][0], other[0])


def test_a_start_position_is_refused_and_the_seed_untouched():
    env, twin = (GoFishMultiAgentEnv(WorkerConfig({"opponents": "easy"}, 1)) for _ in range(2))
    env.reset(seed=3)
    twin.reset(seed=3)
    with pytest.raises(ValueError, match=r"^options\['game'\]: a start position is not offered"):
        env.reset(seed=9, options={"game": Game(Rules(players=4), seed=1)})
    first, _ = env.reset()
    again, _ = twin.reset()
    assert first.keys() == again.keys()
    assert all(np.array_equal(first[a]["observation"], again[a]["observation"]) for a in first)


def test_an_illegal_ask_ends_the_game_with_the_penalty_by_default():
    env = GoFishMultiAgentEnv({"players": 3})
    observations, _ = env.reset(seed=0)
    ((agent, observation),) = observations.items()
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    observations, rewards, terminated, _, infos = env.step({agent: illegal})
    assert rewards[agent] == -1.0
    assert terminated["__all__"] and set(observations) == set(env.agents)
    assert infos[agent]["illegal_action"] and not any(i["win_share"] for i in infos.values())


def test_an_illegal_ask_raises_its_reason_and_changes_nothing_on_request():
    env = GoFishMultiAgentEnv({"players": 3, "illegal_action": "raise"})
    observations, _ = env.reset(seed=0)
    ((agent, observation),) = observations.items()
    before = env.aec.game.num_events
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    with pytest.raises(IllegalAsk, match=r"you may only ask|cannot ask"):
        env.step({agent: illegal})
    assert env.aec.game.num_events == before
    legal = int(np.flatnonzero(observation["action_mask"])[0])
    env.step({agent: legal})  # the game goes on


def test_an_action_for_another_seat_is_refused():
    env = GoFishMultiAgentEnv({"players": 3})
    observations, _ = env.reset(seed=0)
    (agent,) = observations
    other = next(a for a in env.agents if a != agent)
    with pytest.raises(ValueError, match=f"allowed: one action for {agent}"):
        env.step({other: 0})


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"colour": "red"}, "env_config: unknown key 'colour'"),
        ({"opponents": "grandmaster"}, "opponents: unknown opponent 'grandmaster'"),
        ({"opponents": "mix:easy,,hard"}, "opponents: got 'mix:easy,,hard', a mix with an empty"),
        ({"opponents": "mix:"}, "opponents: got 'mix:', an empty mix"),
        ({"opponents": "easy", "learner_seats": 4}, "learner_seats: got 4"),
        ({"opponents": "selfplay", "learner_seats": 2}, "allowed: 4"),
        ({"illegal_action": "ignore"}, "illegal_action: got 'ignore'"),
        ({"players": 9}, "players"),
        ({"rules": "poker"}, "^rules: unknown preset 'poker'; allowed: "),
    ],
)
def test_bad_env_config_is_refused_with_the_field(config, message):
    with pytest.raises(ValueError, match=message):
        EnvSettings.from_config(config)


def test_masked_logits_are_minus_infinity_and_empty_masks_are_left_alone():
    logits = torch.tensor([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    mask = torch.tensor([[1, 0, 1], [0, 0, 0]], dtype=torch.int8)
    masked = mask_logits(logits, mask)
    assert masked[0, 1] == float("-inf") and masked[0, 0] == 1.0 and masked[0, 2] == 3.0
    assert torch.equal(masked[1], logits[1])


def module_for(env: GoFishMultiAgentEnv) -> MaskedActorCritic:
    agent = env.possible_agents[0]
    return MaskedActorCritic(
        observation_space=env.observation_spaces[agent],
        action_space=env.action_spaces[agent],
        model_config={"hidden": [32]},
    )


def test_the_module_never_picks_an_illegal_action_even_when_it_prefers_one():
    env = GoFishMultiAgentEnv({"players": 4, "illegal_action": "raise"})
    module = module_for(env)
    with torch.no_grad():  # a network that wants the illegal actions most
        module.pi[-1].bias.copy_(torch.linspace(50.0, 0.0, env.action_spaces["learner_0"].n))
    chooser = torch.Generator().manual_seed(0)
    observations, _ = env.reset(seed=0)
    steps = 0
    while steps < 3000:
        ((agent, observation),) = observations.items()
        batch = {
            Columns.OBS: {key: torch.as_tensor(value[None]) for key, value in observation.items()}
        }
        explore = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS][0]
        infer = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS][0]
        sampled = int(torch.multinomial(torch.softmax(explore, -1), 1, generator=chooser))
        assert observation["action_mask"][int(infer.argmax())] == 1
        assert observation["action_mask"][sampled] == 1
        observations, _, terminated, truncated, _ = env.step({agent: sampled})
        steps += 1
        if terminated["__all__"] or truncated["__all__"]:
            observations, _ = env.reset()


def test_the_module_refuses_an_observation_without_a_mask():
    from gymnasium import spaces

    with pytest.raises(ValueError, match="allowed: a Dict with 'observation' and 'action_mask'"):
        MaskedActorCritic(observation_space=spaces.Box(0, 1, (4,)), action_space=spaces.Discrete(2))


def test_learner_agents_map_to_the_learner_and_snapshots_to_a_seeded_slot_fixed_for_the_game():
    class Episode:
        def __init__(self, id_):
            self.id_ = id_

    def draws(mapping, ids):
        return [mapping(f"snapshot_{s}", Episode(id_)) for id_ in ids for s in range(3)]

    mapping = SnapshotMapping(snapshot_pool=3, seed=5)
    assert mapping("learner_2", Episode("a")) == "learner"
    slots = draws(mapping, [str(e) for e in range(20)])
    assert set(slots) == {"snapshot_0", "snapshot_1", "snapshot_2"}
    episode = Episode("x")
    assert len({mapping("snapshot_1", episode) for _ in range(5)}) == 1  # fixed for the game
    # RLlib names episodes with uuid4: the slots follow the seed, not the episodes' ids.
    uuids = [uuid.uuid4().hex for _ in range(20)]
    assert draws(SnapshotMapping(3, seed=5), uuids) == slots
    assert draws(SnapshotMapping(3, seed=6), uuids) != slots


def test_policy_setup_trains_only_the_learner():
    setup = PolicySetup(OpponentPlan.parse("mix:easy,snapshot"), snapshot_pool=2)
    kwargs = setup.multi_agent_kwargs()
    assert kwargs["policies"] == {"learner", "snapshot_0", "snapshot_1"}
    assert kwargs["policies_to_train"] == ["learner"]
    assert PolicySetup(OpponentPlan.parse("hard")).module_ids == ["learner"]
    with pytest.raises(ValueError, match="snapshot_pool: got 0"):
        PolicySetup(OpponentPlan.parse("snapshot"), snapshot_pool=0)


def test_an_ask_limit_the_cpus_use_up_says_so_instead_of_dealing_again():
    # Four seats, one learner, two asks: the CPUs before the learner use them up at once.
    env = GoFishMultiAgentEnv({"players": 4, "opponents": "random", "max_asks": 1})
    refused = 0
    for seed in range(12):
        try:
            env.reset(seed=seed)
        except ValueError as error:
            assert "max_asks: the CPUs made all 1 asks before a learner's first move" in str(error)
            refused += 1
    assert refused > 0
