"""Answers from the phone: the signed commands a notification's buttons publish (issue 23).

A notification about a goal that waits for the user — a resume was scheduled, it gave up, it
needs attention — carries one button per allowed :class:`PhoneAction`. Tapping one publishes a
**signed command** to this install's private *command topic* on the ntfy server; the host
subscribes to that topic (:mod:`core.notify.listen`) and, after checking the command here, hands
the action's typed command to the one door with origin ``phone``.

The command is one compact JSON object, the exact body the button publishes::

    {"v":1,"goal":"<goal id>","action":"resume","nonce":"<32 hex>",
     "exp":"2026-12-06T06:00:00Z","sig":"<64 hex>"}

``sig`` is HMAC-SHA256, keyed with this install's *phone key* (the keyring's ``phone-key``, 32
random bytes as hex, made on first use), over the UTF-8 bytes of :func:`signed_text`:
``goalkeeper-command/1\\n<goal>\\n<action>\\n<nonce>\\n<exp>``. The command topic is derived
from the same key (:func:`topic_for`), so nothing about it is written to a file; knowing the
topic lets someone publish, never sign.

:func:`check` refuses (with a reason, never an exception) a message that is not a command, a bad
signature, an expired command (``exp`` is checked against the injected clock), an action the
user did not allow, and a nonce already used (:class:`NonceBook`, kept in the store until the
command would have expired, so a restart does not forget it). The goal is checked by the door's
own lookup (:mod:`core.notify.listen`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from core.clock import iso, parse_iso
from core.commands import Command, Resume, SetAutoResume, SkipReset
from core.i18n import N_
from core.notices import Kind, Reply

VERSION = 1
PHONE_KEY = "phone-key"
ORIGIN = "phone"
#: the notifications whose goal waits for the user or for a reset
KINDS = frozenset({Kind.SCHEDULED, Kind.GAVE_UP, Kind.NEEDS_ATTENTION})
NONCE_PATTERN = re.compile(r"^[0-9a-f]{32}$")
SIG_PATTERN = re.compile(r"^[0-9a-f]{64}$")
#: a command larger than this is not one of ours (ntfy turns > 4 KiB into an attachment anyway)
MAX_MESSAGE_BYTES = 2048


@dataclass(frozen=True)
class PhoneAction:
    """One button: its wire name, its label and the typed command it becomes.

    Attributes:
        wire: the command's ``action`` (public: add, never rename).
        label: the button's text (translated when the notification is made).
        command: the door's command for a goal.
    """

    wire: str
    label: str
    command: Callable[[str], Command]


#: every action a phone may take, by wire name, in button order. A new one (say ``start``) is a
#: row here and a command the door knows.
ACTIONS: dict[str, PhoneAction] = {a.wire: a for a in (
    PhoneAction("resume", N_("Resume now"), lambda goal: Resume(goal)),
    PhoneAction("skip", N_("Skip this window"), lambda goal: SkipReset(goal)),
    PhoneAction("keep-paused", N_("Keep paused"),
                lambda goal: SetAutoResume(goal, enabled=False)),
)}
def allowed(text: str) -> tuple[str, ...]:
    return tuple(n for n in text.split(",") if n in ACTIONS)


def new_key() -> str:
    return secrets.token_hex(32)


def topic_for(key: str) -> str:
    """The command topic: ``gk-`` and 40 hex digits derived from the key (a 43-character ntfy
    topic; the key cannot be recovered from it)."""
    return "gk-" + hmac.new(key.encode(), b"goalkeeper command topic",
                            hashlib.sha256).hexdigest()[:40]


def signed_text(goal: str, action: str, nonce: str, exp: str) -> bytes:
    return f"goalkeeper-command/{VERSION}\n{goal}\n{action}\n{nonce}\n{exp}".encode()


def signature(key: str, goal: str, action: str, nonce: str, exp: str) -> str:
    return hmac.new(key.encode(), signed_text(goal, action, nonce, exp),
                    hashlib.sha256).hexdigest()


def sign(key: str, goal: str, action: str, now: datetime, expiry: timedelta,
         nonce: str | None = None) -> str:
    """The command's JSON body, signed; ``exp`` is ``now + expiry`` to the second."""
    nonce = nonce or secrets.token_hex(16)
    exp = iso((now + expiry).replace(microsecond=0)) or ""
    body = {"v": VERSION, "goal": goal, "action": action, "nonce": nonce, "exp": exp,
            "sig": signature(key, goal, action, nonce, exp)}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class PhoneCommand:
    """A command whose signature, expiry and action were checked."""

    goal: str
    action: str
    nonce: str
    expires: datetime

    def command(self) -> Command:
        return ACTIONS[self.action].command(self.goal)


@dataclass(frozen=True)
class Refusal:
    """Why a message was not acted on (secret-free), and the goal it named, if any."""

    reason: str
    goal: str | None = None


def parse(text: str) -> dict[str, Any] | Refusal:
    if len(text.encode()) > MAX_MESSAGE_BYTES:
        return Refusal(N_("not a Goalkeeper command (too long)"))
    try:
        data = json.loads(text)
    except ValueError:
        return Refusal(N_("not a Goalkeeper command (not JSON)"))
    if not isinstance(data, dict) or data.get("v") != VERSION:
        return Refusal(N_("not a Goalkeeper command (no \"v\": 1)"))
    fields = ("goal", "action", "nonce", "exp", "sig")
    if not all(isinstance(data.get(k), str) and data[k] for k in fields):
        return Refusal(N_("malformed command: `goal`, `action`, `nonce`, `exp` and `sig` must be "
                          "strings"), data.get("goal") if isinstance(data.get("goal"), str)
                       else None)
    return data


def check(text: str, key: str, now: datetime, actions: tuple[str, ...]
          ) -> PhoneCommand | Refusal:
    """The command ``text`` carries, or why it is refused (nonces are the caller's)."""
    data = parse(text)
    if isinstance(data, Refusal):
        return data
    goal, action, nonce, exp, sig = (data[k] for k in ("goal", "action", "nonce", "exp", "sig"))
    if not (NONCE_PATTERN.match(nonce) and SIG_PATTERN.match(sig)) or not hmac.compare_digest(
            signature(key, goal, action, nonce, exp), sig):
        return Refusal(N_("bad signature (not signed with this install's phone key)"), goal)
    try:
        expires = parse_iso(exp)
    except ValueError:
        expires = None
    if expires is None:
        return Refusal(N_("malformed command: `exp` is not a time"), goal)
    if expires <= now:
        return Refusal(N_("expired at {time}").format(time=exp), goal)
    if action not in ACTIONS:
        return Refusal(N_("unknown action {action!r}").format(action=action), goal)
    if action not in actions:
        return Refusal(N_("the phone may not {action} (setting phone_actions)").format(
            action=action), goal)
    return PhoneCommand(goal, action, nonce, expires)


class NonceBook:
    """The nonces already used, each until its command's expiry, kept in the store's ``meta``
    (one JSON entry, pruned on every use) so a replay is refused across a restart too.

    ``read``/``write`` are the store's ``get_meta``/``set_meta`` for :data:`META_KEY`, run on
    the write path by the caller.
    """

    META_KEY = "phone-nonces"

    @staticmethod
    def load(raw: str | None, now: datetime) -> dict[str, str]:
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            return {}
        kept: dict[str, str] = {}
        for nonce, exp in data.items():
            try:
                until = parse_iso(exp) if isinstance(exp, str) else None
            except ValueError:
                until = None
            if until is not None and until > now:
                kept[str(nonce)] = exp
        return kept

    @classmethod
    def take(cls, raw: str | None, command: PhoneCommand, now: datetime
             ) -> tuple[bool, str]:
        """Whether the nonce was fresh, and the entry to store (expired ones pruned)."""
        used = cls.load(raw, now)
        fresh = command.nonce not in used
        used[command.nonce] = iso(command.expires) or ""
        return fresh, json.dumps(used, separators=(",", ":"))


@dataclass(frozen=True)
class Signer:
    """What the notifications need to put buttons on a goal's notification.

    Attributes:
        key: the phone key (never logged).
        url: the command topic's URL.
        actions: the allowed actions' wire names.
        expiry: how long a button's command stays valid.
    """

    key: str = field(repr=False)
    url: str
    actions: tuple[str, ...]
    expiry: timedelta

    def replies(self, kind: Kind, goal: str | None, now: datetime,
                translate: Callable[[str], str]) -> tuple[Reply, ...]:
        """One signed command per allowed action, for the kinds in :data:`KINDS`."""
        if goal is None or kind not in KINDS:
            return ()
        return tuple(Reply(name, translate(ACTIONS[name].label), self.url,
                           sign(self.key, goal, name, now, self.expiry))
                     for name in ACTIONS if name in self.actions)
