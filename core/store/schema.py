"""The database schema as a list of small migrations; ``PRAGMA user_version`` says how far we got.

Each migration is one step from version ``n`` to ``n + 1`` and runs in its own ``BEGIN IMMEDIATE``
transaction. Never edit a released step: append a new one (and a test that upgrades a fixture of
the previous version).
"""

from __future__ import annotations

MIGRATIONS: list[str] = [
    # 0 -> 1: the first schema
    """
    CREATE TABLE goals (
        id TEXT PRIMARY KEY,
        provider TEXT NOT NULL,
        title TEXT NOT NULL,
        state TEXT NOT NULL,
        pause_reason TEXT,
        pause_detail TEXT,
        windows TEXT NOT NULL DEFAULT '[]',
        auto_resume INTEGER NOT NULL DEFAULT 0,
        next_resume_at TEXT,
        auto_resume_note TEXT,
        resets_at TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        fence INTEGER NOT NULL DEFAULT 0,
        hosted INTEGER NOT NULL DEFAULT 0,
        resumed_at TEXT,
        data TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        state_since TEXT
    );
    CREATE TABLE history (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        goal TEXT,
        event TEXT NOT NULL,
        trigger TEXT,
        origin TEXT,
        outcome TEXT,
        reason TEXT,
        state_from TEXT,
        state_to TEXT,
        fence INTEGER,
        quotas TEXT NOT NULL DEFAULT '[]',
        detail TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX history_goal ON history (goal, id);
    CREATE TABLE quota_latest (
        window_id TEXT PRIMARY KEY,
        provider TEXT NOT NULL,
        observed_at TEXT NOT NULL,
        reading TEXT NOT NULL
    );
    CREATE TABLE quota_series (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        window_id TEXT NOT NULL,
        observed_at TEXT NOT NULL,
        used_percent REAL,
        exactness TEXT NOT NULL
    );
    CREATE INDEX quota_series_window ON quota_series (window_id, observed_at);
    CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # 1 -> 2: each goal's own resume policy (priority, budget, allowed hours) and the rule that
    # last moved its not-before time (issue 13); goals by state, for counting resume slots
    """
    ALTER TABLE goals ADD COLUMN policy TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE goals ADD COLUMN deferral TEXT;
    CREATE INDEX goals_state ON goals (state);
    """,
    # 2 -> 3: several hosts (issue 12) — each goal's owner host and each history row's writer;
    # readings belong to an account (hosts of one account share them), who observed them and
    # how exactly; the hosts registry and the action requests routed to a goal's owner
    """
    ALTER TABLE goals ADD COLUMN host TEXT NOT NULL DEFAULT '';
    ALTER TABLE history ADD COLUMN host TEXT;
    CREATE TABLE quota_latest_3 (
        account TEXT NOT NULL DEFAULT '',
        window_id TEXT NOT NULL,
        provider TEXT NOT NULL,
        observed_at TEXT NOT NULL,
        reading TEXT NOT NULL,
        host TEXT NOT NULL DEFAULT '',
        exactness TEXT NOT NULL DEFAULT 'exact',
        PRIMARY KEY (account, window_id)
    );
    INSERT INTO quota_latest_3 (account, window_id, provider, observed_at, reading, exactness)
        SELECT '', window_id, provider, observed_at, reading,
               coalesce(json_extract(reading, '$.exactness'), 'exact') FROM quota_latest;
    DROP TABLE quota_latest;
    ALTER TABLE quota_latest_3 RENAME TO quota_latest;
    ALTER TABLE quota_series ADD COLUMN account TEXT NOT NULL DEFAULT '';
    DROP INDEX quota_series_window;
    CREATE INDEX quota_series_window ON quota_series (account, window_id, observed_at);
    CREATE TABLE hosts (
        host_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        machine TEXT NOT NULL,
        pid INTEGER NOT NULL,
        since TEXT NOT NULL,
        heartbeat TEXT NOT NULL,
        epoch INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'online',
        stopped_at TEXT,
        accounts TEXT NOT NULL DEFAULT '{}',
        version TEXT NOT NULL DEFAULT ''
    );
    CREATE TABLE requests (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        to_host TEXT NOT NULL,
        by_host TEXT NOT NULL,
        request TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        requested_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        answer TEXT,
        answered_at TEXT
    );
    CREATE INDEX requests_pending ON requests (to_host, state);
    """,
    # 3 -> 4: the keys that steer Goalkeeper's own decisions move out of the provider's
    # metadata (``data``) into their own column (core.models.Steering, issue 20), values as
    # they were (json_each gives true / false as 1 / 0: the CASE keeps them JSON booleans)
    """
    ALTER TABLE goals ADD COLUMN steering TEXT NOT NULL DEFAULT '{}';
    UPDATE goals SET
        steering = (SELECT json_group_object(key, CASE type WHEN 'true' THEN json('true')
                                                            WHEN 'false' THEN json('false')
                                                            WHEN 'null' THEN json('null')
                                                            ELSE value END)
                    FROM json_each(goals.data)
                    WHERE key IN ('no_reset_note', 'resume_slot', 'last_resume_trigger',
                                  'auto_resume_block', 'budget', 'last_run', 'policy_pause')),
        data = json_remove(data, '$.no_reset_note', '$.resume_slot', '$.last_resume_trigger',
                           '$.auto_resume_block', '$.budget', '$.last_run', '$.policy_pause')
        WHERE EXISTS (SELECT 1 FROM json_each(goals.data)
                      WHERE key IN ('no_reset_note', 'resume_slot', 'last_resume_trigger',
                                    'auto_resume_block', 'budget', 'last_run', 'policy_pause'));
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)
