"""Video records: registration, listing (newest first, by cursor), and upload completion.

Every read and write is scoped by tenant: a video of another tenant is simply not found.
Registration checks the plan's ``videos`` and counts the video under
``Catalog.write(lock=tenant_id)`` (one at a time per tenant, on either engine).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, bindparam, select, text

from storage.catalog.database import Catalog
from storage.catalog.records import Run, SourceType, Video, VideoState
from storage.catalog.tables import videos as videos_table
from storage.catalog.usage import ALL, consume
from ves.clock import now_rfc3339
from ves.errors import Conflict, NotFound
from ves.ids import new_id
from ves.plans import PlanLimits


@dataclass(frozen=True)
class NewVideo:
    """What registration knows about a video before it is stored."""

    tenant_id: str
    title: str
    source_type: SourceType
    source_url: str | None
    upload: dict[str, Any] | None = None
    recorded_at: str | None = None  # RFC 3339: when the video's time 0 was recorded


@dataclass(frozen=True)
class VideoPage:
    """One page of a listing and the id to continue after, if more remain."""

    videos: list[Video]
    next_after: str | None


class VideoStore:
    """The tenant-scoped video records of the catalog."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def create(self, new: NewVideo, limits: PlanLimits | None = None) -> Video:
        """Store a new video: ``awaiting_upload`` for uploads, ``registered`` otherwise.

        It is counted in the tenant's videos in the same transaction; with ``limits`` the plan's
        ``videos`` limit is checked there first (``PlanLimitExceeded``).
        """
        state: VideoState = "awaiting_upload" if new.source_type == "upload" else "registered"
        now = now_rfc3339()
        video_id = new_id("vid")
        upload_json = json.dumps(new.upload) if new.upload is not None else None
        with self.catalog.write(lock=new.tenant_id) as conn:
            cap = limits.videos if limits is not None else float("inf")
            consume(conn, new.tenant_id, (ALL,), "videos", ("videos", cap, ALL))
            conn.execute(
                videos_table.insert().values(
                    video_id=video_id,
                    tenant_id=new.tenant_id,
                    title=new.title,
                    source_type=new.source_type,
                    source_url=new.source_url,
                    state=state,
                    upload_json=upload_json,
                    recorded_at=new.recorded_at,
                    created_at=now,
                    updated_at=now,
                )
            )
        return self.get(new.tenant_id, video_id)

    def get(self, tenant_id: str, video_id: str) -> Video:
        """The tenant's video; ``NotFound`` for unknown ids and other tenants' videos alike."""
        with self.catalog.read() as conn:
            row = (
                conn.execute(
                    text("SELECT * FROM videos WHERE video_id = :video_id AND tenant_id = :tenant"),
                    {"video_id": video_id, "tenant": tenant_id},
                )
                .mappings()
                .first()
            )
            if row is None:
                raise NotFound(f"no video {video_id}")
            runs = _latest_runs(conn, [video_id])
        return Video.from_row(row, runs.get(video_id))

    def list(
        self, tenant_id: str, *, state: str | None, limit: int, after: str | None
    ) -> VideoPage:
        """The tenant's videos, newest first, starting after the video id ``after``."""
        table = videos_table
        query = select(table).where(table.c.tenant_id == tenant_id)
        if state is not None:
            query = query.where(table.c.state == state)
        if after is not None:
            query = query.where(table.c.video_id < after)
        query = query.order_by(table.c.video_id.desc()).limit(limit + 1)
        with self.catalog.read() as conn:
            rows = conn.execute(query).mappings().all()
            runs = _latest_runs(conn, [r["video_id"] for r in rows[:limit]])
        videos = [Video.from_row(r, runs.get(r["video_id"])) for r in rows[:limit]]
        next_after = videos[-1].video_id if len(rows) > limit else None
        return VideoPage(videos, next_after)

    def complete_upload(
        self, tenant_id: str, video_id: str, *, path: str, sha256: str, size: int
    ) -> Video:
        """Record the verified bytes of an upload and move the video to ``registered``.

        Raises:
            Conflict: the video is not awaiting its upload (e.g. another upload finished first).
        """
        with self.catalog.write() as conn:
            updated = conn.execute(
                text(
                    "UPDATE videos SET state = 'registered', source_path = :path,"
                    " source_sha256 = :sha256, source_bytes = :size, updated_at = :now"
                    " WHERE video_id = :video_id AND tenant_id = :tenant_id"
                    " AND state = 'awaiting_upload'"
                ),
                {
                    "path": path,
                    "sha256": sha256,
                    "size": int(size),
                    "now": now_rfc3339(),
                    "video_id": video_id,
                    "tenant_id": tenant_id,
                },
            ).rowcount
        if updated != 1:
            raise Conflict(f"video {video_id} is no longer awaiting its upload")
        return self.get(tenant_id, video_id)

    def note_recorded_at(self, tenant_id: str, video_id: str, at: str) -> bool:
        """Record when the video's time 0 was recorded (RFC 3339), unless it is known already:
        a client's own ``recorded_at`` always wins over what the source says (an HLS playlist's
        program date-time). True when it was recorded."""
        with self.catalog.write() as conn:
            updated = conn.execute(
                text(
                    "UPDATE videos SET recorded_at = :at, updated_at = :now"
                    " WHERE video_id = :video_id AND tenant_id = :tenant_id"
                    " AND recorded_at IS NULL"
                ),
                {"at": at, "now": now_rfc3339(), "video_id": video_id, "tenant_id": tenant_id},
            ).rowcount
        return bool(updated == 1)


def _latest_runs(conn: Connection, video_ids: list[str]) -> dict[str, Run]:
    """The newest run of each of ``video_ids`` (run ids sort by creation time)."""
    if not video_ids:
        return {}
    # A queued run's place in its tenant's line: 1 + the tenant's runs queued before it.
    query = text(
        "SELECT r.*, CASE WHEN r.state = 'queued' THEN (SELECT COUNT(*) FROM runs q"
        " WHERE q.tenant_id = r.tenant_id AND q.state = 'queued' AND q.run_id <= r.run_id)"
        " END AS queue_position"
        " FROM runs r JOIN (SELECT video_id, MAX(run_id) AS run_id FROM runs"
        " WHERE video_id IN :video_ids GROUP BY video_id) latest ON latest.run_id = r.run_id"
    ).bindparams(bindparam("video_ids", expanding=True))
    rows = conn.execute(query, {"video_ids": video_ids}).mappings()
    return {row["video_id"]: Run.from_row(row) for row in rows}


def set_video_state(conn: Connection, video_id: str, state: str, now: str) -> None:
    """Set a video's state inside the caller's transaction (a run's state and its video's
    change together)."""
    conn.execute(
        text("UPDATE videos SET state = :state, updated_at = :now WHERE video_id = :video_id"),
        {"state": state, "now": now, "video_id": video_id},
    )
