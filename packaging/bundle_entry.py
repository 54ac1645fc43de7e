"""Entry point of the PyInstaller bundle: the ``goalkeeper`` command (and so the app)."""

import multiprocessing
import sys

from core.cli import script

if __name__ == "__main__":
    # the Codex and Claude history scans use "spawn" worker processes: in a frozen program the
    # workers re-run this executable, and freeze_support() makes them run the worker instead
    multiprocessing.freeze_support()
    sys.exit(script())
