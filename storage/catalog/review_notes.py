"""Review notes by people on the evidence spans of a published run: append-only.

A note is never edited or deleted (this module has no UPDATE or DELETE of the table, and no
route or tool offers one); a reviewer who changes their mind adds a new note, which supersedes
the span's previous one, so the newest note's verdict is the span's current verdict and the
whole history stays readable. A span's notes are numbered (``position`` 1, 2, ...) in the
transaction that adds one, under a unique (run, span, position) constraint: two reviewers
adding a note at once both land, one after the other, and the chain never forks.

Notes live in the catalog, not in the run's artifacts: a published run never changes (its
manifest and hashes prove it), so the evidence view adds people's notes to the published spans
as it serves them (``storage.artifacts.spans.served_span``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

from sqlalchemy import Connection, func, select

from storage.catalog.database import Catalog
from storage.catalog.tables import review_notes as notes_table
from ves.clock import now_rfc3339
from ves.ids import new_id

Verdict = Literal["confirmed", "rejected", "needs_review"]
VERDICTS: tuple[str, ...] = get_args(Verdict)


@dataclass(frozen=True)
class ReviewNote:
    """One person's note on one evidence span of one run."""

    note_id: str
    evidence_id: str
    run_id: str
    author: str  # "key:<key_id>": the API key the note came with
    text: str
    verdict: str
    created_at: str
    supersedes: str | None  # the span's previous note, None for its first

    def as_dict(self) -> dict[str, Any]:
        """The note as the API answers it (JSON-able)."""
        return asdict(self)


@dataclass(frozen=True)
class NewNote:
    """What a reviewer adds: where, by whom, what."""

    tenant_id: str
    video_id: str
    run_id: str
    evidence_id: str
    key_id: str
    text: str
    verdict: Verdict


def author_of(key_id: str) -> str:
    """How a note names the person who wrote it: by the key they sent (keys are per person)."""
    return f"key:{key_id}"


class ReviewNoteStore:
    """Adds and reads review notes; there is deliberately no way to change or remove one."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def add(self, new: NewNote) -> ReviewNote:
        """Append a note to its span; it supersedes the span's newest note, if any."""
        with self.catalog.write(lock=f"notes:{new.run_id}") as conn:
            previous, position = _last_of_span(conn, new.run_id, new.evidence_id)
            note = ReviewNote(
                note_id=new_id("note"),
                evidence_id=new.evidence_id,
                run_id=new.run_id,
                author=author_of(new.key_id),
                text=new.text,
                verdict=new.verdict,
                created_at=now_rfc3339(),
                supersedes=previous,
            )
            row = {**asdict(note), "tenant_id": new.tenant_id, "video_id": new.video_id}
            conn.execute(notes_table.insert().values(**row, key_id=new.key_id, position=position))
        return note

    def for_span(self, run_id: str, evidence_id: str) -> list[ReviewNote]:
        """A span's notes, oldest first (the last one holds its current verdict)."""
        return self.for_run(run_id, evidence_id).get(evidence_id, [])

    def for_run(self, run_id: str, evidence_id: str | None = None) -> dict[str, list[ReviewNote]]:
        """Every span's notes of a run (or of one span), by evidence id, oldest first."""
        query = select(*_COLUMNS).where(notes_table.c.run_id == run_id)
        if evidence_id is not None:
            query = query.where(notes_table.c.evidence_id == evidence_id)
        query = query.order_by(notes_table.c.evidence_id, notes_table.c.position)
        with self.catalog.read() as conn:
            rows = conn.execute(query).mappings().all()
        by_span: dict[str, list[ReviewNote]] = defaultdict(list)
        for row in rows:
            by_span[row["evidence_id"]].append(ReviewNote(**row))
        return dict(by_span)


_COLUMNS = [notes_table.c[name] for name in ReviewNote.__dataclass_fields__]


def _last_of_span(conn: Connection, run_id: str, evidence_id: str) -> tuple[str | None, int]:
    """The span's newest note id (None without one) and the position the next note takes."""
    span = (notes_table.c.run_id == run_id) & (notes_table.c.evidence_id == evidence_id)
    last = conn.execute(select(func.max(notes_table.c.position)).where(span)).scalar()
    if last is None:
        return None, 1
    newest = select(notes_table.c.note_id).where(span & (notes_table.c.position == last))
    return conn.execute(newest).scalar_one(), last + 1


def span_notes(catalog: Catalog, run_id: str, evidence_id: str) -> list[dict[str, Any]]:
    """A span's review notes by people as JSON-able dicts, oldest first: ``note_id``,
    ``evidence_id``, ``run_id``, ``author``, ``text``, ``verdict``, ``created_at``,
    ``supersedes`` (what an export bundle carries beside the span)."""
    return [note.as_dict() for note in ReviewNoteStore(catalog).for_span(run_id, evidence_id)]
