"""The catalog's schema, declared once for SQLite and PostgreSQL (what the migrations build).

The Alembic revisions in ``storage/catalog/migrations/versions`` are the history that leads
here; a test
compares a migrated catalog with these tables on both engines, so the two cannot drift apart.

Types are chosen to read the same on both engines: timestamps are TEXT in RFC 3339 UTC with
milliseconds (``ves.clock``), so text order is time order everywhere; ``REAL`` is 8 bytes on
SQLite but 4 on PostgreSQL, so real columns are ``DOUBLE PRECISION`` there (a 4-byte float would
round a count of bytes or a Unix time); byte counts are ``BIGINT`` on PostgreSQL (files pass
2 GiB); booleans are INTEGER 0/1 (``asks.grounded``), as SQLite stores them.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

REAL: sa.types.TypeEngine[float] = sa.REAL().with_variant(
    postgresql.DOUBLE_PRECISION(), "postgresql"
)
BYTES: sa.types.TypeEngine[int] = sa.Integer().with_variant(sa.BigInteger(), "postgresql")

metadata = sa.MetaData()


def _text(name: str, *args: Any, **kwargs: Any) -> sa.Column[str]:
    return sa.Column(name, sa.Text(), *args, **kwargs)


tenants = sa.Table(
    "tenants",
    metadata,
    _text("tenant_id", primary_key=True),
    _text("name", nullable=False, unique=True),
    _text("plan", nullable=False, server_default=sa.text("'sandbox'")),
    _text("created_at", nullable=False),
)

api_keys = sa.Table(
    "api_keys",
    metadata,
    _text("key_id", primary_key=True),
    _text("tenant_id", sa.ForeignKey("tenants.tenant_id"), nullable=False),
    _text("key_hash", nullable=False),
    _text("created_at", nullable=False),
    _text("revoked_at"),
    sa.Index("api_keys_tenant", "tenant_id"),
)

videos = sa.Table(
    "videos",
    metadata,
    _text("video_id", primary_key=True),
    _text("tenant_id", sa.ForeignKey("tenants.tenant_id"), nullable=False),
    _text("title", nullable=False),
    _text("source_type", nullable=False),
    _text("source_url"),
    _text("state", nullable=False),
    _text("upload_json"),
    _text("source_sha256"),
    _text("source_path"),
    sa.Column("source_bytes", BYTES),
    _text("created_at", nullable=False),
    _text("updated_at", nullable=False),
    _text("recorded_at"),  # when its time 0 was recorded, RFC 3339 (0015): searches by clock time
    sa.CheckConstraint("source_type IN ('url', 'hls', 'upload')"),
    sa.Index("videos_tenant", "tenant_id", "video_id"),
    sa.Index("videos_tenant_state", "tenant_id", "state", "video_id"),
)

runs = sa.Table(
    "runs",
    metadata,
    _text("run_id", primary_key=True),
    _text("video_id", sa.ForeignKey("videos.video_id"), nullable=False),
    _text("tenant_id", sa.ForeignKey("tenants.tenant_id"), nullable=False),
    _text("state", nullable=False),
    _text("stage"),
    sa.Column("progress", REAL, nullable=False, server_default=sa.text("0")),
    _text("params_json", nullable=False, server_default=sa.text("'{}'")),
    _text("error_code"),
    _text("error_message"),
    _text("flow_run_id"),
    _text("created_at", nullable=False),
    _text("started_at"),
    _text("finished_at"),
    _text("heartbeat_at"),
    _text("artifacts_path"),
    sa.Column("artifacts_bytes", BYTES),
    _text("expired_at"),
    sa.Column("processed_s", REAL),
    _text("follows_run_id"),  # live HLS: the window's run this one continues (0013)
    _text("stop_requested_at"),  # live HLS: a stop was asked (0013)
    sa.Index("runs_video", "video_id", "run_id"),
    sa.Index("runs_follows", "follows_run_id"),
    sa.Index("runs_state", "state"),
    sa.Index("runs_video_state", "video_id", "state", "run_id"),
)

usage = sa.Table(
    "usage",
    metadata,
    _text("tenant_id", sa.ForeignKey("tenants.tenant_id"), primary_key=True),
    _text("period", primary_key=True),
    _text("metric", primary_key=True),
    sa.Column("value", REAL, nullable=False, server_default=sa.text("0")),
)

asks = sa.Table(
    "asks",
    metadata,
    _text("ask_id", primary_key=True),
    _text("tenant_id", sa.ForeignKey("tenants.tenant_id"), nullable=False),
    _text("video_id", sa.ForeignKey("videos.video_id")),  # null: asked of the workspace (0015)
    _text("run_id", sa.ForeignKey("runs.run_id")),
    _text("question", nullable=False),
    _text("answer_json", nullable=False),
    sa.Column("grounded", sa.Integer(), nullable=False),
    _text("refusal_reason"),
    _text("phrased_by", nullable=False),
    _text("created_at", nullable=False),
    sa.Index("asks_tenant", "tenant_id", "created_at"),
    sa.Index("asks_run", "run_id", "created_at"),
)

rate_events = sa.Table(
    "rate_events",
    metadata,
    _text("bucket", nullable=False),
    sa.Column("at", REAL, nullable=False),
    sa.Index("rate_events_bucket", "bucket", "at"),
)

# One hash chain per tenant (storage.catalog.audit): append-only, ``seq`` counts from 1 (or from the
# retention checkpoint) without gaps; ``hash`` covers ``prev_hash`` and the record's fields.
audit = sa.Table(
    "audit",
    metadata,
    _text("tenant_id", primary_key=True),
    sa.Column("seq", sa.BigInteger(), primary_key=True, autoincrement=False),
    _text("record_id", nullable=False, unique=True),
    _text("key_id", nullable=False),
    _text("action", nullable=False),
    _text("video_id"),
    _text("ids_json", nullable=False, server_default=sa.text("'{}'")),
    sa.Column("outcome", sa.Integer(), nullable=False),
    _text("client"),
    _text("at", nullable=False),
    _text("prev_hash", nullable=False),
    _text("hash", nullable=False),
    sa.Index("audit_video", "tenant_id", "video_id", "seq"),
    sa.Index("audit_at", "at"),
)

# Where retention cut each chain: the last deleted record's seq and hash (storage.catalog.audit).
audit_checkpoints = sa.Table(
    "audit_checkpoints",
    metadata,
    _text("tenant_id", primary_key=True),
    sa.Column("seq", sa.BigInteger(), nullable=False),
    _text("hash", nullable=False),
    _text("at", nullable=False),
)

review_notes = sa.Table(
    "review_notes",
    metadata,
    _text("note_id", primary_key=True),
    _text("tenant_id", sa.ForeignKey("tenants.tenant_id"), nullable=False),
    _text("video_id", sa.ForeignKey("videos.video_id"), nullable=False),
    _text("run_id", sa.ForeignKey("runs.run_id"), nullable=False),
    _text("evidence_id", nullable=False),
    sa.Column("position", sa.Integer(), nullable=False),
    _text("author", nullable=False),
    _text("key_id"),
    _text("text", nullable=False),
    _text("verdict", nullable=False),
    _text("supersedes", sa.ForeignKey("review_notes.note_id")),
    _text("created_at", nullable=False),
    sa.CheckConstraint("verdict IN ('confirmed', 'rejected', 'needs_review')"),
    sa.UniqueConstraint("run_id", "evidence_id", "position", name="review_notes_span_position"),
)

exports = sa.Table(
    "exports",
    metadata,
    _text("export_id", primary_key=True),
    _text("tenant_id", sa.ForeignKey("tenants.tenant_id"), nullable=False),
    _text("video_id", sa.ForeignKey("videos.video_id"), nullable=False),
    _text("run_id", sa.ForeignKey("runs.run_id"), nullable=False),
    _text("key_id"),  # the API key that asked for it
    _text("state", nullable=False),
    _text("params_json", nullable=False, server_default=sa.text("'{}'")),
    _text("flow_run_id"),
    _text("bundle_key"),
    sa.Column("bundle_bytes", BYTES),
    _text("bundle_sha256"),
    _text("signing_key_id"),
    _text("error_code"),
    _text("error_message"),
    _text("created_at", nullable=False),
    _text("finished_at"),
    _text("heartbeat_at"),  # the flow's last sign of life while running
    _text("expired_at"),  # its bundle was deleted with its run's artifacts (retention)
    sa.CheckConstraint("state IN ('queued', 'running', 'succeeded', 'failed')"),
    sa.Index("exports_video", "video_id", "export_id"),
)

# Webhooks (storage.catalog.webhooks.store): a tenant's endpoints, the deliveries written to an
# outbox in the
# transaction of the event they tell of, and every attempt to send one.
webhook_endpoints = sa.Table(
    "webhook_endpoints",
    metadata,
    _text("webhook_id", primary_key=True),
    _text("tenant_id", sa.ForeignKey("tenants.tenant_id"), nullable=False),
    _text("url", nullable=False),
    _text("events_json", nullable=False),
    _text("secret", nullable=False),
    _text("description"),
    _text("created_at", nullable=False),
    _text("disabled_at"),
    sa.Index("webhook_endpoints_tenant", "tenant_id", "webhook_id"),
)

webhook_deliveries = sa.Table(
    "webhook_deliveries",
    metadata,
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
    sa.Index("webhook_deliveries_endpoint", "webhook_id", "delivery_id"),
    sa.Index("webhook_deliveries_due", "state", "next_attempt_at"),
)

webhook_attempts = sa.Table(
    "webhook_attempts",
    metadata,
    _text("delivery_id", sa.ForeignKey("webhook_deliveries.delivery_id"), primary_key=True),
    sa.Column("attempt", sa.Integer(), primary_key=True, autoincrement=False),
    _text("started_at", nullable=False),
    sa.Column("latency_ms", REAL, nullable=False),
    sa.Column("response_status", sa.Integer()),
    _text("error"),
    _text("outcome", nullable=False),
    sa.CheckConstraint("outcome IN ('delivered', 'retrying', 'failed')"),
)

# What each succeeded run measured, for the cost model of estimates and caps (tasks/cost/model.py).
run_costs = sa.Table(
    "run_costs",
    metadata,
    _text("run_id", sa.ForeignKey("runs.run_id"), primary_key=True),
    _text("tenant_id", sa.ForeignKey("tenants.tenant_id"), nullable=False),
    _text("video_id", sa.ForeignKey("videos.video_id"), nullable=False),
    _text("recorded_at", nullable=False),
    _text("detector_mode", nullable=False),
    sa.Column("sample_fps", REAL, nullable=False),
    sa.Column("source_fps", REAL, nullable=False),
    sa.Column("width", sa.Integer(), nullable=False),
    sa.Column("height", sa.Integer(), nullable=False),
    sa.Column("duration_s", REAL, nullable=False),
    sa.Column("processed_s", REAL, nullable=False),
    sa.Column("frames_decoded", sa.Integer(), nullable=False),
    sa.Column("frames_analysed", sa.Integer(), nullable=False),
    sa.Column("frames_skipped", sa.Integer(), nullable=False, server_default=sa.text("0")),
    sa.Column("chunks", sa.Integer(), nullable=False),
    _text("stages_json", nullable=False),
    sa.Column("compute_s", REAL, nullable=False),
    sa.Column("wall_s", REAL, nullable=False),
    sa.Column("start_s", REAL, nullable=False),
    sa.Column("source_bytes", BYTES, nullable=False, server_default=sa.text("0")),
    sa.Index("run_costs_recorded", "recorded_at"),
    sa.Index("run_costs_video", "tenant_id", "video_id", "recorded_at"),
)

# The search index: what each published run holds (storage/artifacts/hits.py summarize), so a
# workspace search prunes the tenant's runs before it reads a file (0015). Each set is stored as
# its members between newlines.
search_runs = sa.Table(
    "search_runs",
    metadata,
    _text("run_id", sa.ForeignKey("runs.run_id"), primary_key=True),
    _text("tenant_id", nullable=False),
    _text("video_id", nullable=False),
    _text("classes", nullable=False),
    _text("event_types", nullable=False),
    _text("zones", nullable=False),
    _text("texts", nullable=False),
    sa.Column("hits", sa.Integer(), nullable=False),
    sa.Column("has_file", sa.Integer(), nullable=False),
    _text("indexed_at", nullable=False),
    sa.Column("last_s", REAL),  # the latest hit end (0016; null: indexed before)
    sa.Column("longest_dwell_s", REAL),  # the longest dwell event (0016; null: none or unknown)
    # JSON: the highest confidence by kind and class of hit (0019; null: indexed before)
    sa.Column("top_confidence", sa.Text()),
    sa.Index("search_runs_tenant", "tenant_id", "video_id"),
)

# When the service's own chores last completed (0017): the retention sweep, for its metric.
service_marks = sa.Table(
    "service_marks",
    metadata,
    _text("name", primary_key=True),
    _text("at", nullable=False),
)
