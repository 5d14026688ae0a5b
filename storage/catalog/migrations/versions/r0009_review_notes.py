"""Review notes by people on evidence spans: append-only, each new note on a span superseding
the previous one (``position`` orders a span's notes; unique, so two notes never fork a chain).

Revision ID: 0009
Revises: 0008 (the audit trail)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"


def upgrade() -> None:
    op.create_table(
        "review_notes",
        sa.Column("note_id", sa.Text(), primary_key=True),
        sa.Column("tenant_id", sa.Text(), sa.ForeignKey("tenants.tenant_id"), nullable=False),
        sa.Column("video_id", sa.Text(), sa.ForeignKey("videos.video_id"), nullable=False),
        sa.Column("run_id", sa.Text(), sa.ForeignKey("runs.run_id"), nullable=False),
        sa.Column("evidence_id", sa.Text(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("author", sa.Text(), nullable=False),
        sa.Column("key_id", sa.Text()),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("verdict", sa.Text(), nullable=False),
        sa.Column("supersedes", sa.Text(), sa.ForeignKey("review_notes.note_id")),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.CheckConstraint("verdict IN ('confirmed', 'rejected', 'needs_review')"),
        sa.UniqueConstraint("run_id", "evidence_id", "position", name="review_notes_span_position"),
    )
