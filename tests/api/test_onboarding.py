"""Operation 10 over real HTTP: a demo workspace from one request, rate-limited per address.

Most tests hold the runs (nothing processes them); the first hands its run to the real flow,
in a thread of this process under the session's Prefect harness.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.app import create_app
from flows.demo_clip import CLIP_NAME, ensure_demo_clip
from flows.orchestrator import Submitter
from storage.artifacts.blobs import open_blob_store
from storage.catalog.database import Catalog
from storage.catalog.rate_limits import RateLimit, RateLimiter
from storage.catalog.records import Run
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import VideoStore
from synthetic import GroundTruth, SceneSpec, write_video
from testkit.live_server import serve_app
from testkit.submitters import QuietSubmitter
from tests.api.conftest import InlineSubmitter
from tests.api.helpers import wait_done
from tests.fixtures.settings_env import export_settings
from ves.settings import Settings

DEMO = "/api/public/onboarding/demo-video"

DemoApi = Callable[..., str]


class HeldSubmitter(QuietSubmitter):
    """Takes every run and leaves it queued: these tests are about the workspace, not the run."""

    def __init__(self) -> None:
        self.runs: list[Run] = []

    async def submit(self, run: Run, *, concurrency: int) -> str:
        self.runs.append(run)
        return str(uuid.uuid4())


@pytest.fixture
def demo_api(settings: Settings, catalog: Catalog) -> Iterator[DemoApi]:
    """``demo_api(submitter=None, **overrides)``: the base URL of a live API with those settings;
    its runs go to ``submitter`` (default: held)."""
    with ExitStack() as stack:

        def make(submitter: Submitter | None = None, **overrides: object) -> str:
            app = create_app(
                settings.model_copy(update=overrides), catalog, submitter or HeldSubmitter()
            )
            return stack.enter_context(serve_app(app))

        yield make


@pytest.fixture
def inline(
    prefect_harness: None, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> Iterator[InlineSubmitter]:
    """A submitter that really processes, with the flow reading this test's data folder."""
    export_settings(monkeypatch, settings)
    submitter = InlineSubmitter()
    yield submitter
    for thread in submitter.threads:
        thread.join(timeout=120)


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every path the demo clip is encoded to (the real encoder still runs)."""
    encoded: list[Path] = []

    def counting(spec: SceneSpec, path: Path) -> GroundTruth:
        encoded.append(path)
        return write_video(spec, path)

    monkeypatch.setattr("flows.demo_clip.write_video", counting)
    return encoded


def _demo(url: str, client: httpx.Client | None = None, **body: object) -> httpx.Response:
    if client is not None:
        return client.post(f"{url}{DEMO}", json=body or None)
    return httpx.post(f"{url}{DEMO}", json=body or None, timeout=60)


def _created(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def _keyed(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_one_request_gives_a_newcomer_a_key_and_a_processed_demo(
    inline: InlineSubmitter, demo_api: DemoApi, settings: Settings
) -> None:
    url = demo_api(inline)
    response = _demo(url)
    body = _created(response)
    assert response.headers["cache-control"] == "no-store"
    assert body["state"] == "queued" and body["tenant_name"].startswith("demo-")
    assert body["dashboard_url"] == f"{settings.base_url}/dashboard?video={body['video_id']}"
    assert body["api_key"] not in body["dashboard_url"]
    # The key's secret (after "ves_<key id>_"; base64url, so it may hold "_" itself) is
    # nowhere in the URL. Its last "_" piece alone could be one character, found by chance.
    assert body["api_key"].split("_", 2)[2] not in body["dashboard_url"]
    with _keyed(url, body["api_key"]) as client:
        listing = client.get("/api/product/videos").json()
        assert [v["video_id"] for v in listing["data"]] == [body["video_id"]]
        video = wait_done(client, body["video_id"])
        assert video["state"] == "succeeded", video["latest_run"]
        assert video["latest_run"]["run_id"] == body["run_id"]
        assert video["source_sha256"] == _sha256(settings.data_dir / "demo" / CLIP_NAME)
        graph = client.get(f"/api/product/videos/{body['video_id']}/scene-graph").json()
        timeline = client.get(f"/api/product/videos/{body['video_id']}/timeline").json()
    assert len([o for o in graph["objects"] if o["class"] == "motion"]) >= 3
    texts = {o["attributes"]["text"] for o in graph["objects"] if o["class"] == "text"}
    assert texts == {"LOBBY", "EXIT 3"}  # the demo scene's two signs
    assert timeline["duration_s"] == pytest.approx(30.0, abs=0.2)
    assert [m["reason"] for m in timeline["refresh_markers"]] == ["start", "scene_change"]
    assert "scene_change" in {e["type"] for e in timeline["events"]}


def test_each_demo_is_a_tenant_of_its_own_and_the_clip_is_rendered_once(
    demo_api: DemoApi, settings: Settings, catalog: Catalog, renders: list[Path]
) -> None:
    url = demo_api()
    first, second = _created(_demo(url)), _created(_demo(url, name="Ada"))
    assert first["tenant_id"] != second["tenant_id"] and first["api_key"] != second["api_key"]
    assert second["tenant_name"].endswith(" (Ada)")
    with _keyed(url, second["api_key"]) as client:
        assert client.get(f"/api/product/videos/{first['video_id']}").status_code == 404
        listing = client.get("/api/product/videos").json()["data"]
        assert [v["video_id"] for v in listing] == [second["video_id"]]
        (made,) = client.get(f"/api/product/videos/{second['video_id']}/audit").json()["data"]
    assert (made["seq"], made["key_id"], made["outcome"]) == (1, "demo", 201)
    assert made["action"] == "POST /api/public/onboarding/demo-video"
    assert made["ids"] == {"run_id": second["run_id"]}
    assert len(renders) == 1
    clip = settings.data_dir / "demo" / CLIP_NAME
    for made in (first, second):
        video = VideoStore(catalog).get(made["tenant_id"], made["video_id"])
        assert video.state == "queued" and video.source_path is not None
        assert video.source_path.startswith(f"uploads/tenant={made['tenant_id']}/")
        source = open_blob_store(settings).local_path(video.source_path)
        if source is not None:  # the local store: a hard link, no bytes copied
            assert os.path.samefile(source, clip)
        assert video.source_sha256 == _sha256(clip)
    assert not list(settings.uploads_dir.glob(".staged-*"))


def test_the_fourth_demo_from_one_address_waits_while_another_address_gets_in(
    demo_api: DemoApi, settings: Settings, catalog: Catalog
) -> None:
    url = demo_api()
    for _ in range(3):
        _created(_demo(url))
    refused = _demo(url)
    assert refused.status_code == 429
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert refused.json()["code"] == "rate_limited"
    assert 590 <= int(refused.headers["retry-after"]) <= 600
    # Another loopback address, not one uvicorn trusts for proxy headers: its claim is ignored.
    transport = httpx.HTTPTransport(local_address="127.0.0.2")
    spoof = {"X-Forwarded-For": "203.0.113.9"}
    with httpx.Client(transport=transport, headers=spoof, timeout=60) as elsewhere:
        _created(_demo(url, elsewhere))
    rule = RateLimit("demo", settings.demo_rate_limit, settings.demo_rate_window_s)
    limiter = RateLimiter(catalog)
    counts = [limiter.count(rule, host) for host in ("127.0.0.1", "127.0.0.2", "203.0.113.9")]
    assert counts == [3, 1, 0]
    assert len(TenantStore(catalog).list_tenants()) == 4  # the refusal made nothing


def test_the_window_slides(demo_api: DemoApi, settings: Settings) -> None:
    ensure_demo_clip(settings.data_dir / "demo")  # so that no request waits for the render
    url = demo_api(demo_rate_limit=1, demo_rate_window_s=2.0)
    _created(_demo(url))
    refused = _demo(url)
    assert refused.status_code == 429
    assert refused.headers["retry-after"] in {"1", "2"}
    time.sleep(2.05)
    _created(_demo(url))


def test_parallel_requests_from_one_address_get_exactly_the_limit(
    demo_api: DemoApi, catalog: Catalog
) -> None:
    url = demo_api(demo_rate_limit=3)
    start = threading.Barrier(6)
    statuses: list[int] = []

    def ask() -> None:
        start.wait()
        statuses.append(_demo(url).status_code)

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(statuses) == [201, 201, 201, 429, 429, 429]
    assert len(TenantStore(catalog).list_tenants()) == 3


@pytest.mark.parametrize(
    "body",
    [
        {"name": ""},
        {"name": "   "},
        {"name": "x" * 81},
        {"name": "Ada\u0000"},
        {"name": 5},
        {"email": "not-an-address"},
        {"email": "ada@localhost"},
        {"email": "ada lovelace@example.com"},
        {"email": "a" * 60 + "@" + "b" * 190 + ".example"},  # 259 characters
        {"plan": "enterprise"},
        [],
    ],
)
def test_a_bad_body_is_refused_before_anything_is_made(
    demo_api: DemoApi, catalog: Catalog, body: object
) -> None:
    url = demo_api(demo_rate_limit=1)
    refused = httpx.post(f"{url}{DEMO}", json=body, timeout=30)
    assert refused.status_code == 422, refused.text
    assert refused.json()["code"] == "validation_error"
    assert TenantStore(catalog).list_tenants() == []
    _created(_demo(url, name="Ada", email="ada@example.com"))  # the refusal used no allowance


def test_an_unavailable_orchestrator_answers_503_and_fails_the_run(
    demo_api: DemoApi, catalog: Catalog
) -> None:
    down = InlineSubmitter()
    down.down = True
    response = _demo(demo_api(down))
    assert response.status_code == 503 and response.json()["code"] == "unavailable"
    (tenant,) = TenantStore(catalog).list_tenants()
    (video,) = VideoStore(catalog).list(tenant.tenant_id, state=None, limit=5, after=None).videos
    assert video.latest_run is not None
    assert (video.latest_run.state, video.latest_run.error_code) == (
        "failed",
        "orchestrator_unavailable",
    )


def test_the_route_is_documented(demo_api: DemoApi) -> None:
    spec = httpx.get(f"{demo_api()}/openapi.json", timeout=30).json()
    operation = spec["paths"][DEMO]["post"]
    assert operation["summary"] and "Retry-After" in operation["description"]
    assert {"201", "422", "429", "503"} <= set(operation["responses"])
    assert "security" not in operation  # no key
    examples = operation["requestBody"]["content"]["application/json"]["examples"]
    assert set(examples) == {"anonymous", "named"}
