"""Run costs: what each succeeded run measured, for the estimates' cost model.

Revision ID: 0012
Revises: 0010 (re-chained after the webhooks' 0011 at merge)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from storage.catalog.tables import BYTES, REAL

revision = "0012"
down_revision = "0011"


def upgrade() -> None:
    op.create_table(
        "run_costs",
        sa.Column("run_id", sa.Text(), sa.ForeignKey("runs.run_id"), primary_key=True),
        sa.Column("tenant_id", sa.Text(), sa.ForeignKey("tenants.tenant_id"), nullable=False),
        sa.Column("video_id", sa.Text(), sa.ForeignKey("videos.video_id"), nullable=False),
        sa.Column("recorded_at", sa.Text(), nullable=False),
        sa.Column("detector_mode", sa.Text(), nullable=False),
        sa.Column("sample_fps", REAL, nullable=False),
        sa.Column("source_fps", REAL, nullable=False),
        sa.Column("width", sa.Integer(), nullable=False),
        sa.Column("height", sa.Integer(), nullable=False),
        sa.Column("duration_s", REAL, nullable=False),
        sa.Column("processed_s", REAL, nullable=False),
        sa.Column("frames_decoded", sa.Integer(), nullable=False),
        sa.Column("frames_analysed", sa.Integer(), nullable=False),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("stages_json", sa.Text(), nullable=False),
        sa.Column("compute_s", REAL, nullable=False),
        sa.Column("wall_s", REAL, nullable=False),
        sa.Column("start_s", REAL, nullable=False),
        sa.Column("source_bytes", BYTES, nullable=False, server_default=sa.text("0")),
    )
    op.create_index("run_costs_recorded", "run_costs", ["recorded_at"])
    op.create_index("run_costs_video", "run_costs", ["tenant_id", "video_id", "recorded_at"])
