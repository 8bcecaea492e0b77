"""What a training run keeps (``gofish_training.checkpoints``): models saved with their
rules, the resumable state with the random state, written so that only the newest is kept,
and stop requests from SIGINT and SIGTERM. Stopping and resuming whole runs is tested in
tests/test_training_reliability.py."""

from __future__ import annotations

import os
import random
import signal
import time

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from gofish_env.agent_files import read_agent_rules
from gofish_env.gym_env import GoFishEnv
from gofish_env.rules import Rules
from gofish_training.checkpoints import (
    RunState,
    StopRequests,
    exit_status,
    has_run_state,
    interrupts_raise,
    load_run_state,
    save_model,
    save_run_state,
)

pytestmark = pytest.mark.torch

RULES = Rules(players=3)


@pytest.fixture(scope="module")
def model():
    return MaskablePPO(
        "MlpPolicy",
        GoFishEnv(rules=RULES),
        n_steps=64,
        batch_size=64,
        policy_kwargs={"net_arch": [16]},
        seed=0,
        device="cpu",
    )


@pytest.fixture
def global_random_state():
    """Put back the global random state of Python, NumPy and torch after the test."""
    saved = random.getstate(), np.random.get_state(), torch.get_rng_state()
    yield
    random.setstate(saved[0])
    np.random.set_state(saved[1])
    torch.set_rng_state(saved[2])


def draws() -> tuple:
    return random.random(), float(np.random.random()), float(torch.rand(1))


def test_save_model_records_the_rules_in_the_zip_and_leaves_no_partial_file(model, tmp_path):
    path = save_model(model, tmp_path / "model.zip", RULES)
    assert path == tmp_path / "model.zip"
    assert read_agent_rules(path) == RULES
    assert [entry.name for entry in tmp_path.iterdir()] == ["model.zip"]
    assert MaskablePPO.load(path, device="cpu").observation_space == model.observation_space


def test_the_run_state_loads_back_with_the_random_state_and_only_the_newest_is_kept(
    model, tmp_path, global_random_state
):
    assert not has_run_state(tmp_path)
    older = RunState(timesteps=64, budget=512, history=[{"timesteps": 0, "results": []}])
    save_run_state(tmp_path, older, model, RULES)
    assert has_run_state(tmp_path)
    state = RunState(
        timesteps=128,
        budget=512,
        history=[{"timesteps": 0, "results": []}, {"timesteps": 128, "results": []}],
        next_evaluation=256,
        snapshots=["model:runs/x/snapshots/snapshot_128.zip"],
        train_seconds=1.5,
        resumes=1,
    )
    random.seed(1)
    np.random.seed(2)
    torch.manual_seed(3)
    save_run_state(tmp_path, state, model, RULES)
    expected = draws()  # what the run would have drawn next
    folder = tmp_path / "resume"
    assert sorted(entry.name for entry in folder.iterdir()) == [
        "model_128.zip",
        "random_128.pt",
        "state.json",
    ]
    random.seed(9)
    np.random.seed(9)
    torch.manual_seed(9)
    loaded, model_file = load_run_state(tmp_path)
    assert loaded == state
    assert model_file == folder / "model_128.zip"
    assert read_agent_rules(model_file) == RULES
    assert draws() == expected


def test_a_stop_no_step_took_interrupts_where_it_is_checked():
    with StopRequests() as stop:
        stop.interrupt_if_requested()  # nothing asked: nothing happens
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 5
        while not stop.requested and time.monotonic() < deadline:
            time.sleep(0.01)
    with pytest.raises(KeyboardInterrupt):
        stop.interrupt_if_requested()


def test_a_first_signal_asks_to_stop_and_a_second_quits_at_once(capsys):
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with StopRequests() as stop:
        assert not stop.requested
        os.kill(os.getpid(), signal.SIGTERM)
        deadline = time.monotonic() + 5
        while not stop.requested and time.monotonic() < deadline:
            time.sleep(0.01)
        assert stop.requested and stop.signal_name == "SIGTERM"
        with pytest.raises(KeyboardInterrupt) as second:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises before this is over
    assert exit_status(second.value) == 130  # the signal that quit: 128 + SIGINT
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
    assert "SIGTERM: stopping after this step to save the run" in capsys.readouterr().err


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_says_which_signal_raised_it(signum, status):
    """The stretches outside PPO (imitation, final report) raise at once: SIGTERM there
    must still exit 143 (128 + the signal), not Ctrl-C's 130."""
    with pytest.raises(KeyboardInterrupt) as raised, interrupts_raise():
        os.kill(os.getpid(), signum)
        time.sleep(5)  # the handler raises before this is over
    assert exit_status(raised.value) == status
    with StopRequests() as stop:
        os.kill(os.getpid(), signum)
        deadline = time.monotonic() + 5
        while not stop.requested and time.monotonic() < deadline:
            time.sleep(0.01)
    with pytest.raises(KeyboardInterrupt) as late:
        stop.interrupt_if_requested()
    assert exit_status(late.value) == status
    assert exit_status(KeyboardInterrupt()) == 130  # a plain one is Ctrl-C's
