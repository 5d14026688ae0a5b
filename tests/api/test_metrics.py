"""``GET /metrics``: a processed video's run, its stages and the API requests it made read back
from the Prometheus text; the operator token; every exported metric documented; no tenant content
in labels."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from api.app import create_app
from api.metrics.readiness import ReadinessCollector
from flows.readiness import Check, Readiness
from storage.catalog.database import Catalog
from testkit.live_server import serve_app
from testkit.media_server import MediaServer
from testkit.metrics import scrape_until, value
from testkit.submitters import QuietSubmitter
from tests.api.helpers import add_video, expect_problem, wait_done
from ves.settings import Settings

DOC = Path(__file__).resolve().parents[2] / "docs" / "reference" / "metrics.md"


def test_a_processed_video_is_read_back_from_the_metrics(
    processing: Any, lobby_media: MediaServer, settings: Settings
) -> None:
    client = processing("acme")
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    assert client.post(f"/api/product/videos/{video_id}/execute").status_code == 202
    assert wait_done(client, video_id)["state"] == "succeeded"
    for _ in range(2):  # rendered once, then answered from the read cache
        assert client.get(f"/api/product/videos/{video_id}/scene-graph").status_code == 200
    scrape = scrape_until(
        str(client.base_url).rstrip("/"),
        lambda now: value(now, "ves_stage_seconds_count", stage="evidence") == 1,
    )
    scraped = httpx.get(f"{client.base_url}/metrics", timeout=30)
    assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
    assert value(scrape, "ves_runs", state="succeeded") == 1
    for stage in ("sample", "detect", "track"):
        assert value(scrape, "ves_stage_seconds_count", stage=stage) == 1, stage
    frames = client.get(f"/api/product/videos/{video_id}/cost").json()["frames"]
    for kind, recorded in (("decoded", "decoded"), ("sampled", "analysed"), ("skipped", "skipped")):
        assert value(scrape, "ves_frames_total", kind=kind) == frames[recorded], kind
    assert value(scrape, "ves_frames_total", kind="sampled") > 0
    assert value(scrape, "ves_read_cache_requests_total", outcome="hit") >= 1
    assert value(scrape, "ves_read_cache_requests_total", outcome="miss") >= 1
    assert value(scrape, "ves_read_cache_bytes") > 0
    ready = {dict(labels)["check"]: v for (n, labels), v in scrape.items() if n == "ves_ready"}
    assert set(ready) == {
        "catalog",
        "artifact_storage",
        "prefect_api",
        "worker",
        "scheduler",
        "person_detector",
    }
    assert ready["catalog"] == ready["artifact_storage"] == 1
    assert value(scrape, "ves_processed_video_seconds_total") == 20.0  # the lobby: 20 s
    route = "/api/product/videos/{video_id}/execute"
    assert value(scrape, "ves_http_requests_total", route=route, status_class="2xx") == 1
    assert value(scrape, "ves_http_request_duration_seconds_count", route=route) == 1
    polled = value(scrape, "ves_http_requests_total", route="/api/product/videos/{video_id}")
    assert polled >= 1
    tenant = client.get("/api/product/billing/state").json()
    assert tenant["usage"]["storage_bytes"] > 0
    assert (
        max(v for (n, _), v in scrape.items() if n == "ves_storage_bytes")
        == tenant["usage"]["storage_bytes"]
    )
    assert video_id not in scraped.text and "lobby" not in scraped.text  # ids and titles never


def test_the_operator_token_guards_metrics(settings: Settings, catalog: Catalog) -> None:
    guarded = settings.model_copy(update={"metrics_token": SecretStr("s3cret-operator")})
    with serve_app(create_app(guarded, catalog, QuietSubmitter())) as url:
        expect_problem(httpx.get(f"{url}/metrics"), 401, "unauthorized")
        wrong = {"Authorization": "Bearer nope"}
        expect_problem(httpx.get(f"{url}/metrics", headers=wrong), 401, "unauthorized")
        right = {"Authorization": "Bearer s3cret-operator"}
        assert httpx.get(f"{url}/metrics", headers=right).status_code == 200
    beyond = settings.model_copy(update={"host": "0.0.0.0"})
    with serve_app(create_app(beyond, catalog, QuietSubmitter())) as url:
        refused = expect_problem(httpx.get(f"{url}/metrics"), 401, "unauthorized")
        assert "VES_METRICS_TOKEN" in str(refused["detail"])


def test_guessing_the_operator_token_is_refused_as_guessing_a_key_is(
    settings: Settings, catalog: Catalog
) -> None:
    update = {"metrics_token": SecretStr("s3cret-operator"), "auth_fail_limit": 3}
    with serve_app(
        create_app(settings.model_copy(update=update), catalog, QuietSubmitter())
    ) as url:
        for guess in ("a", "b", "c"):
            wrong = {"Authorization": f"Bearer {guess}"}
            expect_problem(httpx.get(f"{url}/metrics", headers=wrong), 401, "unauthorized")
        right = {"Authorization": "Bearer s3cret-operator"}
        limited = httpx.get(f"{url}/metrics", headers=right)  # even the right one, for a while
        expect_problem(limited, 429, "rate_limited")
        assert int(limited.headers["Retry-After"]) >= 1


def test_every_exported_metric_is_documented(settings: Settings, catalog: Catalog) -> None:
    with serve_app(create_app(settings, catalog, QuietSubmitter())) as url:
        httpx.get(f"{url}/healthz")
        httpx.get(f"{url}/api/product/videos")  # a 401: the refusals' series exist
        text = httpx.get(f"{url}/metrics").text
    exported = {f.name for f in text_string_to_metric_families(text) if f.name.startswith("ves_")}
    documented = set(re.findall(r"^\| `(ves_\w+)` \|", DOC.read_text(), flags=re.MULTILINE))
    assert exported - documented == set(), "undocumented: add them to docs/reference/metrics.md"
    assert documented - exported <= {"ves_http_rate_limited"}, "documented, never exported"


def test_readiness_is_checked_beside_the_scrape_never_in_its_way() -> None:
    """A check that hangs (Prefect not answering) leaves the scrape without those samples; the
    next scrape after it ends has them; a fresh result is kept for ``ttl_s``."""
    gate, calls = threading.Event(), []

    def check() -> Readiness:
        calls.append(1)
        gate.wait(10)
        return Readiness(
            {"catalog": Check("ok", 2.0, "answers"), "prefect_api": Check("down", 3.0, "x")}
        )

    collector = ReadinessCollector(check, ttl_s=60, wait_s=0.05)
    assert [f.samples for f in collector.collect()] == [[], []]  # still checking: nothing yet
    gate.set()
    deadline = time.monotonic() + 10
    while not (families := list(collector.collect()))[0].samples:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    up = {s.labels["check"]: s.value for s in families[0].samples}
    assert up == {"catalog": 1.0, "prefect_api": 0.0}
    assert {s.labels["check"]: s.value for s in families[1].samples}["catalog"] == 0.002
    list(collector.collect())
    assert len(calls) == 1  # within ttl_s: not checked again
