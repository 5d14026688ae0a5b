"""Run costs: the frames the activity gate skipped undecoded (``frames_skipped``), so the metrics
count frames decoded, sampled and skipped. Runs recorded before hold 0 (not known).

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"


def upgrade() -> None:
    op.add_column(
        "run_costs",
        sa.Column("frames_skipped", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )


def downgrade() -> None:
    with op.batch_alter_table("run_costs") as batch:
        batch.drop_column("frames_skipped")
