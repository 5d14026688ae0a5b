"""The catalog: one SQLite database in WAL mode shared by the API, the CLI and flow runs.

Several processes write it at once, so every write is a short ``BEGIN IMMEDIATE`` transaction
(the write lock is taken up front, so two writers queue instead of failing half-way) and every
connection waits up to ``busy_timeout`` for the lock. Each operation opens its own connection:
sqlite connections are cheap and this keeps threads and processes independent.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from storage.migrations import LATEST_VERSION, migrate, schema_version

_BUSY_TIMEOUT_MS = 15_000


class Catalog:
    """Handle on the catalog file; ``open`` creates or upgrades it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def open(cls, path: Path) -> Catalog:
        """Create the catalog if needed, switch it to WAL and apply pending migrations."""
        path.parent.mkdir(parents=True, exist_ok=True)
        catalog = cls(path)
        with catalog._connection() as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            if schema_version(conn) < LATEST_VERSION:
                migrate(conn)
        return catalog

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")
            yield conn
        finally:
            conn.close()

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A connection for reads (each statement sees a consistent snapshot)."""
        with self._connection() as conn:
            yield conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: committed on success, rolled back on any exception."""
        with self._connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def version(self) -> int:
        """The schema version of the catalog file."""
        with self.read() as conn:
            return schema_version(conn)

    def ping(self) -> None:
        """Raise if the catalog cannot be read (used by the readiness probe)."""
        with self.read() as conn:
            conn.execute("SELECT 1 FROM tenants LIMIT 1").fetchall()
