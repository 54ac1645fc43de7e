"""Translations: the catalogues are complete and current, the check catches what it must, and the
language follows the setting, then LANGUAGE / LC_ALL / LC_MESSAGES / LANG, with English as the
fallback — per string, never a blank."""

from __future__ import annotations

import importlib.util
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from zoneinfo import ZoneInfo

import pytest

from core import i18n
from core.i18n.catalogue import load_catalogue
from core.i18n.textfmt import age, countdown, duration, long_time, pad, short_time, width
from core.settings import Settings, SettingsError, load_settings

ROOT = Path(__file__).resolve().parents[1]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("goalkeeper_i18n_tool",
                                                  ROOT / "packaging" / "i18n.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return _tool()


# -- the project's own catalogues ----------------------------------------------------------------


def test_every_string_is_translated_current_and_consistent(tool: ModuleType) -> None:
    """packaging/i18n.py check: nothing the code says is missing from a catalogue or unfinished,
    no translation drops or alters a placeholder, the glossary holds, the .mo and .qm are built
    from the sources, and no user-visible English is left unmarked."""
    problems = tool.check()
    assert problems == [], "\n".join(problems)


def test_both_catalogues_are_substantial_and_chinese(tool: ModuleType) -> None:
    _, entries = tool.read_po(tool.po_path("zh_CN"))
    messages = [m for m in tool.qt.read_ts(tool.ts_path("zh_CN")) if m.active]
    assert len([e for e in entries if not e.obsolete]) > 400 and len(messages) > 300
    chinese = [e for e in entries if any("\u4e00" <= c <= "\u9fff" for c in e.msgstr[0])]
    assert len(chinese) > 0.9 * len(entries)


# -- the check itself, on a small project ---------------------------------------------------------


@pytest.fixture
def mini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, Path]:
    """A two-file project (a core module, a GUI module) that the tool works on."""
    module = _tool()
    root = tmp_path / "proj"
    (root / "core").mkdir(parents=True)
    (root / "gui").mkdir()
    (root / "core" / "m.py").write_text(
        'from core.i18n import N_, _\n\nA = _("Hello {name}")\nB = N_("stored goal {thing}")\n')
    (root / "gui" / "w.py").write_text(
        "from gui.i18n import tr\n\n\ndef show(label):\n"
        '    label.setText(tr("Open {file}"))\n')
    locale = root / "core" / "i18n" / "locale"
    locale.mkdir(parents=True)
    (locale / "GLOSSARY.md").write_text("| goal | 目标 | `\\bgoals?\\b` | |\n", encoding="utf-8")
    for name, value in (("ROOT", root), ("LOCALE", locale), ("GLOSSARY", locale / "GLOSSARY.md"),
                        ("TRANSLATIONS", root / "gui" / "translations"), ("EXTERNAL", [])):
        monkeypatch.setattr(module, name, value)
    return module, root


def _apply(module: ModuleType, tmp: Path, pairs: dict[str, str], force: bool = False) -> None:
    tsv = tmp / "t.tsv"
    tsv.write_text("".join(f"{k}\t{v}\n" for k, v in pairs.items()), encoding="utf-8")
    module.apply("zh_CN", tsv, force)
    module.build()


def test_the_check_catches_new_untranslated_and_broken_strings(
        mini: tuple[ModuleType, Path], tmp_path: Path) -> None:
    module, root = mini
    module.update()
    before = module.check()
    assert "zh_CN po: untranslated: 'Hello {name}'" in before
    assert "zh_CN ts: untranslated: 'Open {file}'" in before
    assert any(".mo is not built" in p for p in before)
    assert sorted(module.todo("zh_CN")) == ["Hello {name}\t", "Open {file}\t",
                                            "stored goal {thing}\t"]
    _apply(module, tmp_path, {"Hello {name}": "你好，{name}", "Open {file}": "打开 {file}",
                              "stored goal {thing}": "已保存的目标 {thing}"})
    assert module.check() == []

    # a string added later is caught in both catalogues until `update` and a translation
    (root / "core" / "m.py").write_text((root / "core" / "m.py").read_text()
                                        + 'C = _("Goodbye")\n')
    (root / "gui" / "w.py").write_text((root / "gui" / "w.py").read_text()
                                       + '    label.setToolTip(tr("Close it"))\n')
    later = module.check()
    assert "zh_CN po: not in the catalogue (run update): 'Goodbye' (core/m.py)" in later
    assert "zh_CN ts: not in the catalogue (run update): 'Close it'" in later
    # what the lead is told to do next: update, then translate (counted), in that order
    steps = module.advice(later)
    assert steps[1] == "to do, in order (then run check again):"
    assert "update" in steps[2] and steps[2].endswith("[2]")
    assert "todo > todo.tsv" in steps[3] and "apply todo.tsv" in steps[3]
    assert module.advice([]) == []
    module.update()
    assert "zh_CN po: untranslated: 'Goodbye'" in module.check()
    _apply(module, tmp_path, {"Goodbye": "再见", "Close it": "关闭它"})
    assert module.check() == []

    # a translation that drops a placeholder, or a glossary term
    _apply(module, tmp_path, {"Hello {name}": "你好", "stored goal {thing}": "已保存 {thing}"},
           force=True)
    broken = module.check()
    assert any("'Hello {name}'" in p and "placeholders ['{name}'] became []" in p for p in broken)
    assert any("“goal” is translated as “目标”" in p for p in broken)


def test_the_check_finds_unmarked_english(mini: tuple[ModuleType, Path], tmp_path: Path) -> None:
    module, root = mini
    (root / "gui" / "w.py").write_text(
        (root / "gui" / "w.py").read_text()
        + '    label.setToolTip("Forgot to mark this")\n'
        + '    label.setText(tr(f"no {label}"))\n'
        + '    label.setObjectName("quotaPanel")\n'
        + '    label.setAccessibleName("Goalkeeper")  # i18n: ignore\n')
    (root / "core" / "cli").mkdir()
    (root / "core" / "cli" / "c.py").write_text(
        'def f(ctx, CliError):\n    raise CliError(f"cannot read {ctx}")\n')
    found = [p for p in module.check() if p.startswith(("gui/", "core/"))]
    assert found == [
        "core/cli/c.py:2: unmarked text in CliError(): wrap it in _()",
        "gui/w.py:6: unmarked text in setToolTip(): wrap it in tr()",
        "gui/w.py:7: tr() of an f-string cannot be extracted; use a literal with {fields} and "
        ".format()",
    ]


@pytest.mark.parametrize(("source", "translation", "problem"), [
    ("{n} goals in {dir}", "{n} 个目标", "placeholders ['{dir}', '{n}'] became ['{n}']"),
    ("unknown goal {goal!r}", "未知目标 {goal}", "placeholders ['{goal!r}'] became ['{goal}']"),
    ("unrecognized arguments: %s", "无法识别的参数", "printf fields ['%s'] became []"),
    ("invalid choice: %(value)r", "无效：%(value)s",
     "printf fields ['%(value)r'] became ['%(value)s']"),
    ("%n goals", "个目标", "Qt arguments ['%n'] became []"),
    ("%1 of %2", "%1 / %1", "Qt arguments ['%1', '%2'] became ['%1', '%1']"),
    ("<b>Watch</b> it", "关注它", "markup tags differ"),
    ("&Settings…", "设置…", "the keyboard mnemonic (&) is gone"),
])
def test_placeholder_problems(tool: ModuleType, source: str, translation: str,
                              problem: str) -> None:
    assert problem in tool.placeholder_problems(source, translation)


def test_a_faithful_translation_has_no_placeholder_problem(tool: ModuleType) -> None:
    assert tool.placeholder_problems("{n} of {total} · 100 % used",
                                     "{n}/{total} · 已用 100 %") == []
    assert tool.placeholder_problems("&Settings…", "设置(&S)…") == []


def test_the_po_format_round_trips(tool: ModuleType) -> None:
    text = tool.po.write_po("Language: zh_CN\n", [
        tool.po.Entry("line one\nline two", msgstr=["一\n二"], refs=["core/x.py"],
                      comments=["translators: a note"]),
        tool.po.Entry('say "hi"\t', msgstr=["说“嗨”\t"], flags={"fuzzy"}),
        tool.po.Entry("{n} file", "{n} files", ["{n} 个文件"]),
        tool.po.Entry("gone", msgstr=["没了"], obsolete=True),
    ])
    header, entries = tool.po.parse_po(text)
    assert header == "Language: zh_CN\n"
    assert [(e.msgid, e.plural, e.msgstr, e.obsolete) for e in entries] == [
        ("line one\nline two", None, ["一\n二"], False), ('say "hi"\t', None, ["说“嗨”\t"], False),
        ("{n} file", "{n} files", ["{n} 个文件"], False), ("gone", None, ["没了"], True)]
    assert entries[0].comments == ["translators: a note"] and entries[0].refs == ["core/x.py"]
    assert not entries[1].translated  # fuzzy


def test_the_compiled_catalogue_is_what_gettext_reads(tool: ModuleType, tmp_path: Path) -> None:
    header = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=1; plural=0;\n"
    mo = tmp_path / "x.mo"
    mo.write_bytes(tool.po.compile_mo(header, [
        tool.po.Entry("Hello", msgstr=["你好"]), tool.po.Entry("{n} file", "{n} files", ["{n} 个"]),
        tool.po.Entry("unfinished"),
        tool.po.Entry("waiting for {what}", msgstr=["等待{what}"], flags={"stored"}),
        tool.po.Entry("{a} until {b}", msgstr=["{a}至 {b}"])]))
    catalogue = load_catalogue(mo, "zh_CN")
    assert catalogue.gettext("Hello") == "你好"
    assert catalogue.ngettext("{n} file", "{n} files", 5) == "{n} 个"
    assert catalogue.gettext("unfinished") == "unfinished"  # English, per string
    assert catalogue.localized("waiting for Hello") == "等待你好"
    assert catalogue.localized("Hello until later") == "Hello until later"  # not a stored one


# -- the language ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("setting", "environ", "expected"), [
    ("", {"LANG": "zh_CN.UTF-8"}, "zh_CN"),
    ("", {"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, "zh_CN"),
    ("", {"LANG": "zh_CN.UTF-8", "LC_MESSAGES": "en_GB.UTF-8"}, "en"),
    ("", {"LC_ALL": "zh_SG.UTF-8", "LC_MESSAGES": "en_US"}, "zh_CN"),
    ("", {"LANG": "C.UTF-8", "LANGUAGE": "zh_CN:en"}, "zh_CN"),  # LANGUAGE goes first…
    ("", {"LANG": "de_DE.UTF-8", "LANGUAGE": "fr:zh"}, "zh_CN"),  # …the first we have
    ("", {"LANG": "C", "LANGUAGE": "zh_CN"}, "en"),  # …unless the locale is C, as in gettext
    ("", {"LANGUAGE": "zh_CN"}, "en"),  # no locale at all is C
    ("", {"LANG": "zh_TW.UTF-8"}, "en"),  # Traditional Chinese: not this catalogue
    ("", {"LANG": "fr_FR.UTF-8"}, "en"),
    ("", {}, "en"),
    ("zh_CN", {"LANG": "en_US.UTF-8"}, "zh_CN"),  # the setting wins
    ("en", {"LANG": "zh_CN.UTF-8", "LANGUAGE": "zh_CN"}, "en"),
])
def test_the_language_follows_the_setting_then_the_system(
        setting: str, environ: dict[str, str], expected: str) -> None:
    assert i18n.resolve_language(setting, environ) == expected


def test_the_setting_is_read_early_and_leniently(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    assert i18n.language_setting(config, {}) == ""
    config.write_text('language = "zh_CN"\nresume_margin_seconds = "not a number"\n')
    assert i18n.language_setting(config, {}) == "zh_CN"  # even though the file is invalid
    assert i18n.language_setting(config, {"GOALKEEPER_LANGUAGE": "en"}) == "en"
    config.write_text("language = [")
    assert i18n.language_setting(config, {}) == ""
    assert i18n.setup(config, {"LANG": "zh_CN.UTF-8"}) == "zh_CN"


def test_the_language_setting_is_validated(tmp_path: Path) -> None:
    assert Settings(language="zh_CN").language == "zh_CN"
    config = tmp_path / "config.toml"
    config.write_text('language = "fr"\n')
    with pytest.raises(SettingsError, match=r"language = 'fr'.*en, zh_CN"):
        load_settings(config, {})
    assert load_settings(config, {"GOALKEEPER_LANGUAGE": ""}).language == ""


def test_a_missing_or_broken_catalogue_means_english(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "bad.mo").write_bytes(b"not a catalogue")
    for path in (tmp_path / "none.mo", tmp_path / "bad.mo"):
        catalogue = load_catalogue(path, "zh_CN")
        assert catalogue.language == "en" and catalogue.gettext("Goals:") == "Goals:"
    assert "speaking English" in caplog.text


def test_english_text_without_a_translation_is_shown_as_it_is() -> None:
    i18n.use_language("zh_CN")
    assert i18n._("Goals:") == "目标："
    assert i18n._("a sentence nobody marked") == "a sentence nobody marked"
    assert i18n.localized("HTTP 418 I'm a teapot") == "HTTP 418 I'm a teapot"
    assert i18n.localized("") == ""


@pytest.mark.parametrize(("stored", "shown"), [
    ("quota not recovered: codex:5h, codex:weekly", "配额尚未重新可用：codex:5h, codex:weekly"),
    ("not paused: done", "未暂停：已完成"),  # the state word inside is translated too
    ("manual resume (was paused: quota)", "手动恢复（暂停原因：配额）"),
    ("quota: demo quota used up (6/6)", "配额：演示配额已用完（6/6）"),
    ("attempt cap reached (3/3)", "已达尝试上限（3/3）"),
    ("HTTP 503 Service Unavailable (4 attempts)", "HTTP 503 Service Unavailable（尝试了 4 次）"),
    ("HTTP 401 Unauthorized — check the token: `goalkeeper secret set ntfy-token`",
     "HTTP 401 Unauthorized — 请检查令牌：`goalkeeper secret set ntfy-token`"),
    # the resume policies' reasons (issue 13), and notes joined with "; " taken one by one
    ("manual resume (was paused: quota); ignoring the reserve: fake:5h 75 % used, 30 % kept "
     "for you; outside the allowed hours (Mon-Fri 19:00-08:00 (UTC)): a manual resume is always "
     "allowed",
     "手动恢复（暂停原因：配额）；忽略预留：fake:5h 已用 75 %，为你预留 30 %；不在允许时段内"
     "（Mon-Fri 19:00-08:00 (UTC)）：手动恢复总是允许的"),
    ("quota exhausted; allowed hours: Mon-Fri 19:00-08:00 (Europe/Berlin)",
     "配额耗尽；允许时段：Mon-Fri 19:00-08:00 (Europe/Berlin)"),
    ("reserve: fake:5h 70 % used, 30 % kept for you — paused until the window resets",
     "预留：fake:5h 已用 70 %，为你预留 30 %——暂停到窗口重置"),
    ("allowed hours: not before the scheduled time", "允许时段：还没到预定时间"),
    ("waiting for a slot on codex:5h: 1 of 1 in use by codex:a",
     "codex:5h 上等待名额：1 个中已用 1 个，由 codex:a 占用"),
    ("budget_percent = '120': Input should be less than or equal to 100",
     "budget_percent = '120'：应小于或等于 100"),
    ("store unavailable: disk I/O error since 2026-07-07T12:00:00Z",
     "存储不可用：disk I/O error，自 2026-07-07T12:00:00Z 起"),
    # the store's words (left in English by the first pass), inside the safe mode's
    ("safe mode: the database /d/goalkeeper.db is zero bytes long, but it held data (host epoch "
     "3); it was not replaced by an empty one. No backup is available: `goalkeeper store "
     "restore --empty` moves the files aside and starts an empty store",
     "安全模式：数据库 /d/goalkeeper.db 的长度为零字节，但它曾存有数据（宿主纪元 3）；"
     "没有用空数据库替换它。没有可用的备份：`goalkeeper store restore --empty` "
     "会把文件移到一旁，并以空的存储重新开始"),
    # the pipeline run summary (left in English by the first pass)
    ("run r1 completed: sources 2/4 (missing a: timeout ×2); 12 items — DEGRADED: items "
     "possibly incomplete",
     "运行 r1 已完成：数据源 2/4（缺少 a: timeout ×2）；12 个条目——降级：条目可能不完整"),
    # "; " inside one template: not taken apart when a part has no translation of its own
    ("fresh read failed (boom); decided on the last known readings",
     "重新读取失败（boom）；按最近一次已知的读数决定"),
    # only stored templates (N_): a date format or a CLI pattern (_() only) never takes stored
    # text apart ("{weekday} {day}", "{outcome} until {time}")
    ("demo quota", "demo quota"),
    ("retry until tomorrow", "retry until tomorrow"),
    ("something random: with a colon", "something random: with a colon"),
])
def test_stored_english_is_shown_translated(stored: str, shown: str) -> None:
    i18n.use_language("zh_CN")
    assert i18n.localized(stored) == shown


def test_times_in_chinese() -> None:
    i18n.use_language("zh_CN")
    zone = ZoneInfo("Asia/Shanghai")
    now = datetime(2026, 3, 27, 4, 0, tzinfo=UTC)  # Friday 12:00 in Shanghai
    assert short_time(now + timedelta(hours=16), now, zone) == "明天 04:00"
    assert short_time(now - timedelta(hours=14), now, zone) == "昨天 22:00"
    assert short_time(now + timedelta(days=3), now, zone) == "3月30日（周一）12:00"
    assert long_time(now, zone) == "2026-03-27（周五）12:00:00 CST"
    assert countdown(now + timedelta(seconds=6442), now) == "1:47:22后"
    assert countdown(now - timedelta(minutes=5), now) == "现在（已超时 5:00）"
    assert duration(2 * 86400 + 3723) == "2天 01:02:03"
    assert [age(s) for s in (12, 240, 7500, 273600)] == ["12 秒", "4 分钟", "2 小时 05 分钟",
                                                         "3 天 4 小时"]
    # stored text stays English whatever the language
    assert short_time(now + timedelta(hours=16), now, zone, english=True) == "tomorrow 04:00"


def test_times_in_english_are_unchanged() -> None:
    zone = ZoneInfo("Europe/Berlin")
    now = datetime(2026, 3, 27, 11, 0, tzinfo=UTC)
    assert short_time(now + timedelta(days=3), now, zone) == "Mon 30 Mar 13:00"
    assert long_time(now, zone) == "Fri 2026-03-27 12:00:00 CET"


def test_padding_counts_wide_characters_twice() -> None:
    assert width("已暂停") == 6 and width("paused") == 6
    assert pad("已暂停", 8) == "已暂停  " and pad("paused", 8) == "paused  "
    assert sys.getdefaultencoding() == "utf-8"


def test_every_setting_has_a_translatable_label_and_help() -> None:
    """A setting added later shows up in the dialog only with words the catalogue can hold: a
    label, and help where the field has a description (the core's English otherwise)."""
    from gui.settings_source import HELP, LABELS

    fields = Settings.model_fields
    assert [name for name in fields if name not in LABELS] == []
    assert [name for name, info in fields.items() if info.description and name not in HELP] == []
