"""Webhooks: a tenant's endpoints, the outbox of deliveries, and the log of every attempt.

Events are written to the outbox (``webhook_deliveries``, one row per subscribed endpoint, state
``pending``) by ``storage.catalog.webhooks.events`` in the transaction of the change they tell
of, so an
event is never lost to a kill between the change and its announcement. The ``deliver-webhook``
flow sends them (``flows.webhooks``); this module only records.

The endpoint's secret is stored as given (``whsec_...``): the flow must sign with it, so it cannot
be kept as a hash the way API keys are. It is answered once, when the endpoint is created. The
catalog's access rules protect it, as they protect the S3 and LLM keys in the settings.

A delivery's ``attempts`` counts the attempts made; an attempt is recorded only when the count is
still what its flow run expected (``record_attempt``), so two flow runs of the same attempt (a
lost submission swept again, then the first one waking up) send it at most twice and log it once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, RowMapping, func, select, update

from storage.catalog.database import Catalog
from storage.catalog.tables import webhook_attempts as attempts_table
from storage.catalog.tables import webhook_deliveries as deliveries_table
from storage.catalog.tables import webhook_endpoints as endpoints_table
from ves.clock import now_rfc3339
from ves.errors import Conflict, NotFound, ValidationFailed
from ves.ids import new_id
from ves.webhook_signature import new_secret

EVENT_TYPES = ("run.succeeded", "run.failed", "export.ready", "usage.limit_reached")


@dataclass(frozen=True)
class Endpoint:
    webhook_id: str
    tenant_id: str
    url: str
    events: tuple[str, ...]
    secret: str
    description: str | None
    created_at: str
    disabled_at: str | None

    @classmethod
    def from_row(cls, row: RowMapping) -> Endpoint:
        values = dict(row)
        values["events"] = tuple(json.loads(values.pop("events_json")))
        return cls(**values)


@dataclass(frozen=True)
class Attempt:
    attempt: int
    started_at: str
    latency_ms: float
    response_status: int | None
    error: str | None
    outcome: str


@dataclass(frozen=True)
class Delivery:
    delivery_id: str
    webhook_id: str
    tenant_id: str
    event_type: str
    payload: dict[str, Any]
    state: str
    attempts: int
    next_attempt_at: str | None
    first_attempt_at: str | None
    flow_run_id: str | None
    created_at: str
    finished_at: str | None

    @classmethod
    def from_row(cls, row: RowMapping) -> Delivery:
        values = dict(row)
        values["payload"] = json.loads(values.pop("payload_json"))
        values.pop("dedupe_key", None)
        return cls(**values)

    def body(self) -> bytes:
        """The bytes sent (and signed): the payload as compact JSON, the same on every attempt."""
        return json.dumps(self.payload, separators=(",", ":"), sort_keys=True).encode()


@dataclass(frozen=True)
class AttemptRecord:
    """What one attempt found: the receiver's status (None when it did not answer) or error."""

    started_at: str
    latency_ms: float
    response_status: int | None
    error: str | None


class WebhookStore:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    # --- endpoints ---

    def create_endpoint(
        self, tenant_id: str, url: str, events: list[str], description: str | None, at_most: int
    ) -> Endpoint:
        """A new endpoint with a new secret; at most ``at_most`` live ones per tenant."""
        unknown = sorted(set(events) - set(EVENT_TYPES))
        if unknown or not events:
            raise ValidationFailed(
                f"unknown event types {unknown}; choose among {list(EVENT_TYPES)}"
                if unknown
                else "name at least one event type",
                errors=[{"loc": ["body", "events"], "msg": "unknown or no event types"}],
            )
        webhook_id = new_id("wh")
        with self.catalog.write(lock=tenant_id) as conn:
            live = conn.execute(
                select(func.count()).where(
                    endpoints_table.c.tenant_id == tenant_id,
                    endpoints_table.c.disabled_at.is_(None),
                )
            ).scalar_one()
            if live >= at_most:
                raise Conflict(
                    f"this workspace has {live} webhook endpoints, the most allowed; delete one"
                )
            conn.execute(
                endpoints_table.insert().values(
                    webhook_id=webhook_id,
                    tenant_id=tenant_id,
                    url=url,
                    events_json=json.dumps(sorted(set(events))),
                    secret=new_secret(),
                    description=description,
                    created_at=now_rfc3339(),
                )
            )
        return self.endpoint(tenant_id, webhook_id)

    def endpoint(self, tenant_id: str, webhook_id: str) -> Endpoint:
        """The tenant's live endpoint; another tenant's, or a deleted one, is not found."""
        query = select(endpoints_table).where(
            endpoints_table.c.webhook_id == webhook_id,
            endpoints_table.c.tenant_id == tenant_id,
            endpoints_table.c.disabled_at.is_(None),
        )
        with self.catalog.read() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            raise NotFound(f"no webhook {webhook_id}")
        return Endpoint.from_row(row)

    def endpoint_any(self, webhook_id: str) -> Endpoint:
        """The endpoint, deleted or not (the delivery flow's view)."""
        query = select(endpoints_table).where(endpoints_table.c.webhook_id == webhook_id)
        with self.catalog.read() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            raise NotFound(f"no webhook {webhook_id}")
        return Endpoint.from_row(row)

    def endpoints(self, tenant_id: str) -> list[Endpoint]:
        query = select(endpoints_table).where(
            endpoints_table.c.tenant_id == tenant_id, endpoints_table.c.disabled_at.is_(None)
        )
        with self.catalog.read() as conn:
            rows = conn.execute(query.order_by(endpoints_table.c.webhook_id)).mappings().all()
        return [Endpoint.from_row(r) for r in rows]

    def delete_endpoint(self, tenant_id: str, webhook_id: str) -> None:
        """Stop sending to it: it is disabled (its deliveries' history is kept) and its pending
        deliveries fail."""
        self.endpoint(tenant_id, webhook_id)
        now = now_rfc3339()
        with self.catalog.write() as conn:
            conn.execute(
                update(endpoints_table)
                .where(endpoints_table.c.webhook_id == webhook_id)
                .values(disabled_at=now)
            )
            conn.execute(
                update(deliveries_table)
                .where(
                    deliveries_table.c.webhook_id == webhook_id,
                    deliveries_table.c.state == "pending",
                )
                .values(state="failed", finished_at=now, next_attempt_at=None)
            )

    # --- deliveries ---

    def delivery(self, delivery_id: str) -> Delivery:
        query = select(deliveries_table).where(deliveries_table.c.delivery_id == delivery_id)
        with self.catalog.read() as conn:
            row = conn.execute(query).mappings().first()
        if row is None:
            raise NotFound(f"no delivery {delivery_id}")
        return Delivery.from_row(row)

    def deliveries(
        self, tenant_id: str, webhook_id: str, limit: int, before: str | None = None
    ) -> list[Delivery]:
        """The endpoint's deliveries, newest first (``before``: a delivery id: the next page)."""
        self.endpoint(tenant_id, webhook_id)
        query = select(deliveries_table).where(deliveries_table.c.webhook_id == webhook_id)
        if before is not None:
            query = query.where(deliveries_table.c.delivery_id < before)
        query = query.order_by(deliveries_table.c.delivery_id.desc()).limit(limit)
        with self.catalog.read() as conn:
            rows = conn.execute(query).mappings().all()
        return [Delivery.from_row(r) for r in rows]

    def attempts(self, delivery_ids: list[str]) -> dict[str, list[Attempt]]:
        """Each delivery's attempts, in order."""
        found: dict[str, list[Attempt]] = {d: [] for d in delivery_ids}
        if not delivery_ids:
            return found
        query = (
            select(attempts_table)
            .where(attempts_table.c.delivery_id.in_(delivery_ids))
            .order_by(attempts_table.c.delivery_id, attempts_table.c.attempt)
        )
        with self.catalog.read() as conn:
            for row in conn.execute(query).mappings():
                values = dict(row)
                found[values.pop("delivery_id")].append(Attempt(**values))
        return found

    def due(self, now: str, limit: int = 200) -> list[Delivery]:
        """Pending deliveries whose next attempt is due, oldest first."""
        query = select(deliveries_table).where(
            deliveries_table.c.state == "pending", deliveries_table.c.next_attempt_at <= now
        )
        with self.catalog.read() as conn:
            rows = (
                conn.execute(query.order_by(deliveries_table.c.delivery_id).limit(limit))
                .mappings()
                .all()
            )
        return [Delivery.from_row(r) for r in rows]

    def set_flow_run(self, delivery_id: str, flow_run_id: str) -> None:
        with self.catalog.write() as conn:
            conn.execute(
                update(deliveries_table)
                .where(deliveries_table.c.delivery_id == delivery_id)
                .values(flow_run_id=flow_run_id)
            )

    def record_attempt(
        self, delivery: Delivery, record: AttemptRecord, outcome: str, next_at: str | None
    ) -> bool:
        """Log attempt ``delivery.attempts + 1`` and move the delivery on: ``delivered``,
        ``failed``, or (``retrying``) pending until ``next_at``. False when another flow run
        recorded this attempt already (nothing is written)."""
        number = delivery.attempts + 1
        state = {"delivered": "delivered", "failed": "failed", "retrying": "pending"}[outcome]
        guarded = (
            (deliveries_table.c.delivery_id == delivery.delivery_id)
            & (deliveries_table.c.state == "pending")
            & (deliveries_table.c.attempts == delivery.attempts)
        )
        values: dict[str, Any] = {
            "state": state,
            "attempts": number,
            "next_attempt_at": next_at,
            "first_attempt_at": delivery.first_attempt_at or record.started_at,
            "finished_at": None if state == "pending" else now_rfc3339(),
            "flow_run_id": None,  # the flow run that held it is done; the next is handed over
        }
        with self.catalog.write() as conn:
            if not conn.execute(update(deliveries_table).where(guarded).values(values)).rowcount:
                return False
            _insert_attempt(conn, delivery.delivery_id, number, record, outcome)
        return True

    def give_up(self, delivery_id: str) -> None:
        """Fail a pending delivery without an attempt (its endpoint was deleted)."""
        with self.catalog.write() as conn:
            conn.execute(
                update(deliveries_table)
                .where(
                    deliveries_table.c.delivery_id == delivery_id,
                    deliveries_table.c.state == "pending",
                )
                .values(state="failed", finished_at=now_rfc3339(), next_attempt_at=None)
            )

    def resend(self, tenant_id: str, webhook_id: str, delivery_id: str) -> Delivery:
        """Make the endpoint's delivery pending again, due now, with a new retry window (the
        same ``webhook-id``: a receiver that took it already can tell)."""
        self.endpoint(tenant_id, webhook_id)
        delivery = self.delivery(delivery_id)
        if delivery.webhook_id != webhook_id:
            raise NotFound(f"no delivery {delivery_id}")
        with self.catalog.write() as conn:
            conn.execute(
                update(deliveries_table)
                .where(deliveries_table.c.delivery_id == delivery_id)
                .values(
                    state="pending",
                    next_attempt_at=now_rfc3339(),
                    first_attempt_at=None,
                    flow_run_id=None,
                    finished_at=None,
                )
            )
        return self.delivery(delivery_id)


def _insert_attempt(
    conn: Connection, delivery_id: str, number: int, record: AttemptRecord, outcome: str
) -> None:
    conn.execute(
        attempts_table.insert().values(
            delivery_id=delivery_id,
            attempt=number,
            started_at=record.started_at,
            latency_ms=record.latency_ms,
            response_status=record.response_status,
            error=record.error,
            outcome=outcome,
        )
    )
