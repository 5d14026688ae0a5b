"""Requests counted per key (the demo onboarding's rate limit per client address).

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from storage.catalog.tables import REAL

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.create_table(
        "rate_events",
        sa.Column("bucket", sa.Text(), nullable=False),
        sa.Column("at", REAL, nullable=False),
    )
    op.create_index("rate_events_bucket", "rate_events", ["bucket", "at"])
