"""A fake ``org.freedesktop.login1`` on a private system bus the tests start.

:func:`private_system_bus` runs ``dbus-daemon`` with a throw-away configuration and points
``DBUS_SYSTEM_BUS_ADDRESS`` at it; :class:`FakeLogin1` answers ``Inhibit`` as logind does — with
a real file descriptor (the write end of a pipe): the inhibitor lasts while that end is open
anywhere — and the Manager's properties (``HandleLidSwitch`` …) from a dict the test sets.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jeepney import HeaderFields, MessageType, message_bus, new_error, new_method_return
from jeepney.fds import FileDescriptor
from jeepney.io.blocking import open_dbus_connection

CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""
MANAGER = "org.freedesktop.login1.Manager"
PROPS_TYPES = {"HandleLidSwitch": "s", "LidSwitchIgnoreInhibited": "b", "IdleAction": "s",
               "IdleActionUSec": "t"}


@contextmanager
def private_system_bus(tmp: Path) -> Iterator[str]:
    """Start a private bus; yields its address (set it as ``DBUS_SYSTEM_BUS_ADDRESS``)."""
    daemon = shutil.which("dbus-daemon")
    assert daemon is not None, "dbus-daemon is needed (it is in .ci/run's apt list)"
    config = tmp / "system-bus.conf"
    config.write_text(CONFIG.format(socket=tmp / "system_bus_socket"), encoding="utf-8")
    proc = subprocess.Popen([daemon, f"--config-file={config}", "--nofork", "--print-address"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
        proc.terminate()
        proc.wait(timeout=5)


@dataclass
class Inhibitor:
    what: str
    who: str
    why: str
    mode: str
    read_end: int

    def held(self) -> bool:
        """True while some process still has the write end open."""
        ready, _, _ = select.select([self.read_end], [], [], 0)
        return not ready  # readable with nothing written: every writer closed it (EOF)


class FakeLogin1:
    """Answers on the bus from a thread. Attributes: ``inhibitors`` (every Inhibit, in order),
    ``props`` (the Manager's properties)."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.inhibitors: list[Inhibitor] = []
        self.props: dict[str, Any] = {"HandleLidSwitch": "ignore",
                                      "LidSwitchIgnoreInhibited": True, "IdleAction": "ignore",
                                      "IdleActionUSec": 30 * 60 * 1_000_000}
        self._conn = open_dbus_connection(bus=address, enable_fds=True)
        reply = self._conn.send_and_get_reply(message_bus.RequestName("org.freedesktop.login1"))
        assert reply.body == (1,)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def held(self) -> list[Inhibitor]:
        return [i for i in self.inhibitors if i.held()]

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._conn.close()
        for inhibitor in self.inhibitors:
            os.close(inhibitor.read_end)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                msg = self._conn.receive(timeout=0.05)
            except TimeoutError:
                continue
            if msg.header.message_type is MessageType.method_call:
                self._answer(msg)

    def _answer(self, msg: Any) -> None:
        member = msg.header.fields.get(HeaderFields.member)
        if member == "Inhibit":
            what, who, why, mode = msg.body
            read_end, write_end = os.pipe()
            self.inhibitors.append(Inhibitor(what, who, why, mode, read_end))
            # jeepney closes the FileDescriptor once sent: the caller holds the only write end
            handle = FileDescriptor(write_end)
            self._conn.send(new_method_return(msg, "h", (handle,)))
            handle.close()
        elif member == "Get" and msg.body[0] == MANAGER and msg.body[1] in self.props:
            name = msg.body[1]
            self._conn.send(new_method_return(msg, "v", ((PROPS_TYPES[name],
                                                          self.props[name]),)))
        else:
            self._conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod"))
