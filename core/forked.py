"""Work done by a forked copy of this process, its answer pickled back through a pipe.

A forked child starts at once — it is this process, with everything it has imported — where a
fresh interpreter takes tens of milliseconds to import anything. Only a process that may fork
uses it (:func:`can_fork`: a POSIX system and no other thread — a thread holding a lock at the
fork would leave it held forever in the child).

The child runs the work and leaves with ``os._exit`` — never this process's cleanup (no
``atexit``, no buffers flushed twice); SIGTERM ends its work cleanly (its own ``finally``
blocks run, e.g. to end and reap the children it started), which is how
:meth:`ForkedCall.cancel` stops it, and so does Ctrl-C. A child that fails, or is killed,
answers None.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import Generic, TypeVar

T = TypeVar("T")


def can_fork() -> bool:
    """Whether this process may fork and let the child run Python: a POSIX system and no
    other Python thread."""
    threading = sys.modules.get("threading")
    return hasattr(os, "fork") and (threading is None or threading.active_count() == 1)


#: a child is unwinding its work (see :func:`_stop`)
_stopping = False


def _stop(signum: int, frame: FrameType | None) -> None:
    """A child's Ctrl-C or SIGTERM: its work is unwound (its ``finally`` blocks end and reap
    the children it started); a second signal — Ctrl-C reaches every process of the group,
    and the parent then cancels — does nothing, so it cannot cut that short (a call it
    interrupts goes on where it was)."""
    global _stopping
    if _stopping:
        return
    _stopping = True
    raise KeyboardInterrupt if signum == signal.SIGINT else SystemExit(1)


class ForkedCall(Generic[T]):
    """``work()`` started now in a forked child; :meth:`answer` waits for what it returned.
    ``then``: run by the child once its answer is sent — work the answer does not wait for
    (writing a cache); :meth:`close` waits for it. Raises OSError when no pipe or process can
    be had (nothing is left behind)."""

    def __init__(self, work: Callable[[], T], then: Callable[[], object] | None = None) -> None:
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            raise
        if pid == 0:  # the child: work, send the answer, and leave without running anything
            code = 1  # of the parent's
            try:
                signal.signal(signal.SIGTERM, _stop)
                signal.signal(signal.SIGINT, _stop)
                # no garbage collection here: one would walk (and so copy) every page of the
                # parent's it inherited, and the child is short-lived (its memory goes back
                # with it: it leaves by os._exit)
                gc.freeze()
                gc.disable()
                os.close(read)
                data = memoryview(pickle.dumps(work()))
                while data:
                    data = data[os.write(write, data):]
                os.close(write)  # the answer is whole: the parent reads it now
                if then is not None:
                    then()
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        self.pid: int | None = pid
        self.answered = False
        self._pipe = read

    def answer(self) -> T | None:
        """What the work returned, once the child has sent it; None when it failed (it sent
        nothing, or not all of it)."""
        if self._pipe < 0:
            return None
        pipe, self._pipe = self._pipe, -1  # the file below owns (and closes) it from here
        with open(pipe, "rb") as answer:
            data = answer.read()
        self.answered = True  # (all of what the child sent: a read cut short is not)
        try:  # our own child's answer: the same code, run by a copy of this process
            found: T = pickle.loads(data)
        except (pickle.UnpicklingError, EOFError, ValueError):
            return None  # cut short: the child ended before it had sent all of it
        return found

    def wait(self) -> None:
        """Reap the child, waiting for it to end."""
        if self.pid is not None:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self.pid = None  # reaped: never signalled again (its pid may be reused)

    def cancel(self) -> None:
        """End the child (its answer is not wanted any more) and reap it."""
        if self.pid is None:
            return
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGTERM)
        if self._pipe >= 0:  # (answer() cut short has closed it already)
            os.close(self._pipe)
            self._pipe = -1
        self.wait()

    def close(self) -> None:
        """The child reaped: one whose answer was taken is waited for (it may be finishing
        what it does after), one whose answer was not is ended."""
        if self.answered:
            self.wait()
        else:
            self.cancel()
