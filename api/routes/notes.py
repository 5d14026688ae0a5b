"""Review notes by people on the evidence spans of a video (issue 16, chain of custody).

A note names a span of the run the evidence view serves now; it is written once and never
changed: the path answers no PUT, PATCH or DELETE (405), and a new note on the span supersedes
the previous one (the newest note's verdict is the span's current verdict). The evidence view
shows every note in its span's `review_notes`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request

from api.audit import AuditedRoute, note_ids
from api.deps import TenantDep, ViewsDep
from api.operations.notes import add_note, list_notes
from api.problems import problem_responses
from api.schemas.notes import NoteCreate, NotePublic, NotesPublic

router = APIRouter(tags=["review notes"], route_class=AuditedRoute)

_PATH = "/api/product/videos/{video_id}/evidence/{evidence_id}/notes"
_WHICH_SPAN = (
    " `evidence_id` must be a span of the evidence view as served now (the video's newest "
    "succeeded run); any other id, another tenant's included, answers 404."
)
NOTE_EXAMPLES: dict[str, Any] = {
    "confirmed": {
        "summary": "Confirm a span",
        "value": {"text": "Checked frame by frame: it is the courier.", "verdict": "confirmed"},
    },
    "rejected": {
        "summary": "Reject a span",
        "value": {"text": "The box follows a shadow, not a person.", "verdict": "rejected"},
    },
    "needs_review": {
        "summary": "Ask for another look",
        "value": {"text": "Too dark to tell; please look again.", "verdict": "needs_review"},
    },
}


@router.post(
    _PATH,
    status_code=201,
    summary="Add a review note to an evidence span",
    description=(
        "Records a reviewer's note and verdict (`confirmed`, `rejected`, `needs_review`) on a "
        "span, with `author` `key:<key_id>` (the key sent). Notes are never edited or deleted: "
        "a new note on the same span supersedes the previous one (`supersedes` names it), and "
        "the newest note's verdict becomes the span's `verdict` in the evidence view. The run's "
        "published evidence does not change: the evidence view serves the span with the note "
        "and a `sha256` recomputed over what it serves, and keeps the published hash in "
        "`published_sha256`. Not counted against the plan." + _WHICH_SPAN
    ),
    responses=problem_responses(400, 401, 404, 409, 415, 422),
)
def create_note(
    video_id: str,
    evidence_id: str,
    request: Request,
    tenant: TenantDep,
    views: ViewsDep,
    body: Annotated[NoteCreate, Body(openapi_examples=NOTE_EXAMPLES)],
) -> NotePublic:
    note = add_note(tenant, video_id, evidence_id, body, views)
    note_ids(request, run_id=note.run_id, note_id=note.note_id)
    return note


@router.get(
    _PATH,
    summary="Review notes of an evidence span",
    description=(
        "Every note people wrote on the span, oldest first; each names the note it supersedes, "
        "and the last one's verdict is the span's current verdict." + _WHICH_SPAN
    ),
    responses=problem_responses(401, 404, 409),
)
def list_span_notes(
    video_id: str, evidence_id: str, tenant: TenantDep, views: ViewsDep
) -> NotesPublic:
    return list_notes(tenant, video_id, evidence_id, views)
