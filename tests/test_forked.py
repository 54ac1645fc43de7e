"""Work done by a forked copy of the process (core/forked.py): its answer, the work it does after
sending it, and its end — answered, cancelled or failed, always reaped."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from core.forked import ForkedCall


def reaped(pid: int) -> bool:
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    return True


def test_the_answer_comes_before_the_work_done_after_it(tmp_path: Path):
    """The child sends its answer, then does ``then`` (writing a cache): the answer does not
    wait for it, and closing the child does."""
    after = tmp_path / "written-after"

    def then() -> None:
        time.sleep(1.0)
        after.write_text("done")

    call = ForkedCall(lambda: {"calls": 3}, then=then)
    pid = call.pid
    started = time.monotonic()
    assert call.answer() == {"calls": 3}
    assert time.monotonic() - started < 0.9 and not after.exists()
    call.close()
    assert after.read_text() == "done" and pid is not None and reaped(pid)


def test_a_child_that_fails_answers_none_and_is_reaped():
    def fails() -> int:
        raise MemoryError

    call = ForkedCall(fails)
    pid = call.pid
    assert call.answer() is None
    call.close()
    assert pid is not None and reaped(pid)


def test_an_unanswered_child_is_ended_on_close_and_its_then_never_runs(tmp_path: Path):
    """SIGTERM ends the work (its ``finally`` blocks run) without waiting for it."""
    ended = tmp_path / "ended"
    after = tmp_path / "after"

    def works() -> int:
        try:
            time.sleep(60)
        finally:
            ended.write_text("cleanly")
        return 1

    call = ForkedCall(works, then=lambda: after.write_text("no"))
    pid = call.pid
    time.sleep(0.2)  # (the child is in its work)
    started = time.monotonic()
    call.close()
    assert time.monotonic() - started < 30 and pid is not None and reaped(pid)
    assert ended.read_text() == "cleanly" and not after.exists()


def test_an_answer_cut_short_is_none(monkeypatch: pytest.MonkeyPatch):
    """A child that ends while it writes its answer: what arrived does not unpickle — None
    (even though it ended with 0)."""
    import pickle

    write_ends: list[int] = []
    pipe = os.pipe

    def recorded() -> tuple[int, int]:
        read, write = pipe()
        write_ends.append(write)
        return read, write

    def half_then_gone() -> None:
        data = pickle.dumps(list(range(200_000)))
        os.write(write_ends[-1], data[: len(data) // 2])
        os._exit(0)

    monkeypatch.setattr(os, "pipe", recorded)
    call = ForkedCall(half_then_gone)
    pid = call.pid
    assert call.answer() is None
    call.close()
    assert pid is not None and reaped(pid)


def test_the_child_never_collects_what_it_inherited():
    """A garbage collection in the child would walk every object it inherited, and so copy
    the parent's memory page by page: the copy freezes them (``gc.freeze``) and collects
    nothing (it is short-lived)."""
    import gc

    assert gc.get_freeze_count() == 0 and gc.isenabled()  # (this process)
    call = ForkedCall(lambda: (gc.get_freeze_count(), gc.isenabled()))
    found = call.answer()
    call.close()
    assert found is not None and found[0] > 1000 and found[1] is False
    assert gc.get_freeze_count() == 0 and gc.isenabled()
