"""Runs: one execution of a video, from ``queued`` to ``succeeded`` or ``failed``.

A run's state and its video's state change together, in one transaction. Transitions are guarded
by the current state (``UPDATE ... WHERE state IN (...)``), so a run that the reaper has already
failed cannot be revived by a late flow, and a run can be finished only once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from storage.catalog import Catalog
from storage.records import Run
from storage.usage import ALL, active_runs, add, month_of, refuse, used
from ves.clock import now_rfc3339, to_rfc3339, utc_now
from ves.errors import Conflict, NotFound
from ves.ids import new_id
from ves.plans import PlanLimits

ACTIVE_STATES = ("queued", "running")


@dataclass(frozen=True)
class RunFailure:
    """Why a run failed: a stable ``code`` and a message a user can act on."""

    code: str
    message: str


class RunStore:
    """Create runs, move them through their states, and find the ones that stopped."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def create(
        self,
        tenant_id: str,
        video_id: str,
        params: dict[str, Any],
        limits: PlanLimits | None = None,
    ) -> Run:
        """A new ``queued`` run of the tenant's video, counted as an execution of the month.

        With ``limits``, the plan is checked in the same transaction first: runs queued or
        running at once, executions and processed seconds this month, bytes of artifacts kept.

        Raises:
            NotFound: no such video for this tenant.
            Conflict: the video is queued or running already, or still awaits its upload.
            PlanLimitExceeded: a limit of the plan would be passed (which one, in the error).
        """
        run_id, now = new_id("run"), now_rfc3339()
        with self.catalog.write() as conn:
            row = conn.execute(
                "SELECT state FROM videos WHERE video_id = ? AND tenant_id = ?",
                (video_id, tenant_id),
            ).fetchone()
            if row is None:
                raise NotFound(f"no video {video_id}")
            _check_executable(video_id, row["state"])
            _check_plan(conn, tenant_id, now, limits)
            add(conn, tenant_id, month_of(now), "executions", 1.0)
            conn.execute(
                "INSERT INTO runs (run_id, video_id, tenant_id, state, stage, progress,"
                " params_json, created_at, heartbeat_at)"
                " VALUES (?, ?, ?, 'queued', NULL, 0, ?, ?, ?)",
                (run_id, video_id, tenant_id, json.dumps(params), now, now),
            )
            _set_video_state(conn, video_id, "queued", now)
        return self.get(run_id)

    def get(self, run_id: str) -> Run:
        """The run with this id; ``NotFound`` otherwise."""
        with self.catalog.read() as conn:
            row = conn.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise NotFound(f"no run {run_id}")
        return Run.from_row(row)

    def latest_succeeded(self, tenant_id: str, video_id: str) -> Run | None:
        """The newest succeeded run of the tenant's video whose artifacts are still kept (runs
        retention has expired are skipped): the run whose artifacts are served."""
        with self.catalog.read() as conn:
            row = conn.execute(
                "SELECT * FROM runs WHERE video_id = ? AND tenant_id = ? AND state = 'succeeded'"
                " AND expired_at IS NULL ORDER BY run_id DESC LIMIT 1",
                (video_id, tenant_id),
            ).fetchone()
        return Run.from_row(row) if row else None

    def set_flow_run(self, run_id: str, flow_run_id: str) -> None:
        """Remember the orchestrator's id for the run (to ask it how the run is doing)."""
        with self.catalog.write() as conn:
            conn.execute("UPDATE runs SET flow_run_id = ? WHERE run_id = ?", (flow_run_id, run_id))

    def start(self, run_id: str) -> bool:
        """``queued`` -> ``running``; False when the run is no longer queued (e.g. failed)."""
        now = now_rfc3339()
        with self.catalog.write() as conn:
            updated = conn.execute(
                "UPDATE runs SET state = 'running', started_at = ?, heartbeat_at = ?"
                " WHERE run_id = ? AND state = 'queued'",
                (now, now, run_id),
            ).rowcount
            if updated:
                _set_video_state(conn, _video_of(conn, run_id), "running", now)
        return bool(updated)

    def progress(self, run_id: str, stage: str, progress: float) -> None:
        """Record the stage and overall progress (0..1) of a running run; also a heartbeat."""
        with self.catalog.write() as conn:
            conn.execute(
                "UPDATE runs SET stage = ?, progress = ?, heartbeat_at = ?"
                " WHERE run_id = ? AND state = 'running'",
                (stage, min(max(progress, 0.0), 1.0), now_rfc3339(), run_id),
            )

    def beat(self, run_id: str) -> None:
        """Say the run is alive (the flow beats while a long stage works)."""
        with self.catalog.write() as conn:
            conn.execute(
                "UPDATE runs SET heartbeat_at = ? WHERE run_id = ? AND state = 'running'",
                (now_rfc3339(), run_id),
            )

    def succeed(
        self, run_id: str, artifacts_path: str, processed_s: float = 0.0, artifacts_bytes: int = 0
    ) -> bool:
        """``running`` -> ``succeeded`` with the published artifacts; False if not running.

        The processed seconds (this month) and the bytes kept are counted in the same
        transaction.
        """
        return self._finish(
            run_id, "succeeded", None, artifacts_path, (processed_s, artifacts_bytes)
        )

    def fail(self, run_id: str, failure: RunFailure, bill_processed: bool = False) -> bool:
        """An active run -> ``failed`` with its reason; False if it had already ended.

        With ``bill_processed`` (the plan's ``bill_failed_runs``), the seconds it had decoded
        (``processed``) count in the month's usage, in the same transaction.
        """
        return self._finish(run_id, "failed", failure, None, None, bill_processed)

    def processed(self, run_id: str, seconds: float) -> None:
        """Record the seconds of video the run decoded (the sample stage, once it is done)."""
        with self.catalog.write() as conn:
            conn.execute("UPDATE runs SET processed_s = ? WHERE run_id = ?", (seconds, run_id))

    def active(self) -> list[Run]:
        """Every queued or running run, oldest first."""
        with self.catalog.read() as conn:
            rows = conn.execute(
                "SELECT * FROM runs WHERE state IN ('queued', 'running') ORDER BY run_id"
            ).fetchall()
        return [Run.from_row(r) for r in rows]

    def fail_silent(self, timeout_s: float) -> list[str]:
        """Fail running runs whose flow has not beaten for ``timeout_s``; return their ids."""
        cutoff = to_rfc3339(utc_now() - timedelta(seconds=timeout_s))
        with self.catalog.read() as conn:
            rows = conn.execute(
                "SELECT run_id FROM runs WHERE state = 'running' AND heartbeat_at < ?", (cutoff,)
            ).fetchall()
        failure = RunFailure(
            "processing_stopped",
            f"the processing stopped without finishing (no sign of life for {timeout_s:.0f} s:"
            " the worker or the service was stopped or killed); execute the video again",
        )
        return [r["run_id"] for r in rows if self.fail(r["run_id"], failure)]

    def _finish(
        self,
        run_id: str,
        state: str,
        failure: RunFailure | None,
        artifacts_path: str | None,
        counted: tuple[float, int] | None = None,
        bill_processed: bool = False,
    ) -> bool:
        now = now_rfc3339()
        allowed = ("running",) if state == "succeeded" else ACTIVE_STATES
        marks = ",".join("?" * len(allowed))
        with self.catalog.write() as conn:
            updated = conn.execute(
                f"UPDATE runs SET state = ?, finished_at = ?, error_code = ?, error_message = ?,"  # noqa: S608
                f" artifacts_path = ?,"
                f" progress = CASE WHEN ? = 'succeeded' THEN 1 ELSE progress END"
                f" WHERE run_id = ? AND state IN ({marks})",
                (
                    state,
                    now,
                    failure and failure.code,
                    failure and failure.message,
                    artifacts_path,
                    state,
                    run_id,
                    *allowed,
                ),
            ).rowcount
            if updated:
                _set_video_state(conn, _video_of(conn, run_id), state, now)
            if updated and counted is not None:
                _count_run(conn, run_id, now, *counted)
            if updated and bill_processed:
                _count_failed_run(conn, run_id, now)
        return bool(updated)


def _check_plan(conn: Any, tenant_id: str, now: str, limits: PlanLimits | None) -> None:
    """Raise ``PlanLimitExceeded`` if one more run would pass a limit of the plan."""
    if limits is None:
        return
    month = month_of(now)
    checks = (
        ("concurrent_runs", limits.concurrent_runs, active_runs(conn, tenant_id)),
        (
            "executions_per_month",
            limits.executions_per_month,
            used(conn, tenant_id, month, "executions"),
        ),
        (
            "processed_s_per_month",
            limits.processed_s_per_month,
            used(conn, tenant_id, month, "processed_s"),
        ),
        ("storage_bytes", limits.storage_bytes, used(conn, tenant_id, ALL, "storage_bytes")),
    )
    for name, value, now_used in checks:
        if now_used >= value:
            raise refuse(name, value, now_used)


def _count_run(conn: Any, run_id: str, now: str, processed_s: float, artifacts_bytes: int) -> None:
    tenant_id = conn.execute("SELECT tenant_id FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0]
    add(conn, tenant_id, month_of(now), "processed_s", processed_s)
    add(conn, tenant_id, ALL, "storage_bytes", float(artifacts_bytes))
    conn.execute("UPDATE runs SET artifacts_bytes = ? WHERE run_id = ?", (artifacts_bytes, run_id))


def _count_failed_run(conn: Any, run_id: str, now: str) -> None:
    row = conn.execute(
        "SELECT tenant_id, processed_s FROM runs WHERE run_id = ?", (run_id,)
    ).fetchone()
    add(conn, row["tenant_id"], month_of(now), "processed_s", float(row["processed_s"] or 0.0))


def _check_executable(video_id: str, state: str) -> None:
    if state in ACTIVE_STATES:
        raise Conflict(f"video {video_id} is {state}; wait for its run to end")
    if state == "awaiting_upload":
        raise Conflict(f"video {video_id} is awaiting its upload; PUT the bytes first")


def _video_of(conn: Any, run_id: str) -> str:
    row = conn.execute("SELECT video_id FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    return str(row["video_id"])


def _set_video_state(conn: Any, video_id: str, state: str, now: str) -> None:
    conn.execute(
        "UPDATE videos SET state = ?, updated_at = ? WHERE video_id = ?", (state, now, video_id)
    )
