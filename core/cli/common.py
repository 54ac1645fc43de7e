"""What every CLI command shares: exit codes, the context, output, and talking to the host."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.clock import Clock, SystemClock
from core.i18n import N_, _, localized
from core.paths import Paths, UnsafeDirectory, check_socket, resolve_paths
from core.settings import SettingsError, load_settings, read_settings

# The store, the host's lease and this machine's identity are loaded by the methods that use
# them: a command that only reads files (codex-usage) does without them (issue 24).
if TYPE_CHECKING:
    from core.health import HostHealth
    from core.hosts.lease import HostInfo
    from core.settings import Settings
    from core.store import Store
    from core.store.target import StoreTarget

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_UNKNOWN_GOAL = 3
EXIT_REFUSED = 4
EXIT_NO_HOST = 5
EXIT_NOT_RESPONDING = 6

NO_HOST_HINT = N_(
    "no Goalkeeper host is running for {dir}. Start one with `goalkeeper daemon` "
    "(headless) or `goalkeeper` (the desktop app), then try again."
)


class CliError(Exception):
    """Ends a command with a message on stderr and an exit code."""

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Context:
    args: argparse.Namespace
    paths: Paths
    _settings: Settings | None = None
    request_timeout: float = 120.0
    #: what the read-only commands ask the time of (a test hands a fixed one)
    clock: Clock = field(default_factory=SystemClock)

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            try:
                # a command that only reads them (``set_defaults(reads_settings_only=True)``)
                # takes them from the snapshot of their last validation, without pydantic
                self._settings = (read_settings(self.paths.config_file,
                                                self.paths.settings_snapshot)
                                  if getattr(self.args, "reads_settings_only", False)
                                  else load_settings(self.paths.config_file))
            except SettingsError as exc:
                raise CliError(str(exc), EXIT_USAGE) from None
        return self._settings

    @property
    def json(self) -> bool:
        return bool(getattr(self.args, "json", False))

    def emit(self, data: Any, human: Callable[[], str]) -> None:
        """Print ``data`` as JSON with ``--json``, else the human rendering."""
        if self.json:
            print(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            text = human()
            if text:
                print(text)

    @property
    def target(self) -> StoreTarget:
        """Which store: this machine's file, or the shared one (``store_url``)."""
        from core.store.target import StoreTarget

        return StoreTarget(self.paths.database, self.settings.store_url)

    @property
    def host_id(self) -> str:
        from core.identity import host_id_of

        return host_id_of(self.settings.host_id, self.paths.data_dir)

    @contextmanager
    def reader(self, plain_reads: bool = False) -> Iterator[Store | None]:
        """The store opened read-only, or None when there is no data yet.

        Read-only commands never create, convert, migrate, check or move the database: that
        is the host's (under its lease), so a command can never disturb a running host.
        ``plain_reads``: for a command that only shows goals and readings (no pydantic).
        """
        import sqlite3

        from core.store import NoData, StoreError
        from core.store.sqlite import describe_failure
        from core.store.target import open_reader

        try:
            store = open_reader(self.target, plain_reads)
        except NoData:
            yield None
            return
        except StoreError as exc:
            raise CliError(localized(str(exc))) from None
        try:
            yield store
        except sqlite3.DatabaseError as exc:
            raise CliError(localized(describe_failure(self.paths.database, exc))) from None
        except StoreError as exc:  # the shared store went away, or refused
            raise CliError(localized(str(exc))) from None
        finally:
            store.close()

    @contextmanager
    def store(self) -> Iterator[Store]:
        """The store opened for writing, for the few commands that write while no host runs
        (never checked or moved here: see :meth:`reader`)."""
        from core.store import StoreError
        from core.store.target import open_writer

        try:
            store = open_writer(self.target, SystemClock().now(), self.host_id)
        except StoreError as exc:
            raise CliError(localized(str(exc))) from None
        try:
            yield store
        except StoreError as exc:  # e.g. another host's goal: only its owner changes it
            raise CliError(localized(str(exc))) from None
        finally:
            store.close()

    @property
    def ping_timeout(self) -> float:
        return min(self.request_timeout, self.settings.host_ping_timeout_seconds)

    def host_view(self) -> HostView:
        """Whether a host runs (from the lease), answers (a ping), and how it is."""
        from core.hosts.lease import host_running

        info = host_running(self.paths)
        if info is None:
            return HostView("not_running")
        from core.health import HostHealth  # a host: worth loading
        from core.hosts.control import NoHostRunning, send_request

        try:
            reply = send_request(self._socket(info), {"op": "ping"}, timeout=self.ping_timeout)
        except TimeoutError:
            return HostView("not_responding", info)
        except (NoHostRunning, OSError, ValueError):
            return HostView("not_running", info)
        health = reply.get("health")
        return HostView("running", info,
                        HostHealth.from_json(health) if isinstance(health, dict) else None)

    def _socket(self, info: HostInfo | None) -> Path:
        """The host's control socket, checked before anything connects to it (exit 2 when it,
        or the shared runtime fallback holding it, is another user's, a link or writable by
        others)."""
        path = Path(info.socket) if info is not None and info.socket else self.paths.socket_path
        try:
            check_socket(self.paths, path)
        except UnsafeDirectory as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
        return path

    def ask_owner(self, owner: str, request: dict[str, Any]) -> dict[str, Any]:
        """Ask ``request`` of a goal's owner: this machine's host over its socket, another
        host through the shared store (:mod:`core.cli.remote`)."""
        if not self.target.shared or not owner or owner == self.host_id:
            return self.ask_host(request)
        from core.cli.remote import ask_owner
        from core.store import StoreError

        try:
            return ask_owner(self.target.url, self.host_id, owner, request,
                             self.settings.host_stale_seconds,
                             self.settings.runner_start_timeout_seconds)
        except StoreError as exc:
            raise CliError(localized(str(exc))) from None

    def ask_host(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send a request to the running host; exit 5 with a hint when there is none, exit 6
        when it does not answer a ping within :attr:`ping_timeout` (hung, stopped)."""
        from core.hosts.control import NoHostRunning, send_request
        from core.hosts.lease import host_running

        info = host_running(self.paths)
        socket_path = self._socket(info)
        host = info.describe() if info is not None else _("the host")
        self._ping(socket_path, host, info)
        try:
            reply = send_request(socket_path, {**request, "origin": "cli"},
                                 timeout=self.request_timeout)
        except TimeoutError:
            raise CliError(_("{host} did not answer within {seconds} s; see its log for what it "
                             "is doing").format(host=host, seconds=f"{self.request_timeout:g}")
                           ) from None
        except (NoHostRunning, OSError):
            raise CliError(_(NO_HOST_HINT).format(dir=self.paths.data_dir), EXIT_NO_HOST
                           ) from None
        except ValueError:
            raise CliError(_("the reply from {host} was cut off or unreadable; the request may "
                             "or may not have been carried out (see `goalkeeper history`)"
                             ).format(host=host)) from None
        if "error" in reply:
            raise CliError(_("the host refused the request: {error}").format(
                error=localized(str(reply["error"]))))
        return reply

    def _ping(self, socket_path: Path, host: str, info: HostInfo | None) -> None:
        from core.hosts.control import NoHostRunning, send_request

        try:
            send_request(socket_path, {"op": "ping"}, timeout=self.ping_timeout)
        except TimeoutError:
            raise CliError(not_responding_text(host, info, self.ping_timeout,
                                               SystemClock().now()),
                           EXIT_NOT_RESPONDING) from None
        except (NoHostRunning, OSError):
            raise CliError(_(NO_HOST_HINT).format(dir=self.paths.data_dir), EXIT_NO_HOST
                           ) from None
        except ValueError:
            raise CliError(_("the reply from {host} was cut off or unreadable; nothing was "
                             "sent to it").format(host=host)) from None


@dataclass(frozen=True)
class HostView:
    """What a command can tell about the host: ``running`` (with its health),
    ``not_running`` or ``not_responding``."""

    state: str
    info: HostInfo | None = None
    health: HostHealth | None = None


def not_responding_text(host: str, info: HostInfo | None, waited: float, now: datetime) -> str:
    return not_responding_head(host, info, waited, now) + " — " + _(
        "it may be hung or stopped (SIGSTOP). A new host replaces it once it has been silent for "
        "host_stale_seconds (see `goalkeeper daemon`).")


def not_responding_head(host: str, info: HostInfo | None, waited: float, now: datetime) -> str:
    """``host not responding: … did not answer within 2 s; its last heartbeat was 40 s ago``."""
    silent = info.silent_for(now) if info is not None else None
    since = (_("; its last heartbeat was {seconds} s ago").format(seconds=f"{silent:.0f}")
             if silent is not None else "")
    return _("host not responding: {host} did not answer within {waited} s{since}").format(
        host=host, waited=f"{waited:g}", since=since)


def make_context(args: argparse.Namespace, clock: Clock | None = None) -> Context:
    return Context(args, resolve_paths(os.environ), clock=clock or SystemClock())


def warn(message: str) -> None:
    print(f"goalkeeper: {message}", file=sys.stderr)  # i18n: ignore (the program's name)
