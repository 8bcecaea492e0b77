"""Ctrl-C while numba compiles is held until the compile ends, then raised.

LLVM calls back into Python while it compiles; a KeyboardInterrupt raised in such a
callback is printed as "Exception ignored" and lost (the command runs on as if no key was
pressed), or it leaves numba half-built ("RuntimeError: no compiled object yet" when
numba then caches the kernel). A first run compiles for tens of seconds, so a user's
Ctrl-C often lands there. While the main thread compiles, SIGINT only takes note; when
the outermost compile ends, the handler that was in place runs (by default it raises
KeyboardInterrupt, which the commands catch to keep their work and say how to go on).
Every module with kernels imports this one.
"""

from __future__ import annotations

import signal
import threading

from numba.core import event

COMPILE_EVENT = "numba:compile"


class HoldInterruptsWhileCompiling(event.Listener):
    def __init__(self) -> None:
        self.depth = 0  # nested compiles of the main thread (a kernel compiles its callees)
        self.handler = None  # SIGINT's handler before the outermost compile, if held
        self.pending = False

    def on_start(self, ev: event.Event) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        self.depth += 1
        if self.depth == 1:
            handler = signal.getsignal(signal.SIGINT)
            if callable(handler):  # SIG_IGN and SIG_DFL raise nothing in Python
                self.handler = handler
                signal.signal(signal.SIGINT, self._hold)

    def on_end(self, ev: event.Event) -> None:
        if threading.current_thread() is not threading.main_thread() or self.depth == 0:
            return
        self.depth -= 1
        if self.depth > 0 or self.handler is None:
            return
        handler, self.handler = self.handler, None
        signal.signal(signal.SIGINT, handler)
        if self.pending:
            self.pending = False
            handler(signal.SIGINT, None)

    def _hold(self, signum: int, frame: object) -> None:
        self.pending = True


_GUARD = HoldInterruptsWhileCompiling()
event.register(COMPILE_EVENT, _GUARD)  # once: a module runs once
