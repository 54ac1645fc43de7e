"""What a person (or the scheduler, or a provider) asks of a goal, and the typed answer.

One frozen command type per intent — :class:`Resume`, :class:`Pause`, :class:`Cancel`,
:class:`SetAutoResume`, :class:`SkipReset`, :class:`SetGoalPolicy`, :class:`Start`,
:class:`Forget`, :class:`Queue` — each with one
wire name (the control socket's ``op``, a routed request's ``op``) and ``to_json``/``from_json``.
Every one goes through :meth:`core.goals.door.GoalDoor.perform` and comes back as an
:class:`ActionResult`: views render that, never their own guess.

Adding an action: a command here, its decision (:mod:`core.goals.decisions`) and its handler in
the door, and its words; the control socket, routed requests, the CLI and the bridge take it
from :data:`COMMANDS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Protocol

from core.clock import iso, parse_iso
from core.models import GoalState, Outcome, Trigger


@dataclass(frozen=True)
class Command:
    """One intent about one goal. ``wire`` is its one name on the socket and between hosts.

    Class attributes:
        wire: the ``op`` of its JSON form.
        starts_runner: it may start an agent (the host lets it finish before it stops).
    """

    wire: ClassVar[str] = ""
    starts_runner: ClassVar[bool] = False

    goal: str

    def travels(self) -> bool:
        """Whether, for a goal another host owns, it is sent to the owner (else refused)."""
        return True

    def fields(self) -> dict[str, Any]:
        """The command's own fields beyond the goal, for its JSON form."""
        return {}

    def to_json(self) -> dict[str, Any]:
        return {"op": self.wire, "goal": self.goal, **self.fields()}

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Command:
        """The command of this type that ``data`` (its JSON form) says."""
        return cls(goal=_text(data, "goal"))


@dataclass(frozen=True)
class Resume(Command):
    """Resume a paused goal — the one resume intent, whoever triggers it (see
    :mod:`core.goals.coordinator`). From outside the host (the socket, another host) a resume is
    always a person's: its wire form carries the goal only."""

    wire = "resume"
    starts_runner = True

    trigger: Trigger = Trigger.MANUAL
    context: Mapping[str, Any] = field(default_factory=dict)

    def travels(self) -> bool:
        return self.trigger is Trigger.MANUAL  # the scheduler never acts on others' goals


@dataclass(frozen=True)
class Pause(Command):
    """Pause a goal for the user: never resumed automatically."""

    wire = "pause"


@dataclass(frozen=True)
class Cancel(Command):
    """Cancel a goal for good."""

    wire = "cancel"


@dataclass(frozen=True)
class SetAutoResume(Command):
    """Switch a goal's automatic resume on or off."""

    wire = "auto-resume"

    enabled: bool = False

    def fields(self) -> dict[str, Any]:
        return {"enabled": self.enabled}

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Command:
        enabled = data.get("enabled")
        if not isinstance(enabled, bool):
            raise ValueError("'enabled' must be true or false")
        return cls(goal=_text(data, "goal"), enabled=enabled)


@dataclass(frozen=True)
class SkipReset(Command):
    """Do not resume a paused goal automatically at the reset it waits for ("Skip this
    window", from the phone): its pending automatic resume is dropped, its auto-resume switch
    stays on, so the next limit is resumed as before (issue 23)."""

    wire = "skip-reset"


@dataclass(frozen=True)
class SetGoalPolicy(Command):
    """Set one of a goal's own resume policies (``goalkeeper goal set``, the details dialog)."""

    wire = "goal-set"

    key: str = ""
    value: str = ""

    def fields(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value}

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Command:
        return cls(goal=_text(data, "goal"), key=_text(data, "key"),
                   value=_text(data, "value", empty=True))


@dataclass(frozen=True)
class Start(Command):
    """Start an idle goal (``idle → running``) through its provider's runner."""

    wire = "start"
    starts_runner = True


@dataclass(frozen=True)
class Forget(Command):
    """Stop watching a goal: its runner is stopped and its row removed (history stays). Only
    its owner does it: for another host's goal it is refused before any runner is touched."""

    wire = "forget"

    def travels(self) -> bool:
        return False


@dataclass(frozen=True)
class Queue(Command):
    """Queue new work to start right after a window's next reset (``goalkeeper queue``, Goal →
    Start at the reset…, later the phone): a Codex goal on a new or given thread, or a Claude
    prompt, in ``cwd``. The goal it makes is named in the result (``goal`` is empty here: the
    provider names it). Carried out by the host where the directory is: it never travels.

    Attributes:
        provider: ``codex`` or ``claude``.
        cwd: the working directory (absolute).
        text: the Codex goal's objective, or the Claude prompt.
        window: the window whose reset it waits for (``codex:5h``…).
        thread: for Codex, an existing thread to set the goal on (empty: a new thread).
    """

    wire = "queue"
    starts_runner = True  # preparing the work may run the agent's CLI briefly

    provider: str = ""
    cwd: str = ""
    text: str = ""
    window: str = ""
    thread: str = ""

    def travels(self) -> bool:
        return False

    def fields(self) -> dict[str, Any]:
        return {"provider": self.provider, "cwd": self.cwd, "text": self.text,
                "window": self.window, "thread": self.thread}

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Command:
        return cls(goal=str(data.get("goal") or ""), provider=_text(data, "provider"),
                   cwd=_text(data, "cwd"),
                   text=_text(data, "text"), window=_text(data, "window"),
                   thread=_text(data, "thread", empty=True) if "thread" in data else "")


class Door(Protocol):
    """What carries a command out (:class:`core.goals.door.GoalDoor`): the type the rooms that
    send commands are handed."""

    async def perform(self, command: Command, origin: str = ...) -> ActionResult: ...


#: every command by its wire name
COMMANDS: dict[str, type[Command]] = {c.wire: c for c in (
    Resume, Pause, Cancel, SetAutoResume, SkipReset, SetGoalPolicy, Start, Forget, Queue)}


def command_from_json(data: Mapping[str, Any]) -> Command:
    """The command a JSON request names (``ValueError`` for an unknown op or a bad field)."""
    kind = COMMANDS.get(str(data.get("op")))
    if kind is None:
        raise ValueError(f"unknown command {data.get('op')!r}")
    return kind.parse(data)


def _text(data: Mapping[str, Any], key: str, empty: bool = False) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not (value or empty):
        raise ValueError(f"{key!r} must be a non-empty string")
    return value


@dataclass(frozen=True)
class ActionResult:
    """What ``resume`` / ``pause`` / ``cancel`` / ``set_auto_resume`` did.

    Attributes:
        goal: the goal id asked about.
        outcome: resumed, already_running, already_resuming, deferred, refused, failed, ...
        reason: a human sentence (why refused, why deferred, what the runner said).
        not_before: for ``deferred``, the new not-before instant.
        state: the goal's state after the call (None for an unknown goal).
        notice: something the user must be told once (e.g. turning auto-resume on for a goal
            whose provider bills headless runs differently); the CLI prints it as a warning.
    """

    goal: str
    outcome: Outcome
    reason: str
    not_before: datetime | None = None
    state: GoalState | None = None
    notice: str | None = None

    @property
    def carried_out(self) -> bool:
        return self.outcome.carried_out

    def to_json(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "outcome": self.outcome.value,
            "reason": self.reason,
            "not_before": iso(self.not_before),
            "state": self.state.value if self.state else None,
            "notice": self.notice,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ActionResult:
        return cls(
            goal=str(data["goal"]),
            outcome=Outcome(data["outcome"]),
            reason=str(data.get("reason") or ""),
            not_before=parse_iso(data.get("not_before")),
            state=GoalState(data["state"]) if data.get("state") else None,
            notice=str(data["notice"]) if data.get("notice") else None,
        )
