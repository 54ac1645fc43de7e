"""Which providers a host runs, built from the settings.

Each provider package contributes one factory here; a factory returns None when its provider is
off (disabled by a setting, or nothing of it is installed on this machine).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from core.clock import Clock
from core.paths import Paths
from core.providers.base import Provider
from core.settings import Settings

Factory = Callable[[Settings, Paths, Clock, Mapping[str, str]], Provider | None]


def _demo(settings: Settings, paths: Paths, clock: Clock,
          environ: Mapping[str, str]) -> Provider | None:
    if not settings.demo_enabled:
        return None
    from core.providers.demo import DemoProvider

    return DemoProvider(clock)


FACTORIES: list[Factory] = [_demo]


def build_providers(settings: Settings, paths: Paths, clock: Clock,
                    environ: Mapping[str, str]) -> list[Provider]:
    providers = []
    for factory in FACTORIES:
        provider = factory(settings, paths, clock, environ)
        if provider is not None:
            providers.append(provider)
    return providers
