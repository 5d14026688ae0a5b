"""The catalog file: WAL, versioned upgrades, and writers in several processes at once."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

from storage.catalog import Catalog
from storage.migrations import LATEST_VERSION, migrate
from storage.tenants import TenantStore


def test_open_creates_a_wal_catalog_at_the_latest_version(tmp_path: Path) -> None:
    catalog = Catalog.open(tmp_path / "c.sqlite3")
    assert catalog.version() == LATEST_VERSION
    with catalog.read() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_older_catalog_is_upgraded_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=1)  # a catalog written by the first release
    conn.execute(
        "INSERT INTO tenants (tenant_id, name, plan, created_at)"
        " VALUES ('ten_1', 'old', 'sandbox', 'x')"
    )
    conn.close()
    catalog = Catalog.open(path)
    assert catalog.version() == LATEST_VERSION
    assert [t.name for t in TenantStore(catalog).list_tenants()] == ["old"]
    with catalog.read() as read:
        assert read.execute("SELECT COUNT(*) FROM videos").fetchone()[0] == 0


def test_opening_twice_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    Catalog.open(path)
    assert Catalog.open(path).version() == LATEST_VERSION


def _issue_keys(path: str, tenant_id: str, count: int) -> None:
    store = TenantStore(Catalog.open(Path(path)))
    for _ in range(count):
        store.create_key(tenant_id)


def test_writers_in_several_processes_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    store = TenantStore(Catalog.open(path))
    tenant = store.create_tenant("busy")
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_issue_keys, args=(str(path), tenant.tenant_id, 40))
        for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert len(store.list_keys(tenant.tenant_id)) == 160
