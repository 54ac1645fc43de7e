"""Who a host is in a shared store: its host id, and the account each provider's quota belongs to.

A host id is ``host_id`` (``GOALKEEPER_HOST_ID``) or, by default, the machine's name — stable
across restarts, so the goals a host owns stay its own. An account is what a provider says it is
(Codex: ``account/read``), or what the user names (``codex_account``, ``claude_account``, else
``account``); a provider whose account nobody knows keeps its readings to this host
(``host:<id>``), so machines on different subscriptions never mix their windows. On a
one-machine store (SQLite) every reading is the machine's own: the account is empty.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote_plus, urlsplit

from core.i18n import N_

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")
SCHEMES = ("postgresql", "postgres")
_NOT_A_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def check_name(text: str) -> str:
    """A host id or account name: letters, digits, ``._@+-``; empty means "the default"."""
    text = text.strip()
    if text and not NAME.match(text):
        raise ValueError(N_("{name!r} is not a valid name: use letters, digits and . _ @ + - "
                            "(at most 128, starting with a letter or digit)").format(name=text))
    return text


def check_store_url(text: str) -> str:
    """Empty, or a ``postgresql://`` URL that carries no password."""
    text = text.strip()
    if not text:
        return text
    parts = urlsplit(text)
    if parts.scheme not in SCHEMES:
        raise ValueError(N_("{scheme!r} is not a store: use postgresql://USER@HOST/DATABASE (or "
                            "leave it empty for this machine's own file)").format(
                                scheme=text.split("://")[0]))
    if parts.password is not None or any(_secret_key(key) for key in parse_qs(parts.query)):
        raise ValueError(N_("a password does not belong in store_url: use `goalkeeper secret "
                            "set store-password`, ~/.pgpass or a libpq service file"))
    return text


#: the connection parameters whose value is a secret (libpq's ``password``, ``sslpassword``)
_SECRET_KEYS = frozenset({"password", "sslpassword"})


def _secret_key(key: str) -> bool:
    """Whether a query key names a secret, however it is spelled (``%70assword``,
    ``PASSWORD``): libpq percent-decodes a key before it looks it up."""
    return unquote_plus(key).strip().lower() in _SECRET_KEYS


def redacted_url(value: object) -> object:
    """A store URL as it may be shown: its password (if someone put one there) masked —
    in the user part and in every query parameter that decodes to a secret's name."""
    if not isinstance(value, str) or "://" not in value:
        return value
    value = re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", value)
    head, mark, query = value.partition("?")
    if not mark:
        return value
    fragment = ""
    if "#" in query:
        query, fragment = query.split("#", 1)
        fragment = "#" + fragment
    pairs = [f"{key}=***" if _secret_key(key) else f"{key}{eq}{val}"
             for key, eq, val in (part.partition("=") for part in query.split("&"))]
    return f"{head}?{'&'.join(pairs)}{fragment}"


def machine_name() -> str:
    """This machine's name, as a host id (what ``host_id`` defaults to)."""
    import socket  # (here: the settings load this module, and most commands need no name)

    name = _NOT_A_NAME.sub("-", socket.gethostname().split(".")[0]).strip("-._")
    return name[:64] or "host"


def host_id_of(configured: str, data_dir: Path | None = None) -> str:
    """``host_id``, else the machine's name — with a short mark of the data directory when it
    is not the default one (``GOALKEEPER_HOME``), so a second data directory on the same
    machine (a demo beside the daemon) is a host of its own, not one that takes over."""
    if configured:
        return configured
    name = machine_name()
    if data_dir is None or data_dir == _default_data_dir():
        return name
    return f"{name}-{hashlib.sha256(os.fsencode(data_dir)).hexdigest()[:6]}"


def _default_data_dir() -> Path:
    from core.paths import resolve_paths

    return resolve_paths({k: v for k, v in os.environ.items()
                          if k != "GOALKEEPER_HOME"}).data_dir


def local_account(host_id: str) -> str:
    """The account of a provider whose account is not known: this host's alone."""
    return f"host:{host_id}"


def detected_account(provider: str, identity: str) -> str:
    """The account key of what a provider said it is (hashed: the store never holds an
    email address or a user id in the clear)."""
    digest = hashlib.sha256(f"{provider}\0{identity}".encode()).hexdigest()[:16]
    return f"{provider}:{digest}"


def account_of(provider: str, settings: Any, host_id: str,
               known: Mapping[str, str] | None = None) -> str:
    """The account ``provider``'s windows belong to on a shared store — the one rule every
    host and command files readings by: what this host found (``known``: its registry row's
    accounts, which a start resolved — ``<provider>_account``, else what the provider said,
    else ``account``), else what the settings name, else this host's own (not shared)."""
    named = getattr(settings, f"{provider}_account", "") or getattr(settings, "account", "")
    return (known or {}).get(provider) or str(named or "") or local_account(host_id)
