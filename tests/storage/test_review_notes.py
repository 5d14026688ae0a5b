"""Review notes in the catalog (both engines): append-only, each new note superseding the span's
previous one, read back oldest first; and the served span's two hashes."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from storage.artifacts.spans import canonical_sha256, published_form, served_span, span_document
from storage.catalog.database import Catalog
from storage.catalog.records import Run
from storage.catalog.review_notes import NewNote, ReviewNoteStore, Verdict, span_notes
from storage.catalog.tenants import TenantStore
from tests.fixtures.published import new_video, published_run
from ves.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def run(catalog: Catalog, settings: Settings) -> Run:
    tenant = TenantStore(catalog).create_tenant("reviewers")
    video_id = new_video(catalog, tenant.tenant_id)
    return published_run(catalog, settings.data_dir, tenant.tenant_id, video_id, days_ago=0)


def _note(run: Run, evidence_id: str, text: str, verdict: Verdict = "confirmed") -> NewNote:
    return NewNote(run.tenant_id, run.video_id, run.run_id, evidence_id, "key_1", text, verdict)


def test_a_new_note_supersedes_the_spans_previous_one(catalog: Catalog, run: Run) -> None:
    store = ReviewNoteStore(catalog)
    first = store.add(_note(run, "ev_a", "looks right"))
    other_span = store.add(_note(run, "ev_b", "another span", "needs_review"))
    second = store.add(_note(run, "ev_a", "no: a shadow", "rejected"))
    assert first.supersedes is None and other_span.supersedes is None
    assert second.supersedes == first.note_id
    assert first.author == second.author == "key:key_1"
    assert [n.text for n in store.for_span(run.run_id, "ev_a")] == ["looks right", "no: a shadow"]
    by_span = store.for_run(run.run_id)
    assert {k: [n.note_id for n in v] for k, v in by_span.items()} == {
        "ev_a": [first.note_id, second.note_id],
        "ev_b": [other_span.note_id],
    }
    assert store.for_span(run.run_id, "ev_none") == []


def test_span_notes_are_json_able_dicts_oldest_first(catalog: Catalog, run: Run) -> None:
    store = ReviewNoteStore(catalog)
    notes = [store.add(_note(run, "ev_a", f"note {i}")) for i in range(3)]
    exported = span_notes(catalog, run.run_id, "ev_a")
    assert exported == [n.as_dict() for n in notes]
    assert list(exported[0]) == [
        *("note_id", "evidence_id", "run_id", "author", "text", "verdict", "created_at"),
        "supersedes",
    ]
    assert [n["supersedes"] for n in exported] == [None, notes[0].note_id, notes[1].note_id]


def test_notes_added_at_once_all_land_in_one_unbroken_chain(catalog: Catalog, run: Run) -> None:
    store = ReviewNoteStore(catalog)
    threads = [
        threading.Thread(target=store.add, args=(_note(run, "ev_a", f"n{i}"),)) for i in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    notes = store.for_span(run.run_id, "ev_a")
    assert len(notes) == 8
    assert [n.supersedes for n in notes] == [None, *(n.note_id for n in notes[:-1])]


def test_the_catalog_refuses_an_unknown_verdict(catalog: Catalog, run: Run) -> None:
    bad: Any = "maybe"
    with pytest.raises(sa.exc.IntegrityError):
        ReviewNoteStore(catalog).add(_note(run, "ev_a", "hm", bad))
    assert ReviewNoteStore(catalog).for_span(run.run_id, "ev_a") == []


def test_no_code_updates_or_deletes_a_review_note() -> None:
    """Notes are append-only: nothing in the service writes the table but an INSERT."""
    pattern = re.compile(
        r"(update|delete)(\W+from)?\W+(review_notes|notes_table)\b"
        r"|(review_notes|notes_table)\.(update|delete)\(",
        re.IGNORECASE,
    )
    sources = [
        p for d in ("api", "storage", "flows", "tasks", "cli") for p in (ROOT / d).rglob("*.py")
    ]
    offenders = [str(p) for p in sources if pattern.search(p.read_text())]
    assert offenders == []
    caught = ["DELETE FROM review_notes", "notes_table.update(", "sa.delete(review_notes)"]
    assert all(pattern.search(line) for line in caught)


ROW = {
    "evidence_id": "ev_a",
    "start_s": 1.0,
    "end_s": 2.5,
    "object_id": "obj_1",
    "event_id": None,
    "confidence": 0.75,
    "frames": [
        {"t_s": 1.0, "bbox": [0.1, 0.2, 0.3, 0.4], "thumbnail": "thumbs/x.jpg", "sha256": "a"}
    ],
    "review_notes": [
        {"note_id": "note_s", "author": "system", "text": "low light", "created_at": "2026-11-01"}
    ],
    "source_sha256": "b" * 64,
}
PUBLISHED = {**ROW, "sha256": canonical_sha256(span_document(ROW, "vid_1", "run_1"))}
PERSON = {
    "note_id": "note_p",
    "author": "key:key_1",
    "text": "checked",
    "created_at": "2026-11-02",
    "verdict": "rejected",
    "supersedes": None,
}


@pytest.mark.parametrize("notes", [[], [PERSON]], ids=["no notes", "a person's note"])
def test_a_served_span_proves_both_itself_and_what_its_run_published(
    notes: list[dict[str, Any]],
) -> None:
    span = served_span(PUBLISHED, "vid_1", "run_1", notes)
    assert span["sha256"] == canonical_sha256(span)
    assert span["published_sha256"] == PUBLISHED["sha256"]
    assert canonical_sha256(published_form(span)) == PUBLISHED["sha256"]
    assert span["verdict"] == (notes[-1]["verdict"] if notes else None)
    assert [n["author"] for n in span["review_notes"]] == ["system", *(n["author"] for n in notes)]
    if notes:  # a note changes what is served, so its hash, never the published one
        assert span["sha256"] != served_span(PUBLISHED, "vid_1", "run_1", [])["sha256"]
