"""Videos and their runs.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from storage.catalog.tables import BYTES, REAL

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_table(
        "videos",
        sa.Column("video_id", sa.Text(), primary_key=True),
        sa.Column("tenant_id", sa.Text(), sa.ForeignKey("tenants.tenant_id"), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("source_type", sa.Text(), nullable=False),
        sa.Column("source_url", sa.Text()),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("upload_json", sa.Text()),
        sa.Column("source_sha256", sa.Text()),
        sa.Column("source_path", sa.Text()),
        sa.Column("source_bytes", BYTES),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Text(), nullable=False),
        sa.CheckConstraint("source_type IN ('url', 'hls', 'upload')"),
    )
    op.create_index("videos_tenant", "videos", ["tenant_id", "video_id"])
    op.create_index("videos_tenant_state", "videos", ["tenant_id", "state", "video_id"])
    op.create_table(
        "runs",
        sa.Column("run_id", sa.Text(), primary_key=True),
        sa.Column("video_id", sa.Text(), sa.ForeignKey("videos.video_id"), nullable=False),
        sa.Column("tenant_id", sa.Text(), sa.ForeignKey("tenants.tenant_id"), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("stage", sa.Text()),
        sa.Column("progress", REAL, nullable=False, server_default=sa.text("0")),
        sa.Column("params_json", sa.Text(), nullable=False, server_default=sa.text("'{}'")),
        sa.Column("error_code", sa.Text()),
        sa.Column("error_message", sa.Text()),
        sa.Column("flow_run_id", sa.Text()),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("started_at", sa.Text()),
        sa.Column("finished_at", sa.Text()),
    )
    op.create_index("runs_video", "runs", ["video_id", "run_id"])
    op.create_index("runs_state", "runs", ["state"])
