"""A live HLS stream through the real topology, as `make run` starts it: `ves serve` (Prefect
server, process worker, API) in its own processes, and a local live HLS server whose segments
appear over time. The .m3u8 is registered, executed with follow and a small window, the scene
graph read over HTTP as it grows, the session stopped, and it ends succeeded."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from synthetic import lobby_scene
from testkit.live_hls import LiveHls
from testkit.live_server import free_port
from testkit.service import (
    create_key,
    own_env,
    start_service,
    stop_service,
    wait_for_banner,
    wait_video,
)

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    data = tmp_path_factory.mktemp("live-data")
    env = {
        **own_env(),
        "VES_DATA_DIR": str(data),
        "VES_PORT": str(free_port()),
        "VES_PREFECT_PORT": str(free_port()),
        "VES_LOG_LEVEL": "warning",
        "VES_ALLOW_PRIVATE_SOURCES": "true",  # the live server is on this machine
    }
    process = start_service(env)
    try:
        wait_for_banner(process)
        headers = {"Authorization": f"Bearer {create_key(env, 'e2e-live')}"}
        url = f"http://127.0.0.1:{env['VES_PORT']}"
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            yield client
    finally:
        stop_service(process)


def _graph(client: httpx.Client, video_id: str) -> dict[str, Any] | None:
    answer = client.get(f"/api/product/videos/{video_id}/scene-graph")
    return answer.json() if answer.status_code == 200 else None


def _until(check: Any, timeout_s: float = 240) -> Any:
    deadline = time.monotonic() + timeout_s
    while not (found := check()):
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.5)
    return found


def test_a_live_stream_is_processed_window_by_window(client: httpx.Client, tmp_path: Path) -> None:
    live = LiveHls(lobby_scene(), tmp_path / "hls", history=3, keep=6).start()
    try:
        added = client.post("/api/videos/add", json={"url": live.url, "title": "camera"})
        assert added.status_code == 201, added.text
        video_id = added.json()["video_id"]
        base = f"/api/product/videos/{video_id}"
        accepted = client.post(f"{base}/execute", json={"window_s": 4, "follow": True})
        assert accepted.status_code == 202, accepted.text
        first = _until(lambda: _graph(client, video_id))
        assert first["run_id"] == accepted.json()["run_id"]
        video = client.get(base).json()
        assert video["state"] == "running" and "window" in video["latest_run"]["stage"]
        grown = _until(
            lambda: (g := _graph(client, video_id)) and g["run_id"] != first["run_id"] and g
        )
        assert len(grown["objects"]) >= len(first["objects"])
        timeline = client.get(f"{base}/timeline").json()
        assert timeline["duration_s"] > 4.0  # two windows so far at least
        stop = client.post(f"{base}/runs/{accepted.json()['run_id']}/stop")
        assert stop.status_code == 202, stop.text
        final = wait_video(client, video_id, {"succeeded", "failed"})
    finally:
        live.stop()
    assert final["state"] == "succeeded", final["latest_run"]
    assert final["latest_run"]["run_id"] == stop.json()["run_id"]
    again = client.post(f"{base}/runs/{accepted.json()['run_id']}/stop")
    assert again.status_code == 409
