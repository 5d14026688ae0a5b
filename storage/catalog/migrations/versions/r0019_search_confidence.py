"""Search index confidences: each indexed run's highest confidence by kind and class of hit
(``top_confidence``, JSON), so a search sorted by relevance reads the runs that can rank first
and stops once no unread run can. Runs indexed before are read as before (null: not known).

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"


def upgrade() -> None:
    op.add_column("search_runs", sa.Column("top_confidence", sa.Text()))


def downgrade() -> None:
    with op.batch_alter_table("search_runs") as batch:
        batch.drop_column("top_confidence")
