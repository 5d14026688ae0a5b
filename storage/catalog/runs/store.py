"""Runs: one execution of a video, from ``queued`` to ``succeeded`` or ``failed``.

A run's state and its video's state change together, in one transaction. Transitions are guarded
by the current state (``UPDATE ... WHERE state IN (...)``), so a run that the reaper has already
failed cannot be revived by a late flow, and a run can be finished only once (on PostgreSQL too:
the UPDATE re-checks its WHERE on the row it locked). Creating a run checks the tenant's plan and
counts the execution under ``Catalog.write(lock=tenant_id)``, so parallel executes at a limit
queue one after the other on either engine.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

from sqlalchemy import Connection, select, text, update

from storage.catalog.database import Catalog, first_row
from storage.catalog.records import Run
from storage.catalog.runs.admission import check_line, check_plan, tell_limits_reached
from storage.catalog.tables import runs as runs_table
from storage.catalog.usage import ALL, add, month_of, running_runs
from storage.catalog.videos import set_video_state
from storage.catalog.webhooks.events import emit_limit_reached, emit_run_ended
from ves.clock import now_rfc3339, to_rfc3339, utc_now
from ves.errors import Conflict, NotFound, PlanLimitExceeded
from ves.ids import new_id
from ves.plans import PlanLimits

ACTIVE_STATES = ("queued", "running")


@dataclass(frozen=True)
class RunFailure:
    """Why a run failed: a stable ``code`` and a message a user can act on."""

    code: str
    message: str


StartOutcome = Literal["started", "gone", "busy"]
# The stage of a queued run whose flow is waiting for one of the tenant's slots (it beats too).
WAITING_STAGE = "waiting_for_slot"


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
        max_queued: int | None = None,
    ) -> Run:
        """A new ``queued`` run of the tenant's video, counted as an execution of the month.

        With ``limits``, the plan is checked in the same transaction first: executions and
        processed seconds this month, bytes of artifacts kept. Runs beyond the plan's
        ``concurrent_runs`` are accepted and wait in line (the orchestrator's tenant queue bounds
        how many execute); ``max_queued`` bounds how many of the tenant's runs may wait.

        Raises:
            NotFound: no such video for this tenant.
            Conflict: the video is queued or running already, or still awaits its upload.
            PlanLimitExceeded: a limit of the plan would be passed (which one, in the error).
            RateLimited: ``max_queued`` of the tenant's runs wait already (retry later).
        """
        run_id, now = new_id("run"), now_rfc3339()
        try:
            self._insert(run_id, now, tenant_id, video_id, params, limits, max_queued)
        except PlanLimitExceeded as exc:
            with self.catalog.write(lock=tenant_id) as conn:  # the refusal rolled back: tell it
                emit_limit_reached(conn, tenant_id, exc.limit, exc.value, exc.used, month_of(now))
            raise
        return self.get(run_id)

    def _insert(
        self,
        run_id: str,
        now: str,
        tenant_id: str,
        video_id: str,
        params: dict[str, Any],
        limits: PlanLimits | None,
        max_queued: int | None,
    ) -> None:
        with self.catalog.write(lock=tenant_id) as conn:
            video_state = conn.execute(
                text(
                    "SELECT state FROM videos WHERE video_id = :video_id AND tenant_id = :tenant_id"
                ),
                {"video_id": video_id, "tenant_id": tenant_id},
            ).scalar()
            if video_state is None:
                raise NotFound(f"no video {video_id}")
            _check_executable(video_id, video_state)
            check_plan(conn, tenant_id, now, limits)
            check_line(conn, tenant_id, max_queued, limits)
            add(conn, tenant_id, month_of(now), "executions", 1.0)
            _insert_queued(conn, run_id, video_id, tenant_id, params, now)
            set_video_state(conn, video_id, "queued", now)

    def get(self, run_id: str) -> Run:
        """The run with this id; ``NotFound`` otherwise."""
        with self.catalog.read() as conn:
            row = first_row(conn, "SELECT * FROM runs WHERE run_id = :run_id", run_id=run_id)
        if row is None:
            raise NotFound(f"no run {run_id}")
        return Run.from_row(row)

    def latest_succeeded(self, tenant_id: str, video_id: str) -> Run | None:
        """The newest succeeded run of the tenant's video whose artifacts are still kept (runs
        retention has expired are skipped): the run whose artifacts are served."""
        with self.catalog.read() as conn:
            row = first_row(
                conn,
                "SELECT * FROM runs WHERE video_id = :video_id AND tenant_id = :tenant_id"
                " AND state = 'succeeded' AND expired_at IS NULL ORDER BY run_id DESC LIMIT 1",
                video_id=video_id,
                tenant_id=tenant_id,
            )
        return Run.from_row(row) if row else None

    def set_flow_run(self, run_id: str, flow_run_id: str) -> None:
        """Remember the orchestrator's id for the run (to ask it how the run is doing)."""
        with self.catalog.write() as conn:
            conn.execute(
                text("UPDATE runs SET flow_run_id = :flow_run_id WHERE run_id = :run_id"),
                {"flow_run_id": flow_run_id, "run_id": run_id},
            )

    def start(self, run_id: str) -> bool:
        """``queued`` -> ``running``; False when the run is no longer queued (e.g. failed)."""
        return self.try_start(run_id) == "started"

    def try_start(self, run_id: str, at_most: int | None = None) -> StartOutcome:
        """``queued`` -> ``running`` unless ``at_most`` of the tenant's runs are running already.

        The orchestrator's tenant queue keeps a tenant's runs to its plan's ``concurrent_runs``
        but not exactly: two workers polling at the same instant may each be handed a run while
        one slot is free (Prefect's queue limit is a count at poll time, not a lock). This is
        the exact gate, checked and taken in one transaction under the tenant's lock.

        Returns:
            ``started``; ``gone`` when the run is no longer queued (failed, or started by
            another flow); ``busy`` when ``at_most`` runs of the tenant are running (try again).
        """
        now = now_rfc3339()
        with self.catalog.read() as conn:
            tenant_id = conn.execute(
                text("SELECT tenant_id FROM runs WHERE run_id = :run_id"), {"run_id": run_id}
            ).scalar()
        if tenant_id is None:
            return "gone"
        with self.catalog.write(lock=tenant_id) as conn:
            if at_most is not None and running_runs(conn, tenant_id) >= at_most:
                waiting = conn.execute(
                    text(
                        "UPDATE runs SET stage = :stage, heartbeat_at = :now"
                        " WHERE run_id = :run_id AND state = 'queued'"
                    ),
                    {"stage": WAITING_STAGE, "now": now, "run_id": run_id},
                ).rowcount
                return "busy" if waiting else "gone"
            updated = conn.execute(
                text(
                    "UPDATE runs SET state = 'running', stage = NULL, started_at = :now,"
                    " heartbeat_at = :now WHERE run_id = :run_id AND state = 'queued'"
                ),
                {"now": now, "run_id": run_id},
            ).rowcount
            if updated:
                set_video_state(conn, _video_of(conn, run_id), "running", now)
        return "started" if updated else "gone"

    def progress(self, run_id: str, stage: str, progress: float) -> None:
        """Record the stage and overall progress (0..1) of a running run; also a heartbeat."""
        with self.catalog.write() as conn:
            conn.execute(
                text(
                    "UPDATE runs SET stage = :stage, progress = :progress, heartbeat_at = :now"
                    " WHERE run_id = :run_id AND state = 'running'"
                ),
                {
                    "stage": stage,
                    "progress": min(max(float(progress), 0.0), 1.0),
                    "now": now_rfc3339(),
                    "run_id": run_id,
                },
            )

    def beat(self, run_id: str) -> None:
        """Say the run is alive (the flow beats while a long stage works)."""
        with self.catalog.write() as conn:
            conn.execute(
                text(
                    "UPDATE runs SET heartbeat_at = :now WHERE run_id = :run_id"
                    " AND state = 'running'"
                ),
                {"now": now_rfc3339(), "run_id": run_id},
            )

    def succeed(
        self,
        run_id: str,
        artifacts_path: str,
        processed_s: float = 0.0,
        artifacts_bytes: int = 0,
        limits: PlanLimits | None = None,
    ) -> bool:
        """``running`` -> ``succeeded`` with the published artifacts; False if not running.

        The processed seconds (this month) and the bytes kept are counted in the same
        transaction; with the tenant's ``limits``, a limit the run used up is told to webhooks
        (``usage.limit_reached``, once per limit and month) in it too.
        """
        counted = (processed_s, artifacts_bytes)
        return self._finish(run_id, "succeeded", None, artifacts_path, counted, limits=limits)

    def fail(self, run_id: str, failure: RunFailure, bill_processed: bool = False) -> bool:
        """An active run -> ``failed`` with its reason; False if it had already ended.

        With ``bill_processed`` (the plan's ``bill_failed_runs``), the seconds it had decoded
        (``processed``) count in the month's usage, in the same transaction.
        """
        return self._finish(run_id, "failed", failure, None, None, bill_processed)

    def processed(self, run_id: str, seconds: float) -> None:
        """Record the seconds of video the run decoded (the sample stage, once it is done)."""
        with self.catalog.write() as conn:
            conn.execute(
                text("UPDATE runs SET processed_s = :seconds WHERE run_id = :run_id"),
                {"seconds": float(seconds), "run_id": run_id},
            )

    def active(self) -> list[Run]:
        """Every queued or running run, oldest first."""
        with self.catalog.read() as conn:
            rows = (
                conn.execute(
                    text("SELECT * FROM runs WHERE state IN ('queued', 'running') ORDER BY run_id")
                )
                .mappings()
                .all()
            )
        return [Run.from_row(r) for r in rows]

    def ended_with_flow_runs(self, flow_run_ids: Sequence[str], finished_before: str) -> list[Run]:
        """The ended runs among those of ``flow_run_ids`` that finished before the time given.

        A flow run that still has an active run (a live session's next window, which shares its
        flow run) is left out: it is still working.
        """
        if not flow_run_ids:
            return []
        busy = select(runs_table.c.flow_run_id).where(
            runs_table.c.state.in_(ACTIVE_STATES), runs_table.c.flow_run_id.is_not(None)
        )
        with self.catalog.read() as conn:
            rows = (
                conn.execute(
                    select(runs_table).where(
                        runs_table.c.flow_run_id.in_(list(flow_run_ids)),
                        runs_table.c.state.in_(("succeeded", "failed")),
                        runs_table.c.finished_at < finished_before,
                        runs_table.c.flow_run_id.not_in(busy),
                    )
                )
                .mappings()
                .all()
            )
        newest = {r["flow_run_id"]: r for r in sorted(rows, key=lambda r: r["run_id"])}
        return [Run.from_row(r) for r in newest.values()]

    def fail_silent(self, timeout_s: float) -> list[str]:
        """Fail runs whose flow has not beaten for ``timeout_s``; return their ids.

        Running runs, and queued runs whose flow was waiting for a slot (``WAITING_STAGE``).
        """
        cutoff = to_rfc3339(utc_now() - timedelta(seconds=timeout_s))
        with self.catalog.read() as conn:
            silent = (
                conn.execute(
                    text(
                        "SELECT run_id FROM runs WHERE heartbeat_at < :cutoff"
                        " AND (state = 'running' OR (state = 'queued' AND stage = :waiting))"
                    ),
                    {"cutoff": cutoff, "waiting": WAITING_STAGE},
                )
                .scalars()
                .all()
            )
        failure = RunFailure(
            "processing_stopped",
            f"the processing stopped without finishing (no sign of life for {timeout_s:.0f} s:"
            " the worker or the service was stopped or killed); execute the video again",
        )
        return [run_id for run_id in silent if self.fail(run_id, failure)]

    def _finish(
        self,
        run_id: str,
        state: str,
        failure: RunFailure | None,
        artifacts_path: str | None,
        counted: tuple[float, int] | None = None,
        bill_processed: bool = False,
        limits: PlanLimits | None = None,
    ) -> bool:
        now = now_rfc3339()
        allowed = ("running",) if state == "succeeded" else ACTIVE_STATES
        values: dict[str, Any] = {
            "state": state,
            "finished_at": now,
            "error_code": failure and failure.code,
            "error_message": failure and failure.message,
            "artifacts_path": artifacts_path,
        }
        if state == "succeeded":
            values["progress"] = 1.0
        guarded = (runs_table.c.run_id == run_id) & runs_table.c.state.in_(allowed)
        with self.catalog.write() as conn:
            updated = conn.execute(update(runs_table).where(guarded).values(values)).rowcount
            if updated:
                set_video_state(conn, _video_of(conn, run_id), state, now)
            if updated and counted is not None:
                count_succeeded_run(conn, run_id, now, *counted)
            if updated and bill_processed:
                _count_failed_run(conn, run_id, now)
            if updated:
                emit_run_ended(conn, run_id)  # the outbox: in the same transaction
            if updated and limits is not None:
                tell_limits_reached(conn, run_id, now, limits)
        return bool(updated)


def _insert_queued(
    conn: Any, run_id: str, video_id: str, tenant_id: str, params: dict[str, Any], now: str
) -> None:
    conn.execute(
        runs_table.insert().values(
            run_id=run_id,
            video_id=video_id,
            tenant_id=tenant_id,
            state="queued",
            progress=0.0,
            params_json=json.dumps(params),
            created_at=now,
            heartbeat_at=now,
        )
    )


def count_succeeded_run(
    conn: Connection, run_id: str, now: str, processed_s: float, artifacts_bytes: int
) -> None:
    """Count a succeeded run in its tenant's usage (its processed seconds this month, its
    artifacts' bytes) and record the bytes on the run, inside the caller's transaction."""
    row = first_row(conn, "SELECT tenant_id FROM runs WHERE run_id = :run_id", run_id=run_id)
    assert row is not None
    add(conn, row["tenant_id"], month_of(now), "processed_s", processed_s)
    add(conn, row["tenant_id"], ALL, "storage_bytes", float(artifacts_bytes))
    conn.execute(
        text("UPDATE runs SET artifacts_bytes = :size WHERE run_id = :run_id"),
        {"size": int(artifacts_bytes), "run_id": run_id},
    )


def _count_failed_run(conn: Connection, run_id: str, now: str) -> None:
    row = first_row(
        conn, "SELECT tenant_id, processed_s FROM runs WHERE run_id = :run_id", run_id=run_id
    )
    assert row is not None
    add(conn, row["tenant_id"], month_of(now), "processed_s", float(row["processed_s"] or 0.0))


def _check_executable(video_id: str, state: str) -> None:
    if state in ACTIVE_STATES:
        raise Conflict(f"video {video_id} is {state}; wait for its run to end")
    if state == "awaiting_upload":
        raise Conflict(f"video {video_id} is awaiting its upload; PUT the bytes first")


def _video_of(conn: Connection, run_id: str) -> str:
    row = first_row(conn, "SELECT video_id FROM runs WHERE run_id = :run_id", run_id=run_id)
    assert row is not None
    return str(row["video_id"])
