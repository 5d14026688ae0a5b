"""The real topology, as `make run` starts it: `ves serve` (Prefect server, process worker, API)
in its own processes, a media server on this machine, and clients over HTTP.

It registers a video by URL, by HLS and by upload, executes all three to `succeeded` through
Prefect and reads their artifacts; reads the run back from `/metrics` and its trace from a
collector; checks the Prefect UI's queries, the retention sweep's schedule, `/readyz`, and that
the logs hold no error. Killing runs and the service is `test_e2e_failures.py`'s.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from synthetic import ground_truth, lobby_scene, write_video
from testkit.hls import write_hls
from testkit.media_server import MediaServer
from testkit.metrics import samples, scrape_until, value
from testkit.otlp import OtlpReceiver, ReceivedSpan
from testkit.service import Service, register_upload, serving, wait_video
from tests.fixtures.logs import log_entries, unexpected
from tests.fixtures.onnx_models import build_colour_detector

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MediaServer, Path]]:
    root = tmp_path_factory.mktemp("e2e-media")
    write_video(lobby_scene(), root / "lobby.mp4")
    write_hls(root / "lobby.mp4", root / "hls")
    with MediaServer(root) as server:
        yield server, root


@pytest.fixture(scope="module")
def otlp() -> Iterator[OtlpReceiver]:
    """The collector the service's processes export their traces to (OTLP over HTTP)."""
    with OtlpReceiver() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, otlp: OtlpReceiver) -> Iterator[Service]:
    with serving(
        tmp_path_factory.mktemp("e2e-data"),
        # Three videos run at once here; the sandbox plan allows two.
        VES_PLANS=json.dumps({"sandbox": {"concurrent_runs": 8}}),
        # Traces of the API and the flow runs go to the test's collector (standard variables).
        OTEL_EXPORTER_OTLP_ENDPOINT=otlp.endpoint,
    ) as service:
        yield service


def _near(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return abs(a[0] - b[0]) <= 1.0 and abs(a[1] - b[1]) <= 1.0


def assert_matches_truth(objects: list[dict[str, Any]]) -> None:
    """Each true object is found within 1 s and nothing else moves; each sign is a text object
    with its text and its interval (the default mode reads text)."""
    truth = ground_truth(lobby_scene())
    found = [(o["first_seen_s"], o["last_seen_s"]) for o in objects if o["class"] != "text"]
    expected = [(o.first_seen_s, o.last_seen_s) for o in truth.objects]
    assert len(found) == len(expected), found
    for interval in expected:
        assert sum(_near(f, interval) for f in found) == 1, (interval, found)
    texts = {
        o["attributes"]["text"]: (o["first_seen_s"], o["last_seen_s"])
        for o in objects
        if o["class"] == "text"
    }
    assert set(texts) == {t.text for t in truth.texts}
    for sign in truth.texts:
        assert _near(texts[sign.text], (sign.start_s, min(sign.end_s, 19.8))), (sign, texts)


def test_url_hls_and_upload_execute_to_succeeded_through_prefect(
    service: Service, media: tuple[MediaServer, Path]
) -> None:
    server, root = media
    _execute_three(service.client(), server, root)


def _execute_three(client: httpx.Client, server: MediaServer, root: Path) -> None:
    ids = [
        client.post(
            "/api/videos/add", json={"url": server.url("lobby.mp4"), "title": "url"}
        ).json()["video_id"],
        client.post(
            "/api/videos/add", json={"url": server.url("hls/index.m3u8"), "title": "hls"}
        ).json()["video_id"],
        register_upload(client, root / "lobby.mp4"),
    ]
    for video_id in ids:
        accepted = client.post(f"/api/product/videos/{video_id}/execute")
        assert accepted.status_code == 202, accepted.text
        # No processing inside the request: the run it answers with has not started. (How long
        # the requests take is the API benchmark's business, never a timed assertion here: a
        # loaded CI machine once took 17 s for these three while Prefect created the queue.)
        assert accepted.json()["state"] == "queued", accepted.text
    for video_id in ids:
        video = wait_video(client, video_id, {"succeeded", "failed"})
        assert video["state"] == "succeeded", video["latest_run"]
        graph = client.get(f"/api/product/videos/{video_id}/scene-graph").json()
        assert_matches_truth(graph["objects"])
        timeline = client.get(f"/api/product/videos/{video_id}/timeline").json()
        assert [round(m["t_s"]) for m in timeline["refresh_markers"]] == [0, 12]
        labels = [e["label"] for e in timeline["events"] if e["type"] == "text_seen"]
        assert sorted(label.split('"')[1] for label in labels) == ["EXIT 3", "LOBBY"]
        cost = client.get(f"/api/product/videos/{video_id}/cost").json()
        assert cost["frames"]["sampled"] == pytest.approx(100, abs=2)
        spans = client.get(f"/api/product/videos/{video_id}/evidence-view").json()["spans"]
        assert client.get(spans[0]["frames"][0]["thumbnail_url"]).status_code == 200


def test_metrics_and_traces_tell_of_a_run_and_the_requests_that_made_it(
    service: Service, media: tuple[MediaServer, Path], otlp: OtlpReceiver
) -> None:
    """Through ``ves serve``: /metrics counts the run, its stages and its execute request; the
    collector receives the run's span, a span per stage in its trace and the request's span."""
    client = service.client()
    before = samples(httpx.get(f"{service.url}/metrics", timeout=30).text)
    video_id = register_upload(client, media[1] / "lobby.mp4")
    accepted = client.post(f"/api/product/videos/{video_id}/execute")
    assert accepted.status_code == 202, accepted.text
    run_id = accepted.json()["run_id"]
    assert wait_video(client, video_id, {"succeeded", "failed"})["state"] == "succeeded"
    after = scrape_until(
        service.url,
        lambda now: (
            value(now, "ves_stage_seconds_count", stage="evidence")
            > value(before, "ves_stage_seconds_count", stage="evidence")
        ),
    )

    def grew(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew("ves_runs", state="succeeded") == 1
    for stage in ("decode", "sample", "detect", "track", "world_state", "evidence"):
        assert grew("ves_stage_seconds_count", stage=stage) == 1, stage
    route = "/api/product/videos/{video_id}/execute"
    assert grew("ves_http_requests_total", route=route, status_class="2xx") == 1
    assert grew("ves_processed_video_seconds_total") == pytest.approx(20.0, abs=0.5)

    def run_of(spans: list[ReceivedSpan]) -> list[ReceivedSpan]:
        return [s for s in spans if s.name == "run" and s.attributes.get("ves.run_id") == run_id]

    spans = otlp.wait_for(lambda spans: bool(run_of(spans)))
    (run,) = run_of(spans)
    assert run.attributes["prefect.flow_run.id"] and run.attributes["ves.video_id"] == video_id
    stages = {s.attributes.get("ves.stage"): s for s in spans if s.trace_id == run.trace_id}
    assert {"decode", "sample", "detect", "track", "world_state", "evidence"} <= set(stages)
    execute = otlp.wait_for(lambda spans: any(s.name == f"POST {route}" for s in spans))
    requests = [s for s in execute if s.name == f"POST {route}"]
    assert {s.attributes["ves.tenant_id"] for s in requests} == {run.attributes["ves.tenant_id"]}


def test_a_newcomers_single_post_yields_a_key_and_a_demo_that_succeeds(
    service: Service,
) -> None:
    with httpx.Client(base_url=service.url, timeout=120) as anonymous:
        created = anonymous.post("/api/public/onboarding/demo-video", json={"name": "Ada"})
    assert created.status_code == 201, created.text
    demo = created.json()
    assert demo["api_key"] not in demo["dashboard_url"]
    headers = {"Authorization": f"Bearer {demo['api_key']}"}
    with httpx.Client(base_url=service.url, headers=headers, timeout=30) as newcomer:
        video = wait_video(newcomer, demo["video_id"], {"succeeded", "failed"})
        assert video["state"] == "succeeded", video["latest_run"]
        graph = newcomer.get(f"/api/product/videos/{demo['video_id']}/scene-graph").json()
        assert {"motion", "text"} <= {o["class"] for o in graph["objects"]}
        billing = newcomer.get("/api/product/billing/state").json()
        assert billing["plan"]["name"] == "sandbox"
        assert (billing["usage"]["videos"], billing["usage"]["executions"]) == (1, 1)
        assert billing["usage"]["processed_s"] == pytest.approx(30.0, abs=0.5)


def test_a_yolo_model_runs_end_to_end_and_a_bad_one_falls_back_visibly(
    service: Service, media: tuple[MediaServer, Path]
) -> None:
    models = Path(service.env["VES_DATA_DIR"]) / "models"
    models.mkdir(exist_ok=True)
    build_colour_detector(models / "colours.onnx", (320, 320), dynamic_batch=True)
    client = service.client()
    server, _ = media
    runs = {
        "colours.onnx": {"detector": "yolo+ocr", "yolo_model": "colours.onnx"},
        "missing.onnx": {"detector": "yolo", "yolo_model": "missing.onnx"},
    }
    ids = {}
    for name, body in runs.items():
        added = client.post("/api/videos/add", json={"url": server.url("lobby.mp4"), "title": name})
        ids[name] = added.json()["video_id"]
        assert client.post(f"/api/product/videos/{ids[name]}/execute", json=body).status_code == 202
    for video_id in ids.values():
        assert wait_video(client, video_id, {"succeeded", "failed"})["state"] == "succeeded"
    yolo = client.get(f"/api/product/videos/{ids['colours.onnx']}/scene-graph").json()
    assert sorted(o["class"] for o in yolo["objects"]) == ["blue", "red", "text", "text"]
    cost = client.get(f"/api/product/videos/{ids['colours.onnx']}/cost").json()
    assert (cost["detector_mode"], cost["fallback"]["used"]) == ("yolo+ocr", False)
    fallback = client.get(f"/api/product/videos/{ids['missing.onnx']}/cost").json()
    assert fallback["detector_mode"] == "motion" and fallback["fallback"]["used"] is True
    assert "missing.onnx does not exist" in fallback["fallback"]["reason"]


def test_prefect_ui_queries_show_each_runs_cost_report_and_events(service: Service) -> None:
    """The pinned FastAPI/Prefect pair: the UI's artifact queries answer (FastAPI >= 0.151
    broke them for Prefect 3.8.8), and each succeeded run attached its two artifacts."""
    prefect = f"http://127.0.0.1:{service.env['VES_PREFECT_PORT']}/api"
    with httpx.Client(timeout=30) as client:
        artifacts = client.post(f"{prefect}/artifacts/filter", json={"limit": 50})
        latest = client.post(f"{prefect}/artifacts/latest/filter", json={"limit": 50})
        flows = client.post(f"{prefect}/flow_runs/filter", json={"limit": 50})
        ui = client.get(f"http://127.0.0.1:{service.env['VES_PREFECT_PORT']}/")
    assert artifacts.status_code == 200 and latest.status_code == 200, artifacts.text
    kinds = {(a["type"], a["key"].split("-")[0]) for a in artifacts.json()}
    assert {("markdown", "cost"), ("table", "events")} <= kinds
    assert sum(f["state_type"] == "COMPLETED" for f in flows.json()) >= 3
    assert ui.status_code == 200 and "<html" in ui.text.lower()


def _prefect_api(service: Service) -> httpx.Client:
    return httpx.Client(
        base_url=f"http://127.0.0.1:{service.env['VES_PREFECT_PORT']}/api", timeout=30
    )


def _scheduled_runs(prefect: httpx.Client, deployment_id: str) -> list[dict[str, Any]]:
    body = {
        "deployments": {"id": {"any_": [deployment_id]}},
        "flow_runs": {"state": {"type": {"any_": ["SCHEDULED"]}}},
    }
    runs: list[dict[str, Any]] = prefect.post("/flow_runs/filter", json=body).json()
    return runs


def _wait_flow_run(prefect: httpx.Client, flow_run_id: str, timeout_s: float = 180) -> str:
    deadline = time.monotonic() + timeout_s
    state = "?"
    while time.monotonic() < deadline:
        state = prefect.get(f"/flow_runs/{flow_run_id}").json()["state_type"]
        if state in {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}:
            return str(state)
        time.sleep(1)
    raise AssertionError(f"flow run {flow_run_id} still {state} after {timeout_s} s")


def test_the_hourly_retention_sweep_is_scheduled_and_a_run_of_it_completes(
    service: Service,
) -> None:
    """Prefect's scheduler creates the cron's runs (it failed every loop under SQLAlchemy 2.1),
    and the deployment runs to Completed on the service's own worker."""
    with _prefect_api(service) as prefect:
        deployment = prefect.get("/deployments/name/retention-sweep/retention-sweep").json()
        deadline = time.monotonic() + 60
        while not (scheduled := _scheduled_runs(prefect, deployment["id"])):
            assert time.monotonic() < deadline, "the scheduler created no runs in 60 s"
            time.sleep(2)
        for run in scheduled:
            start = run["expected_start_time"]
            assert run["auto_scheduled"] and start[14:19] == "00:00", start  # cron "0 * * * *"
        made = prefect.post(f"/deployments/{deployment['id']}/create_flow_run", json={})
        for _ in range(5):  # a busy Prefect server answers 503; its own client retries those
            if made.status_code != 503:
                break
            time.sleep(2)
            made = prefect.post(f"/deployments/{deployment['id']}/create_flow_run", json={})
        assert made.status_code == 201, made.text
        assert _wait_flow_run(prefect, made.json()["id"]) == "COMPLETED"


def test_readyz_names_every_part_and_ves_status_agrees(service: Service) -> None:
    ready = httpx.get(f"{service.url}/readyz", timeout=30)
    assert ready.status_code == 200, ready.text
    body = ready.json()
    parts = [
        "catalog",
        "artifact_storage",
        "prefect_api",
        "worker",
        "scheduler",
        "person_detector",
    ]
    assert list(body["checks"]) == parts and body["failing"] == []
    assert all(c["state"] == "ok" and c["latency_ms"] >= 0 for c in body["checks"].values())
    assert "scheduled runs of retention-sweep" in body["checks"]["scheduler"]["detail"]
    status = subprocess.run(
        [sys.executable, "-m", "cli.main", "status"],
        env=service.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert status.returncode == 0, status.stdout + status.stderr
    lines = status.stdout.splitlines()
    assert [line.split()[:2] for line in lines[:-1]] == [[p, "ok"] for p in parts]
    assert lines[-1] == "ready"


def test_log_entries_group_a_traceback_with_its_line_and_count_a_lost_lock() -> None:
    text = (
        "18:11:03.336 | ERROR   | x - Worker channel heartbeat persistence failed: w\n"
        "Traceback (most recent call last):\nsqlite3.OperationalError: database is locked\n"
        "18:11:04.000 | INFO    | x - fine\n"
        "18:11:05.000 | WARNING | x - retrying: database is locked\n"
        "18:11:06.000 | INFO    | x - also fine\n"
    )
    entries = log_entries(text)
    assert [n for n, _ in entries] == [1, 4, 5, 6]
    assert [unexpected(lines) for _, lines in entries] == [True, False, True, False]


def test_logs_hold_no_error_after_a_full_start_and_processed_videos(service: Service) -> None:
    data = Path(service.env["VES_DATA_DIR"])
    logs = [data / "logs" / "prefect-server.log", data / "logs" / "prefect-worker.log"]
    logs.append(data / "api.log")
    found = []
    for log in logs:
        assert log.is_file(), log
        for number, lines in log_entries(log.read_text(errors="replace")):
            if unexpected(lines):
                found.append(f"{log.name}:{number}: {lines[0][:300]}")
    assert not found, "\n".join(found)
