"""One blocking HTTP POST with a time-out, as a value in and a value out. Run it in a thread.

Standard library only (``urllib.request``): a notification is one small POST, and urllib
already brings what a user's machine may need — HTTPS with the system's certificates, and the
``https_proxy`` / ``no_proxy`` variables. Redirects are *not* followed: a signed webhook body must
not be re-sent to wherever a 3xx points, and a moved ntfy topic should be fixed in the settings.
Nothing here logs; errors come back as a :class:`Response` whose ``error`` never contains the URL
or a header (they may carry secrets).
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from core.i18n import N_

MAX_BODY_BYTES = 64 * 1024


class Transport(StrEnum):
    """Why no HTTP status came back."""

    TIMEOUT = "timeout"
    REFUSED = "refused"  # connection refused or reset
    DNS = "dns"
    TLS = "tls"
    OTHER = "other"


@dataclass(frozen=True)
class Request:
    url: str
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    """An HTTP status with its (lower-case) headers, or a transport failure."""

    status: int | None
    headers: Mapping[str, str] = field(default_factory=dict)
    transport: Transport | None = None
    error: str = ""


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # the 3xx comes back as an HTTPError: a status like any other


def post(request: Request, timeout: float) -> Response:
    """POST ``request``; every failure is a :class:`Response`, never an exception."""
    opener = urllib.request.build_opener(_NoRedirects)  # per call: reads *_proxy afresh
    outgoing = urllib.request.Request(request.url, data=request.body,
                                      headers=dict(request.headers), method="POST")
    try:
        with opener.open(outgoing, timeout=timeout) as reply:
            reply.read(MAX_BODY_BYTES)
            return Response(reply.status, _lower(reply.headers))
    except urllib.error.HTTPError as exc:
        with exc:
            _drain(exc)
            return Response(exc.code, _lower(exc.headers))
    except urllib.error.URLError as exc:
        return _transport(exc.reason)
    except (OSError, http.client.HTTPException) as exc:
        return _transport(exc)


def _drain(exc: urllib.error.HTTPError) -> None:
    with contextlib.suppress(OSError, http.client.HTTPException):
        exc.read(MAX_BODY_BYTES)


def _lower(headers: object) -> dict[str, str]:
    items = getattr(headers, "items", None)
    return {str(k).lower(): str(v) for k, v in items()} if items else {}


def _transport(reason: object) -> Response:
    if isinstance(reason, TimeoutError):
        return Response(None, transport=Transport.TIMEOUT, error=N_("timed out"))
    if isinstance(reason, socket.gaierror):
        return Response(None, transport=Transport.DNS, error=N_("the host name does not resolve"))
    if isinstance(reason, ssl.SSLError):
        return Response(None, transport=Transport.TLS,
                        error=f"TLS failed ({getattr(reason, 'reason', None) or 'handshake'})")
    if isinstance(reason, ConnectionRefusedError):
        return Response(None, transport=Transport.REFUSED, error=N_("connection refused"))
    if isinstance(reason, ConnectionError):
        return Response(None, transport=Transport.REFUSED, error=N_("connection reset"))
    if isinstance(reason, http.client.HTTPException):
        return Response(None, transport=Transport.OTHER,
                        error=f"bad HTTP answer ({type(reason).__name__})")
    return Response(None, transport=Transport.OTHER, error=type(reason).__name__)
