"""Usage counters per tenant and period, checked and counted inside the action's transaction.

``usage`` rows are ``(tenant, period, metric) -> value``. Periods: a calendar month (``2026-11``)
for executions and processed seconds, a UTC day (``2026-11-21``) and month for asks, ``all`` for
what is held rather than done (videos registered, bytes of artifacts kept).

Every check-and-count runs inside the caller's write transaction (``conn``), the same one that
writes the action, taken with ``Catalog.write(lock=tenant_id)``, so parallel requests at a limit
cannot both pass: the second waits (SQLite's write lock, PostgreSQL's advisory lock on the
tenant), then sees the first one's count. ``add`` is one upsert, atomic on both engines.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass

from sqlalchemy import Connection, text

from storage.catalog.database import Catalog
from ves.clock import now_rfc3339
from ves.errors import PlanLimitExceeded
from ves.plans import PlanLimits

ALL = "all"


def month_of(now: str) -> str:
    return now[:7]


def day_of(now: str) -> str:
    return now[:10]


def month_bounds(now: str) -> tuple[str, str]:
    """The first and last day of ``now``'s calendar month (``YYYY-MM-DD``)."""
    year, month = int(now[:4]), int(now[5:7])
    last = calendar.monthrange(year, month)[1]
    return f"{year:04d}-{month:02d}-01", f"{year:04d}-{month:02d}-{last:02d}"


def used(conn: Connection, tenant_id: str, period: str, metric: str) -> float:
    value = conn.execute(
        text(
            "SELECT value FROM usage"
            " WHERE tenant_id = :tenant_id AND period = :period AND metric = :metric"
        ),
        {"tenant_id": tenant_id, "period": period, "metric": metric},
    ).scalar()
    return float(value) if value is not None else 0.0


def add(conn: Connection, tenant_id: str, period: str, metric: str, amount: float) -> None:
    conn.execute(
        text(
            "INSERT INTO usage (tenant_id, period, metric, value)"
            " VALUES (:tenant_id, :period, :metric, :amount)"
            " ON CONFLICT (tenant_id, period, metric)"
            " DO UPDATE SET value = usage.value + excluded.value"
        ),
        {"tenant_id": tenant_id, "period": period, "metric": metric, "amount": float(amount)},
    )


def refuse(limit: str, value: float, used_now: float, unit: str = "") -> PlanLimitExceeded:
    """The 402 that names the limit, its value and what is used."""
    shown = f"{value:g}{unit}"
    return PlanLimitExceeded(
        f"the plan's limit {limit} = {shown} is reached ({used_now:g}{unit} used)",
        limit=limit,
        value=value,
        used=used_now,
    )


def consume(
    conn: Connection,
    tenant_id: str,
    periods: tuple[str, ...],
    metric: str,
    check: tuple[str, float, str],
    amount: float = 1.0,
) -> None:
    """Count ``amount`` of ``metric`` in every period, if the first period stays within the
    limit ``check = (name, value, period)``; else raise 402 and count nothing."""
    name, value, period = check
    now_used = used(conn, tenant_id, period, metric)
    if now_used + amount > value:
        raise refuse(name, value, now_used)
    for each in periods:
        add(conn, tenant_id, each, metric, amount)


@dataclass(frozen=True)
class Usage:
    """A tenant's usage as billing state reports it."""

    period_start: str
    period_end: str
    videos: int
    executions: int
    processed_s: float
    asks: int  # today
    asks_month: int
    storage_bytes: int
    active_runs: int
    searches: int = 0  # today

    def remaining(self, plan: PlanLimits) -> dict[str, float]:
        return {
            "videos": max(0, plan.videos - self.videos),
            "executions": max(0, plan.executions_per_month - self.executions),
            "processed_s": max(0.0, plan.processed_s_per_month - self.processed_s),
            "asks": max(0, plan.asks_per_day - self.asks),
            "searches": max(0, plan.searches_per_day - self.searches),
            "storage_bytes": max(0, plan.storage_bytes - self.storage_bytes),
            "concurrent_runs": max(0, plan.concurrent_runs - self.active_runs),
        }


class UsageStore:
    """Reads a tenant's usage."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def of(self, tenant_id: str, now: str) -> Usage:
        month, day = month_of(now), day_of(now)
        with self.catalog.read() as conn:

            def get(period: str, metric: str) -> float:
                return used(conn, tenant_id, period, metric)

            active = conn.execute(
                text(
                    "SELECT count(*) FROM runs WHERE tenant_id = :tenant_id"
                    " AND state IN ('queued', 'running')"
                ),
                {"tenant_id": tenant_id},
            ).scalar_one()
            start, end = month_bounds(now)
            return Usage(
                start,
                end,
                int(get(ALL, "videos")),
                int(get(month, "executions")),
                get(month, "processed_s"),
                int(get(day, "asks")),
                int(get(month, "asks")),
                int(get(ALL, "storage_bytes")),
                int(active),
                int(get(day, "searches")),
            )

    def value(self, tenant_id: str, period: str, metric: str) -> float:
        with self.catalog.read() as conn:
            return used(conn, tenant_id, period, metric)

    def count_search(self, tenant_id: str, per_day: int) -> None:
        """Count one workspace search today and this month, within the plan's
        ``searches_per_day`` (else ``PlanLimitExceeded`` and nothing is counted)."""
        now = now_rfc3339()
        day, month = day_of(now), month_of(now)
        with self.catalog.write(lock=tenant_id) as conn:
            consume(conn, tenant_id, (day, month), "searches", ("searches_per_day", per_day, day))


def queued_runs(conn: Connection, tenant_id: str) -> int:
    """The tenant's runs waiting in line (accepted, not yet started)."""
    return _runs_in(conn, tenant_id, "queued")


def running_runs(conn: Connection, tenant_id: str) -> int:
    """The tenant's runs processing now (started, not yet ended)."""
    return _runs_in(conn, tenant_id, "running")


def _runs_in(conn: Connection, tenant_id: str, state: str) -> int:
    count = conn.execute(
        text("SELECT count(*) FROM runs WHERE tenant_id = :tenant_id AND state = :state"),
        {"tenant_id": tenant_id, "state": state},
    ).scalar_one()
    return int(count)
