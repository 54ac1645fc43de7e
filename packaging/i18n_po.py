"""The gettext half of ``packaging/i18n.py``: extraction from Python, ``.po`` files, ``.mo`` files.

Pure Python (no GNU gettext tools needed): the extractor reads the AST of every core module
(and of the running Python's ``argparse``, whose messages the CLI shows), the ``.po`` reader
and writer keep what translators wrote, and the compiler writes the standard ``.mo`` format
that :mod:`gettext` reads.
"""

from __future__ import annotations

import ast
import re
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

#: the marking functions: name → (index of the msgid, index of the plural or None)
MARKERS = {"_": (0, None), "N_": (0, None), "ngettext": (0, 1)}
TRANSLATOR_COMMENT = re.compile(r"#\s*(translators?:.*)$", re.IGNORECASE)
HEADER = (
    "Project-Id-Version: goalkeeper\n"
    "MIME-Version: 1.0\n"
    "Content-Type: text/plain; charset=UTF-8\n"
    "Content-Transfer-Encoding: 8bit\n"
    "Language: {language}\n"
    "Plural-Forms: {plural}\n"
)
PLURAL_FORMS = {"zh_CN": "nplurals=1; plural=0;"}
#: the flag of a message some code marks with ``N_``: stored English, translated when shown, so
#: its fields make a template that :func:`core.i18n.localized` matches stored text against
STORED = "stored"
#: the compiled catalogue lists the stored templates under this key (``pgettext`` style), one
#: per record separator — :mod:`core.i18n.catalogue` reads it back
TEMPLATES_KEY = "goalkeeper\x04templates"
TEMPLATE_SEPARATOR = "\x1e"


@dataclass
class Message:
    """One extracted message and where it was found."""

    msgid: str
    plural: str | None = None
    refs: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    stored: bool = False


@dataclass
class Entry:
    """One ``.po`` entry."""

    msgid: str
    plural: str | None = None
    msgstr: list[str] = field(default_factory=lambda: [""])
    refs: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    obsolete: bool = False

    @property
    def translated(self) -> bool:
        return all(self.msgstr) and "fuzzy" not in self.flags


# -- extraction --------------------------------------------------------------------------------


@dataclass
class Problem:
    """A marking the catalogue cannot hold (say, ``_()`` of an f-string)."""

    where: str
    what: str


def extract_file(path: Path, ref: str, problems: list[Problem] | None = None) -> list[Message]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found: list[Message] = []
    for node in ast.walk(ast.parse(source, str(path))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in MARKERS):
            continue
        index, plural_index = MARKERS[node.func.id]
        args = node.args
        texts = [_literal(args[i]) if i < len(args) else None
                 for i in (index, plural_index) if i is not None]
        if not texts or texts[0] is None or (plural_index is not None and len(texts) < 2):
            if problems is not None and args and isinstance(args[index], ast.JoinedStr):
                problems.append(Problem(f"{ref}:{node.lineno}",
                                        f"{node.func.id}() of an f-string cannot be translated; "
                                        "use a literal with {fields} and .format()"))
            continue
        plural = texts[1] if plural_index is not None else None
        found.append(Message(texts[0], plural, [ref], _comments(lines, node.lineno),
                             node.func.id == "N_"))
    return found


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _comments(lines: list[str], lineno: int) -> list[str]:
    """A ``# translators: …`` comment on the line of the call or the one above it."""
    out = []
    for number in (lineno - 1, lineno):
        if 0 < number <= len(lines):
            match = TRANSLATOR_COMMENT.search(lines[number - 1])
            if match:
                out.append(match.group(1).strip())
    return out


def merge_messages(groups: Iterable[list[Message]]) -> list[Message]:
    """One message per msgid, in order of first appearance, with every file that uses it."""
    merged: dict[str, Message] = {}
    for messages in groups:
        for message in messages:
            known = merged.get(message.msgid)
            if known is None:
                merged[message.msgid] = Message(message.msgid, message.plural,
                                                list(message.refs), list(message.comments),
                                                message.stored)
                continue
            known.stored = known.stored or message.stored
            known.plural = known.plural or message.plural
            known.refs += [r for r in message.refs if r not in known.refs]
            known.comments += [c for c in message.comments if c not in known.comments]
    return list(merged.values())


# -- .po files ---------------------------------------------------------------------------------


def _unquote(text: str) -> str:
    value: str = ast.literal_eval(text)
    return value


def parse_po(text: str) -> tuple[str, list[Entry]]:
    """(the header's msgstr, the other entries) of a ``.po`` file."""
    entries: list[Entry] = []
    current = Entry("")
    key: str | None = None
    started = False

    def finish() -> None:
        nonlocal current, key, started
        if started:
            entries.append(current)
        current, key, started = Entry(""), None, False

    for raw in text.splitlines():
        line = raw.strip()
        obsolete = line.startswith("#~")
        if obsolete:
            line = line[2:].strip()
        if not line or (line.startswith("#") and started and key is not None):
            finish()
        if not line:
            continue
        if line.startswith("#"):
            _po_comment(current, line)
            continue
        current.obsolete = current.obsolete or obsolete
        key = _po_line(current, line, key)
        started = True
    finish()
    header = next((e.msgstr[0] for e in entries if e.msgid == "" and not e.obsolete), "")
    return header, [e for e in entries if e.msgid != ""]


def _po_comment(entry: Entry, line: str) -> None:
    if line.startswith("#:"):
        entry.refs += line[2:].split()
    elif line.startswith("#."):
        entry.comments.append(line[2:].strip())
    elif line.startswith("#,"):
        entry.flags |= {f.strip() for f in line[2:].split(",") if f.strip()}


def _po_line(entry: Entry, line: str, key: str | None) -> str | None:
    if line.startswith('"'):
        value = _unquote(line)
        if key == "msgid":
            entry.msgid += value
        elif key == "msgid_plural":
            entry.plural = (entry.plural or "") + value
        elif key is not None and key.startswith("msgstr"):
            entry.msgstr[_index(key)] += value
        return key
    word, _, rest = line.partition(" ")
    value = _unquote(rest.strip())
    if word == "msgid":
        entry.msgid = value
    elif word == "msgid_plural":
        entry.plural = value
    elif word.startswith("msgstr"):
        index = _index(word)
        while len(entry.msgstr) <= index:
            entry.msgstr.append("")
        entry.msgstr[index] = value
    return word


def _index(key: str) -> int:
    match = re.search(r"\[(\d+)\]", key)
    return int(match.group(1)) if match else 0


def _quote(text: str) -> str:
    escaped = (text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
               .replace("\n", "\\n"))
    return f'"{escaped}"'


def _field(word: str, text: str, prefix: str = "") -> list[str]:
    if "\n" not in text.rstrip("\n") and len(text) < 70:
        return [f"{prefix}{word} {_quote(text)}"]
    pieces = re.findall(r"[^\n]*\n|[^\n]+$", text) or [""]
    return [f'{prefix}{word} ""'] + [f"{prefix}{_quote(p)}" for p in pieces]


def write_po(header: str, entries: Iterable[Entry]) -> str:
    out = ['msgid ""', *_field("msgstr", header), ""]
    for entry in entries:
        prefix = "#~ " if entry.obsolete else ""
        out += [f"#. {c}" for c in entry.comments]
        if entry.refs and not entry.obsolete:
            out.append("#: " + " ".join(entry.refs))
        if entry.flags:
            out.append("#, " + ", ".join(sorted(entry.flags)))
        out += _field("msgid", entry.msgid, prefix)
        if entry.plural is not None:
            out += _field("msgid_plural", entry.plural, prefix)
            for i, text in enumerate(entry.msgstr):
                out += _field(f"msgstr[{i}]", text, prefix)
        else:
            out += _field("msgstr", entry.msgstr[0], prefix)
        out.append("")
    return "\n".join(out)


def update_entries(messages: list[Message], old: list[Entry], nplurals: int) -> list[Entry]:
    """The catalogue for ``messages``, keeping the translations of ``old``; entries whose
    message is gone are kept at the end as obsolete (a translator may want them back)."""
    known = {e.msgid: e for e in old}
    entries = []
    for message in messages:
        previous = known.pop(message.msgid, None)
        forms = nplurals if message.plural is not None else 1
        msgstr = (list(previous.msgstr) if previous else []) + [""] * forms
        msgstr = msgstr[:forms]
        flags = (set(previous.flags) if previous else set()) - {STORED}
        if message.stored:
            flags.add(STORED)
        entries.append(Entry(message.msgid, message.plural, msgstr, message.refs,
                             message.comments, flags))
    entries += [Entry(e.msgid, e.plural, e.msgstr, [], e.comments, e.flags, True)
                for e in known.values() if any(e.msgstr)]
    return entries


# -- .mo files ---------------------------------------------------------------------------------


def compile_mo(header: str, entries: Iterable[Entry]) -> bytes:
    """The ``.mo`` of the translated, non-obsolete entries (untranslated ones fall back to the
    English text at run time, one string at a time)."""
    pairs: dict[bytes, bytes] = {b"": header.encode()}
    templates = []
    for entry in entries:
        if entry.obsolete or not entry.translated:
            continue
        key = entry.msgid if entry.plural is None else f"{entry.msgid}\0{entry.plural}"
        pairs[key.encode()] = "\0".join(entry.msgstr).encode()
        if STORED in entry.flags and entry.plural is None and "{" in entry.msgid:
            templates.append(entry.msgid)
    if templates:
        pairs[TEMPLATES_KEY.encode()] = TEMPLATE_SEPARATOR.join(templates).encode()
    keys = sorted(pairs)
    ids = b"".join(k + b"\0" for k in keys)
    strs = b"".join(pairs[k] + b"\0" for k in keys)
    start = 7 * 4 + 16 * len(keys)
    id_table, str_table, offset = [], [], 0
    for k in keys:
        id_table += [len(k), start + offset]
        offset += len(k) + 1
    offset = 0
    for k in keys:
        str_table += [len(pairs[k]), start + len(ids) + offset]
        offset += len(pairs[k]) + 1
    head = struct.pack("<7I", 0x950412DE, 0, len(keys), 7 * 4, 7 * 4 + 8 * len(keys), 0, 0)
    tables = struct.pack(f"<{len(id_table)}I", *id_table) + struct.pack(
        f"<{len(str_table)}I", *str_table)
    return head + tables + ids + strs
