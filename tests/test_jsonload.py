"""JSON refused by depth before parsing (issue 21: a 50,000-deep file raised RecursionError)."""

from __future__ import annotations

import pytest

from core.providers import jsonload


def test_deep_json_is_refused_as_a_value_error_before_parsing() -> None:
    with pytest.raises(ValueError, match="nested deeper than 128"):
        jsonload.loads(b"[" * 50_000 + b"]" * 50_000)
    with pytest.raises(jsonload.TooDeep):
        jsonload.loads('{"a":' * 129 + "1" + "}" * 129)


def test_brackets_inside_strings_do_not_count() -> None:
    text = '{"a": "' + "[" * 10_000 + '\\" {{{", "b": [[1]]}'
    assert jsonload.loads(text)["b"] == [[1]]
    assert jsonload.loads("[" * 128 + "]" * 128) is not None


def test_a_json_file_over_the_size_limit_is_refused_unread(tmp_path, monkeypatch) -> None:
    from core.providers import jsonload
    from core.providers.claude.config import read_json_checked

    monkeypatch.setattr(jsonload, "MAX_JSON_FILE_BYTES", 1 << 10)
    path = tmp_path / ".claude.json"
    path.write_text('{"pad": "' + "x" * 2000 + '"}')
    assert read_json_checked(path) == (None, "larger than 1024 bytes")
    path.write_text('{"ok": 1}')
    assert read_json_checked(path) == ({"ok": 1}, None)
