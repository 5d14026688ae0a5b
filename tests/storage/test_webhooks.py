"""The webhook outbox: events are written with the change they tell of, one delivery per
subscribed endpoint of the tenant; endpoints are scoped to their tenant."""

from __future__ import annotations

import pytest

from storage.catalog.database import Catalog
from storage.catalog.exports import Bundle, ExportStore
from storage.catalog.runs.store import RunFailure, RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from storage.catalog.webhooks.store import WebhookStore
from ves.errors import Conflict, NotFound, PlanLimitExceeded, ValidationFailed
from ves.plans import PlanLimits

ALL = ["run.succeeded", "run.failed", "export.ready", "usage.limit_reached"]


@pytest.fixture
def hooks(catalog: Catalog) -> WebhookStore:
    return WebhookStore(catalog)


@pytest.fixture
def acme(tenants: TenantStore) -> str:
    return tenants.create_tenant("acme").tenant_id


def new_run(catalog: Catalog, tenant_id: str, limits: PlanLimits | None = None) -> str:
    video = VideoStore(catalog).create(
        NewVideo(tenant_id, "clip", "url", "https://media.example.com/a.mp4")
    )
    return RunStore(catalog).create(tenant_id, video.video_id, {}, limits).run_id


def pending(hooks: WebhookStore, tenant_id: str, webhook_id: str) -> list[tuple[str, dict]]:
    return [
        (d.event_type, d.payload)
        for d in hooks.deliveries(tenant_id, webhook_id, 100)
        if d.state == "pending"
    ]


def test_a_run_that_succeeds_is_told_to_the_endpoints_that_want_it(
    catalog: Catalog, hooks: WebhookStore, tenants: TenantStore, acme: str
) -> None:
    wants = hooks.create_endpoint(acme, "https://a.example.com/h", ["run.succeeded"], None, 10)
    other_event = hooks.create_endpoint(acme, "https://b.example.com/h", ["run.failed"], None, 10)
    globex = tenants.create_tenant("globex").tenant_id
    other_tenant = hooks.create_endpoint(globex, "https://c.example.com/h", ALL, None, 10)
    runs = RunStore(catalog)
    run_id = new_run(catalog, acme)
    assert runs.start(run_id)
    assert runs.succeed(run_id, "artifacts/x", 12.0, 100)
    [(event, payload)] = pending(hooks, acme, wants.webhook_id)
    run = runs.get(run_id)
    assert event == payload["type"] == "run.succeeded"
    assert payload["data"]["run_id"] == run_id and payload["data"]["video_id"] == run.video_id
    assert payload["data"]["state"] == "succeeded"
    assert payload["data"]["finished_at"] == run.finished_at
    assert payload["data"]["links"]["video"] == f"/api/product/videos/{run.video_id}"
    assert pending(hooks, acme, other_event.webhook_id) == []
    assert pending(hooks, globex, other_tenant.webhook_id) == []


def test_a_failed_run_is_told_with_its_reason_whoever_failed_it(
    catalog: Catalog, hooks: WebhookStore, acme: str
) -> None:
    endpoint = hooks.create_endpoint(acme, "https://a.example.com/h", ["run.failed"], None, 10)
    runs = RunStore(catalog)
    by_flow = new_run(catalog, acme)
    runs.fail(by_flow, RunFailure("source_invalid", "not a video"))
    runs.fail(by_flow, RunFailure("source_invalid", "not a video"))  # ended already: no event
    reaped = new_run(catalog, acme)
    assert runs.start(reaped)
    assert runs.fail_silent(-1.0) == [reaped]  # the reaper's path (every heartbeat is old)
    told = pending(hooks, acme, endpoint.webhook_id)
    assert sorted(p["data"]["run_id"] for _, p in told) == sorted([by_flow, reaped])
    errors = {p["data"]["run_id"]: p["data"]["error"]["code"] for _, p in told}
    assert errors == {by_flow: "source_invalid", reaped: "processing_stopped"}


def test_an_export_that_succeeds_is_told(catalog: Catalog, hooks: WebhookStore, acme: str) -> None:
    endpoint = hooks.create_endpoint(acme, "https://a.example.com/h", ["export.ready"], None, 10)
    runs = RunStore(catalog)
    run_id = new_run(catalog, acme)
    runs.start(run_id)
    runs.succeed(run_id, "artifacts/x")
    exports = ExportStore(catalog)
    export = exports.create(acme, runs.get(run_id).video_id, run_id, None, {})
    assert exports.start(export.export_id)
    assert exports.succeed(export.export_id, Bundle("k", 42, "ab" * 32, "ed25519:k"))
    [(event, payload)] = pending(hooks, acme, endpoint.webhook_id)
    assert event == "export.ready"
    assert payload["data"]["export_id"] == export.export_id
    assert payload["data"]["bundle"] == {
        "bytes": 42,
        "sha256": "ab" * 32,
        "signing_key_id": "ed25519:k",
    }


def test_a_plan_limit_is_told_once_per_limit_and_month(
    catalog: Catalog, hooks: WebhookStore, acme: str
) -> None:
    endpoint = hooks.create_endpoint(
        acme, "https://a.example.com/h", ["usage.limit_reached"], None, 10
    )
    limits = PlanLimits(executions_per_month=1)
    new_run(catalog, acme, limits)
    for _ in range(3):
        with pytest.raises(PlanLimitExceeded):
            new_run(catalog, acme, limits)
    [(event, payload)] = pending(hooks, acme, endpoint.webhook_id)
    assert event == "usage.limit_reached"
    assert payload["data"]["limit"] == "executions_per_month"
    assert payload["data"]["value"] == 1 and payload["data"]["used"] == 1


def test_a_run_whose_success_uses_up_a_limit_tells_it_once(
    catalog: Catalog, hooks: WebhookStore, acme: str
) -> None:
    """Reaching a limit is told when the run that reached it succeeds, before any execute is
    refused: one 40 s run on a 60 s plan does not reach it, a second does; the execute then
    refused tells nothing more (once per limit and month)."""
    endpoint = hooks.create_endpoint(
        acme, "https://a.example.com/h", ["usage.limit_reached"], None, 10
    )
    limits = PlanLimits(processed_s_per_month=60.0)
    runs = RunStore(catalog)
    for _ in range(2):
        run_id = new_run(catalog, acme, limits)
        assert runs.start(run_id)
        assert runs.succeed(run_id, "/published", 40.0, 10, limits)
        told = pending(hooks, acme, endpoint.webhook_id)
    [(event, payload)] = told
    assert event == "usage.limit_reached"
    assert payload["data"]["limit"] == "processed_s_per_month"
    assert (payload["data"]["value"], payload["data"]["used"]) == (60.0, 80.0)
    with pytest.raises(PlanLimitExceeded):
        new_run(catalog, acme, limits)
    assert len(pending(hooks, acme, endpoint.webhook_id)) == 1  # once per limit and month


def test_endpoints_are_scoped_checked_and_bounded(
    hooks: WebhookStore, tenants: TenantStore, acme: str
) -> None:
    globex = tenants.create_tenant("globex").tenant_id
    mine = hooks.create_endpoint(acme, "https://a.example.com/h", ["run.failed"], "x", 2)
    assert mine.secret.startswith("whsec_")
    with pytest.raises(NotFound):
        hooks.endpoint(globex, mine.webhook_id)
    with pytest.raises(NotFound):
        hooks.delete_endpoint(globex, mine.webhook_id)
    with pytest.raises(ValidationFailed):
        hooks.create_endpoint(acme, "https://a.example.com/h", ["run.exploded"], None, 2)
    hooks.create_endpoint(acme, "https://a.example.com/h", ["run.failed"], None, 2)
    with pytest.raises(Conflict):
        hooks.create_endpoint(acme, "https://a.example.com/h", ["run.failed"], None, 2)
    hooks.delete_endpoint(acme, mine.webhook_id)
    with pytest.raises(NotFound):
        hooks.endpoint(acme, mine.webhook_id)
    assert len(hooks.endpoints(acme)) == 1


def test_deliveries_page_newest_first(catalog: Catalog, hooks: WebhookStore, acme: str) -> None:
    endpoint = hooks.create_endpoint(acme, "https://a.example.com/h", ["run.failed"], None, 10)
    runs = RunStore(catalog)
    for _ in range(3):
        runs.fail(new_run(catalog, acme), RunFailure("source_invalid", "not a video"))
    everything = [d.delivery_id for d in hooks.deliveries(acme, endpoint.webhook_id, 10)]
    assert everything == sorted(everything, reverse=True) and len(everything) == 3
    first = hooks.deliveries(acme, endpoint.webhook_id, 2)
    rest = hooks.deliveries(acme, endpoint.webhook_id, 2, before=first[-1].delivery_id)
    assert [d.delivery_id for d in first + rest] == everything
