"""Webhooks through the real topology, as `make run` starts it: `ves serve` (Prefect server,
process worker, API) in its own processes, and a real receiver on 127.0.0.1. A run's end reaches
the receiver as a verified, signed `run.succeeded`, sent by the `deliver-webhook` deployment on
the worker; the receiver answers its first attempt slowly and with a 500, and the retry (a
scheduled flow run, after the backoff) is accepted. Meanwhile runs go on: the first run had
finished before its delivery arrived, and a second one finishes while the receiver still sleeps.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from synthetic import SceneSpec, write_video
from testkit.live_server import free_port
from testkit.service import (
    create_key,
    own_env,
    register_upload,
    start_service,
    stop_service,
    wait_for_banner,
    wait_video,
)
from tests.fixtures.webhook_receiver import Script, WebhookReceiver
from ves.webhook_signature import verify

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

SLEEP_S = 30.0  # the receiver's first answer waits this long (within the delivery timeout)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    data = tmp_path_factory.mktemp("webhooks-data")
    env = {
        **own_env(),
        "VES_DATA_DIR": str(data),
        "VES_PORT": str(free_port()),
        "VES_PREFECT_PORT": str(free_port()),
        "VES_LOG_LEVEL": "warning",
        "VES_ALLOW_PRIVATE_SOURCES": "true",  # the receiver is on 127.0.0.1
        "VES_WEBHOOK_RETRY_BASE_S": "2",
        "VES_WEBHOOK_TIMEOUT_S": str(SLEEP_S * 2),
    }
    process = start_service(env)
    try:
        wait_for_banner(process)
        headers = {"Authorization": f"Bearer {create_key(env, 'e2e-webhooks')}"}
        url = f"http://127.0.0.1:{env['VES_PORT']}"
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            yield client
    finally:
        stop_service(process)


def _settled(client: httpx.Client, path: str, count: int, timeout_s: float = 240) -> list[Any]:
    """The endpoint's ``count`` deliveries, oldest first, once none is pending."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        deliveries = client.get(path).json()["deliveries"]
        if len(deliveries) == count and all(d["state"] != "pending" for d in deliveries):
            return list(reversed(deliveries))
        time.sleep(0.5)
    raise AssertionError(f"{path}: still pending")


def test_a_run_reaches_a_real_receiver_signed_and_retried(
    client: httpx.Client, tmp_path: Path
) -> None:
    write_video(SceneSpec(duration_s=2.0), tmp_path / "a.mp4")
    write_video(SceneSpec(duration_s=2.5), tmp_path / "b.mp4")
    first_video = register_upload(client, tmp_path / "a.mp4", "first")
    second_video = register_upload(client, tmp_path / "b.mp4", "second")
    script = Script(statuses=[500, 204], sleep_first_s=SLEEP_S)
    with WebhookReceiver(script) as receiver:
        hook = client.post(
            "/api/product/webhooks", json={"url": receiver.url, "events": ["run.succeeded"]}
        )
        assert hook.status_code == 201, hook.text
        webhook = hook.json()
        run_id = client.post(f"/api/product/videos/{first_video}/execute").json()["run_id"]
        receiver.wait_for(1, timeout_s=240)
        # The run had ended before its delivery was sent: the receiver holds up nothing.
        assert client.get(f"/api/product/videos/{first_video}").json()["state"] == "succeeded"
        assert client.post(f"/api/product/videos/{second_video}/execute").status_code == 202
        second = wait_video(client, second_video, {"succeeded", "failed"})
        answered_yet = len(receiver.answered)
        assert second["state"] == "succeeded" and answered_yet == 0, (second, answered_yet)
        received = receiver.wait_for(3, timeout_s=240)  # A (slow 500), B, A's retry
        path = f"/api/product/webhooks/{webhook['webhook_id']}/deliveries"
        of_first, of_second = _settled(client, path, 2)
    by_id: dict[str, list[Any]] = {}
    for got in received:
        stamp = int(got.headers["webhook-timestamp"])
        signature = got.headers["webhook-signature"]
        assert verify(webhook["secret"], got.headers["webhook-id"], stamp, got.body, signature)
        by_id.setdefault(got.headers["webhook-id"], []).append(json.loads(got.body))
    assert [len(by_id[of_first["delivery_id"]]), len(by_id[of_second["delivery_id"]])] == [2, 1]
    event = by_id[of_first["delivery_id"]][-1]
    assert event["type"] == "run.succeeded"
    assert event["data"]["run_id"] == run_id and event["data"]["video_id"] == first_video
    assert by_id[of_second["delivery_id"]][0]["data"]["video_id"] == second_video
    log = [(a["attempt"], a["response_status"], a["outcome"]) for a in of_first["attempt_log"]]
    assert of_first["state"] == "delivered" and log == [(1, 500, "retrying"), (2, 204, "delivered")]
    assert of_first["attempt_log"][0]["latency_ms"] >= SLEEP_S * 1000  # the slow answer, logged
    assert of_second["state"] == "delivered"
