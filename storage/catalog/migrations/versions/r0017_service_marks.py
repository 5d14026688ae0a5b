"""Service marks: moments the service's own chores last completed (``retention_sweep``), so
operators can alert on a chore that stopped (``ves_retention_last_sweep_timestamp_seconds``).

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"


def upgrade() -> None:
    op.create_table(
        "service_marks",
        sa.Column("name", sa.Text(), primary_key=True),
        sa.Column("at", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("service_marks")
