"""The ``retention-sweep`` flow: delete the artifacts of runs past their plan's retention.

Deployed with an hourly schedule (``prefect.yaml``) on the ``ves-process`` pool, so a run is
deleted within the hour after ``finished_at + retention_days``; ``ves retention sweep`` runs the
same core from the command line. The flow orchestrates and nothing else: the sweep itself, and why
it marks the catalog before deleting, is ``tasks/retention.py``.
"""

from __future__ import annotations

from typing import Any

from prefect import flow
from pydantic import BaseModel, Field

from tasks.retention import retention_task
from ves.settings import Settings


class RetentionSweepParams(BaseModel):
    """The flow's one parameter (scheduled runs pass none: the defaults)."""

    dry_run: bool = Field(False, description="Only report what is due; delete nothing.")


@flow(name="retention-sweep", persist_result=False, log_prints=False)
def retention_sweep(params: RetentionSweepParams | None = None) -> dict[str, Any]:
    """Expire every run past its tenant's plan's retention; returns what was swept."""
    chosen = params or RetentionSweepParams()
    report = retention_task(Settings(), dry_run=chosen.dry_run)
    return report.as_dict()
