"""The desktop app's translations: Qt's own system, in the language the core chose.

The app's words are marked ``tr("…")`` (or ``QT_TR_NOOP("…")`` in tables built at import, then
``tr(TABLE[key])`` where shown) and live in ``gui/translations/goalkeeper_<lang>.ts``, compiled
to ``.qm`` by ``packaging/i18n.py build`` with PySide6's lupdate/lrelease. Everything the engine
says (reasons, notes, notifications, times) comes from the core already in the right language,
or through :func:`core.i18n.localized`. One language for both: :func:`install` takes the one
:func:`core.i18n.setup` chose, loads this app's ``.qm`` and Qt's own (button texts, the file
dialog) and sets Qt's default locale. A string without a translation stays English.

All messages share the empty context: ``tr()`` is a plain function (lupdate files bare ``tr``
calls under ``""``), so a widget's class name never decides whether its text is found.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from core import i18n

log = logging.getLogger("gui")

TRANSLATIONS = Path(__file__).resolve().parent / "translations"
_installed: list[QTranslator] = []
_original_locale: list[QLocale] = []


def QT_TR_NOOP(source: str) -> str:  # the name lupdate looks for
    """Mark ``source`` for lupdate in a table built at import; ``tr()`` it where it is shown."""
    return source


def tr(source: str, disambiguation: str | None = None) -> str:
    """``source`` in the app's language (``disambiguation`` tells two same English texts
    apart for the translator)."""
    return QCoreApplication.translate("", source, disambiguation)


def say(text: str) -> str:
    """Text the app has in either catalogue: Qt's (its own tables), else the core's (setting
    descriptions, engine words), else as it is."""
    translated = tr(text)
    return translated if translated != text else i18n.localized(text)


def qt_locale(language: str) -> QLocale:
    return QLocale("zh_CN" if language == "zh_CN" else "en_US")


def install(app: QCoreApplication, language: str | None = None) -> str:
    """Load the translators for ``language`` (default: the core's current one) into ``app``,
    replacing any installed before; returns the language now spoken."""
    language = language or i18n.current_language()
    uninstall(app)
    _original_locale[:] = _original_locale or [QLocale()]
    QLocale.setDefault(qt_locale(language))
    if language == "en":
        return language
    for directory, name in ((TRANSLATIONS, f"goalkeeper_{language}"),
                            (Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)),
                             f"qtbase_{language}")):
        translator = QTranslator(app)
        if translator.load(name, str(directory)):
            app.installTranslator(translator)
            _installed.append(translator)
        else:
            log.warning("no %s translations in %s", name, directory)
    return language


def uninstall(app: QCoreApplication) -> None:
    while _installed:
        app.removeTranslator(_installed.pop())
    if _original_locale:
        QLocale.setDefault(_original_locale[0])
