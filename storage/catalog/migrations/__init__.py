"""Alembic migrations of the catalog, run from code when a catalog is opened.

The script folder ships inside the package and Alembic is configured programmatically (no
``alembic.ini`` at run time): ``Catalog.open`` hands ``upgrade`` one connection inside a write
transaction that holds the catalog's migration lock, so two processes opening a fresh catalog at
once never both migrate. On SQLite that is the ``BEGIN IMMEDIATE`` write lock (DDL is
transactional there too); on PostgreSQL an advisory lock taken by ``Catalog.write``. The second
process waits, then finds the catalog at head and does nothing.

Catalogs made before Alembic (the raw-SQL releases, SQLite only) count their migrations in
``PRAGMA user_version`` and have no version table: they are stamped with the revision of the same
number (``0001`` to ``0007`` are exactly those migrations), then upgraded, keeping their data.

Alembic's version table is ``ves_alembic_version``, not the default ``alembic_version``, so it
never meets Prefect's own when both live on one PostgreSQL server. Never edit a revision that
has shipped: add the next one (``r0010_...py`` with ``down_revision = "0009"``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection

SCRIPTS = Path(__file__).parent
VERSION_TABLE = "ves_alembic_version"


def upgrade(conn: Connection, target: str = "head") -> None:
    """Bring the catalog behind ``conn`` to ``target``, inside the caller's transaction."""
    config = _config(conn)
    legacy = _legacy_revision(conn)
    if legacy is not None:
        command.stamp(config, legacy)
    command.upgrade(config, target)


def current_revision(conn: Connection) -> str | None:
    """The revision the catalog is at; None before the first migration."""
    context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
    return context.get_current_revision()


@cache
def head_revision() -> str:
    """The newest revision shipped with this code."""
    head = ScriptDirectory(str(SCRIPTS)).get_current_head()
    assert head is not None, f"no Alembic revisions in {SCRIPTS}"
    return head


def _config(conn: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    config.attributes["connection"] = conn
    return config


def _legacy_revision(conn: Connection) -> str | None:
    """The revision a pre-Alembic SQLite catalog stands at, or None for any other catalog."""
    if conn.dialect.name != "sqlite" or current_revision(conn) is not None:
        return None
    applied = int(conn.exec_driver_sql("PRAGMA user_version").scalar_one())
    return f"{applied:04d}" if applied else None
