"""Export liveness and retention: the ``export-evidence`` flow beats while it works, so the reaper
can fail an export whose process died even when Prefect lost track of it too; and an export's
bundle expires with its run (``expired_at``), its bytes counted in ``storage_bytes`` until then.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"


def upgrade() -> None:
    op.add_column("exports", sa.Column("heartbeat_at", sa.Text()))
    op.add_column("exports", sa.Column("expired_at", sa.Text()))
