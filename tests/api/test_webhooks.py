"""Webhook endpoints over HTTP, and a real run told to a real receiver on 127.0.0.1: signed,
retried after a 500, logged per attempt."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest

from api.app import create_app
from storage.catalog.database import Catalog
from storage.catalog.records import Run
from storage.catalog.tenants import TenantStore
from storage.catalog.webhooks.store import Delivery
from testkit.live_server import serve_app
from testkit.media_server import MediaServer
from testkit.submitters import QuietSubmitter
from tests.api.helpers import add_video, wait_done
from tests.conftest import Client
from tests.fixtures.webhook_receiver import Script, WebhookReceiver
from ves.clock import from_rfc3339
from ves.plans import PlanLimits
from ves.settings import Settings
from ves.webhook_signature import verify

HOOKS = "/api/product/webhooks"


def register(client: httpx.Client, url: str, events: list[str] | None = None) -> dict[str, Any]:
    body = {"url": url, "events": events or ["run.succeeded", "run.failed"]}
    response = client.post(HOOKS, json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def test_the_secret_is_shown_once_and_the_endpoint_is_listed(client: httpx.Client) -> None:
    created = register(client, "http://127.0.0.1:9/hook", ["export.ready"])
    assert created["secret"].startswith("whsec_") and created["events"] == ["export.ready"]
    one = client.get(f"{HOOKS}/{created['webhook_id']}")
    listed = client.get(HOOKS).json()["webhooks"]
    assert one.status_code == 200 and "secret" not in one.json()
    assert [w["webhook_id"] for w in listed] == [created["webhook_id"]]
    assert created["secret"] not in one.text + json.dumps(listed)
    deliveries = client.get(f"{HOOKS}/{created['webhook_id']}/deliveries").json()
    assert deliveries == {"deliveries": [], "next_cursor": None}
    assert client.delete(f"{HOOKS}/{created['webhook_id']}").status_code == 204
    assert client.get(f"{HOOKS}/{created['webhook_id']}").status_code == 404
    assert client.get(HOOKS).json()["webhooks"] == []


def test_bad_endpoints_are_refused(client: httpx.Client) -> None:
    unknown = client.post(HOOKS, json={"url": "http://127.0.0.1:9/", "events": ["run.exploded"]})
    assert unknown.status_code == 422 and unknown.json()["code"] == "validation_error"
    scheme = client.post(HOOKS, json={"url": "ftp://127.0.0.1/x", "events": ["run.failed"]})
    assert scheme.status_code == 422 and scheme.json()["code"] == "source_rejected"
    metadata = {"url": "http://169.254.169.254/latest", "events": ["run.failed"]}
    refused = client.post(HOOKS, json=metadata)
    assert refused.status_code == 422 and refused.json()["code"] == "source_rejected"


def test_a_private_address_is_refused_unless_allowed(
    client_with: Callable[..., httpx.Client],
) -> None:
    strict = client_with(allow_private_sources=False)
    for url in ("http://127.0.0.1:8080/hook", "http://10.1.2.3/hook", "http://[::1]/hook"):
        answer = strict.post(HOOKS, json={"url": url, "events": ["run.failed"]})
        assert answer.status_code == 422, (url, answer.text)
        assert answer.json()["code"] == "source_rejected"
    assert strict.get(HOOKS).json()["webhooks"] == []


def test_a_workspace_has_a_bounded_number_of_endpoints(
    client_with: Callable[..., httpx.Client],
) -> None:
    bounded = client_with(webhook_endpoints_max=2)
    for _ in range(2):
        register(bounded, "http://127.0.0.1:9/hook")
    third = bounded.post(HOOKS, json={"url": "http://127.0.0.1:9/h", "events": ["run.failed"]})
    assert third.status_code == 409 and third.json()["code"] == "conflict"


def test_another_workspaces_endpoint_is_not_found(client_for: Client) -> None:
    acme, globex = client_for("acme"), client_for("globex")
    created = register(acme, "http://127.0.0.1:9/hook")
    one = f"{HOOKS}/{created['webhook_id']}"
    assert globex.get(one).status_code == 404
    assert globex.get(f"{one}/deliveries").status_code == 404
    assert globex.post(f"{one}/deliveries/msg_x/resend").status_code == 404
    assert globex.delete(one).status_code == 404
    assert globex.get(HOOKS).json()["webhooks"] == []
    assert acme.get(one).status_code == 200


def wait_for_state(client: httpx.Client, path: str, state: str, timeout_s: float = 90) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        deliveries = client.get(path).json()["deliveries"]
        if deliveries and deliveries[0]["state"] == state:
            return dict(deliveries[0])
        time.sleep(0.3)
    raise AssertionError(f"no delivery reached {state}: {client.get(path).json()}")


def test_a_run_is_told_signed_and_retried_after_a_500(
    processing: Any, lobby_media: MediaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VES_WEBHOOK_RETRY_BASE_S", "1")  # the flow reads its settings from env
    client = processing("acme")
    with WebhookReceiver(Script(statuses=[500, 204])) as receiver:
        hook = register(client, receiver.url)
        video_id = add_video(client, lobby_media.url("lobby.mp4"))
        run_id = client.post(f"/api/product/videos/{video_id}/execute").json()["run_id"]
        assert wait_done(client, video_id)["state"] == "succeeded"
        first, second = receiver.wait_for(2, timeout_s=90)
        path = f"{HOOKS}/{hook['webhook_id']}/deliveries"
        delivery = wait_for_state(client, path, "delivered")
    for got in (first, second):
        assert got.headers["webhook-id"] == delivery["delivery_id"]
        stamp = int(got.headers["webhook-timestamp"])
        assert verify(
            hook["secret"],
            got.headers["webhook-id"],
            stamp,
            got.body,
            got.headers["webhook-signature"],
        )
    event = json.loads(second.body)
    assert event["type"] == "run.succeeded" and event["data"]["run_id"] == run_id
    assert event["data"]["video_id"] == video_id and event == delivery["payload"]
    log = [(a["attempt"], a["response_status"], a["outcome"]) for a in delivery["attempt_log"]]
    assert log == [(1, 500, "retrying"), (2, 204, "delivered")]
    started = [from_rfc3339(a["started_at"]) for a in delivery["attempt_log"]]
    assert started[1] - started[0] >= timedelta(seconds=0.8)  # not before the backoff's time


def test_a_delivery_can_be_sent_again_by_hand(processing: Any, lobby_media: MediaServer) -> None:
    client = processing("acme")
    with WebhookReceiver() as receiver:
        hook = register(client, receiver.url)
        video_id = add_video(client, lobby_media.url("lobby.mp4"))
        client.post(f"/api/product/videos/{video_id}/execute")
        assert wait_done(client, video_id)["state"] == "succeeded"
        path = f"{HOOKS}/{hook['webhook_id']}/deliveries"
        delivery = wait_for_state(client, path, "delivered")
        resent = client.post(f"{path}/{delivery['delivery_id']}/resend")
        assert resent.status_code == 202 and resent.json()["state"] == "pending"
        again = receiver.wait_for(2)
    assert again[0].body == again[1].body
    assert again[0].headers["webhook-id"] == again[1].headers["webhook-id"]


class RecordingSubmitter(QuietSubmitter):
    """Takes runs and deliveries, runs and sends nothing, remembers the deliveries handed over."""

    def __init__(self) -> None:
        self.deliveries: list[str] = []

    async def submit(self, run: Run, *, concurrency: int) -> str:
        return f"fr-{run.run_id}"

    async def submit_delivery(self, delivery: Delivery, *, swept: bool = False) -> str:
        self.deliveries.append(delivery.delivery_id)
        return f"fr-{delivery.delivery_id}"


def test_a_refused_execute_is_told_once_and_handed_over_at_once(
    settings: Settings, catalog: Catalog, tenants: TenantStore, media: MediaServer
) -> None:
    submitter = RecordingSubmitter()
    plans = {"sandbox": PlanLimits(executions_per_month=1)}
    app = create_app(settings.model_copy(update={"plans": plans}), catalog, submitter)
    tenant = tenants.create_tenant("acme")
    key = tenants.create_key(tenant.tenant_id)[1]
    with (
        serve_app(app) as url,
        httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as client,
    ):
        hook = register(client, "http://127.0.0.1:9/hook", ["usage.limit_reached"])
        video_id = add_video(client, media.url("clip.mp4"))
        assert client.post(f"/api/product/videos/{video_id}/execute").status_code == 202
        other = add_video(client, media.url("clip.mp4"))
        for _ in range(2):
            refused = client.post(f"/api/product/videos/{other}/execute")
            assert refused.status_code == 402, refused.text
        listed = client.get(f"{HOOKS}/{hook['webhook_id']}/deliveries").json()["deliveries"]
    [delivery] = listed
    assert delivery["event_type"] == "usage.limit_reached" and delivery["state"] == "pending"
    assert delivery["payload"]["data"]["limit"] == "executions_per_month"
    assert delivery["payload"]["data"]["value"] == 1 and delivery["payload"]["data"]["used"] == 1
    assert submitter.deliveries[:1] == [delivery["delivery_id"]]  # handed over by the 402


def test_an_export_is_told_when_its_bundle_is_ready(
    processing: Any, lobby_media: MediaServer
) -> None:
    client = processing("acme")
    with WebhookReceiver() as receiver:
        hook = register(client, receiver.url, ["export.ready"])
        video_id = add_video(client, lobby_media.url("lobby.mp4"))
        client.post(f"/api/product/videos/{video_id}/execute")
        assert wait_done(client, video_id)["state"] == "succeeded"
        accepted = client.post(f"/api/product/videos/{video_id}/exports", json={})
        assert accepted.status_code == 202, accepted.text
        [got] = receiver.wait_for(1, timeout_s=180)
        export = client.get(
            f"/api/product/videos/{video_id}/exports/{accepted.json()['export_id']}"
        ).json()
    stamp = int(got.headers["webhook-timestamp"])
    signature = got.headers["webhook-signature"]
    assert verify(hook["secret"], got.headers["webhook-id"], stamp, got.body, signature)
    event = json.loads(got.body)
    assert event["type"] == "export.ready" and export["state"] == "succeeded"
    assert event["data"]["export_id"] == export["export_id"]
    assert event["data"]["bundle"]["sha256"] == export["bundle"]["sha256"]
    assert event["data"]["links"]["bundle"] == export["bundle"]["download_url"]
