"""One page of the resume history as a table, plus the CSV rendering of any number of rows."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from datetime import tzinfo
from enum import IntEnum
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from core.clock import iso
from core.i18n import localized
from core.i18n.textfmt import local_time, long_time
from core.models import HistoryRow
from gui import format as fmt
from gui.i18n import QT_TR_NOOP, tr

Index = QModelIndex | QPersistentModelIndex
RowRole = Qt.ItemDataRole.UserRole + 1


class HColumn(IntEnum):
    TIME = 0
    GOAL = 1
    EVENT = 2
    TRIGGER = 3
    OUTCOME = 4
    REASON = 5
    QUOTA = 6


HEADERS = {
    HColumn.TIME: QT_TR_NOOP("Time"),
    HColumn.GOAL: QT_TR_NOOP("Goal"),
    HColumn.EVENT: QT_TR_NOOP("Event"),
    HColumn.TRIGGER: QT_TR_NOOP("Trigger"),
    HColumn.OUTCOME: QT_TR_NOOP("Outcome"),
    HColumn.REASON: QT_TR_NOOP("Reason"),
    HColumn.QUOTA: QT_TR_NOOP("Quota decided on"),
}

CSV_FIELDS = ("id", "at_utc", "local_time", "goal", "event", "trigger", "origin", "outcome",
              "reason", "state_from", "state_to", "fence", "quotas", "detail")


class HistoryModel(QAbstractTableModel):
    """The rows of the page being shown, newest first."""

    def __init__(self, zone: tzinfo | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.zone = zone
        self._rows: list[HistoryRow] = []

    def set_rows(self, rows: Sequence[HistoryRow]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def row_at(self, row: int) -> HistoryRow | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(HColumn)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return tr(HEADERS[HColumn(section)])
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self.row_at(index.row())
        if row is None:
            return None
        column = HColumn(index.column())
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(row, column)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(row, column)
        if role == RowRole:
            return row
        return None

    def text(self, row: HistoryRow, column: HColumn) -> str:
        if column is HColumn.TIME:
            return local_time(row.at, self.zone)
        if column is HColumn.GOAL:
            return row.goal or "—"
        if column is HColumn.EVENT:
            return fmt.event_text(row)
        if column is HColumn.TRIGGER:
            return fmt.trigger_text(row)
        if column is HColumn.OUTCOME:
            return fmt.outcome_text(row)
        if column is HColumn.REASON:
            return localized(row.reason or "")
        return fmt.quota_text(row)

    def _tooltip(self, row: HistoryRow, column: HColumn) -> str:
        if column is HColumn.TIME:
            return long_time(row.at, self.zone)
        if column is HColumn.QUOTA and row.quotas:
            return json.dumps(list(row.quotas), indent=1, default=str)
        if row.detail and column in (HColumn.EVENT, HColumn.REASON):
            return json.dumps(row.detail, indent=1, sort_keys=True, default=str)
        return self.text(row, column)


def csv_text(rows: Iterable[HistoryRow], zone: tzinfo | None = None) -> str:
    """Rows as CSV: UTC and local time, every field; quotas and detail as JSON."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for row in rows:
        writer.writerow([
            row.id, iso(row.at), local_time(row.at, zone), row.goal or "", row.event,
            row.trigger.value if row.trigger else "", row.origin or "",
            row.outcome.value if row.outcome else "", row.reason or "",
            row.state_from.value if row.state_from else "",
            row.state_to.value if row.state_to else "",
            "" if row.fence is None else row.fence,
            json.dumps(list(row.quotas), default=str, sort_keys=True),
            json.dumps(row.detail, default=str, sort_keys=True),
        ])
    return out.getvalue()
