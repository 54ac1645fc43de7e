"""One loaded language: gettext lookups plus the translation of stored English text.

The core stores what it says in English (history reasons, goal notes, pause details: data, the
same in ``--json`` whatever the language) and marks the templates it builds them from with
``N_``. :meth:`Catalogue.localized` turns such a text into the current language at display time:
the exact text if the catalogue has it, else the stored template it fits best — a message with
fields that some code marks with ``N_`` (the compiled catalogue lists them) — with each value
translated the same way (``"not paused: done"`` → the state word too). "Best" is the reading
that accounts for most of the text, literal characters and translated values together: a
template that starts with a field (``"{window} {used} % used, …"``) fits ``"reserve: codex:5h
70 % used, …"`` too, by taking ``"reserve:"`` for a window, but ``"{rule}: {why}"`` with that
template inside accounts for more. Several notes joined with ``"; "`` may also be read one by
one. Patterns only ever used with ``_()`` (a date format, ``"{weekday} {day}"``) are never
templates. A text nothing fits is returned unchanged: never a blank.
"""

from __future__ import annotations

import gettext
import logging
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("core.i18n")

#: a str.format field: ``{name}``, ``{name!r}``, ``{name:>5}`` (``{{`` is a literal brace)
FIELD = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)(![rsa])?(:[^{}]*)?\}(?!\})")
#: a template with fewer literal characters (``"{reason}: {detail}"``) is "weak": it counts only
#: when a value it captured has a translation of its own (``quota``), not for any "a: b"
_MIN_LITERAL = 4
_MAX_DEPTH = 4
#: how the core joins several notes into one stored text ("manual resume …; ignoring the
#: reserve: …; outside the allowed hours …"): such a text may also be read note by note, when
#: every note has a translation of its own
NOTE_SEPARATOR = "; "
_CACHE_LIMIT = 4096
#: where a compiled catalogue lists the messages that are stored templates (those some code marks
#: with ``N_``; packaging/i18n_po.py writes it): only these are matched against stored text — a
#: pattern only ever used with ``_()``, such as a date format, never is
TEMPLATES_KEY = "goalkeeper\x04templates"
TEMPLATE_SEPARATOR = "\x1e"
#: a translation, and how many characters of the English text it accounts for
Reading = tuple[str, int]


@dataclass(frozen=True)
class Template:
    """A marked message with fields, compiled to match the English text made from it."""

    pattern: re.Pattern[str]
    translation: str
    literal: int
    #: the literal text between the fields, first and last included ("" where a field is)
    chunks: tuple[str, ...] = ()

    @property
    def weak(self) -> bool:
        return self.literal < _MIN_LITERAL

    def match(self, text: str) -> re.Match[str] | None:
        """The fields of ``text`` if it was made from this template. The literal chunks are
        looked for first: most templates are ruled out without running the pattern, whose
        lazy fields can take long to fail on a long text."""
        chunks = self.chunks
        if not (text.startswith(chunks[0]) and text.endswith(chunks[-1])
                and all(chunk in text for chunk in chunks[1:-1])):
            return None
        return self.pattern.fullmatch(text)

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
        chunks = tuple(p.replace("{{", "{").replace("}}", "}") for p in literal_parts)
        return cls(re.compile("".join(regex), re.DOTALL), plain, literal, chunks)


class Catalogue:
    """Translations of one language (none for English, the source language)."""

    def __init__(self, language: str, translations: gettext.NullTranslations,
                 messages: dict[str, str], templates: tuple[str, ...] = ()) -> None:
        self.language = language
        self._translations = translations
        self._messages = messages
        made = (Template.of(k, messages[k]) for k in templates if k in messages)
        self._templates = _distinct(sorted((t for t in made if t is not None),
                                           key=lambda t: -t.literal))
        self._cache: dict[str, str] = {}
        #: readings of texts and of the parts templates took them apart into (texts share
        #: parts: the same reason with another window, the same notes after another one)
        self._readings: dict[tuple[str, int], Reading] = {}
        #: the templates a text can fit by its first and last character, most literal first
        self._by_ends: dict[tuple[str, str], list[Template]] = {}

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
        if len(self._readings) >= 8 * _CACHE_LIMIT:
            self._readings.clear()
        return self._read(text, depth)[0]

    def _candidates(self, text: str) -> list[Template]:
        ends = (text[:1], text[-1:])
        found = self._by_ends.get(ends)
        if found is None:
            found = [t for t in self._templates if t.chunks[0][:1] in ("", ends[0])
                     and t.chunks[-1][-1:] in ("", ends[1])]
            self._by_ends[ends] = found
        return found

    def _read(self, text: str, depth: int) -> Reading:
        """The reading of ``text`` that accounts for most of it: the exact message, else the
        best of every stored template it fits (its literal characters plus its values'
        readings) and of its ``"; "``-joined notes read one by one; on a tie, the template
        with most literal text. Nothing fits: ``text`` itself, accounting for nothing."""
        known = self._readings.get((text, depth))
        if known is not None:
            return known
        exact = self._messages.get(text)
        if exact:
            reading: Reading = (exact, len(text))
        elif depth >= _MAX_DEPTH:
            reading = (text, 0)
        else:
            candidates = [(text, 0), *self._templated(text, depth), *self._notes(text, depth)]
            reading = max(candidates, key=lambda candidate: candidate[1])
        self._readings[(text, depth)] = reading
        return reading

    def _templated(self, text: str, depth: int) -> Iterator[Reading]:
        for template in self._candidates(text):
            match = template.match(text)
            if match is None:
                continue
            values = {k: self._read(v, depth + 1) for k, v in match.groupdict().items()}
            inner = sum(covered for _, covered in values.values())
            if template.weak and not inner:
                continue  # "{reason}: {detail}" alone is no reason to take "a: b" apart
            try:
                shown = template.translation.format(**{k: v for k, (v, _) in values.items()})
            except (KeyError, IndexError, ValueError):
                log.warning("translation of %r does not fit its template", text)
                continue
            yield shown, template.literal + inner

    def _notes(self, text: str, depth: int) -> Iterator[Reading]:
        parts = text.split(NOTE_SEPARATOR)
        if len(parts) < 2:
            return
        readings = [self._read(part, depth + 1) for part in parts]
        if all(covered for _, covered in readings):  # every note has a translation
            joiner = self._messages.get(NOTE_SEPARATOR, NOTE_SEPARATOR)
            yield (joiner.join(shown for shown, _ in readings),
                   sum(covered for _, covered in readings)
                   + len(NOTE_SEPARATOR) * (len(parts) - 1))


def _distinct(templates: list[Template]) -> list[Template]:
    """One of each shape: ``"{reason}: {detail}"`` and ``"{rule}: {why}"`` read a text alike
    (the same literal text, translated the same way), so only the first is tried."""
    kept, shapes = [], set()
    for template in templates:
        shape = (template.chunks, _positional(template))
        if shape not in shapes:
            shapes.add(shape)
            kept.append(template)
    return kept


def _positional(template: Template) -> str:
    """The translation with its fields numbered by their place in the English."""
    names = template.pattern.groupindex
    return FIELD.sub(lambda m: f"{{{names.get(m.group(1), -1)}}}", template.translation)


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
