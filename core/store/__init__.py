"""Persistence: the SQLite store, its schema and the thread it lives on."""

from core.store.sqlite import Committed, Mutation, SqliteStore, StoreError, open_store
from core.store.thread import StoreThread

__all__ = ["Committed", "Mutation", "SqliteStore", "StoreError", "StoreThread", "open_store"]
