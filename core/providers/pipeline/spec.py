"""How the host builds the pipeline provider (the line in :data:`core.providers.registry.SPECS`)."""

from __future__ import annotations

from collections.abc import Mapping

from core.clock import Clock
from core.i18n import _
from core.paths import Paths
from core.providers.base import Provider
from core.settings import Settings


def pipeline_factory(settings: Settings, paths: Paths, clock: Clock,
                     environ: Mapping[str, str]) -> Provider | None:
    if not settings.pipeline_enabled:
        return None
    from core.providers.pipeline.provider import PipelineProvider

    return PipelineProvider(settings, paths, clock, environ)


def pipeline_looked_for(settings: Settings, environ: Mapping[str, str]) -> str:
    if settings.pipeline_enabled:
        return _("goal files added with `goalkeeper add FILE` (pipelines in the data "
                 "directory): on")
    return _("goal files added with `goalkeeper add FILE` (pipelines in the data directory): "
             "off (pipeline_enabled)")
