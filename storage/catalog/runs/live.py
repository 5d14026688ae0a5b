"""Live HLS sessions in the catalog: one run per window, chained by ``follows_run_id``.

A session following a live stream publishes window after window. Each window is a run of its
own that succeeds with the cumulative artifacts of the session so far (everything since the
session's first window), so readers, which serve the video's newest succeeded run, see the
timeline and scene graph grow with no change, and every succeeded run is whole. The window that
closes succeeds and the next one starts ``running`` in ONE transaction: the video never looks
finished between two windows, and a stop cannot fall between them.

Billing: each window's run counts only its own window's seconds (``processed_s``), so every
second of the stream is billed once; the session counts as one execution (its first run, counted
by ``RunStore.create``); the runs that continue it are not executions.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, text

from storage.catalog.database import Catalog, first_row
from storage.catalog.records import Run
from storage.catalog.runs.store import RunStore, count_succeeded_run
from storage.catalog.tables import runs as runs_table
from storage.catalog.usage import month_of, used
from storage.catalog.videos import set_video_state
from storage.catalog.webhooks.events import emit_run_ended
from ves.clock import now_rfc3339
from ves.errors import Conflict, NotFound
from ves.ids import new_id

STOPPED_CODE = "stopped"


class LiveRunStore:
    """The catalog side of live sessions: chain windows, ask and read stops."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.runs = RunStore(catalog)

    def follow_on(
        self,
        run_id: str,
        artifacts_path: str,
        processed_s: float,
        artifacts_bytes: int,
        stage: str = "following",
    ) -> str | None:
        """Succeed the window's run and start the next window's, in one transaction.

        Returns the new run's id; None when ``run_id`` was no longer running (the reaper failed
        it, or it was stopped while queued), and then nothing changed.
        """
        now = now_rfc3339()
        with self.catalog.write() as conn:
            row = first_row(conn, "SELECT * FROM runs WHERE run_id = :run_id", run_id=run_id)
            updated = conn.execute(
                text(
                    "UPDATE runs SET state = 'succeeded', finished_at = :now, progress = 1.0,"
                    " artifacts_path = :path WHERE run_id = :run_id AND state = 'running'"
                ),
                {"now": now, "path": artifacts_path, "run_id": run_id},
            ).rowcount
            if not updated or row is None:
                return None
            count_succeeded_run(conn, run_id, now, processed_s, artifacts_bytes)
            emit_run_ended(conn, run_id)  # run.succeeded: the window is published
            return _insert_next(conn, row, now, stage)

    def stop_requested(self, run_id: str) -> bool:
        """Whether a stop was asked of the run (or it is no longer running)."""
        with self.catalog.read() as conn:
            row = first_row(
                conn,
                "SELECT state, stop_requested_at FROM runs WHERE run_id = :run_id",
                run_id=run_id,
            )
        return row is None or row["state"] != "running" or row["stop_requested_at"] is not None

    def request_stop(self, tenant_id: str, video_id: str, run_id: str) -> Run:
        """Stop the live session ``run_id`` belongs to (any run of its chain may be named).

        A running window closes with what it has and is published (the flow reads the stop);
        a queued run ends at once (failed ``stopped``: nothing was processed).

        Returns:
            The session's current run, as it is after the stop.

        Raises:
            NotFound: no such run of the tenant's video.
            Conflict: the session has ended, or the run is not of a live HLS stream.
        """
        now = now_rfc3339()
        with self.catalog.write(lock=tenant_id) as conn:
            current = _current_of_chain(conn, tenant_id, video_id, run_id)
            if current["state"] == "queued":
                _stop_queued(conn, current["run_id"], video_id, now)
            elif current["state"] == "running":
                _ask_stop(conn, current["run_id"], video_id, now)
            else:
                raise Conflict(
                    f"run {run_id} has ended ({current['state']}); there is nothing to stop"
                )
            stopped = str(current["run_id"])
        return self.runs.get(stopped)

    def processed_left(self, tenant_id: str, allowed_s: float) -> float:
        """Seconds of video the tenant's plan still allows this month (``allowed_s`` in all)."""
        with self.catalog.read() as conn:
            spent = used(conn, tenant_id, month_of(now_rfc3339()), "processed_s")
        return max(0.0, allowed_s - spent)

    def chain(self, run_id: str) -> list[str]:
        """The session's runs up to ``run_id``, first window first."""
        found = [run_id]
        with self.catalog.read() as conn:
            while (
                previous := conn.execute(
                    text("SELECT follows_run_id FROM runs WHERE run_id = :run_id"),
                    {"run_id": found[-1]},
                ).scalar()
            ) is not None:
                found.append(str(previous))
        return found[::-1]


def _insert_next(conn: Connection, row: Any, now: str, stage: str) -> str:
    next_id = new_id("run")
    conn.execute(
        runs_table.insert().values(
            run_id=next_id,
            video_id=row["video_id"],
            tenant_id=row["tenant_id"],
            state="running",
            stage=stage,
            progress=0.0,
            params_json=row["params_json"],
            flow_run_id=row["flow_run_id"],
            created_at=now,
            started_at=now,
            heartbeat_at=now,
            follows_run_id=row["run_id"],
        )
    )
    set_video_state(conn, row["video_id"], "running", now)
    return next_id


def _current_of_chain(conn: Connection, tenant_id: str, video_id: str, run_id: str) -> Any:
    """The newest run of the chain ``run_id`` is in (following ``follows_run_id`` forward)."""
    row = first_row(
        conn,
        "SELECT * FROM runs WHERE run_id = :run_id AND tenant_id = :tenant_id"
        " AND video_id = :video_id",
        run_id=run_id,
        tenant_id=tenant_id,
        video_id=video_id,
    )
    if row is None:
        raise NotFound(f"no run {run_id} of video {video_id}")
    after = "SELECT * FROM runs WHERE follows_run_id = :run_id"
    while (nxt := first_row(conn, after, run_id=row["run_id"])) is not None:
        row = nxt
    return row


def _stop_queued(conn: Connection, run_id: str, video_id: str, now: str) -> None:
    conn.execute(
        text(
            "UPDATE runs SET state = 'failed', finished_at = :now, stop_requested_at = :now,"
            " error_code = :code, error_message = :message"
            " WHERE run_id = :run_id AND state = 'queued'"
        ),
        {
            "now": now,
            "code": STOPPED_CODE,
            "message": "the run was stopped before it started; nothing was processed",
            "run_id": run_id,
        },
    )
    set_video_state(conn, video_id, "failed", now)
    emit_run_ended(conn, run_id)


def _ask_stop(conn: Connection, run_id: str, video_id: str, now: str) -> None:
    kind = conn.execute(
        text("SELECT source_type FROM videos WHERE video_id = :video_id"), {"video_id": video_id}
    ).scalar()
    if kind != "hls":
        raise Conflict(
            f"run {run_id} is not of a live HLS stream; only a live session can be stopped"
        )
    conn.execute(
        text(
            "UPDATE runs SET stop_requested_at = COALESCE(stop_requested_at, :now)"
            " WHERE run_id = :run_id AND state = 'running'"
        ),
        {"now": now, "run_id": run_id},
    )
