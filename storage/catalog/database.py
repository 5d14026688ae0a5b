"""The catalog: tenants, keys, videos, runs and usage in SQLite (embedded) or PostgreSQL.

The API, the CLI and flow runs in several processes (on several machines, with PostgreSQL) write
it at once, so every operation is one short transaction on its own connection: ``read`` for
reads, ``write`` for anything that writes, committed on success, rolled back on any exception.

Check-and-count (a plan's limit checked and the usage counted in the same transaction as the
action) must never let two parallel requests at a limit both pass:

- SQLite: every write transaction is ``BEGIN IMMEDIATE`` (``storage.catalog.engines``), so
  writers are
  serialised by the database's single write lock; the second one reads the first one's count.
- PostgreSQL runs READ COMMITTED, where two transactions may both read the same count and both
  insert. ``write(lock=key)`` therefore takes ``pg_advisory_xact_lock`` on the key first: writers
  with the same key (a tenant id, a rate-limit bucket) queue, each sees what the previous one
  committed, and the lock goes with the transaction. Other tenants are not held back. A plain
  guarded ``UPDATE ... WHERE state IN (...)`` needs no key: PostgreSQL re-checks the WHERE on the
  row it locked, so only one of two racing transitions updates it.

Choose the database with ``Catalog.open(url_or_path)`` or ``Catalog.from_settings(settings)``
(``VES_DATABASE_URL``; the SQLite file in the data folder by default).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, RowMapping, text

from storage.catalog import migrations
from storage.catalog.engines import WRITE_OPTION, database_url, dispose_engine, engine_for
from ves.settings import Settings

MIGRATION_LOCK = "ves:catalog:migrations"


class Catalog:
    """Handle on the catalog's database; ``open`` creates or upgrades it."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    @classmethod
    def open(cls, url_or_path: str | Path) -> Catalog:
        """The catalog at a database URL or SQLite path, created or upgraded to the newest schema.

        Two processes opening a fresh catalog at once do not both migrate: the migration runs in
        a write transaction under ``MIGRATION_LOCK`` (see ``storage.catalog.migrations``).
        """
        catalog = cls.connect(url_or_path)
        if catalog.revision() != migrations.head_revision():
            with catalog.write(lock=MIGRATION_LOCK) as conn:
                migrations.upgrade(conn)
        return catalog

    @classmethod
    def connect(cls, url_or_path: str | Path) -> Catalog:
        """The catalog as it is, without migrating (for processes that run after ``open``)."""
        return cls(engine_for(database_url(url_or_path)))

    @classmethod
    def from_settings(cls, settings: Settings, *, migrate: bool = True) -> Catalog:
        """The service's catalog (``settings.catalog_url``); ``migrate=False`` skips upgrading."""
        url = settings.catalog_url
        return cls.open(url) if migrate else cls.connect(url)

    @property
    def url(self) -> str:
        """The database URL, password included (to open the same catalog elsewhere)."""
        return self.engine.url.render_as_string(hide_password=False)

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only transaction on its own connection."""
        with self.engine.connect() as conn, conn.begin():
            yield conn

    @contextmanager
    def write(self, lock: str | None = None) -> Iterator[Connection]:
        """A write transaction: committed on success, rolled back on any exception.

        Args:
            lock: what the transaction checks and counts (a tenant id, a rate-limit bucket):
                on PostgreSQL, writers with the same key run one after the other (an advisory
                lock held until the transaction ends). SQLite serialises every writer anyway.
        """
        with self.engine.connect() as conn:
            conn.execution_options(**{WRITE_OPTION: True})
            with conn.begin():
                if lock is not None and self.dialect == "postgresql":
                    conn.execute(
                        text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"),
                        {"key": lock},
                    )
                yield conn

    def revision(self) -> str | None:
        """The Alembic revision of the schema (None before the first migration)."""
        with self.read() as conn:
            return migrations.current_revision(conn)

    def version(self) -> int:
        """The schema version as a number (revision ``0007`` is version 7; 0 when empty)."""
        revision = self.revision()
        return int(revision) if revision else 0

    def ping(self) -> None:
        """Raise if the catalog cannot be read (used by the readiness probe)."""
        with self.read() as conn:
            conn.execute(text("SELECT 1 FROM tenants LIMIT 1")).all()

    def dispose(self) -> None:
        """Close this process's pooled connections to the database (they reopen on next use)."""
        dispose_engine(self.engine.url)


def first_row(conn: Connection, sql: str, **params: Any) -> RowMapping | None:
    """The first row of a query with named ``:params``, as a mapping (None if there is none)."""
    return conn.execute(text(sql), params).mappings().first()
