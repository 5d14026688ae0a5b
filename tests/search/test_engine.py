"""The search engine over planted workspaces of KNOWN rows (testkit.workspace), on the local store
and on S3 alike (``VES_TEST_STORAGE=s3``), on SQLite and PostgreSQL: each filter finds exactly the
planted rows it should; the same query written as SQL over ``ves sql``'s views gives the same
rows; runs written before ``hits.parquet`` are found as newer ones are; another tenant's rows are
never read; pages follow one another.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from search.engine import SearchEngine
from search.filters import SearchFilters
from storage.artifacts.analyst_views import analyst_connection, run_query
from storage.artifacts.blobs import BlobStore
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from testkit.workspace import PlantedRun, plant_run
from ves.errors import InvalidRequest, NotFound, ValidationFailed


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _found(world: dict[str, Any], tenant: str = "acme", **filters: Any) -> list[tuple[str, str]]:
    """(video name, hit id) of every hit, in order."""
    names = {v: k for k, (v, _) in world["ids"].items() if not k.endswith("_old")}
    page = world["engine"].search(world[tenant], SearchFilters(**filters), limit=200)
    return [(names[h["video_id"]], h["hit_id"]) for h in page.hits]


def test_each_filter_finds_exactly_the_planted_rows(world: dict[str, Any]) -> None:
    rows, more = world["rows"], world["more"]
    assert _found(world, text="gate7") == [("front", rows["gate"])]  # words: not "gate 77"
    substring = [("front", rows["gate"]), ("back", rows["gate77"])]
    assert _found(world, text="gate7", text_match="substring") == substring
    assert _found(world, text="  Gate 7 ", text_match="exact") == [("front", rows["gate"])]
    assert _found(world, classes=("people",), zones=("left",)) == [("front", rows["person"])]
    assert _found(world, zones=("right",)) == [("back", more["mover"])]
    assert _found(world, min_dwell_s=300) == [("front", rows["dwell"])]
    assert _found(world, min_dwell_s=500) == []
    assert _found(world, text="sign") == [("dock", more["new_sign"])]  # the newest run only
    every = _found(world, text="sign", every_run=True)
    assert sorted(every) == sorted([("dock", more["new_sign"]), ("dock", "obj_0001")])
    assert _found(world, text="gate", start_s=5.5, end_s=5.8) == [
        ("front", rows["gate"]),
        ("back", rows["gate77"]),
    ]
    assert _found(world, text="gate", end_s=2.0) == []
    assert _found(world, title="door") == [("back", more["mover"]), ("back", rows["gate77"])]


def test_clock_times_use_the_videos_recorded_time(world: dict[str, Any]) -> None:
    rows = world["rows"]
    after = _at("2026-11-20T22:00:00Z")
    # GATE 7 was on the clock 21:59:03-09 and the person 21:59:01-20; the dwell lasts to 22:05:40.
    assert _found(world, text="gate 7", recorded_after=after) == []
    assert _found(world, event_types=("dwell",), recorded_after=after) == [("front", rows["dwell"])]
    before = _at("2026-11-20T21:59:02Z")
    assert _found(world, classes=("person",), recorded_before=before) == [("front", rows["person"])]
    page = world["engine"].search(world["acme"], SearchFilters(text="gate 7", text_match="exact"))
    assert page.hits[0]["recorded_start"] == _at("2026-11-20T21:59:03Z")


def test_relevance_puts_the_whole_text_first(world: dict[str, Any]) -> None:
    rows = world["rows"]
    found = _found(world, text="gate 77", sort="relevance")
    assert found == [("back", rows["gate77"])]
    found = _found(world, text="gate", sort="relevance")
    assert found == [("front", rows["gate"]), ("back", rows["gate77"])]  # by confidence


def test_another_tenants_rows_are_never_read(world: dict[str, Any]) -> None:
    engine, acme, globex = world["engine"], world["acme"], world["globex"]
    theirs = world["ids"]["theirs"]
    for filters in (SearchFilters(), SearchFilters(text="gate"), SearchFilters(every_run=True)):
        page = engine.search(acme, filters, limit=200)
        assert theirs[0] not in {h["video_id"] for h in page.hits}
        # front, back and the dock's newest run (and its older one with every_run)
        assert page.runs == (4 if filters.every_run else 3)
    with pytest.raises(NotFound):  # as an id nobody has
        engine.search(acme, SearchFilters(video_ids=(theirs[0],)))
    page = engine.search(globex, SearchFilters(text="gate"), limit=200)
    assert {h["video_id"] for h in page.hits} == {theirs[0]}


def test_runs_that_cannot_match_are_not_read(world: dict[str, Any]) -> None:
    engine, acme = world["engine"], world["acme"]
    assert engine.search(acme, SearchFilters(text="nowhere")).read == 0
    assert engine.search(acme, SearchFilters(text="GATE 7", text_match="exact")).read == 1
    assert engine.search(acme, SearchFilters(classes=("person",))).read == 1
    assert engine.search(acme, SearchFilters(recorded_after=_at("2026-01-01T00:00Z"))).read == 1


def test_the_same_query_in_ves_sql_gives_the_same_rows(
    world: dict[str, Any], store: BlobStore
) -> None:
    """What ``ves sql`` finds with the filters written by hand over its ``hits`` and ``runs``
    views (runs written with hits.parquet; the newest run of each video)."""
    conn = analyst_connection(store.filesystem, store.root)
    newest = (
        f"tenant_id = '{world['acme']}' AND run_id IN (SELECT max(run_id) FROM runs "
        "GROUP BY video_id) AND video_id != '{back}'".format(back=world["ids"]["back"][0])
    )
    cases = {
        "kind IN ('object', 'text') AND class = 'person' AND list_has_any(zones, ['left'])": {
            "classes": ("person",),
            "zones": ("left",),
        },
        "kind = 'text' AND contains(text_norm, 'gate7')": {"text": "GATE 7"},
        "kind = 'event' AND event_type = 'dwell' AND end_s - start_s >= 300": {"min_dwell_s": 300},
        "kind IN ('object', 'text') AND end_s >= 2 AND start_s <= 4": {"start_s": 2, "end_s": 4},
    }
    for where, filters in cases.items():
        sql = f"SELECT video_id, hit_id FROM hits WHERE {newest} AND {where} ORDER BY ALL"
        expected = sorted((r["video_id"], r["hit_id"]) for r in run_query(conn, sql).to_pylist())
        page = world["engine"].search(world["acme"], SearchFilters(**filters), limit=200)
        got = sorted((h["video_id"], h["hit_id"]) for h in page.hits if h["title"] != "Back door")
        assert got == expected and expected, where


def test_a_run_written_before_hits_is_found_as_a_new_one(
    catalog: Catalog, store: BlobStore
) -> None:
    tenant = TenantStore(catalog).create_tenant("acme").tenant_id
    run = PlantedRun()
    run.thing("text", 1.0, 3.0, text="EXIT 3")
    run.thing("person", 0.0, 5.0, zones=("zone_center",))
    run.event("scene_change", 2.5, None)
    plant_run(catalog, store, tenant, run, title="with file")
    plant_run(catalog, store, tenant, run, title="before the file", with_hits=False)
    engine = SearchEngine(catalog, store)

    def found(title: str, filters: SearchFilters) -> list[dict[str, Any]]:
        hits = engine.search(tenant, filters, limit=200).hits
        same = ("video_id", "run_id", "title")
        return [{k: v for k, v in h.items() if k not in same} for h in hits if h["title"] == title]

    for filters in (SearchFilters(), SearchFilters(event_types=("scene_change", "appear"))):
        assert found("before the file", filters) == found("with file", filters) != []


def test_pages_follow_one_another_and_cursors_belong_to_their_search(
    world: dict[str, Any],
) -> None:
    engine, acme = world["engine"], world["acme"]
    whole = engine.search(acme, SearchFilters(every_run=True), limit=200).hits
    paged, cursor = [], None
    while True:
        page = engine.search(acme, SearchFilters(every_run=True), limit=3, cursor=cursor)
        paged += page.hits
        if (cursor := page.next_cursor) is None:
            break
    assert paged == whole and len(whole) > 3
    first = engine.search(acme, SearchFilters(every_run=True), limit=1)
    with pytest.raises(InvalidRequest):
        engine.search(acme, SearchFilters(), cursor=first.next_cursor)
    with pytest.raises(InvalidRequest):
        engine.search(acme, SearchFilters(), cursor="not-a-cursor")


@pytest.mark.parametrize(
    "filters",
    [
        {"event_types": ("explode",)},
        {"start_s": 5, "end_s": 1},
        {"min_dwell_s": -1},
        {"min_dwell_s": 10, "event_types": ("appear",)},
        {"text": "   "},
        {"recorded_after": datetime(2026, 11, 20)},  # no offset: not a moment
    ],
)
def test_filters_that_cannot_hold_are_refused(
    world: dict[str, Any], filters: dict[str, Any]
) -> None:
    with pytest.raises(ValidationFailed):
        world["engine"].search(world["acme"], SearchFilters(**filters))
