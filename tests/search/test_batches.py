"""Searches read runs in growing batches, in time order earliest recorded first, by relevance the
most confident first, and stop once no unread run can rank on the page: every page is the one a
single read of every run gives, on a workspace with recorded times tied, unknown, confidences
tied, and a run written before ``hits.parquet``."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa

import search.engine
from search.engine import SearchEngine, holding_of
from search.filters import SearchFilters
from storage.artifacts.blobs import BlobStore, open_blob_store
from storage.catalog.database import Catalog
from storage.catalog.tables import search_runs
from storage.catalog.tenants import TenantStore
from testkit.workspace import BulkVideo, plant_many, plant_run, realistic_run
from ves.settings import Settings

NIGHT = datetime(2026, 11, 20, 22, tzinfo=UTC)
SEARCHES = (
    SearchFilters(),
    SearchFilters(classes=("person",), zones=("left",)),
    SearchFilters(text="gate"),
    SearchFilters(event_types=("dwell",), min_dwell_s=60),
    SearchFilters(recorded_after=NIGHT),
    SearchFilters(recorded_before=NIGHT),
    SearchFilters(classes=("person",), sort="relevance"),
    SearchFilters(sort="relevance"),
    SearchFilters(event_types=("appear",), sort="relevance"),
    SearchFilters(classes=("car", "person"), zones=("left",), sort="relevance"),
    SearchFilters(text="gate", sort="relevance"),
)


@pytest.fixture
def workspace(catalog: Catalog, settings: Settings) -> tuple[SearchEngine, str]:
    """23 two-minute videos, most recorded 30 s apart (their hits interleave in time), two at the
    same second, three of unknown time; and one run written before ``hits.parquet``."""
    store: BlobStore = open_blob_store(settings)
    tenant_id = TenantStore(catalog).create_tenant("acme").tenant_id
    rng = random.Random(7)
    times = [f"2026-11-20T21:{50 + i // 2:02d}:{i % 2 * 30:02d}Z" for i in range(15)]  # overlap
    times += ["2026-11-19T08:00:00Z", "2026-11-21T08:00:00Z", "2026-11-20T22:05:00Z"]
    times += ["2026-11-20T22:05:00Z", "2026-11-20T21:51:10Z", None, None, None]
    plant_many(
        catalog,
        store,
        tenant_id,
        [BulkVideo(realistic_run(rng, 120.0), f"cam {i}", at) for i, at in enumerate(times)],
    )
    old = realistic_run(rng, 120.0)
    plant_run(catalog, store, tenant_id, old, recorded_at="2026-11-19T00:30:00Z", with_hits=False)
    return SearchEngine(catalog, store), tenant_id


def _pages(engine: SearchEngine, tenant_id: str, filters: SearchFilters) -> list[Any]:
    pages, cursor = [], None
    while True:
        page = engine.search(tenant_id, filters, limit=7, cursor=cursor)
        pages.append((page.hits, page.runs))
        if (cursor := page.next_cursor) is None or len(pages) == 6:
            return pages


@pytest.mark.parametrize("filters", SEARCHES, ids=lambda f: str(f.interpreted()))
def test_pages_read_in_batches_are_those_of_one_read(
    workspace: tuple[SearchEngine, str], filters: SearchFilters, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, tenant_id = workspace
    monkeypatch.setattr(search.engine, "FIRST_BATCH", 1_000_000)
    whole = _pages(engine, tenant_id, filters)
    monkeypatch.setattr(search.engine, "FIRST_BATCH", 1)
    assert _pages(engine, tenant_id, filters) == whole
    assert whole[0][0]


def test_a_first_page_in_time_order_reads_the_earliest_runs_only(
    workspace: tuple[SearchEngine, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, tenant_id = workspace
    monkeypatch.setattr(search.engine, "FIRST_BATCH", 1)
    page = engine.search(tenant_id, SearchFilters(), limit=5)
    assert page.read < page.runs == 24


def test_a_first_page_by_relevance_reads_the_most_confident_runs_only(
    workspace: tuple[SearchEngine, str], catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, tenant_id = workspace
    monkeypatch.setattr(search.engine, "FIRST_BATCH", 1)
    person = SearchFilters(classes=("person",), sort="relevance")
    first = engine.search(tenant_id, person, limit=5)
    assert first.read < first.runs == 24
    best = [h["confidence"] for h in first.hits]
    assert best == sorted(best, reverse=True)
    # With a text, the catalog lists only the runs holding it, and every one of them is read.
    gate = engine.search(tenant_id, SearchFilters(text="gate", sort="relevance"), limit=5)
    assert gate.read == len(engine.index.published(tenant_id, holding=holding_of(gate.filters)))
    # Runs indexed before their confidences were kept are read (first), never skipped.
    with catalog.write() as conn:
        conn.execute(sa.update(search_runs).values(top_confidence=None))
    assert engine.search(tenant_id, person, limit=5).read == 24
    assert engine.search(tenant_id, person, limit=5).hits == first.hits


def test_runs_that_end_too_soon_or_never_dwell_so_long_are_not_read(
    workspace: tuple[SearchEngine, str],
) -> None:
    engine, tenant_id = workspace  # two-minute videos: every hit ends by 120 s
    assert engine.search(tenant_id, SearchFilters(min_dwell_s=10_000)).read == 0
    assert engine.search(tenant_id, SearchFilters(start_s=125)).read == 0
    late = SearchFilters(recorded_after=datetime(2026, 11, 21, 7, tzinfo=UTC))
    assert engine.search(tenant_id, late).read == 1  # only the one recorded at 08:00
