"""core/toml_file.py and the nesting scan of core/toml_lines.py: what a person-edited TOML file may
be, and how each refusal says where (issue 19). The processes that read such files are tested in
tests/faults/test_foreign_encodings.py."""

from __future__ import annotations

import codecs
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core import i18n
from core.limits import MAX_SHOWN_CHARS, MAX_TOML_DEPTH, MAX_TOML_VALUE_CHARS
from core.providers.pipeline.catalog import PipelineCatalog
from core.providers.pipeline.goalfile import GoalFileError, load_goal_file
from core.settings import SettingsError, load_settings
from core.toml_file import TomlFileError, decode, parse, read_text
from core.toml_lines import nesting_line

GOAL = 'name = "digest"\n[[stage]]\nname = "a"\ncommand = ["true"]\n'


@pytest.mark.parametrize(("text", "line"), [
    ("a = [[[1]]]\n", None),
    ("a = 1\nb = [[[[1]]]]\n", 2),
    ('a = "[[[[[["\nb = [1]\n', None),
    ("a = '[[[[[['  # [[[[[[\nb = [1]\n", None),
    ('a = """\n[[[[\\"""[[[\n"""\nb = [[[[1]]]]\n', 4),
    ("a = '''\n[[[[[[\n'''\nb = [[[[1]]]]\n", 4),
    ('a = "x\\"[[[[["\n', None),
    ("[[a]]\nb = [[1]]\n", None),  # a header's brackets close before the next line
    ("a = 1\nb = [{ c = { d = { e = 1 } } }]\n", 2),
])
def test_nesting_is_counted_outside_strings_and_comments(text: str, line: int | None) -> None:
    assert nesting_line(text, 3) == line


def test_the_deepest_real_files_are_far_below_the_limit() -> None:
    assert nesting_line("x = " + "[" * MAX_TOML_DEPTH + "]" * MAX_TOML_DEPTH, MAX_TOML_DEPTH) \
        is None


@pytest.mark.parametrize(("raw", "what"), [
    (codecs.BOM_UTF32_LE + "a = 1".encode("utf-32-le"), "a UTF-32 byte-order mark"),
    ("a = 1".encode("utf-16-be"), "a NUL byte at line 1, column 1"),  # UTF-16 without a mark
    ("x = '中文'\ny = '\xe9'\n".encode("latin-1", errors="ignore"), "byte 0xe9 at line 2"),
    ("# 中文\nk = 'é'".encode() + b"\xff", "byte 0xff at line 2, column 8"),  # columns count
])                                                                          # characters
def test_what_is_not_utf8_is_said_with_where(raw: bytes, what: str, tmp_path: Path) -> None:
    with pytest.raises(TomlFileError) as err:
        decode(raw, tmp_path / "f.toml")
    assert f"{tmp_path / 'f.toml'} is not UTF-8 text ({what}" in str(err.value)


def test_a_utf8_bom_is_dropped(tmp_path: Path) -> None:
    assert decode(codecs.BOM_UTF8 + b"a = 1\n", tmp_path) == "a = 1\n"


def test_dotted_headers_nest_too(tmp_path: Path) -> None:
    text = "a = 1\n[" + ".".join(["t"] * (MAX_TOML_DEPTH + 1)) + "]\nx = 1\n"
    with pytest.raises(TomlFileError, match=r"f\.toml:2: arrays and tables are nested more"):
        parse(text, tmp_path / "f.toml")


def test_a_long_key_is_refused_and_shown_cut(tmp_path: Path) -> None:
    key = "k" * (MAX_TOML_VALUE_CHARS + 1)
    with pytest.raises(TomlFileError) as err:
        parse(f"a = 1\n[t]\n{key} = 1\n", tmp_path / "f.toml")
    assert f"f.toml:3: t.{'k' * 10}" in str(err.value)
    assert len(str(err.value)) < 3 * MAX_SHOWN_CHARS + 200


def test_only_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "f.toml"
    path.write_bytes(b"a = 1\n" * 100)
    with pytest.raises(TomlFileError, match=r"f\.toml:3: the file is 600 bytes long; at most "
                                            r"15 bytes are accepted"):
        read_text(path, 15)


def test_the_early_language_read_never_fails(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_bytes(codecs.BOM_UTF8 + b'language = "zh_CN"\n')
    assert i18n.language_setting(config, {}) == "zh_CN"
    config.write_text('language = "zh_CN"\nx = ' + "[" * 100_000 + "]" * 100_000)
    assert i18n.language_setting(config, {}) == ""  # the strict read says why


def test_the_messages_speak_chinese(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_bytes("# 中文注释\n".encode("gbk"))
    i18n.use_language("zh_CN")
    with pytest.raises(SettingsError) as err:
        load_settings(config, {})
    assert str(err.value) == (f"{config} 不是 UTF-8 文本（第 1 行第 3 列的字节 0xd6）；"
                              "请将其另存为 UTF-8")


def test_a_bad_setting_shows_a_long_value_cut(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'language = "{"a" * 100_000}"\n')
    with pytest.raises(SettingsError) as err:
        load_settings(config, {"GOALKEEPER_HOST_ID": "b" * 100_000})
    assert f"{config}:1" in str(err.value) and len(str(err.value)) < 1000


def test_a_bad_goal_value_is_shown_cut(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    path.write_text(GOAL + f'timeout = "{"9" * 100_000}"\n')
    with pytest.raises(GoalFileError) as err:
        load_goal_file(path)
    assert "g.toml:5: stage" in str(err.value) and len(str(err.value)) < 1000


def test_a_stored_goal_file_edited_into_gbk_is_an_error_and_kept(tmp_path: Path) -> None:
    catalog = PipelineCatalog(tmp_path / "pipelines")
    source = tmp_path / "digest.toml"
    source.write_text(GOAL)
    catalog.add(source, datetime(2026, 12, 1, tzinfo=UTC))
    snapshot = tmp_path / "pipelines" / "digest" / "goal.toml"
    edited = ("# 中文注释\n" + GOAL).encode("gbk")
    snapshot.write_bytes(edited)
    entry = catalog.get("digest")
    assert entry is not None and entry.goal is None
    assert entry.error == f"{snapshot} is not UTF-8 text (byte 0xd6 at line 1, column 3); save " \
                          "it as UTF-8"
    assert snapshot.read_bytes() == edited
