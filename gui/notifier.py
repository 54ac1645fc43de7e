"""The one seam every desktop notification goes through — presentation only.

Which history row is which kind of notification, and whether that kind is switched on, is the
core's decision (:mod:`core.notify`), shared with ntfy and the webhook. :class:`Notifier` shows
what the bridge's ``notification_issued`` hands it through exactly one backend chosen at
start-up:

* :class:`TrayBackend` — ``QSystemTrayIcon.showMessage`` (on a D-Bus desktop Qt turns that into
  ``org.freedesktop.Notifications.Notify`` itself);
* :class:`FreedesktopBackend` — no tray, but a notification service on the session bus: ``Notify``
  sent with jeepney, on a worker thread (a D-Bus call can block);
* :class:`NullBackend` — neither: nothing is shown, and the history still records everything.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QSystemTrayIcon

from core.notices import Kind, Notification
from gui.bridge import Bridge

log = logging.getLogger("gui")

NOTIFICATIONS = "org.freedesktop.Notifications"
EXPIRE_MS = 8000


@dataclass(frozen=True)
class Toast:
    """What a backend shows: a title and a body; ``kind`` is None for a one-off hint."""

    title: str
    body: str
    kind: Kind | None = None
    goal: str | None = None

    @classmethod
    def of(cls, notification: Notification) -> Toast:
        return cls(notification.title, notification.message, notification.kind,
                   notification.goal)


class Backend(Protocol):
    name: str

    def send(self, notification: Toast) -> None: ...

    def close(self) -> None: ...


class TrayBackend:
    name = "tray"

    def __init__(self, icon: QSystemTrayIcon) -> None:
        self._icon = icon

    def send(self, notification: Toast) -> None:
        self._icon.showMessage(notification.title, notification.body,
                               QSystemTrayIcon.MessageIcon.Information, EXPIRE_MS)

    def close(self) -> None:
        pass


class FreedesktopBackend:
    """``org.freedesktop.Notifications.Notify`` over the session bus, off the GUI thread."""

    name = "freedesktop"

    def __init__(self, app_name: str = "Goalkeeper") -> None:
        self._app_name = app_name
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gk-notify")

    def send(self, notification: Toast) -> None:
        self._executor.submit(self._notify, notification)

    def _notify(self, notification: Toast) -> None:
        from jeepney import DBusAddress, new_method_call
        from jeepney.io.blocking import open_dbus_connection

        address = DBusAddress("/org/freedesktop/Notifications", bus_name=NOTIFICATIONS,
                              interface=NOTIFICATIONS)
        message = new_method_call(address, "Notify", "susssasa{sv}i", (
            self._app_name, 0, "dialog-information", notification.title, notification.body,
            [], {}, EXPIRE_MS))
        try:
            with open_dbus_connection(bus="SESSION") as connection:
                connection.send_and_get_reply(message, timeout=3)
        except Exception as exc:  # a broken bus must never take the app down
            log.warning("desktop notification failed: %s", exc)

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=False)


class NullBackend:
    name = "none"

    def send(self, notification: Toast) -> None:
        log.info("notification not shown (no tray, no notification service): %s — %s",
                 notification.title, notification.body)

    def close(self) -> None:
        pass


def notification_service_available() -> bool:
    """Whether the session bus has (or can start) a notification service. Blocking: a thread."""
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return False
    try:
        from jeepney.bus_messages import message_bus
        from jeepney.io.blocking import open_dbus_connection

        with open_dbus_connection(bus="SESSION") as connection:
            owned = connection.send_and_get_reply(message_bus.NameHasOwner(NOTIFICATIONS),
                                                  timeout=2).body[0]
            if owned:
                return True
            names = connection.send_and_get_reply(message_bus.ListActivatableNames(),
                                                  timeout=2).body[0]
            return NOTIFICATIONS in names
    except Exception as exc:
        log.info("no session bus for notifications: %s", exc)
        return False


class Notifier(QObject):
    """Shows the core's notifications through one backend. Owns the backend.

    Signals: ``sent(Toast)`` — after a notification was handed to the backend.
    """

    sent = Signal(object)

    def __init__(self, bridge: Bridge, backend: Backend, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.backend = backend
        self.recent: deque[Toast] = deque(maxlen=50)
        bridge.notification_issued.connect(self._on_bridge_notification_issued)

    def _on_bridge_notification_issued(self, notification: Notification) -> None:
        self.notify(Toast.of(notification))

    def notify(self, toast: Toast) -> None:
        self.recent.append(toast)
        self.backend.send(toast)
        self.sent.emit(toast)

    def hint(self, title: str, body: str) -> None:
        """A one-off message that is not one of the switchable kinds (e.g. "still running")."""
        self.backend.send(Toast(title, body))

    def close(self) -> None:
        self.backend.close()
