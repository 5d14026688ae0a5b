"""Live HLS: a window's run names the run it follows, and a stop asked of a running run.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"


def upgrade() -> None:
    op.add_column("runs", sa.Column("follows_run_id", sa.Text()))
    op.add_column("runs", sa.Column("stop_requested_at", sa.Text()))
    op.create_index("runs_follows", "runs", ["follows_run_id"])
