"""The ask log: every question and its answer, with the run it was answered from.

Recording an ask and counting it in the tenant's usage happen in ONE transaction, so the log and
the counters never disagree. Usage rows are per calendar month (``2026-11``) and per day
(``2026-11-21``, for daily limits), metric ``asks``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text

from storage.catalog.database import Catalog
from storage.catalog.tables import asks as asks_table
from storage.catalog.usage import consume, day_of, month_of, used
from ves.clock import now_rfc3339
from ves.ids import new_id
from ves.plans import PlanLimits


@dataclass(frozen=True)
class AskRecord:
    """One logged ask (what a reviewer reads back)."""

    ask_id: str
    tenant_id: str
    video_id: str | None  # None: asked of the whole workspace
    run_id: str | None
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
        video_id: str | None,
        run_id: str | None,
        answer: dict[str, Any],
        phrased_by: str,
        limits: PlanLimits | None = None,
    ) -> str:
        """Log an answered question and count it (with ``limits``: only within the plan's
        ``asks_per_day``, else ``PlanLimitExceeded`` and nothing is logged); returns the ask id.
        A question put to the whole workspace has no video and no run.
        """
        ask_id, now = new_id("ask"), now_rfc3339()
        cap = limits.asks_per_day if limits is not None else float("inf")
        with self.catalog.write(lock=tenant_id) as conn:
            periods = (month_of(now), day_of(now))
            consume(conn, tenant_id, periods, "asks", ("asks_per_day", cap, day_of(now)))
            conn.execute(
                asks_table.insert().values(
                    ask_id=ask_id,
                    tenant_id=tenant_id,
                    video_id=video_id,
                    run_id=run_id,
                    question=answer["question"],
                    answer_json=json.dumps(answer),
                    grounded=int(bool(answer["grounded"])),
                    refusal_reason=answer.get("refusal_reason"),
                    phrased_by=phrased_by,
                    created_at=now,
                )
            )
        return ask_id

    def for_run(self, run_id: str) -> list[AskRecord]:
        """Every ask answered from a run, oldest first."""
        with self.catalog.read() as conn:
            rows = (
                conn.execute(
                    text("SELECT * FROM asks WHERE run_id = :run_id ORDER BY created_at, ask_id"),
                    {"run_id": run_id},
                )
                .mappings()
                .all()
            )
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
            return used(conn, tenant_id, period, metric)
