"""The Codex start-up read (:func:`~core.providers.codex.startup.read_startup`) in a worker
interpreter, when it has many rollouts to read.

A host starts its providers at once; each one's first read runs in a thread of the host's
process, and Python threads share one interpreter lock: the Claude provider's first pass and a
cold Codex read (no start index: the last goal line of every rollout) took turns on one core, so
the Codex gauges and goals waited for Claude's work (issue 24: 1.3–1.9× the Codex tree alone).
In a worker process the Codex read has a core of its own — and, on a loaded machine, a share of
the CPU of its own.

Only beside such a provider: alone, starting the worker (~0.1 s of CPU before it reads a byte)
would only make the Codex start slower (measured: best 0.91–1.04 s → 1.12–1.24 s on the bench
tree).

The worker is a fresh interpreter importing only the start-up read (``python -c``, as the usage
scan's workers are: never a fork of the threaded host): the files and the previous start index
pickled on its stdin, the :class:`~core.providers.codex.startup.StartupState` pickled on its
stdout. A warm start (the index covers most files) reads little and stays in the host's
process; so does a frozen app (no ``python -c``); a failed worker's read is done here.
"""

from __future__ import annotations

import logging
import pickle
import sys
from pathlib import Path

from core.providers.codex.follow import RolloutFileState
from core.providers.codex.startindex import StartIndexEntry
from core.providers.codex.startup import StartupState, read_startup

log = logging.getLogger(__name__)

#: this many rollouts to read (new, grown or not in the start index) make a worker worth its
#: start (about 0.1 s of the CPU; the read of 1,024 rollouts takes 0.3 s of it)
WORKER_FILES = 256
_WORKER = "from core.providers.codex.startup_worker import worker_main; worker_main()"


def to_read(files: list[RolloutFileState], cached: dict[str, StartIndexEntry]) -> int:
    """How many of ``files`` the start index does not answer."""
    return sum(1 for f in files if (entry := cached.get(str(f.path))) is None
               or not entry.scanned or not entry.unchanged(f.ino, f.size, f.mtime_ns))


def read_start(files: list[RolloutFileState], sqlite_home: Path,
               cached: dict[str, StartIndexEntry], apart: bool = True) -> StartupState:
    """:func:`read_startup`, in a worker when ``apart`` (another provider's first pass would
    share the interpreter: :meth:`~core.providers.codex.provider.CodexProvider.started_beside`)
    and many files are to be read (see above)."""
    if (not apart or to_read(files, cached) < WORKER_FILES
            or getattr(sys, "frozen", False)):
        return read_startup(files, sqlite_home, cached)
    import subprocess  # imported here: only a cold start needs it

    try:
        done = subprocess.run([sys.executable, "-c", _WORKER], check=False, timeout=120,
                              input=pickle.dumps((files, sqlite_home, cached)),
                              stdout=subprocess.PIPE)
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("codex: the start-up read's worker did not run (%s): reading here", exc)
        return read_startup(files, sqlite_home, cached)
    # our own worker's answer: the same code, run by the same interpreter
    state = pickle.loads(done.stdout) if done.returncode == 0 and done.stdout else None
    if not isinstance(state, StartupState):
        log.warning("codex: the start-up read's worker failed (exit %s): reading here",
                    done.returncode)
        return read_startup(files, sqlite_home, cached)
    return state


def worker_main() -> None:
    """A worker: (files, sqlite_home, cached) pickled on stdin; the state pickled on stdout."""
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    files, sqlite_home, cached = pickle.loads(sys.stdin.buffer.read())
    sys.stdout.buffer.write(pickle.dumps(read_startup(files, sqlite_home, cached)))
    sys.stdout.flush()
