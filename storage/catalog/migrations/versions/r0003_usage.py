"""Usage counters per tenant, period and metric.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from storage.catalog.tables import REAL

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "usage",
        sa.Column("tenant_id", sa.Text(), sa.ForeignKey("tenants.tenant_id"), primary_key=True),
        sa.Column("period", sa.Text(), primary_key=True),
        sa.Column("metric", sa.Text(), primary_key=True),
        sa.Column("value", REAL, nullable=False, server_default=sa.text("0")),
    )
