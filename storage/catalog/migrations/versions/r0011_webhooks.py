"""Webhooks: tenants' endpoints, an outbox of deliveries (one per endpoint and event, written in
the transaction of the event) and the log of every attempt to send one.

Revision ID: 0011
Revises: 0010 (exports)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from storage.catalog.tables import REAL

revision = "0011"
down_revision = "0010"


def _text(name: str, *args: object, **kwargs: object) -> sa.Column[str]:
    return sa.Column(name, sa.Text(), *args, **kwargs)  # type: ignore[arg-type]


def upgrade() -> None:
    op.create_table(
        "webhook_endpoints",
        _text("webhook_id", primary_key=True),
        _text("tenant_id", sa.ForeignKey("tenants.tenant_id"), nullable=False),
        _text("url", nullable=False),
        _text("events_json", nullable=False),
        _text("secret", nullable=False),
        _text("description"),
        _text("created_at", nullable=False),
        _text("disabled_at"),
    )
    op.create_index("webhook_endpoints_tenant", "webhook_endpoints", ["tenant_id", "webhook_id"])
    op.create_table(
        "webhook_deliveries",
        _text("delivery_id", primary_key=True),
        _text("webhook_id", sa.ForeignKey("webhook_endpoints.webhook_id"), nullable=False),
        _text("tenant_id", sa.ForeignKey("tenants.tenant_id"), nullable=False),
        _text("event_type", nullable=False),
        _text("payload_json", nullable=False),
        _text("state", nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default=sa.text("0")),
        _text("next_attempt_at"),
        _text("first_attempt_at"),
        _text("flow_run_id"),
        _text("created_at", nullable=False),
        _text("finished_at"),
        _text("dedupe_key", unique=True),
        sa.CheckConstraint("state IN ('pending', 'delivered', 'failed')"),
    )
    op.create_index(
        "webhook_deliveries_endpoint", "webhook_deliveries", ["webhook_id", "delivery_id"]
    )
    op.create_index("webhook_deliveries_due", "webhook_deliveries", ["state", "next_attempt_at"])
    op.create_table(
        "webhook_attempts",
        _text(
            "delivery_id",
            sa.ForeignKey("webhook_deliveries.delivery_id"),
            primary_key=True,
        ),
        sa.Column("attempt", sa.Integer(), primary_key=True, autoincrement=False),
        _text("started_at", nullable=False),
        sa.Column("latency_ms", REAL, nullable=False),
        sa.Column("response_status", sa.Integer()),
        _text("error"),
        _text("outcome", nullable=False),
        sa.CheckConstraint("outcome IN ('delivered', 'retrying', 'failed')"),
    )
