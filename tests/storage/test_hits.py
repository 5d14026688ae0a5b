"""``hits.parquet`` rows derived from a run's tables of KNOWN rows: one per object, text and event,
with zone names for zone ids, the event's object's class and text, the first span's thumbnail."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from storage.artifacts.hits import derive_hits, normalize_text, summarize, write_hits
from storage.artifacts.layout import to_table, write_rows
from testkit.workspace import ZONES, PlantedRun


def _run() -> PlantedRun:
    run = PlantedRun()
    run.thing("text", 2.0, 6.0, text="Gate  7")
    run.thing("person", 1.0, 9.0, zones=("zone_left", "zone_right"), identity="idn_1")
    run.event("enter_zone", 3.0, None, object_id="obj_0002", zone_id="zone_right")
    run.event("scene_change", 5.0, None)
    return run


def _tables(run: PlantedRun) -> dict[str, object]:
    rows = {"objects": run.objects, "events": run.events, "zones": ZONES}
    return {name: to_table(name, r) for name, r in {**rows, "evidence": run.evidence}.items()}


def test_each_object_text_and_event_is_one_hit() -> None:
    run = _run()
    hits = {h["hit_id"]: h for h in derive_hits(_tables(run)).to_pylist()}  # type: ignore[arg-type]
    assert len(hits) == len(run.objects) + len(run.events)
    text = hits["obj_0001"]
    assert (text["kind"], text["text"], text["text_norm"]) == ("text", "Gate  7", "gate7")
    assert (text["start_s"], text["end_s"]) == (2.0, 6.0)
    person = hits["obj_0002"]
    assert person["kind"] == "object" and person["zones"] == ["left", "right"]
    assert person["identity_id"] == "idn_1"
    span = next(e for e in run.evidence if e["evidence_id"] == person["evidence_ids"][0])
    assert person["thumbnail"] == span["frames"][0]["thumbnail"]
    entered = next(h for h in hits.values() if h["event_type"] == "enter_zone")
    assert (entered["class"], entered["zones"], entered["identity_id"]) == (
        "person",
        ["right"],
        "idn_1",
    )
    assert entered["start_s"] == entered["end_s"] == 3.0  # an instant event
    seen = next(h for h in hits.values() if h["event_type"] == "text_seen")
    assert (seen["text"], seen["class"]) == ("Gate  7", "text")
    cut = next(h for h in hits.values() if h["event_type"] == "scene_change")
    assert cut["class"] is None and cut["object_id"] is None and cut["zones"] == []


def test_a_run_that_saw_nothing_has_no_hits_and_its_summary_says_so(tmp_path: Path) -> None:
    write_rows(tmp_path, "zones", ZONES)
    hits = pq.read_table(write_hits(tmp_path))
    assert hits.num_rows == 0
    assert summarize(hits, has_file=True).hits == 0


def test_the_summary_holds_what_a_search_prunes_on() -> None:
    summary = summarize(derive_hits(_tables(_run())), has_file=True)  # type: ignore[arg-type]
    assert summary.classes == {"text", "person"}
    assert summary.event_types == {"appear", "disappear", "enter_zone", "scene_change", "text_seen"}
    assert summary.zones == {"left", "right"}
    assert summary.texts == {normalize_text("Gate 7")}
