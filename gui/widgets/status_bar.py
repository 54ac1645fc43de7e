"""The status bar's permanent part: host state, what is wrong with the host (store unavailable,
safe mode, a provider that failed to start), when the providers were last read (the latest
reading or refresh, whichever is later), next scheduled wake."""

from __future__ import annotations

from datetime import datetime

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from core.health import HostHealth
from core.i18n import localized
from core.i18n.textfmt import countdown, long_time, short_time
from core.models import QuotaReading
from gui.bridge import Bridge
from gui.i18n import QT_TR_NOOP, tr

HOST_STATES = {
    "starting": QT_TR_NOOP("Starting the host…"),
    "running": QT_TR_NOOP("Host: {text}"),
    "replaced": QT_TR_NOOP("Host not running: another Goalkeeper host took over this data "
                           "directory"),
    "stopping": QT_TR_NOOP("Stopping the host…"),
    "stopped": QT_TR_NOOP("Host stopped"),
}
PROBLEM_STYLE = "QLabel { color: #c62828; font-weight: bold; }"


class HostStatus(QWidget):
    """Four labels added to a QStatusBar; the wake countdown needs the display tick. The
    problem label is shown only while the host reports a problem."""

    def __init__(self, bridge: Bridge, bar: QStatusBar) -> None:
        super().__init__(bar)
        self._bridge = bridge
        self.next_wake: datetime | None = bridge.next_wake
        self.last_read: datetime | None = None
        self.host = QLabel(bar)
        self.problem = QLabel(bar)
        self.problem.setStyleSheet(PROBLEM_STYLE)
        self.problem.hide()
        self.refresh = QLabel(bar)
        self.wake = QLabel(bar)
        for label, name in ((self.host, tr("Host state")), (self.problem, tr("Host problem")),
                            (self.refresh, tr("Last provider refresh")),
                            (self.wake, tr("Next scheduled wake"))):
            label.setAccessibleName(name)
            bar.addPermanentWidget(label)
        bridge.host_state_changed.connect(self._on_bridge_host_state_changed)
        bridge.providers_refreshed.connect(self._on_bridge_providers_refreshed)
        bridge.quota_observed.connect(self._on_bridge_quota_observed)
        bridge.scheduler_woke.connect(self._on_bridge_scheduler_woke)
        bridge.health_changed.connect(self._on_bridge_health_changed)
        self._on_bridge_host_state_changed(bridge.host_state)
        self.refresh.setText(tr("Providers not read yet"))
        self.tick(bridge.now())

    def _on_bridge_host_state_changed(self, state: str) -> None:
        text = tr(HOST_STATES[state]) if state in HOST_STATES else state
        self.host.setText(text.format(text=self._bridge.host_text))
        self.host.setToolTip(tr("Data directory: {dir}").format(dir=self._bridge.data_dir))

    def _on_bridge_health_changed(self, health: HostHealth) -> None:
        problems = [localized(problem) for problem in health.problems()]
        self.problem.setVisible(bool(problems))
        if problems:
            more = (tr(" (+{count} more)").format(count=len(problems) - 1) if len(problems) > 1
                    else "")
            self.problem.setText(_short(problems[0]) + more)
            self.problem.setToolTip("\n".join(problems))

    def _on_bridge_providers_refreshed(self, at: datetime) -> None:
        self._read_at(at)

    def _on_bridge_quota_observed(self, reading: QuotaReading) -> None:
        # a reading is a provider read too: readings arrive every few seconds between refreshes
        self._read_at(reading.observed_at)

    def _read_at(self, at: datetime) -> None:
        if self.last_read is not None and at <= self.last_read:
            return
        self.last_read = at
        self.refresh.setText(tr("Providers read {when}").format(
            when=short_time(at, self._bridge.now())))
        self.refresh.setToolTip(long_time(at))

    def _on_bridge_scheduler_woke(self, next_wake: datetime | None) -> None:
        self.next_wake = next_wake
        self.tick(self._bridge.now())

    def tick(self, now: datetime) -> None:
        if self.next_wake is None:
            self.wake.setText(tr("Scheduler idle: nothing pending"))
            self.wake.setToolTip(tr("The scheduler wakes when a goal or quota changes."))
            return
        self.wake.setText(tr("Next wake {countdown}").format(
            countdown=countdown(self.next_wake, now)))
        self.wake.setToolTip(long_time(self.next_wake))

    def needs_tick(self) -> bool:
        return self.next_wake is not None


def _short(text: str, limit: int = 110) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
