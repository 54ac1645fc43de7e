"""The status bar's notification indicator: how ntfy and the webhook are doing.

Hidden while neither is configured. Otherwise one line — ``Notifications: ntfy ✓ · webhook ✓`` —
and a channel the core reports as failing turns it red: ``⚠ Notifications: webhook failing``,
with the reason, since when and the counts in the tooltip (the same record `goalkeeper status`
shows). The first time a channel starts failing, ``started_failing(str)`` carries a sentence for
the window's banner.
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QStatusBar

from core.i18n import localized
from core.i18n.textfmt import short_time
from core.i18n.words import word
from core.notices import ChannelHealth, ChannelState
from gui.bridge import Bridge
from gui.i18n import QT_TR_NOOP, tr

FAILING_STYLE = "color: #c62828; font-weight: bold;"
MARKS = {ChannelState.OK: "✓", ChannelState.IDLE: QT_TR_NOOP("· nothing sent yet"),
         ChannelState.RETRYING: QT_TR_NOOP("retrying…"), ChannelState.FAILING: QT_TR_NOOP(
             "failing")}


def indicator_text(channels: list[ChannelHealth], now: datetime) -> tuple[str, str, bool]:
    """(the label, its tooltip, whether a channel is failing) for these channel records."""
    if not channels:
        return "", "", False
    failing = [h for h in channels if h.failing]
    parts = [f"{h.channel} {tr(MARKS[h.state]) if h.state in MARKS else word(h.state)}"
             for h in channels]
    text = ("⚠ " if failing else "") + tr("Notifications: {channels}").format(
        channels=" · ".join(parts))
    return text, "\n".join(_tooltip_line(h, now) for h in channels), bool(failing)


def _tooltip_line(h: ChannelHealth, now: datetime) -> str:
    line = tr("{channel} → {target} (from “{kind}”): ").format(
        channel=h.channel, target=h.target, kind=h.min_kind.value)
    if h.failing:
        since = short_time(h.failing_since, now) if h.failing_since else "?"
        line += tr("failing since {since}: {reason}").format(since=since,
                                                             reason=localized(h.reason or ""))
    elif h.state is ChannelState.RETRYING:
        line += tr("retrying: {reason}").format(reason=localized(h.reason or ""))
    elif h.last_delivered_at is not None:
        line += tr("last sent {when}").format(when=short_time(h.last_delivered_at, now))
    else:
        line += tr("nothing sent yet")
    return line + tr(" — {delivered} sent, {failed} not delivered").format(
        delivered=h.delivered, failed=h.failed)


class ChannelIndicator(QLabel):
    """A permanent status-bar label over the bridge's channel records.

    Signals: ``started_failing(str)`` — a channel that was not failing now is (a sentence).
    """

    started_failing = Signal(str)

    def __init__(self, bridge: Bridge, bar: QStatusBar) -> None:
        super().__init__(bar)
        self._bridge = bridge
        self.failing = False
        self.setAccessibleName(tr("Notification channels"))
        bar.addPermanentWidget(self)
        bridge.notify_channel_changed.connect(self._on_bridge_notify_channel_changed)
        self._known: dict[str, ChannelState] = {}
        self.refresh()

    def _on_bridge_notify_channel_changed(self, health: ChannelHealth) -> None:
        before = self._known.get(health.channel)
        self._known[health.channel] = health.state
        if health.failing and before is not ChannelState.FAILING:
            self.started_failing.emit(
                tr("Notifications to {channel} ({target}) are failing: {reason}").format(
                    channel=health.channel, target=health.target,
                    reason=localized(health.reason or "")))
        self.refresh()

    def refresh(self) -> None:
        text, tip, failing = indicator_text(self._bridge.notify_channels(), self._bridge.now())
        self.failing = failing
        self.setText(text)
        self.setToolTip(tip)
        self.setAccessibleDescription(tip)
        self.setStyleSheet(FAILING_STYLE if failing else "")
        self.setVisible(bool(text))
