"""What is a secret and what is not (issue 19): secret values are masked, places never.

``PWD`` once matched the secret-name pattern: the directory the host was started from was masked
in the database, and every Claude session under it lost its cwd.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from core.logs import remove_handlers, setup_logging
from core.models import Goal, GoalState
from core.redact import (
    KNOWN,
    MASK,
    Redactor,
    is_path,
    maskable,
    remember,
    secret_environment,
    secret_name,
)
from core.store import common
from core.store.common import masked, masked_data, validated
from tests.codex.fixtures import T0

MARK = MASK.decode()
API_KEY = "sk-test-redaction-9f1c2b7a"


@pytest.mark.parametrize("name", [
    "PWD", "OLDPWD", "HOME", "PATH", "XDG_RUNTIME_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME",
    "JAVA_HOME", "LD_LIBRARY_PATH", "SSH_KEY_PATH", "PASSWORD_STORE_DIR", "TOKEN_CACHE_DIR",
    "AWS_SHARED_CREDENTIALS_FILE", "SSH_AUTH_SOCK", "XAUTHORITY", "AUTH_MODE",
    "KEYBOARD_LAYOUT", "PYTHON_KEYRING_BACKEND", "GNOME_KEYRING_CONTROL", "PWD_BACKUP",
    "DESKTOP_SESSION", "WAYLAND_DISPLAY"])
def test_places_and_ordinary_variables_are_never_secrets(name: str) -> None:
    assert not secret_name(name)


@pytest.mark.parametrize("name", [
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "PGPASSWORD",
    "MYSQL_PWD", "DB_PASSWD", "AWS_SECRET_ACCESS_KEY", "SECRET_KEY_BASE",
    "GOOGLE_APPLICATION_CREDENTIALS", "NPM_CONFIG__AUTH", "SESSION_COOKIE", "apikey"])
def test_names_that_say_key_token_secret_password_or_credential_are(name: str) -> None:
    assert secret_name(name)


def terminal_environment(home: Path) -> dict[str, str]:
    """A shell's environment in ``$HOME``, come from a project there (``cd ~``)."""
    project = home / "src" / "app"
    project.mkdir(parents=True, exist_ok=True)
    return {"PWD": str(home), "OLDPWD": str(project), "HOME": str(home),
            "PATH": "/usr/bin:/bin", "SHELL": "/bin/bash", "LOGNAME": "someone-long",
            "XDG_RUNTIME_DIR": "/run/user/1000", "SSH_AUTH_SOCK": "/run/user/1000/ssh-agent",
            "OPENAI_API_KEY": API_KEY, "TOKENIZERS_PARALLELISM": "false",
            "GOOGLE_APPLICATION_CREDENTIALS": str(project),
            "SIGNING_KEY": "/tDw3+base64/startsWithSlash="}


def test_from_a_terminal_in_home_only_the_secret_values_are_secrets(tmp_path: Path) -> None:
    found = secret_environment(terminal_environment(tmp_path))
    # a secret-named variable holding an existing path is no secret; a base64 key that merely
    # starts with "/" names nothing here and still is
    assert sorted(found) == sorted([API_KEY, "/tDw3+base64/startsWithSlash="])


def test_a_short_value_or_a_path_is_never_remembered_for_the_store_and_the_log(
        tmp_path: Path) -> None:
    assert not maskable("hunter2")  # 7 characters
    assert not maskable(str(tmp_path)) and not maskable("~")
    assert maskable("a-long-keyring-password") and maskable("/no/such/dir/sk-0123")
    remember(["hunter2", str(tmp_path)])
    assert KNOWN.text(f"hunter2 in {tmp_path}") == f"hunter2 in {tmp_path}"


def test_a_multi_line_secrets_short_lines_are_not_masked_in_stored_text() -> None:
    stored = Redactor(["-----BEGIN-----\nabc1\nQ2FuYXJ5TGluZU9uZS1hYmNkZWY\n"], min_length=8)
    assert stored.text("abc1 and Q2FuYXJ5TGluZU9uZS1hYmNkZWY") == f"abc1 and {MARK}"
    assert Redactor(["-----BEGIN-----\nabc1\n"]).text("abc1") == MARK  # a step's output


def test_the_log_of_a_host_started_from_home_masks_its_key_and_no_path(
        tmp_path: Path) -> None:
    environ = terminal_environment(tmp_path)
    handlers = setup_logging(tmp_path / "log" / "goalkeeper.log", environ=environ)
    try:
        logging.getLogger("core.test").warning("resuming in %s with %s (was in %s)",
                                               tmp_path / "repo", API_KEY, environ["OLDPWD"])
    finally:
        remove_handlers(handlers)
    text = (tmp_path / "log" / "goalkeeper.log").read_text()
    assert f"resuming in {tmp_path / 'repo'} with {MARK} (was in {environ['OLDPWD']})" in text
    assert masked_data({"cwd": str(tmp_path)}) == {"cwd": str(tmp_path)}


@pytest.mark.parametrize("text, expected", [
    ("/home/someone/src/app", True), ("~/src/app", True), ("~", True),
    ("C:\\Users\\someone\\app", True), ("\\\\server\\share\\app", True),
    ("src/app", False), ("/usr/bin/curl -H 'Authorization: x'", False),
    ("/home/a\n/home/b", False), ("", False)])
def test_what_counts_as_a_path(text: str, expected: bool) -> None:
    assert is_path(text) is expected


def test_a_path_with_a_blank_is_a_path_where_it_exists(tmp_path: Path) -> None:
    spaced = tmp_path / "My Projects"
    assert not is_path(str(spaced))
    spaced.mkdir()
    assert is_path(str(spaced)) and is_path(str(spaced), existing=True)
    assert is_path("/no/such/place") and not is_path("/no/such/place", existing=True)


def test_the_store_never_masks_inside_a_path_of_goal_data(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the process takes for a secret, a cwd, a transcript or a goal file is stored
    as it is (it is used: a resume runs there); text around it is masked."""
    secret = "proj-token-4711"
    monkeypatch.setattr(common, "KNOWN", Redactor([secret], min_length=8))
    cwd, spaced = f"/home/someone/{secret}", tmp_path / f"My {secret}"
    spaced.mkdir()
    data = {"cwd": cwd, "files": [f"{cwd}/goal.toml", str(spaced)],
            "note": f"token {secret} used", "nested": {"transcript": f"~/{secret}/t.jsonl"}}
    assert masked_data(data) == {
        "cwd": cwd, "files": [f"{cwd}/goal.toml", str(spaced)], "note": f"token {MARK} used",
        "nested": {"transcript": f"~/{secret}/t.jsonl"}}
    assert masked(f"failed in {cwd}") == f"failed in /home/someone/{MARK}"  # a text, not a path
    goal = Goal(id="fake:a", provider="fake", title="t", state=GoalState.PAUSED,
                data=data, created_at=T0, updated_at=T0)
    stored = validated(goal)
    assert stored is not None and stored.data["cwd"] == cwd
