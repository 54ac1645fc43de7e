"""Persistence: the SQLite store, its schema and the thread it lives on."""

from core.store.sqlite import (
    Committed,
    LeaseLost,
    Mutation,
    NoData,
    SqliteStore,
    StoreError,
    open_read_only,
    open_store,
)
from core.store.thread import StoreThread

__all__ = ["Committed", "LeaseLost", "Mutation", "NoData", "SqliteStore", "StoreError",
           "StoreThread", "open_read_only", "open_store"]
