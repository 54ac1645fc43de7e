"""Smoke-test an installed Goalkeeper the way a person would use it.

    python packaging/smoke.py --cmd /tmp/venv/bin/goalkeeper --screenshot /tmp/window.png
    python packaging/smoke.py --cmd dist/bundle/goalkeeper/goalkeeper --screenshot shot.png

``--cmd`` is the ``goalkeeper`` to test: a venv's or pipx's script, or the PyInstaller bundle's
executable. Every check runs it as a subprocess in a throw-away HOME (XDG directories,
``GOALKEEPER_HOME``, no keyring, no session bus, no agent homes), and prints what it checked and
how long it took:

1. ``--version`` names this source tree's version;
2. ``demo --headless`` shows a pause for quota and an automatic resume;
3. ``daemon`` stops cleanly on SIGTERM (exit 0, the host lease released);
4. ``desktop install`` writes the entries, icons and metainfo, and ``desktop-file-validate``
   and ``appstreamcli validate-tree --no-net`` accept them; ``desktop uninstall`` removes them;
5. ``service install`` writes a unit that ``systemd-analyze --user verify`` accepts
   (a fake ``systemctl`` first on PATH: the real user manager is never touched);
6. with ``--screenshot``: the desktop app (``demo``) under Xvfb, its host answering
   ``status``, a screenshot of the X screen, and a clean stop on SIGTERM.

The interpreter running this script needs PySide6 only for step 6 (it grabs the X screen).
A validator that is missing is reported and skipped — under ``CI=true`` it fails the smoke.
Exit code 0 when every check passed.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IN_CI = os.environ.get("CI", "").lower() == "true"
APP_ID = "io.github.goalkeeper.Goalkeeper"
FAST_DEMO = ["--period", "4", "--step", "0.1", "--timeout", "60"]
FAST_DEMO_ENV = {"GOALKEEPER_RESUME_MARGIN_SECONDS": "0.3", "GOALKEEPER_STABLE_SECONDS": "0.2",
                 "GOALKEEPER_RESUME_JITTER_SECONDS": "0"}


class SmokeFailed(Exception):
    pass


def source_version() -> str:
    tree = ast.parse((ROOT / "core" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "__version__":
            return str(ast.literal_eval(node.value))
    raise SmokeFailed("no __version__ in core/__init__.py")


class Sandbox:
    """A throw-away HOME with XDG directories and a fake ``systemctl`` first on PATH."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.gk_home = root / "gk"
        fake_bin = root / "fake-bin"
        for folder in (self.home, fake_bin):
            folder.mkdir(parents=True)
        runtime = root / "run"
        runtime.mkdir(mode=0o700)
        (fake_bin / "systemctl").write_text("#!/bin/sh\nexit 0\n")
        (fake_bin / "systemctl").chmod(0o755)
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("GOALKEEPER_", "XDG_", "DBUS_", "JOURNAL_"))}
        self.env = {
            **base, "HOME": str(self.home), "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"), "XDG_RUNTIME_DIR": str(runtime),
            "GOALKEEPER_HOME": str(self.gk_home),
            "CODEX_HOME": str(root / "no-codex"), "CLAUDE_CONFIG_DIR": str(root / "no-claude"),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "PATH": f"{fake_bin}:{base.get('PATH', '/usr/bin:/bin')}",
        }


class Smoke:
    def __init__(self, cmd: list[str], sandbox: Sandbox) -> None:
        self.cmd = cmd
        self.box = sandbox
        self.skipped: list[str] = []

    def run(self, *args: str, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self.cmd, *args], capture_output=True, text=True,
                              env={**self.box.env, **(env or {})}, timeout=timeout,
                              check=False, cwd=self.box.root)

    def expect(self, done: subprocess.CompletedProcess[str], what: str) -> str:
        if done.returncode != 0:
            raise SmokeFailed(f"{what}: exit {done.returncode}\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def tool(self, name: str, package: str) -> str | None:
        path = shutil.which(name)
        if path is None:
            if IN_CI:
                raise SmokeFailed(f"CI=true and {name} is missing (Debian package {package})")
            self.skipped.append(f"{name} (Debian package {package}) is not installed")
        return path

    # -- the checks ------------------------------------------------------------------------

    def version(self) -> str:
        out = self.expect(self.run("--version"), "--version").strip()
        if out != f"goalkeeper {source_version()}":
            raise SmokeFailed(f"--version printed {out!r}, expected {source_version()}")
        return out

    def headless_demo(self) -> str:
        home = self.box.root / "demo"
        out = self.expect(self.run("demo", "--headless", *FAST_DEMO, timeout=120,
                                   env={**FAST_DEMO_ENV, "GOALKEEPER_HOME": str(home)}),
                          "demo --headless")
        for line in ("paused — quota", "resumed (auto, scheduler)", "demo:refactor  done"):
            if line not in out:
                raise SmokeFailed(f"demo --headless did not print {line!r}:\n{out}")
        return "paused for quota, resumed automatically, done"

    def daemon_stops_on_sigterm(self) -> str:
        home = self.box.root / "daemon"
        proc = subprocess.Popen([*self.cmd, "daemon"], stdout=subprocess.DEVNULL, cwd=home.parent,
                                stderr=subprocess.PIPE, text=True,
                                env={**self.box.env, "GOALKEEPER_HOME": str(home),
                                     "GOALKEEPER_DEMO_ENABLED": "true"})
        try:
            wait_for(lambda: (home / "host.json").exists(), 60, "the daemon's host.json",
                     proc)
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=60)
        finally:
            stop(proc)
        if code != 0 or (home / "host.json").exists():
            raise SmokeFailed(f"daemon: exit {code} on SIGTERM, host.json left: "
                              f"{(home / 'host.json').exists()}")
        return "exit 0 on SIGTERM, lease released"

    def desktop(self) -> str:
        report = json.loads(self.expect(self.run("desktop", "install", "--autostart", "--json"),
                                        "desktop install"))
        if Path(report["command"][0]).resolve() != Path(self.cmd[0]).resolve():
            raise SmokeFailed(f"the entries run {report['command']}, not {self.cmd[0]}")
        data = Path(self.box.env["XDG_DATA_HOME"])
        entries = [data / "applications" / f"{APP_ID}.desktop",
                   Path(self.box.env["XDG_CONFIG_HOME"]) / "autostart" / f"{APP_ID}.desktop"]
        icons = sorted((data / "icons" / "hicolor").glob(f"*/apps/{APP_ID}.png"))
        if len(icons) != 8 or not all(e.exists() for e in entries):
            raise SmokeFailed(f"desktop install wrote {icons} and {entries}")
        if validate := self.tool("desktop-file-validate", "desktop-file-utils"):
            self.expect_silent([validate, *map(str, entries)], "desktop-file-validate")
        if appstream := self.tool("appstreamcli", "appstream"):
            self.expect(subprocess.run([appstream, "validate-tree", "--no-net",
                                        str(data.parent)], capture_output=True, text=True,
                                       check=False), "appstreamcli validate-tree")
        self.expect(self.run("desktop", "uninstall"), "desktop uninstall")
        if list(data.rglob(f"{APP_ID}*")):
            raise SmokeFailed("desktop uninstall left files behind")
        return f"{len(icons)} icons, 2 entries, metainfo; validated; uninstalled"

    def service(self) -> str:
        report = json.loads(self.expect(self.run("service", "install", "--json"),
                                        "service install"))
        unit = Path(report["file"]["path"])
        if analyze := self.tool("systemd-analyze", "systemd"):
            self.expect_silent([analyze, "--user", "verify", str(unit)],
                               "systemd-analyze --user verify")
        self.expect(self.run("service", "uninstall"), "service uninstall")
        return f"{unit.name} verified, uninstalled"

    def expect_silent(self, argv: list[str], what: str) -> None:
        done = subprocess.run(argv, capture_output=True, text=True, env=self.box.env,
                              check=False)
        if done.returncode != 0 or done.stdout.strip() or done.stderr.strip():
            raise SmokeFailed(f"{what}: exit {done.returncode}\n{done.stdout}{done.stderr}")

    def window(self, screenshot: Path) -> str:
        home = self.box.root / "window"
        env = {**self.box.env, "GOALKEEPER_HOME": str(home), "QT_QPA_PLATFORM": "xcb"}
        proc = subprocess.Popen([*self.cmd, "demo"], stdout=subprocess.PIPE, cwd=home.parent,
                                stderr=subprocess.STDOUT, text=True, env=env)
        try:
            wait_for(lambda: self._goals(home) >= 3, 60, "the app's host to list the demo goals",
                     proc)
            colours = grab_screen(screenshot, proc)
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=60)
        finally:
            output = stop(proc)
        if code != 0 or (home / "host.json").exists():
            raise SmokeFailed(f"the app: exit {code} on SIGTERM\n{output}")
        return f"window shown ({colours} colours), screenshot {screenshot}, exit 0 on SIGTERM"

    def _goals(self, home: Path) -> int:
        done = self.run("status", "--json", env={"GOALKEEPER_HOME": str(home)}, timeout=30)
        return len(json.loads(done.stdout)["goals"]) if done.returncode == 0 else 0


def wait_for(condition: Callable[[], bool], seconds: float, what: str,
             proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if proc.poll() is not None:
            raise SmokeFailed(f"exited ({proc.returncode}) before {what}:\n{stop(proc)}")
        if time.monotonic() > deadline:
            raise SmokeFailed(f"no {what} within {seconds:g} s")
        time.sleep(0.2)


def stop(proc: subprocess.Popen[str]) -> str:
    if proc.poll() is None:
        proc.kill()
    out, err = proc.communicate(timeout=30)
    return (out or "") + (err or "")


def grab_screen(path: Path, proc: subprocess.Popen[str]) -> int:
    """Grab the X screen until the window has painted (many colours); save it; the count."""
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication(["smoke", "-platform", "xcb"])
    deadline = time.monotonic() + 30
    best = 0
    while time.monotonic() < deadline and proc.poll() is None:
        app.processEvents()
        image = app.primaryScreen().grabWindow(0).toImage()
        best = _colours(image)
        if best >= 64:
            time.sleep(1.0)  # let the first countdown tick and the chart paint
            image = app.primaryScreen().grabWindow(0).toImage()
            path.parent.mkdir(parents=True, exist_ok=True)
            if not image.save(str(path)):
                raise SmokeFailed(f"could not write {path}")
            return _colours(image)
        time.sleep(0.3)
    raise SmokeFailed(f"the X screen never showed a window (at most {best} colours)")


def _colours(image: object) -> int:
    """Distinct colours on a coarse grid (a bare X screen has one)."""
    width, height = image.width(), image.height()  # type: ignore[attr-defined]
    seen = {image.pixel(x, y)  # type: ignore[attr-defined]
            for x in range(0, width, 7) for y in range(0, height, 7)}
    return len(seen)


@contextmanager
def step(name: str, results: list[tuple[str, float, str]]) -> Iterator[list[str]]:
    started = time.monotonic()
    detail: list[str] = []
    yield detail
    results.append((name, time.monotonic() - started, "; ".join(detail)))
    print(f"[smoke] {name:<22} {time.monotonic() - started:6.1f} s  {'; '.join(detail)}",
          flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cmd", required=True, help="the goalkeeper executable to test")
    parser.add_argument("--screenshot", type=Path, help="also start the window under Xvfb "
                        "and save a screenshot here")
    args = parser.parse_args()
    if args.screenshot and not os.environ.get("DISPLAY"):
        if not shutil.which("xvfb-run"):
            print("smoke: the window check needs xvfb-run (Debian package xvfb)",
                  file=sys.stderr)
            return 2
        return subprocess.call(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24 -nolisten tcp",
                                sys.executable, __file__, *sys.argv[1:]])
    cmd = [str(Path(args.cmd).absolute())]
    results: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory(prefix="goalkeeper-smoke-") as tmp:
        smoke = Smoke(cmd, Sandbox(Path(tmp)))
        checks: list[tuple[str, Callable[[], str]]] = [
            ("--version", smoke.version), ("demo --headless", smoke.headless_demo),
            ("daemon SIGTERM", smoke.daemon_stops_on_sigterm), ("desktop install", smoke.desktop),
            ("service install", smoke.service)]
        if args.screenshot:
            checks.append(("window under Xvfb", lambda: smoke.window(args.screenshot)))
        try:
            for name, check in checks:
                with step(name, results) as detail:
                    detail.append(check())
        except SmokeFailed as exc:
            print(f"[smoke] FAILED: {exc}", file=sys.stderr)
            return 1
    for reason in smoke.skipped:
        print(f"[smoke] skipped: {reason}")
    print(f"[smoke] all {len(results)} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
