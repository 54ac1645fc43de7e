"""Secrets in a goal file's ``env``: moved into the keyring when the file is added.

A step's ``env = { OPENAI_API_KEY = "sk-…" }`` would otherwise be copied with the goal file into
the data directory (``pipelines/<name>/goal.toml``) and from there reach logs and runs. When the
file is added, every ``env`` value whose *name* reads like a secret (key, token, secret,
password, credential; ``*_PWD``, ``*_AUTH``, ``*_COOKIE``; never a place such as ``*_DIR`` or
``*_FILE``: :func:`core.redact.secret_name`) is stored in the OS keyring and the snapshot keeps
only a reference, ``"keyring:<NAME>"`` — which a user may also write directly. A run resolves the
reference like the step's ``secrets`` (and masks the value in everything it writes). Without a
usable keyring the file is not added: the message says how to proceed.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Protocol

from core.i18n import N_
from core.providers.pipeline.goalfile import GoalFile, GoalFileError, StepSpec
from core.redact import secret_name

REF_PREFIX = "keyring:"


class KeyringWriter(Protocol):
    def put(self, name: str, value: str) -> None: ...


def reference(value: str) -> str | None:
    """The keyring name an ``env`` value refers to, or None for a plain value."""
    return value[len(REF_PREFIX):] if value.startswith(REF_PREFIX) else None


def plain_secrets(goal: GoalFile) -> list[tuple[StepSpec, str, str]]:
    """(step, variable, value) for each secret-looking ``env`` value not yet a reference."""
    steps: list[StepSpec] = [*goal.source, *goal.stage]
    return [(spec, name, value) for spec in steps for name, value in spec.env.items()
            if secret_name(name) and reference(value) is None and value]


def keyring_name(goal: GoalFile, spec: StepSpec, variable: str) -> str:
    raw = f"{goal.name}_{spec.name}_{variable}"
    name = re.sub(r"[^A-Za-z0-9_]", "_", raw)
    return ("_" + name if name[0].isdigit() else name)[:128]


def move_to_keyring(goal: GoalFile, text: str, path: Path, keyring: KeyringWriter) -> str:
    """Store the plain secret ``env`` values in ``keyring``; the goal file's text with a
    reference in place of each (checked by parsing it again)."""
    found = plain_secrets(goal)
    if not found:
        return text
    refs: dict[tuple[str, str], str] = {}
    names: dict[str, str] = {}  # value → its keyring entry (one for a value used twice)
    for spec, variable, value in found:
        if value not in names:
            names[value] = keyring_name(goal, spec, variable)
            text = _replace_literal(text, value, f"{REF_PREFIX}{names[value]}", path, variable)
        refs[(spec.name, variable)] = names[value]
    _check(text, refs, path)
    for value, name in names.items():
        keyring.put(name, value)
    return text


def _replace_literal(text: str, value: str, ref: str, path: Path, variable: str) -> str:
    for literal in (json.dumps(value, ensure_ascii=False), json.dumps(value), f"'{value}'"):
        if literal in text:
            return text.replace(literal, json.dumps(ref))
    raise GoalFileError(path, [N_(
        "{file}: env.{name}: this looks like a secret, and it could not be moved to the keyring "
        "automatically (write it on one line as a plain string); or store it yourself with "
        "`goalkeeper secret set NAME` and write \"{ref}\"").format(
            file=path, name=variable, ref=f"{REF_PREFIX}NAME")])


def _check(text: str, refs: dict[tuple[str, str], str], path: Path) -> None:
    data = tomllib.loads(text)
    for table in ("source", "stage"):
        for step in data.get(table, []):
            for variable, value in (step.get("env") or {}).items():
                want = refs.get((step.get("name"), variable))
                if want is not None and value != f"{REF_PREFIX}{want}":
                    raise GoalFileError(path, [N_(
                        "{file}: env.{name}: the same value is used for different things; "
                        "store it with `goalkeeper secret set NAME` and write \"{ref}\"").format(
                            file=path, name=variable, ref=f"{REF_PREFIX}NAME")])
