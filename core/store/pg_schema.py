"""The shared store's schema as a list of small migrations, like SQLite's (:mod:`.schema`).

The version is a row in ``goalkeeper_schema``. Every host migrates at start, and several may
start at once: the migration runs in one transaction under an advisory lock (``pg_advisory_lock``,
PostgreSQL's own mechanism for this), so one host migrates while the others wait, then find the
schema current. DDL is transactional in
PostgreSQL: a migration that fails leaves nothing half-done. Never edit a released step:
append one.
"""

from __future__ import annotations

import psycopg

from core.i18n import N_
from core.store.base import StoreError

#: the advisory lock key of migrations ("gkschema" as a signed 64-bit number)
MIGRATION_LOCK = int.from_bytes(b"gkschema", "big", signed=True)

MIGRATIONS: list[str] = [
    # 0 -> 1: the schema of SQLite's version 3 (goals with their owner host, history with its
    # writer, readings per account, the hosts registry, action requests), in native types
    """
    CREATE TABLE goalkeeper_schema (version integer NOT NULL);
    INSERT INTO goalkeeper_schema VALUES (0);
    CREATE TABLE goals (
        id text PRIMARY KEY,
        provider text NOT NULL,
        title text NOT NULL,
        state text NOT NULL,
        pause_reason text,
        pause_detail text,
        windows jsonb NOT NULL DEFAULT '[]',
        auto_resume boolean NOT NULL DEFAULT false,
        next_resume_at timestamptz,
        auto_resume_note text,
        resets_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        fence bigint NOT NULL DEFAULT 0,
        hosted boolean NOT NULL DEFAULT false,
        resumed_at timestamptz,
        data jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        state_since timestamptz,
        policy jsonb NOT NULL DEFAULT '{}',
        deferral jsonb,
        host text NOT NULL DEFAULT ''
    );
    CREATE INDEX goals_state ON goals (state);
    CREATE INDEX goals_host ON goals (host);
    CREATE INDEX goals_windows ON goals USING gin (windows);
    CREATE TABLE history (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL,
        goal text,
        event text NOT NULL,
        trigger text,
        origin text,
        outcome text,
        reason text,
        state_from text,
        state_to text,
        fence bigint,
        quotas jsonb NOT NULL DEFAULT '[]',
        detail jsonb NOT NULL DEFAULT '{}',
        host text
    );
    CREATE INDEX history_goal ON history (goal, id);
    CREATE TABLE quota_latest (
        account text NOT NULL,
        window_id text NOT NULL,
        provider text NOT NULL,
        observed_at timestamptz NOT NULL,
        reading jsonb NOT NULL,
        host text NOT NULL DEFAULT '',
        exactness text NOT NULL,
        PRIMARY KEY (account, window_id)
    );
    CREATE TABLE quota_series (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account text NOT NULL,
        window_id text NOT NULL,
        observed_at timestamptz NOT NULL,
        used_percent double precision,
        exactness text NOT NULL
    );
    CREATE INDEX quota_series_window ON quota_series (account, window_id, observed_at);
    CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
    CREATE TABLE hosts (
        host_id text PRIMARY KEY,
        kind text NOT NULL,
        machine text NOT NULL,
        pid integer NOT NULL,
        since timestamptz NOT NULL,
        heartbeat timestamptz NOT NULL,
        epoch bigint NOT NULL DEFAULT 0,
        state text NOT NULL DEFAULT 'online',
        stopped_at timestamptz,
        accounts jsonb NOT NULL DEFAULT '{}',
        version text NOT NULL DEFAULT ''
    );
    CREATE TABLE requests (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        to_host text NOT NULL,
        by_host text NOT NULL,
        request jsonb NOT NULL,
        state text NOT NULL DEFAULT 'pending',
        requested_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        answer jsonb,
        answered_at timestamptz
    );
    CREATE INDEX requests_pending ON requests (to_host, state);
    """,
    # 1 -> 2: like SQLite's step 4 — the keys that steer Goalkeeper's own decisions move out
    # of the provider's metadata (``data``) into their own column (core.models.Steering)
    """
    ALTER TABLE goals ADD COLUMN steering jsonb NOT NULL DEFAULT '{}';
    UPDATE goals SET
        steering = (SELECT jsonb_object_agg(key, value) FROM jsonb_each(data)
                    WHERE key IN ('no_reset_note', 'resume_slot', 'last_resume_trigger',
                                  'auto_resume_block', 'budget', 'last_run', 'policy_pause')),
        data = data - ARRAY['no_reset_note', 'resume_slot', 'last_resume_trigger',
                            'auto_resume_block', 'budget', 'last_run', 'policy_pause']
        WHERE data ?| ARRAY['no_reset_note', 'resume_slot', 'last_resume_trigger',
                            'auto_resume_block', 'budget', 'last_run', 'policy_pause'];
    """,
    # 2 -> 3: each host's clock offset from the database's at its last heartbeat (seconds, the
    # host's minus the database's): a host whose clock is off is shown, by name and offset
    """
    ALTER TABLE hosts ADD COLUMN clock_offset double precision;
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(con: psycopg.Connection[tuple[object, ...]]) -> int:
    row = con.execute("SELECT to_regclass('goalkeeper_schema') IS NOT NULL").fetchone()
    if row is None or not row[0]:
        return 0
    found = con.execute("SELECT version FROM goalkeeper_schema").fetchone()
    return int(str(found[0])) if found else 0


def newer_schema_text(where: str, found: int) -> str:
    """Why a store whose schema is newer than this Goalkeeper's cannot be used."""
    return N_("{store} has schema version {version}, newer than this Goalkeeper understands "
              "({ours}); upgrade Goalkeeper to use it").format(store=where, version=found,
                                                               ours=SCHEMA_VERSION)


def migrate(con: psycopg.Connection[tuple[object, ...]], where: str) -> int:
    """Bring the schema up to date under the migration lock; returns the version found.

    The lock is taken *before* the migration's transaction begins: a transaction that began
    before it waited would keep its view of the catalog (and its snapshot) from before its
    predecessor created the schema. The session lock goes with the connection if it dies.
    """
    con.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        with con.transaction():
            found = schema_version(con)
            if found > SCHEMA_VERSION:
                raise StoreError(newer_schema_text(where, found))
            for target in range(found + 1, SCHEMA_VERSION + 1):
                con.execute(MIGRATIONS[target - 1].encode())
                con.execute("UPDATE goalkeeper_schema SET version = %s", (target,))
    finally:
        if not con.closed and not con.broken:
            con.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    return found
