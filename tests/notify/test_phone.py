"""The phone's signed commands on the fake clock: signing, checking, expiry, the nonce book, the
buttons on each channel, the listener's refusals, and the "skip this window" command."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from core import secrets as phone_secrets
from core.clock import FakeClock
from core.commands import ActionResult, Command, Resume, SetAutoResume, SkipReset
from core.models import GoalState, HistoryRow, Outcome, PauseReason
from core.notices import PHONE_ACTIONS, TOPIC_PATTERN, Kind, Notification
from core.notify import phone
from core.notify.channels import NtfyChannel, WebhookChannel
from core.notify.listen import (
    MAX_RECORDED_PER_HOUR,
    Backoff,
    Keyring,
    PhoneListener,
    PhoneParts,
    command_server,
)
from core.settings import Settings
from tests.support.fakes import FakeProvider, reading, until

KEY = "ab" * 32
EXPIRY = timedelta(minutes=30)
BOTH = ("resume", "keep-paused")


def test_every_phone_action_has_a_command_and_the_settings_know_them() -> None:
    assert tuple(phone.ACTIONS) == PHONE_ACTIONS
    assert phone.ACTIONS["resume"].command("g") == Resume("g")
    assert phone.ACTIONS["skip"].command("g") == SkipReset("g")
    assert phone.ACTIONS["keep-paused"].command("g") == SetAutoResume("g", enabled=False)
    assert Settings().phone_actions == "resume,keep-paused" and not Settings().phone_commands
    assert Settings(phone_actions=" skip , resume,skip").phone_actions == "skip,resume"
    with pytest.raises(ValidationError, match="unknown phone action 'start'"):
        Settings(phone_actions="resume,start")


def test_the_topic_is_derived_from_the_key_and_is_a_valid_ntfy_topic() -> None:
    topic = phone.topic_for(KEY)
    assert TOPIC_PATTERN.match(topic) and topic == phone.topic_for(KEY)
    assert topic != phone.topic_for("cd" * 32) and KEY not in topic


def test_a_signed_command_checks_and_names_goal_action_nonce_expiry(clock: FakeClock) -> None:
    body = phone.sign(KEY, "codex:t1", "resume", clock.now(), EXPIRY, nonce="0" * 32)
    data = json.loads(body)
    assert list(data) == ["v", "goal", "action", "nonce", "exp", "sig"]
    assert data["exp"] == "2026-07-07T12:30:00Z"
    expected = phone.hmac.new(KEY.encode(), b"goalkeeper-command/1\ncodex:t1\nresume\n"
                              + b"0" * 32 + b"\n2026-07-07T12:30:00Z",
                              phone.hashlib.sha256).hexdigest()
    assert data["sig"] == expected  # the documented format, byte for byte
    found = phone.check(body, KEY, clock.now(), BOTH)
    assert found == phone.PhoneCommand("codex:t1", "resume", "0" * 32,
                                       datetime.fromisoformat("2026-07-07T12:30:00+00:00"))
    assert found.command() == Resume("codex:t1")


def test_an_expired_command_is_refused(clock: FakeClock) -> None:
    body = phone.sign(KEY, "g", "resume", clock.now(), EXPIRY)
    clock.advance(29 * 60)
    assert isinstance(phone.check(body, KEY, clock.now(), BOTH), phone.PhoneCommand)
    clock.advance(60)
    refused = phone.check(body, KEY, clock.now(), BOTH)
    assert isinstance(refused, phone.Refusal) and refused.reason.startswith("expired at")


@pytest.mark.parametrize("change", [
    {"goal": "other"}, {"action": "keep-paused"}, {"nonce": "1" * 32},
    {"exp": "2027-01-01T00:00:00Z"}, {"sig": "0" * 64}, {"sig": "XYZ"},
])
def test_a_changed_field_breaks_the_signature(clock: FakeClock, change: dict[str, str]) -> None:
    data = json.loads(phone.sign(KEY, "g", "resume", clock.now(), EXPIRY)) | change
    refused = phone.check(json.dumps(data), KEY, clock.now(), BOTH)
    assert isinstance(refused, phone.Refusal) and "bad signature" in refused.reason


@pytest.mark.parametrize("text,why", [
    ("hello", "not JSON"), ("[1]", "no \"v\": 1"), ('{"v": 2}', "no \"v\": 1"),
    ('{"v": 1, "goal": "g"}', "malformed"), ("x" * 5000, "too long"),
])
def test_what_is_not_a_command_is_refused_with_its_reason(clock: FakeClock, text: str,
                                                          why: str) -> None:
    refused = phone.check(text, KEY, clock.now(), BOTH)
    assert isinstance(refused, phone.Refusal) and why in refused.reason


def test_an_action_the_user_did_not_allow_is_refused(clock: FakeClock) -> None:
    body = phone.sign(KEY, "g", "skip", clock.now(), EXPIRY)
    refused = phone.check(body, KEY, clock.now(), BOTH)
    assert isinstance(refused, phone.Refusal) and "may not skip" in refused.reason
    assert isinstance(phone.check(body, KEY, clock.now(), ("skip",)), phone.PhoneCommand)


def test_the_nonce_book_remembers_until_expiry_and_prunes(clock: FakeClock) -> None:
    first = phone.check(phone.sign(KEY, "g", "resume", clock.now(), EXPIRY), KEY, clock.now(),
                        BOTH)
    assert isinstance(first, phone.PhoneCommand)
    fresh, raw = phone.NonceBook.take(None, first, clock.now())
    assert fresh and first.nonce in json.loads(raw)
    again, raw = phone.NonceBook.take(raw, first, clock.now())
    assert not again  # a replay
    clock.advance(31 * 60)
    assert phone.NonceBook.load(raw, clock.now()) == {}  # expired: pruned
    assert phone.NonceBook.load("not json", clock.now()) == {}


def test_the_signer_puts_buttons_only_on_goals_that_wait(clock: FakeClock) -> None:
    signer = phone.Signer(KEY, "https://ntfy.example.org/gk-x", BOTH, EXPIRY)
    replies = signer.replies(Kind.SCHEDULED, "g", clock.now(), str.upper)
    assert [(r.action, r.label) for r in replies] == [("resume", "RESUME NOW"),
                                                      ("keep-paused", "KEEP PAUSED")]
    for kind in (Kind.RESUMED, Kind.DONE, Kind.TEST):
        assert signer.replies(kind, "g", clock.now(), str) == ()
    assert signer.replies(Kind.GAVE_UP, None, clock.now(), str) == ()
    assert KEY not in repr(signer)  # a logged signer does not give the key away


def _note(clock: FakeClock) -> Notification:
    signer = phone.Signer(KEY, "https://ntfy.example.org/gk-x", BOTH, EXPIRY)
    return Notification(Kind.NEEDS_ATTENTION, "Needs you: g", "m", clock.now(), goal="g",
                        replies=signer.replies(Kind.NEEDS_ATTENTION, "g", clock.now(), str))


def test_ntfy_and_webhook_carry_the_signed_replies(clock: FakeClock) -> None:
    note = _note(clock)
    request = NtfyChannel("ntfy", "https://ntfy.example.org/goals", Kind.SCHEDULED).request(
        note, None, "1", "box")
    actions = json.loads(request.body)["actions"]
    assert [a["action"] for a in actions] == ["http", "http"] and all(a["clear"] for a in actions)
    assert actions[0]["body"] == note.replies[0].body
    hook = WebhookChannel("webhook", "https://h.example.org/x", Kind.SCHEDULED).request(
        note, None, "1", "box")
    replies = json.loads(hook.body)["replies"]
    assert replies[1] == {"action": "keep-paused", "label": "Keep paused",
                          "url": "https://ntfy.example.org/gk-x", "method": "POST",
                          "body": note.replies[1].body}


def test_the_command_server_and_the_backoff() -> None:
    assert command_server(Settings()) == ""
    assert command_server(Settings(notify_ntfy_url="https://n.example.org/base/goals")) == (
        "https://n.example.org/base/")
    assert command_server(Settings(notify_ntfy_url="https://n.example.org/goals",
                                   phone_server_url="https://m.example.org")) == (
        "https://m.example.org/")
    backoff = Backoff(1, 60)
    assert [backoff.delay(n) for n in (1, 2, 3, 7, 8)] == [1, 2, 4, 60, 60]
    with pytest.raises(ValueError):
        Backoff(0, 1)


class _Keyring(Keyring):
    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    async def fetch(self, names: list[str]) -> dict[str, str | None]:
        return {n: self.values.get(n) for n in names}

    async def put(self, name: str, value: str) -> None:
        self.values[name] = value


class _Rig:
    """A listener whose door, store and keyring are dicts and lists."""

    def __init__(self, clock: FakeClock, settings: Settings) -> None:
        self.meta: dict[str, str] = {}
        self.rows: list[HistoryRow] = []
        self.done: list[tuple[Command, str]] = []
        self.keyring = _Keyring()

        async def perform(command: Command, origin: str) -> ActionResult:
            self.done.append((command, origin))
            return ActionResult(command.goal, Outcome.UPDATED, "ok")

        async def get_meta(key: str) -> str | None:
            return self.meta.get(key)

        async def set_meta(key: str, value: str) -> None:
            self.meta[key] = value

        async def record(row: HistoryRow) -> None:
            self.rows.append(row)

        self.listener = PhoneListener(settings, PhoneParts(
            perform, lambda goal: goal == "g", get_meta, set_meta, record, self.keyring, clock))


@pytest.mark.asyncio
async def test_without_a_server_the_listener_says_so_and_makes_no_key(clock: FakeClock) -> None:
    rig = _Rig(clock, Settings(phone_commands=True))
    await rig.listener.start()
    assert rig.listener.status()["state"] == "error"
    assert "notify_ntfy_url" in (rig.listener.reason or "") and rig.keyring.values == {}
    assert isinstance(await rig.listener.take("{}"), phone.Refusal) and rig.done == []


@pytest.mark.asyncio
async def test_the_listener_takes_a_command_once_and_records_refusals(clock: FakeClock) -> None:
    rig = _Rig(clock, Settings(phone_commands=True, phone_actions="keep-paused"))
    rig.keyring.values[phone.PHONE_KEY] = KEY
    rig.listener._key = KEY  # as start() leaves it, without a server to subscribe to
    body = phone.sign(KEY, "g", "keep-paused", clock.now(), EXPIRY)
    assert (await rig.listener.take(body)) == ActionResult("g", Outcome.UPDATED, "ok")
    assert rig.done == [(SetAutoResume("g", enabled=False), "phone")]
    assert isinstance(await rig.listener.take(body), phone.Refusal)
    assert isinstance(await rig.listener.take(phone.sign(
        KEY, "nobody", "keep-paused", clock.now(), EXPIRY)), phone.Refusal)
    assert len(rig.done) == 1
    assert [(r.event, r.goal, r.outcome) for r in rig.rows] == [
        ("phone_refused", "g", Outcome.REFUSED), ("phone_refused", None, Outcome.REFUSED)]
    assert rig.listener.accepted == 1 and rig.listener.refused == 2
    assert KEY not in json.dumps([r.model_dump(mode="json") for r in rig.rows])


@pytest.mark.asyncio
async def test_commands_arriving_together_take_a_nonce_once(clock: FakeClock) -> None:
    rig = _Rig(clock, Settings(phone_commands=True))
    rig.listener._key = KEY
    body = phone.sign(KEY, "g", "resume", clock.now(), EXPIRY)
    results = await asyncio.gather(*(rig.listener.take(body) for _ in range(5)))
    assert sum(isinstance(r, ActionResult) for r in results) == 1 and len(rig.done) == 1


@pytest.mark.asyncio
async def test_skip_this_window_drops_the_coming_resume_and_keeps_auto_resume(
        make_engine: Any, fake: FakeProvider, clock: FakeClock) -> None:
    fake.observe("fake:g", GoalState.PAUSED, reason=PauseReason.QUOTA,
                 resets_at=clock.now() + timedelta(hours=2), auto_resume=True)
    engine = await make_engine(fake, settings=Settings(auto_resume_default=True,
                                                       resume_jitter_seconds=0))
    before = engine.goals["fake:g"]
    assert before.next_resume_at is not None and before.auto_resume
    result = await engine.perform(SkipReset("fake:g"), "phone")
    assert result.outcome is Outcome.UPDATED
    after = engine.goals["fake:g"]
    assert after.next_resume_at is None and after.auto_resume
    assert after.state is GoalState.PAUSED and "skipped" in (after.auto_resume_note or "")
    again = await engine.perform(SkipReset("fake:g"), "phone")
    assert again.outcome is Outcome.UNCHANGED
    rows = [r for r in await engine.reads.history("fake:g") if r.origin == "phone"]
    assert [r.outcome for r in rows] == [Outcome.UNCHANGED, Outcome.UPDATED]
    unknown = await engine.perform(SkipReset("fake:none"), "phone")
    assert unknown.outcome is Outcome.UNKNOWN_GOAL


@pytest.mark.asyncio
async def test_skip_this_window_resumes_at_the_reset_after_it(
        make_engine: Any, fake: FakeProvider, clock: FakeClock) -> None:
    """With the window's period known (its reading says 5 h), the skipped reset's resume moves
    to the next one: not at the skipped reset, once after the one that follows."""
    reset = clock.now() + timedelta(hours=2)
    fake.readings = [reading("fake:5h", 100.0, clock.now(), reset)]
    fake.observe("fake:g", GoalState.PAUSED, reason=PauseReason.QUOTA, resets_at=reset,
                 auto_resume=True)
    engine = await make_engine(fake, settings=Settings(auto_resume_default=True,
                                                       resume_jitter_seconds=0))
    await engine.refresh()
    planned = engine.goals["fake:g"].next_resume_at
    assert planned is not None and planned >= reset
    result = await engine.perform(SkipReset("fake:g"), "phone")
    assert result.outcome is Outcome.UPDATED and "after the next one" in (result.reason or "")
    after = engine.goals["fake:g"]
    assert after.resets_at == reset + timedelta(hours=5) and after.auto_resume
    assert after.next_resume_at is not None and after.next_resume_at - planned == timedelta(
        hours=5)
    rows = await engine.reads.history("fake:g")
    assert rows[0].event == "resume_scheduled" and rows[1].origin == "phone"


class _BrokenKeyring(_Keyring):
    async def fetch(self, names: list[str]) -> dict[str, str | None]:
        raise phone_secrets.SecretStoreError("the keyring did not answer within 10 s")


@pytest.mark.asyncio
async def test_a_keyring_that_fails_is_an_error_state_not_a_failed_start(
        clock: FakeClock) -> None:
    rig = _Rig(clock, Settings(phone_commands=True,
                               notify_ntfy_url="http://127.0.0.1:9/goals"))
    rig.listener._p = dataclasses.replace(rig.listener._p, keyring=_BrokenKeyring())
    await rig.listener.start()  # returns at once: the key is read in the task
    await until(lambda: rig.listener.state.value == "error")
    assert "did not answer" in (rig.listener.reason or "") and rig.listener.signer() is None
    await rig.listener.stop()


@pytest.mark.asyncio
async def test_a_store_that_cannot_check_the_nonce_acts_on_nothing(clock: FakeClock) -> None:
    rig = _Rig(clock, Settings(phone_commands=True))
    rig.listener._key = KEY

    async def gone(key: str) -> str | None:
        raise OSError("store unavailable")

    rig.listener._p = dataclasses.replace(rig.listener._p, get_meta=gone)
    line = json.dumps({"id": "m1", "event": "message",
                       "message": phone.sign(KEY, "g", "resume", clock.now(), EXPIRY)})
    await rig.listener._on_line(line.encode())  # logged, not raised: the stream goes on
    assert rig.done == [] and "phone-since" not in rig.meta


@pytest.mark.asyncio
async def test_a_flood_of_junk_is_counted_but_not_written_row_by_row(clock: FakeClock) -> None:
    rig = _Rig(clock, Settings(phone_commands=True))
    rig.listener._key = KEY
    for _ in range(MAX_RECORDED_PER_HOUR + 10):
        await rig.listener.take("junk")
    assert rig.listener.refused == MAX_RECORDED_PER_HOUR + 10
    assert len(rig.rows) == MAX_RECORDED_PER_HOUR
    clock.advance(3601)
    await rig.listener.take("junk")
    assert len(rig.rows) == MAX_RECORDED_PER_HOUR + 1  # an hour later: recorded again
