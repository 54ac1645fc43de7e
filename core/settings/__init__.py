"""Settings: ``config.toml`` in the config directory, each field overridable by the environment.

Every field ``x`` can be set by ``GOALKEEPER_X`` (upper case), which wins over the file. A bad value
raises :class:`SettingsError` naming the field, the value and where it came from. Fields are flat
(``codex_home``, not ``[codex] home``) so that every one of them has an obvious variable name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.atomic import atomic_write_text
from core.i18n import _, localized
from core.identity import redacted_url
from core.limits import MAX_CONFIG_FILE_BYTES, MAX_SHOWN_CHARS, clip, clip_echo
from core.toml_lines import locate

if TYPE_CHECKING:
    from pydantic import ValidationError

    from core.settings.schema import Settings as Settings
else:
    def __getattr__(name: str) -> Any:
        """:class:`Settings` is built on first use (issue 24: pydantic is loaded only by what
        validates settings or needs the model itself)."""
        if name == "Settings":
            from core.settings.schema import Settings

            return Settings
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: settings that are tables in config.toml rather than flat values (no GOALKEEPER_* override)
TABLE_FIELDS = frozenset({"quotas"})

ENV_PREFIX = "GOALKEEPER_"


class SettingsError(Exception):
    """A setting could not be read; the message names the field, the value and the source."""


def load_settings(
    config_file: Path,
    environ: Mapping[str, str] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> Settings:
    """Read ``config_file`` (missing is fine) and apply ``GOALKEEPER_*`` overrides.

    ``defaults`` (used by the demo) sit under both: the file and the environment still win.
    """
    from pydantic import ValidationError

    from core.settings.schema import Settings

    environ = os.environ if environ is None else environ
    file_values, sources, text = _read_file(config_file)
    values = {**(defaults or {}), **file_values}
    for name in Settings.model_fields:
        if name in TABLE_FIELDS:
            continue
        var = ENV_PREFIX + name.upper()
        if var in environ:
            values[name] = environ[var]
            sources[name] = _("environment variable {name}").format(name=var)
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        raise SettingsError(_describe(exc, values, sources, config_file, text)) from None


def read_settings(config_file: Path, snapshot_file: Path,
                  environ: Mapping[str, str] | None = None) -> Settings:
    """:func:`load_settings` for a command that only reads them: answered from
    ``snapshot_file`` (:mod:`core.settings.snapshot`) when it holds the result of validating
    this very file with these very ``GOALKEEPER_*`` variables, by this very schema — without
    loading pydantic (issue 24). Otherwise validated as always (the same errors, word for word)
    and the snapshot written for the next time."""
    from core.settings import snapshot

    environ = os.environ if environ is None else environ
    found = snapshot.recall(config_file, snapshot_file, environ)
    if found is not None:
        return found
    settings = load_settings(config_file, environ)
    snapshot.remember(settings, config_file, snapshot_file, environ)
    return settings


def _read_file(config_file: Path) -> tuple[dict[str, Any], dict[str, str], str]:
    import tomllib

    from core.toml_file import TomlFileError, read_toml

    try:
        values, text = read_toml(config_file, MAX_CONFIG_FILE_BYTES)
    except FileNotFoundError:
        return {}, {}, ""
    except OSError as exc:
        raise SettingsError(_("cannot read {file}: {error}").format(
            file=config_file, error=exc.strerror)) from None
    except TomlFileError as exc:  # not UTF-8, too large, too deep: said like a bad value
        raise SettingsError(localized(str(exc))) from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(_("{file} is not valid TOML: {error}").format(
            file=config_file, error=exc)) from None
    return values, {name: str(config_file) for name in values}, text


def _describe(exc: ValidationError, values: Mapping[str, Any], sources: Mapping[str, str],
              file: Path, text: str) -> str:
    lines = []
    for error in exc.errors():
        loc = _without_union_tag(tuple(error["loc"]))
        field = str(loc[0]) if loc else ""
        message = _message(clip_echo(str(error["msg"]), error.get("input")))
        if not field:
            lines.append(_("settings from {file}: {message}").format(file=file, message=message))
            continue
        source = sources.get(field, str(file))
        if source == str(file) and (line := locate(text, loc)):
            source = f"{file}:{line}"
        dotted = clip(".".join(str(part) for part in loc), MAX_SHOWN_CHARS)
        if error["type"] == "extra_forbidden":
            lines.append(_("unknown setting {name!r} in {source}").format(name=dotted,
                                                                         source=source))
        else:
            shown = _value_at(values, loc)
            if field == "store_url":
                shown = redacted_url(shown)
            if isinstance(shown, str):  # a long value (from a variable, too) is shown cut
                shown = clip(shown, MAX_SHOWN_CHARS)
            lines.append(_("setting {name} = {value!r} from {source}: {message}").format(
                name=dotted, value=shown, source=source, message=message))
    return _("; ").join(lines)


def _message(msg: str) -> str:
    """pydantic's message, translated when the catalogue knows it (without its "Value error, "
    prefix then), else as pydantic put it."""
    bare = msg.removeprefix("Value error, ")
    translated = localized(bare)
    return msg if translated == bare else translated


def _without_union_tag(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Pydantic puts the chosen member of a tagged union in the location:
    ``quotas.api.periodic.limit`` is the key ``quotas.api.limit`` of the file."""
    if len(loc) > 2 and loc[0] in TABLE_FIELDS and loc[2] in ("periodic", "capacity",
                                                               "token_bucket"):
        return loc[:2] + loc[3:]
    return loc


def _value_at(values: Mapping[str, Any], loc: tuple[Any, ...]) -> Any:
    node: Any = values
    for part in loc:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def save_settings(config_file: Path, settings: Settings) -> None:
    """Write the settings that differ from the defaults back, atomically."""
    from core.settings.schema import Settings

    defaults = Settings()
    lines = ["# Goalkeeper settings; see the README for every field.\n"]
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if name not in TABLE_FIELDS and value != getattr(defaults, name):
            lines.append(f"{name} = {_toml_value(value)}\n")
    for quota, spec in settings.quotas.items():
        lines.append(f"\n[quotas.{quota}]\n")
        for key, value in spec.model_dump(exclude_none=True).items():
            lines.append(f"{key} = {_toml_value(value)}\n")
    atomic_write_text(config_file, "".join(lines))


def _toml_value(value: object) -> str:
    if isinstance(value, dict):
        pairs = ", ".join(f"{_toml_value(str(k))} = {_toml_value(v)}" for k, v in value.items())
        return f"{{ {pairs} }}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'
