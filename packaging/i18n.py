"""Goalkeeper's translations: extract, compile and check both catalogues.

    .venv/bin/python packaging/i18n.py update     # new strings into the .po and the .ts
    .venv/bin/python packaging/i18n.py todo       # what is untranslated, as TSV (source<TAB>)
    .venv/bin/python packaging/i18n.py apply FILE.tsv   # source<TAB>translation into both
    .venv/bin/python packaging/i18n.py build      # .po → .mo, .ts → .qm (shipped in the wheel)
    .venv/bin/python packaging/i18n.py check      # what tests/test_i18n.py asserts

Two catalogues per language: ``core/i18n/locale/<lang>/LC_MESSAGES/goalkeeper.po`` (gettext: the
CLI and everything else the core says, plus the messages of Python's ``argparse``) and
``gui/translations/goalkeeper_<lang>.ts`` (Qt: the desktop app's own words). ``update`` keeps
every translation and, where a string is new in one catalogue but translated in the other, takes
that translation. ``check`` fails on a string the code uses that a catalogue lacks, an unfinished
or missing translation, a translation that drops or changes a placeholder (``{name}``, ``%s``,
``%n``, ``%1``), markup or a keyboard mnemonic, a glossary term translated another way, compiled
files older than their sources, and English the code shows without marking it.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import i18n_lint  # noqa: E402
import i18n_po as po  # noqa: E402
import i18n_qt as qt  # noqa: E402

LANGUAGES = ("zh_CN",)
LOCALE = ROOT / "core" / "i18n" / "locale"
GLOSSARY = LOCALE / "GLOSSARY.md"
TRANSLATIONS = ROOT / "gui" / "translations"
ARGPARSE_REF = "argparse (Python {version})"
#: modules outside the project whose messages the CLI shows (argparse's "usage:", its errors)
EXTERNAL = [Path(argparse.__file__)]

BRACES = re.compile(r"(?<!\{)\{[A-Za-z_]\w*(?:![rsa])?(?::[^{}]*)?\}(?!\})")
PRINTF = re.compile(r"%(?:\([A-Za-z_]\w*\))?[sdrif]")
QT_ARGS = re.compile(r"%(?:n|L?\d{1,2})")
TAGS = re.compile(r"</?([A-Za-z][A-Za-z0-9]*)\b[^>]*>")
MNEMONIC = re.compile(r"&(?!&|[a-z]+;)\w")


def po_path(language: str) -> Path:
    return LOCALE / language / "LC_MESSAGES" / "goalkeeper.po"


def ts_path(language: str) -> Path:
    return TRANSLATIONS / f"goalkeeper_{language}.ts"


def core_sources() -> list[Path]:
    return sorted(p for p in (ROOT / "core").rglob("*.py") if "__pycache__" not in p.parts)


def gui_sources() -> list[Path]:
    return sorted(p for p in (ROOT / "gui").rglob("*.py") if "__pycache__" not in p.parts)


def _python() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


# -- extraction --------------------------------------------------------------------------------


def extract(problems: list[po.Problem] | None = None) -> list[po.Message]:
    """Every gettext-marked message of the core (and of the few GUI modules that speak before
    Qt does), then argparse's own (the CLI shows those too)."""
    groups = [po.extract_file(p, p.relative_to(ROOT).as_posix(), problems)
              for p in core_sources() + gui_sources()]
    groups += [po.extract_file(path, ARGPARSE_REF.format(version=_python())) for path in EXTERNAL]
    return po.merge_messages(groups)


def read_po(path: Path) -> tuple[str, list[po.Entry]]:
    if not path.exists():
        return "", []
    return po.parse_po(path.read_text(encoding="utf-8"))


def _header(language: str) -> str:
    return po.HEADER.format(language=language, plural=po.PLURAL_FORMS.get(
        language, "nplurals=2; plural=(n != 1);")) + f"X-Argparse-Python: {_python()}\n"


def _nplurals(header: str) -> int:
    match = re.search(r"nplurals\s*=\s*(\d+)", header)
    return int(match.group(1)) if match else 2


def update(languages: Iterable[str] = LANGUAGES) -> list[str]:
    report = []
    messages = extract()
    for language in languages:
        path = po_path(language)
        _, old = read_po(path)
        header = _header(language)
        entries = po.update_entries(messages, old, _nplurals(header))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(po.write_po(header, entries), encoding="utf-8")
        ts = ts_path(language)
        ts.parent.mkdir(parents=True, exist_ok=True)
        qt.lupdate(gui_sources(), ts, language)
        reused = _reuse(language)
        report.append(_summary(language, reused))
    return report


def _reuse(language: str) -> int:
    """Fill a string left untranslated in one catalogue from the other, if it has it."""
    header, entries = read_po(po_path(language))
    ts_done = {m.source: m.translation for m in qt.read_ts(ts_path(language))
               if m.active and m.translated and "\0" not in m.translation}
    count = 0
    for entry in entries:
        if entry.plural is None and not entry.obsolete and not entry.msgstr[0] and (
                entry.msgid in ts_done):
            entry.msgstr = [ts_done[entry.msgid]]
            count += 1
    po_path(language).write_text(po.write_po(header, entries), encoding="utf-8")
    po_done = {e.msgid: e.msgstr[0] for e in entries
               if e.plural is None and not e.obsolete and e.translated}
    filled = qt.fill_ts(ts_path(language), po_done)
    if filled:
        qt.lupdate(gui_sources(), ts_path(language), language)
    return count + filled


def _summary(language: str, reused: int) -> str:
    _, entries = read_po(po_path(language))
    active = [e for e in entries if not e.obsolete]
    messages = [m for m in qt.read_ts(ts_path(language)) if m.active]
    return (f"{language}: {po_path(language).relative_to(ROOT)}: {len(active)} strings, "
            f"{sum(not e.translated for e in active)} untranslated; "
            f"{ts_path(language).relative_to(ROOT)}: {len(messages)} strings, "
            f"{sum(not m.translated for m in messages)} untranslated; "
            f"{reused} taken from the other catalogue")


# -- translations in and out -------------------------------------------------------------------


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def _unescape(text: str) -> str:
    return re.sub(r"\\([\\tn])", lambda m: {"\\": "\\", "t": "\t", "n": "\n"}[m.group(1)], text)


def todo(language: str) -> list[str]:
    """The untranslated sources of both catalogues, once each, as TSV lines."""
    _, entries = read_po(po_path(language))
    sources = [e.msgid for e in entries if not e.obsolete and not e.translated]
    sources += [m.source for m in qt.read_ts(ts_path(language)) if m.active and not m.translated]
    return [f"{_escape(s)}\t" for s in dict.fromkeys(sources)]


def apply(language: str, tsv: Path, force: bool = False) -> int:
    pairs = {}
    for line in tsv.read_text(encoding="utf-8").splitlines():
        source, sep, translation = line.partition("\t")
        if sep and translation.strip():
            pairs[_unescape(source)] = _unescape(translation)
    header, entries = read_po(po_path(language))
    count = 0
    for entry in entries:
        if entry.obsolete or entry.msgid not in pairs or (entry.translated and not force):
            continue
        entry.msgstr = [pairs[entry.msgid]] * len(entry.msgstr)
        entry.flags.discard("fuzzy")
        count += 1
    po_path(language).write_text(po.write_po(header, entries), encoding="utf-8")
    count += qt.fill_ts(ts_path(language), pairs, force)
    qt.lupdate(gui_sources(), ts_path(language), language)
    return count


# -- build -------------------------------------------------------------------------------------


def compiled_mo(language: str) -> bytes:
    header, entries = read_po(po_path(language))
    return po.compile_mo(header, entries)


def build(languages: Iterable[str] = LANGUAGES) -> list[str]:
    done = []
    for language in languages:
        mo = po_path(language).with_suffix(".mo")
        mo.write_bytes(compiled_mo(language))
        qm = ts_path(language).with_suffix(".qm")
        qt.lrelease(ts_path(language), qm)
        done += [str(mo.relative_to(ROOT)), str(qm.relative_to(ROOT))]
    return done


# -- check -------------------------------------------------------------------------------------


def placeholder_problems(source: str, translation: str) -> list[str]:
    """What ``translation`` drops, adds or changes of ``source``'s fields, markup, mnemonic."""
    out = []
    for name, pattern in (("placeholders", BRACES), ("printf fields", PRINTF),
                          ("Qt arguments", QT_ARGS)):
        want, got = Counter(pattern.findall(source)), Counter(pattern.findall(translation))
        if want != got:
            out.append(f"{name} {sorted(want.elements())} became {sorted(got.elements())}")
    want_tags = Counter(t.lower() for t in TAGS.findall(source))
    if want_tags != Counter(t.lower() for t in TAGS.findall(translation)):
        out.append("markup tags differ")
    if MNEMONIC.search(source) and not MNEMONIC.search(translation):
        out.append("the keyboard mnemonic (&) is gone")
    return out


def glossary() -> list[tuple[str, str, re.Pattern[str]]]:
    """(English term, its translation, the pattern that finds it) rows of GLOSSARY.md that
    carry a pattern in their third column."""
    rows = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[2].startswith("`") and cells[2].endswith("`"):
            rows.append((cells[0], cells[1], re.compile(cells[2].strip("`"), re.IGNORECASE)))
    return rows


CODE_SPANS = re.compile(r"`[^`]*`|<code>.*?</code>|\{[^{}]*\}|\S*[/_.:=]\S*")


def glossary_problems(source: str, translation: str,
                      terms: list[tuple[str, str, re.Pattern[str]]]) -> list[str]:
    prose = CODE_SPANS.sub(" ", source)
    return [f"“{english}” is translated as “{chinese}” (GLOSSARY.md)"
            for english, chinese, pattern in terms
            if pattern.search(prose) and chinese not in translation]


def _pairs(language: str) -> list[tuple[str, str, str]]:
    """(catalogue, source, translation) of every active, translated string."""
    _, entries = read_po(po_path(language))
    out = [("po", e.msgid, form) for e in entries if not e.obsolete and e.translated
           for form in e.msgstr]
    if ts_path(language).exists():
        out += [("ts", m.source, m.translation) for m in qt.read_ts(ts_path(language))
                if m.active and m.translated]
    return out


def _po_problems(language: str) -> list[str]:
    problems: list[po.Problem] = []
    messages = extract(problems)
    header, entries = read_po(po_path(language))
    out = [f"{p.where}: {p.what}" for p in problems]
    active = {e.msgid: e for e in entries if not e.obsolete}
    same_python = f"X-Argparse-Python: {_python()}" in header
    for message in messages:
        argparse_only = all(r.startswith("argparse") for r in message.refs)
        if message.msgid not in active and (same_python or not argparse_only):
            where = f" ({message.refs[0]})" if message.refs else ""
            out.append(f"po: not in the catalogue (run update): {message.msgid!r}{where}")
    extracted = {m.msgid for m in messages}
    for msgid, entry in active.items():
        gone = msgid not in extracted and not (
            not same_python and all(r.startswith("argparse") for r in entry.refs))
        if gone:
            out.append(f"po: no longer in the code (run update): {msgid!r}")
        elif not entry.translated:
            out.append(f"po: untranslated{' (fuzzy)' if 'fuzzy' in entry.flags else ''}: "
                       f"{msgid!r}")
    mo = po_path(language).with_suffix(".mo")
    if not mo.exists() or mo.read_bytes() != compiled_mo(language):
        out.append(f"po: {mo.relative_to(ROOT)} is not built from the .po (run build)")
    return out


def _ts_problems(language: str) -> list[str]:
    ts = ts_path(language)
    if not ts.exists():
        return [f"ts: {ts.relative_to(ROOT)} is missing (run update)"]
    before = qt.read_ts(ts)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / ts.name
        copy.write_bytes(ts.read_bytes())
        qt.lupdate(gui_sources(), copy, language)
        after = qt.read_ts(copy)
        qm = Path(tmp) / "fresh.qm"
        qt.lrelease(ts, qm)
        built = ts.with_suffix(".qm")
        if not built.exists() or built.read_bytes() != qm.read_bytes():
            out.append(f"ts: {built.relative_to(ROOT)} is not built from the .ts (run build)")
    key = lambda m: (m.context, m.source, m.comment)  # noqa: E731
    known = {key(m) for m in before if m.active}
    current = {key(m) for m in after if m.active}
    out += [f"ts: not in the catalogue (run update): {s!r}" for _, s, _ in sorted(current - known)]
    out += [f"ts: no longer in the code (run update): {s!r}"
            for _, s, _ in sorted(known - current)]
    out += [f"ts: untranslated: {m.source!r}" for m in before if m.active and not m.translated]
    return out


def check(languages: Iterable[str] = LANGUAGES) -> list[str]:
    """Every problem with the catalogues, as sentences (empty: all good)."""
    out = [str(f) for f in i18n_lint.lint(ROOT, core_sources() + gui_sources())]
    terms = glossary()
    for language in languages:
        out += [f"{language} {p}" for p in _po_problems(language) + _ts_problems(language)]
        for catalogue, source, translation in _pairs(language):
            for problem in placeholder_problems(source, translation) + glossary_problems(
                    source, translation, terms):
                out.append(f"{language} {catalogue}: {source!r} → {translation!r}: {problem}")
    return out


#: what to do about each kind of problem ``check`` reports, in the order to do it
_ADVICE = (
    ("unmarked", "mark the unmarked text above: tr() in gui/, _() in the core and the CLI, "
                 "N_(…).format(…) for English the core stores"),
    ("(run update)", "packaging/i18n.py update        # new and gone strings into both catalogues"),
    ("untranslated", "packaging/i18n.py todo > todo.tsv; write the Chinese after each tab "
                     "(GLOSSARY.md); packaging/i18n.py apply todo.tsv"),
    ("(run build)", "packaging/i18n.py build         # the .mo and the .qm (commit them)"),
)


def advice(problems: list[str]) -> list[str]:
    """The steps that clear ``problems``, with how many strings each concerns."""
    steps = []
    for key, step in _ADVICE:
        count = sum(key in p for p in problems)
        if count or (key == "untranslated" and any("(run update)" in p for p in problems)):
            steps.append(f"  {step}" + (f"   [{count}]" if count else ""))
    other = [p for p in problems if not any(key in p for key, _ in _ADVICE)]
    if other:
        steps.append(f"  fix the {len(other)} translation(s) named above (placeholders, markup, "
                     "mnemonics, glossary terms), then build")
    return ["", "to do, in order (then run check again):", *steps] if steps else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("update", help="extract new strings into every catalogue")
    sub.add_parser("build", help="compile the .mo and .qm files")
    sub.add_parser("check", help="what tests/test_i18n.py asserts")
    p = sub.add_parser("todo", help="untranslated strings as TSV lines (source<TAB>)")
    p.add_argument("--language", default=LANGUAGES[0])
    p = sub.add_parser("apply", help="fill translations from a TSV file (source<TAB>text)")
    p.add_argument("tsv", type=Path)
    p.add_argument("--language", default=LANGUAGES[0])
    p.add_argument("--force", action="store_true", help="replace existing translations too")
    args = parser.parse_args(argv)
    if args.command == "update":
        print("\n".join(update()))
    elif args.command == "build":
        print("\n".join(f"built {name}" for name in build()))
    elif args.command == "todo":
        print("\n".join(todo(args.language)))
    elif args.command == "apply":
        print(f"{apply(args.language, args.tsv, args.force)} translations written; "
              "now run build")
    else:
        problems = check()
        print("\n".join(problems + advice(problems)) or "translations: all good")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
