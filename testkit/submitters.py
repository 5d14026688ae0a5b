"""The part of the orchestrator's interface (``flows.orchestrator.Submitter``) that test doubles
leave quiet: Prefect never saw a flow run end badly, holds none open, is told nothing, and takes
exports and webhook deliveries without making or sending them.

A double subclasses ``QuietSubmitter`` and writes only its ``submit``.
"""

from __future__ import annotations

from collections.abc import Sequence

from storage.catalog.exports import Export
from storage.catalog.webhooks.store import Delivery


class QuietSubmitter:
    async def submit_export(self, export: Export) -> str:
        return f"fr-{export.export_id}"  # taken, never made: the export stays queued

    async def submit_delivery(self, delivery: Delivery, *, swept: bool = False) -> str:
        return f"fr-{delivery.delivery_id}-{delivery.attempts + 1}"  # taken, never sent

    async def ended_badly(self, flow_run_ids: Sequence[str]) -> dict[str, str]:
        return {}

    async def mark_crashed(self, flow_run_id: str, message: str) -> None:
        return None

    async def still_open(self) -> list[str]:
        return []

    async def mark_completed(self, flow_run_id: str, message: str) -> None:
        return None
