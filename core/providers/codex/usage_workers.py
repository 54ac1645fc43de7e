"""The usage scan (:mod:`core.providers.codex.history`) shared out to several processes.

Two ways, one interface (:meth:`parts`: each file's answer; :meth:`cancel`):

* :class:`ForkedScan` — where this process may fork (a POSIX system, and no other thread
  running: ``codex-usage`` before anything else has started). The children are copies of this
  process, so they start scanning at once, with nothing to import; every process takes the
  next files from one queue (a pipe of file numbers, largest files first), so they all finish
  together whatever each file costs and whenever each process joins. A shared board records
  who scanned each file: a child that fails has its files scanned again here, as has a file
  nobody took.
* :class:`PendingScan` — everywhere else (a threaded caller, Windows): fresh interpreters that
  import only the scan (``python -c``, the file list on stdin, the result pickled on stdout),
  each given a share of equal size in bytes. multiprocessing's ``spawn`` and ``forkserver``
  would also re-import the caller's main module in every worker — for the ``goalkeeper``
  command the whole CLI, which cost more than the workers saved. A frozen app that cannot
  fork (no ``python -c``) uses ``spawn``.

Measured on the 1 GiB bench tree (docs/notes/issue-24-scan.md): a forked child starts its
first file ~1 ms after the fork, an interpreter ~60–100 ms after its start.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import pickle
import sys
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path

from core.forked import ForkedCall, can_fork
from core.providers.codex.history import Part, Stamp, UsageHistory, combine, scan_file, scan_parts

#: bytes of one entry of the queue: the number of the first file of a batch
_RECORD = 4
#: at most this many entries, so that all of them fit in a pipe before anyone reads
_MAX_RECORDS = 8192
#: the board has a byte per file for the number of the process that scanned it
_MAX_WORKERS = 64


def scan_usage(paths: Iterable[Path], workers: int = 1) -> UsageHistory:
    """Scan ``paths``; with ``workers`` > 1 shared out to that many processes (this one and
    ``workers - 1`` others)."""
    return combine(part for _, _, part in scan_usage_parts(paths, workers))


def scan_usage_parts(paths: Iterable[Path], workers: int = 1) -> list[Part]:
    """:func:`scan_usage`, each file's answer apart (:func:`~history.scan_parts`)."""
    files = list(paths)
    if (pending := start_scan(files, workers)) is not None:
        return pending.parts()
    if workers <= 1 or len(files) < 2 or can_fork() or not getattr(sys, "frozen", False):
        return scan_parts(files)  # one process asked for, or none to be had
    groups = _share_out(files, workers)  # a frozen app that cannot fork: no ``python -c``
    import multiprocessing  # imported here: workers must start fast
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")
    try:
        with ProcessPoolExecutor(len(groups), mp_context=context) as pool:
            return [part for group in pool.map(scan_parts, groups) for part in group]
    except OSError:
        return scan_parts(files)


def start_scan(paths: Iterable[Path], workers: int,
               sizes: Sequence[int] | None = None) -> ForkedScan | PendingScan | None:
    """The scan of ``paths`` by ``workers`` processes, all but this one started now, for a
    caller with other work to do meanwhile (``codex-usage`` loading its settings); this
    process joins in when asked for the :meth:`~ForkedScan.parts`. None where that cannot
    be done so (one worker asked for, fewer than two files, a frozen app that cannot fork).
    ``sizes``: each file's size, when the caller knows them (else each is looked up)."""
    files = list(paths)
    if workers <= 1 or len(files) < 2:
        return None
    if can_fork():
        try:
            return ForkedScan(files, workers, sizes)
        except OSError:  # no pipe to be had (too many open files): read here, one by one
            return None
    if getattr(sys, "frozen", False):
        return None
    groups = _share_out(files, workers, sizes)
    return PendingScan(groups[1:], here=groups[0])


class ForkedScan:
    """``files`` scanned by this process and ``workers - 1`` forked children, each taking the
    next batch of files from one queue (see the module's docstring). Owns the children:
    :meth:`parts` joins in and collects them, :meth:`cancel` ends them."""

    def __init__(self, files: list[Path], workers: int,
                 sizes: Sequence[int] | None = None) -> None:
        self.files = _largest_first(files, sizes)
        workers = min(workers, _MAX_WORKERS)
        self.step = -(-len(self.files) // _MAX_RECORDS)  # files per entry of the queue
        #: who scanned each file: 0 nobody, else the scanning process's number (this one: 1)
        self.board = mmap.mmap(-1, len(self.files))
        try:
            self._queue = self._fill_queue()
        except OSError:
            self.board.close()
            raise
        #: (the child, its number) — a child leaves the list once it has answered
        self.children: list[tuple[ForkedCall[list[tuple[int, Stamp, UsageHistory]]], int]] = []
        for number in range(2, workers + 1):
            try:
                self.children.append((ForkedCall(partial(self._work, number)), number))
            except OSError:  # no more processes or pipes to be had: fewer children, the
                break  # queue shares the files out to those there are

    def _fill_queue(self) -> int:
        """A pipe holding the queue's entries, its writing end closed (an empty queue reads
        as the end); the read end. Entries that do not fit are left to :meth:`parts` (a
        file nobody scanned is scanned here)."""
        read, write = os.pipe()
        try:
            os.set_blocking(write, False)
            for first in range(0, len(self.files), self.step):
                os.write(write, first.to_bytes(_RECORD, "little"))
        except BlockingIOError:
            pass
        finally:
            os.close(write)
        return read

    def _work(self, number: int) -> list[tuple[int, Stamp, UsageHistory]]:
        """Take batches from the queue until it is empty: (file number, stamp, answer) of each
        file scanned, each marked on the board as this process's."""
        found = []
        while len(entry := os.read(self._queue, _RECORD)) == _RECORD:
            first = int.from_bytes(entry, "little")
            for index in range(first, min(first + self.step, len(self.files))):
                if (part := scan_file(self.files[index])) is not None:
                    found.append((index, *part))
                self.board[index] = number
        return found

    def parts(self) -> list[Part]:
        """Each file's answer: this process takes from the queue too, then collects the
        children's answers; a failed child's files, and any file nobody took, are scanned
        here."""
        found = self._work(1)
        failed: set[int] = set()
        for child, number in self.children:
            part = child.answer()
            if isinstance(part, list):
                found.extend(part)
            else:
                failed.add(number)
        for child, _ in self.children:  # reaped once all have answered: a child's exit (its
            child.wait()  # memory given back) is not waited for before the next answer
        self.children = []
        done = [(self.files[index], stamp, history) for index, stamp, history in found]
        missed = [path for index, path in enumerate(self.files)
                  if self.board[index] == 0 or self.board[index] in failed]
        self._close()
        return done + scan_parts(missed)

    def cancel(self) -> None:
        """End the children (their answer is not wanted any more): those that have not
        answered are ended, those that have are waited for; all reaped."""
        for child, _ in self.children:
            child.close()
        self.children = []
        self._close()

    def _close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._queue)
        self.board.close()


_WORKER = "from core.providers.codex.usage_workers import worker_main; worker_main()"


class PendingScan:
    """Groups of files being scanned, each by a worker interpreter started at once, and
    ``here``: the group this process scans when asked for the :meth:`parts`.

    The file lists are written to the workers' stdin by a thread, so that starting them never
    waits for an interpreter to come up (a long list fills the pipe before the worker reads
    it). Owns the processes: :meth:`parts` collects them — a failed worker's files are scanned
    here instead (the chart shows what could be read) — and :meth:`cancel` ends them.
    """

    def __init__(self, groups: list[list[Path]], here: list[Path] | None = None) -> None:
        import subprocess  # imported here: workers must start fast
        import threading

        self.here = here or []
        self.groups = groups
        self.procs = [subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                      for _ in groups]
        self._writer = threading.Thread(target=self._send, name="codex-scan-lists", daemon=True)
        self._writer.start()

    def _send(self) -> None:
        for proc, group in zip(self.procs, self.groups, strict=True):
            assert proc.stdin is not None
            with contextlib.suppress(OSError):
                proc.stdin.write("\n".join(str(p) for p in group).encode())
                proc.stdin.close()

    def _collect(self) -> list[Part]:
        """Each group's answer, waiting for the workers."""
        parts: list[Part] = []
        for proc, group in zip(self.procs, self.groups, strict=True):
            assert proc.stdout is not None
            with proc.stdout:
                data = proc.stdout.read()
            proc.wait()
            # our own worker's answer: the same code, run by the same interpreter
            found = pickle.loads(data) if proc.returncode == 0 and data else None
            parts.extend(found if isinstance(found, list) else scan_parts(group))
        self._writer.join()
        return parts

    def parts(self) -> list[Part]:
        """Each file's answer: the share kept for this process scanned now, then the workers'."""
        here = scan_parts(self.here)
        return here + self._collect()

    def cancel(self) -> None:
        """End the workers (their answer is not wanted any more)."""
        for proc in self.procs:
            with contextlib.suppress(OSError):
                proc.kill()
        for proc in self.procs:
            if proc.stdout is not None:
                proc.stdout.close()
            proc.wait()
        self._writer.join()


def worker_main() -> None:
    """A worker: the paths on stdin, one a line; the pickled list of each file's
    (path, stamp, :class:`UsageHistory`) on stdout."""
    paths = [Path(line) for line in sys.stdin.read().splitlines() if line]
    sys.stdout.buffer.write(pickle.dumps(scan_parts(paths)))
    sys.stdout.flush()


def _share_out(files: list[Path], workers: int,
               sizes: Sequence[int] | None = None) -> list[list[Path]]:
    """Groups of about equal size in bytes, largest files first."""
    sized = sorted(zip(sizes or [file_size(p) for p in files], files, strict=True), reverse=True)
    groups: list[tuple[int, list[Path]]] = [(0, []) for _ in range(min(workers, len(files)))]
    for size, path in sized:
        total, members = min(groups, key=lambda group: group[0])
        groups.remove((total, members))
        members.append(path)
        groups.append((total + size, members))
    return [members for _, members in groups if members]


def _largest_first(files: list[Path], sizes: Sequence[int] | None) -> list[Path]:
    known = sizes or [file_size(p) for p in files]
    return [files[i] for i in sorted(range(len(files)), key=known.__getitem__, reverse=True)]


def file_size(path: Path) -> int:
    """``path``'s size in bytes (0 when it cannot be read: it is then left out of the scan)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0
