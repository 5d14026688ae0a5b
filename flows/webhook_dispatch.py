"""Handing webhook deliveries to the orchestrator: one flow run of ``deliver-webhook`` per
attempt, scheduled for the attempt's time (so retries wait in Prefect, visible in its UI).

The async form serves the API and the reaper (``PrefectSubmitter.submit_delivery``); the sync
form serves flows, which write events (a run's end, an export's) and hand them over right after
their commit. Whatever is not handed over (Prefect down, a kill in between) is swept by the
reaper (``flows.orchestrator.sweep_deliveries``). Prefect-client errors become ``Unavailable``.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

import httpx
from prefect.client.orchestration import get_client
from prefect.exceptions import PrefectException
from prefect.states import Scheduled

from storage.catalog.database import Catalog
from storage.catalog.webhooks.store import Delivery, WebhookStore
from ves.clock import from_rfc3339, now_rfc3339, utc_now
from ves.errors import Unavailable

DELIVERY_DEPLOYMENT = "deliver-webhook/deliver-webhook"

log = logging.getLogger("ves.webhooks")


def flow_run_request(delivery: Delivery, swept: bool = False) -> dict[str, Any]:
    """The arguments of ``create_flow_run_from_deployment`` for the delivery's next attempt.

    The idempotency key names the attempt and its time, so the flow and the reaper handing the
    same attempt over at once make one flow run; ``swept`` (a flow run lost) makes a new one.
    """
    attempt = delivery.attempts + 1
    key = f"{delivery.delivery_id}:{attempt}:{delivery.next_attempt_at}"
    request: dict[str, Any] = {
        "parameters": {"params": {"delivery_id": delivery.delivery_id, "attempt": attempt}},
        "name": f"{delivery.delivery_id}-{attempt}",
        "tags": ["ves", "webhook", f"tenant:{delivery.tenant_id}"],
        "idempotency_key": key + (f":swept:{uuid.uuid4()}" if swept else ""),
    }
    if delivery.next_attempt_at and from_rfc3339(delivery.next_attempt_at) > utc_now():
        request["state"] = Scheduled(scheduled_time=from_rfc3339(delivery.next_attempt_at))
    return request


async def create_delivery_run(delivery: Delivery, swept: bool = False) -> str:
    """Create the flow run of the delivery's next attempt; its id. Raises ``Unavailable``."""
    try:
        async with get_client() as client:
            deployment = await client.read_deployment_by_name(DELIVERY_DEPLOYMENT)
            flow_run = await client.create_flow_run_from_deployment(
                deployment.id, **flow_run_request(delivery, swept)
            )
    except (PrefectException, httpx.HTTPError, RuntimeError) as exc:
        raise Unavailable(f"the orchestrator cannot take the delivery now ({exc})") from exc
    return str(flow_run.id)


def create_delivery_run_sync(delivery: Delivery) -> str:
    """``create_delivery_run`` for synchronous callers (flows). Raises ``Unavailable``."""
    try:
        with get_client(sync_client=True) as client:
            deployment = client.read_deployment_by_name(DELIVERY_DEPLOYMENT)
            flow_run = client.create_flow_run_from_deployment(
                deployment.id, **flow_run_request(delivery)
            )
    except (PrefectException, httpx.HTTPError, RuntimeError) as exc:
        raise Unavailable(f"the orchestrator cannot take the delivery now ({exc})") from exc
    return str(flow_run.id)


def hand_over(catalog: Catalog) -> list[str]:
    """Hand every due delivery that no flow run holds to the orchestrator (best effort: what
    fails is left to the reaper's sweep); returns the flow run ids made."""
    store = WebhookStore(catalog)
    made: list[str] = []
    try:
        due = store.due(now_rfc3339())
    except Exception:  # never fail the caller's work over its announcement; the reaper sweeps
        log.exception("could not read the webhook outbox; left to the reaper")
        return made
    for delivery in due:
        if delivery.flow_run_id is not None:
            continue
        try:
            flow_run_id = create_delivery_run_sync(delivery)
        except Unavailable as exc:
            log.info("delivery %s left to the reaper: %s", delivery.delivery_id, exc.detail)
            continue
        store.set_flow_run(delivery.delivery_id, flow_run_id)
        made.append(flow_run_id)
    return made
