"""Video records: registration, listing (newest first, by cursor), and upload completion.

Every read and write is scoped by tenant: a video of another tenant is simply not found.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from storage.catalog import Catalog
from storage.records import Run, SourceType, Video, VideoState
from storage.usage import ALL, consume
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
        with self.catalog.write() as conn:
            cap = limits.videos if limits is not None else float("inf")
            consume(conn, new.tenant_id, (ALL,), "videos", ("videos", cap, ALL))
            conn.execute(
                "INSERT INTO videos (video_id, tenant_id, title, source_type, source_url, state,"
                " upload_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    video_id,
                    new.tenant_id,
                    new.title,
                    new.source_type,
                    new.source_url,
                    state,
                    upload_json,
                    now,
                    now,
                ),
            )
        return self.get(new.tenant_id, video_id)

    def get(self, tenant_id: str, video_id: str) -> Video:
        """The tenant's video; ``NotFound`` for unknown ids and other tenants' videos alike."""
        with self.catalog.read() as conn:
            row = conn.execute(
                "SELECT * FROM videos WHERE video_id = ? AND tenant_id = ?", (video_id, tenant_id)
            ).fetchone()
            if row is None:
                raise NotFound(f"no video {video_id}")
            runs = _latest_runs(conn, [video_id])
        return Video.from_row(row, runs.get(video_id))

    def list(
        self, tenant_id: str, *, state: str | None, limit: int, after: str | None
    ) -> VideoPage:
        """The tenant's videos, newest first, starting after the video id ``after``."""
        sql = "SELECT * FROM videos WHERE tenant_id = ?"
        args: list[Any] = [tenant_id]
        if state is not None:
            sql += " AND state = ?"
            args.append(state)
        if after is not None:
            sql += " AND video_id < ?"
            args.append(after)
        sql += " ORDER BY video_id DESC LIMIT ?"
        args.append(limit + 1)
        with self.catalog.read() as conn:
            rows = conn.execute(sql, args).fetchall()
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
                "UPDATE videos SET state = 'registered', source_path = ?, source_sha256 = ?,"
                " source_bytes = ?, updated_at = ? WHERE video_id = ? AND tenant_id = ?"
                " AND state = 'awaiting_upload'",
                (path, sha256, size, now_rfc3339(), video_id, tenant_id),
            ).rowcount
        if updated != 1:
            raise Conflict(f"video {video_id} is no longer awaiting its upload")
        return self.get(tenant_id, video_id)


def _latest_runs(conn: sqlite3.Connection, video_ids: list[str]) -> dict[str, Run]:
    """The newest run of each of ``video_ids`` (run ids sort by creation time)."""
    if not video_ids:
        return {}
    marks = ",".join("?" * len(video_ids))
    rows = conn.execute(
        f"SELECT r.* FROM runs r JOIN (SELECT video_id, MAX(run_id) AS run_id FROM runs"  # noqa: S608
        f" WHERE video_id IN ({marks}) GROUP BY video_id) latest ON latest.run_id = r.run_id",
        video_ids,
    ).fetchall()
    return {row["video_id"]: Run.from_row(row) for row in rows}
