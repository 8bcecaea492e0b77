"""Learning from a CPU before PPO (``gofish_training.imitation``): the demonstrations a
teacher gives (its legal asks, discounted returns, soft targets from the expert's scores),
pretraining on them, and the rank relabelling that renames the ranks of whole games. The
``--imitate`` options of training are tested in tests/test_training.py."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from gofish_env.actions import ActionCodec
from gofish_env.cards import RANK_NAMES, parse_card
from gofish_env.cpus import make_cpu
from gofish_env.game import Game
from gofish_env.gym_env import GoFishEnv
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.observation import ObservationLayout, encode
from gofish_env.players import make_player
from gofish_env.rules import Rules
from gofish_training import imitation
from gofish_training.imitation import (
    Demonstrations,
    RankRelabelling,
    collect_demonstrations,
    collect_in_parts,
    pretrain,
)

pytestmark = pytest.mark.torch


def test_demonstrations_record_the_teachers_legal_asks_and_discounted_returns():
    env = GoFishEnv(players=4, opponents="random", seat="random")
    demos = collect_demonstrations(env, "hard", games=6, gamma=0.9, seed=2)
    assert len(demos) > 6 * 5
    assert demos.observations.shape == (len(demos), env.observation_space.shape[0])
    assert demos.masks[np.arange(len(demos)), demos.actions].all()  # every ask was legal
    # Replaying the first game with the same teacher gives the same asks and the returns
    # are the discounted sums of that game's rewards.
    teacher = make_player("hard")
    env.reset(seed=2)
    teacher.reset(2)
    rewards, done, step = [], False, 0
    while not done:
        action = teacher.act(env.aec.turn(env.seat))
        assert action == demos.actions[step]
        _, reward, terminated, truncated, _ = env.step(action)
        rewards.append(reward)
        done, step = terminated or truncated, step + 1
    expected = [sum(r * 0.9**k for k, r in enumerate(rewards[i:])) for i in range(step)]
    np.testing.assert_allclose(demos.returns[:step], expected, rtol=1e-5)


def assert_same_demonstrations(first: Demonstrations, second: Demonstrations) -> None:
    for name in ("observations", "masks", "actions", "returns", "targets"):
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name), err_msg=name)


TEACHERS_TABLE = functools.partial(GoFishEnv, players=4, opponents="hard", seat="random")


def test_parts_played_by_two_workers_are_the_games_played_in_one_go(monkeypatch):
    monkeypatch.setattr(imitation, "CHUNK_GAMES", 2)  # parts of 2, 2 and 1 games
    whole = collect_demonstrations(TEACHERS_TABLE(), "expert", 5, 0.99, seed=7, temperature=0.3)
    parts = collect_in_parts(TEACHERS_TABLE, "expert", 5, 0.99, seed=7, temperature=0.3, workers=2)
    assert_same_demonstrations(parts, whole)
    assert parts.targets is not None


def test_a_stopped_collection_keeps_its_parts_and_goes_on_where_it_was(monkeypatch, tmp_path):
    monkeypatch.setattr(imitation, "CHUNK_GAMES", 2)
    whole = collect_demonstrations(TEACHERS_TABLE(), "hard", 5, 0.9, seed=3)
    played = []
    play = imitation._collect_part

    def stop_in_the_second_part(job):
        if len(played) == 1:
            raise KeyboardInterrupt
        played.append(job[0])  # the part's first game
        return play(job)

    monkeypatch.setattr(imitation, "_collect_part", stop_in_the_second_part)
    with pytest.raises(KeyboardInterrupt):
        collect_in_parts(TEACHERS_TABLE, "hard", 5, 0.9, seed=3, folder=tmp_path)
    assert sorted(path.name for path in tmp_path.glob("*.npz")) == ["games_0000000_0000002.npz"]

    monkeypatch.setattr(imitation, "_collect_part", lambda job: played.append(job[0]) or play(job))
    resumed = collect_in_parts(TEACHERS_TABLE, "hard", 5, 0.9, seed=3, folder=tmp_path)
    assert played == [0, 2, 4]  # the first part once, before the stop; then the other two
    assert_same_demonstrations(resumed, whole)
    assert resumed.targets is None
    assert len(list(tmp_path.glob("*.npz"))) == 3

    # Parts played with other settings are not taken for these: all are played again.
    played.clear()
    other = collect_in_parts(TEACHERS_TABLE, "hard", 5, 0.5, seed=3, folder=tmp_path)
    assert played == [0, 2, 4]
    assert_same_demonstrations(other, collect_demonstrations(TEACHERS_TABLE(), "hard", 5, 0.5, 3))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stop_check_after_a_part_ends_the_collection_with_that_part_kept(
    monkeypatch, tmp_path, workers
):
    monkeypatch.setattr(imitation, "CHUNK_GAMES", 1)
    checks = []

    def stop_at_the_first_check():
        checks.append(sorted(path.name for path in tmp_path.glob("*.npz")))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        collect_in_parts(
            TEACHERS_TABLE, "hard", 6, 0.9, seed=3, workers=workers, folder=tmp_path,
            after_part=stop_at_the_first_check,
        )  # fmt: skip
    assert len(checks) == 1 and len(checks[0]) >= 1  # called once a part is saved
    assert 1 <= len(list(tmp_path.glob("*.npz"))) < 6


def test_the_teachers_options_build_it_and_parts_with_other_options_are_played_again(
    monkeypatch, tmp_path
):
    built = []

    def spy(name, seed=None, **options):
        built.append((name, options))
        return make_cpu(name, seed, **options)

    monkeypatch.setattr(imitation, "make_cpu", spy)
    hard_rollouts = {"rollouts": "hard"}
    first = collect_in_parts(
        TEACHERS_TABLE, "master", 1, 0.9, seed=3, folder=tmp_path, teacher_options=hard_rollouts
    )
    assert built == [("master", hard_rollouts)]
    again = collect_in_parts(
        TEACHERS_TABLE, "master", 1, 0.9, seed=3, folder=tmp_path, teacher_options=hard_rollouts
    )
    assert len(built) == 1  # the part was kept, not played again
    assert_same_demonstrations(again, first)
    collect_in_parts(TEACHERS_TABLE, "master", 1, 0.9, seed=3, folder=tmp_path, teacher_options={})
    assert len(built) == 1  # no options: the level's own defaults, built by name
    other = {"rollouts": "random"}
    collect_in_parts(
        TEACHERS_TABLE, "master", 1, 0.9, seed=3, folder=tmp_path, teacher_options=other
    )
    assert built[1:] == [("master", other)]


def test_pretraining_makes_the_network_pick_the_teachers_asks():
    env = GoFishEnv(players=4, opponents="random", seat="random")
    demos = collect_demonstrations(env, "hard", games=60, gamma=0.99, seed=0)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [64, 64]}, seed=0)
    history = pretrain(model, demos, epochs=15, batch_size=64, seed=0)
    assert history[-1]["policy_loss"] < history[0]["policy_loss"]
    assert history[-1]["value_loss"] < history[0]["value_loss"]
    assert history[-1]["agreement"] > 0.6
    # The model PPO goes on with, acting greedily, repeats the teacher's asks.
    actions, _ = model.predict(demos.observations, action_masks=demos.masks, deterministic=True)
    assert (actions == demos.actions).mean() > 0.6


def assert_targets_spread_over_legal_asks_led_by_the_ask(demos) -> None:
    """Each soft target is a distribution over the legal asks whose largest weight is on
    the ask the teacher made (one of its highest-scored)."""
    rows = np.arange(len(demos))
    np.testing.assert_allclose(demos.targets.sum(axis=1), 1.0, rtol=1e-5)
    assert (demos.targets[~demos.masks] == 0).all()
    assert (demos.targets[rows, demos.actions] >= demos.targets.max(axis=1) - 1e-6).all()


def test_soft_targets_spread_the_experts_scores_over_its_legal_asks():
    env = GoFishEnv(players=4, opponents="hard", seat="random")
    demos = collect_demonstrations(env, "expert", games=4, gamma=0.99, seed=1, temperature=0.5)
    assert_targets_spread_over_legal_asks_led_by_the_ask(demos)
    assert (demos.targets.max(axis=1) < 1).any()  # not only one-hot rows
    hard_only = collect_demonstrations(env, "hard", games=2, gamma=0.99, seed=1, temperature=1)
    assert hard_only.targets is None  # hard gives no scores: its asks alone


def test_master_as_teacher_gives_its_searched_ask_the_largest_weight():
    env = GoFishEnv(players=2, opponents="expert", seat="random")
    demos = collect_demonstrations(env, "master", games=3, gamma=0.99, seed=3, temperature=0.3)
    assert_targets_spread_over_legal_asks_led_by_the_ask(demos)
    # The teacher plays the game master plays alone (scores decide, choose asks), its
    # searches at the end of the pool included.
    teacher = make_player("master")
    env.reset(seed=3)
    teacher.reset(3)
    done, step = False, 0
    while not done:
        action = teacher.act(env.aec.turn(env.seat))
        assert action == demos.actions[step]
        _, _, terminated, truncated, _ = env.step(action)
        done, step = terminated or truncated, step + 1
    assert teacher.cpu.searches_made > 0


def test_pretraining_on_soft_targets_makes_the_network_pick_the_teachers_asks():
    env = GoFishEnv(players=4, opponents="random", seat="random")
    demos = collect_demonstrations(env, "expert", games=60, gamma=0.99, seed=0, temperature=0.3)
    model = MaskablePPO("MlpPolicy", env, policy_kwargs={"net_arch": [64, 64]}, seed=0)
    history = pretrain(model, demos, epochs=15, batch_size=64, seed=0)
    assert history[-1]["policy_loss"] < history[0]["policy_loss"]
    actions, _ = model.predict(demos.observations, action_masks=demos.masks, deterministic=True)
    chosen = demos.targets[np.arange(len(demos)), actions]
    # Mostly asks the teacher scored (nearly) highest, where a random legal ask would carry
    # about 1 / 7 of the weight.
    assert chosen.mean() > 0.4
    assert (chosen >= 0.5 * demos.targets.max(axis=1)).mean() > 0.75


def renamed_card(text: str, new: list[int]) -> str:
    rank, _ = parse_card(text)
    return f"{RANK_NAMES[new[rank]]}{text[-1]}"


@pytest.mark.parametrize("preset", ["table", "pairs", "two_decks"])
def test_rank_relabelling_gives_what_the_renamed_game_shows(preset):
    # The same deal with every card's rank renamed, and the same asks renamed: what each
    # seat observes, its mask and its ask are the relabelled originals (all but the
    # tiebreak points, which depend on the ranks' face values).
    rules = Rules.preset(preset)
    layout = ObservationLayout(rules)
    codec = ActionCodec(rules)
    relabelling = RankRelabelling(layout)
    for seed in range(4):
        new = relabelling.renamings(1, torch.Generator().manual_seed(seed))[0].tolist()
        game = Game(rules, seed=seed)
        hands = [game.hand(seat) for seat in range(rules.players)]
        pool = game.pool_cards()
        renamed = Game.from_hands(
            [[renamed_card(c, new) for c in hand] for hand in hands],
            [renamed_card(c, new) for c in pool],
            rules,
            catches=[[new[rank] for rank in game.catches(seat)] for seat in range(rules.players)],
        )
        trackers = KnowledgeTracker(game), KnowledgeTracker(renamed)
        chooser = np.random.default_rng(seed)
        points = layout["tiebreak_points"]
        while not game.is_over and game.num_asks < 300:
            seat = game.current_player
            assert renamed.current_player == seat
            for viewer in range(rules.players):
                views = [tracker.view(viewer) for tracker in trackers]
                observations = [encode(view, layout) for view in views]
                masks = [codec.mask(viewer, view.legal_asks) for view in views]
                action = codec.to_action(seat, *game.legal_asks()[0]) if viewer == seat else 0
                got = relabelling.apply(
                    torch.as_tensor(observations[0][None]),
                    torch.as_tensor(masks[0][None]),
                    torch.as_tensor([action]),
                    torch.as_tensor([new]),
                    torch.as_tensor(masks[0][None].astype(np.float32)),  # as soft targets
                )
                np.testing.assert_array_equal(got[3][0].numpy(), masks[1].astype(np.float32))
                expected = observations[1].copy()
                relabelled = got[0][0].numpy()
                relabelled[points.start : points.stop] = expected[points.start : points.stop]
                np.testing.assert_array_equal(relabelled, expected)
                np.testing.assert_array_equal(got[1][0].numpy(), masks[1])
                if viewer == seat:
                    target, rank = game.legal_asks()[0]
                    assert int(got[2][0]) == codec.to_action(seat, target, new[rank])
            target, rank = game.legal_asks()[int(chooser.integers(len(game.legal_asks())))]
            game.ask(target, rank)
            renamed.ask(target, new[rank])


def test_rank_relabelling_keeps_jokers_and_refuses_exact_card_asks():
    relabelling = RankRelabelling(ObservationLayout(Rules.preset("pairs", jokers=True)))
    new = relabelling.renamings(50, torch.Generator().manual_seed(0))
    assert (new[:, 13] == 13).all()  # the joker pairs only with the other joker
    assert (new[:, :13].sort(dim=1).values == torch.arange(13)).all()
    assert (new[:, :13] != torch.arange(13)).any()
    with pytest.raises(ValueError, match="ask_for is 'card'; allowed: 'rank'"):
        RankRelabelling(ObservationLayout(Rules.preset("authors")))
    assert RankRelabelling.for_rules(Rules.preset("authors")) is None
