"""Run liveness (flows beat while they work) and where a run's artifacts were published.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.add_column("runs", sa.Column("heartbeat_at", sa.Text()))
    op.add_column("runs", sa.Column("artifacts_path", sa.Text()))
    op.create_index("runs_video_state", "runs", ["video_id", "state", "run_id"])
