"""Every question asked and the answer given, kept with its run for review.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "asks",
        sa.Column("ask_id", sa.Text(), primary_key=True),
        sa.Column("tenant_id", sa.Text(), sa.ForeignKey("tenants.tenant_id"), nullable=False),
        sa.Column("video_id", sa.Text(), sa.ForeignKey("videos.video_id"), nullable=False),
        sa.Column("run_id", sa.Text(), sa.ForeignKey("runs.run_id"), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("answer_json", sa.Text(), nullable=False),
        sa.Column("grounded", sa.Integer(), nullable=False),
        sa.Column("refusal_reason", sa.Text()),
        sa.Column("phrased_by", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Text(), nullable=False),
    )
    op.create_index("asks_tenant", "asks", ["tenant_id", "created_at"])
    op.create_index("asks_run", "asks", ["run_id", "created_at"])
