"""The supported range of each real agent CLI, the versions the contract tests run, and how they
are installed.

Each CLI has a supported range (:data:`RANGES`): its oldest and newest versions are both pinned,
and the contract tests in ``tests/real/`` run on **both ends** (the ``codex_bin`` and
``claude_bin`` fixtures are parametrized over them), so a regression at either end shows. The
CLIs come from npm into a cache outside the repository (``~/.cache/goalkeeper-agent-clis``, or
``$GOALKEEPER_AGENT_CLI_CACHE``), one directory per package and version, so a second run
installs nothing. ``.ci/run`` calls ``python -m tests.real.pins install`` before the tests; the
fixtures install on first use where npm is present.

Which ends run: ``GOALKEEPER_REAL_CLI_ENDS`` (``oldest``, ``newest`` or ``oldest,newest``, the
default). ``GOALKEEPER_REAL_CODEX_VERSION`` / ``GOALKEEPER_REAL_CLAUDE_VERSION`` replace a CLI's
ends by one exact version (what ``latest`` below uses).

Run as a script:

- ``python -m tests.real.pins install [NAME ...]`` installs both ends and prints each binary;
- ``python -m tests.real.pins path NAME [oldest|newest]`` prints one path (exit 1 if absent);
- ``python -m tests.real.pins latest [NAME ...]`` asks npm for each CLI's newest version,
  installs it into the cache and runs the real-CLI layer against it, printing one line per
  version and test group — run it at the start of any work on a provider.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

# read once, at import: the test suite's autouse fixture strips GOALKEEPER_* per test
CACHE_ROOT = Path(os.environ.get("GOALKEEPER_AGENT_CLI_CACHE")
                  or Path.home() / ".cache" / "goalkeeper-agent-clis")
INSTALL_TIMEOUT_SECONDS = 600
ENDS = ("oldest", "newest")


@dataclasses.dataclass(frozen=True)
class Pin:
    """One pinned CLI: the npm package, its exact version, the command it installs."""

    name: str
    package: str
    version: str
    command: str
    version_text: str  # what ``<command> --version`` prints for this version

    @property
    def prefix(self) -> Path:
        return CACHE_ROOT / f"{self.name}-{self.version}"

    @property
    def binary(self) -> Path:
        return self.prefix / "node_modules" / ".bin" / self.command


@dataclasses.dataclass(frozen=True)
class PinRange:
    """A CLI's supported range: both ends are pinned and tested."""

    name: str
    package: str
    command: str
    oldest: str
    newest: str
    text_format: str  # ``--version``'s output, ``{v}`` standing for the version

    def pin(self, version: str) -> Pin:
        return Pin(self.name, self.package, version, self.command,
                   self.text_format.format(v=version))

    def end(self, which: str) -> Pin:
        return self.pin(self.oldest if which == "oldest" else self.newest)


#: keep in step with core/providers/codex/version.py (Claude Code has no version check: its range
#: is only here, and the README names both ends)
RANGES = {
    "codex": PinRange("codex", "@openai/codex", "codex", "0.169.0", "0.171.0", "codex-cli {v}"),
    "claude": PinRange("claude", "@anthropic-ai/claude-code", "claude", "2.1.328", "2.1.332",
                       "{v} (Claude Code)"),
}


def _override(name: str) -> str | None:
    return os.environ.get(f"GOALKEEPER_REAL_{name.upper()}_VERSION") or None


def selected(name: str) -> list[Pin]:
    """The versions of ``name`` this run tests: an override, else the chosen ends (both)."""
    rng = RANGES[name]
    if (version := _override(name)) is not None:
        return [rng.pin(version)]
    wanted = os.environ.get("GOALKEEPER_REAL_CLI_ENDS", "oldest,newest")
    ends = [e.strip() for e in wanted.split(",") if e.strip() in ENDS] or list(ENDS)
    pins = [rng.end(e) for e in ends]
    return list(dict.fromkeys(pins))  # one range may have equal ends


#: the newest selected pin of each CLI (for code that needs just one)
PINS = {name: selected(name)[-1] for name in RANGES}


class PinUnavailable(RuntimeError):
    """The pinned CLI is not installed and cannot be installed here (the message says why)."""


def installed(pin: Pin) -> Path | None:
    """The binary when it is installed at the pinned version, else None."""
    if not pin.binary.exists():
        return None
    # even `codex --version` writes into its home (`tmp/arg0-*`): never the user's real one
    with tempfile.TemporaryDirectory(prefix="gk-pin-") as home:
        env = {**os.environ, "CODEX_HOME": home}
        try:
            out = subprocess.run([str(pin.binary), "--version"], capture_output=True, text=True,
                                 timeout=60, stdin=subprocess.DEVNULL, check=False, env=env)
        except (OSError, subprocess.TimeoutExpired):
            return None
    return pin.binary if pin.version_text in out.stdout else None


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise PinUnavailable("npm is not on PATH: cannot install the agent CLIs")
    return npm


def _npm_env() -> dict[str, str]:
    return {**os.environ, "npm_config_cache": str(Path.home() / ".cache" / "npm")}


def ensure(pin: Pin) -> Path:
    """Install the pinned CLI into the cache if it is not there yet; return its binary."""
    found = installed(pin)
    if found is not None:
        return found
    npm = _npm()
    pin.prefix.mkdir(parents=True, exist_ok=True)
    cmd = [npm, "install", "--prefix", str(pin.prefix), "--no-audit", "--no-fund",
           "--no-save", "--loglevel=error", f"{pin.package}@{pin.version}"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=_npm_env(), check=False,
                              timeout=INSTALL_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise PinUnavailable(f"npm install {pin.package}@{pin.version} timed out") from exc
    found = installed(pin)
    if found is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise PinUnavailable(f"npm install {pin.package}@{pin.version} failed "
                             f"(exit {done.returncode}): {' / '.join(tail)}")
    return found


def pinned(pin: Pin) -> Path:
    """The pinned CLI for a test: installed on first use; where it cannot be, the test skips
    with the reason — or, under ``CI=true``, fails."""
    import pytest

    try:
        return ensure(pin)
    except PinUnavailable as exc:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true and the pinned {pin.name} {pin.version} CLI is missing: {exc}")
        pytest.skip(f"the pinned {pin.name} {pin.version} CLI is not available here: {exc}")


def latest_version(rng: PinRange) -> str:
    """The version npm serves as ``latest`` for the CLI's package."""
    try:
        done = subprocess.run([_npm(), "view", f"{rng.package}@latest", "version"],
                              capture_output=True, text=True, env=_npm_env(), check=False,
                              timeout=120, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise PinUnavailable(f"npm view {rng.package} timed out") from exc
    version = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
    if not version or not re.fullmatch(r"\d+\.\d+\.\d+", version[0]):
        raise PinUnavailable(f"npm view {rng.package} gave no version "
                             f"(exit {done.returncode}): {done.stderr.strip()[-200:]}")
    return version[0]


#: the test modules that run each CLI (one line of output per module)
GROUPS = {"codex": "test_codex_*.py", "claude": "test_claude_*.py"}


def group_counts(junit: Path) -> dict[str, Counter[str]]:
    """Per test module: how many passed, failed, errored and skipped (from a JUnit XML)."""
    counts: dict[str, Counter[str]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = (case.get("classname") or "?").split(".")
        group = next((part for part in module if part.startswith("test_")), module[-1])
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error"}.get(child.tag, "skipped")
        counts.setdefault(group, Counter())[outcome] += 1
    return counts


def run_latest(names: list[str]) -> int:
    """Install each CLI's newest npm version and run its contract tests; one line per group."""
    worst = 0
    for name in names:
        rng = RANGES[name]
        try:
            version = latest_version(rng)
            ensure(rng.pin(version))
        except PinUnavailable as exc:
            print(f"{name}: cannot test the newest version: {exc}")
            worst = 1
            continue
        in_range = "the newest pin" if version == rng.newest else (
            f"outside the tested range {rng.oldest}–{rng.newest}")
        print(f"{name} {version} ({in_range})", flush=True)
        with tempfile.TemporaryDirectory(prefix="gk-latest-") as tmp:
            junit = Path(tmp) / "junit.xml"
            env = {**os.environ, f"GOALKEEPER_REAL_{name.upper()}_VERSION": version}
            files = sorted(str(p) for p in Path(__file__).parent.glob(GROUPS[name]))
            files.append(str(Path(__file__).parent / "test_pins.py"))
            done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   f"--junitxml={junit}", *files], env=env, check=False,
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL)
            if not junit.exists():
                print(f"  pytest did not run (exit {done.returncode}): "
                      f"{done.stdout.strip()[-400:]}")
                worst = 1
                continue
            for group, counter in sorted(group_counts(junit).items()):
                parts = ", ".join(f"{n} {k}" for k, n in sorted(counter.items()))
                print(f"  {name} {version} {group}: {parts}")
            if done.returncode != 0:
                worst = 1
    return worst


def main(argv: list[str]) -> int:
    if argv[:1] == ["install"]:
        for name in argv[1:] or list(RANGES):
            for which in ENDS:
                pin = RANGES[name].end(which)
                print(f"{name} {pin.version} ({which}): {ensure(pin)}")
        return 0
    if argv[:1] == ["path"] and len(argv) in (2, 3):
        found = installed(RANGES[argv[1]].end(argv[2] if len(argv) == 3 else "newest"))
        if found is None:
            return 1
        print(found)
        return 0
    if argv[:1] == ["latest"]:
        return run_latest(argv[1:] or list(RANGES))
    print("usage: python -m tests.real.pins install [NAME ...] | path NAME [oldest|newest] "
          "| latest [NAME ...]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
