"""The usage scan's decoder (msgspec, and the standard library when msgspec is missing), its
workers started early, and ``codex-usage`` starting them before the settings load."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from core import forked
from core.cli import codex_usage
from core.i18n import early_setting
from core.providers.codex import history, usage_workers, usagejson
from core.providers.codex.history import rollouts
from core.providers.codex.usage_cache import UsageCache, UsageRun, scan_key
from core.providers.codex.usage_workers import ForkedScan, PendingScan, scan_usage, start_scan
from tests.codex.fixtures import (
    T0,
    THREAD_A,
    THREAD_B,
    CodexHome,
    call,
    five_and_week,
    line,
    meta,
    stamp,
    turn,
)

M = timedelta(minutes=1)

USAGE = {"input_tokens": 30, "cached_input_tokens": 10, "output_tokens": 5,
         "reasoning_output_tokens": 1, "total_tokens": 35}


@pytest.fixture(params=["msgspec", "json"])
def decoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with msgspec and again as without it (the standard library's json)."""
    if request.param == "json":
        monkeypatch.setattr(usagejson, "_FAST", None)
    else:
        assert usagejson._FAST is not None, "msgspec is a dependency: it must be installed"
    return str(request.param)


def objects(*usages: object) -> list[bytes]:
    return [json.dumps(u, separators=(",", ":")).encode() for u in usages]


def test_usage_objects_are_summed_in_any_field_order(decoder: str):
    reordered = dict(reversed(list(USAGE.items())))
    newer = {**USAGE, "cache_write_input_tokens": 4}  # 0.169.0: not counted separately
    assert usagejson.usage_sums(objects(USAGE, reordered, newer)) == (90, 30, 15, 3, 105)
    assert usagejson.usage_sums([]) == (0, 0, 0, 0, 0)


def test_a_missing_or_null_count_is_zero_and_a_non_object_is_unreadable(decoder: str):
    assert usagejson.usage_sums(objects({"input_tokens": 7, "output_tokens": None})) == (
        7, 0, 0, 0, 0)
    assert usagejson.usage_sums([b'{"input_tokens":1', *objects(USAGE)]) is None
    assert usagejson.usage_sums(objects([1, 2])) is None
    assert usagejson.usage_sums(objects({"input_tokens": {"nested": 1}})) is None


def test_stamp_and_limits(decoder: str):
    limits = {"primary": {"used_percent": 12.0, "window_minutes": 300}}
    raw = line("event_msg", {"type": "token_count", "info": None, "rate_limits": limits}, T0)
    assert usagejson.stamp_and_limits(raw.strip().encode()) == (stamp(T0), limits)
    assert usagejson.stamp_and_limits(b'{"timestamp":"x","payload":{}}') is None
    assert usagejson.stamp_and_limits(b"not json") is None


def odd_call(at, usage: dict) -> str:
    payload = {"type": "token_count", "info": {"total_token_usage": usage,
                                               "last_token_usage": usage}, "rate_limits": None}
    return line("event_msg", payload, at)


def test_a_run_with_an_unreadable_call_counts_the_others(home: CodexHome, decoder: str):
    """One object that does not decode makes its run be read call by call: a null count is 0,
    a nested value leaves only its own call out (its line cannot be read either)."""
    home.rollout(THREAD_A, T0, meta(THREAD_A, T0), turn("gpt-5.2", T0), call(T0 + M, 1),
                 odd_call(T0 + 2 * M, {**USAGE, "output_tokens": None}),
                 odd_call(T0 + 3 * M, {**USAGE, "input_tokens": {"n": 1}}),
                 call(T0 + 4 * M, 2))
    [(key, got)] = scan_usage(rollouts(home.sessions)).daily.items()
    assert key == (T0.date().isoformat(), "gpt-5.2")
    assert (got.calls, got.input_tokens, got.output_tokens, got.total_tokens) == (
        3, 100 + 30 + 200, 1 + 0 + 2, 101 + 35 + 202)


def test_the_scan_is_the_same_with_either_decoder(home: CodexHome,
                                                  monkeypatch: pytest.MonkeyPatch):
    for i, thread in enumerate((THREAD_A, THREAD_B)):
        at = T0 + i * 60 * M
        quota = [five_and_week(10.0 + k, T0 + 300 * M, 2.0, T0 + 90 * 60 * M) for k in range(20)]
        home.rollout(thread, at, meta(thread, at), turn("gpt-5.2", at), *(
            call(at + (k + 1) * M, k + i, quota[k], reorder=k % 2 == 1) for k in range(20)))
    fast = scan_usage(rollouts(home.sessions))
    monkeypatch.setattr(usagejson, "_FAST", None)
    slow = scan_usage(rollouts(home.sessions))
    assert fast.daily == slow.daily and fast.quota == slow.quota and fast.quota


def two_rollouts(home: CodexHome) -> list[Path]:
    for i, thread in enumerate((THREAD_A, THREAD_B)):
        home.rollout(thread, T0 + i * M, meta(thread, T0), call(T0 + (i + 1) * M, 3 + i))
    return rollouts(home.sessions)


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forked workers, as in the command (no other thread): each test's only other thread is
    its watchdog (tests/support/timeouts.py), which waits on an event and is not copied."""
    monkeypatch.setattr(usage_workers, "can_fork", lambda: True)
    monkeypatch.setattr(forked, "can_fork", lambda: True)


def test_only_a_process_without_threads_forks(tmp_path: Path):
    import subprocess
    import sys

    code = ("import threading; from core.providers.codex.usage_workers import can_fork; "
            "alone = can_fork(); t = threading.Thread(target=threading.Event().wait, "
            "daemon=True); t.start(); print(alone, can_fork())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.split() == ["True", "False"]


def test_a_scan_started_early_answers_as_one_run_here(home: CodexHome, forking: None):
    paths = two_rollouts(home)
    pending = start_scan(paths, 2)
    assert isinstance(pending, ForkedScan) and len(pending.children) == 1  # + this process
    assert combined(pending.parts()).daily == scan_usage(paths).daily
    assert start_scan(paths, 1) is None and start_scan(paths[:1], 2) is None


def test_with_another_thread_running_the_workers_are_fresh_interpreters(home: CodexHome):
    """A fork copies a lock another thread holds, held for ever: a threaded caller's workers
    are interpreters of their own, each given a share."""
    import threading

    paths = two_rollouts(home)
    done = threading.Event()
    thread = threading.Thread(target=done.wait)
    thread.start()
    try:
        pending = start_scan(paths, 2)
        assert isinstance(pending, PendingScan) and len(pending.procs) == 1
        assert len(pending.here) == 1
        assert combined(pending.parts()).daily == scan_usage(paths).daily
    finally:
        done.set()
        thread.join()


def test_a_cancelled_scan_ends_its_workers(home: CodexHome, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(usage_workers, "_WORKER", "import time; time.sleep(60)")
    pending = start_scan(two_rollouts(home), 2)
    assert isinstance(pending, PendingScan)
    pending.cancel()
    assert all(proc.returncode is not None for proc in pending.procs)


def test_a_cancelled_forked_scan_ends_its_children(home: CodexHome, forking: None,
                                                  monkeypatch: pytest.MonkeyPatch):
    import time

    monkeypatch.setattr(usage_workers, "scan_file", lambda path: time.sleep(60))
    pending = start_scan(two_rollouts(home), 3)
    assert isinstance(pending, ForkedScan)
    pids = [child.pid for child, _ in pending.children]
    assert len(pids) == 2
    pending.cancel()
    for pid in pids:  # reaped: no child of that number is left
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def combined(parts: list[history.Part]) -> history.UsageHistory:
    return history.combine(part for _, _, part in parts)


def many_rollouts(home: CodexHome, count: int = 12) -> list[Path]:
    for i in range(count):
        thread = f"019a{i:04x}-0000-7000-8000-000000000000"
        at = T0 + i * 10 * M
        home.rollout(thread, at, meta(thread, at), turn(f"gpt-5.{i % 3}", at),
                     *(call(at + (k + 1) * M, i + k) for k in range(i + 1)))
    return rollouts(home.sessions)


@pytest.mark.parametrize("workers", [2, 3, 5])
def test_forked_workers_answer_as_one_process(home: CodexHome, workers: int, forking: None):
    paths = many_rollouts(home)
    alone = history.scan_files(paths)
    shared = scan_usage(paths, workers)
    assert shared.daily == alone.daily and shared.quota == alone.quota
    assert (shared.files, shared.size) == (alone.files, alone.size) == (12, alone.size)


def test_a_failed_child_has_its_files_scanned_here(home: CodexHome, forking: None,
                                                   monkeypatch: pytest.MonkeyPatch):
    """A child that dies halfway (its answer never comes) leaves the files it marked, and the
    one it was in, to this process."""
    paths = many_rollouts(home)
    parent = os.getpid()
    scanned: list[int] = []

    def dying(path: Path) -> tuple[history.Stamp, history.UsageHistory] | None:
        if os.getpid() != parent and len(scanned) == 2:
            os._exit(7)
        scanned.append(1)
        return history.scan_file(path)

    monkeypatch.setattr(usage_workers, "scan_file", dying)
    shared = scan_usage(paths, 3)
    alone = history.scan_files(paths)
    assert shared.daily == alone.daily and shared.files == 12


def test_a_file_nobody_took_is_scanned_here(home: CodexHome, forking: None,
                                            monkeypatch: pytest.MonkeyPatch):
    """Entries that did not fit in the queue's pipe are not lost: their files are scanned by
    this process at the end."""
    paths = many_rollouts(home)

    def short_queue(scan: ForkedScan) -> int:
        read, write = os.pipe()
        os.write(write, (0).to_bytes(4, "little"))  # only the first batch
        os.close(write)
        return read

    monkeypatch.setattr(ForkedScan, "_fill_queue", short_queue)
    shared = scan_usage(paths, 2)
    assert shared.daily == history.scan_files(paths).daily and shared.files == 12


def test_early_setting_reads_the_environment_then_the_file(tmp_path: Path):
    config = tmp_path / "config.toml"
    assert early_setting(config, {}, "codex_home") == ""  # no file
    config.write_text('codex_home = "/from/file"\n')
    assert early_setting(config, {}, "codex_home") == "/from/file"
    assert early_setting(config, {"GOALKEEPER_CODEX_HOME": "/env"}, "codex_home") == "/env"
    config.write_text('codex_home = [\n')  # the strict read says what is wrong
    assert early_setting(config, {}, "codex_home") == ""


class Spy:
    """Records what became of the scans ``codex-usage`` started early."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.kept: list[object] = []
        self.cancelled: list[object] = []
        result, cancel = UsageRun.history, UsageRun.cancel

        def kept(run: UsageRun) -> history.UsageHistory:
            self.kept.append(run)
            return result(run)

        def cancelled(run: UsageRun) -> None:
            self.cancelled.append(run)
            cancel(run)

        monkeypatch.setattr(UsageRun, "history", kept)
        monkeypatch.setattr(UsageRun, "cancel", cancelled)


def usage_json(capsys: pytest.CaptureFixture[str]) -> dict:
    return dict(json.loads(capsys.readouterr().out))


def test_codex_usage_keeps_the_early_scan_when_the_settings_agree(
        home: CodexHome, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    from core.cli import main

    two_rollouts(home)
    monkeypatch.setenv("CODEX_HOME", str(home.root))
    assert main(["codex-usage", "--json"]) == 0  # a small history: scanned here
    here = usage_json(capsys)
    spy = Spy(monkeypatch)
    assert main(["codex-usage", "--json", "--workers", "2"]) == 0
    assert usage_json(capsys) == here and len(spy.kept) == 1 and not spy.cancelled


def test_codex_usage_drops_an_early_scan_of_another_home(
        home: CodexHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]):
    """The lenient read guessed one home, the validated settings name another: the early scan
    is ended and the settings' home is the one scanned."""
    from core.cli import main

    two_rollouts(home)
    other = CodexHome(tmp_path / "other")
    other.rollout(THREAD_A, T0, meta(THREAD_A, T0), call(T0 + M, 9), call(T0 + 2 * M, 9))
    monkeypatch.setenv("CODEX_HOME", str(home.root))
    start = codex_usage.early

    def then_move(argv: list[str]) -> codex_usage.EarlyRun | None:  # the settings change
        started = start(argv)  # between the two reads
        monkeypatch.setenv("CODEX_HOME", str(other.root))
        return started

    monkeypatch.setattr(codex_usage, "early", then_move)
    spy = Spy(monkeypatch)
    assert main(["codex-usage", "--json", "--workers", "2"]) == 0
    data = usage_json(capsys)
    assert data["codex_home"] == str(other.root) and data["total"]["calls"] == 2
    [early] = spy.cancelled  # the early run ended; a run of the settings' home answered
    assert len(spy.kept) == 1 and spy.kept[0] is not early


def test_a_settings_error_ends_the_early_scan(
        home: CodexHome, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    from core.cli import main

    two_rollouts(home)
    config = Path(os.environ["GOALKEEPER_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'codex_home = "{home.root}"\nhost_stale_seconds = "soon"\n')
    spy = Spy(monkeypatch)
    assert main(["codex-usage", "--json", "--workers", "2"]) == 2
    assert "host_stale_seconds" in capsys.readouterr().err
    assert len(spy.cancelled) == 1 and not spy.kept


def test_json_nested_too_deep_is_refused_not_a_recursion_error(decoder: str):
    """msgspec raises RecursionError on deep nesting, as json does: either way the line or the
    usage object is refused (None), never a traceback (issue 21's deep JSON)."""
    deep = b"[" * 200_000 + b"]" * 200_000
    assert usagejson.stamp_and_limits(
        b'{"timestamp":"x","payload":{"rate_limits":' + deep + b"}}") is None
    assert usagejson.usage_sums([b'{"input_tokens":1,"extra":' + deep + b"}"]) is None
    with pytest.raises(ValueError):  # the usage cache's file
        usagejson.decode(deep)


def test_the_usage_caches_json_round_trips(decoder: str):
    value = {"format": 1, "key": "k", "files": [["/a", [3, 4, 5], 1, [["2026-01-02", "m", 1, 2,
                                                                        3, 4, 5, 6]],
                                                 [["codex:5h", 1_000_000, 12.5]]]]}
    assert usagejson.decode(usagejson.encode(value)) == value
    with pytest.raises(ValueError):
        usagejson.decode(b'{"format": ')


def test_no_process_to_fork_means_fewer_children(home: CodexHome, forking: None,
                                                 monkeypatch: pytest.MonkeyPatch):
    """fork failing (EAGAIN: the user's process limit) leaves this process to read all: the
    same answer, no pipe left open."""
    paths = many_rollouts(home)

    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    before = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "fork", no_fork)
    pending = start_scan(paths, 3)
    assert isinstance(pending, ForkedScan) and pending.children == []
    assert combined(pending.parts()).daily == history.scan_files(paths).daily
    assert len(os.listdir("/proc/self/fd")) == before


def test_no_pipe_means_reading_here(home: CodexHome, forking: None,
                                    monkeypatch: pytest.MonkeyPatch):
    paths = many_rollouts(home)

    def no_pipe() -> tuple[int, int]:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(os, "pipe", no_pipe)
    assert start_scan(paths, 2) is None
    assert scan_usage(paths, 2).daily == history.scan_files(paths).daily


def test_a_scan_cut_short_is_still_ended_cleanly(home: CodexHome, forking: None,
                                                monkeypatch: pytest.MonkeyPatch):
    """Ctrl-C while the children's answers are collected: cancelling then closes and reaps what
    is left, and signals no child already reaped (its pid may be another process's by then)."""
    import pickle

    paths = many_rollouts(home)
    pending = start_scan(paths, 3)
    assert isinstance(pending, ForkedScan)
    pids = [child.pid for child, _ in pending.children]

    loads = pickle.loads
    calls: list[bytes] = []

    def interrupted(data: bytes) -> object:  # while the second child's answer is read
        calls.append(data)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return loads(data)

    monkeypatch.setattr(pickle, "loads", interrupted)
    with pytest.raises(KeyboardInterrupt):
        pending.parts()
    killed: list[int] = []
    kill = os.kill
    monkeypatch.setattr(os, "kill", lambda pid, sig: (killed.append(pid), kill(pid, sig)))
    pending.cancel()
    assert killed == pids[2:]  # the first two had answered (whole): waited for, not signalled
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.mark.parametrize(("argv", "asked"), [
    (["codex-usage"], 0), (["codex-usage", "--json", "--since", "2026-01-01"], 0),
    (["codex-usage", "--workers", "3"], 3), (["codex-usage", "--workers=2"], 2),
    (["codex-usage", "--wor", "5", "--json"], 5), (["codex-usage", "--w=1"], 1),
    (["codex-usage", "--workers", "many"], None), (["codex-usage", "--workers"], None),
    (["codex-usage", "-h"], None), (["codex-usage", "--help"], None),
])
def test_the_early_run_reads_workers_as_argparse_will(argv: list[str], asked: int | None):
    assert codex_usage._workers_asked(argv) == asked


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The children forked (by :class:`~core.forked.ForkedCall`) in this process."""
    pids: list[int] = []
    start = forked.ForkedCall.__init__

    def counted(call: forked.ForkedCall[object], work: object, then: object = None) -> None:
        start(call, work, then)  # type: ignore[arg-type]
        pids.append(call.pid or 0)

    monkeypatch.setattr(forked.ForkedCall, "__init__", counted)
    return pids


def reaped(pids: list[int]) -> bool:
    """Every one of ``pids`` has ended and been reaped (no zombie, none still running)."""
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    return True


def test_the_forked_run_answers_and_this_process_reads_nothing(
        home: CodexHome, forking: None, forks: list[int], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]):
    """Where the process may fork, the run is a forked copy started before anything loads:
    this process only waits for its answer (a run here would be seen by the spy)."""
    from core.cli import main

    two_rollouts(home)
    monkeypatch.setenv("CODEX_HOME", str(home.root))
    monkeypatch.setattr(forked, "can_fork", lambda: False)
    assert main(["codex-usage", "--json"]) == 0
    here = usage_json(capsys)
    monkeypatch.setattr(forked, "can_fork", lambda: True)
    cache = Path(os.environ["GOALKEEPER_HOME"]) / "codex-usage-cache.json"
    cache.unlink()
    spy = Spy(monkeypatch)
    assert main(["codex-usage", "--json"]) == 0
    assert usage_json(capsys) == here and not spy.kept and len(forks) == 1 and reaped(forks)
    # the forked copy wrote the cache after sending its answer; the command waited for it
    assert len(UsageCache.load(cache, scan_key()).entries) == 2


def test_a_failed_forked_run_is_made_up_for_here(
        home: CodexHome, forking: None, forks: list[int], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]):
    from core.cli import main

    two_rollouts(home)
    monkeypatch.setenv("CODEX_HOME", str(home.root))

    def dies(job: object) -> None:
        raise MemoryError

    monkeypatch.setattr(codex_usage._ForkedRun, "answer", dies)
    spy = Spy(monkeypatch)
    assert main(["codex-usage", "--json"]) == 0
    assert usage_json(capsys)["total"]["calls"] == 2 and len(spy.kept) == 1
    assert len(forks) == 1 and reaped(forks)


def test_a_forked_run_of_another_home_is_not_kept(
        home: CodexHome, tmp_path: Path, forking: None, forks: list[int],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """The forked run read the home the environment named when it started; the settings
    validated afterwards name another: that one is read here."""
    from core.cli import main

    two_rollouts(home)
    other = CodexHome(tmp_path / "other")
    other.rollout(THREAD_A, T0, meta(THREAD_A, T0), call(T0 + M, 9), call(T0 + 2 * M, 9),
                  call(T0 + 3 * M, 9))
    monkeypatch.setenv("CODEX_HOME", str(home.root))
    start = codex_usage.early

    def then_move(argv: list[str]) -> codex_usage.EarlyRun | None:
        started = start(argv)
        monkeypatch.setenv("CODEX_HOME", str(other.root))
        return started

    monkeypatch.setattr(codex_usage, "early", then_move)
    assert main(["codex-usage", "--json"]) == 0
    data = usage_json(capsys)
    assert data["codex_home"] == str(other.root) and data["total"]["calls"] == 3
    assert len(forks) == 1 and reaped(forks)


def test_a_forked_run_of_a_home_the_settings_do_not_name_is_ended_before_reading_here(
        home: CodexHome, tmp_path: Path, forking: None, forks: list[int],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """Where the settings, validated, name another home than the early read guessed, the run
    is not waited for: it is ended, and reaped, before this process reads the right one."""
    import time

    from core.cli import main

    two_rollouts(home)
    monkeypatch.setenv("CODEX_HOME", str(home.root))
    monkeypatch.setattr(codex_usage._ForkedRun, "answer", lambda job: time.sleep(60))
    monkeypatch.setattr(codex_usage, "_early_home", lambda config: tmp_path / "guessed")
    ended_first: list[bool] = []
    history = UsageRun.history

    def here(run: UsageRun) -> object:
        ended_first.append(reaped(forks))
        return history(run)

    monkeypatch.setattr(UsageRun, "history", here)
    started = time.monotonic()
    assert main(["codex-usage", "--json"]) == 0
    assert usage_json(capsys)["total"]["calls"] == 2 and time.monotonic() - started < 30
    assert len(forks) == 1 and ended_first == [True]


def test_a_settings_error_ends_the_forked_run(
        home: CodexHome, forking: None, forks: list[int], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]):
    """The run is ended (SIGTERM: its own workers with it) and reaped, not waited for."""
    import time

    from core.cli import main

    two_rollouts(home)
    config = Path(os.environ["GOALKEEPER_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'codex_home = "{home.root}"\nhost_stale_seconds = "soon"\n')
    monkeypatch.setattr(codex_usage._ForkedRun, "answer", lambda job: time.sleep(60))
    started = time.monotonic()
    assert main(["codex-usage", "--json"]) == 2
    assert "host_stale_seconds" in capsys.readouterr().err
    assert time.monotonic() - started < 30 and len(forks) == 1 and reaped(forks)


def test_the_command_reads_in_a_forked_copy_of_itself(home: CodexHome, tmp_path: Path):
    """As users run it (a process without threads): the run is forked first thing, and its
    answer is the one printed."""
    import subprocess
    import sys

    two_rollouts(home)
    code = ("import os, sys; forks = []; fork = os.fork\n"
            "def counted():\n    forks.append(1)\n    return fork()\n"
            "os.fork = counted\n"
            "from core.cli import main; code = main(['codex-usage', '--json']); "
            "print(len(forks), file=sys.stderr); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "CODEX_HOME": str(home.root),
                                           "GOALKEEPER_HOME": str(tmp_path / "gk")})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["total"]["calls"] == 2 and done.stderr.strip() == "1"


def test_ctrl_c_ends_the_command_and_every_process_it_started(home: CodexHome, tmp_path: Path):
    """Ctrl-C reaches the whole process group — the command, its forked run and the run's
    worker: the command exits 130 without a traceback, once the run has ended, and the run
    ends once it has reaped its worker (a second signal, the command's cancel, does not cut
    that short): nothing is left behind, not even a zombie."""
    import signal
    import subprocess
    import sys
    import time

    two_rollouts(home)
    started, ended = tmp_path / "started", tmp_path / "ended"
    started.mkdir()
    ended.mkdir()
    code = ("import os, time; from core.providers.codex import history, usage_workers\n"
            "def slow(path):\n    try:\n"  # a reader noted when it starts and when it ends
            f"        open(os.path.join({str(started)!r}, str(os.getpid())), 'w').close()\n"
            "        time.sleep(60)\n"
            "    finally:\n        time.sleep(0.5)\n"  # (slow to end)
            f"        open(os.path.join({str(ended)!r}, str(os.getpid())), 'w').close()\n"
            "usage_workers.scan_file = history.scan_file = slow\n"
            "import sys; from core.cli import script; sys.exit(script())")
    proc = subprocess.Popen([sys.executable, "-c", code, "codex-usage", "--workers", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True,
                            env={**os.environ, "CODEX_HOME": str(home.root),
                                 "GOALKEEPER_HOME": str(tmp_path / "gk")})

    def group() -> list[str]:
        return subprocess.run(["ps", "-o", "pid=,stat=", "-g", str(proc.pid)],
                              capture_output=True, text=True).stdout.split("\n")[:-1]

    deadline = time.monotonic() + 60  # the run and its worker reading a rollout each
    while len(os.listdir(started)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(os.listdir(started)) == 2 and len(group()) == 3  # + the command
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and out == b"" and b"Traceback" not in err
    assert group() == []  # the command ended last: it waited for the run, the run for its worker
    assert len(os.listdir(ended)) == 2  # the run and its worker each ended its reading whole


def test_ctrl_c_while_the_cli_loads_is_exit_130_and_ends_the_run(
        home: CodexHome, forking: None, forks: list[int], monkeypatch: pytest.MonkeyPatch):
    """Ctrl-C after the run has started and before the command runs (the language, the parser,
    the settings loading): no traceback, exit 130, the run ended and reaped."""
    import time

    from core import i18n
    from core.cli import main

    two_rollouts(home)
    monkeypatch.setenv("CODEX_HOME", str(home.root))
    monkeypatch.setattr(codex_usage._ForkedRun, "answer", lambda job: time.sleep(60))

    def interrupted(*args: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(i18n, "setup", interrupted)
    assert main(["codex-usage", "--json"]) == 130
    assert len(forks) == 1 and reaped(forks)
