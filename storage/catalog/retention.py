"""Retention, the catalog side: which published runs are past their plan's retention, and the
one transaction that records a run's artifacts as deleted.

A run is due when ``now >= finished_at + retention_days`` of its tenant's plan. ``cost.json``
states ``expires_at`` as the time its cost stage ran plus the same days, which is a few seconds
before ``finished_at`` (the run is marked succeeded after it publishes), so a run is never
deleted before the expiry it stated, and is deleted at the first sweep after it.

Expiring keeps every record: the run keeps its row (``state`` stays ``succeeded``, ``expired_at``
says when its artifacts went), the video keeps its row, usage history stays. Only what is *held*
changes: the tenant's ``storage_bytes`` goes down by the run's ``artifacts_bytes`` and by the
bundles of its exports (which expire with it: a bundle quotes the run's artifacts), and a
``succeeded`` video whose newest succeeded run this was becomes ``expired`` (a queued, running or
failed video keeps the state of its newest run).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, RowMapping, text
from sqlalchemy import delete as sa_delete
from sqlalchemy import insert as sa_insert

from storage.catalog.database import Catalog
from storage.catalog.tables import service_marks
from storage.catalog.usage import ALL, add
from ves.clock import to_rfc3339

# Runs of one plan, published and not yet expired, finished at or before a cutoff. ``finished_at``
# is always RFC 3339 UTC with milliseconds (``ves.clock``), so text order is time order.
_DUE = text(
    "SELECT runs.* FROM runs JOIN tenants ON tenants.tenant_id = runs.tenant_id"
    " WHERE tenants.plan = :plan AND runs.state = 'succeeded' AND runs.expired_at IS NULL"
    " AND runs.finished_at <= :cutoff"
)


@dataclass(frozen=True)
class DueRun:
    """A published run past its plan's retention."""

    run_id: str
    tenant_id: str
    video_id: str
    finished_at: str
    due_at: str  # finished_at + the plan's retention_days
    artifacts_path: str | None
    artifacts_bytes: int

    @classmethod
    def from_row(cls, row: RowMapping, retention_days: int) -> DueRun:
        finished = datetime.fromisoformat(row["finished_at"])
        return cls(
            run_id=row["run_id"],
            tenant_id=row["tenant_id"],
            video_id=row["video_id"],
            finished_at=row["finished_at"],
            due_at=to_rfc3339(finished + timedelta(days=retention_days)),
            artifacts_path=row["artifacts_path"],
            artifacts_bytes=int(row["artifacts_bytes"] or 0),
        )


@dataclass(frozen=True)
class Expiry:
    """What marking one run expired changed in the catalog."""

    run_id: str
    freed_bytes: int  # taken off the tenant's storage_bytes (its artifacts and exports)
    video_expired: bool  # the video moved from succeeded to expired
    bundle_keys: tuple[str, ...] = ()  # its exports' bundles, to delete after the catalog


@dataclass(frozen=True)
class ExpiredFolder:
    """Where an expired run's artifacts were (the sweep makes sure they are gone)."""

    run_id: str
    tenant_id: str
    video_id: str
    artifacts_path: str


class RetentionStore:
    """Find the runs retention must delete, and record their deletion."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def due(self, now: datetime, retention_days: Callable[[str], int]) -> list[DueRun]:
        """Published runs with ``now >= finished_at + retention_days(plan)``, oldest first.

        Args:
            now: the moment to judge at (timezone-aware).
            retention_days: days of retention of a plan, by the plan's name.
        """
        found: list[DueRun] = []
        with self.catalog.read() as conn:
            plans = list(conn.execute(text("SELECT DISTINCT plan FROM tenants")).scalars())
            for plan in plans:
                days = retention_days(plan)
                cutoff = to_rfc3339(now - timedelta(days=days))
                rows = conn.execute(_DUE, {"plan": plan, "cutoff": cutoff}).mappings()
                found += [DueRun.from_row(r, days) for r in rows]
        return sorted(found, key=lambda run: (run.finished_at, run.run_id))

    def expire(self, run_id: str, now: str) -> Expiry | None:
        """Mark a published run expired, in one transaction with its usage and video state.

        Returns None when the run is not a live published run (another sweep got there first).
        """
        with self.catalog.write() as conn:
            row = (
                conn.execute(
                    text(
                        "UPDATE runs SET expired_at = :now WHERE run_id = :run_id"
                        " AND state = 'succeeded' AND expired_at IS NULL"
                        " RETURNING tenant_id, video_id, artifacts_bytes"
                    ),
                    {"now": now, "run_id": run_id},
                )
                .mappings()
                .first()
            )
            if row is None:
                return None
            bundles = _expire_exports(conn, run_id, now)
            freed = int(row["artifacts_bytes"] or 0) + sum(size for _, size in bundles)
            add(conn, row["tenant_id"], ALL, "storage_bytes", -float(freed))
            video_expired = _expire_video(conn, row["video_id"], run_id, now)
        return Expiry(run_id, freed, video_expired, tuple(key for key, _ in bundles))

    def expired_folders(self) -> list[ExpiredFolder]:
        """Every expired run's former artifacts folder (normally already gone from disk)."""
        with self.catalog.read() as conn:
            rows = (
                conn.execute(
                    text(
                        "SELECT run_id, tenant_id, video_id, artifacts_path FROM runs"
                        " WHERE expired_at IS NOT NULL AND artifacts_path IS NOT NULL"
                        " ORDER BY run_id"
                    )
                )
                .mappings()
                .all()
            )
        return [
            ExpiredFolder(r["run_id"], r["tenant_id"], r["video_id"], r["artifacts_path"])
            for r in rows
        ]


def expired_bundles(catalog: Catalog) -> list[str]:
    """The keys of every expired export's bundle (normally already gone from the store)."""
    with catalog.read() as conn:
        keys = conn.execute(
            text(
                "SELECT bundle_key FROM exports WHERE expired_at IS NOT NULL"
                " AND bundle_key IS NOT NULL ORDER BY export_id"
            )
        )
        return [str(key) for key in keys.scalars()]


def _expire_exports(conn: Connection, run_id: str, now: str) -> list[tuple[str, int]]:
    """Mark the run's kept bundles expired; their keys and sizes."""
    rows = conn.execute(
        text(
            "UPDATE exports SET expired_at = :now WHERE run_id = :run_id AND state = 'succeeded'"
            " AND expired_at IS NULL AND bundle_key IS NOT NULL"
            " RETURNING bundle_key, bundle_bytes"
        ),
        {"now": now, "run_id": run_id},
    ).all()
    return [(str(key), int(size or 0)) for key, size in rows]


def _expire_video(conn: Connection, video_id: str, run_id: str, now: str) -> bool:
    """``succeeded`` -> ``expired`` if ``run_id`` is the video's newest succeeded run."""
    newest = conn.execute(
        text(
            "SELECT run_id FROM runs WHERE video_id = :video_id AND state = 'succeeded'"
            " ORDER BY run_id DESC LIMIT 1"
        ),
        {"video_id": video_id},
    ).scalar()
    if newest != run_id:
        return False
    updated = conn.execute(
        text(
            "UPDATE videos SET state = 'expired', updated_at = :now"
            " WHERE video_id = :video_id AND state = 'succeeded'"
        ),
        {"now": now, "video_id": video_id},
    ).rowcount
    return bool(updated)


def mark_swept(catalog: Catalog, at: str) -> None:
    """Note that a retention sweep completed at ``at`` (what ``GET /metrics`` reports)."""
    with catalog.write() as conn:
        conn.execute(sa_delete(service_marks).where(service_marks.c.name == "retention_sweep"))
        conn.execute(sa_insert(service_marks).values(name="retention_sweep", at=at))
