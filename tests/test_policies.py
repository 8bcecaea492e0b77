"""The ask-scoring policy: what it reads for each ask, and that it trains, saves and plays."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from gofish_env.gym_env import GoFishEnv
from gofish_env.players import PredictPlayer
from gofish_env.rules import Rules
from gofish_training import train
from gofish_training.agents import load_model
from gofish_training.imitation import collect_demonstrations, pretrain
from gofish_training.policies import OPPONENT_RANK_SECTIONS, AskScoringPolicy, ask_feature_index

pytestmark = pytest.mark.torch


@pytest.mark.parametrize("rules", [Rules(), Rules(players=3), Rules.preset("authors")])
def test_each_ask_reads_the_cells_about_its_target_and_rank(rules):
    env = GoFishEnv(rules=rules, opponents="hard", seat="random")
    layout = env.aec.layout
    cells, orders = ask_feature_index(layout)
    observation, _ = env.reset(seed=4)
    for _ in range(6):  # a position some asks into the game
        observation, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        if done:
            observation, _ = env.reset(seed=5)
    parts = layout.split(observation)
    opponents, asks = rules.players - 1, rules.ask_count
    for action in range(opponents * asks):
        target, what = divmod(action, asks)
        rank = what // 4 if rules.ask_for == "card" else what
        order = [(target + step) % opponents for step in range(opponents)]
        assert orders[action].tolist() == order
        expected = [parts["own_hand"][rank]]
        for row in order:
            expected += [parts[name][row, rank] for name in OPPONENT_RANK_SECTIONS]
            expected.append(parts["hand_sizes"][row + 1])
        expected += [*parts["caught_ranks"][:, rank], parts["pool_size"][0]]
        np.testing.assert_array_equal(observation[cells[action]], np.array(expected))


def test_the_policy_gives_one_logit_per_ask_and_masks_illegal_ones():
    env = GoFishEnv(rules=Rules(), opponents="random", seat="random")
    model = MaskablePPO(
        AskScoringPolicy, env, policy_kwargs={"net_arch": [32], "rules": Rules()}, seed=0
    )
    observation, _ = env.reset(seed=1)
    mask = env.action_masks()
    distribution = model.policy.get_distribution(
        torch.as_tensor(observation[None]), action_masks=mask[None]
    )
    probs = distribution.distribution.probs[0].detach().numpy()
    assert probs.shape == (env.action_space.n,)
    assert probs[~mask].max() == 0 and np.isclose(probs[mask].sum(), 1.0)
    assert isinstance(model.policy.action_net, torch.nn.Identity)


def test_the_policy_refuses_rules_that_do_not_match_the_observation():
    env = GoFishEnv(rules=Rules(players=3), opponents="random")
    with pytest.raises(ValueError, match="but the rules and history given"):
        MaskablePPO(AskScoringPolicy, env, policy_kwargs={"rules": Rules(players=4)})


def test_imitation_fits_the_ask_scoring_policy_to_the_teacher():
    env = GoFishEnv(players=4, opponents="random", seat="random")
    demos = collect_demonstrations(env, "hard", games=60, gamma=0.99, seed=0)
    model = MaskablePPO(
        AskScoringPolicy, env, policy_kwargs={"net_arch": [64], "rules": Rules()}, seed=0
    )
    history = pretrain(model, demos, epochs=10, batch_size=64, seed=0)
    assert history[-1]["policy_loss"] < history[0]["policy_loss"]
    actions, _ = model.predict(demos.observations, action_masks=demos.masks, deterministic=True)
    assert (actions == demos.actions).mean() > 0.6


@pytest.mark.slow
def test_training_with_the_ask_scoring_policy_saves_a_model_that_plays(tmp_path):
    argv = ["--timesteps", "256", "--n-steps", "128", "--batch-size", "64", "--n-epochs", "2"]
    argv += ["--net-arch", "32", "--eval-every", "256", "--eval-deals", "1"]
    argv += ["--eval-cpus", "random", "--final-deals", "1", "--no-progress"]
    train.main([*argv, "--policy", "ask-scoring", "--out", str(tmp_path), "--name", "ask"])
    (run,) = tmp_path.iterdir()
    model = load_model(str(run / "model.zip"))
    assert isinstance(model.policy, AskScoringPolicy)
    player = PredictPlayer(model, deterministic=True)
    env = GoFishEnv(players=4, opponents="random", seat="random", illegal_action="raise")
    for episode in range(2):
        env.reset(seed=episode)
        done = False
        while not done:
            action = player.act(env.aec.turn(env.seat))
            assert env.action_masks()[action]
            _, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
