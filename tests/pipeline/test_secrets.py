"""Secrets: only in the keyring, wrapped calls, a clear message without a usable backend."""

from __future__ import annotations

import io
import json
import sys

import pytest

from core.cli import main
from tests.pipeline.conftest import MemoryKeyring


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_secret_commands_use_only_the_keyring(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch,
                                              memory_keyring: MemoryKeyring) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("hunter2-canary\n"))
    code, out, _ = cli(capsys, "secret", "set", "GITHUB_TOKEN")
    assert code == 0 and "hunter2" not in out
    assert memory_keyring.entries[("Goalkeeper", "GITHUB_TOKEN")] == "hunter2-canary"
    code, out, _ = cli(capsys, "secret", "list", "--json")
    assert json.loads(out) == [{"name": "GITHUB_TOKEN", "present": True}]
    assert cli(capsys, "secret", "delete", "GITHUB_TOKEN")[0] == 0
    assert cli(capsys, "secret", "delete", "GITHUB_TOKEN")[0] == 1
    assert cli(capsys, "secret", "list")[1].strip() == "no secrets stored"
    code, _, err = cli(capsys, "secret", "set", "9-bad")
    assert code == 1 and "not a valid secret name" in err


def test_without_a_usable_keyring_the_message_says_how_to_get_one(
        capsys: pytest.CaptureFixture[str]) -> None:
    import keyring
    from keyring.backends import fail, null

    for backend in (fail.Keyring(), null.Keyring()):
        keyring.set_keyring(backend)
        code, _, err = cli(capsys, "secret", "list")
        assert code == 2 and "no usable keyring backend" in err and "gnome-keyring" in err


class ExplodingKeyring(MemoryKeyring):
    """Fails like an unhealthy Secret Service does: not with a KeyringError."""

    def get_password(self, service: str, username: str) -> str | None:
        raise ConnectionError("org.freedesktop.DBus.Error.TimedOut")


def test_backend_failures_are_wrapped_without_values() -> None:
    from core.secrets import SecretStore, SecretStoreError

    store = SecretStore(backend=ExplodingKeyring())
    with pytest.raises(SecretStoreError, match="failed to read TOKEN: ConnectionError"):
        store.get("TOKEN")


@pytest.mark.asyncio
async def test_fetch_runs_off_the_loop_with_a_time_limit() -> None:
    import threading

    from core.secrets import SecretStore, SecretStoreError

    release = threading.Event()

    class Hanging(MemoryKeyring):
        def get_password(self, service: str, username: str) -> str | None:
            release.wait(5)
            return None

    store = SecretStore(backend=Hanging(), timeout=0.2)
    try:
        with pytest.raises(SecretStoreError, match=r"did not answer within 0\.2 s"):
            await store.fetch(["TOKEN"])
    finally:
        release.set()
    ok = SecretStore(backend=MemoryKeyring())
    ok.put("TOKEN", "abcd-1234")
    assert await ok.fetch(["TOKEN", "OTHER"]) == {"TOKEN": "abcd-1234", "OTHER": None}


def test_empty_values_are_refused(memory_keyring: MemoryKeyring) -> None:
    from core.secrets import SecretStore, SecretStoreError

    with pytest.raises(SecretStoreError, match="empty"):
        SecretStore().put("TOKEN", "")
    assert memory_keyring.entries == {}
