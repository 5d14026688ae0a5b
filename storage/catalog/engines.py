"""SQLAlchemy engines of the catalog: one per database URL and process, tuned per engine.

SQLite (the embedded default) gets one connection per operation (``NullPool``): connections are
cheap, and threads and processes stay independent. Each connection runs in WAL mode with a
``busy_timeout``, foreign keys on and ``synchronous = NORMAL`` (durable at every checkpoint, and
WAL keeps the file consistent after a crash). The driver's own transaction handling is switched
off (``isolation_level = None``) so that we emit ``BEGIN`` ourselves: ``BEGIN IMMEDIATE`` for
writes takes the write lock up front, so two writers queue instead of one failing half-way when
it upgrades a read lock; reads take a plain deferred ``BEGIN`` and see one snapshot.

PostgreSQL gets a normal ``QueuePool`` with ``pre_ping`` (a server restart costs one retry, not a
failed request). Engines are cached per URL in the process, because stores build a ``Catalog``
per operation in places (a run's progress reports): a pool per call would open connections
without bound. A forked child never reuses its parent's pooled sockets.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import NullPool

BUSY_TIMEOUT_MS = 15_000
WRITE_OPTION = "ves_write"  # execution option of a connection that will write

_SQLITE_PRAGMAS = (
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
    "PRAGMA journal_mode = WAL",
    "PRAGMA foreign_keys = ON",
    "PRAGMA synchronous = NORMAL",
)

_engines: dict[str, tuple[int, Engine]] = {}
_engines_lock = threading.Lock()


def database_url(url_or_path: str | Path) -> URL:
    """The URL of a catalog given as a URL (``sqlite:///...``, ``postgresql://...``) or a path
    of a SQLite file. ``postgresql://`` means psycopg 3, the driver the service ships."""
    if isinstance(url_or_path, Path) or "://" not in url_or_path:
        return URL.create("sqlite", database=str(url_or_path))
    url = make_url(url_or_path)
    return url.set(drivername="postgresql+psycopg") if url.drivername == "postgresql" else url


def engine_for(url: URL) -> Engine:
    """The process's engine for ``url`` (made on first use)."""
    key = url.render_as_string(hide_password=False)
    with _engines_lock:
        pid, engine = _engines.get(key, (None, None))
        if engine is not None and pid == os.getpid():
            return engine
        if engine is not None:  # inherited through fork: leave the parent's sockets alone
            engine.dispose(close=False)
        engine = _sqlite_engine(url) if url.get_backend_name() == "sqlite" else _server_engine(url)
        _engines[key] = (os.getpid(), engine)
        return engine


def dispose_engine(url: URL) -> None:
    """Close the pooled connections of ``url``'s engine and forget it (tests drop databases)."""
    key = url.render_as_string(hide_password=False)
    with _engines_lock:
        _, engine = _engines.pop(key, (None, None))
    if engine is not None:
        engine.dispose()


def _sqlite_engine(url: URL) -> Engine:
    if url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url, poolclass=NullPool, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000}
    )
    event.listen(engine, "connect", _configure_sqlite)
    event.listen(engine, "begin", _begin_sqlite)
    return engine


def _configure_sqlite(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see the module docstring)
    cursor = dbapi_connection.cursor()
    for pragma in _SQLITE_PRAGMAS:
        _patiently(cursor, pragma)
    cursor.close()


def _patiently(cursor: sqlite3.Cursor, pragma: str) -> None:
    """Run ``pragma``, retrying while the database is locked, up to the busy timeout.

    Turning a fresh database to WAL needs it to itself, and SQLite answers "database is locked"
    at once there instead of waiting out its busy timeout: four processes opening a new catalog
    together lost one of them in a loaded CI run.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            cursor.execute(pragma)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _begin_sqlite(conn: Connection) -> None:
    writes = conn.get_execution_options().get(WRITE_OPTION, False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if writes else "BEGIN")


def _server_engine(url: URL) -> Engine:
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=10)
