"""Persistence: one store interface (:mod:`core.store.base`), two stores — SQLite (one machine,
the default) and PostgreSQL (shared by several hosts) — their schemas and the thread a store
lives on."""

from core.store.base import (
    ActionRequest,
    Committed,
    HostRecord,
    LeaseLost,
    Mutation,
    NoData,
    NotOwner,
    Store,
    StoreError,
    StoreUnavailable,
)
from core.store.sqlite import SqliteStore, open_read_only, open_store
from core.store.thread import StoreThread

__all__ = ["ActionRequest", "Committed", "HostRecord", "LeaseLost", "Mutation", "NoData",
           "NotOwner", "SqliteStore", "Store", "StoreError", "StoreThread", "StoreUnavailable",
           "open_read_only", "open_store"]
