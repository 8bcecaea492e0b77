"""Training (``gofish_training.train``) end to end on a tiny budget: train, then evaluate;
the files, the table, the model, self-play, resuming, imitation, and the refusal of bad
training arguments. Evaluation, imitation, the agent loader and the vec envs have their own
modules: tests/test_evaluate.py, test_imitation.py, test_agents.py, test_vec_env.py."""

from __future__ import annotations

import json
import shutil
import time

import pytest
import torch
from sb3_contrib import MaskablePPO

from gofish_env.gym_env import GoFishEnv
from gofish_env.master import (
    OTHER_SIMULATIONS,
    SIMULATIONS,
    MasterCPU,
    default_pool_limit,
    default_simulations,
)
from gofish_env.rules import Rules
from gofish_training import evaluate as evaluate_module
from gofish_training import train

pytestmark = pytest.mark.torch

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
def test_tensorboard_has_every_evaluation_at_its_own_step(tiny_run):
    """eval/win_rate_vs_LEVEL: each evaluation at the step it was made, the final one (after
    PPO's last log) included, as in evaluation.json's history."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run, report = tiny_run
    (log,) = (run / "tensorboard").iterdir()
    events = EventAccumulator(str(log))
    events.Reload()
    for level in ("random", "easy"):
        expected = [
            (entry["timesteps"], result["win_rate"])
            for entry in report["history"]
            for result in entry["results"]
            if result["cpu"] == level
        ]
        logged = [(e.step, e.value) for e in events.Scalars(f"eval/win_rate_vs_{level}")]
        assert [step for step, _ in logged] == [step for step, _ in expected]
        assert [value for _, value in logged] == pytest.approx([v for _, v in expected])


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
    (run,) = tmp_path.iterdir()
    snapshots = report["snapshots"]
    assert len(snapshots) == 2  # the pool keeps the newest two
    # Kept relative to the run folder; the opponents play the files there.
    assert all(name.startswith("snapshots/") and (run / name).is_file() for name in snapshots)
    for seat_specs in report["opponents_at_end"]:
        mix = seat_specs[0]
        assert mix.startswith("mix:")
        assert all(f"model:{run.resolve() / name}" in mix for name in snapshots)
        assert "random" in mix and "easy" in mix


@pytest.mark.slow
def test_resume_continues_from_a_saved_model(tiny_run, tmp_path):
    run, _ = tiny_run
    report = train.main(
        [*TINY, "--timesteps", "256", "--resume", str(run / "model.zip"), "--out", str(tmp_path)]
    )
    steps = [entry["timesteps"] for entry in report["history"]]
    assert steps[0] > 512  # counts on from the saved model's 512 steps


@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--net-arch", "64"], "--net-arch: a run from {zip} keeps its network (--net-arch 32"),
        (["--policy", "ask-scoring"], "--policy: a run from {zip} keeps its network (--policy m"),
    ],
)
def test_resume_from_a_model_refuses_another_network(tiny_run, tmp_path, capsys, argv, message):
    run, _ = tiny_run
    zip_file = run / "model.zip"
    with pytest.raises(SystemExit) as stop:
        train.main(["--resume", str(zip_file), *argv, "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert message.format(zip=zip_file) in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_resume_from_a_model_records_its_network(tiny_run, tmp_path):
    """Not the defaults (mlp, 256,256) it never had: the network of the model, which the
    run goes on with."""
    run, _ = tiny_run
    argv = ["--resume", str(run / "model.zip"), "--net-arch", "32, 32", "--out", str(tmp_path)]
    for given in (argv, argv[:2] + argv[4:]):
        opened = train.open_run(given)
        saved = json.loads((opened.folder / "args.json").read_text())
        assert (saved["policy"], saved["net_arch"]) == ("mlp", "32,32")
        assert (opened.args.policy, opened.args.net_arch) == ("mlp", "32,32")
        shutil.rmtree(opened.folder)


@pytest.mark.slow
def test_the_rules_compiled_in_train_the_same_network(tiny_run, tmp_path, monkeypatch):
    run, report = tiny_run
    built, vec_env = [], train.VectorVecEnv
    monkeypatch.setattr(train, "VectorVecEnv", lambda *a, **k: built.append(k) or vec_env(*a, **k))
    compiled = train.main(
        [*TINY, "--out", str(tmp_path), "--name", "tiny", "--seed", "3", "--compile-rules"]
    )
    assert built[0]["compile_rules"] is True
    assert compiled["final"] == report["final"]
    (folder,) = tmp_path.iterdir()
    for before, after in zip(
        MaskablePPO.load(run / "model.zip").policy.state_dict().values(),
        MaskablePPO.load(folder / "model.zip").policy.state_dict().values(),
        strict=True,
    ):
        assert torch.equal(before, after)


@pytest.mark.slow
def test_training_can_start_by_imitating_a_cpu(tmp_path, monkeypatch):
    collect = train.collect_in_parts

    def slow_collect(*args, **kwargs):
        time.sleep(10)  # longer than the rest of the run's set-up and evaluations
        return collect(*args, **kwargs)

    monkeypatch.setattr(train, "collect_in_parts", slow_collect)
    imitation = ["--imitate", "hard", "--imitate-games", "30", "--imitate-epochs", "3"]
    # Three passes over 30 games: without renamed ranks, so the fit shows within them.
    start = time.perf_counter()
    report = train.main([*TINY, "--out", str(tmp_path), *imitation, "--no-imitate-relabel"])
    elapsed = time.perf_counter() - start
    assert len(report["imitation"]) == 3
    timing = report["timing"]
    assert timing["imitation_seconds"].keys() == {"games", "fit"}
    assert timing["imitation_seconds"]["games"] >= 10 and timing["imitation_seconds"]["fit"] > 0
    # The imitation is timed apart, not counted as PPO's training time too.
    assert timing["train_seconds"] + sum(timing["imitation_seconds"].values()) < elapsed
    assert report["imitation"][-1]["agreement"] > report["imitation"][0]["agreement"]
    assert train.parse_args([]).imitate_relabel  # renamed ranks are the default


@pytest.mark.slow
def test_imitating_master_plays_it_with_the_named_rollouts_and_keeps_them_with_the_games(
    tmp_path, monkeypatch
):
    collect, kept = train.collect_in_parts, {}

    def keep_the_settings(*args, folder, **kwargs):
        demos = collect(*args, folder=folder, **kwargs)
        kept["settings"] = json.loads((folder / "settings.json").read_text())
        return demos

    monkeypatch.setattr(train, "collect_in_parts", keep_the_settings)
    imitation = ["--imitate", "master", "--imitate-games", "2", "--imitate-epochs", "1"]
    train.main([*TINY, "--out", str(tmp_path), *imitation, "--imitate-rollouts", "random"])
    assert kept["settings"][0] == "master" and kept["settings"][-1] == {
        "rollouts": "random",
        "pool_limit": default_pool_limit(4),
        "simulations": default_simulations(4),
    }
    (folder,) = tmp_path.iterdir()
    assert json.loads((folder / "args.json").read_text())["imitate_rollouts"] == "random"


def test_masters_rollouts_as_a_teacher_are_the_named_ones_or_its_default_for_the_table():
    def options(*argv):
        args = train.parse_args(list(argv))
        return train.teacher_options(args, Rules(players=args.players))

    # At three and four players the table's level changes within the window (hard above 8).
    for players in ("3", "4"):
        assert options("--imitate", "master", "--players", players) == {
            "rollouts": "table",
            "pool_limit": 16,
            "simulations": OTHER_SIMULATIONS,
        }
    # Two players search with the bigger budget of their table.
    assert options("--imitate", "master", "--players", "2") == {
        "rollouts": "hard",
        "pool_limit": 12,
        "simulations": SIMULATIONS[2],
    }
    assert options("--imitate", "master", "--players", "5") == {
        "rollouts": "expert",
        "pool_limit": 8,
        "simulations": OTHER_SIMULATIONS,
    }
    named = options("--imitate", "master", "--players", "4", "--imitate-rollouts", "hard")
    assert named == {"rollouts": "hard", "pool_limit": 16, "simulations": OTHER_SIMULATIONS}
    # From 8 cards the four-player table is expert's alone: the teacher before 16 cards.
    earlier = options("--imitate", "master", "--players", "4", "--imitate-pool-limit", "8")
    assert earlier == {"rollouts": "expert", "pool_limit": 8, "simulations": OTHER_SIMULATIONS}
    teacher = MasterCPU(1, **earlier)
    assert (teacher.search_limit(4), teacher.rollout_level(4, 8)) == (8, "expert")
    assert MasterCPU(1, **options("--imitate", "master")).rollout_level(4, 9) == "hard"
    assert options("--imitate", "expert") is None


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
        (
            ["--imitate", "hard", "--imitate-rollouts", "hard"],
            "--imitate-rollouts: sets master's rollouts; allowed with --imitate master",
        ),
        (
            ["--imitate-rollouts", "hard"],
            "--imitate-rollouts: sets master's rollouts; allowed with --imitate master",
        ),
        (
            ["--imitate", "master", "--imitate-rollouts", "master"],
            "--imitate-rollouts: got 'master'; allowed: random, easy, normal, hard, expert",
        ),
        (
            ["--imitate", "hard", "--imitate-pool-limit", "8"],
            "--imitate-pool-limit: sets where master searches; allowed with --imitate master",
        ),
        (
            ["--imitate", "master", "--imitate-pool-limit", "eight"],
            "--imitate-pool-limit: got 'eight'; allowed: an integer >= 0",
        ),
        (
            ["--imitate", "master", "--imitate-pool-limit", "-1"],
            "--imitate-pool-limit: got '-1'; allowed: an integer >= 0",
        ),
        (["--policy", "transformer"], "--policy: got 'transformer'; allowed: mlp, ask-scoring"),
        (["--vec-env", "threads"], "--vec-env: got 'threads'; allowed: dummy, subproc"),
    ],
)
def test_bad_training_arguments_are_refused_with_the_reason(argv, message, capsys):
    with pytest.raises(SystemExit):
        train.parse_args(argv)
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("steps", [None, "env steps sampled by RLlib"])
def test_the_learning_curve_names_its_x_axis(tmp_path, monkeypatch, steps):
    """The axis says what the steps are, not the list of them (a loop once reused the name)."""
    from matplotlib.axes import Axes

    from gofish_training.plots import plot_learning_curve

    labels = []
    monkeypatch.setattr(Axes, "set_xlabel", lambda axes, text, **_: labels.append(text))
    result = {"cpu": "easy", "win_rate": 0.3, "win_rate_ci": (0.2, 0.4), "fair_share": 0.25}
    history = [{"timesteps": t, "results": [result]} for t in (0, 5000, 10000)]
    extra = {} if steps is None else {"steps": steps}
    path = plot_learning_curve(history, tmp_path / "curve.png", "run", **extra)
    assert labels == [steps or "training steps"]
    assert path.stat().st_size > 1000


def test_the_learning_curve_draws_each_level_over_the_points_that_have_it(tmp_path, monkeypatch):
    """A run resumed with other --eval-cpus has points of other levels: each level is a
    line over its own points (the first point's levels were once assumed everywhere)."""
    from matplotlib.axes import Axes

    from gofish_training.plots import plot_learning_curve

    lines = {}
    plot = Axes.plot

    def spy(axes, x, y, **kwargs):
        lines[kwargs["label"]] = list(x)
        return plot(axes, x, y, **kwargs)

    monkeypatch.setattr(Axes, "plot", spy)

    def result(cpu):
        return {"cpu": cpu, "win_rate": 0.3, "win_rate_ci": (0.2, 0.4), "fair_share": 0.25}

    history = [
        {"timesteps": 0, "results": [result("random")]},
        {"timesteps": 512, "results": [result("random")]},
        {"timesteps": 1024, "results": [result("hard"), result("easy")]},
        {"timesteps": 2048, "results": [result("hard"), result("easy")]},
    ]
    path = plot_learning_curve(history, tmp_path / "curve.png", "run")
    assert lines == {"vs random": [0, 512], "vs hard": [1024, 2048], "vs easy": [1024, 2048]}
    assert path.stat().st_size > 1000


def test_the_help_gives_each_default_once_and_the_scoring_teachers():
    text = " ".join(train.build_parser().format_help().split())
    assert "run name (default: made from the args) --progress" in text
    assert "(expert or master, rank asks)" in text
