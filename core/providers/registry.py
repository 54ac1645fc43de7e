"""Which providers a host runs, built from the settings.

Each provider package contributes one :class:`ProviderSpec` to :data:`SPECS`: a factory that
returns None when the provider is off (disabled by a setting, or nothing of it is installed on
this machine), and a sentence saying what it looks for and where — the first-run screen and
``goalkeeper doctor``-style messages show it even when the provider is off.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from core.clock import Clock
from core.i18n import _
from core.paths import Paths
from core.providers import codex
from core.providers.base import Provider
from core.providers.pipeline.spec import pipeline_factory, pipeline_looked_for
from core.settings import Settings

Factory = Callable[[Settings, Paths, Clock, Mapping[str, str]], Provider | None]
LookedFor = Callable[[Settings, Mapping[str, str]], str]


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    factory: Factory
    looked_for: LookedFor


def _demo(settings: Settings, paths: Paths, clock: Clock,
          environ: Mapping[str, str]) -> Provider | None:
    if not settings.demo_enabled:
        return None
    from core.providers.demo import DemoProvider

    return DemoProvider(clock)


def _demo_looked_for(settings: Settings, environ: Mapping[str, str]) -> str:
    return (_("the built-in demo: on") if settings.demo_enabled
            else _("the built-in demo: off (demo_enabled)"))


def _claude(settings: Settings, paths: Paths, clock: Clock,
            environ: Mapping[str, str]) -> Provider | None:
    from core.providers.claude import config

    if not settings.claude_enabled or not config.existing_dirs(settings.claude_config_dirs,
                                                               environ):
        return None
    from core.providers.claude.provider import ClaudeProvider

    return ClaudeProvider(settings, paths, clock, environ)


def _claude_looked_for(settings: Settings, environ: Mapping[str, str]) -> str:
    from core.providers.claude import config

    where = ", ".join(str(d) for d in config.candidate_dirs(settings.claude_config_dirs, environ))
    if not settings.claude_enabled:
        return _("Claude Code sessions in {dirs}: off (claude_enabled)").format(dirs=where)
    found = config.existing_dirs(settings.claude_config_dirs, environ)
    if found:
        return _("Claude Code sessions in {dirs}: on").format(dirs=where)
    return _("Claude Code sessions in {dirs}: off (none of them exists)").format(dirs=where)


SPECS: list[ProviderSpec] = [
    ProviderSpec("demo", _demo, _demo_looked_for),
    ProviderSpec("pipeline", pipeline_factory, pipeline_looked_for),
    ProviderSpec("codex", codex.factory, codex.looked_for),
    ProviderSpec("claude", _claude, _claude_looked_for),
]


def build_providers(settings: Settings, paths: Paths, clock: Clock,
                    environ: Mapping[str, str]) -> list[Provider]:
    providers = []
    for spec in SPECS:
        provider = spec.factory(settings, paths, clock, environ)
        if provider is not None:
            providers.append(provider)
    for provider in providers:
        provider.started_beside([other for other in providers if other is not provider])
    return providers


def looked_for(settings: Settings, environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(provider, what it looked for and where) for every known provider."""
    return [(spec.name, spec.looked_for(settings, environ)) for spec in SPECS]
