"""The catalog's database: migrations to head on both engines, old SQLite catalogs upgraded in
place, and writers and openers in several processes at once."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

from storage.catalog import migrations
from storage.catalog.database import MIGRATION_LOCK, Catalog
from storage.catalog.tables import metadata
from storage.catalog.tenants import TenantStore
from tests.fixtures.legacy_catalog import make_legacy_catalog

HEAD = int(migrations.head_revision())


def test_open_migrates_to_head_and_again_changes_nothing(catalog: Catalog) -> None:
    assert catalog.version() == HEAD == 19
    TenantStore(catalog).create_tenant("kept")
    again = Catalog.open(catalog.url)
    with again.write(lock=MIGRATION_LOCK) as conn:
        migrations.upgrade(conn)  # forced: a second full pass over an up-to-date catalog
    assert again.version() == HEAD
    assert [t.name for t in TenantStore(again).list_tenants()] == ["kept"]


def test_the_migrated_schema_is_the_declared_one(catalog: Catalog) -> None:
    """``storage/catalog/tables.py`` and the revisions describe the same tables, on both engines."""
    with catalog.read() as conn:
        context = MigrationContext.configure(conn)
        diff = compare_metadata(context, metadata)
    assert [d for d in diff if "ves_alembic_version" not in str(d)] == []


def test_a_sqlite_catalog_is_in_wal_mode(tmp_path: Path) -> None:
    catalog = Catalog.open(tmp_path / "c.sqlite3")
    with catalog.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


@pytest.mark.parametrize("version", [1, 7])
def test_a_catalog_of_the_raw_sql_releases_is_upgraded_in_place(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / "old.sqlite3"
    make_legacy_catalog(path, version)
    with Catalog.connect(path).write() as conn:
        conn.execute(
            text(
                "INSERT INTO tenants (tenant_id, name, plan, created_at)"
                " VALUES ('ten_1', 'old', 'sandbox', 'x')"
            )
        )
    catalog = Catalog.open(path)
    assert catalog.version() == HEAD
    assert [t.name for t in TenantStore(catalog).list_tenants()] == ["old"]
    with catalog.read() as conn:
        assert conn.execute(text("SELECT COUNT(*) FROM videos")).scalar_one() == 0
        assert conn.execute(text("SELECT COUNT(*) FROM ves_alembic_version")).scalar_one() == 1


def _open_and_issue_keys(url: str, tenant_name: str, count: int) -> None:
    store = TenantStore(Catalog.open(url))
    tenant = store.create_tenant(tenant_name)
    for _ in range(count):
        store.create_key(tenant.tenant_id)


def _in_processes(url: str, workers: int, keys_each: int) -> None:
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_open_and_issue_keys, args=(url, f"busy-{n}", keys_each))
        for n in range(workers)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
        assert process.exitcode == 0


@pytest.fixture
def empty_url(database_url: str | None, tmp_path: Path) -> str:
    """The URL of the test's database before anything opened it."""
    return database_url or f"sqlite:///{tmp_path / 'fresh.sqlite3'}"


def test_processes_opening_a_fresh_catalog_at_once_migrate_it_once_and_lose_no_write(
    empty_url: str,
) -> None:
    _in_processes(empty_url, workers=4, keys_each=25)
    catalog = Catalog.open(empty_url)
    store = TenantStore(catalog)
    keys = [len(store.list_keys(tenant.tenant_id)) for tenant in store.list_tenants()]
    assert keys == [25] * 4
    assert catalog.version() == HEAD
    catalog.dispose()
