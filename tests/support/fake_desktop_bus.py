"""A fake desktop on a private session bus: a notification server and, with ``--tray``, a
StatusNotifierWatcher (which makes Qt use its D-Bus tray). Prints one JSON line per Notify call.

Run under ``dbus-run-session``; start it before the process under test creates a tray icon (Qt
picks its tray backend then).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from jeepney import HeaderFields, MessageType, message_bus, new_error, new_method_return
from jeepney.io.blocking import open_dbus_connection

NOTIFICATIONS = "org.freedesktop.Notifications"
WATCHER = "org.kde.StatusNotifierWatcher"
WATCHER_PROPS = {"IsStatusNotifierHostRegistered": ("b", True), "ProtocolVersion": ("i", 0),
                 "RegisteredStatusNotifierItems": ("as", [])}
UNKNOWN = "org.freedesktop.DBus.Error.UnknownMethod"


def emit(data: object) -> None:
    print(json.dumps(data), flush=True)


def answer_notifications(conn: Any, msg: Any, member: str, counter: list[int]) -> None:
    if member == "Notify":
        counter[0] += 1
        app, _rid, icon, summary, body, _actions, _hints, _timeout = msg.body
        emit({"notify": {"app": app, "icon": icon, "summary": summary, "body": body}})
        conn.send(new_method_return(msg, "u", (counter[0],)))
    elif member == "GetCapabilities":
        conn.send(new_method_return(msg, "as", (["body", "actions"],)))
    elif member == "GetServerInformation":
        conn.send(new_method_return(msg, "ssss", ("fake", "goalkeeper-tests", "0", "1.2")))
    elif member == "CloseNotification":
        conn.send(new_method_return(msg))
    else:
        conn.send(new_error(msg, UNKNOWN))


def answer_watcher(conn: Any, msg: Any, member: str) -> None:
    if member == "Get":
        conn.send(new_method_return(msg, "v", (WATCHER_PROPS.get(msg.body[1], ("b", False)),)))
    elif member == "GetAll":
        conn.send(new_method_return(msg, "a{sv}", (WATCHER_PROPS,)))
    elif member in ("RegisterStatusNotifierItem", "RegisterStatusNotifierHost"):
        conn.send(new_method_return(msg))
    elif member == "Introspect":
        conn.send(new_method_return(msg, "s", ("<node/>",)))
    else:
        conn.send(new_error(msg, UNKNOWN))


def main() -> None:
    names = [NOTIFICATIONS] + ([WATCHER] if "--tray" in sys.argv else [])
    conn = open_dbus_connection(bus="SESSION")
    for name in names:
        assert conn.send_and_get_reply(message_bus.RequestName(name)).body == (1,), name
    emit({"ready": True, "names": names})
    counter = [0]
    while True:
        msg = conn.receive()
        if msg.header.message_type != MessageType.method_call:
            continue
        member = msg.header.fields.get(HeaderFields.member)
        if msg.header.fields.get(HeaderFields.interface) == NOTIFICATIONS:
            answer_notifications(conn, msg, member, counter)
        else:
            answer_watcher(conn, msg, member)


if __name__ == "__main__":
    main()
