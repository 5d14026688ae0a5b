"""``plant_many`` (the benchmark's bulk builder) leaves what ``plant_run`` leaves: the same files,
the same catalog rows, and so the same hits for every search."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa

from search.engine import SearchEngine
from search.filters import SearchFilters
from storage.artifacts.blobs import BlobStore, open_blob_store
from storage.artifacts.layout import read_manifest
from storage.catalog.database import Catalog
from storage.catalog.tables import runs, search_runs, usage, videos
from storage.catalog.tenants import TenantStore
from testkit.workspace import BulkVideo, PlantedRun, plant_many, plant_run, realistic_run
from ves.settings import Settings

RECORDED = ("2026-11-20T21:55:00Z", None, "2026-11-18T08:00:00Z")
SEARCHES = (
    SearchFilters(),
    SearchFilters(text="gate"),
    SearchFilters(classes=("person",), zones=("left",), sort="relevance"),
    SearchFilters(event_types=("dwell",), min_dwell_s=60),
    SearchFilters(recorded_after=datetime(2026, 11, 20, 22, tzinfo=UTC)),
    SearchFilters(text="gate", text_match="exact"),
)
_IDS = ("video_id", "run_id", "tenant_id", "key", "artifacts_path")
_TIMES = ("created_at", "updated_at", "started_at", "finished_at", "heartbeat_at", "indexed_at")


@pytest.fixture
def store(settings: Settings) -> BlobStore:
    return open_blob_store(settings)


@pytest.fixture
def planted() -> list[PlantedRun]:
    rng = random.Random(5)
    return [realistic_run(rng) for _ in RECORDED]


def _one_by_one(
    catalog: Catalog, store: BlobStore, tenant_id: str, planted: list[PlantedRun]
) -> None:
    for i, (run, recorded_at) in enumerate(zip(planted, RECORDED, strict=True)):
        plant_run(catalog, store, tenant_id, run, title=f"cam {i}", recorded_at=recorded_at)


def _in_bulk(catalog: Catalog, store: BlobStore, tenant_id: str, planted: list[PlantedRun]) -> None:
    made = [
        BulkVideo(run, f"cam {i}", at)
        for i, (run, at) in enumerate(zip(planted, RECORDED, strict=True))
    ]
    plant_many(catalog, store, tenant_id, made)


def _rows(catalog: Catalog, table: sa.Table, tenant_id: str) -> list[dict[str, Any]]:
    """The tenant's rows without their ids and times, in the order they were planted."""
    with catalog.read() as conn:
        found = conn.execute(sa.select(table).where(table.c.tenant_id == tenant_id)).mappings()
        rows = [dict(r) for r in found]
    order = "title" if "title" in table.c else "classes"
    return sorted(
        ({k: v for k, v in r.items() if k not in _IDS + _TIMES} for r in rows),
        key=lambda r: str(r.get(order, r.get("metric"))) + str(r.get("period", "")),
    )


@pytest.fixture
def two_ways(
    catalog: Catalog, store: BlobStore, tenants: TenantStore, planted: list[PlantedRun]
) -> tuple[str, str]:
    """The same three videos planted for one tenant by ``plant_run``, for another in bulk."""
    single, bulk = tenants.create_tenant("single"), tenants.create_tenant("bulk")
    _one_by_one(catalog, store, single.tenant_id, planted)
    _in_bulk(catalog, store, bulk.tenant_id, planted)
    return single.tenant_id, bulk.tenant_id


@pytest.mark.parametrize("filters", SEARCHES, ids=lambda f: str(f.interpreted()))
def test_a_bulk_run_is_searched_as_a_planted_one(
    catalog: Catalog, store: BlobStore, two_ways: tuple[str, str], filters: SearchFilters
) -> None:
    engine = SearchEngine(catalog, store)
    single, bulk = (engine.search(t, filters, limit=200) for t in two_ways)
    assert (bulk.runs, bulk.read) == (single.runs, single.read) == (3, bulk.read)
    assert len(single.hits) > 0 or filters.text_match == "exact"
    assert [_without_ids(h) for h in bulk.hits] == [_without_ids(h) for h in single.hits]


def test_a_bulk_run_leaves_the_files_and_rows_of_a_planted_one(
    catalog: Catalog, store: BlobStore, two_ways: tuple[str, str]
) -> None:
    single, bulk = two_ways
    for table in (videos, runs, search_runs, usage):
        assert _rows(catalog, table, bulk) == _rows(catalog, table, single), table.name
    assert _files(catalog, store, bulk) == _files(catalog, store, single)


def _without_ids(hit: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in hit.items() if k not in _IDS}


def _files(catalog: Catalog, store: BlobStore, tenant_id: str) -> list[list[dict[str, Any]]]:
    """Each run's manifest entries (names, sizes, row counts, hashes) in the order planted."""
    with catalog.read() as conn:
        keys = conn.execute(
            sa.select(runs.c.artifacts_path)
            .join(videos, videos.c.video_id == runs.c.video_id)
            .where(runs.c.tenant_id == tenant_id)
            .order_by(videos.c.title)
        ).scalars()
        return [read_manifest(store, key)["files"] for key in keys]
