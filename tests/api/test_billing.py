"""Plans, usage and billing state over real HTTP: limits stop work with 402 before it starts,
parallel requests at a limit pass exactly as many times as allowed, counters equal the actions."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

from api.app import create_app
from storage.artifacts.blobs import open_blob_store
from storage.catalog.database import Catalog
from storage.catalog.records import Run
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.usage import ALL, UsageStore, month_of
from testkit.live_server import serve_app
from testkit.media_server import MediaServer
from testkit.submitters import QuietSubmitter
from tests.api.conftest import InlineSubmitter
from tests.api.helpers import expect_problem
from ves.clock import now_rfc3339
from ves.plans import PlanLimits
from ves.settings import Settings

Limited = Callable[..., httpx.Client]


class ParkedSubmitter(QuietSubmitter):
    """Accepts every run and starts none: runs stay ``queued`` (what limits count)."""

    def __init__(self) -> None:
        self.concurrency: list[int] = []

    async def submit(self, run: Run, *, concurrency: int) -> str:
        self.concurrency.append(concurrency)
        return str(uuid.uuid4())


@pytest.fixture
def limited(settings: Settings, catalog: Catalog, tenants: TenantStore) -> Iterator[Limited]:
    """``limited(videos=2, ...)``: a client of a fresh tenant on an API whose sandbox plan has
    those limits (and the rest of the defaults)."""
    with ExitStack() as stack:

        def make(submitter: Any = None, max_queued_runs: int = 20, **limits: Any) -> httpx.Client:
            plans = {"sandbox": PlanLimits(**limits)}
            app = create_app(
                settings.model_copy(update={"plans": plans, "max_queued_runs": max_queued_runs}),
                catalog,
                submitter or ParkedSubmitter(),
            )
            url = stack.enter_context(serve_app(app))
            tenant = tenants.create_tenant(f"t-{uuid.uuid4().hex[:8]}")
            _, key = tenants.create_key(tenant.tenant_id)
            headers = {"Authorization": f"Bearer {key}"}
            return stack.enter_context(httpx.Client(base_url=url, headers=headers, timeout=60))

        yield make


def _add(client: httpx.Client, media: MediaServer) -> httpx.Response:
    return client.post("/api/videos/add", json={"url": media.url("clip.mp4"), "title": "t"})


def _state(client: httpx.Client) -> dict[str, Any]:
    response = client.get("/api/product/billing/state")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _limit_problem(response: httpx.Response, limit: str, value: float) -> None:
    body = expect_problem(response, 402, "plan_limit_exceeded")
    assert (body["limit"], body["value"]) == (limit, value)
    assert limit in body["detail"]


def test_a_new_tenant_sees_the_sandbox_plan_and_nothing_used(limited: Limited) -> None:
    state = _state(limited())
    assert state["plan"]["name"] == "sandbox"
    assert state["plan"]["limits"] == PlanLimits().model_dump()
    usage = state["usage"]
    assert (usage["videos"], usage["executions"], usage["asks"], usage["storage_bytes"]) == (
        0,
        0,
        0,
        0,
    )
    assert usage["period_start"].endswith("-01") and usage["period_start"][:7] == now_rfc3339()[:7]
    assert state["remaining"]["executions"] == 50 and state["status"] == "active"


def test_the_videos_limit_stops_registration_with_402(limited: Limited, media: MediaServer) -> None:
    client = limited(videos=2)
    assert [_add(client, media).status_code for _ in range(2)] == [201, 201]
    _limit_problem(_add(client, media), "videos", 2)
    state = _state(client)
    assert state["usage"]["videos"] == 2 and state["remaining"]["videos"] == 0
    assert (state["status"], state["exhausted"]) == ("limited", ["videos"])
    assert len(client.get("/api/product/videos").json()["data"]) == 2  # nothing half-written


def test_beyond_concurrent_runs_a_run_waits_in_line_and_executions_stay_402(
    limited: Limited, media: MediaServer
) -> None:
    parked = ParkedSubmitter()
    client = limited(parked, executions_per_month=2, concurrent_runs=1)
    ids = [_add(client, media).json()["video_id"] for _ in range(3)]
    # The parked orchestrator starts none: both runs wait, second in line; the tenant's queue
    # in the orchestrator is told to run one at a time.
    assert [client.post(f"/api/product/videos/{v}/execute").status_code for v in ids[:2]] == [
        202,
        202,
    ]
    lines = [client.get(f"/api/product/videos/{v}").json()["latest_run"] for v in ids[:2]]
    assert [(r["state"], r["queue_position"]) for r in lines] == [("queued", 1), ("queued", 2)]
    assert parked.concurrency == [1, 1]
    _limit_problem(client.post(f"/api/product/videos/{ids[2]}/execute"), "executions_per_month", 2)
    assert client.get(f"/api/product/videos/{ids[2]}").json()["state"] == "registered"
    state = _state(client)
    assert (state["usage"]["executions"], state["usage"]["active_runs"]) == (2, 2)


def test_past_the_bound_on_queued_runs_execute_is_429_with_retry_after(
    limited: Limited, media: MediaServer
) -> None:
    client = limited(max_queued_runs=2, concurrent_runs=1)
    ids = [_add(client, media).json()["video_id"] for _ in range(3)]
    assert [client.post(f"/api/product/videos/{v}/execute").status_code for v in ids[:2]] == [
        202,
        202,
    ]
    refused = client.post(f"/api/product/videos/{ids[2]}/execute")
    problem = expect_problem(refused, 429, "rate_limited")
    assert "2 runs" in problem["detail"] and int(refused.headers["Retry-After"]) >= 1
    state = _state(client)  # refused before anything was counted
    assert (state["usage"]["executions"], state["usage"]["active_runs"]) == (2, 2)
    assert client.get(f"/api/product/videos/{ids[2]}").json()["state"] == "registered"


def test_parallel_executes_at_the_queue_bound_pass_exactly_as_often_as_allowed(
    limited: Limited, media: MediaServer
) -> None:
    client = limited(max_queued_runs=3, concurrent_runs=1, videos=50)
    ids = [_add(client, media).json()["video_id"] for _ in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(
            pool.map(lambda v: client.post(f"/api/product/videos/{v}/execute").status_code, ids)
        )
    assert sorted(statuses) == [202] * 3 + [429] * 5
    assert _state(client)["usage"]["executions"] == 3


def test_a_stretch_longer_than_the_plan_allows_is_402(limited: Limited, media: MediaServer) -> None:
    client = limited(max_video_s=60)
    video_id = _add(client, media).json()["video_id"]
    response = client.post(f"/api/product/videos/{video_id}/execute", json={"max_duration_s": 120})
    _limit_problem(response, "max_video_s", 60)
    assert _state(client)["usage"]["executions"] == 0  # refused before anything was counted


def test_parallel_executes_at_the_limit_pass_exactly_as_often_as_allowed(
    limited: Limited, media: MediaServer
) -> None:
    client = limited(executions_per_month=3, concurrent_runs=50, videos=50)
    ids = [_add(client, media).json()["video_id"] for _ in range(8)]

    def execute(video_id: str) -> int:
        return client.post(f"/api/product/videos/{video_id}/execute").status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(execute, ids))
    assert sorted(statuses) == [202] * 3 + [402] * 5
    assert _state(client)["usage"]["executions"] == 3
    states = [client.get(f"/api/product/videos/{v}").json()["state"] for v in ids]
    assert sorted(states) == ["queued"] * 3 + ["registered"] * 5


def test_counters_equal_the_actions_of_a_run_that_succeeded(
    processing: Any, lobby_media: MediaServer, catalog: Catalog, settings: Settings
) -> None:
    client = processing("acme")
    video_id = client.post(
        "/api/videos/add", json={"url": lobby_media.url("lobby.mp4"), "title": "lobby"}
    ).json()["video_id"]
    run_id = client.post(f"/api/product/videos/{video_id}/execute").json()["run_id"]
    from tests.api.helpers import wait_done

    assert wait_done(client, video_id)["state"] == "succeeded"
    asked = [
        client.post(f"/api/product/videos/{video_id}/ask", json={"question": q})
        for q in (
            "How many objects appeared?",
            "Did a helicopter land?",
        )
    ]
    assert [a.status_code for a in asked] == [200, 200]
    run = RunStore(catalog).get(run_id)
    store = open_blob_store(settings)
    cost = json.loads(store.get_bytes(f"{run.artifacts_path}/cost.json"))
    kept = sum(blob.size for blob in store.list(run.artifacts_path or ""))
    state = _state(client)["usage"]
    assert (state["videos"], state["executions"], state["asks"]) == (1, 1, 2)
    assert state["processed_s"] == pytest.approx(cost["processed_s"], abs=1e-3)
    assert state["storage_bytes"] == run.artifacts_bytes == kept
    tenant = run.tenant_id
    usage = UsageStore(catalog)
    assert usage.value(tenant, month_of(now_rfc3339()), "executions") == 1
    assert usage.value(tenant, ALL, "storage_bytes") == kept


def test_parallel_asks_at_the_daily_limit_pass_exactly_as_often_as_allowed(
    executed: tuple[httpx.Client, str, dict[str, Any]],
    settings: Settings,
    catalog: Catalog,
    submitter: InlineSubmitter,
) -> None:
    client, video_id, _ = executed
    plans = {"sandbox": PlanLimits(asks_per_day=3)}
    app = create_app(settings.model_copy(update={"plans": plans}), catalog, submitter)
    with serve_app(app) as url:
        key = client.headers["Authorization"]
        with httpx.Client(base_url=url, headers={"Authorization": key}, timeout=60) as capped:

            def ask(_: int) -> int:
                body = {"question": "How many objects appeared?"}
                return capped.post(f"/api/product/videos/{video_id}/ask", json=body).status_code

            with ThreadPoolExecutor(max_workers=8) as pool:
                statuses = list(pool.map(ask, range(8)))
            assert sorted(statuses) == [200] * 3 + [402] * 5
            refused = capped.post(
                f"/api/product/videos/{video_id}/ask", json={"question": "What text is visible?"}
            )
            _limit_problem(refused, "asks_per_day", 3)
            assert _state(capped)["usage"]["asks"] == 3
