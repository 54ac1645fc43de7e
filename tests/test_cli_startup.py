"""Start-up by need (issue 24): a command imports only what it uses.

Each command runs in a fresh interpreter that prints ``sorted(sys.modules)`` on its way out; a
module outside the command's allowed set fails the test. ``--version``, ``--help`` and an
argument error load none of the core beyond what printing needs; ``status`` and ``history``
read the store and render, without the engine, the providers, asyncio or the GUI.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import VERBS
from tests.support.status_store import seed_status_home

WRAPPER = ("import atexit, json, sys; "
           "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr)); "
           "sys.argv = ['goalkeeper', *sys.argv[1:]]; "
           "from core.cli import main; sys.exit(main())")
#: what printing a line, the help or a usage error may load of the core
#: (core.atomic: core.paths makes its directories private with it; standard library only)
PRINTING = {"core", "core.cli", "core.i18n", "core.i18n.catalogue", "core.limits",
            "core.paths", "core.atomic", "core.toml_lines"}
#: never loaded by a read-only command
FORBIDDEN = ("asyncio", "core.engine", "core.host", "core.providers", "core.goals.door",
             "core.goals.coordinator", "core.goals.scheduler", "gui", "PySide6", "qasync",
             "psycopg")


def loaded(tmp_path: Path, *argv: str) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={"GOALKEEPER_HOME": str(tmp_path / "gk"), "PATH": "/usr/bin:/bin",
                               "HOME": str(tmp_path), "LANG": "C.UTF-8"})
    modules = json.loads(done.stderr.strip().splitlines()[-1])
    return done.returncode, set(modules)


@pytest.mark.parametrize(("argv", "code"), [
    (["--version"], 0),
    (["--help"], 0),
    (["no-such-command"], 2),
    (["--no-such-option"], 2),
])
def test_printing_commands_load_nothing_of_the_core_beyond_printing(
        tmp_path: Path, argv: list[str], code: int) -> None:
    returncode, modules = loaded(tmp_path, *argv)
    assert returncode == code
    assert {m for m in modules if m == "core" or m.startswith("core.")} <= PRINTING
    assert "pydantic" not in modules


def test_version_loads_not_even_the_translations(tmp_path: Path) -> None:
    assert {m for m in loaded(tmp_path, "--version")[1] if m.startswith("core")} == {
        "core", "core.cli"}


@pytest.mark.parametrize("argv", [["status"], ["status", "--json"], ["history"],
                                  ["history", "--limit", "x"]])
def test_read_only_commands_load_the_store_but_not_the_engine(
        tmp_path: Path, argv: list[str]) -> None:
    _code, modules = loaded(tmp_path, *argv)
    wrong = sorted(m for m in modules for f in FORBIDDEN if m == f or m.startswith(f + "."))
    assert wrong == []
    assert "core.cli.goals" in modules
    # only the module of the command run: not those of the others
    assert not {"core.cli.hosts", "core.cli.pipelines", "core.cli.claude"} & modules


def test_the_table_of_commands_says_what_each_module_registers() -> None:
    """``--help`` and an unknown command's error are drawn from :data:`core.cli.VERBS`: the same
    names, order and help as the modules' own parsers."""
    common = argparse.ArgumentParser(add_help=False)
    for module, verbs in VERBS:
        sub = argparse.ArgumentParser().add_subparsers(dest="command")
        importlib.import_module(f"core.cli.{module}").register(sub, common)
        assert [(a.dest, a.help) for a in sub._choices_actions] == list(verbs)


@pytest.mark.parametrize(("argv", "data"), [(["status"], False), (["status", "--json"], False),
                                            (["history"], False), (["status"], True),
                                            (["status", "--json"], True)])
def test_read_only_commands_load_no_pydantic_once_the_settings_are_validated(
        tmp_path: Path, argv: list[str], data: bool) -> None:
    """The first run validates ``config.toml`` (pydantic) and keeps a snapshot of the result;
    the next ones read it and build no model (:mod:`core.settings.snapshot`); ``status``
    reads the goals and readings of a store as plain records (:mod:`core.models.plain`)."""
    if data:
        seed_status_home(tmp_path / "gk")
    else:
        (tmp_path / "gk").mkdir()
        (tmp_path / "gk" / "config.toml").write_text("max_auto_attempts = 4\n",
                                                     encoding="utf-8")
    assert "pydantic" in loaded(tmp_path, *argv)[1]
    code, modules = loaded(tmp_path, *argv)
    assert code == 0
    assert not {m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")}
    assert not {"core.settings.schema", "core.models.records"} & modules


def test_the_language_is_looked_for_in_toml_only_where_a_key_could_name_it(
        tmp_path: Path) -> None:
    """``config.toml`` is parsed early for its ``language`` only when the word (or an escape
    that could spell it) is in it; a snapshot's settings then need no TOML at all."""
    from core.i18n import language_setting

    config = tmp_path / "config.toml"
    config.write_text('"\\u006canguage" = "zh_CN"\n', encoding="utf-8")
    assert language_setting(config, {}) == "zh_CN"
    config.write_text('[x]\nlanguage = "zh_CN"\n', encoding="utf-8")
    assert language_setting(config, {}) == ""
    config.write_text("max_auto_attempts = 4\n", encoding="utf-8")
    assert language_setting(config, {}) == ""
    (tmp_path / "gk").mkdir()
    (tmp_path / "gk" / "config.toml").write_text("max_auto_attempts = 4\n", encoding="utf-8")
    loaded(tmp_path, "status")
    assert "tomllib" not in loaded(tmp_path, "status")[1]


@pytest.mark.parametrize(("argv", "leaving", "frozen"), [
    (["status"], True, True),  # a read-only command, the process ending: no last collection
    (["status"], False, False),  # main() called in a process that goes on (a test, the GUI)
    (["hosts"], True, False),  # a command not marked read-only: finalized as ever
])
def test_the_script_skips_the_last_collection_only_after_a_command_that_read(
        tmp_path: Path, argv: list[str], leaving: bool, frozen: bool) -> None:
    code = ("import gc, sys; from core.cli import main; "
            f"main({argv!r}, leaving={leaving}); print(gc.get_freeze_count() > 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL,
                          env={"GOALKEEPER_HOME": str(tmp_path / "gk"), "PATH": "/usr/bin:/bin",
                               "HOME": str(tmp_path), "LANG": "C.UTF-8"})
    assert done.stdout.strip().splitlines()[-1] == str(frozen), done.stderr
