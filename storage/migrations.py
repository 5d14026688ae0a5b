"""Versioned schema migrations of the catalog.

The catalog's ``PRAGMA user_version`` is the number of migrations applied. Opening a catalog applies
the missing ones, each in its own transaction, so a service started on an older catalog upgrades it
in place and keeps its data. Never edit a migration that has shipped: append a new one.
"""

from __future__ import annotations

import sqlite3

MIGRATIONS: tuple[str, ...] = (
    # 1: tenants and their API keys (only a hash of each key is stored).
    """
    CREATE TABLE tenants (
        tenant_id  TEXT PRIMARY KEY,
        name       TEXT NOT NULL UNIQUE,
        plan       TEXT NOT NULL DEFAULT 'sandbox',
        created_at TEXT NOT NULL
    );
    CREATE TABLE api_keys (
        key_id     TEXT PRIMARY KEY,
        tenant_id  TEXT NOT NULL REFERENCES tenants(tenant_id),
        key_hash   TEXT NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
    );
    CREATE INDEX api_keys_tenant ON api_keys(tenant_id);
    """,
    # 2: videos and their runs.
    """
    CREATE TABLE videos (
        video_id      TEXT PRIMARY KEY,
        tenant_id     TEXT NOT NULL REFERENCES tenants(tenant_id),
        title         TEXT NOT NULL,
        source_type   TEXT NOT NULL CHECK (source_type IN ('url', 'hls', 'upload')),
        source_url    TEXT,
        state         TEXT NOT NULL,
        upload_json   TEXT,
        source_sha256 TEXT,
        source_path   TEXT,
        source_bytes  INTEGER,
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL
    );
    CREATE INDEX videos_tenant ON videos(tenant_id, video_id);
    CREATE INDEX videos_tenant_state ON videos(tenant_id, state, video_id);
    CREATE TABLE runs (
        run_id        TEXT PRIMARY KEY,
        video_id      TEXT NOT NULL REFERENCES videos(video_id),
        tenant_id     TEXT NOT NULL REFERENCES tenants(tenant_id),
        state         TEXT NOT NULL,
        stage         TEXT,
        progress      REAL NOT NULL DEFAULT 0,
        params_json   TEXT NOT NULL DEFAULT '{}',
        error_code    TEXT,
        error_message TEXT,
        flow_run_id   TEXT,
        created_at    TEXT NOT NULL,
        started_at    TEXT,
        finished_at   TEXT
    );
    CREATE INDEX runs_video ON runs(video_id, run_id);
    CREATE INDEX runs_state ON runs(state);
    """,
    # 3: usage counters per tenant, period and metric.
    """
    CREATE TABLE usage (
        tenant_id TEXT NOT NULL REFERENCES tenants(tenant_id),
        period    TEXT NOT NULL,
        metric    TEXT NOT NULL,
        value     REAL NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, period, metric)
    );
    """,
    # 4: run liveness (flows beat while they work) and where a run's artifacts were published.
    """
    ALTER TABLE runs ADD COLUMN heartbeat_at TEXT;
    ALTER TABLE runs ADD COLUMN artifacts_path TEXT;
    CREATE INDEX runs_video_state ON runs(video_id, state, run_id);
    """,
    # 5: every question asked and the answer given, kept with its run for review.
    """
    CREATE TABLE asks (
        ask_id         TEXT PRIMARY KEY,
        tenant_id      TEXT NOT NULL REFERENCES tenants(tenant_id),
        video_id       TEXT NOT NULL REFERENCES videos(video_id),
        run_id         TEXT NOT NULL REFERENCES runs(run_id),
        question       TEXT NOT NULL,
        answer_json    TEXT NOT NULL,
        grounded       INTEGER NOT NULL,
        refusal_reason TEXT,
        phrased_by     TEXT NOT NULL,
        created_at     TEXT NOT NULL
    );
    CREATE INDEX asks_tenant ON asks(tenant_id, created_at);
    CREATE INDEX asks_run ON asks(run_id, created_at);
    """,
    # 6: requests counted per key (the demo onboarding's rate limit per client address).
    """
    CREATE TABLE rate_events (
        bucket TEXT NOT NULL,
        at     REAL NOT NULL
    );
    CREATE INDEX rate_events_bucket ON rate_events(bucket, at);
    """,
    # 7: retention: when a run's artifacts were deleted, and how many bytes they held; the
    # seconds of video a run decoded (billed for failed runs when the plan says so).
    """
    ALTER TABLE runs ADD COLUMN artifacts_bytes INTEGER;
    ALTER TABLE runs ADD COLUMN expired_at TEXT;
    ALTER TABLE runs ADD COLUMN processed_s REAL;
    """,
)

LATEST_VERSION = len(MIGRATIONS)


def schema_version(conn: sqlite3.Connection) -> int:
    """The number of migrations applied to the catalog behind ``conn``."""
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, *, target: int = LATEST_VERSION) -> int:
    """Apply the migrations after the catalog's version up to ``target``; return the new version.

    ``BEGIN IMMEDIATE`` takes the write lock first, so two processes starting at once do not both
    apply the same migration: the second waits, then sees the new version and does nothing.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = schema_version(conn)
        for number in range(current + 1, target + 1):
            for statement in _statements(MIGRATIONS[number - 1]):
                conn.execute(statement)
        version = max(current, target)
        conn.execute(f"PRAGMA user_version = {int(version)}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return version


def _statements(script: str) -> list[str]:
    """Split a migration into statements; ``executescript`` would commit our transaction."""
    return [s.strip() for s in script.split(";") if s.strip()]
