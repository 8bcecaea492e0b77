"""End to end on a tiny budget: train, then evaluate; the files, the table, the model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sb3_contrib import MaskablePPO

from gofish_env.actions import ActionCodec
from gofish_env.cards import RANK_NAMES, parse_card
from gofish_env.game import Game
from gofish_env.gym_env import GoFishEnv
from gofish_env.knowledge import KnowledgeTracker
from gofish_env.observation import ObservationLayout, encode
from gofish_env.players import make_player
from gofish_env.rules import Rules
from gofish_training import evaluate as evaluate_module
from gofish_training import train
from gofish_training.imitation import RankRelabelling, collect_demonstrations, pretrain

TINY = [
    "--timesteps",
    "512",
    "--n-steps",
    "128",
    "--batch-size",
    "64",
    "--n-epochs",
    "2",
    "--net-arch",
    "32,32",
    "--eval-every",
    "256",
    "--eval-deals",
    "2",
    "--eval-cpus",
    "random,easy",
    "--final-deals",
    "2",
    "--checkpoint-every",
    "256",
    "--no-progress",
]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    report = train.main([*TINY, "--out", str(out), "--name", "tiny", "--seed", "3"])
    (run,) = out.iterdir()
    return run, report


@pytest.mark.slow
def test_training_writes_model_evaluation_curve_and_checkpoints(tiny_run):
    run, _report = tiny_run
    assert (run / "model.zip").is_file()
    assert (run / "learning_curve.png").stat().st_size > 1000
    assert list((run / "checkpoints").glob("model_*.zip"))
    assert list((run / "tensorboard").rglob("events.out.tfevents.*"))
    saved = json.loads((run / "evaluation.json").read_text())
    assert [level["cpu"] for level in saved["final"]] == ["random", "easy"]
    assert all(level["games"] == 2 * 4 for level in saved["final"])
    # Evaluations at the start, every 256 steps, and after training.
    assert next(entry["timesteps"] for entry in saved["history"]) <= 2
    assert len(saved["history"]) >= 3
    assert 0 < saved["timing"]["env_fraction"] < 1


@pytest.mark.slow
def test_trained_model_loads_and_only_makes_legal_asks(tiny_run):
    run, _ = tiny_run
    model = MaskablePPO.load(run / "model.zip", device="cpu")
    env = GoFishEnv(players=4, opponents="random", seat="random", illegal_action="raise")
    for episode in range(3):
        observation, _ = env.reset(seed=episode)
        done = False
        while not done:
            mask = env.action_masks()
            action, _ = model.predict(observation, action_masks=mask)
            assert mask[int(action)]
            observation, _, terminated, truncated, _ = env.step(int(action))
            done = terminated or truncated


@pytest.mark.slow
def test_evaluate_command_prints_the_table(tiny_run, capsys, tmp_path):
    run, _ = tiny_run
    output = tmp_path / "eval.json"
    results = evaluate_module.main(
        [str(run / "model.zip"), "--cpus", "random", "--deals", "2", "--json", str(output)]
    )
    printed = capsys.readouterr().out
    assert "random" in printed and "win rate" in printed
    assert results[0].games == 8
    assert json.loads(output.read_text())[0]["cpu"] == "random"


@pytest.mark.slow
def test_same_seed_gives_the_same_first_evaluation(tmp_path):
    reports = [
        train.main([*TINY, "--timesteps", "128", "--out", str(tmp_path / str(k)), "--seed", "5"])
        for k in range(2)
    ]
    first = [report["history"][0]["results"] for report in reports]
    assert first[0] == first[1]


def test_evaluation_counts_shared_wins_and_rotates_the_agent_through_every_seat():
    # A "random" agent against random CPUs: every seat is played once per deal, so the
    # win shares of one deal's four games add up to at most 1 per game.
    (result,) = evaluate_module.evaluate("random", ["random"], deals=5, seed=1)
    assert result.games == 20
    assert 0.0 <= result.win_rate <= 1.0
    low, high = result.win_rate_ci
    assert low <= result.win_rate <= high


def test_evaluation_results_are_plain_json():
    (result,) = evaluate_module.evaluate("random", ["random"], deals=3, seed=2)
    assert result.win_rate_ci is not None
    assert json.loads(json.dumps(evaluate_module.results_json([result])))[0]["cpu"] == "random"


def test_level_result_beats_only_when_the_interval_clears_the_fair_share():
    beats = evaluate_module.LevelResult("easy", 40, 0.6, (0.3, 0.9), 2.0, 0.25)
    unsure = evaluate_module.LevelResult("easy", 40, 0.4, (0.2, 0.6), 2.0, 0.25)
    assert beats.beats and not unsure.beats


def test_model_can_be_a_gym_opponent(tmp_path):
    env = GoFishEnv(players=3, opponents="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, seed=0, device="cpu")
    path = tmp_path / "opponent.zip"
    model.save(path)
    opponent_env = GoFishEnv(players=3, opponents=f"model:{path}")
    _observation, info = opponent_env.reset(seed=0)
    assert np.any(info["action_mask"])


def test_vec_env_serves_the_same_masks_as_the_envs():
    from stable_baselines3.common.vec_env import DummyVecEnv

    from gofish_training.vec_env import TimedMaskedVecEnv

    envs = [lambda k=k: GoFishEnv(players=3, opponents="random", seat=k) for k in range(2)]
    venv = TimedMaskedVecEnv(DummyVecEnv(envs))
    venv.seed(4)
    venv.reset()
    rng = np.random.default_rng(0)
    episodes_ended = 0
    for _ in range(300):
        served = venv.env_method("action_masks")
        direct = venv.venv.env_method("action_masks")
        assert all(np.array_equal(a, b) for a, b in zip(served, direct, strict=True))
        actions = [rng.choice(np.flatnonzero(mask)) for mask in served]
        _, _, dones, _ = venv.step(np.array(actions))
        episodes_ended += int(dones.sum())
    assert episodes_ended > 0  # masks after an automatic reset were checked too
    assert venv.seconds > 0


@pytest.mark.slow
def test_selfplay_snapshots_join_the_opponent_mix(tmp_path):
    report = train.main(
        [
            *TINY,
            "--opponents",
            "selfplay",
            "--snapshot-every",
            "128",
            "--snapshot-pool",
            "2",
            "--out",
            str(tmp_path),
        ]
    )
    snapshots = report["snapshots"]
    assert len(snapshots) == 2  # the pool keeps the newest two
    assert all(Path(spec.removeprefix("model:")).is_file() for spec in snapshots)
    for seat_specs in report["opponents_at_end"]:
        mix = seat_specs[0]
        assert mix.startswith("mix:") and all(spec in mix for spec in snapshots)
        assert "random" in mix and "easy" in mix


@pytest.mark.slow
def test_resume_continues_from_a_saved_model(tiny_run, tmp_path):
    run, _ = tiny_run
    report = train.main(
        [*TINY, "--timesteps", "256", "--resume", str(run / "model.zip"), "--out", str(tmp_path)]
    )
    steps = [entry["timesteps"] for entry in report["history"]]
    assert steps[0] > 512  # counts on from the saved model's 512 steps


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


def test_soft_targets_spread_the_experts_scores_over_its_legal_asks():
    env = GoFishEnv(players=4, opponents="hard", seat="random")
    demos = collect_demonstrations(env, "expert", games=4, gamma=0.99, seed=1, temperature=0.5)
    rows = np.arange(len(demos))
    np.testing.assert_allclose(demos.targets.sum(axis=1), 1.0, rtol=1e-5)
    assert (demos.targets[~demos.masks] == 0).all()
    # The expert asks one of its highest-scored asks: the target's largest weight.
    assert (demos.targets[rows, demos.actions] >= demos.targets.max(axis=1) - 1e-6).all()
    assert (demos.targets.max(axis=1) < 1).any()  # not only one-hot rows
    hard_only = collect_demonstrations(env, "hard", games=2, gamma=0.99, seed=1, temperature=1)
    assert hard_only.targets is None  # hard gives no scores: its asks alone


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
    torch = pytest.importorskip("torch")
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
    torch = pytest.importorskip("torch")
    relabelling = RankRelabelling(ObservationLayout(Rules.preset("pairs", jokers=True)))
    new = relabelling.renamings(50, torch.Generator().manual_seed(0))
    assert (new[:, 13] == 13).all()  # the joker pairs only with the other joker
    assert (new[:, :13].sort(dim=1).values == torch.arange(13)).all()
    assert (new[:, :13] != torch.arange(13)).any()
    with pytest.raises(ValueError, match="ask_for is 'card'; allowed: 'rank'"):
        RankRelabelling(ObservationLayout(Rules.preset("authors")))
    assert RankRelabelling.for_rules(Rules.preset("authors")) is None


@pytest.mark.slow
def test_training_can_start_by_imitating_a_cpu(tmp_path):
    imitation = ["--imitate", "hard", "--imitate-games", "30", "--imitate-epochs", "3"]
    # Three passes over 30 games: without renamed ranks, so the fit shows within them.
    report = train.main([*TINY, "--out", str(tmp_path), *imitation, "--no-imitate-relabel"])
    assert len(report["imitation"]) == 3
    assert report["imitation"][-1]["agreement"] > report["imitation"][0]["agreement"]
    assert train.parse_args([]).imitate_relabel  # renamed ranks are the default


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--imitate", "grandmaster"], "--imitate: got 'grandmaster'; allowed: random, easy"),
        (["--imitate", "hard", "--resume", "model.zip"], "cannot go with --resume"),
        (["--imitate", "hard", "--imitate-games", "0"], "--imitate-games: got 0"),
        (["--imitate", "hard", "--imitate-epochs", "-1"], "--imitate-epochs: got -1"),
        (["--imitate", "expert", "--imitate-temperature", "-1"], "--imitate-temperature: got"),
        (
            ["--imitate", "hard", "--imitate-temperature", "0.3"],
            "the 'hard' CPU gives no scores to learn; allowed with --imitate expert",
        ),
        (["--policy", "transformer"], "--policy: got 'transformer'; allowed: mlp, ask-scoring"),
        (["--vec-env", "threads"], "--vec-env: got 'threads'; allowed: dummy, subproc"),
    ],
)
def test_bad_training_arguments_are_refused_with_the_reason(argv, message, capsys):
    with pytest.raises(SystemExit):
        train.parse_args(argv)
    assert message in capsys.readouterr().err
