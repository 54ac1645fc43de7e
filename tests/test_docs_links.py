"""The README is the front door and the user guide its reference: every relative link in them
(and in docs/) resolves — the file inside the repository, the #anchor to a heading — and the
README stays short, with the set-up commands and the agents section near its top."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", ROOT / "README.zh-CN.md", *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)\)")
COMMAND_1 = ("python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/goalkeeper demo")
COMMAND_2 = ("python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && "
             ".venv/bin/python -m pytest")


def _prose(text: str) -> list[str]:
    """The lines outside fenced code blocks (a ``# comment`` there is no heading)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        lines.append("" if fenced else line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in _prose(path.read_text(encoding="utf-8")):
        match = re.match(r"#{1,6} (.+)", line)
        if not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[str]:
    return [m.group(1) for line in _prose(path.read_text(encoding="utf-8"))
            for m in LINK.finditer(line)]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_inside_the_repository(doc: Path) -> None:
    broken = []
    for target in links(doc):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto: — not ours to check offline
        file, _, anchor = target.partition("#")
        where = (doc.parent / file).resolve() if file else doc
        if ROOT not in where.parents and where != ROOT:
            broken.append(f"{target}: outside the repository")
        elif not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_slugs_are_githubs() -> None:
    assert slug("Notifications when you are away") == "notifications-when-you-are-away"
    assert slug("Runs: states, breakpoint resume, degraded delivery") == (
        "runs-states-breakpoint-resume-degraded-delivery")
    assert slug("多台机器（共享存储）") == "多台机器共享存储"


def test_the_readme_is_a_front_door() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 400
    top = "\n".join(lines[:60])
    assert COMMAND_1 in top and COMMAND_2 in top
    assert "## Use it with your agents" in lines[:150]
    agents = "\n".join(lines[lines.index("## Use it with your agents"):])
    for must in ("Auto-resume is off until you turn it on", "goalkeeper auto-resume",
                 "hooks install claude", "--autostart", "service install"):
        assert must in agents, must
    assert "docs/user-guide.md" in agents


def test_the_user_guide_has_a_contents_list_of_every_part() -> None:
    guide = (ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8")
    contents = guide[guide.index("## Contents"):].split("\n## ", 2)[0]
    for part in ("Install", "Concepts", "Providers", "Policies", "Notifications",
                 "Several machines", "CLI reference", "Troubleshooting", "FAQ"):
        assert f"**{part}**" in contents, part


def test_the_service_units_documentation_is_a_heading_of_the_user_guide() -> None:
    from core.integration.systemd import DOCS as UNIT_DOCS

    path, _, anchor = UNIT_DOCS.split("/blob/main/", 1)[1].partition("#")
    assert anchor in anchors(ROOT / path)
