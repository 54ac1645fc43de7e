"""One loaded language: gettext lookups plus the translation of stored English text.

The core stores what it says in English (history reasons, goal notes, pause details: data, the
same in ``--json`` whatever the language) and marks the templates it builds them from with
``N_``. :meth:`Catalogue.localized` turns such a text into the current language at display time:
the exact text if the catalogue has it, else the first stored template it fits — a message with
fields that some code marks with ``N_`` (the compiled catalogue lists them), most literal
characters first, so ``"quota not recovered: {names}"`` wins over anything vaguer — with each
value translated the same way (``"not paused: done"`` → the state word too). Patterns only ever
used with ``_()`` (a date format, ``"{weekday} {day}"``) are never templates. A text nothing fits
is returned unchanged: never a blank.
"""

from __future__ import annotations

import gettext
import logging
import re
import struct
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("core.i18n")

#: a str.format field: ``{name}``, ``{name!r}``, ``{name:>5}`` (``{{`` is a literal brace)
FIELD = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)(![rsa])?(:[^{}]*)?\}(?!\})")
#: a template with fewer literal characters (``"{reason}: {detail}"``) is "weak": it counts only
#: when a value it captured has a translation of its own (``quota``), not for any "a: b"
_MIN_LITERAL = 4
_MAX_DEPTH = 3
_CACHE_LIMIT = 4096
#: where a compiled catalogue lists the messages that are stored templates (those some code marks
#: with ``N_``; packaging/i18n_po.py writes it): only these are matched against stored text — a
#: pattern only ever used with ``_()``, such as a date format, never is
TEMPLATES_KEY = "goalkeeper\x04templates"
TEMPLATE_SEPARATOR = "\x1e"


@dataclass(frozen=True)
class Template:
    """A marked message with fields, compiled to match the English text made from it."""

    pattern: re.Pattern[str]
    translation: str
    literal: int

    @property
    def weak(self) -> bool:
        return self.literal < _MIN_LITERAL

    @classmethod
    def of(cls, msgid: str, translation: str) -> Template | None:
        parts = FIELD.split(msgid)
        literal_parts = parts[0::4]
        literal = sum(len(p) for p in literal_parts)
        if len(parts) == 1 or not literal:
            return None
        regex, seen = [], set()
        for i, chunk in enumerate(parts):
            kind = i % 4
            if kind == 0:
                regex.append(re.escape(chunk.replace("{{", "{").replace("}}", "}")))
            elif kind == 1:
                regex.append(f"(?P={chunk})" if chunk in seen else f"(?P<{chunk}>.+?)")
                seen.add(chunk)
        plain = FIELD.sub(lambda m: "{" + m.group(1) + "}", translation)
        return cls(re.compile("".join(regex), re.DOTALL), plain, literal)


class Catalogue:
    """Translations of one language (none for English, the source language)."""

    def __init__(self, language: str, translations: gettext.NullTranslations,
                 messages: dict[str, str], templates: tuple[str, ...] = ()) -> None:
        self.language = language
        self._translations = translations
        self._messages = messages
        made = (Template.of(k, messages[k]) for k in templates if k in messages)
        self._templates = sorted((t for t in made if t is not None), key=lambda t: -t.literal)
        self._cache: dict[str, str] = {}

    @classmethod
    def english(cls) -> Catalogue:
        return cls("en", gettext.NullTranslations(), {})

    def gettext(self, message: str) -> str:
        return self._translations.gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self._translations.ngettext(singular, plural, n)

    def localized(self, text: str) -> str:
        if not self._messages or not text:
            return text
        cached = self._cache.get(text)
        if cached is None:
            cached = self._localize(text, 0)
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            self._cache[text] = cached
        return cached

    def _localize(self, text: str, depth: int) -> str:
        exact = self._messages.get(text)
        if exact:
            return exact
        if depth >= _MAX_DEPTH:
            return text
        for template in self._templates:
            match = template.pattern.fullmatch(text)
            if match is not None:
                found = match.groupdict()
                values = {k: self._localize(v, depth + 1) for k, v in found.items()}
                if template.weak and values == found:
                    continue
                try:
                    return template.translation.format(**values)
                except (KeyError, IndexError, ValueError):
                    log.warning("translation of %r does not fit its template", text)
                    return text
        return text


class _Translations(gettext.GNUTranslations):
    """GNU translations that also hand out their singular messages (for the templates)."""

    def messages(self) -> dict[str, str]:
        catalog: dict[object, str] = getattr(self, "_catalog", {})
        return {k: v for k, v in catalog.items()
                if isinstance(k, str) and k and v and "\x04" not in k}

    def templates(self) -> tuple[str, ...]:
        listed = self._catalog.get(TEMPLATES_KEY, "") if hasattr(self, "_catalog") else ""
        return tuple(t for t in str(listed).split(TEMPLATE_SEPARATOR) if t)


def load_catalogue(path: Path, language: str) -> Catalogue:
    """The compiled catalogue at ``path``; English (with a warning) if it cannot be read."""
    try:
        with path.open("rb") as stream:
            translations = _Translations(stream)
    except (OSError, ValueError, struct.error) as exc:  # a missing, foreign or broken file
        log.warning("no %s translations (%s): speaking English", language, exc)
        return Catalogue.english()
    return Catalogue(language, translations, translations.messages(), translations.templates())
