"""Request and response models of review notes (people's notes on evidence spans)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from api.schemas.videos import NOT_BLANK_PATTERN, not_blank
from storage.catalog.review_notes import Verdict

_NOTE_EXAMPLE: dict[str, JsonValue] = {
    "note_id": "note_01m7zc0q3v2c1hx9n5k8w4r7ta",
    "evidence_id": "ev_01m7zbsdnj1ww6bq0c0c9d3bx2",
    "run_id": "run_01m7zbsdnepf3bap3vrzhkr8he",
    "author": "key:key_01m7zbsdn2x1g6z7h0r2a9m3kq",
    "text": "The box is on the courier, not on the visitor: the span shows the wrong person.",
    "verdict": "rejected",
    "created_at": "2026-11-25T10:00:00.000Z",
    "supersedes": "note_01m7zbzt8a4mh6bh2k6w0r1yd3",
}


class NoteCreate(BaseModel):
    """A reviewer's note on a span: what they saw and their verdict."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"text": "Checked frame by frame.", "verdict": "confirmed"}]
        },
    )

    text: str = Field(
        min_length=1,
        max_length=2000,
        examples=["Checked frame by frame."],
        json_schema_extra={"pattern": NOT_BLANK_PATTERN},
    )
    verdict: Verdict = Field(
        description="`confirmed` (the span shows what it claims), `rejected` (it does not) or "
        "`needs_review` (someone else should look)."
    )

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        return not_blank(value, "text")


class NotePublic(BaseModel):
    """A review note as stored: never changed afterwards; a newer note supersedes it."""

    model_config = ConfigDict(json_schema_extra={"examples": [_NOTE_EXAMPLE]})

    note_id: str
    evidence_id: str
    run_id: str
    author: str = Field(description="Who wrote it: `key:<key_id>`, the API key it came with.")
    text: str
    verdict: Verdict
    created_at: str
    supersedes: str | None = Field(
        description="The note this one replaces (the span's previous note); null for the first."
    )


class NotesPublic(BaseModel):
    """A span's notes, oldest first: the last one's verdict is the span's current verdict."""

    model_config = ConfigDict(json_schema_extra={"examples": [{"data": [_NOTE_EXAMPLE]}]})

    data: list[NotePublic]
    next_cursor: str | None = Field(
        None, description="Always null: a span's notes come in one page."
    )
