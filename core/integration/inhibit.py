"""Keeping the machine awake: one small interface, a backend per platform, and the battery.

Each backend's ``take(why)`` holds a sleep inhibitor and returns the function that lets it go;
``limits()`` says what the system does anyway. Both block (D-Bus round trips, a process start):
the caller runs them in a thread.

* Linux: logind's ``Inhibit("sleep", "Goalkeeper", why, "block")`` on the system bus; the reply
  is a file descriptor, and the inhibitor lasts as long as it is open
  (https://systemd.io/INHIBITOR_LOCKS/). logind's ``HandleLidSwitch`` suspends a closed lid
  *despite* a block lock while ``LidSwitchIgnoreInhibited`` is true (its default): said, not hidden.
* macOS: ``caffeinate -i -w <our pid>`` (no idle sleep while it runs) — untested here.
* Windows: ``SetThreadExecutionState(ES_CONTINUOUS | ES_SYSTEM_REQUIRED)`` on a thread of its own
  that lives while the hold does (the state belongs to the thread) — untested here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.i18n import N_

#: logind's actions that put the machine to sleep (logind.conf(5), HandleLidSwitch=)
SLEEP_ACTIONS = frozenset({"suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate",
                           "sleep"})
POWER_SUPPLY = Path("/sys/class/power_supply")
DBUS_TIMEOUT = 5.0


class InhibitError(Exception):
    """The inhibitor could not be taken (no logind, refused, no such tool); the message says why."""


@dataclass(frozen=True)
class SleepLimits:
    """What the system does whatever Goalkeeper holds.

    Attributes: ``lid_sleeps`` (closing the lid suspends anyway), ``idle_action`` (logind's
    action after ``idle_seconds`` idle, e.g. "suspend"; "" when it does nothing), ``missing``
    (why the platform's inhibitor service cannot be reached, or None).
    """

    lid_sleeps: bool = False
    idle_action: str = ""
    idle_seconds: float = 0.0
    missing: str | None = None


class LogindInhibitor:
    """logind on the system bus (``DBUS_SYSTEM_BUS_ADDRESS``, else the standard socket)."""

    name = "logind"

    def take(self, why: str) -> Callable[[], None]:
        from jeepney import new_method_call

        reply = self._call(new_method_call(_manager(), "Inhibit", "ssss",
                                           ("sleep", "Goalkeeper", why, "block")))
        raw = reply.body[0].to_raw_fd()  # ours now: the inhibitor lives while it is open
        os.set_inheritable(raw, False)  # an agent we start must not keep it alive after us
        return lambda: os.close(raw)

    def limits(self) -> SleepLimits:
        from jeepney import Properties

        try:
            props = Properties(_manager())
            values = {name: self._call(props.get(name)).body[0][1]
                      for name in ("HandleLidSwitch", "LidSwitchIgnoreInhibited", "IdleAction",
                                   "IdleActionUSec")}
        except InhibitError as exc:
            return SleepLimits(missing=str(exc))
        return SleepLimits(
            lid_sleeps=values["HandleLidSwitch"] in SLEEP_ACTIONS
            and bool(values["LidSwitchIgnoreInhibited"]),
            idle_action=str(values["IdleAction"]) if values["IdleAction"] in SLEEP_ACTIONS
            else "", idle_seconds=int(values["IdleActionUSec"]) / 1e6)

    @staticmethod
    def _call(message: Any) -> Any:
        from jeepney import MessageType
        from jeepney.io.blocking import open_dbus_connection

        try:
            with open_dbus_connection(bus="SYSTEM", enable_fds=True) as conn:
                reply = conn.send_and_get_reply(message, timeout=DBUS_TIMEOUT)
        except (OSError, TimeoutError, KeyError, ValueError) as exc:
            raise InhibitError(N_("no logind on the system bus ({error})").format(
                error=exc)) from None
        if reply.header.message_type is MessageType.error:
            detail = reply.body[0] if reply.body else reply.header.fields.get(4, "")
            raise InhibitError(N_("logind refused: {error}").format(error=detail))
        return reply


def _manager() -> Any:
    from jeepney import DBusAddress

    return DBusAddress("/org/freedesktop/login1", bus_name="org.freedesktop.login1",
                       interface="org.freedesktop.login1.Manager")


class CaffeinateInhibitor:
    """macOS: ``caffeinate -i -w <pid>`` — it also ends when Goalkeeper does (untested here)."""

    name = "caffeinate"

    def take(self, why: str) -> Callable[[], None]:
        try:
            proc = subprocess.Popen(["caffeinate", "-i", "-w", str(os.getpid())],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        except OSError as exc:
            raise InhibitError(N_("cannot start caffeinate ({error})").format(error=exc)) from None

        def release() -> None:
            proc.terminate()
            proc.wait(timeout=5)
        return release

    def limits(self) -> SleepLimits:
        return SleepLimits(lid_sleeps=True)  # a closed lid sleeps without an external display


class WindowsInhibitor:
    """Windows: ``SetThreadExecutionState`` on a thread that lives while held (untested here)."""

    name = "windows"
    ES_CONTINUOUS = 0x80000000
    ES_SYSTEM_REQUIRED = 0x00000001

    def take(self, why: str) -> Callable[[], None]:
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined,unused-ignore]
        done = threading.Event()

        def hold() -> None:
            kernel32.SetThreadExecutionState(self.ES_CONTINUOUS | self.ES_SYSTEM_REQUIRED)
            done.wait()
            kernel32.SetThreadExecutionState(self.ES_CONTINUOUS)

        threading.Thread(target=hold, name="goalkeeper:awake", daemon=True).start()
        return done.set

    def limits(self) -> SleepLimits:
        return SleepLimits(lid_sleeps=True)  # the lid's power setting is not asked here


def default_inhibitor() -> LogindInhibitor | CaffeinateInhibitor | WindowsInhibitor:
    if sys.platform == "darwin":
        return CaffeinateInhibitor()
    if sys.platform == "win32":
        return WindowsInhibitor()
    return LogindInhibitor()


def battery_percent(root: Path = POWER_SUPPLY) -> float | None:
    """The battery's charge while the machine runs on it, else None (on mains, no battery, or
    not Linux). Read from ``/sys/class/power_supply`` (the kernel's power_supply class)."""
    levels: list[float] = []
    try:
        supplies = sorted(root.iterdir())
    except OSError:
        return None
    for supply in supplies:
        kind = _read(supply / "type")
        if kind in ("Mains", "USB") and _read(supply / "online") == "1":
            return None
        if kind == "Battery" and _read(supply / "status") == "Discharging":
            capacity = _read(supply / "capacity")
            if capacity and capacity.isdigit():
                levels.append(float(capacity))
    return min(levels, default=None)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""
