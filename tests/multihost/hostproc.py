"""A host process for the multi-host tests: ``python -m tests.multihost.hostproc``.

The real :class:`~core.host.Host` (engine, control socket, heartbeat, the shared store's
listener), its settings from ``$GOALKEEPER_HOME/config.toml``, its one provider the scripted
agent of ``$FAKE_AGENT_HOME``. With ``$GK_WAIT_FOR`` set it waits for that file to appear
before it opens the store (so several hosts start at the same instant). Stops on SIGTERM.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from core.cli.hosts import serve_until_signal
from core.clock import SystemClock
from core.host import Host
from core.logs import setup_logging
from core.paths import resolve_paths
from core.settings import load_settings
from tests.multihost.agent import ScriptedAgent


def main() -> None:
    paths = resolve_paths(os.environ)
    settings = load_settings(paths.config_file)
    setup_logging(paths.log_file, stdout=True)
    go = os.environ.get("GK_WAIT_FOR")
    if go:
        Path(f"{go}.{os.getpid()}").touch()  # past the imports: waiting
    while go and not Path(go).exists():
        time.sleep(0.005)
    clock = SystemClock()
    agent = ScriptedAgent(Path(os.environ["FAKE_AGENT_HOME"]), clock)
    host = Host(paths, settings, [agent], "daemon", clock)
    asyncio.run(serve_until_signal(host))


if __name__ == "__main__":
    main()
