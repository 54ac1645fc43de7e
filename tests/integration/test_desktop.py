"""``desktop install`` / ``uninstall``: files under the XDG base directories, only ours removed,
and the result accepted by the validators distributions use."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.integration import desktop, resources
from core.integration.files import Change
from tests.support.integration import Tool

ARGV = ["/home/a b/.local/pipx/venvs/goalkeeper/bin/goalkeeper"]


def _data(env: dict[str, str]) -> Path:
    return Path(env["XDG_DATA_HOME"])


def test_install_writes_every_file_where_xdg_says(xdg_env: dict[str, str]) -> None:
    report = desktop.install(xdg_env, ARGV, start_at_login=False, platform="linux")
    assert report.ok
    data = _data(xdg_env)
    entry = data / "applications" / "io.github.goalkeeper.Goalkeeper.desktop"
    text = entry.read_text()
    assert 'Exec="/home/a b/.local/pipx/venvs/goalkeeper/bin/goalkeeper" gui\n' in text
    assert "TryExec=/home/a b/.local/pipx/venvs/goalkeeper/bin/goalkeeper\n" in text
    assert "Icon=io.github.goalkeeper.Goalkeeper\n" in text
    sizes = sorted(p.parts[-3] for p in (data / "icons" / "hicolor").glob("*/apps/*.png"))
    assert sizes == sorted(f"{n}x{n}" for n in (16, 22, 24, 32, 48, 64, 128, 256))
    assert (data / "metainfo" / resources.METAINFO_FILE).read_bytes() == resources.metainfo()
    assert {c.change for c in report.changes if c.what != "autostart entry"} == {Change.WRITTEN}
    again = desktop.install(xdg_env, ARGV, start_at_login=False, platform="linux")
    assert {c.change for c in again.changes if c.what != "autostart entry"} == {
        Change.UNCHANGED}


def test_autostart_follows_start_at_login(xdg_env: dict[str, str]) -> None:
    autostart = Path(xdg_env["XDG_CONFIG_HOME"]) / "autostart" / resources.DESKTOP_FILE
    on = desktop.install(xdg_env, ARGV, start_at_login=True, platform="linux")
    assert on.changes[-1].change is Change.WRITTEN and autostart.exists()
    off = desktop.install(xdg_env, ARGV, start_at_login=False, platform="linux")
    assert off.changes[-1].change is Change.REMOVED and not autostart.exists()


def test_uninstall_removes_ours_and_keeps_what_is_not(xdg_env: dict[str, str]) -> None:
    desktop.install(xdg_env, ARGV, start_at_login=True, platform="linux")
    autostart = Path(xdg_env["XDG_CONFIG_HOME"]) / "autostart" / resources.DESKTOP_FILE
    autostart.write_text("[Desktop Entry]\nType=Application\nName=Mine\nExec=my-wrapper\n")
    report = desktop.uninstall(xdg_env, platform="linux")
    kept = [c for c in report.changes if c.change is Change.KEPT]
    assert [c.what for c in kept] == ["autostart entry"] and autostart.exists()
    assert not list(_data(xdg_env).rglob("io.github.goalkeeper.Goalkeeper*"))
    assert {c.change for c in desktop.uninstall(xdg_env, platform="linux").changes} == {
        Change.ABSENT, Change.KEPT}


def test_uninstall_removes_the_manually_copied_template_of_earlier_versions(
        xdg_env: dict[str, str]) -> None:
    entry = _data(xdg_env) / "applications" / resources.DESKTOP_FILE
    entry.parent.mkdir(parents=True)
    entry.write_text(resources.desktop_template())
    desktop.uninstall(xdg_env, platform="linux")
    assert not entry.exists()
    entry.write_text(resources.desktop_template().replace("Name=Goalkeeper", "Name=Mine"))
    desktop.uninstall(xdg_env, platform="linux")
    assert entry.exists()


def test_unset_xdg_variables_mean_the_defaults_under_home(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": "relative/ignored"}
    desktop.install(env, ARGV, start_at_login=True, platform="linux")
    assert (tmp_path / ".local/share/applications" / resources.DESKTOP_FILE).exists()
    assert (tmp_path / ".config/autostart" / resources.DESKTOP_FILE).exists()


def test_a_write_failure_is_reported_not_raised(xdg_env: dict[str, str]) -> None:
    _data(xdg_env).mkdir(parents=True)
    (_data(xdg_env) / "icons").write_text("a file where a directory should be")
    report = desktop.install(xdg_env, ARGV, start_at_login=False, platform="linux")
    assert report.problem is not None and report.problem.startswith("could not write")


@pytest.mark.parametrize("platform", ["darwin", "win32"])
def test_not_on_desktops_without_xdg(xdg_env: dict[str, str], platform: str) -> None:
    with pytest.raises(desktop.DesktopUnsupported):
        desktop.install(xdg_env, ARGV, start_at_login=False, platform=platform)


# -- the validators ----------------------------------------------------------------------------

def test_desktop_file_validate_accepts_the_template_and_every_entry_written(
        xdg_env: dict[str, str], desktop_file_validate: Tool, tmp_path: Path) -> None:
    template = tmp_path / resources.DESKTOP_FILE
    template.write_text(resources.desktop_template())
    argv = ['/tmp/we"ird $dir/100%/back\\slash/goalkeeper']
    desktop.install(xdg_env, argv, start_at_login=True, platform="linux")
    entry = _data(xdg_env) / "applications" / resources.DESKTOP_FILE
    autostart = Path(xdg_env["XDG_CONFIG_HOME"]) / "autostart" / resources.DESKTOP_FILE
    for path in (template, entry, autostart):
        out = desktop_file_validate(path)
        assert (out.returncode, out.stdout + out.stderr) == (0, ""), path


def test_desktop_file_validate_is_not_a_rubber_stamp(desktop_file_validate: Tool,
                                                     tmp_path: Path) -> None:
    broken = tmp_path / "broken.desktop"
    broken.write_text(resources.desktop_template().replace("Type=Application\n", ""))
    assert desktop_file_validate(broken).returncode != 0


def test_appstreamcli_accepts_the_metainfo_offline(appstreamcli: Tool, tmp_path: Path) -> None:
    path = tmp_path / resources.METAINFO_FILE
    path.write_bytes(resources.metainfo())
    out = appstreamcli("validate", "--no-net", "--explain", path)
    assert out.returncode == 0, out.stdout + out.stderr
    broken = tmp_path / "broken.metainfo.xml"
    broken.write_bytes(re.sub(rb"<summary[^>]*>[^<]*</summary>\n", b"", resources.metainfo()))
    assert appstreamcli("validate", "--no-net", broken).returncode != 0


def test_appstreamcli_accepts_the_installed_tree(xdg_env: dict[str, str],
                                                 appstreamcli: Tool) -> None:
    """validate-tree also checks that the metainfo's launchable is an installed entry."""
    desktop.install(xdg_env, ARGV, start_at_login=False, platform="linux")
    tree = _data(xdg_env).parent  # ~/.local, which holds share/
    out = appstreamcli("validate-tree", "--no-net", tree)
    assert out.returncode == 0, out.stdout + out.stderr
    (_data(xdg_env) / "applications" / resources.DESKTOP_FILE).unlink()
    out = appstreamcli("validate-tree", "--no-net", tree)
    assert out.returncode != 0 and "desktop-file-not-found" in out.stdout


def test_a_template_without_exec_is_refused() -> None:
    from core.integration.entry import TemplateError, menu_entry

    template = resources.desktop_template().replace("TryExec=goalkeeper\n", "")
    with pytest.raises(TemplateError):
        menu_entry(template, ARGV)
    with pytest.raises(ValueError):
        menu_entry(resources.desktop_template(), [])


def test_the_menu_entry_and_the_metainfo_carry_a_zh_cn_name_and_summary(
        xdg_env: dict[str, str]) -> None:
    import xml.etree.ElementTree as ET

    desktop.install(xdg_env, ARGV, start_at_login=False, platform="linux")
    text = (_data(xdg_env) / "applications" / "io.github.goalkeeper.Goalkeeper.desktop").read_text()
    assert "\nName[zh_CN]=" in text and "\nComment[zh_CN]=" in text
    root = ET.fromstring(resources.metainfo())
    lang = "{http://www.w3.org/XML/1998/namespace}lang"
    for tag in ("name", "summary"):
        assert [e.text for e in root.findall(tag) if e.get(lang) == "zh-CN"], tag
