"""Providers: one sub-package per source of goals and quotas (see :mod:`core.providers.base`)."""
