"""May a tenant create one more run? Its plan's monthly and storage limits, and its line; and
which limits a finished run has used up (told to webhooks as ``usage.limit_reached``).

Both checks run inside the transaction that creates the run (``RunStore.create``), under the
tenant's write lock, so parallel executes at a limit are decided one after the other.
"""

from __future__ import annotations

import math

from sqlalchemy import Connection, text

from storage.catalog.usage import ALL, month_of, queued_runs, refuse, used
from storage.catalog.webhooks.events import emit_limit_reached
from ves.clock import from_rfc3339
from ves.errors import RateLimited
from ves.plans import PlanLimits


def check_plan(conn: Connection, tenant_id: str, now: str, limits: PlanLimits | None) -> None:
    """Raise ``PlanLimitExceeded`` if one more run would pass a limit of the plan."""
    if limits is None:
        return
    for name, value, now_used, _ in plan_usage(conn, tenant_id, now, limits):
        if now_used >= value:
            raise refuse(name, value, now_used)


def plan_usage(
    conn: Connection, tenant_id: str, now: str, limits: PlanLimits
) -> list[tuple[str, float, float, str]]:
    """Each limit a run uses: ``(limit, value, used now, period)`` (a month, or ``all``)."""
    month = month_of(now)
    return [
        (
            "executions_per_month",
            limits.executions_per_month,
            used(conn, tenant_id, month, "executions"),
            month,
        ),
        (
            "processed_s_per_month",
            limits.processed_s_per_month,
            used(conn, tenant_id, month, "processed_s"),
            month,
        ),
        (
            "storage_bytes",
            limits.storage_bytes,
            used(conn, tenant_id, ALL, "storage_bytes"),
            month,  # told once a month at most, like a refusal
        ),
    ]


def tell_limits_reached(conn: Connection, run_id: str, now: str, limits: PlanLimits) -> None:
    """``usage.limit_reached`` for each limit of the plan the run's usage has now reached."""
    tenant_id = conn.execute(
        text("SELECT tenant_id FROM runs WHERE run_id = :run_id"), {"run_id": run_id}
    ).scalar_one()
    for name, value, now_used, period in plan_usage(conn, tenant_id, now, limits):
        if now_used >= value:
            emit_limit_reached(conn, tenant_id, name, value, now_used, period)


def check_line(
    conn: Connection, tenant_id: str, max_queued: int | None, limits: PlanLimits | None
) -> None:
    """Raise ``RateLimited`` when ``max_queued`` of the tenant's runs wait already.

    ``Retry-After`` is the time a place in line takes to free: the tenant's recent runs' mean
    wall time divided by the runs it may execute at once (30 s before any run finished).
    """
    if max_queued is None:
        return
    waiting = queued_runs(conn, tenant_id)
    if waiting < max_queued:
        return
    slots = limits.concurrent_runs if limits else 1
    wait_s = max(1, min(600, math.ceil(_mean_run_s(conn, tenant_id) / slots)))
    raise RateLimited(
        f"{waiting} runs of this workspace are waiting in line already (at most {max_queued});"
        f" retry in {wait_s} s, when one has started",
        retry_after_s=wait_s,
    )


def _mean_run_s(conn: Connection, tenant_id: str) -> float:
    rows = conn.execute(
        text(
            "SELECT started_at, finished_at FROM runs WHERE tenant_id = :tenant_id"
            " AND state = 'succeeded' AND started_at IS NOT NULL ORDER BY run_id DESC LIMIT 10"
        ),
        {"tenant_id": tenant_id},
    ).mappings()
    spans = [
        (from_rfc3339(r["finished_at"]) - from_rfc3339(r["started_at"])).total_seconds()
        for r in rows
    ]
    return sum(spans) / len(spans) if spans else 30.0
