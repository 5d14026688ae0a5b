"""Exports: signed evidence bundles of a video's run, made by the ``export-evidence`` flow.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from storage.catalog.tables import BYTES

revision = "0010"
down_revision = "0009"


def upgrade() -> None:
    op.create_table(
        "exports",
        sa.Column("export_id", sa.Text(), primary_key=True),
        sa.Column("tenant_id", sa.Text(), sa.ForeignKey("tenants.tenant_id"), nullable=False),
        sa.Column("video_id", sa.Text(), sa.ForeignKey("videos.video_id"), nullable=False),
        sa.Column("run_id", sa.Text(), sa.ForeignKey("runs.run_id"), nullable=False),
        sa.Column("key_id", sa.Text()),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("params_json", sa.Text(), nullable=False, server_default=sa.text("'{}'")),
        sa.Column("flow_run_id", sa.Text()),
        sa.Column("bundle_key", sa.Text()),
        sa.Column("bundle_bytes", BYTES),
        sa.Column("bundle_sha256", sa.Text()),
        sa.Column("signing_key_id", sa.Text()),
        sa.Column("error_code", sa.Text()),
        sa.Column("error_message", sa.Text()),
        sa.Column("created_at", sa.Text(), nullable=False),
        sa.Column("finished_at", sa.Text()),
        sa.CheckConstraint("state IN ('queued', 'running', 'succeeded', 'failed')"),
    )
    op.create_index("exports_video", "exports", ["video_id", "export_id"])
