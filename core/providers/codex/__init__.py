"""The Codex provider: quota from ``$CODEX_HOME`` session files, Codex goals, resume via Codex.

Modules: :mod:`.limits` / :mod:`.readings` (rate-limit shapes → readings), :mod:`.rollout` (line
parsing), :mod:`.tailscan` / :mod:`.follow` / :mod:`.startup` (reading the session files),
:mod:`.goals` / :mod:`.goals_db` / :mod:`.state` (goals), :mod:`.rpc` / :mod:`.fresh_read` /
:mod:`.hosted` / :mod:`.exec_run` / :mod:`.runner` / :mod:`.liveness` (talking to Codex),
:mod:`.history` (the usage chart's scan) and :mod:`.provider`. :func:`factory` and
:func:`looked_for` plug it into the registry.

Imports stay inside the functions: the history scan's worker processes import this package and
must start quickly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

#: the start index's file name in Goalkeeper's data directory (see :mod:`.startindex`)
INDEX_NAME = "codex-start-index.json"

if TYPE_CHECKING:
    from core.clock import Clock
    from core.paths import Paths
    from core.providers.base import Provider
    from core.settings import Settings


def factory(settings: Settings, paths: Paths, clock: Clock,
            environ: Mapping[str, str]) -> Provider | None:
    """The Codex provider when it is enabled and the Codex home exists, else None."""
    from core.providers.codex.config import codex_home, from_settings

    if not settings.codex_enabled or not codex_home(settings, environ).is_dir():
        return None
    from core.providers.codex.provider import CodexProvider

    return CodexProvider(from_settings(settings, environ), clock,
                         index_file=paths.data_dir / INDEX_NAME)


def looked_for(settings: Settings, environ: Mapping[str, str]) -> str:
    from core.i18n import _
    from core.providers.codex.config import codex_home

    home = codex_home(settings, environ)
    if not settings.codex_enabled:
        return _("Codex sessions in {dir}: off (codex_enabled)").format(dir=home)
    if home.is_dir():
        return _("Codex sessions in {dir}: found").format(dir=home)
    return _("Codex sessions in {dir}: not found").format(dir=home)
