"""Desktop entries rendered from the shipped template with this installation's command."""

from __future__ import annotations

from collections.abc import Sequence

from core.integration.command import desktop_exec, desktop_string

#: marks a menu entry that ``goalkeeper desktop install`` wrote (``uninstall`` removes only these)
INSTALLED_MARK = "X-Goalkeeper-Installed=true"
#: marks the autostart entry (written since the first release of *start at login*)
AUTOSTART_MARK = "X-Goalkeeper-Autostart=true"


class TemplateError(ValueError):
    """The shipped desktop entry lacks a key this module rewrites."""


def render_entry(template: str, argv: Sequence[str], extra: Sequence[str] = ()) -> str:
    """``template`` with ``Exec`` running ``argv gui`` and ``TryExec`` naming ``argv[0]``;
    ``extra`` lines are appended to the ``[Desktop Entry]`` group (the template's only one)."""
    if not argv:
        raise ValueError("an entry needs a command")
    seen: set[str] = set()
    lines = []
    for line in template.splitlines():
        key = line.split("=", 1)[0].strip() if "=" in line else ""
        if key == "Exec":
            line = "Exec=" + desktop_exec([*argv, "gui"])
        elif key == "TryExec":
            line = "TryExec=" + desktop_string(argv[0])
        seen.add(key)
        lines.append(line)
    missing = {"Exec", "TryExec"} - seen
    if missing or not template.startswith("[Desktop Entry]"):
        raise TemplateError(f"the desktop entry template lacks {sorted(missing)} "
                            "or does not start with [Desktop Entry]")
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join([*lines, *extra]) + "\n"


def autostart_entry(template: str, argv: Sequence[str]) -> str:
    return render_entry(template, argv, ["X-GNOME-Autostart-enabled=true", AUTOSTART_MARK])


def menu_entry(template: str, argv: Sequence[str]) -> str:
    return render_entry(template, argv, [INSTALLED_MARK])
