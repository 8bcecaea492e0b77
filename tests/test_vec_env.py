"""The spinning SubprocVecEnv: the same results as SB3's vectorized envs, and its commands."""

from __future__ import annotations

import time

import numpy as np
import pytest
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

from gofish_env.gym_env import GoFishEnv
from training.vec_env import (
    Mailbox,
    SharedMemoryConnection,
    SpinningConnection,
    SpinningSubprocVecEnv,
    shared_memory_supported,
)


def builders(count: int = 2):
    return [lambda k=k: GoFishEnv(players=3, opponents="easy", seat=k) for k in range(count)]


def play(venv, steps: int = 200) -> list:
    """Seeded random legal play; everything the vec env returned."""
    venv.seed(11)
    record = [venv.reset().copy()]
    rng = np.random.default_rng(0)
    for _ in range(steps):
        masks = venv.env_method("action_masks")
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in masks])
        observation, rewards, dones, infos = venv.step(actions)
        record += [observation.copy(), rewards.copy(), dones.copy()]
        record += [info.get("terminal_observation") for info in infos]
    venv.close()
    return record


def assert_same(first: list, second: list) -> None:
    assert len(first) == len(second)
    for a, b in zip(first, second, strict=True):
        if a is None or b is None:
            assert a is None and b is None
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.slow
def test_spinning_vec_env_steps_exactly_like_dummy_and_subproc():
    dummy = play(DummyVecEnv(builders(3)))
    assert_same(play(SpinningSubprocVecEnv(builders(3))), dummy)
    assert_same(play(SubprocVecEnv(builders(3))), dummy)
    # Episodes ended within the run: terminal observations and automatic resets compared.
    assert sum(item.sum() for item in dummy[3::6]) > 0


@pytest.mark.slow
def test_spinning_vec_env_answers_every_command():
    venv = SpinningSubprocVecEnv(builders(3), spin_seconds=0.0005)
    try:
        assert isinstance(venv, SubprocVecEnv)
        assert venv.num_envs == 3
        assert venv.get_attr("seat") == [0, 1, 2]
        assert venv.get_attr("seat", indices=[2]) == [2]
        venv.set_attr("illegal_reward", -5.0, indices=[1])
        assert venv.get_attr("illegal_reward") == [-1.0, -5.0, -1.0]
        venv.env_method("set_opponents", "hard", indices=[0])
        assert venv.get_attr("opponent_specs")[0] == ["hard", "hard"]
        assert venv.has_attr("action_masks")
        assert venv.env_is_wrapped(GoFishEnv.__mro__[1]) == [False] * 3  # gymnasium.Env
        venv.reset()
        # Long pauses (past the spin window) leave the processes asleep; they still answer.
        time.sleep(0.01)
        masks = venv.env_method("action_masks")
        assert [mask.dtype for mask in masks] == [bool] * 3
    finally:
        venv.close()
    assert venv.closed and all(not process.is_alive() for process in venv.processes)


def test_spinning_connection_receives_within_and_after_the_spin_window():
    import multiprocessing as mp
    import threading

    left, right = mp.Pipe()
    to_right, to_left = mp.RawValue("Q", 0), mp.RawValue("Q", 0)
    spinning = SpinningConnection(left, 0.002, sent=to_right, received=to_left)
    other = SpinningConnection(right, 0.002, sent=to_left, received=to_right)
    other.send("ready")
    assert to_left.value == 1
    assert spinning.recv() == "ready"  # already there
    for delay in (0.0005, 0.05):  # inside the spin window, then long after it (asleep)
        timer = threading.Timer(delay, other.send, args=(delay,))
        start = time.perf_counter()
        timer.start()
        assert spinning.recv() == delay
        assert time.perf_counter() - start >= delay
        timer.join()
    spinning.send("ping")
    assert other.recv() == "ping"
    assert (to_right.value, to_left.value) == (1, 3)
    spinning.close()
    assert left.closed


def _echo(connection_args):
    """A process that answers every message with (its length, the message), until None."""
    import time as clock

    connection = SharedMemoryConnection(*connection_args)
    rng = np.random.default_rng(1)
    while (message := connection.recv()) is not None:
        clock.sleep(float(rng.choice([0.0, 0.0001, 0.004])))  # sometimes past the window
        connection.send((len(message), message))
    connection.close()


@pytest.mark.skipif(not shared_memory_supported(), reason="shared memory needs x86-64")
def test_shared_memory_connection_delivers_every_message_whichever_way_it_travels():
    import multiprocessing as mp

    context = mp.get_context("forkserver")
    left, right = context.Pipe()
    to_right, to_left = Mailbox(context, capacity=4096), Mailbox(context, capacity=4096)
    process = context.Process(target=_echo, args=((right, 0.0005, to_left, to_right),))
    process.start()
    right.close()
    connection = SharedMemoryConnection(left, 0.0005, to_right, to_left)
    rng = np.random.default_rng(0)
    try:
        for round_ in range(1000):
            # Mostly small messages (shared memory), some too big for the buffer (the pipe).
            size = int(rng.choice([10, 1000, 3000, 20_000]))
            message = rng.integers(0, 255, size, dtype=np.uint8).tobytes()
            connection.send(message)
            if round_ % 3 == 0:
                time.sleep(float(rng.choice([0.0001, 0.003])))  # the other end may sleep
            assert connection.recv() == (size, message)
        connection.send(None)
        process.join(10)
        assert process.exitcode == 0
    finally:
        if process.is_alive():
            process.kill()
    assert (to_right.count.value, to_left.count.value) == (1001, 1000)
    connection.close()


@pytest.mark.skipif(not shared_memory_supported(), reason="shared memory needs x86-64")
def test_spinning_vec_env_over_shared_memory_steps_exactly_like_dummy():
    dummy = play(DummyVecEnv(builders(2)))
    assert_same(play(SpinningSubprocVecEnv(builders(2), shared_memory=True)), dummy)
