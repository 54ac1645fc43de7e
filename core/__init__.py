"""Goalkeeper's Qt-free core: goals, quotas, the resume entry point, the scheduler, the store."""

__version__ = "0.1.0"
