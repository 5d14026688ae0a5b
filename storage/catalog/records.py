"""Catalog records as immutable values, built from rows in one place each."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import RowMapping

SourceType = Literal["url", "hls", "upload"]
VideoState = Literal[
    "awaiting_upload", "registered", "queued", "running", "succeeded", "failed", "expired"
]
VIDEO_STATES: tuple[str, ...] = (
    "awaiting_upload",
    "registered",
    "queued",
    "running",
    "succeeded",
    "failed",
    "expired",
)


@dataclass(frozen=True)
class Tenant:
    """A customer account; every other record belongs to one."""

    tenant_id: str
    name: str
    plan: str
    created_at: str
    key_id: str | None = None  # the API key a request came with (``TenantStore.authenticate``)

    @classmethod
    def from_row(cls, row: RowMapping) -> Tenant:
        return cls(row["tenant_id"], row["name"], row["plan"], row["created_at"])


@dataclass(frozen=True)
class ApiKey:
    """An API key's record; the key itself is never stored, only its hash."""

    key_id: str
    tenant_id: str
    created_at: str
    revoked_at: str | None

    @classmethod
    def from_row(cls, row: RowMapping) -> ApiKey:
        return cls(row["key_id"], row["tenant_id"], row["created_at"], row["revoked_at"])


@dataclass(frozen=True)
class Run:
    """One execution of a video."""

    run_id: str
    video_id: str
    tenant_id: str
    state: str
    stage: str | None
    progress: float
    params: dict[str, Any]
    error_code: str | None
    error_message: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None
    flow_run_id: str | None = None
    heartbeat_at: str | None = None
    artifacts_path: str | None = None
    artifacts_bytes: int | None = None  # bytes the published run holds
    expired_at: str | None = None  # when retention deleted its artifacts
    queue_position: int | None = None  # 1 = next of its tenant's queued runs (when read so)
    follows_run_id: str | None = None  # live HLS: the previous window's run of the session
    stop_requested_at: str | None = None  # live HLS: when a stop was asked

    @classmethod
    def from_row(cls, row: RowMapping) -> Run:
        return cls(
            run_id=row["run_id"],
            video_id=row["video_id"],
            tenant_id=row["tenant_id"],
            state=row["state"],
            stage=row["stage"],
            progress=row["progress"],
            params=json.loads(row["params_json"]),
            error_code=row["error_code"],
            error_message=row["error_message"],
            created_at=row["created_at"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            flow_run_id=row["flow_run_id"],
            heartbeat_at=row["heartbeat_at"],
            artifacts_path=row["artifacts_path"],
            artifacts_bytes=row["artifacts_bytes"],
            expired_at=row["expired_at"],
            queue_position=row.get("queue_position"),
            follows_run_id=row.get("follows_run_id"),
            stop_requested_at=row.get("stop_requested_at"),
        )


@dataclass(frozen=True)
class Video:
    """A registered video source and where it stands."""

    video_id: str
    tenant_id: str
    title: str
    source_type: SourceType
    source_url: str | None
    state: VideoState
    upload: dict[str, Any] | None
    source_sha256: str | None
    source_path: str | None
    source_bytes: int | None
    created_at: str
    updated_at: str
    latest_run: Run | None = None
    recorded_at: str | None = None  # when its time 0 was recorded (RFC 3339), if known

    @classmethod
    def from_row(cls, row: RowMapping, latest_run: Run | None = None) -> Video:
        upload = json.loads(row["upload_json"]) if row["upload_json"] else None
        return cls(
            video_id=row["video_id"],
            tenant_id=row["tenant_id"],
            title=row["title"],
            source_type=row["source_type"],
            source_url=row["source_url"],
            state=row["state"],
            upload=upload,
            source_sha256=row["source_sha256"],
            source_path=row["source_path"],
            source_bytes=row["source_bytes"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            latest_run=latest_run,
            recorded_at=row.get("recorded_at"),
        )
