"""Ctrl-C while numba compiles is held until the compile ends (compile_interrupts.py)."""

import signal

import numba
import pytest
from numba.core import event

import gofish_env.compile_interrupts  # noqa: F401


class PressCtrlC(event.Listener):
    """Sends SIGINT as a compile starts, as a user's Ctrl-C during a first run would."""

    def __init__(self):
        self.pressed = 0

    def on_start(self, ev):
        if self.pressed == 0:
            self.pressed += 1
            signal.raise_signal(signal.SIGINT)

    def on_end(self, ev):
        pass


@pytest.fixture
def ctrl_c_raises():
    # A test process started from a background shell inherits SIGINT ignored.
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_while_numba_compiles_is_raised_once_the_compile_is_done(ctrl_c_raises):
    @numba.njit
    def inner(a):
        return a + 1

    @numba.njit
    def outer(a):
        return inner(a) * 2

    with event.install_listener("numba:compile", PressCtrlC()), pytest.raises(KeyboardInterrupt):
        outer(1)
    # Both kernels (the outer one compiles the inner one inside its own compile) were built
    # whole before the interrupt was raised, and work.
    assert outer.signatures and inner.signatures
    assert outer(1) == 4
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_ctrl_c_a_compile_leaves_sigint_as_it_was(ctrl_c_raises):
    @numba.njit
    def double(a):
        return a * 2

    assert double(3) == 6
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
