"""The real topology under failures: `ves serve` processes a 90 s video in two chunks and tells
the truth of it as of one piece; a flow run killed mid-way ends `failed` with its progress shown
before; the whole service killed mid-run (a power cut) fails the run on its next start, and no
run stays stuck.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import time
import warnings
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from synthetic import ground_truth, lobby_scene, scale_scene, write_video
from testkit.media_server import MediaServer
from testkit.service import (
    Service,
    alive,
    descendants,
    flow_processes,
    serving,
    start_service,
    wait_for_banner,
    wait_video,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.e2e,
    # This module kills the service under its own HTTP clients; httpcore then drops sockets of
    # the dead server's connections without closing them. That is test-side noise about the
    # clients, not the service, so it is silenced here and collected at the module's end.
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


LONG = replace(scale_scene(lobby_scene(), width=640, height=360, duration_s=90), noise=2.0)


@pytest.fixture(scope="module", autouse=True)
def _collect_dropped_sockets() -> Iterator[None]:
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MediaServer]:
    root = tmp_path_factory.mktemp("e2e-failures-media")
    write_video(LONG, root / "long.mp4")
    with MediaServer(root) as server:
        yield server


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    # The 90 s clip is split in two chunks (at a keyframe near 40 s) on the thread pool.
    with serving(tmp_path_factory.mktemp("e2e-failures-data"), VES_CHUNK_S="40") as service:
        yield service


def test_a_long_video_in_chunks_tells_the_truth_of_one_piece(
    service: Service, media: MediaServer
) -> None:
    """The 90 s lobby (every time x 4.5) runs as two chunks in the worker's flow process; its
    objects and signs are those of the truth, each once, whatever crosses the 40 s border."""
    client = service.client()
    video_id = _run_long(client, media)
    done = wait_video(client, video_id, {"succeeded", "failed"}, timeout_s=300)
    assert done["state"] == "succeeded", done
    cost = client.get(f"/api/product/videos/{video_id}/cost").json()
    assert "join" in cost["stages"], cost["stages"]  # it was split
    graph = client.get(f"/api/product/videos/{video_id}/scene-graph").json()
    truth = ground_truth(LONG)
    objects = graph["objects"]
    movers = [(o["first_seen_s"], o["last_seen_s"]) for o in objects if o["class"] != "text"]
    assert len(movers) == len(truth.objects), movers
    for obj in truth.objects:
        interval = (obj.first_seen_s, obj.last_seen_s)
        assert sum(abs(a - interval[0]) <= 2 and abs(b - interval[1]) <= 2 for a, b in movers) == 1
    texts = [o["attributes"]["text"] for o in graph["objects"] if o["class"] == "text"]
    assert sorted(texts) == sorted(t.text for t in truth.texts)


def _run_long(client: httpx.Client, server: MediaServer) -> str:
    """Register and execute the 90 s clip (long enough to be caught running)."""
    body = {"url": server.url("long.mp4"), "title": "long"}
    video_id = str(client.post("/api/videos/add", json=body).json()["video_id"])
    assert client.post(f"/api/product/videos/{video_id}/execute").status_code == 202
    return video_id


def test_progress_is_visible_and_a_killed_flow_ends_failed(
    service: Service, media: MediaServer
) -> None:
    client = service.client()
    video_id = _run_long(client, media)
    running = wait_video(client, video_id, {"running"})
    deadline = time.monotonic() + 60
    while running["latest_run"]["stage"] in {None, "decode"} and time.monotonic() < deadline:
        running = client.get(f"/api/product/videos/{video_id}").json()
        time.sleep(0.1)
    assert running["state"] == "running", running
    assert running["latest_run"]["stage"] in {"sample", "detect", "track", "world_state"}
    assert 0 < running["latest_run"]["progress"] < 1
    flows = flow_processes(service.process.pid)
    assert flows, "no flow-run process found"
    for pid in flows:
        os.kill(pid, signal.SIGKILL)
    failed = wait_video(client, video_id, {"failed", "succeeded"}, timeout_s=90)
    assert failed["state"] == "failed"
    assert failed["latest_run"]["error"]["code"] == "processing_stopped"
    assert "execute" in failed["latest_run"]["error"]["message"]
    assert client.get(f"/api/product/videos/{video_id}/scene-graph").status_code == 409


def test_a_service_killed_mid_run_fails_the_run_on_its_next_start(
    service: Service, media: MediaServer
) -> None:
    client = service.client()
    video_id = _run_long(client, media)
    wait_video(client, video_id, {"running"})
    client.close()  # its pooled connection would point at a dead server
    everything = [service.process.pid, *descendants(service.process.pid)]
    for pid in everything:
        with contextlib.suppress(ProcessLookupError):  # gone already, with its parent
            os.kill(pid, signal.SIGKILL)  # a power cut: nobody gets to clean up
    service.process.wait(timeout=10)
    if service.process.stdout:
        service.process.stdout.close()
    deadline = time.monotonic() + 20
    while any(alive(pid) for pid in everything) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(9)  # longer than the heartbeat timeout
    service.process = start_service(service.env)
    wait_for_banner(service.process)
    failed = wait_video(service.client(), video_id, {"failed", "succeeded"}, timeout_s=60)
    assert failed["state"] == "failed"
    assert failed["latest_run"]["error"]["code"] == "processing_stopped"
    data = Path(service.env["VES_DATA_DIR"])
    assert not (data / "work" / failed["latest_run"]["run_id"]).exists()
