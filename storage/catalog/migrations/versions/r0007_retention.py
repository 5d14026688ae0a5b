"""Retention: when a run's artifacts were deleted and how many bytes they held; the seconds of
video a run decoded (billed for failed runs when the plan says so).

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from storage.catalog.tables import BYTES, REAL

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    op.add_column("runs", sa.Column("artifacts_bytes", BYTES))
    op.add_column("runs", sa.Column("expired_at", sa.Text()))
    op.add_column("runs", sa.Column("processed_s", REAL))
