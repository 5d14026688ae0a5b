"""The ``deliver-webhook`` flow: ONE attempt to send one delivery of the webhook outbox.

It signs the delivery (Standard Webhooks: ``webhook-id``, ``webhook-timestamp``,
``webhook-signature``), POSTs it through the SSRF guard (every address of the host checked
again now, the connection pinned, redirects not followed), and records the attempt: status,
latency, error. A 2xx delivers it. Anything else (an error status, a 3xx, no answer in
``VES_WEBHOOK_TIMEOUT_S``, a refused address) schedules the next attempt as a new flow run at
the backoff's time, until ``VES_WEBHOOK_RETRY_FOR_S`` after the first attempt; then it fails.

Deliveries are never sent by a request handler or by a run's own flow: a slow receiver holds up
nothing but this flow run.
"""

from __future__ import annotations

import random
import time
from datetime import datetime, timedelta

from prefect import flow, get_run_logger
from pydantic import BaseModel

from flows.webhook_dispatch import create_delivery_run_sync
from storage.catalog.database import Catalog
from storage.catalog.webhooks.store import AttemptRecord, Delivery, Endpoint, WebhookStore
from ves import netguard
from ves.clock import from_rfc3339, to_rfc3339, utc_now
from ves.errors import Unavailable, VesError
from ves.settings import Settings
from ves.webhook_signature import headers


class DeliveryParams(BaseModel):
    delivery_id: str
    attempt: int


def backoff_s(settings: Settings, attempts_made: int, jitter: float | None = None) -> float:
    """Wait after the ``attempts_made``-th failed attempt: the base, doubled each time, jittered
    by +-20 % (``jitter`` in [0, 1]: 0.5 is none), capped at ``VES_WEBHOOK_RETRY_MAX_S``."""
    spread: float = random.random() if jitter is None else jitter
    doubled = settings.webhook_retry_base_s * 2 ** max(attempts_made - 1, 0)
    return float(min(settings.webhook_retry_max_s, doubled * (0.8 + 0.4 * spread)))


def next_attempt(
    settings: Settings, first_at: datetime, attempts_made: int, now: datetime
) -> datetime | None:
    """When to try again, or None once ``VES_WEBHOOK_RETRY_FOR_S`` have passed since the first
    attempt (the last attempt is made at that deadline)."""
    deadline = first_at + timedelta(seconds=settings.webhook_retry_for_s)
    if now >= deadline:
        return None
    return min(now + timedelta(seconds=backoff_s(settings, attempts_made)), deadline)


def send_once(settings: Settings, endpoint: Endpoint, delivery: Delivery) -> AttemptRecord:
    """POST the signed delivery to the endpoint once; what happened."""
    started = utc_now()
    clock = time.perf_counter()
    body = delivery.body()
    signed = headers(endpoint.secret, delivery.delivery_id, int(started.timestamp()), body)
    status: int | None = None
    error: str | None = None
    try:
        status = netguard.post(
            endpoint.url,
            body,
            {**signed, "user-agent": "video-evidence-service-webhooks"},
            allow_private=settings.allow_private_sources,
            timeout_s=settings.webhook_timeout_s,
        )
    except VesError as exc:
        error = f"{exc.code}: {exc.detail}"
    if status is not None and 300 <= status < 400:
        error = f"the receiver answered HTTP {status}; redirects are not followed"
    elif status is not None and not 200 <= status < 300:
        error = f"the receiver answered HTTP {status}"
    latency = (time.perf_counter() - clock) * 1000
    return AttemptRecord(to_rfc3339(started), round(latency, 1), status, error)


def attempt_delivery(
    settings: Settings, store: WebhookStore, delivery_id: str, attempt: int
) -> str:
    """Make attempt number ``attempt`` of the delivery; returns ``delivered``, ``retrying``,
    ``failed`` or ``skipped`` (not pending, or that attempt was made already)."""
    delivery = store.delivery(delivery_id)
    if delivery.state != "pending" or delivery.attempts != attempt - 1:
        return "skipped"
    endpoint = store.endpoint_any(delivery.webhook_id)
    if endpoint.disabled_at is not None:
        store.give_up(delivery_id)
        return "skipped"
    record = send_once(settings, endpoint, delivery)
    if record.error is None:
        outcome, next_at = "delivered", None
    else:
        first = from_rfc3339(delivery.first_attempt_at or record.started_at)
        when = next_attempt(settings, first, attempt, utc_now())
        outcome, next_at = ("failed", None) if when is None else ("retrying", to_rfc3339(when))
    if not store.record_attempt(delivery, record, outcome, next_at):
        return "skipped"
    return outcome


@flow(name="deliver-webhook", persist_result=False, log_prints=False)
def deliver_webhook(params: DeliveryParams) -> str:
    """Send one attempt of one webhook delivery; schedule the next when it failed."""
    logger = get_run_logger()
    settings = Settings()
    store = WebhookStore(Catalog.from_settings(settings, migrate=False))
    outcome = attempt_delivery(settings, store, params.delivery_id, params.attempt)
    logger.info("delivery %s attempt %d: %s", params.delivery_id, params.attempt, outcome)
    if outcome == "retrying":
        delivery = store.delivery(params.delivery_id)
        try:
            store.set_flow_run(delivery.delivery_id, create_delivery_run_sync(delivery))
        except Unavailable as exc:  # the reaper's sweep hands it over when it is due
            logger.warning("next attempt of %s left to the reaper: %s", delivery.delivery_id, exc)
    return outcome
