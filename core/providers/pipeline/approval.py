"""Which goal files the user approved: a digest of each, kept in the store.

A goal file runs commands, so only a file the user saw and accepted may run: ``goalkeeper add``
(and ``goalkeeper approve``) show the commands the goal will run, ask, and record the SHA-256 of
the snapshot they validated in the store's ``meta`` table under :func:`approval_key` — the table
both stores already have, so no schema step is needed (``store migrate`` copies these keys), and
the record lives outside ``<data dir>/pipelines/``: a goal file that arrives there another way
(a restored backup, a synced folder, another program) or whose text changed since has no
matching record. Such a goal is
shown as needing approval (:func:`approval_text`, a health problem in ``status`` and the window)
and runs nothing — no schedule, no start, no resume — until it is approved.

The key names the host, so that on a shared store one machine's approval does not approve the
same name on another.
"""

from __future__ import annotations

import hashlib
import shlex

from core.i18n import N_
from core.providers.pipeline.goalfile import GoalFile
from core.store.base import APPROVALS_META_PREFIX as APPROVAL_PREFIX


def approval_key(host_id: str, name: str) -> str:
    return f"{APPROVAL_PREFIX}{host_id}:{name}"


def digest_text(text: str) -> str:
    """The digest of a snapshot's text, as the catalog stores it (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def approve_command(name: str) -> str:
    return f"goalkeeper approve {name}"


def approval_text(name: str) -> str:
    """The health problem of a goal file that was not approved (stored English)."""
    return N_("pipeline goal {name} needs your approval: its goal file was not added with "
              "`goalkeeper add`, or changed since; it runs nothing until `{command}`").format(
                  name=name, command=approve_command(name))


def commands_preview(goal: GoalFile) -> list[str]:
    """One line per step: what it runs, in order (sources, then stages)."""
    lines = [f"source {step.name}: {shlex.join(step.command)}" for step in goal.source]
    lines += [f"stage {step.name}: {shlex.join(step.command)}" for step in goal.stage]
    return lines
