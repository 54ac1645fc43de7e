"""The pipeline goal file: a TOML file declaring sources, stages, schedule, quotas and secrets.

:func:`load_goal_file` reads and validates one file; every problem becomes a
:class:`GoalFileError` whose lines say ``FILE:LINE: field: problem`` (the line is found by
:mod:`core.toml_lines`, since ``tomllib`` keeps no positions). The keys are
documented in the README ("Pipeline goals"); they are a stable interface: add, never rename.
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from pathlib import Path
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from core.clock import zone_named
from core.i18n import N_
from core.limits import (
    MAX_GOAL_FILE_BYTES,
    MAX_SHOWN_CHARS,
    MAX_SOURCES,
    MAX_STAGES,
    MAX_TITLE_CHARS,
    clip,
    clip_echo,
)
from core.providers.pipeline.schedule import parse_schedule
from core.retry.policy import RetryPolicy
from core.toml_file import TomlFileError, parse, read_text
from core.toml_lines import locate

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
SECRET_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"
GOAL_PREFIX = "pipeline:"

Name = Annotated[str, Field(pattern=NAME_PATTERN)]
SecretName = Annotated[str, Field(pattern=SECRET_PATTERN)]
RESERVED_ENV = ("GOALKEEPER_RUN_DIR", "GOALKEEPER_RUN_ID", "GOALKEEPER_STEP",
                "GOALKEEPER_REPORT", "GOALKEEPER_COVERAGE", "GOALKEEPER_ATTEMPT")


class StepSpec(BaseModel):
    """One source or stage: an argv command with its cwd, timeout, retries, quota and secrets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Name
    command: list[str] = Field(min_length=1)
    cwd: str = "."
    timeout: float = Field(60.0, gt=0, le=86400)
    retries: int = Field(1, ge=0, le=100)
    backoff: float = Field(1.0, gt=0, le=3600)
    backoff_max: float = Field(60.0, gt=0, le=86400)
    quota: Annotated[str, Field(pattern=NAME_PATTERN)] | None = None
    cost: float = Field(1.0, ge=0)
    secrets: list[SecretName] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    output: str | None = None
    min_items: int | None = Field(None, ge=0)
    #: the most a step may print to stdout when stdout is its artifact (default 64)
    max_output_mb: float | None = Field(None, gt=0, le=4096)

    @field_validator("command")
    @classmethod
    def _no_empty_program(cls, value: list[str]) -> list[str]:
        if not value[0].strip():
            raise ValueError(N_("the program (first element) must not be empty"))
        return value

    @field_validator("output")
    @classmethod
    def _output_inside_run_dir(cls, value: str | None) -> str | None:
        if value is not None and (not value or Path(value).is_absolute() or ".." in Path(
                value).parts):
            raise ValueError(N_("output must be a relative path inside the run directory"))
        return value

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        for key, text in value.items():
            if key in RESERVED_ENV:
                raise ValueError(N_("{key} is set by Goalkeeper and cannot be overridden").format(
                    key=key))
            if text.startswith("keyring:") and not re.match(SECRET_PATTERN, text[8:]):
                raise ValueError(N_("{key}: {name!r} is not a valid secret name").format(
                    key=key, name=text[8:]))
        return value

    def secret_names(self) -> list[str]:
        """The keyring entries the step needs: its ``secrets`` and its ``env`` references."""
        refs = [v[8:] for v in self.env.values() if v.startswith("keyring:")]
        return sorted({*self.secrets, *refs})

    @model_validator(mode="after")
    def _backoff_order(self) -> StepSpec:
        if self.backoff_max < self.backoff:
            raise ValueError(N_("backoff_max must not be smaller than backoff"))
        return self

    def retry_policy(self, max_inline_wait: float = 120.0) -> RetryPolicy:
        return RetryPolicy(retries=self.retries, backoff_initial=self.backoff,
                           backoff_max=self.backoff_max, max_inline_wait=max_inline_wait)


class SourceSpec(StepSpec):
    """A source. ``wait_for_quota = false`` makes a long quota wait count as a missing source."""

    wait_for_quota: bool = True


class StageSpec(StepSpec):
    """A stage, run in order after the sources."""


class GoalFile(BaseModel):
    """A whole goal file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Name
    title: str | None = Field(None, max_length=MAX_TITLE_CHARS)
    schedule: str | None = None
    timezone: str | None = None
    min_sources: int | None = Field(None, ge=0)
    auto_resume: bool | None = None
    source: list[SourceSpec] = Field(default_factory=list)
    stage: list[StageSpec] = Field(min_length=1)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is not None and zone_named(value) is None:
            raise ValueError(N_("unknown time zone {name!r} (use an IANA name such as "
                                "'Asia/Shanghai')").format(name=value))
        return value

    @field_validator("schedule")
    @classmethod
    def _valid_schedule(cls, value: str | None) -> str | None:
        if value is not None:
            parse_schedule(value)  # raises ValueError with the problem
        return value

    @model_validator(mode="after")
    def _consistent(self) -> GoalFile:
        counts = Counter([s.name for s in self.source] + [s.name for s in self.stage])
        duplicates = sorted(n for n, count in counts.items() if count > 1)  # linear time
        if duplicates:
            raise ValueError(N_("step names must be unique; repeated: {names}").format(
                names=", ".join(duplicates)))
        if self.min_sources is not None and self.min_sources > len(self.source):
            raise ValueError(N_("min_sources = {wanted} but only {count} source(s) are "
                                "declared").format(wanted=self.min_sources,
                                                   count=len(self.source)))
        return self

    @property
    def goal_id(self) -> str:
        return GOAL_PREFIX + self.name

    @property
    def required_sources(self) -> int:
        return len(self.source) if self.min_sources is None else self.min_sources

    def zone(self) -> ZoneInfo | None:
        return ZoneInfo(self.timezone) if self.timezone else None

    def quota_names(self) -> list[str]:
        steps: list[StepSpec] = [*self.source, *self.stage]
        return sorted({s.quota for s in steps if s.quota})


class GoalFileError(Exception):
    """A goal file that cannot be used; ``problems`` are ``FILE:LINE: field: message`` lines."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.path = path
        self.problems = problems


def load_goal_file(path: Path) -> GoalFile:
    """Read and validate ``path``; raise :class:`GoalFileError` naming file, line and field."""
    return parse_goal_text(read_goal_text(path), path)


def read_goal_text(path: Path) -> str:
    """The text of the goal file at ``path`` (UTF-8, a byte-order mark dropped), or
    :class:`GoalFileError` saying why it cannot be read."""
    try:
        return read_text(path, MAX_GOAL_FILE_BYTES)
    except FileNotFoundError:
        raise GoalFileError(path, [N_("{file}: no such file").format(file=path)]) from None
    except OSError as exc:
        raise GoalFileError(path, [N_("{file}: cannot read: {error}").format(
            file=path, error=exc)]) from None
    except TomlFileError as exc:
        raise GoalFileError(path, [str(exc)]) from None


def parse_goal_text(text: str, path: Path) -> GoalFile:
    if len(text) > MAX_GOAL_FILE_BYTES:
        raise GoalFileError(path, [N_("{file}: {size} characters; a goal file may have at most "
                                      "{most}").format(file=path, size=len(text),
                                                       most=MAX_GOAL_FILE_BYTES)])
    try:
        data = parse(text, path)
    except TomlFileError as exc:
        raise GoalFileError(path, [str(exc)]) from None
    except tomllib.TOMLDecodeError as exc:
        raise GoalFileError(path, [N_("{file}: not valid TOML: {error}").format(
            file=path, error=exc)]) from None
    _check_counts(data, path)  # before validating: validation is linear, but why bother
    try:
        return GoalFile.model_validate(data)
    except ValidationError as exc:
        raise GoalFileError(path, _problems(exc, text, path, data)) from None


def _check_counts(data: dict[str, Any], path: Path) -> None:
    for key, limit in (("stage", MAX_STAGES), ("source", MAX_SOURCES)):
        steps = data.get(key)
        if isinstance(steps, list) and len(steps) > limit:
            template = (N_("{file}: stage: {count} stages; a goal file may have at most {most}")
                        if key == "stage" else
                        N_("{file}: source: {count} sources; a goal file may have at most {most}"))
            raise GoalFileError(path, [template.format(file=path, count=len(steps),
                                                       most=limit)])


def _problems(exc: ValidationError, text: str, path: Path, data: dict[str, Any]) -> list[str]:
    lines = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        line = locate(text, loc)
        where = f"{path}:{line}" if line else str(path)
        field = _field_name(loc, data)
        message = clip_echo(error["msg"].removeprefix("Value error, "), error.get("input"))
        if error["type"] == "extra_forbidden":
            message = N_("unknown key (see the README for the keys a goal file may have)")
        elif error["type"] == "missing":
            message = N_("required key is missing")
        else:
            given = error.get("input")
            if isinstance(given, str):
                given = clip(given, MAX_SHOWN_CHARS)
            if not isinstance(given, dict | list) and loc:
                message = N_("{message} (got {value!r})").format(message=message, value=given)
        lines.append(N_("{where}: {field}: {message}").format(where=where, field=field,
                                                              message=message)
                     if field else N_("{where}: {message}").format(where=where, message=message))
    return lines


def _field_name(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    parts: list[str] = []
    node: Any = data
    for item in loc:
        if isinstance(item, int):
            label = ""
            if isinstance(node, list) and item < len(node) and isinstance(node[item], dict):
                label = str(node[item].get("name", ""))
            parts[-1] += f"[{item + 1}{' ' + repr(label) if label else ''}]" if parts else ""
        else:
            parts.append(str(item))
        node = _step_into(node, item)
    return ".".join(parts)


def _step_into(node: Any, item: Any) -> Any:
    if isinstance(node, dict):
        return node.get(item)
    if isinstance(node, list) and isinstance(item, int) and item < len(node):
        return node[item]
    return None
