"""Webhooks: a workspace's endpoints, and the signed deliveries sent to them (issue 17).

Events (`run.succeeded`, `run.failed`, `export.ready`, `usage.limit_reached`) are written to an
outbox with the change they tell of and sent by the `deliver-webhook` Prefect flow, never from a
request; each attempt is logged and listed here. docs/how-to/webhooks.md shows a receiver that
verifies the signature.
"""

from __future__ import annotations

from typing import Annotated, Any

from anyio import to_thread
from fastapi import APIRouter, Body, Query, Response

from api.deps import CatalogDep, SettingsDep, SubmitterDep, TenantDep
from api.problems import problem_responses
from api.schemas.webhooks import (
    DeliveriesPublic,
    DeliveryPublic,
    WebhookCreate,
    WebhookCreated,
    WebhookPublic,
    WebhooksPublic,
)
from flows.orchestrator import sweep_deliveries
from storage.catalog.webhooks.store import WebhookStore
from ves.netguard import check_url

router = APIRouter(tags=["webhooks"])

_BASE = "/api/product/webhooks"
_ONE = f"{_BASE}/{{webhook_id}}"
CREATE_EXAMPLES: dict[str, Any] = {
    "runs": {
        "summary": "Runs that end",
        "value": {
            "url": "https://hooks.example.com/ves",
            "events": ["run.succeeded", "run.failed"],
        },
    },
    "all": {
        "summary": "Every event",
        "value": {
            "url": "https://hooks.example.com/ves",
            "events": ["run.succeeded", "run.failed", "export.ready", "usage.limit_reached"],
            "description": "ops",
        },
    },
}


@router.post(
    _BASE,
    status_code=201,
    summary="Register a webhook endpoint",
    description=(
        "Registers a URL that receives the chosen events as signed POSTs (Standard Webhooks: "
        "`webhook-id`, `webhook-timestamp`, `webhook-signature`). The answer carries the "
        "endpoint's `secret`, shown only this once. The URL passes the same guard as a source "
        "URL: every address its host resolves to is checked (422 `source_rejected` for a private, "
        "loopback or link-local one unless the operator allows private sources), and it is "
        "checked again at every delivery. 422 for an unknown event type; 409 when the workspace "
        "has `VES_WEBHOOK_ENDPOINTS_MAX` endpoints already."
    ),
    responses=problem_responses(400, 401, 409, 415, 422),
)
async def create_webhook(
    tenant: TenantDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    body: Annotated[WebhookCreate, Body(openapi_examples=CREATE_EXAMPLES)],
) -> WebhookCreated:
    await to_thread.run_sync(
        lambda: check_url(body.url, allow_private=settings.allow_private_sources)
    )
    store = WebhookStore(catalog)
    endpoint = await to_thread.run_sync(
        lambda: store.create_endpoint(
            tenant.tenant_id,
            body.url,
            list(body.events),
            body.description,
            settings.webhook_endpoints_max,
        )
    )
    return WebhookCreated(**WebhookPublic.of(endpoint).model_dump(), secret=endpoint.secret)


@router.get(
    _BASE,
    summary="List the workspace's webhook endpoints",
    description="Every live endpoint, oldest first (secrets are never listed).",
    responses=problem_responses(401),
)
def list_webhooks(tenant: TenantDep, catalog: CatalogDep) -> WebhooksPublic:
    endpoints = WebhookStore(catalog).endpoints(tenant.tenant_id)
    return WebhooksPublic(webhooks=[WebhookPublic.of(e) for e in endpoints])


@router.get(
    f"{_ONE}/deliveries",
    summary="List an endpoint's deliveries",
    description=(
        "Newest first: each event sent to the endpoint with its payload, its state (`pending`, "
        "`delivered`, `failed`), when the next attempt is due, and every attempt made (when, "
        "latency, the receiver's status or the error, outcome)."
    ),
    responses=problem_responses(400, 401, 404, 422),
)
def list_deliveries(
    webhook_id: str,
    tenant: TenantDep,
    catalog: CatalogDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[
        str | None, Query(description="`next_cursor` of the previous page (a delivery id).")
    ] = None,
) -> DeliveriesPublic:
    store = WebhookStore(catalog)
    page = store.deliveries(tenant.tenant_id, webhook_id, limit + 1, cursor)
    shown = page[:limit]
    attempts = store.attempts([d.delivery_id for d in shown])
    return DeliveriesPublic(
        deliveries=[DeliveryPublic.of(d, attempts[d.delivery_id]) for d in shown],
        next_cursor=shown[-1].delivery_id if len(page) > limit else None,
    )


@router.post(
    f"{_ONE}/deliveries/{{delivery_id}}/resend",
    status_code=202,
    summary="Send a delivery again",
    description=(
        "Makes the delivery pending and due now (same `webhook-id`, a new day of retries) and "
        "hands it to the `deliver-webhook` flow: a new attempt follows at once. 202 with the "
        "delivery; its new attempt shows in the deliveries list. Another workspace's ids answer "
        "404."
    ),
    responses=problem_responses(401, 404),
)
async def resend_delivery(
    webhook_id: str,
    delivery_id: str,
    tenant: TenantDep,
    catalog: CatalogDep,
    submitter: SubmitterDep,
) -> DeliveryPublic:
    store = WebhookStore(catalog)
    delivery = await to_thread.run_sync(store.resend, tenant.tenant_id, webhook_id, delivery_id)
    await sweep_deliveries(store, submitter)
    attempts = await to_thread.run_sync(store.attempts, [delivery_id])
    return DeliveryPublic.of(delivery, attempts[delivery_id])


# The endpoint's own routes come last: the fuzzer walks paths in order and a DELETE before the
# deliveries' routes would leave them nothing but 404s to check.
@router.get(
    _ONE,
    summary="Read a webhook endpoint",
    description="The endpoint (without its secret); another workspace's answers 404.",
    responses=problem_responses(401, 404),
)
def get_webhook(webhook_id: str, tenant: TenantDep, catalog: CatalogDep) -> WebhookPublic:
    return WebhookPublic.of(WebhookStore(catalog).endpoint(tenant.tenant_id, webhook_id))


@router.delete(
    _ONE,
    status_code=204,
    summary="Delete a webhook endpoint",
    description=(
        "Nothing more is sent to it: its pending deliveries fail. Its delivery log is kept but "
        "no longer listed. Another workspace's endpoint answers 404."
    ),
    responses={204: {"description": "Deleted."}, **problem_responses(401, 404)},
)
def delete_webhook(webhook_id: str, tenant: TenantDep, catalog: CatalogDep) -> Response:
    WebhookStore(catalog).delete_endpoint(tenant.tenant_id, webhook_id)
    return Response(status_code=204)
