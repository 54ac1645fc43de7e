"""The Claude Code provider (see :mod:`core.providers.claude.provider`).

Kept free of imports: scan workers and hook commands import single modules of this package and
must start fast.
"""
