"""``goalkeeper setup``: the set-up assistant in a terminal (``core/setup/assistant.py``).

It shows what was found, then asks each choice as a yes/no question whose default is no.
``--yes`` asks nothing and takes the defaults (every choice no: auto-resume stays off) plus the
choices given as options; ``--json`` without ``--yes`` only reports what was found.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from core.cli.common import EXIT_ERROR, EXIT_OK, Context
from core.clock import SystemClock
from core.i18n import _, localized
from core.setup.assistant import CHOICES, Applied, Choices, Findings, apply, default_context, find

#: the options that say yes on the command line, by choice
_FLAGS = {"codex_auto_resume": "--codex-auto-resume", "claude_auto_resume": "--claude-auto-resume",
          "claude_hooks": "--claude-hooks", "start_at_login": "--start-at-login",
          "service": "--service"}


def register(sub: argparse._SubParsersAction[Any], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("setup", parents=[common],
                       help=_("what Goalkeeper found here, and the choices that put it to work"))
    p.add_argument("--yes", "-y", action="store_true",
                   help=_("ask nothing: take the defaults shown (every choice no, so "
                          "auto-resume stays off) and the choices given as options"))
    for key, title, _does in CHOICES:
        if key in _FLAGS:
            # i18n: ignore (the msgid is the assistant's own literal)
            p.add_argument(_FLAGS[key], action="store_true", help=_("yes to: {choice}").format(
                choice=localized(title)))
    p.add_argument("--ntfy", metavar="URL", default="",
                   help=_("yes to notifications on the phone, through this ntfy topic URL"))
    p.set_defaults(func=cmd_setup)


def cmd_setup(ctx: Context) -> int:
    context = default_context(ctx.paths, os.environ, SystemClock().now, sys.argv[0],
                              sys.executable)
    found = find(ctx.settings, context)
    given = Choices(**{key: bool(getattr(ctx.args, key)) for key in _FLAGS},
                    ntfy_url=ctx.args.ntfy.strip())
    if ctx.json and not ctx.args.yes:
        ctx.emit({"found": found.to_json(), "chosen": given.to_json(), "applied": None},
                 lambda: "")
        return EXIT_OK
    if ctx.args.yes:
        choices = given
    else:
        print(found_text(found))
        choices = _ask(found, given)
    applied = apply(choices, context)
    ctx.emit({"found": found.to_json(), "chosen": choices.to_json(),
              "applied": [{"choice": a.key, "ok": a.ok, "text": localized(a.text)}
                          for a in applied]},
             lambda: applied_text(applied))
    return EXIT_OK if all(a.ok for a in applied) else EXIT_ERROR


def found_text(found: Findings) -> str:
    lines = [_("Goalkeeper looked here:")]
    lines += [f"  {name}: {localized(text)}" for name, text in found.looked_for]
    if found.codex_found:
        lines.append(_("Codex goals found: {n}").format(n=found.codex_goals))
    if found.claude_found:
        lines.append(_("Claude Code sessions found: {n}").format(n=found.claude_sessions))
    for name, how in found.quotas:
        lines.append(_("{provider} quota: {how}").format(provider=name, how=localized(how)))
    return "\n".join(lines)


def _ask(found: Findings, given: Choices) -> Choices:
    """Each choice not already on and not given as an option, as a question (default no)."""
    answers: dict[str, Any] = {key: getattr(given, key) for key in _FLAGS}
    ntfy = given.ntfy_url
    for key, title, does in CHOICES:
        if found.already.get(key):
            print(_("✓ {choice}: already on").format(choice=localized(title)))
            continue
        if (key == "ntfy" and ntfy) or answers.get(key):
            continue
        print(f"\n{localized(title)}\n  {localized(does)}")
        if key == "ntfy":
            ntfy = _input(_("ntfy topic URL (empty: no): ")).strip()
        else:
            answers[key] = _input(_("{choice}? [y/N] ").format(
                choice=localized(title))).strip().lower() in {"y", "yes", _("y"), _("yes")}
    return Choices(**answers, ntfy_url=ntfy)


def _input(prompt: str) -> str:
    try:
        return input(prompt)
    except EOFError:
        return ""


def applied_text(applied: list[Applied]) -> str:
    if not applied:
        return _("Nothing changed. Run `goalkeeper setup` again any time.")
    return "\n".join(("✓ " if a.ok else "✗ ") + localized(a.text) for a in applied)
