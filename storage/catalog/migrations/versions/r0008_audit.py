"""Audit trail: one append-only hash chain of records per tenant, and where retention cut it.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    op.create_table(
        "audit",
        sa.Column("tenant_id", sa.Text(), primary_key=True),
        sa.Column("seq", sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column("record_id", sa.Text(), nullable=False, unique=True),
        sa.Column("key_id", sa.Text(), nullable=False),
        sa.Column("action", sa.Text(), nullable=False),
        sa.Column("video_id", sa.Text()),
        sa.Column("ids_json", sa.Text(), nullable=False, server_default=sa.text("'{}'")),
        sa.Column("outcome", sa.Integer(), nullable=False),
        sa.Column("client", sa.Text()),
        sa.Column("at", sa.Text(), nullable=False),
        sa.Column("prev_hash", sa.Text(), nullable=False),
        sa.Column("hash", sa.Text(), nullable=False),
    )
    op.create_index("audit_video", "audit", ["tenant_id", "video_id", "seq"])
    op.create_index("audit_at", "audit", ["at"])
    op.create_table(
        "audit_checkpoints",
        sa.Column("tenant_id", sa.Text(), primary_key=True),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.Text(), nullable=False),
        sa.Column("at", sa.Text(), nullable=False),
    )
