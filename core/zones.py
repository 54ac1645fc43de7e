"""The local time zone as a real IANA zone (with its DST rules), for schedules and quotas.

``datetime.now().astimezone().tzinfo`` is only today's fixed offset: a daily 09:00 computed with
it in winter would be an hour off in summer. So: ``$TZ``, then ``/etc/localtime``'s link target
or contents, and only then the fixed offset.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_LOCALTIME = "/etc/localtime"


def zone_named(name: str) -> ZoneInfo | None:
    """The IANA zone called ``name``, or None when there is no such zone."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def local_zone(environ: Mapping[str, str] | None = None) -> tzinfo:
    environ = os.environ if environ is None else environ
    name = environ.get("TZ", "").lstrip(":").strip()
    if name and (zone := zone_named(name)) is not None:
        return zone
    try:
        target = os.readlink(_LOCALTIME)
        marker = target.find("zoneinfo/")
        if marker >= 0:
            return ZoneInfo(target[marker + len("zoneinfo/"):])
    except (OSError, ZoneInfoNotFoundError, ValueError):
        pass
    try:
        with open(_LOCALTIME, "rb") as handle:
            return ZoneInfo.from_file(handle, key="localtime")
    except (OSError, ValueError):
        pass
    return datetime.now().astimezone().tzinfo or UTC
