"""The ``deliver-webhook`` flow, called in-process against a real receiver on 127.0.0.1: one
attempt per flow run, signed; 2xx delivers, anything else is logged and retried with backoff."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import pytest

from flows.webhooks import (
    DeliveryParams,
    attempt_delivery,
    backoff_s,
    deliver_webhook,
    next_attempt,
)
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from storage.catalog.webhooks.events import emit
from storage.catalog.webhooks.store import WebhookStore
from tests.fixtures.settings_env import export_settings
from tests.fixtures.webhook_receiver import Received, Script, WebhookReceiver
from ves.clock import from_rfc3339
from ves.settings import Settings
from ves.webhook_signature import verify


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as server:
        yield server


@pytest.fixture
def env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The flow reads its settings from the environment, as a worker's flow does."""
    export_settings(monkeypatch, settings)
    monkeypatch.setenv("VES_ALLOW_PRIVATE_SOURCES", "true")
    monkeypatch.setenv("VES_WEBHOOK_TIMEOUT_S", "1")
    return monkeypatch


class Outbox:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.store = WebhookStore(catalog)
        self.tenant_id = TenantStore(catalog).create_tenant("acme").tenant_id

    def event(self, url: str) -> tuple[str, str]:
        """An endpoint at ``url`` and one pending ``run.succeeded`` delivery to it."""
        endpoint = self.store.create_endpoint(self.tenant_id, url, ["run.succeeded"], None, 10)
        with self.catalog.write() as conn:
            [delivery_id] = emit(conn, self.tenant_id, "run.succeeded", {"run_id": "run_x"})
        return endpoint.webhook_id, delivery_id

    def secret(self, webhook_id: str) -> str:
        return self.store.endpoint(self.tenant_id, webhook_id).secret


@pytest.fixture
def outbox(catalog: Catalog, env: pytest.MonkeyPatch) -> Outbox:
    return Outbox(catalog)


def assert_signed(got: Received, secret: str, delivery_id: str) -> dict[str, object]:
    assert got.headers["webhook-id"] == delivery_id
    timestamp = int(got.headers["webhook-timestamp"])
    assert verify(secret, delivery_id, timestamp, got.body, got.headers["webhook-signature"])
    body: dict[str, object] = json.loads(got.body)
    return body


def test_a_2xx_delivers_a_signed_body(outbox: Outbox, receiver: WebhookReceiver) -> None:
    webhook_id, delivery_id = outbox.event(receiver.url)
    assert deliver_webhook(DeliveryParams(delivery_id=delivery_id, attempt=1)) == "delivered"
    [got] = receiver.received
    body = assert_signed(got, outbox.secret(webhook_id), delivery_id)
    assert body["type"] == "run.succeeded" and body["data"] == {"run_id": "run_x"}
    delivery = outbox.store.delivery(delivery_id)
    assert (delivery.state, delivery.attempts, delivery.next_attempt_at) == ("delivered", 1, None)
    [attempt] = outbox.store.attempts([delivery_id])[delivery_id]
    assert (attempt.response_status, attempt.outcome, attempt.error) == (204, "delivered", None)
    assert attempt.latency_ms > 0
    # The same attempt again (a lost flow run swept, then the first waking up) sends nothing.
    assert deliver_webhook(DeliveryParams(delivery_id=delivery_id, attempt=1)) == "skipped"
    assert len(receiver.received) == 1


def test_a_500_is_retried_after_the_backoff_then_delivered(
    outbox: Outbox, receiver: WebhookReceiver, settings: Settings
) -> None:
    receiver.script = Script(statuses=[500, 200])
    webhook_id, delivery_id = outbox.event(receiver.url)
    assert deliver_webhook(DeliveryParams(delivery_id=delivery_id, attempt=1)) == "retrying"
    waiting = outbox.store.delivery(delivery_id)
    [first] = outbox.store.attempts([delivery_id])[delivery_id]
    wait_s = (
        from_rfc3339(waiting.next_attempt_at or "") - from_rfc3339(first.started_at)
    ).total_seconds()
    base = settings.webhook_retry_base_s
    assert waiting.state == "pending" and 0.8 * base <= wait_s <= 1.2 * base + 5
    assert deliver_webhook(DeliveryParams(delivery_id=delivery_id, attempt=2)) == "delivered"
    log = outbox.store.attempts([delivery_id])[delivery_id]
    assert [(a.attempt, a.response_status, a.outcome) for a in log] == [
        (1, 500, "retrying"),
        (2, 200, "delivered"),
    ]
    secret = outbox.secret(webhook_id)
    bodies = [assert_signed(got, secret, delivery_id) for got in receiver.received]
    assert bodies[0] == bodies[1]  # the same event, the same id: a receiver can drop repeats


def test_a_redirect_is_not_followed(outbox: Outbox) -> None:
    with WebhookReceiver() as target, WebhookReceiver(Script([302], location="")) as hop:
        hop.script.location = target.url
        _, delivery_id = outbox.event(hop.url)
        assert deliver_webhook(DeliveryParams(delivery_id=delivery_id, attempt=1)) == "retrying"
        assert len(hop.received) == 1 and target.received == []
    [attempt] = outbox.store.attempts([delivery_id])[delivery_id]
    assert attempt.response_status == 302 and "redirects are not followed" in (attempt.error or "")


def test_a_private_address_is_refused_when_sending(
    outbox: Outbox, receiver: WebhookReceiver, catalog: Catalog, settings: Settings
) -> None:
    """Registered while allowed (or before DNS changed): checked again at every attempt."""
    _, delivery_id = outbox.event(receiver.url)
    strict = settings.model_copy(update={"allow_private_sources": False})
    assert attempt_delivery(strict, outbox.store, delivery_id, 1) == "retrying"
    assert receiver.received == []
    [attempt] = outbox.store.attempts([delivery_id])[delivery_id]
    assert attempt.response_status is None
    assert (attempt.error or "").startswith("source_rejected") and "loopback" in attempt.error


def test_a_slow_receiver_is_a_failed_attempt_after_the_timeout(
    outbox: Outbox, receiver: WebhookReceiver, settings: Settings
) -> None:
    receiver.script = Script(statuses=[200], sleep_s=3.0)
    _, delivery_id = outbox.event(receiver.url)
    quick = settings.model_copy(update={"webhook_timeout_s": 0.5})
    assert attempt_delivery(quick, outbox.store, delivery_id, 1) == "retrying"
    [attempt] = outbox.store.attempts([delivery_id])[delivery_id]
    assert attempt.response_status is None and "in time" in (attempt.error or "")


def test_retries_stop_a_day_after_the_first_attempt(
    outbox: Outbox, receiver: WebhookReceiver, settings: Settings
) -> None:
    receiver.script = Script(statuses=[503])
    _, delivery_id = outbox.event(receiver.url)
    brief = settings.model_copy(update={"webhook_retry_for_s": 1e-6})
    assert attempt_delivery(brief, outbox.store, delivery_id, 1) == "failed"
    delivery = outbox.store.delivery(delivery_id)
    assert delivery.state == "failed" and delivery.next_attempt_at is None


def test_a_deleted_endpoint_gets_nothing_more(outbox: Outbox, receiver: WebhookReceiver) -> None:
    webhook_id, delivery_id = outbox.event(receiver.url)
    outbox.store.delete_endpoint(outbox.tenant_id, webhook_id)
    assert deliver_webhook(DeliveryParams(delivery_id=delivery_id, attempt=1)) == "skipped"
    assert receiver.received == [] and outbox.store.delivery(delivery_id).state == "failed"


def test_backoff_doubles_with_jitter_up_to_its_cap(settings: Settings) -> None:
    base, cap = settings.webhook_retry_base_s, settings.webhook_retry_max_s
    for attempts in range(1, 12):
        plain = min(cap, base * 2 ** (attempts - 1))
        low, high = backoff_s(settings, attempts, 0.0), backoff_s(settings, attempts, 1.0)
        assert low == pytest.approx(min(cap, 0.8 * base * 2 ** (attempts - 1)))
        assert high == pytest.approx(min(cap, 1.2 * base * 2 ** (attempts - 1)))
        assert backoff_s(settings, attempts, 0.5) == pytest.approx(plain)
    schedule = [backoff_s(settings, n, 1.0) for n in range(1, 40)]
    assert schedule == sorted(schedule) and max(schedule) == cap  # waits grow, never past the cap


def test_the_last_attempt_is_made_at_the_deadline(settings: Settings) -> None:
    first = from_rfc3339("2026-11-25T10:00:00.000Z")
    deadline = first + timedelta(seconds=settings.webhook_retry_for_s)
    near_end = deadline - timedelta(seconds=5)
    assert next_attempt(settings, first, 30, near_end) == deadline
    assert next_attempt(settings, first, 31, deadline) is None
    early = next_attempt(settings, first, 1, first)
    assert early is not None and early - first <= timedelta(
        seconds=1.2 * settings.webhook_retry_base_s
    )
