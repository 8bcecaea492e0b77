"""``gofish-rllib-train`` end to end on tiny budgets: iterations with one and two EnvRunners,
checkpoints that restore to the same actions, resumes, Ctrl-C, and arguments refused
before any work."""

from __future__ import annotations

import contextlib
import copy
import csv
import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import ray
import torch
from helpers import ctrl_c_reaches_it

from gofish_env.aec_env import raw_env
from gofish_env.agent_files import AgentFileError
from gofish_env.players import make_player
from gofish_env.rules import Rules
from gofish_training import rllib_train
from gofish_training.rllib_agents import RLModulePlayer, load_module
from gofish_training.rllib_policies import LEARNER

pytestmark = [pytest.mark.torch, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
TINY = [
    "--iterations",
    "1",
    "--train-batch",
    "400",
    "--minibatch",
    "100",
    "--epochs",
    "1",
    "--hidden",
    "32",
    "--envs-per-runner",
    "2",
    "--eval-deals",
    "1",
    "--eval-cpus",
    "random,easy",
    "--final-deals",
    "1",
    "--no-progress",
]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """One Ray for the in-process runs of this module (rllib_train reuses it)."""
    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False)  # 2 runners, 1 learner
    yield
    ray.shutdown()


def run_folder(out: Path) -> Path:
    (folder,) = [path for path in out.iterdir() if path.is_dir()]
    return folder


def turns(players: int, count: int) -> list:
    """Seat turns from random games, to compare players' choices on."""
    env = raw_env(players=players)
    rng = np.random.default_rng(0)
    found = []
    while len(found) < count:
        env.reset(seed=len(found))
        while not env.game.is_over and len(found) < count:
            seat = env.game.current_player
            turn = env.turn(seat)
            found.append(turn)
            env.step(int(rng.choice(np.flatnonzero(turn.action_mask))))
    return found


@pytest.mark.parametrize(("runners", "learners"), [(1, 0), (2, 1)])
def test_an_iteration_trains_evaluates_and_saves(tmp_path, runners, learners, capsys):
    args = [*TINY, "--env-runners", str(runners), "--learners", str(learners)]
    report = rllib_train.main([*args, "--out", str(tmp_path)])
    folder = run_folder(tmp_path)
    rows = (folder / "metrics.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].startswith("1,")
    assert int(rows[1].split(",")[2]) >= 400  # env steps sampled in the iteration
    assert [level["cpu"] for level in report["final"]] == ["random", "easy"]
    assert all(level["games"] == 4 for level in report["final"])  # 1 deal x 4 rotations
    for name in ("checkpoint", "module", "evaluation.json", "learning_curve.png", "tensorboard"):
        assert (folder / name).exists(), name
    assert json.loads((folder / "state.json").read_text())["status"] == "finished"
    assert "CPU level" in capsys.readouterr().out  # the win-rate table
    # Self-play: every seat is the learner's. Its return per seat, not the sum over the
    # seats (every catch of the game: 13 at the 4-player table).
    (row,) = csv.DictReader(rows)
    assert 0 < float(row["learner_return_per_seat"]) <= 13 / 4 + 1e-6


# Installs only the rllib extra, as far as imports go: the train extra's libraries are
# hidden in every process of the run (Ray's workers read PYTHONPATH too).
HIDE_THE_TRAIN_EXTRA = """
import importlib.abc, importlib.util, sys
HIDDEN = {"stable_baselines3", "sb3_contrib", "tensorboard", "tqdm"}
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Hide())
found = importlib.util.find_spec
importlib.util.find_spec = lambda name, package=None: (
    None if name.split(".")[0] in HIDDEN else found(name, package)
)
"""


def test_the_command_trains_with_the_rllib_extra_alone(tmp_path):
    """``pip install gofish-env[rllib]`` (docs/rllib.md): the command needs none of the SB3
    side."""
    (tmp_path / "sitecustomize.py").write_text(HIDE_THE_TRAIN_EXTRA)
    paths = [str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    code = (
        "import importlib.util, sys; assert importlib.util.find_spec('stable_baselines3') is None; "
        "from gofish_training import rllib_train_cli; sys.argv[0] = 'gofish-rllib-train'; "
        "rllib_train_cli()"
    )
    args = [*TINY, "--env-runners", "1", "--out", str(tmp_path / "runs")]
    run = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600, env=env
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Trained 1 iterations" in run.stdout
    assert (run_folder(tmp_path / "runs") / "module").is_dir()


def test_a_checkpoint_and_the_exported_module_restore_the_same_actions(tmp_path):
    rllib_train.main([*TINY, "--env-runners", "1", "--out", str(tmp_path)])
    folder = run_folder(tmp_path)
    run = rllib_train.open_run(["--resume", str(folder)])
    config = rllib_train.build_config(run)
    spec = rllib_train.learner_spec(config, run.args)
    trained = load_module(folder / "module", Rules(players=4))
    with pytest.raises(AgentFileError, match="trained for 4 players"):
        load_module(folder / "module", Rules(players=3))
    algorithm = config.build_algo()
    try:
        algorithm.restore_from_path((folder / rllib_train.CHECKPOINT).resolve())
        restored = rllib_train.learner_player(algorithm, spec)
    finally:
        algorithm.stop()
    exported = RLModulePlayer(trained)
    loaded = make_player(f"model:{folder / 'module'}", Rules(players=4), deterministic=True)
    assert isinstance(loaded, RLModulePlayer)  # an exported module is a saved agent
    fresh = RLModulePlayer(spec.build())
    differs = False
    for turn in turns(4, 200):
        want = exported.probabilities(turn.observation, turn.action_mask)
        got = restored.probabilities(turn.observation, turn.action_mask)
        np.testing.assert_allclose(got, want, rtol=0, atol=0)
        assert restored.act(turn) == exported.act(turn) == loaded.act(turn)
        differs |= fresh.act(turn) != exported.act(turn)
    assert differs  # an untrained network would choose otherwise: the weights came back
    samplers = [RLModulePlayer(module, deterministic=False) for module in (trained, trained)]
    for sampler in samplers:
        sampler.reset(7)
    assert [samplers[0].act(t) for t in turns(4, 50)] == [samplers[1].act(t) for t in turns(4, 50)]
    twin = copy.deepcopy(samplers[0])  # a player for another seat: the same module
    assert twin.module is trained and twin.rng is not samplers[0].rng


def test_an_exported_module_tells_its_sizes_and_is_refused_at_a_table_they_do_not_fit(tmp_path):
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from gofish_training.rllib_agents import export_module
    from gofish_training.rllib_module import MaskedActorCritic

    env = raw_env(players=4)
    seat = env.possible_agents[0]
    module = RLModuleSpec(
        module_class=MaskedActorCritic,
        observation_space=env.observation_space(seat),
        action_space=env.action_space(seat),
        model_config={"hidden": [8]},
    ).build()
    folder = export_module(module, tmp_path / "module", Rules(players=4))
    player = make_player(f"model:{folder}", Rules(players=4))
    assert (player.observation_size, player.action_count) == (481, 39)
    # Rules recorded wrongly (a hand-made folder): the network still has to fit the table.
    export_module(module, folder, Rules(players=3))
    with pytest.raises(AgentFileError, match=r"was made for another table: it takes "):
        make_player(f"model:{folder}", Rules(players=3))


def test_a_resumed_run_goes_on_to_its_new_budget(tmp_path):
    args = [*TINY, "--env-runners", "1", "--out", str(tmp_path), "--final-deals", "1"]
    rllib_train.main(args)
    folder = run_folder(tmp_path)
    state = json.loads((folder / "state.json").read_text())
    state["status"] = "training"  # as a stopped run leaves it
    (folder / "state.json").write_text(json.dumps(state))
    rllib_train.main(["--resume", str(folder), "--iterations", "2", "--no-progress"])
    rows = (folder / "metrics.csv").read_text().splitlines()[1:]
    assert [row.split(",")[0] for row in rows] == ["1", "2"]
    # RLlib's lifetime step count went on from the checkpoint, not from zero.
    assert int(rows[1].split(",")[1]) > int(rows[0].split(",")[1])


def test_a_finished_run_trains_on_to_a_new_iteration_count(tmp_path, capsys):
    rllib_train.main([*TINY, "--env-runners", "1", "--out", str(tmp_path)])
    folder = run_folder(tmp_path)
    saved = (folder / "args.json").read_text()
    # Nothing to do: the run is not touched, args.json keeps the arguments it ran with.
    rllib_train.main(["--resume", str(folder), "--final-deals", "3"])
    assert "finished already (1 iterations): nothing to do" in capsys.readouterr().out
    assert (folder / "args.json").read_text() == saved
    report = rllib_train.main(["--resume", str(folder), "--iterations", "2", "--no-progress"])
    assert report["iterations"] == 2 and report["args"]["iterations"] == 2
    rows = (folder / "metrics.csv").read_text().splitlines()[1:]
    assert [row.split(",")[0] for row in rows] == ["1", "2"]
    assert json.loads((folder / "args.json").read_text())["iterations"] == 2
    assert json.loads((folder / "state.json").read_text())["status"] == "finished"
    with pytest.raises(SystemExit):
        rllib_train.main(["--resume", str(folder), "--iterations", "1"])
    assert "--iterations: got 1; allowed: at least the 2 iterations" in capsys.readouterr().err


def test_diverged_weights_stop_the_run_before_its_first_checkpoint_which_resumes(
    tmp_path, capsys, monkeypatch
):
    # Weights gone NaN in the first iteration (as a far too large learning rate leaves
    # them): the run stops there, with no NaN checkpoint, and says so (the final evaluation
    # once said the learner "chose an illegal action"). state.json was written with the
    # folder, so --resume trains from the beginning in the same folder.
    from ray.rllib.algorithms.ppo import PPO

    train = PPO.train

    def diverging(self):
        result = train(self)
        state = self.learner_group.get_weights(module_ids=[LEARNER])[LEARNER]
        self.learner_group.set_weights({LEARNER: {k: v * np.nan for k, v in state.items()}})
        return result

    monkeypatch.setattr(PPO, "train", diverging)
    args = [*TINY, "--env-runners", "1", "--out", str(tmp_path)]
    with pytest.raises(SystemExit) as stopped:
        rllib_train.main(args)
    assert stopped.value.code == 1
    out = capsys.readouterr().out
    assert "the learner's weights are not finite (NaN or inf) after iteration 1" in out
    assert "no checkpoint yet: --resume trains again from the beginning" in out
    folder = run_folder(tmp_path)
    assert f"--resume {folder}" in out
    assert (folder / "error.log").is_file() and not (folder / rllib_train.CHECKPOINT).exists()
    monkeypatch.undo()
    report = rllib_train.main(["--resume", str(folder)])
    assert report["iterations"] == 1
    assert "no checkpoint, from the beginning" in capsys.readouterr().out
    rows = (folder / "metrics.csv").read_text().splitlines()[1:]
    assert [row.split(",")[0] for row in rows] == ["1"]


def test_a_resume_refusal_names_the_missing_file(tmp_path, capsys):
    with pytest.raises(SystemExit):
        rllib_train.open_run(["--resume", str(tmp_path)])
    assert f"{tmp_path} is not an RLlib training run (no args.json)" in capsys.readouterr().err


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "gofish_training.rllib_train", *args]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--env-runners", "0"], "--env-runners: got 0; allowed: an integer >= 1"),
        (["--opponents", "grandmaster"], "--opponents: unknown opponent 'grandmaster'"),
        (["--opponents", "easy", "--learner-seats", "4"], "--learner-seats: got 4"),
        (["--address", "nowhere"], "--address: got 'nowhere'; allowed"),
        (["--minibatch", "99999"], "--minibatch: got 99999"),
        (["--train-batch", "0"], "--train-batch: got 0; allowed: an integer >= 2"),
        (["--learners", "-1"], "--learners: got -1"),
        (["--eval-cpus", "easy,grandmaster"], "--eval-cpus: unknown CPU level"),
        (["--learning-rate", "inf"], "--learning-rate: got inf; allowed: a finite number > 0"),
        (["--ent-coef", "nan"], "--ent-coef: got nan; allowed: a finite number >= 0"),
        (["--clip-range", "inf"], "--clip-range: got inf; allowed: a finite number > 0"),
    ],
)
def test_bad_arguments_are_refused_before_any_work(tmp_path, args, message):
    result = subprocess.run(
        command(*args, "--out", str(tmp_path)), capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not any(tmp_path.iterdir())  # no run folder made


@pytest.mark.parametrize("address", ["127.0.0.1:9", "ray://127.0.0.1:9"])
def test_an_unreachable_cluster_fails_fast_with_a_message(tmp_path, address):
    start = time.perf_counter()
    result = subprocess.run(
        command(*TINY, "--address", address, "--out", str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert f"--address {address}: nothing answers at 127.0.0.1:9" in result.stdout
    assert time.perf_counter() - start < 60  # Ray alone waits 30 s to minutes
    assert not any(tmp_path.iterdir())  # nothing ran: no run folder left behind


def interrupted_run(out: Path, args: list[str], ready, timeout: float) -> tuple[int, str]:
    """Runs ``gofish-rllib-train ARGS --out OUT``, sends it SIGINT once ``ready(out)``, and
    returns its exit code and output (``timeout``: the seconds it may take to stop)."""
    process = subprocess.Popen(
        command(*args, "--out", str(out)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 240
        while not ready(out):
            if time.monotonic() > deadline:
                pytest.fail("the run did not get there in time")
            time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        stdout, _ = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, stdout


def test_ctrl_c_saves_the_run_and_says_how_to_go_on(tmp_path):
    def two_iterations(out: Path) -> bool:
        metrics = list(out.glob("*/metrics.csv"))
        return bool(metrics) and len(metrics[0].read_text().splitlines()) >= 3

    args = [*TINY, "--iterations", "500", "--checkpoint-every", "100", "--env-runners", "1"]
    returncode, stdout = interrupted_run(tmp_path, args, two_iterations, timeout=120)
    assert returncode == 130
    folder = run_folder(tmp_path)
    state = json.loads((folder / "state.json").read_text())
    assert state["status"] == "training" and state["iteration"] >= 2
    assert (folder / rllib_train.CHECKPOINT).is_dir()
    assert f"--resume {folder}" in stdout
    modules = folder / rllib_train.CHECKPOINT / "learner_group" / "learner" / "rl_module"
    assert (modules / LEARNER).is_dir()


def test_ctrl_c_in_the_final_report_stops_at_once_with_the_trained_run_kept(tmp_path):
    # After the last iteration the report runs outside the train loop's stop handling: a
    # Ctrl-C there stops at once and says how to go on (it once ended in a bare traceback).
    def reporting(out: Path) -> bool:
        states = list(out.glob("*/state.json"))
        return bool(states) and json.loads(states[0].read_text())["status"] == "trained"

    args = [*TINY, "--final-deals", "100000", "--env-runners", "1"]
    returncode, stdout = interrupted_run(tmp_path, args, reporting, timeout=60)
    assert returncode == 130
    folder = run_folder(tmp_path)
    assert json.loads((folder / "state.json").read_text())["status"] == "trained"
    assert not (folder / "evaluation.json").exists()
    assert "Interrupted; the checkpoint at iteration 1 is kept" in stdout
    assert f"--resume {folder}" in stdout


def logged_run(out: Path, args: list[str], ready, act, timeout: float) -> tuple[int, str]:
    """Runs ``gofish-rllib-train ARGS --out OUT`` (its own session, as a terminal's job,
    output to a file) and, once ``ready(output)``, calls ``act(process)``; returns its exit
    code and output."""
    log = out / "output.txt"
    with log.open("w") as handle:
        process = subprocess.Popen(
            command(*args, "--out", str(out / "runs")),
            stdout=handle,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=ROOT,
            start_new_session=True,
            preexec_fn=ctrl_c_reaches_it,
        )
    try:
        deadline = time.monotonic() + 240
        while not ready(log.read_text()):
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail(f"the run did not get there in time:\n{log.read_text()}")
            time.sleep(0.1)
        act(process)
        process.wait(timeout=timeout)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    return process.returncode, log.read_text()


def test_ctrl_c_while_rllib_builds_the_algorithm_exits_cleanly_with_nothing_kept(tmp_path):
    # RLlib takes seconds to build the algorithm (EnvRunners, learner): a Ctrl-C then once
    # ended in a KeyboardInterrupt traceback, leaving a folder --resume refused.
    args = [*TINY, "--env-runners", "1"]
    returncode, output = logged_run(
        tmp_path,
        args,
        lambda text: "Ray:" in text,
        lambda process: (time.sleep(1.0), process.send_signal(signal.SIGINT)),
        timeout=120,
    )
    assert returncode == 130, output
    assert "Interrupted before training began; nothing to keep." in output
    assert "Traceback" not in output
    assert not any((tmp_path / "runs").iterdir())


def descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (Ray's local workers are: raylet's children)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_env_runner(process) -> None:
    for pid in descendants(process.pid):
        with contextlib.suppress(OSError):
            name = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"ray::MultiAgentEnvRunner" in name:
                os.kill(pid, signal.SIGKILL)
                return
    pytest.fail("no EnvRunner process found")


def test_a_lost_env_runner_fails_the_run_with_the_resume_command(tmp_path):
    # RLlib restarted a lost EnvRunner and went on: iterations that sampled nothing counted
    # as training, and the run claimed its full count.
    args = [*TINY, "--env-runners", "1", "--iterations", "300", "--checkpoint-every", "2"]

    def two_iterations(_text: str) -> bool:
        metrics = list((tmp_path / "runs").glob("*/metrics.csv"))
        return bool(metrics) and len(metrics[0].read_text().splitlines()) >= 3

    returncode, output = logged_run(tmp_path, args, two_iterations, kill_env_runner, 120)
    assert returncode == 1, output
    folder = run_folder(tmp_path / "runs")
    assert "Training failed" in output and f"--resume {folder}" in output
    assert "the checkpoint at iteration" in output
    assert (folder / "error.log").is_file()
    state = json.loads((folder / "state.json").read_text())
    assert state["status"] == "training" and state["iteration"] < 300


def trained(out: Path, args: list[str], env: dict | None = None) -> Path:
    """The run folder of ``gofish-rllib-train ARGS --out OUT``, run to its end."""
    subprocess.run(
        command(*args, "--out", str(out)),
        check=True,
        capture_output=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )
    return run_folder(out)


def test_the_same_seed_trains_the_same_network_on_a_busy_machine(tmp_path, request):
    args = [*TINY, "--iterations", "2", "--env-runners", "2", "--envs-per-runner", "4"]
    folders = []
    for name, busy in (("quiet", False), ("busy", True)):
        if busy:
            request.getfixturevalue("busy_cores")
        # Each run its own random hash seed: the result must not depend on it.
        env = {key: value for key, value in os.environ.items() if key != "PYTHONHASHSEED"}
        folders.append(trained(tmp_path / name, args, env))
    quiet, busy = (load_module(folder / "module").state_dict() for folder in folders)
    assert quiet.keys() == busy.keys()
    assert all(torch.equal(quiet[key], busy[key]) for key in quiet)
    metrics = [(folder / "metrics.csv").read_text().splitlines() for folder in folders]
    losses = [[row.split(",")[8:] for row in rows[1:]] for rows in metrics]
    assert losses[0] == losses[1]


def test_the_same_seed_draws_the_same_snapshots_and_trains_the_same_network(tmp_path):
    # Which snapshot slot plays a seat was a hash of RLlib's episode id (a uuid4): with a
    # snapshot renewed every iteration, the same seed then trained another network.
    args = [*TINY, "--iterations", "3", "--env-runners", "1", "--envs-per-runner", "4"]
    args += ["--opponents", "mix:random,snapshot", "--snapshot-every", "1"]
    folders = [trained(tmp_path / name, args) for name in ("a", "b")]
    first, second = (load_module(folder / "module").state_dict() for folder in folders)
    assert all(torch.equal(first[key], second[key]) for key in first)
    metrics = [(folder / "metrics.csv").read_text().splitlines() for folder in folders]
    losses = [[row.split(",")[5:] for row in rows[1:]] for rows in metrics]
    assert losses[0] == losses[1]


def test_the_docs_example_builds_an_algorithm_that_samples():
    text = (ROOT / "docs" / "rllib.md").read_text()
    (code,) = re.findall(r"```python\n(.*?)```", text, re.S)
    namespace: dict = {}
    exec(compile(code, "docs/rllib.md", "exec"), namespace)
    algorithm = namespace["algorithm"]
    try:
        counts = algorithm.env_runner_group.foreach_env_runner(
            lambda runner: sum(episode.env_steps() for episode in runner.sample(num_timesteps=64)),
            local_env_runner=False,
        )
        assert len(counts) == 2 and min(counts) >= 64
    finally:
        algorithm.stop()


def test_rllib_sampling_never_asks_illegally_exploring_or_not():
    # The env raises IllegalAsk on an illegal ask: any illegal action RLlib's own sampling
    # path (connectors, its Categorical over the module's logits) chose would fail here.
    args = rllib_train.Args(env_runners=1, envs_per_runner=8, hidden="32")
    run = rllib_train.Run(args, rllib_train.EnvSettings.from_config({}), Path("unused"))
    config = rllib_train.build_config(run)
    config = config.environment(
        env_config={**config.env_config, "illegal_action": "raise"},
        disable_env_checking=True,  # RLlib's pre-check asks at random, unmasked
    )
    algorithm = config.env_runners(num_env_runners=0).build_algo()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the program runs its runners: batches of 8 observations
    try:
        for explore in (True, False):
            episodes = algorithm.env_runner.sample(num_timesteps=3000, explore=explore)
            assert sum(episode.env_steps() for episode in episodes) >= 3000
    finally:
        torch.set_num_threads(threads)
        algorithm.stop()


def test_the_learners_return_per_seat_leaves_out_a_seat_that_finished_no_episode():
    from gofish_training.rllib_train import learner_return_per_seat

    nan = float("nan")
    returns = {"learner_0": 4.75, "learner_2": nan, "learner_1": 4.25, "easy_3": 2.0}
    assert learner_return_per_seat({"agent_episode_returns_mean": returns}) == 4.5
    only_nan = {"agent_episode_returns_mean": {"learner_0": nan}}
    assert np.isnan(learner_return_per_seat(only_nan))
    assert np.isnan(learner_return_per_seat({}))


def test_resuming_keeps_the_metrics_rows_up_to_the_checkpoint_and_drops_a_cut_one(tmp_path):
    """A kill in the middle of a row's write leaves a cut row: with all its fields but a
    cut last number, or with a cut iteration (12 cut to "1"). Neither is kept."""
    columns = ",".join(rllib_train.MetricsLog.COLUMNS)
    row = {
        n: ",".join([str(n), *["0.5"] * (len(rllib_train.MetricsLog.COLUMNS) - 1)])
        for n in (1, 2, 3)
    }
    path = tmp_path / rllib_train.METRICS_FILE
    for cut in (row[3][:-1], "1"):
        path.write_text(f"{columns}\n{row[1]}\n{row[2]}\n{cut}")
        metrics = rllib_train.MetricsLog(tmp_path, iteration=3)
        metrics.close()
        assert path.read_text() == f"{columns}\n{row[1]}\n{row[2]}\n"


def test_a_run_saved_before_an_argument_existed_resumes_with_its_default(tmp_path, capsys):
    """An args.json without an argument (saved before it existed) reads as its default:
    naming another value on resume is refused like any kept argument, not a KeyError."""
    folder = tmp_path / "run"
    folder.mkdir()
    saved = dataclasses.asdict(rllib_train.Args())
    del saved["hidden"]
    (folder / "args.json").write_text(json.dumps(saved))
    (folder / rllib_train.STATE_FILE).write_text("{}")
    with pytest.raises(SystemExit):
        rllib_train.open_run(["--resume", str(folder), "--hidden", "64,64"])
    assert "--hidden: a resumed run keeps its --hidden ('256,256')" in capsys.readouterr().err
