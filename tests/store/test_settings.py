"""The settings of several machines: store_url (never with a password), host_id, accounts."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.identity import host_id_of, machine_name
from core.settings import Settings, SettingsError, load_settings
from core.store.target import StoreTarget


@pytest.mark.parametrize("url", ["postgresql://me@db.example/goals",
                                 "postgres:///goals?host=/run/postgresql",
                                 "postgresql:///?service=goalkeeper",
                                 "postgresql://me@db/goals?sslmode=verify-full"])
def test_a_store_url_without_a_password_is_taken(url: str) -> None:
    assert Settings(store_url=url).store_url == url
    assert StoreTarget(Path("x.db"), url).shared


@pytest.mark.parametrize("url", ["postgresql://me:hunter2-pw@db/goals",
                                 "postgresql://me@db/goals?password=hunter2-pw",
                                 # percent-encoded or upper-case keys are the same key to libpq
                                 "postgresql://me@db/goals?%70assword=hunter2-pw",
                                 "postgresql://me@db/goals?sslmode=require&PASS%57ORD=hunter2-pw",
                                 "postgresql://me@db/goals?sslpassword=hunter2-pw#x"])
def test_a_password_in_store_url_is_refused_and_never_shown(url: str, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'store_url = "{url}"\n')
    with pytest.raises(SettingsError) as caught:
        load_settings(config, {})
    assert "goalkeeper secret set store-password" in str(caught.value)
    assert "hunter2" not in str(caught.value)
    with pytest.raises(SettingsError) as from_env:
        load_settings(tmp_path / "none.toml", {"GOALKEEPER_STORE_URL": url})
    assert "hunter2" not in str(from_env.value) and "GOALKEEPER_STORE_URL" in str(from_env.value)


def test_only_postgresql_is_a_shared_store() -> None:
    with pytest.raises(ValueError, match="is not a store"):
        Settings(store_url="mysql://me@db/goals")
    assert not StoreTarget(Path("x.db"), Settings().store_url).shared


def test_host_ids_and_accounts_are_names(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "none.toml", {"GOALKEEPER_HOST_ID": "laptop-2",
                                                      "GOALKEEPER_ACCOUNT": "me@example.com"})
    assert (settings.host_id, settings.account) == ("laptop-2", "me@example.com")
    with pytest.raises(SettingsError, match="host_id"):
        load_settings(tmp_path / "none.toml", {"GOALKEEPER_HOST_ID": "my laptop!"})
    assert host_id_of("") == machine_name() and host_id_of("desk") == "desk"
    assert machine_name() and " " not in machine_name()
    # a second data directory on this machine is a host of its own, stable across starts
    other = host_id_of("", tmp_path / "demo-home")
    assert other.startswith(machine_name() + "-") and other == host_id_of("", tmp_path /
                                                                           "demo-home")
    assert host_id_of("desk", tmp_path / "demo-home") == "desk"
