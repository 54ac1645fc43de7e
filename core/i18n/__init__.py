"""What language Goalkeeper speaks, and the core's translations (gettext). Qt-free.

Two catalogues translate Goalkeeper: this one (gettext, ``locale/<lang>/LC_MESSAGES/
goalkeeper.po`` compiled to ``.mo``) for everything the core says — the CLI's human output, the
renderings of times (:mod:`core.i18n.textfmt`), notifications, and the reasons and notes the engine
records — and Qt's (``gui/translations``) for the desktop app's own words. Both follow the same
choice of language, made once per process by :func:`use_language`:

* the ``language`` setting (``config.toml`` / ``GOALKEEPER_LANGUAGE``) when it names one, else
* the system's, read as GNU gettext reads it: ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` (the first
  one set) give the locale; ``LANGUAGE``, a colon-separated priority list, goes before it unless
  the locale is exactly ``C`` or ``POSIX`` (or unset) — ``C.UTF-8`` does not stop it;
* English when none of them names a language Goalkeeper has.

Marking, for ``packaging/i18n.py`` to extract:

* ``_("text {name}")`` translates now (``.format`` after it);
* ``N_("text {name}")`` only marks: the English text is what is stored (history reasons, goal
  notes, ``--json`` values never change with the language);
* :func:`localized` translates such stored English text when it is shown — the exact text, or
  a marked template it was made from (``"quota not recovered: {names}"``), its values translated
  in turn. Anything without a translation is shown as it is: never a blank.
"""

from __future__ import annotations

import argparse
import codecs
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from core.i18n.catalogue import Catalogue, load_catalogue
from core.limits import MAX_CONFIG_FILE_BYTES, MAX_TOML_DEPTH
from core.toml_lines import nesting_line

DOMAIN = "goalkeeper"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
#: the languages Goalkeeper speaks; English is the source language (no catalogue)
SUPPORTED = ("en", "zh_CN")
#: values of the ``language`` setting: "" follows the system
LANGUAGE_CHOICES = ("", "en", "zh_CN")
#: locales that are Simplified Chinese (zh_TW, zh_HK and zh_Hant are not: they fall through)
_SIMPLIFIED = {"zh", "zh_cn", "zh_sg", "zh_hans", "zh_hans_cn", "zh_hans_sg"}

_current = Catalogue.english()


def _(message: str) -> str:
    """``message`` in the current language (the English text when it has no translation)."""
    return _current.gettext(message)


def N_(message: str) -> str:  # the gettext convention
    """Mark ``message`` for extraction only; :func:`localized` translates it when shown."""
    return message


def ngettext(singular: str, plural: str, n: int) -> str:
    return _current.ngettext(singular, plural, n)


def localized(text: str) -> str:
    """Stored English ``text`` (a reason, a note) in the current language, if it is known."""
    return _current.localized(text)


def current_language() -> str:
    return _current.language


def normalize(tag: str) -> str | None:
    """``zh_CN.UTF-8`` → ``zh_CN``, ``en_GB`` → ``en``; None for a language we do not have."""
    base = tag.split(".", 1)[0].split("@", 1)[0].replace("-", "_").strip()
    if not base or base.upper() in ("C", "POSIX"):
        return None
    lowered = base.lower()
    if lowered in _SIMPLIFIED:
        return "zh_CN"
    if lowered == "en" or lowered.startswith("en_"):
        return "en"
    return None


def resolve_language(setting: str, environ: Mapping[str, str]) -> str:
    """The language to speak: the setting, else the system's (see the module docstring)."""
    chosen = normalize(setting) if setting else None
    if chosen is not None:
        return chosen
    locale = next((environ[name] for name in ("LC_ALL", "LC_MESSAGES", "LANG")
                   if environ.get(name)), "C")
    candidates: Sequence[str] = [locale]
    if locale not in ("C", "POSIX") and environ.get("LANGUAGE"):  # as GNU gettext does
        candidates = [*environ["LANGUAGE"].split(":"), locale]
    for tag in candidates:
        language = normalize(tag)
        if language is not None:
            return language
    return "en"


def language_setting(config_file: Path, environ: Mapping[str, str]) -> str:
    """The ``language`` setting, read early and leniently (before the settings are validated,
    so that even a message about a bad setting is in the right language)."""
    return early_setting(config_file, environ, "language")


def early_setting(config_file: Path, environ: Mapping[str, str], name: str) -> str:
    """A text setting read early and leniently: ``GOALKEEPER_<NAME>``, else the file's value,
    else "" — also when the file cannot be read. Only a guess to start work on: the strict
    read that follows says what is wrong, and decides."""
    variable = "GOALKEEPER_" + name.upper()
    if variable in environ:
        return environ[variable]
    # Whatever is wrong with the file is said by the strict read that follows
    # (core.toml_file, which cannot be used here: its messages need this module); here it
    # only must not end the process first: no BOM trouble, no recursion, no 1 GB read.
    try:
        with open(config_file, "rb") as handle:
            raw = handle.read(MAX_CONFIG_FILE_BYTES + 1)
        text = raw.removeprefix(codecs.BOM_UTF8).decode("utf-8")
        if len(raw) > MAX_CONFIG_FILE_BYTES or nesting_line(text, MAX_TOML_DEPTH) is not None:
            return ""
        if name not in text and "\\" not in text:
            return ""  # no key can spell it (an escape could): not worth loading TOML (issue 24)
        import tomllib

        try:
            value = tomllib.loads(text).get(name, "")
        except tomllib.TOMLDecodeError:
            return ""
    except (OSError, UnicodeDecodeError):
        return ""
    return value if isinstance(value, str) else ""


def use_language(language: str) -> str:
    """Speak ``language`` (one of :data:`SUPPORTED`; anything else: English) from now on."""
    global _current
    if language not in SUPPORTED or language == "en":
        _current = Catalogue.english()
    else:
        _current = load_catalogue(LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.mo",
                                  language)
    return _current.language


@contextmanager
def argparse_translated() -> Iterator[None]:
    """Let :mod:`argparse` say its own words ("usage:", "the following arguments are
    required") in the current language while the CLI runs.

    argparse looks them up through its module-level ``_`` and ``ngettext`` (gettext's global
    domain, which follows only the environment, never the ``language`` setting); the catalogue
    carries them (``packaging/i18n.py`` extracts them from the running Python's argparse)."""
    saved = getattr(argparse, "_"), getattr(argparse, "ngettext")  # noqa: B009
    setattr(argparse, "_", _)  # noqa: B010
    setattr(argparse, "ngettext", ngettext)  # noqa: B010
    try:
        yield
    finally:
        setattr(argparse, "_", saved[0])  # noqa: B010
        setattr(argparse, "ngettext", saved[1])  # noqa: B010


def setup(config_file: Path, environ: Mapping[str, str]) -> str:
    """Choose and load this process's language from the setting and the environment."""
    return use_language(resolve_language(language_setting(config_file, environ), environ))


__all__ = [
    "LANGUAGE_CHOICES",
    "N_",
    "SUPPORTED",
    "_",
    "current_language",
    "localized",
    "ngettext",
    "resolve_language",
    "setup",
    "use_language",
]
