"""Finds user-visible English that is not marked for translation (``packaging/i18n.py check``).

Extraction only sees what is marked; this catches what a later change forgot to mark, by rule:

* GUI (``gui/``): a string literal or f-string with words in it, passed to a Qt text call
  (``setText``, ``setToolTip``, ``QLabel(…)``, ``addItem``, ``showMessage``, a signal's
  ``emit`` …) and not wrapped in ``tr()`` / ``QT_TR_NOOP()``;
* CLI (``core/cli/``): the same for ``CliError(…)``, ``warn(…)``, ``print(…)``, ``help=`` /
  ``description=``, and the human rendering handed to ``ctx.emit``;
* everywhere: ``tr()`` / ``_()`` / ``N_()`` of an f-string (the catalogue cannot hold it), and a
  table (dict, list, tuple) where some texts are marked and others are not.

A line that really shows no prose (an object name, a command) says so with ``# i18n: ignore``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

WORDS = re.compile(r"[A-Za-z]{2,}")
MARKUP = re.compile(r"<[^<>]*>|&[a-z]+;")
IGNORE = "# i18n: ignore"
QT_MARKS = {"tr", "QT_TR_NOOP", "QT_TRANSLATE_NOOP"}
GETTEXT_MARKS = {"_", "N_", "ngettext", "localized"}
QT_TEXT_CALLS = {
    "setText", "setToolTip", "setStatusTip", "setWindowTitle", "setPlaceholderText",
    "setAccessibleName", "setAccessibleDescription", "setInformativeText", "setDetailedText",
    "addItem", "addTab", "setTabText", "addAction", "addMenu", "showMessage", "setItemText",
    "QLabel", "QPushButton", "QCheckBox", "QRadioButton", "QGroupBox", "QAction", "QToolBar",
    "QMessageBox", "QFileDialog", "emit", "show_message", "hint", "Toast", "setTitle",
}
#: calls whose other arguments are data (an item's value, an index): only these are text
TEXT_ARGS = {"addItem": (0,), "setItemText": (1,), "addTab": (1,), "setTabText": (1,)}
CLI_TEXT_CALLS = {"CliError", "warn", "print"}
#: a table entry is prose (not an identifier such as "resume") when it has two words
SENTENCE = re.compile(r"[A-Za-z]+[^A-Za-z{}]+[A-Za-z]+")
CLI_TEXT_KEYWORDS = {"help", "description"}


@dataclass(frozen=True)
class Finding:
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _prose(node: ast.expr) -> bool:
    """A literal (or f-string) whose fixed text has words in it."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(WORDS.search(MARKUP.sub(" ", node.value)))
    if isinstance(node, ast.JoinedStr):
        fixed = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str)
                        else " " for v in node.values)
        return bool(WORDS.search(MARKUP.sub(" ", fixed)))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _prose(node.left) or _prose(node.right)
    if isinstance(node, ast.IfExp):
        return _prose(node.body) or _prose(node.orelse)
    return False


def _sentence(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(
        SENTENCE.search(MARKUP.sub(" ", node.value)))


def _is_mark(node: ast.expr, marks: set[str]) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) in marks


class _Visitor(ast.NodeVisitor):
    def __init__(self, ref: str, lines: list[str], gui: bool, cli: bool) -> None:
        self.ref, self.lines, self.gui, self.cli = ref, lines, gui, cli
        self.marks = QT_MARKS | {"_"} if gui else GETTEXT_MARKS
        self.found: list[Finding] = []

    def _flag(self, node: ast.AST, what: str) -> None:
        line = self.lines[node.lineno - 1] if 0 < node.lineno <= len(self.lines) else ""
        end = getattr(node, "end_lineno", node.lineno) or node.lineno
        tail = self.lines[end - 1] if 0 < end <= len(self.lines) else ""
        if IGNORE not in line and IGNORE not in tail:
            self.found.append(Finding(f"{self.ref}:{node.lineno}", what))

    def visit_Call(self, node: ast.Call) -> None:
        name = _name(node.func)
        if name in QT_MARKS | GETTEXT_MARKS and node.args and isinstance(node.args[0],
                                                                          ast.JoinedStr):
            self._flag(node, f"{name}() of an f-string cannot be extracted; use a literal "
                             "with {fields} and .format()")
        calls = QT_TEXT_CALLS if self.gui else CLI_TEXT_CALLS if self.cli else set()
        if name in calls:
            positions = TEXT_ARGS.get(name, range(len(node.args)))
            for arg in (node.args[i] for i in positions if i < len(node.args)):
                if _prose(arg):
                    self._flag(arg, f"unmarked text in {name}(): wrap it in "
                                    f"{'tr' if self.gui else '_'}()")
        if self.cli:
            self._cli_keywords(node, name)
        self.generic_visit(node)

    def _cli_keywords(self, node: ast.Call, name: str) -> None:
        for keyword in node.keywords:
            if keyword.arg in CLI_TEXT_KEYWORDS and _prose(keyword.value):
                self._flag(keyword.value, f"unmarked {keyword.arg}= text: wrap it in _()")
        if name == "emit" and len(node.args) >= 2 and isinstance(node.args[1], ast.Lambda):
            body = node.args[1].body
            if _prose(body):
                self._flag(body, "unmarked human output in ctx.emit(): wrap it in _()")

    def visit_Dict(self, node: ast.Dict) -> None:
        self._table([v for v in node.values if v is not None])
        self.generic_visit(node)

    def visit_List(self, node: ast.List) -> None:
        self._table(node.elts)
        self.generic_visit(node)

    def visit_Tuple(self, node: ast.Tuple) -> None:
        self._table(node.elts)
        self.generic_visit(node)

    def _table(self, values: list[ast.expr]) -> None:
        if not any(_is_mark(v, self.marks | {"N_"}) for v in values):
            return
        for value in values:
            if _prose(value) and _sentence(value):
                self._flag(value, "a table whose other texts are marked has an unmarked one")


def lint_file(path: Path, ref: str) -> list[Finding]:
    source = path.read_text(encoding="utf-8")
    gui = ref.startswith("gui/")
    cli = ref.startswith("core/cli/")
    visitor = _Visitor(ref, source.splitlines(), gui, cli)
    visitor.visit(ast.parse(source, str(path)))
    return visitor.found


def lint(root: Path, files: list[Path]) -> list[Finding]:
    found: list[Finding] = []
    for path in files:
        found += lint_file(path, path.relative_to(root).as_posix())
    return found
