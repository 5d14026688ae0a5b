"""The ask log: every question and its answer, with the run it was answered from.

Recording an ask and counting it in the tenant's usage happen in ONE transaction, so the log and
the counters never disagree. Usage rows are per calendar month (``2026-11``) and per day
(``2026-11-21``, for daily limits), metric ``asks``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from storage.catalog import Catalog
from storage.usage import consume, day_of, month_of
from ves.clock import now_rfc3339
from ves.ids import new_id
from ves.plans import PlanLimits


@dataclass(frozen=True)
class AskRecord:
    """One logged ask (what a reviewer reads back)."""

    ask_id: str
    tenant_id: str
    video_id: str
    run_id: str
    question: str
    answer: dict[str, Any]
    grounded: bool
    refusal_reason: str | None
    phrased_by: str
    created_at: str


class AskLog:
    """Writes and reads the ask log."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def record(
        self,
        tenant_id: str,
        video_id: str,
        run_id: str,
        answer: dict[str, Any],
        phrased_by: str,
        limits: PlanLimits | None = None,
    ) -> str:
        """Log an answered question and count it (with ``limits``: only within the plan's
        ``asks_per_day``, else ``PlanLimitExceeded`` and nothing is logged); returns the ask id.
        """
        ask_id, now = new_id("ask"), now_rfc3339()
        cap = limits.asks_per_day if limits is not None else float("inf")
        with self.catalog.write() as conn:
            periods = (month_of(now), day_of(now))
            consume(conn, tenant_id, periods, "asks", ("asks_per_day", cap, day_of(now)))
            conn.execute(
                "INSERT INTO asks (ask_id, tenant_id, video_id, run_id, question, answer_json,"
                " grounded, refusal_reason, phrased_by, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    ask_id,
                    tenant_id,
                    video_id,
                    run_id,
                    answer["question"],
                    json.dumps(answer),
                    int(bool(answer["grounded"])),
                    answer.get("refusal_reason"),
                    phrased_by,
                    now,
                ),
            )
        return ask_id

    def for_run(self, run_id: str) -> list[AskRecord]:
        """Every ask answered from a run, oldest first."""
        with self.catalog.read() as conn:
            rows = conn.execute(
                "SELECT * FROM asks WHERE run_id = ? ORDER BY created_at, ask_id", (run_id,)
            ).fetchall()
        return [
            AskRecord(
                r["ask_id"],
                r["tenant_id"],
                r["video_id"],
                r["run_id"],
                r["question"],
                json.loads(r["answer_json"]),
                bool(r["grounded"]),
                r["refusal_reason"],
                r["phrased_by"],
                r["created_at"],
            )
            for r in rows
        ]

    def usage(self, tenant_id: str, period: str, metric: str = "asks") -> float:
        """The tenant's count of ``metric`` in a period (``YYYY-MM`` or ``YYYY-MM-DD``)."""
        with self.catalog.read() as conn:
            row = conn.execute(
                "SELECT value FROM usage WHERE tenant_id = ? AND period = ? AND metric = ?",
                (tenant_id, period, metric),
            ).fetchone()
        return float(row["value"]) if row else 0.0
