"""The agent loader of the train extra (``gofish_training.agents``): saved and loaded
MaskablePPO models as seat players, found by ``gofish_env`` through its entry point."""

from __future__ import annotations

import re
import zipfile
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from gofish_env import Rules, raw_env
from gofish_env.actions import ActionCodec
from gofish_env.agent_files import AgentFileError, read_agent_rules
from gofish_env.gym_env import GoFishEnv
from gofish_env.observation import ObservationLayout
from gofish_env.players import load_agent, make_player
from gofish_env.vector.gym_vector import GoFishVectorEnv
from gofish_training import agents
from gofish_training.agents import MaskablePPOPlayer

pytestmark = pytest.mark.torch


def seat_actions(player, seed: int) -> list[int]:
    """``player`` at every seat of a 3-player game: its actions, each checked legal."""
    env = raw_env(players=3)
    env.reset(seed=seed)
    player.reset(seed)
    actions = []
    while not env.game.is_over and not env.truncations[env.agent_selection]:
        turn = env.turn(env.game.current_player)
        action = player.act(turn)
        assert turn.action_mask[action] == 1
        actions.append(action)
        env.step(action)
    return actions


def test_a_maskable_ppo_model_plays_legal_actions_drawn_from_its_players_own_seed():
    model = MaskablePPO("MlpPolicy", GoFishEnv(players=3), n_steps=64, batch_size=64, seed=0)
    player = agents.model_player(model)
    assert isinstance(player, agents.MaskablePPOPlayer) and player.model is model
    assert isinstance(make_player(model), agents.MaskablePPOPlayer)  # through the entry point
    first = seat_actions(player, 3)
    torch.manual_seed(123)  # the global torch generator plays no part
    assert seat_actions(agents.model_player(model), 3) == first
    assert seat_actions(player, 4) != first
    # Deterministic: the most likely legal action.
    greedy = agents.model_player(model, deterministic=True)
    env = raw_env(players=3)
    env.reset(seed=5)
    turn = env.turn(env.game.current_player)
    observation = torch.as_tensor(turn.observation[None])
    with torch.no_grad():
        distribution = model.policy.get_distribution(observation, turn.action_mask[None])
    probs = distribution.distribution.probs[0].numpy()
    assert greedy.act(turn) == int(np.argmax(np.where(turn.action_mask, probs, -1.0)))
    assert agents.model_player(object()) is None  # not its kind of model


def test_a_copy_of_a_model_player_for_another_seat_shares_the_network_not_the_generator():
    import copy

    model = MaskablePPO("MlpPolicy", GoFishEnv(players=3), n_steps=64, batch_size=64, seed=0)
    player = agents.model_player(model)
    twin = copy.deepcopy(player)
    assert twin.model is model and twin.rng is not player.rng
    assert seat_actions(twin, 3) == seat_actions(player, 3)


def test_load_model_reports_a_file_sb3_cannot_load_in_one_line(tmp_path):
    path = tmp_path / "broken.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", "not what SB3 writes")
    with pytest.raises(AgentFileError, match=rf"^cannot load model file {re.escape(str(path))}: "):
        agents.load_model(str(path))
    with pytest.raises(AgentFileError) as caught:
        agents.load_agent(str(path))
    assert "\n" not in str(caught.value)


def test_model_can_be_a_gym_opponent(tmp_path):
    env = GoFishEnv(players=3, opponents="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0, device="cpu")
    path = tmp_path / "opponent.zip"
    model.save(path)
    opponent_env = GoFishEnv(players=3, opponents=f"model:{path}")
    _observation, info = opponent_env.reset(seed=0)
    assert np.any(info["action_mask"])


def test_a_model_whose_rules_are_not_recorded_is_refused_at_a_table_it_does_not_fit(
    agents, tmp_path
):
    # The agents' run model has no rules in its zip; out of its run folder nothing says
    # which table it was made for: its network's sizes must then fit the table's.
    loose = tmp_path / "loose.zip"
    loose.write_bytes(Path(agents["run"]).read_bytes())
    assert read_agent_rules(loose) is None
    with pytest.raises(AgentFileError) as refused:
        load_agent(loose, Rules(players=3))
    assert str(refused.value) == (
        f"{loose} was made for another table: it takes observations of 481 numbers and "
        "chooses among 39 actions; this table (3 players under table rules) has observations "
        "of 198 + 23 numbers per ask of history (382 with the default 8) and 26 actions"
    )
    player = load_agent(loose, Rules(players=4))  # the table it was made for
    assert (player.observation_size, player.action_count) == (
        ObservationLayout(Rules(players=4)).size,
        ActionCodec(Rules(players=4)).size,
    )
    assert isinstance(load_agent(loose), MaskablePPOPlayer)  # no table: no check


def test_a_model_without_recorded_rules_fits_its_table_whatever_its_history_length(tmp_path):
    # The history length is the env's to choose (GoFishEnv(history=...)) and is not
    # recorded: a model of another length is still one for this table.
    model = MaskablePPO("MlpPolicy", GoFishEnv(players=4, history=2), n_steps=64, seed=0)
    path = tmp_path / "short_history.zip"
    model.save(path)
    assert read_agent_rules(path) is None
    player = load_agent(path, Rules(players=4))
    assert player.observation_size == ObservationLayout(Rules(players=4), history=2).size
    with pytest.raises(AgentFileError, match="was made for another table"):
        load_agent(path, Rules(players=3))


@pytest.mark.parametrize("make_env", [GoFishEnv, partial(GoFishVectorEnv, 2)])
def test_an_env_refuses_an_opponent_of_another_history_when_it_is_built(tmp_path, make_env):
    # It was accepted, and failed at the opponent's first move ("mat1 and mat2 shapes").
    model = MaskablePPO("MlpPolicy", GoFishEnv(players=3), n_steps=64, seed=0)
    path = tmp_path / "history8.zip"
    model.save(path)
    size = ObservationLayout(Rules(players=3), history=4).size
    said = (
        rf"^opponents: it takes observations of 382 numbers \(history=8\); this table shows "
        rf"{size} \(history=4\), so it cannot play here$"
    )
    for opponents in (f"model:{path}", model, f"mix:easy,model:{path}"):
        with pytest.raises(ValueError, match=said):
            make_env(players=3, history=4, opponents=opponents)
    env = make_env(players=3, opponents=f"mix:easy,model:{path}")  # the history it takes
    env.reset(seed=0)


def test_the_harness_refuses_a_model_of_another_history_before_any_game(tmp_path):
    from gofish_baselines.tournament import run_tournament

    model = MaskablePPO("MlpPolicy", GoFishEnv(players=2, history=2), n_steps=64, seed=0)
    path = tmp_path / "short_history.zip"
    model.save(path)
    keep = tmp_path / "played.jsonl"
    with pytest.raises(ValueError, match=r"^entrant 'short': it takes observations of \d+ "):
        run_tournament({"short": f"model:{path}", "cpu": "easy"}, players=2, games=2, keep=keep)
    with pytest.raises(ValueError, match="history=8"):
        run_tournament({"short": model, "cpu": "easy"}, players=2, games=2)
    assert not keep.exists()
