"""Workspace search: a video's recorded time (``videos.recorded_at``, so hits can be searched by
wall-clock time) and the search index of published runs (``search_runs``: what each holds, so a
search prunes the tenant's runs before it reads any file); and asks put to the whole workspace
(``POST /api/product/ask``) are logged with no video or run of their own.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"


def upgrade() -> None:
    op.add_column("videos", sa.Column("recorded_at", sa.Text()))
    op.create_table(
        "search_runs",
        sa.Column("run_id", sa.Text(), sa.ForeignKey("runs.run_id"), primary_key=True),
        sa.Column("tenant_id", sa.Text(), nullable=False),
        sa.Column("video_id", sa.Text(), nullable=False),
        sa.Column("classes", sa.Text(), nullable=False),
        sa.Column("event_types", sa.Text(), nullable=False),
        sa.Column("zones", sa.Text(), nullable=False),
        sa.Column("texts", sa.Text(), nullable=False),
        sa.Column("hits", sa.Integer(), nullable=False),
        sa.Column("has_file", sa.Integer(), nullable=False),
        sa.Column("indexed_at", sa.Text(), nullable=False),
    )
    op.create_index("search_runs_tenant", "search_runs", ["tenant_id", "video_id"])
    with op.batch_alter_table("asks") as batch:
        batch.alter_column("video_id", existing_type=sa.Text(), nullable=True)
        batch.alter_column("run_id", existing_type=sa.Text(), nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM asks WHERE video_id IS NULL OR run_id IS NULL")
    with op.batch_alter_table("asks") as batch:
        batch.alter_column("video_id", existing_type=sa.Text(), nullable=False)
        batch.alter_column("run_id", existing_type=sa.Text(), nullable=False)
    op.drop_index("search_runs_tenant", table_name="search_runs")
    op.drop_table("search_runs")
    op.drop_column("videos", "recorded_at")
