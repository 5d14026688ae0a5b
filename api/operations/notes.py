"""Review notes on the spans of a video's evidence view, shared by the routes and the MCP
``add_review_note`` tool so both check the same things.

A note may only name a span of the run the evidence view serves now (the video's newest
readable run): another run's span, another tenant's, or a made-up id answer 404 exactly alike.
Notes are not counted against the plan: they are a reviewer's words, bounded in size (2,000
characters), and billing what a customer writes about our output would discourage review.
"""

from __future__ import annotations

from api.schemas.notes import NoteCreate, NotePublic, NotesPublic
from storage.artifacts.served import RunViews
from storage.catalog.records import Run, Tenant
from storage.catalog.review_notes import NewNote
from ves.errors import NotFound, Unauthorized


def add_note(
    tenant: Tenant, video_id: str, evidence_id: str, body: NoteCreate, views: RunViews
) -> NotePublic:
    """Append ``body`` to the span's notes (it supersedes the span's newest note)."""
    if tenant.key_id is None:  # every authenticated request has one; a note must name it
        raise Unauthorized("a review note needs the API key of the person writing it")
    run = _served_run_of(tenant, video_id, evidence_id, views)
    new = NewNote(
        tenant.tenant_id, video_id, run.run_id, evidence_id, tenant.key_id, body.text, body.verdict
    )
    return NotePublic.model_validate(views.notes.add(new).as_dict())


def list_notes(tenant: Tenant, video_id: str, evidence_id: str, views: RunViews) -> NotesPublic:
    """The span's notes, oldest first."""
    run = _served_run_of(tenant, video_id, evidence_id, views)
    notes = views.notes.for_span(run.run_id, evidence_id)
    return NotesPublic(data=[NotePublic.model_validate(n.as_dict()) for n in notes])


def _served_run_of(tenant: Tenant, video_id: str, evidence_id: str, views: RunViews) -> Run:
    """The run the evidence view serves, when ``evidence_id`` is one of its spans."""
    run = views.run_of(tenant.tenant_id, video_id)
    spans = views.reader.span_times(run.artifacts_path or "")
    if not any(span["evidence_id"] == evidence_id for span in spans):
        raise NotFound(f"no evidence span {evidence_id}")
    return run
