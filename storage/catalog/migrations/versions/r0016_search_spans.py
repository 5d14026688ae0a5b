"""Search index spans: each indexed run's latest hit end (``last_s``) and longest dwell
(``longest_dwell_s``), so a search by clock time, by time in the video or by minimum dwell drops
runs that cannot reach it before reading their files. Runs indexed before are never dropped on
them (null: not known).

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from storage.catalog.tables import REAL

revision = "0016"
down_revision = "0015"


def upgrade() -> None:
    op.add_column("search_runs", sa.Column("last_s", REAL))
    op.add_column("search_runs", sa.Column("longest_dwell_s", REAL))


def downgrade() -> None:
    with op.batch_alter_table("search_runs") as batch:
        batch.drop_column("longest_dwell_s")
        batch.drop_column("last_s")
