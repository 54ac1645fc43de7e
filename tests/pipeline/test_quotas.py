"""User quotas: config.toml tables, the three models, atomic debits that race, refills."""

from __future__ import annotations

import multiprocessing
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.models import QuotaKind
from core.providers.pipeline.ledger import QuotaLedger, QuotaLedgerError
from core.quota.user import CapacityQuota, PeriodicQuota, TokenBucketQuota
from core.settings import Settings, SettingsError, load_settings, save_settings

NOW = datetime(2026, 7, 10, 1, 30, tzinfo=UTC)  # 09:30 in Shanghai
CONFIG = """\
resume_margin_seconds = 10

[quotas.github-api]
kind = "periodic"
limit = 100
period = "day"
reset_at = "00:00"
timezone = "Asia/Shanghai"

[quotas.credits]
kind = "capacity"
limit = 1000

[quotas.search]
kind = "token_bucket"
rate = 10
per = "minute"
burst = 20
"""


def test_config_toml_takes_quota_tables_and_flat_fields_keep_env_overrides(
        tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    settings = load_settings(path, {"GOALKEEPER_RESUME_MARGIN_SECONDS": "3"})
    assert settings.resume_margin_seconds == 3
    assert isinstance(settings.quotas["github-api"], PeriodicQuota)
    assert isinstance(settings.quotas["credits"], CapacityQuota)
    assert isinstance(settings.quotas["search"], TokenBucketQuota)
    save_settings(path, settings)
    assert load_settings(path, {}) == settings.model_copy(update={"resume_margin_seconds": 3})


@pytest.mark.parametrize(("edit", "needle"), [
    (("limit = 1000", "limit = -5"), "setting quotas.credits.limit = -5 from "),
    (("limit = 1000", "limit = -5"), "config.toml:12: Input should be greater than 0"),
    (('per = "minute"', 'per = "fortnight"'), "quotas.search.per"),
    (('kind = "capacity"', 'kind = "magic"'), "quotas.credits"),
    (('reset_at = "00:00"', 'reset_at = "25:00"'), "quotas.github-api.reset_at"),
    (("burst = 20", "burst = 20\nbursty = 3"), "unknown setting 'quotas.search.bursty'"),
])
def test_bad_quota_tables_name_line_and_field(tmp_path: Path, edit: tuple[str, str],
                                              needle: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG.replace(*edit))
    with pytest.raises(SettingsError) as info:
        load_settings(path, {})
    assert needle in str(info.value)


def test_the_quotas_table_has_no_environment_override(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "none.toml", {"GOALKEEPER_QUOTAS": "{}"})
    assert settings.quotas == {}


def test_periodic_windows_follow_the_local_reset_time() -> None:
    spec = PeriodicQuota(kind="periodic", limit=100, period="day", reset_at="00:00",
                         timezone="Asia/Shanghai")
    start, end = spec.window(NOW)
    assert start == datetime(2026, 7, 9, 16, 0, tzinfo=UTC)  # 00:00 Shanghai
    assert end == datetime(2026, 7, 10, 16, 0, tzinfo=UTC)
    weekly = PeriodicQuota(kind="periodic", limit=5, period="week", weekday="monday",
                           reset_at="09:00", timezone="UTC")
    assert weekly.window(NOW) == (datetime(2026, 7, 6, 9, 0, tzinfo=UTC),
                                  datetime(2026, 7, 13, 9, 0, tzinfo=UTC))
    hourly = PeriodicQuota(kind="periodic", limit=5, period="hour", reset_at="00:15",
                           timezone="UTC")
    assert hourly.window(NOW) == (datetime(2026, 7, 10, 1, 15, tzinfo=UTC),
                                  datetime(2026, 7, 10, 2, 15, tzinfo=UTC))


def ledger(tmp_path: Path) -> QuotaLedger:
    settings = Settings.model_validate({"quotas": {
        "api": {"kind": "periodic", "limit": 3, "period": "day", "timezone": "Asia/Shanghai"},
        "credits": {"kind": "capacity", "limit": 10},
        "search": {"kind": "token_bucket", "rate": 10, "per": "minute", "burst": 20},
    }})
    return QuotaLedger(tmp_path / "quotas.db", settings.quotas)


def test_periodic_debits_refuse_until_the_next_window(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    assert [book.debit_blocking("api", 1, NOW).ok for _ in range(4)] == [True] * 3 + [False]
    refused = book.debit_blocking("api", 1, NOW)
    assert refused.until == datetime(2026, 7, 10, 16, 0, tzinfo=UTC)
    assert refused.window == "quota:api"
    reading = book.reading("api", NOW)
    assert reading.kind is QuotaKind.PERIODIC and reading.limit_reached and reading.used == 3
    assert book.debit_blocking("api", 1, refused.until).ok  # a new day


def test_a_capacity_quota_only_refills_by_hand(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    assert book.debit_blocking("credits", 8, NOW).ok
    refused = book.debit_blocking("credits", 5, NOW)
    assert not refused.ok and refused.until is None
    later = NOW + timedelta(days=30)
    assert not book.debit_blocking("credits", 5, later).ok
    reading = book.reading("credits", later)
    assert reading.limit_reached and reading.no_timed_reset
    assert book.refill_blocking("credits", 2, later) == 4
    assert book.reading("credits", later).limit_reached  # 4 left, 5 needed
    assert book.refill_blocking("credits", 100, later) == 10  # capped at the limit
    assert book.reading("credits", later).limit_reached is False
    assert book.debit_blocking("credits", 5, later).ok
    with pytest.raises(QuotaLedgerError, match="only capacity quotas"):
        book.refill_blocking("api", 1, NOW)
    with pytest.raises(QuotaLedgerError, match="no quota named"):
        book.refill_blocking("nope", 1, NOW)


def test_a_token_bucket_refills_at_its_rate(tmp_path: Path) -> None:
    book = ledger(tmp_path)
    assert book.debit_blocking("search", 20, NOW).ok  # the whole burst
    refused = book.debit_blocking("search", 5, NOW)
    assert not refused.ok and refused.until == NOW + timedelta(seconds=30)  # 10 per minute
    assert book.debit_blocking("search", 5, NOW + timedelta(seconds=30)).ok
    reading = book.reading("search", NOW + timedelta(seconds=30))
    assert reading.kind is QuotaKind.TOKEN_BUCKET and reading.tokens == pytest.approx(0)
    assert book.problem("search", 21) is not None and book.problem("search", 20) is None


def test_concurrent_debits_from_threads_never_overspend(tmp_path: Path) -> None:
    settings = Settings.model_validate({"quotas": {"api": {"kind": "capacity", "limit": 50}}})
    book = QuotaLedger(tmp_path / "quotas.db", settings.quotas)
    results: list[bool] = []
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def worker() -> None:
        barrier.wait()
        for _ in range(20):
            ok = book.debit_blocking("api", 1, NOW).ok
            with lock:
                results.append(ok)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 50 and len(results) == 160
    assert book.reading("api", NOW).used == 50


def _debit_in_process(path: str, count: int, start: object) -> int:
    settings = Settings.model_validate({"quotas": {"api": {"kind": "capacity", "limit": 60}}})
    book = QuotaLedger(Path(path), settings.quotas)
    start.wait()  # type: ignore[attr-defined]
    return sum(book.debit_blocking("api", 1, NOW).ok for _ in range(count))


@pytest.mark.slow
def test_concurrent_debits_from_processes_never_overspend(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        start = manager.Event()
        with ctx.Pool(3) as pool:
            pending = [pool.apply_async(_debit_in_process,
                                        (str(tmp_path / "quotas.db"), 40, start))
                       for _ in range(3)]
            start.set()
            granted = [p.get(60) for p in pending]
    assert sum(granted) == 60


@pytest.mark.parametrize("amount", [float("nan"), float("inf"), 0, -3])
def test_a_refill_that_is_not_a_positive_number_is_refused(tmp_path: Path,
                                                           amount: float) -> None:
    # `goalkeeper quota refill credits nan` must not refill the whole quota
    book = ledger(tmp_path)
    assert book.debit_blocking("credits", 8, NOW).ok
    with pytest.raises(QuotaLedgerError, match="positive number"):
        book.refill_blocking("credits", amount, NOW)
    assert book.reading("credits", NOW).used == 8
