"""Questions put to the whole workspace, over planted runs of KNOWN rows: the answer is to the
question asked (GATE 7 is not GATE 77), every claim is cited by video, run and span, counts are
of things (an identity seen twice is one), and what cannot be answered is refused with why."""

from __future__ import annotations

from datetime import date
from typing import Any

from search.ask import WorkspaceCitation, WorkspaceClaim, ask_workspace, backed
from search.engine import SearchEngine
from storage.artifacts.blobs import BlobStore
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from testkit.workspace import PlantedRun, plant_run

DAY_AFTER = date(2026, 11, 21)  # the front gate was recorded on 2026-11-20


def _ask(world: dict[str, Any], question: str, today: date = DAY_AFTER) -> Any:
    return ask_workspace(world["engine"], world["acme"], question, today)


def test_which_videos_show_a_text_names_that_text_only(world: dict[str, Any]) -> None:
    front = world["ids"]["front"]
    answer = _ask(world, "Which videos show GATE 7?")
    assert answer.grounded and answer.refusal_reason is None
    assert [(c.video_id, c.run_id) for c in answer.citations] == [front]
    assert "Front gate" in answer.answer and "Back door" not in answer.answer  # not "gate 77"
    assert "3.0 s to 9.0 s" in answer.answer
    assert answer.interpreted["text"] == "GATE 7"
    cite = answer.citations[0]
    assert cite.start_s <= 3.0 and cite.end_s >= 9.0  # the span as the run's evidence has it


def test_counts_are_of_people_with_their_spans(world: dict[str, Any]) -> None:
    answer = _ask(world, "How many people were seen across all videos yesterday?")
    assert answer.grounded, answer.answer
    assert answer.answer.startswith("1 person was seen across 1 video: Front gate 1")
    assert len(answer.citations) == 1
    assert answer.interpreted["recorded_after"] == "2026-11-20T00:00:00.000Z"
    later = _ask(world, "How many people were seen yesterday?", today=date(2026, 11, 25))
    assert not later.grounded and later.refusal_reason == "no_evidence"
    assert "searched the newest runs of 3 videos" in later.answer


def test_a_thing_seen_again_is_counted_once_unless_times_are_asked(
    catalog: Catalog, store: BlobStore
) -> None:
    tenant = TenantStore(catalog).create_tenant("acme").tenant_id
    run = PlantedRun()
    run.thing("person", 0.0, 4.0, identity="idn_a")
    run.thing("person", 9.0, 12.0, identity="idn_a")  # the same one, back
    run.thing("person", 5.0, 7.0, identity="idn_b")
    plant_run(catalog, store, tenant, run, title="hall")
    engine = SearchEngine(catalog, store)
    things = ask_workspace(engine, tenant, "How many people were seen?")
    assert things.answer.startswith("2 people were seen across 1 video: hall 2")
    assert len(things.citations) == 2
    times = ask_workspace(engine, tenant, "How many times did people come into view?")
    assert times.answer.startswith("people came into view 3 times"), times.answer
    assert len(times.citations) == 3


def test_what_cannot_be_answered_is_refused_with_why(world: dict[str, Any]) -> None:
    refused = {
        "Did a helicopter land?": "outside_detectors",
        "What is the weather like in Paris?": "off_topic",
        "Which videos show GATE 99?": "no_evidence",
        "Which person was the fastest?": "not_understood",
    }
    for question, reason in refused.items():
        answer = _ask(world, question)
        assert not answer.grounded and answer.citations == (), question
        assert answer.refusal_reason == reason, (question, answer)
        assert answer.answer


def test_a_time_outside_its_cited_span_is_never_said() -> None:
    span = WorkspaceCitation("vid_a", "run_a", "ev_1", 3.0, 9.0)
    spans = {("run_a", "ev_1"): span}
    assert backed(WorkspaceClaim("at 4 s", (span,), (4.0,)), spans)
    assert not backed(WorkspaceClaim("at 20 s", (span,), (20.0,)), spans)
    other = WorkspaceCitation("vid_a", "run_a", "ev_9", 3.0, 9.0)  # no such span in the run
    assert not backed(WorkspaceClaim("at 4 s", (other,), (4.0,)), spans)
