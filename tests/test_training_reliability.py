"""Training that never falls over: the same result under load, clean stops, resumes, and
failures that name what failed and leave no process behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from sb3_contrib import MaskablePPO

from gofish_env.agent_files import read_agent_rules
from gofish_env.rules import Rules
from gofish_training import train
from gofish_training.checkpoints import interrupts_raise

pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parent.parent
TINY = [
    "--timesteps",
    "1536",
    "--n-steps",
    "128",
    "--batch-size",
    "64",
    "--n-epochs",
    "2",
    "--net-arch",
    "32,32",
    "--eval-every",
    "512",
    "--eval-deals",
    "2",
    "--eval-cpus",
    "random,easy",
    "--final-deals",
    "2",
    "--checkpoint-every",
    "512",
    "--no-progress",
]
# Long enough to be stopped in the middle; each rollout is 256 steps.
LONG = [*TINY[2:], "--timesteps", "200000", "--checkpoint-every", "256", "--eval-every", "2048"]


def parameters(model_file: Path) -> list[np.ndarray]:
    model = MaskablePPO.load(model_file, device="cpu")
    return [tensor.numpy().copy() for tensor in model.policy.state_dict().values()]


def assert_same_model(out: Path, other: Path) -> None:
    """The runs saved in the two output folders trained the same weights, bit for bit."""
    mine = parameters(run_folder(out) / "model.zip")
    theirs = parameters(run_folder(other) / "model.zip")
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(a, b)


def run_folder(out: Path) -> Path:
    (folder,) = out.iterdir()
    return folder


def state_of(folder: Path) -> dict:
    path = folder / "resume" / "state.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def start_training(out: Path, *argv: str) -> subprocess.Popen:
    """``python -m gofish_training.train`` in its own process group, as a terminal runs it (Ctrl-C
    reaches the whole group)."""
    return subprocess.Popen(
        [sys.executable, "-m", "gofish_training.train", *argv, "--out", str(out), "--name", "run"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def wait_for_steps(out: Path, process: subprocess.Popen, steps: int, seconds: float = 240):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[0]
        folders = list(out.iterdir())
        if folders and state_of(folders[0]).get("timesteps", 0) >= steps:
            return folders[0]
        time.sleep(0.2)
    process.kill()
    raise AssertionError(f"no checkpoint at {steps} steps in {seconds} s")


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (SB3's workers are children of the forkserver)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


# ----------------------------------------------------------------------- under load


@pytest.mark.slow
@pytest.mark.parametrize("vec_env", ["dummy", "subproc", "vector"])
def test_training_under_load_gives_the_same_model_as_on_a_quiet_machine(vec_env, tmp_path, request):
    argv = [*TINY, "--vec-env", vec_env, "--seed", "5"]
    quiet = train.main([*argv, "--out", str(tmp_path / "quiet")])
    request.getfixturevalue("busy_cores")
    loaded = train.main([*argv, "--out", str(tmp_path / "loaded")])
    assert loaded["history"] == quiet["history"]
    assert loaded["final"] == quiet["final"]
    assert_same_model(tmp_path / "quiet", tmp_path / "loaded")


@pytest.mark.parametrize(
    ("start", "budget", "end"), [(0, 1000, 1024), (512, 1000, 1024), (0, 512, 512)]
)
def test_the_steps_bar_ends_where_ppo_does(start, budget, end, monkeypatch):
    """PPO trains whole rollouts (here 2 envs x 256 steps): the bar's total is the first
    rollout's end at or past the budget, counted from a resumed run's steps."""
    import contextlib
    from types import SimpleNamespace

    drawn = {}

    @contextlib.contextmanager
    def bar(progress, total, label):
        drawn["total"] = total
        yield lambda done: drawn.setdefault("first", done)

    monkeypatch.setattr(train, "progress_bar", bar)
    steps = train.StepsBar(budget)
    steps.model = SimpleNamespace(num_timesteps=start, n_steps=256, n_envs=2)
    steps._on_training_start()
    assert drawn == {"total": end, "first": start}


def test_compiling_before_training_changes_nothing_it_trains(tmp_path, monkeypatch):
    """The vector env's kernels are compiled on a throwaway env before the timed training:
    the run's env and random streams are untouched, so the model is the one trained
    without it."""
    argv = [*TINY, "--vec-env", "vector", "--seed", "4", "--timesteps", "512"]
    compiled = train.main([*argv, "--out", str(tmp_path / "compiled")])
    calls = []
    monkeypatch.setattr(train, "compile_kernels", calls.append)
    skipped = train.main([*argv, "--out", str(tmp_path / "skipped")])
    assert len(calls) == 1  # the warm-up was there to skip
    assert skipped["final"] == compiled["final"]
    assert_same_model(tmp_path / "compiled", tmp_path / "skipped")


# ----------------------------------------------------------------------- stop and resume


@pytest.mark.slow
@pytest.mark.parametrize(
    ("vec_env", "signum"),
    [("subproc", signal.SIGINT), ("subproc", signal.SIGTERM), ("vector", signal.SIGINT)],
)
def test_a_stopped_run_saves_everything_and_resumes_to_its_budget(vec_env, signum, tmp_path):
    process = start_training(tmp_path, *LONG, "--vec-env", vec_env, "--timesteps", "4096")
    folder = wait_for_steps(tmp_path, process, 1024)
    os.killpg(process.pid, signum)  # Ctrl-C reaches the workers too
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 128 + signum, output  # 130 for Ctrl-C, 143 for SIGTERM
    saved = state_of(folder)
    assert 1024 <= saved["timesteps"] < 4096
    assert f"saved the run at {saved['timesteps']:,} of 4,096 steps" in " ".join(output.split())
    assert f"-m gofish_training.train --resume {folder}" in output.replace("\n", "")
    assert (folder / "resume" / saved["model"]).is_file()
    assert read_agent_rules(folder / "resume" / saved["model"]) == Rules()
    assert not (folder / "model.zip").exists()

    report = train.main(["--resume", str(folder)])
    assert report["timesteps"] >= 4096
    steps = [entry["timesteps"] for entry in report["history"]]
    assert steps == sorted(set(steps))  # one curve, counted on across the resume
    assert steps[: len(saved["history"])] == [e["timesteps"] for e in saved["history"]]
    assert steps[-1] == report["timesteps"]
    assert report["timing"]["resumes"] == 1
    assert len(list((folder / "tensorboard").iterdir())) == 1  # one TensorBoard log
    assert MaskablePPO.load(folder / "model.zip").num_timesteps == report["timesteps"]


def test_a_stop_that_lands_as_training_ends_stops_before_the_report(tmp_path, monkeypatch, capsys):
    """Ctrl-C after training's last check of a stop, before the final report begins: the
    run stops there (exit 130, trained and saved, no report) instead of the signal being
    lost and the whole report played."""
    trained = train.train

    def train_then_signal(*args, **kwargs):
        trained(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # StopRequests takes it: a stop request

    monkeypatch.setattr(train, "train", train_then_signal)
    with pytest.raises(SystemExit) as stop:
        train.main([*TINY, "--out", str(tmp_path)])
    assert stop.value.code == 130
    folder = run_folder(tmp_path)
    assert state_of(folder)["status"] == "trained"
    assert not (folder / "evaluation.json").exists()
    assert "Interrupted; what was saved is kept. Go on with:" in capsys.readouterr().out


def test_a_stop_before_the_first_save_leaves_no_run_folder(tmp_path, monkeypatch, capsys):
    """Ctrl-C while the envs are built (a first run compiles the engine there for tens of
    seconds): no traceback, exit 130, and no folder left that could not be resumed."""

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(train, "make_vec_env", interrupted)
    with pytest.raises(SystemExit) as stop:
        train.main([*TINY, "--out", str(tmp_path)])
    assert stop.value.code == 130
    assert list(tmp_path.iterdir()) == []
    assert "Interrupted before training began; nothing to keep." in capsys.readouterr().out


def test_a_stop_before_the_first_save_removes_the_out_folders_the_run_made(
    tmp_path, monkeypatch, capsys
):
    """ "nothing to keep" leaves nothing: not the empty runs/ (or deeper --out) it made, but
    a folder that held something before stays."""
    monkeypatch.setattr(train, "make_vec_env", lambda *args, **kwargs: _interrupt())
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "other.txt").write_text("not the run's")
    for out in (tmp_path / "runs" / "deeper", tmp_path / "kept" / "runs"):
        with pytest.raises(SystemExit) as stop:
            train.main([*TINY, "--out", str(out)])
        assert stop.value.code == 130
    assert sorted(path.name for path in tmp_path.iterdir()) == ["kept"]
    assert sorted(path.name for path in (tmp_path / "kept").iterdir()) == ["other.txt"]


def _interrupt():
    raise KeyboardInterrupt


@pytest.mark.slow
def test_a_stop_during_the_last_update_keeps_that_update_and_the_resume_trains_no_more(
    tmp_path, monkeypatch, capsys
):
    """Ctrl-C while the network learns from the budget's last rollout: PPO finishes that
    update, the run is saved with it (all 1,536 steps), and the resume does not collect
    and train on one more rollout."""
    update = MaskablePPO.train
    updates = []

    def update_then_stop_at_the_last(model):
        update(model)
        updates.append(model.num_timesteps)
        if model.num_timesteps >= 1536:
            os.kill(os.getpid(), signal.SIGINT)  # StopRequests takes it: a stop request

    monkeypatch.setattr(MaskablePPO, "train", update_then_stop_at_the_last)
    with pytest.raises(SystemExit) as stop:
        train.main([*TINY, "--out", str(tmp_path)])
    assert stop.value.code == 130
    assert updates[-1] == 1536 and len(updates) == 6  # six rollouts of 256 steps
    folder = run_folder(tmp_path)
    saved = state_of(folder)
    assert saved["timesteps"] == 1536
    assert "saved the run at 1,536 of 1,536 steps" in " ".join(capsys.readouterr().out.split())
    trained = parameters(folder / "resume" / saved["model"])

    updates.clear()
    report = train.main(["--resume", str(folder)])
    assert updates == []  # nothing trained again
    assert report["timesteps"] == 1536
    assert all(
        np.array_equal(before, after)
        for before, after in zip(trained, parameters(folder / "model.zip"), strict=True)
    )


def stopped_after_the_first_update(out: Path, monkeypatch, *argv: str) -> Path:
    """A run of TINY (768 steps) stopped by Ctrl-C after its first rollout (256 steps)."""
    update = MaskablePPO.train

    def update_then_stop(model):
        update(model)
        os.kill(os.getpid(), signal.SIGINT)  # StopRequests takes it: a stop request

    with monkeypatch.context() as patch:
        patch.setattr(MaskablePPO, "train", update_then_stop)
        with pytest.raises(SystemExit):
            train.main([*TINY, "--timesteps", "768", "--out", str(out), *argv])
    folder = run_folder(out)
    assert state_of(folder)["timesteps"] == 256
    return folder


def test_a_resume_purges_what_tensorboard_logged_past_the_saved_step(tmp_path, monkeypatch):
    # A killed session logs rollouts the run state never saved; the resume logs the same
    # steps again. TensorBoard showed both, a line running back on itself.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from torch.utils.tensorboard import SummaryWriter

    folder = stopped_after_the_first_update(tmp_path, monkeypatch)  # saved at step 256
    log = next((folder / "tensorboard").iterdir())
    lost = SummaryWriter(str(log))  # as the killed session wrote past it
    lost.add_scalar("rollout/ep_rew_mean", 999.0, 512)
    lost.close()
    train.main(["--resume", str(folder)])
    events = EventAccumulator(str(log))
    events.Reload()
    points = [(event.step, event.value) for event in events.Scalars("rollout/ep_rew_mean")]
    steps = [step for step, _ in points]
    assert steps == sorted(set(steps)) and steps[-1] >= 512
    assert 999.0 not in [value for _, value in points]


@pytest.mark.slow
def test_a_resumed_run_deals_from_its_seed_and_resumes_and_is_repeatable(tmp_path, monkeypatch):
    """A resume deals new games, seeded from --seed and the number of resumes (not the
    saved model's seed, which loading it would put back): the same resume twice trains the
    same network; another resume count or another --seed trains another."""
    stopped = stopped_after_the_first_update(tmp_path / "first", monkeypatch)
    copies = {}
    for name in ("again", "same", "resumes", "seed"):
        copies[name] = tmp_path / name / stopped.name
        shutil.copytree(stopped, copies[name])
    state_file = copies["resumes"] / "resume" / "state.json"
    state_file.write_text(json.dumps({**json.loads(state_file.read_text()), "resumes": 7}))
    for name, folder in copies.items():
        train.main(["--resume", str(folder), *(["--seed", "7"] if name == "seed" else [])])
    again = parameters(copies["again"] / "model.zip")
    for a, b in zip(again, parameters(copies["same"] / "model.zip"), strict=True):
        np.testing.assert_array_equal(a, b)
    for other in ("resumes", "seed"):
        theirs = parameters(copies[other] / "model.zip")
        assert any(not np.array_equal(a, b) for a, b in zip(again, theirs, strict=True)), other


@pytest.mark.slow
def test_tensorboard_keeps_every_evaluation_of_a_finished_run_trained_on(tmp_path):
    """The first session's final evaluation lies at the step the run resumes from: the
    resume drops what was logged past that step, not at it."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    train.main([*TINY, "--timesteps", "1024", "--out", str(tmp_path)])
    folder = run_folder(tmp_path)
    report = train.main(["--resume", str(folder), "--timesteps", "1536"])
    events = EventAccumulator(str(next((folder / "tensorboard").iterdir())))
    events.Reload()
    logged = [event.step for event in events.Scalars("eval/win_rate_vs_random")]
    evaluated = [entry["timesteps"] for entry in report["history"]]
    assert 1024 in evaluated
    assert logged == evaluated


def test_a_selfplay_run_with_a_relative_out_resumes_from_elsewhere_after_a_move(
    tmp_path, monkeypatch
):
    """The snapshot pool is kept relative to the run folder: a run made with a relative
    --out goes on from another working directory, and after its folder is moved."""
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    selfplay = ["--opponents", "selfplay", "--snapshot-every", "128", "--snapshot-pool", "2"]
    stopped = stopped_after_the_first_update(Path("runs"), monkeypatch, *selfplay)
    assert state_of(stopped)["snapshots"] == [
        "snapshots/snapshot_128.zip",
        "snapshots/snapshot_256.zip",
    ]
    moved = tmp_path / "elsewhere" / stopped.name
    shutil.move(tmp_path / "here" / stopped, moved)
    monkeypatch.chdir(tmp_path)
    report = train.main(["--resume", str(moved)])
    assert report["timesteps"] == 768
    assert len(report["snapshots"]) == 2 and "snapshots/snapshot_256.zip" not in report["snapshots"]
    assert all((moved / name).is_file() for name in report["snapshots"])


def test_a_selfplay_run_folder_with_a_comma_is_refused_before_any_work(tmp_path, capsys):
    """Its snapshots join a mix: list of opponents, which commas split: refused up front
    (not a crash at the first snapshot)."""
    out = tmp_path / "a,b"
    error = refused([*TINY, "--opponents", "selfplay", "--out", str(out)], capsys)
    assert f"--out: got {str(out)!r}; allowed with --opponents selfplay" in error
    assert "Traceback" not in error
    assert not out.exists()


def test_an_interrupt_that_a_finalizer_drops_still_stops_at_the_next_check(monkeypatch):
    """Python drops an exception raised inside ``__del__`` (it reports it as unraisable):
    a Ctrl-C that lands there must still stop the imitation, at its next check."""
    dropped = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: dropped.append(unraisable))
    handlers = [signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)]

    class Finalized:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)  # the handler raises in here: dropped
            sum(range(10))  # bytecodes, for the handler to run before __del__ ends

    went_on = []
    with pytest.raises(KeyboardInterrupt), interrupts_raise() as check:
        Finalized()  # freed at once
        went_on.append(True)  # the interrupt was dropped: the code goes on
        check()
        went_on.append(False)
    assert went_on == [True]
    assert [isinstance(unraisable.exc_value, KeyboardInterrupt) for unraisable in dropped] == [True]
    assert [signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)] == handlers

    with pytest.raises(KeyboardInterrupt), interrupts_raise():  # raised on leaving too
        Finalized()
    with interrupts_raise() as check:  # no signal: nothing raised
        check()


def test_sigterm_during_the_imitation_exits_143(tmp_path, monkeypatch, capsys):
    """The imitation runs outside PPO's loop, where a signal raises at once: SIGTERM
    there exits 143 (128 + the signal), as in PPO, not Ctrl-C's 130."""

    def terminated(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this is over

    monkeypatch.setattr(train, "imitate", terminated)
    with pytest.raises(SystemExit) as stop:
        train.main([*TINY, "--imitate", "random", "--out", str(tmp_path)])
    assert stop.value.code == 143
    assert state_of(run_folder(tmp_path))["status"] == "training"
    assert "Interrupted; what was saved is kept. Go on with:" in capsys.readouterr().out


def a_run_stopped_in_the_imitation_games(tmp_path, monkeypatch, seconds=(0.0, 0.0)) -> Path:
    """The folder of a run whose first session was stopped (Ctrl-C) while it played the
    imitation's games; the games and the fit are stubbed, session i's games taking
    ``seconds[i]``."""
    from gofish_training.checkpoints import Interrupted

    sessions = []

    def collect(*args, **kwargs):
        sessions.append(True)
        kwargs["folder"].mkdir(parents=True, exist_ok=True)  # where the parts would be
        time.sleep(seconds[len(sessions) - 1])
        if len(sessions) == 1:
            raise Interrupted(signal.SIGINT)
        return []

    monkeypatch.setattr(train, "collect_in_parts", collect)
    monkeypatch.setattr(train, "pretrain", lambda *args, **kwargs: [{"agreement": 1.0}])
    argv = [*TINY, "--timesteps", "256", "--imitate", "random", "--out", str(tmp_path)]
    with pytest.raises(SystemExit) as stop:
        train.main(argv)
    assert stop.value.code == 130
    return run_folder(tmp_path)


def test_the_imitation_games_time_is_summed_over_the_sessions(tmp_path, monkeypatch):
    """A stop during the games, then a resume that plays the rest: timing's
    imitation_seconds.games counts both sessions, not only the last."""
    folder = a_run_stopped_in_the_imitation_games(tmp_path, monkeypatch, seconds=(0.4, 0.2))
    report = train.main(["--resume", str(folder)])
    assert 0.6 <= report["timing"]["imitation_seconds"]["games"] < 5


@pytest.mark.slow
def test_a_resume_after_a_stop_in_the_imitation_games_leaves_out_only_its_own_imitation(
    tmp_path, monkeypatch
):
    """The training time of a resumed run leaves out the imitation played in its own
    session, not the games an earlier session played (which were never on its clock): it
    was negative ("Trained 256 steps in -0.1 min") when the first session played long."""
    folder = a_run_stopped_in_the_imitation_games(tmp_path, monkeypatch)
    # As if the first session had played the games for 1000 s before its stop.
    (folder / "demonstrations" / "seconds.json").write_text(json.dumps({"games": 1000.0}))
    report = train.main(["--resume", str(folder)])
    assert report["timing"]["imitation_seconds"]["games"] >= 1000
    assert 0 < report["timing"]["train_seconds"] < 300
    assert report["timing"]["steps_per_second"] < 1e6


def test_a_stop_while_the_imitation_games_are_played_keeps_the_parts_done(tmp_path):
    """Ctrl-C while two workers play the teacher's games: the parts done stay on disk, no
    worker is left, and the resume goes on to the fit and PPO (that it plays only the parts
    not saved is tested in tests/test_imitation.py)."""
    imitate = ["--imitate", "hard", "--imitate-games", "1000", "--imitate-workers", "2"]
    process = start_training(tmp_path, *TINY, *imitate, "--imitate-epochs", "1")
    deadline = time.monotonic() + 240
    while not list(tmp_path.glob("*/demonstrations/*.npz")):
        assert process.poll() is None, process.communicate()[0]
        assert time.monotonic() < deadline, "no part of the imitation's games saved"
        time.sleep(0.2)
    workers = descendants(process.pid)
    os.killpg(process.pid, signal.SIGINT)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 130, output
    # The workers and multiprocessing's resource tracker end as the learner goes; on a
    # busy machine the tracker may see its pipe close a moment after the learner exits.
    deadline = time.monotonic() + 15
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in workers if alive(pid)]
    folder = run_folder(tmp_path)
    kept = sorted(path.name for path in (folder / "demonstrations").glob("*.npz"))
    assert 1 <= len(kept) < 10
    assert f"-m gofish_training.train --resume {folder}" in output.replace("\n", "")

    report = train.main(["--resume", str(folder)])
    assert len(report["imitation"]) == 1
    assert report["timesteps"] == 1536
    assert not (folder / "demonstrations").exists()  # the fit is saved: the games go


@pytest.mark.slow
def test_resuming_a_finished_run_says_so_and_changes_nothing(tmp_path, capsys):
    report = train.main([*TINY, "--out", str(tmp_path)])
    folder = run_folder(tmp_path)
    before = (folder / "model.zip").read_bytes()
    capsys.readouterr()
    again = train.main(["--resume", str(folder)])
    assert "finished already (1,536 steps): nothing to do" in capsys.readouterr().out
    assert again == json.loads(json.dumps(report))
    assert (folder / "model.zip").read_bytes() == before


def test_a_finished_run_trained_on_does_not_evaluate_its_last_network_again(tmp_path):
    train.main([*TINY, "--timesteps", "512", "--out", str(tmp_path)])
    folder = run_folder(tmp_path)
    report = train.main(["--resume", str(folder), "--timesteps", "1536"])
    steps = [entry["timesteps"] for entry in report["history"]]
    assert steps[steps.index(512) :] == [512, 1024, 1536]  # not 514: the same network


def test_new_intervals_on_resume_count_from_the_resumed_step(tmp_path, capsys):
    # They were printed as overrides but kept the old schedule: no point, no checkpoint.
    never = ["--eval-every", "100000", "--checkpoint-every", "100000"]
    train.main([*TINY, "--timesteps", "512", *never, "--out", str(tmp_path)])
    folder = run_folder(tmp_path)
    every = ["--eval-every", "256", "--checkpoint-every", "512"]
    report = train.main(["--resume", str(folder), "--timesteps", "1536", *every])
    assert "overriding --eval-every 256 (was 100000)" in capsys.readouterr().out
    steps = [entry["timesteps"] for entry in report["history"]]
    assert steps[steps.index(512) :] == [512, 768, 1024, 1280, 1536]
    kept = sorted(int(path.stem.split("_")[1]) for path in (folder / "checkpoints").iterdir())
    assert [step for step in kept if step > 512] == [1024]


def test_a_smaller_snapshot_pool_on_resume_drops_the_oldest_snapshots_at_once(tmp_path):
    selfplay = ["--opponents", "selfplay", "--snapshot-every", "256", "--snapshot-pool", "3"]
    train.main([*TINY, "--timesteps", "1024", *selfplay, "--out", str(tmp_path)])
    folder = run_folder(tmp_path)
    assert len(state_of(folder)["snapshots"]) == 3
    later = ["--snapshot-every", "100000", "--snapshot-pool", "1"]  # no snapshot taken
    report = train.main(["--resume", str(folder), "--timesteps", "1280", *later])
    newest = state_of(folder)["snapshots"]
    assert len(newest) == 1 and newest[0].endswith("snapshot_1024.zip")
    specs = [spec for env in report["opponents_at_end"] for spec in env]  # env by seat
    assert specs and all(spec.count("model:") == 1 for spec in specs)


@pytest.mark.slow
def test_a_finished_run_refuses_new_arguments_and_keeps_its_args_json(tmp_path, capsys):
    """A finished run takes a larger --timesteps alone (it trains on to it, as
    gofish-rllib-train does with --iterations): other new settings are refused with the
    way to train on, and its args.json is not rewritten with settings it never ran with."""
    train.main([*TINY, "--timesteps", "256", "--out", str(tmp_path)])
    folder = run_folder(tmp_path)
    args_json = (folder / "args.json").read_bytes()
    error = refused(["--resume", str(folder), "--timesteps", "256", "--seed", "7"], capsys)
    assert f"--resume: {folder} finished already (256 steps) and takes no new arguments" in error
    assert "(got --seed 7). To train on, give --timesteps above 256" in error
    assert (folder / "args.json").read_bytes() == args_json
    train.main(["--resume", str(folder), "--progress"])  # how it shows itself: no setting
    assert "finished already (256 steps): nothing to do" in capsys.readouterr().out
    assert (folder / "args.json").read_bytes() == args_json
    report = train.main(["--resume", str(folder), "--timesteps", "512"])
    assert report["timesteps"] == 512 and state_of(folder)["status"] == "finished"
    assert json.loads((folder / "args.json").read_text())["timesteps"] == 512
    assert report["history"][-1]["timesteps"] == 512


@pytest.mark.slow
def test_a_budget_below_the_steps_done_is_refused(tmp_path, monkeypatch, capsys):
    folder = stopped_after_the_first_update(tmp_path, monkeypatch)
    args_json = (folder / "args.json").read_bytes()
    error = refused(["--resume", str(folder), "--timesteps", "128"], capsys)
    assert "--timesteps: got 128; allowed: 256 or more (this run has trained 256 steps" in error
    assert (folder / "args.json").read_bytes() == args_json


@pytest.mark.slow
def test_a_trained_run_given_a_larger_budget_trains_on_to_it(tmp_path, monkeypatch):
    """Trained to its budget but stopped before the final report: a larger --timesteps
    trains on (not a report of the old budget's model)."""
    trained = train.train

    def train_then_signal(*args, **kwargs):
        trained(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)  # a stop as training ends, before the report

    with monkeypatch.context() as patch:
        patch.setattr(train, "train", train_then_signal)
        with pytest.raises(SystemExit):
            train.main([*TINY, "--timesteps", "256", "--out", str(tmp_path)])
    folder = run_folder(tmp_path)
    assert state_of(folder)["status"] == "trained"
    report = train.main(["--resume", str(folder), "--timesteps", "512"])
    assert report["timesteps"] == 512


@pytest.mark.slow
def test_a_resume_overrides_the_arguments_given_again_and_says_so(tmp_path, capsys):
    process = start_training(tmp_path, *LONG)
    folder = wait_for_steps(tmp_path, process, 512)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=120)
    report = train.main(["--resume", str(folder), "--timesteps", "1024", "--eval-deals", "1"])
    output = capsys.readouterr().out
    assert "overriding --timesteps 1024 (was 200000)" in output
    assert "overriding --eval-deals 1 (was 2)" in output
    assert 1024 <= report["timesteps"] < 1300
    assert json.loads((folder / "args.json").read_text())["timesteps"] == 1024


# ----------------------------------------------------------------------- failures


@pytest.mark.slow
def test_a_killed_worker_ends_training_with_its_env_saves_and_leaves_no_process(tmp_path):
    process = start_training(tmp_path, *LONG, "--vec-env", "subproc", "--envs", "2")
    folder = wait_for_steps(tmp_path, process, 512)
    workers = descendants(process.pid)
    # SB3's workers are the forkserver's children: the learner's grandchildren.
    victim = min(workers - set(children(process.pid)))
    os.kill(victim, signal.SIGKILL)
    output, _ = process.communicate(timeout=120)
    flat = " ".join(output.split())
    assert process.returncode == 1, output
    assert "Training stopped: environment" in flat and "killed by SIGKILL" in flat
    assert f"pid {victim}" in flat
    assert state_of(folder)["timesteps"] >= 512  # the last checkpoint is kept
    assert "--resume" in flat
    deadline = time.monotonic() + 15
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in workers if alive(pid)]


@pytest.mark.slow
def test_a_worker_killed_during_the_ppo_update_ends_training_with_its_env(
    tmp_path, monkeypatch, capsys
):
    """The test above kills at any moment; this one at the moment that once failed: the
    worker dies while the network is updated, and the next rollout's first message to the
    workers (MaskablePPO asks whether they serve action masks) meets its broken pipe."""
    update = MaskablePPO.train
    workers = []

    def update_then_kill_worker_1(model):
        update(model)
        if not workers:
            workers.extend(model.env.venv.processes)
            os.kill(workers[1].pid, signal.SIGKILL)

    monkeypatch.setattr(MaskablePPO, "train", update_then_kill_worker_1)
    with pytest.raises(SystemExit) as stop:
        train.main([*TINY, "--vec-env", "subproc", "--envs", "2", "--out", str(tmp_path)])
    assert stop.value.code == 1
    output = " ".join(capsys.readouterr().out.split())
    assert (
        f"Training stopped: environment 1 failed: its worker process (pid {workers[1].pid}) "
        "ended, killed by SIGKILL" in output
    )
    assert "--resume" in output
    assert state_of(run_folder(tmp_path))  # resumable
    assert not any(worker.is_alive() for worker in workers)


@pytest.mark.slow
def test_an_exception_in_an_env_ends_training_naming_the_env_and_the_exception(
    tmp_path, monkeypatch, capsys
):
    class BreaksOnItsTenthStep(train.GoFishEnv):
        steps = 0

        def step(self, action):
            self.steps += 1
            if self.steps == 10:
                raise RuntimeError("the opponent's model file vanished")
            return super().step(action)

    monkeypatch.setattr(train, "GoFishEnv", BreaksOnItsTenthStep)
    with pytest.raises(SystemExit) as stop:
        # SB3's vec env of GoFishEnvs (the vector env's failures: tests/test_vector_vec_env.py)
        train.main([*TINY, "--vec-env", "dummy", "--out", str(tmp_path)])
    assert stop.value.code == 1
    output = " ".join(capsys.readouterr().out.split())
    assert (
        "Training stopped: environment 0 failed: RuntimeError: the opponent's model file "
        "vanished" in output
    )
    folder = run_folder(tmp_path)
    assert "Traceback" in (folder / "error.log").read_text()
    assert state_of(folder)["timesteps"] == 0  # nothing trained yet, but resumable


@pytest.mark.parametrize("trace", ["", "Traceback (most recent call last):\n  ...\n"])
def test_a_failure_says_whether_error_log_holds_a_traceback(trace, tmp_path, monkeypatch, capsys):
    """A worker killed by SIGKILL leaves no traceback: the message says so instead of
    pointing to one in error.log."""
    from gofish_training.vec_env import EnvFailure

    detail = "its worker process (pid 4242) ended, killed by SIGKILL"

    def fail(*args, **kwargs):
        raise EnvFailure(0, detail, trace)

    monkeypatch.setattr(MaskablePPO, "learn", fail)
    with pytest.raises(SystemExit) as stop:
        train.main([*TINY, "--out", str(tmp_path)])
    assert stop.value.code == 1
    log = run_folder(tmp_path) / "error.log"
    printed = " ".join(capsys.readouterr().out.split())
    if trace:
        assert log.read_text() == trace
        assert f"The traceback is in {log}." in printed
    else:
        assert log.read_text() == f"environment 0 failed: {detail}"
        assert f"There is no traceback (written to {log}: the line above)." in printed
        assert "The traceback is in" not in printed


# ----------------------------------------------------------------------- bad input


def refused(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as stop:
        train.main(argv)
    assert stop.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--envs", "0"], "--envs: got 0; allowed: an integer >= 1"),
        (["--timesteps", "0"], "--timesteps: got 0; allowed: an integer >= 1"),
        (["--imitate-workers", "0"], "--imitate-workers: got 0; allowed: an integer >= 1"),
        (["--eval-deals", "-2"], "--eval-deals: got -2; allowed: an integer >= 1"),
        (["--batch-size", "1"], "--batch-size: got 1; allowed: an integer from 2 to a"),
        (
            ["--n-steps", "64", "--envs", "2", "--batch-size", "129"],
            "--batch-size: got 129; allowed: an integer from 2 to a rollout's steps, --n-steps "
            "x --envs (128)",
        ),
        (["--gamma", "1.5"], "--gamma: got 1.5; allowed: a number in (0, 1]"),
        (["--gamma", "nan"], "--gamma: got nan; allowed: a number in (0, 1]"),
        (["--seed", "-1"], "--seed: got -1; allowed: an integer from 0 to 4294967295"),
        (["--seed", str(2**32)], "--seed: got 4294967296; allowed: an integer from 0 to"),
        (["--learning-rate", "inf"], "--learning-rate: got inf; allowed: a finite number > 0"),
        (["--clip-range", "inf"], "--clip-range: got inf; allowed: a finite number > 0"),
        (["--ent-coef", "nan"], "--ent-coef: got nan; allowed: a finite number >= 0"),
        (["--target-kl", "inf"], "--target-kl: got inf; allowed: a finite number >= 0"),
        (
            ["--imitate", "expert", "--imitate-temperature", "nan"],
            "--imitate-temperature: got nan; allowed: 0 (the CPU's asks) or a finite number",
        ),
        (["--imitate-temperature", "-2"], "--imitate-temperature: got -2.0; allowed: 0"),
        *[
            (flag, f"{flag[0].replace('--no-', '--')}: a setting of the imitation; allowed")
            for flag in (
                ["--imitate-games", "-3"],
                ["--imitate-epochs", "-1"],
                ["--imitate-temperature", "0.5"],
                ["--imitate-workers", "2"],
                ["--no-imitate-relabel"],  # --imitate-relabel's other side
            )
        ],
        (["--net-arch", "64,x"], "--net-arch: got '64,x'; allowed: layer sizes"),
        (["--eval-cpus", "random,grandmaster"], "--eval-cpus: got 'random,grandmaster'"),
        (["--players", "7"], "error: --players: got 7; allowed: an integer from 2 to 6"),
        (["--rules", "poker"], "error: --rules: unknown preset 'poker'; allowed: table"),
        (["--opponents", "genius"], "error: --opponents: unknown CPU level 'genius'"),
        (["--reward", "gold"], "error: --reward: unknown scheme 'gold'"),
        (
            ["--vec-env", "dummy", "--compile-rules"],
            "--compile-rules: only with --vec-env vector (got --vec-env dummy",
        ),
        (
            ["--vec-env", "pipelined"],
            "--vec-env: got 'pipelined'; allowed: dummy, subproc, vector",
        ),
    ],
)
def test_bad_arguments_are_refused_before_any_work(argv, message, capsys, tmp_path):
    error = refused([*argv, "--out", str(tmp_path)], capsys)
    assert message in error
    assert "Traceback" not in error
    assert list(tmp_path.iterdir()) == []  # nothing was started


def test_an_output_folder_that_cannot_be_written_is_refused(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    error = refused([*TINY, "--out", str(blocker / "runs")], capsys)
    assert f"--out: cannot write to {blocker / 'runs'}" in error


def test_an_existing_run_folder_is_never_overwritten(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(train.time, "strftime", lambda _format: "20260101-000000")
    existing = tmp_path / "same__20260101-000000"
    existing.mkdir()
    (existing / "model.zip").write_text("precious")
    error = refused([*TINY, "--out", str(tmp_path), "--name", "same"], capsys)
    assert f"--name: {existing} exists already" in error
    assert (existing / "model.zip").read_text() == "precious"


def test_resume_of_a_folder_that_is_not_a_run_is_refused(tmp_path, capsys):
    error = refused(["--resume", str(tmp_path)], capsys)
    assert f"--resume: {tmp_path} is not a training run" in error


def test_a_resumed_run_keeps_its_table(tmp_path, capsys):
    folder = tmp_path / "run"
    (folder / "resume").mkdir(parents=True)
    (folder / "args.json").write_text(json.dumps(train.dataclasses.asdict(train.Args())))
    (folder / "resume" / "state.json").write_text("{}")
    error = refused(["--resume", str(folder), "--players", "3"], capsys)
    assert "--players: a resumed run keeps its --players (4); got 3" in error


def test_a_run_saved_before_an_argument_existed_resumes_with_its_default(tmp_path, capsys):
    """``--imitate-rollouts`` came after runs were saved: their args.json lacks it, and
    they ran with its default, so naming another one on resume is refused like any
    kept argument (not a KeyError)."""
    folder = tmp_path / "run"
    (folder / "resume").mkdir(parents=True)
    saved = train.dataclasses.asdict(train.Args())
    del saved["imitate_rollouts"]
    (folder / "args.json").write_text(json.dumps(saved))
    (folder / "resume" / "state.json").write_text("{}")
    error = refused(["--resume", str(folder), "--imitate-rollouts", "hard"], capsys)
    assert "--imitate-rollouts: a resumed run keeps its --imitate-rollouts ('')" in error


def test_resume_from_a_model_of_another_table_is_refused(tmp_path, capsys):
    from gofish_env.agent_files import write_agent_rules
    from gofish_env.gym_env import GoFishEnv

    model_file = tmp_path / "three.zip"
    MaskablePPO("MlpPolicy", GoFishEnv(players=3), n_steps=64, batch_size=64).save(model_file)
    write_agent_rules(model_file, Rules(players=3))
    error = refused([*TINY, "--resume", str(model_file), "--out", str(tmp_path)], capsys)
    assert "was trained for 3 players" in error and "this table is 4 players" in error


def test_resume_from_a_model_that_cannot_be_loaded_is_refused_and_creates_nothing(tmp_path, capsys):
    import zipfile

    from gofish_env.agent_files import write_agent_rules
    from gofish_env.gym_env import GoFishEnv

    good = tmp_path / "good.zip"
    MaskablePPO("MlpPolicy", GoFishEnv(), n_steps=64, batch_size=64).save(good)
    write_agent_rules(good, Rules())
    corrupt = tmp_path / "corrupt.zip"
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(corrupt, "w") as target:
        for entry in source.namelist():  # the rules entry is intact, the weights are not
            data = b"not a torch file" if entry == "policy.pth" else source.read(entry)
            target.writestr(entry, data)
    out = tmp_path / "runs"
    error = refused([*TINY, "--resume", str(corrupt), "--out", str(out)], capsys)
    assert f"--resume: cannot load model file {corrupt}: UnpicklingError" in error
    assert not out.exists() or not any(out.iterdir())
