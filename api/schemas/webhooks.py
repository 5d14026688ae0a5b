"""Request and response models of webhooks (endpoints, deliveries and their attempts)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from api.schemas.videos import HTTP_URL_PATTERN
from storage.catalog.webhooks.store import Attempt, Delivery, Endpoint

EventType = Literal["run.succeeded", "run.failed", "export.ready", "usage.limit_reached"]

_ENDPOINT: dict[str, JsonValue] = {
    "webhook_id": "wh_01m8c0k2r4w9c4x7b5n6q8t0vz",
    "url": "https://hooks.example.com/ves",
    "events": ["export.ready", "run.failed", "run.succeeded"],
    "description": "ops pager",
    "created_at": "2026-11-25T10:00:00.000Z",
}
_DELIVERY: dict[str, JsonValue] = {
    "delivery_id": "msg_01m8c0m7d2x1s7p3h9q4e6w8rt",
    "event_type": "run.succeeded",
    "state": "delivered",
    "attempts": 2,
    "next_attempt_at": None,
    "created_at": "2026-11-25T10:02:00.000Z",
    "finished_at": "2026-11-25T10:02:31.204Z",
    "payload": {
        "type": "run.succeeded",
        "timestamp": "2026-11-25T10:02:00.000Z",
        "data": {
            "video_id": "vid_01m7zbsdn3j6xb0wq8d2y5f4ke",
            "run_id": "run_01m7zbsdnepf3bap3vrzhkr8he",
            "state": "succeeded",
        },
    },
    "attempt_log": [
        {
            "attempt": 1,
            "started_at": "2026-11-25T10:02:00.120Z",
            "latency_ms": 12.4,
            "response_status": 500,
            "error": "the receiver answered HTTP 500",
            "outcome": "retrying",
        },
        {
            "attempt": 2,
            "started_at": "2026-11-25T10:02:31.190Z",
            "latency_ms": 9.8,
            "response_status": 204,
            "error": None,
            "outcome": "delivered",
        },
    ],
}


class WebhookCreate(BaseModel):
    """An endpoint to register: where to POST, and which events."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"url": "https://hooks.example.com/ves", "events": ["run.succeeded", "run.failed"]}
            ]
        },
    )

    url: str = Field(
        min_length=1,
        max_length=2048,
        description="http(s) URL of the receiver; checked like a source URL (no private, "
        "loopback or link-local address unless the operator allows private sources).",
        json_schema_extra={"pattern": HTTP_URL_PATTERN},
    )
    events: list[EventType] = Field(min_length=1, max_length=4, description="Event types sent.")
    description: str | None = Field(None, max_length=200, description="A note for people.")


class WebhookPublic(BaseModel):
    """A registered endpoint (its secret is shown only when it is created)."""

    model_config = ConfigDict(json_schema_extra={"examples": [_ENDPOINT]})

    webhook_id: str
    url: str
    events: list[str]
    description: str | None
    created_at: str

    @classmethod
    def of(cls, endpoint: Endpoint) -> WebhookPublic:
        return cls(
            webhook_id=endpoint.webhook_id,
            url=endpoint.url,
            events=list(endpoint.events),
            description=endpoint.description,
            created_at=endpoint.created_at,
        )


class WebhookCreated(WebhookPublic):
    """The new endpoint with its signing secret, shown this once: keep it."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{**_ENDPOINT, "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}]
        }
    )

    secret: str = Field(
        description="`whsec_` + base64 of 32 bytes: the HMAC-SHA256 key of `webhook-signature` "
        "(the bytes after `whsec_`, base64-decoded). Shown only now."
    )


class WebhooksPublic(BaseModel):
    webhooks: list[WebhookPublic]


class AttemptPublic(BaseModel):
    attempt: int
    started_at: str
    latency_ms: float
    response_status: int | None = Field(description="The receiver's status; null: no answer.")
    error: str | None
    outcome: str = Field(
        description="`delivered`, `retrying` (another attempt is scheduled) or `failed` (the last)."
    )

    @classmethod
    def of(cls, attempt: Attempt) -> AttemptPublic:
        return cls(**attempt.__dict__)


class DeliveryPublic(BaseModel):
    """One event sent to one endpoint: its payload, where it stands and every attempt."""

    model_config = ConfigDict(json_schema_extra={"examples": [_DELIVERY]})

    delivery_id: str = Field(description="The `webhook-id` header: the same on every attempt.")
    event_type: str
    state: str = Field(description="`pending`, `delivered` or `failed`.")
    attempts: int
    next_attempt_at: str | None
    created_at: str
    finished_at: str | None
    payload: dict[str, Any]
    attempt_log: list[AttemptPublic]

    @classmethod
    def of(cls, delivery: Delivery, attempts: list[Attempt]) -> DeliveryPublic:
        return cls(
            delivery_id=delivery.delivery_id,
            event_type=delivery.event_type,
            state=delivery.state,
            attempts=delivery.attempts,
            next_attempt_at=delivery.next_attempt_at,
            created_at=delivery.created_at,
            finished_at=delivery.finished_at,
            payload=delivery.payload,
            attempt_log=[AttemptPublic.of(a) for a in attempts],
        )


class DeliveriesPublic(BaseModel):
    deliveries: list[DeliveryPublic]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next (older) page.")
