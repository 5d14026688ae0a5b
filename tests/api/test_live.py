"""Live HLS over real HTTP: execute a live stream with follow, read it grow, stop it.

The runs really process (``InlineSubmitter``: the real flow in a thread); the stream is a local
live HLS server whose segments appear over time (``testkit.live_hls``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from synthetic import lobby_scene
from testkit.live_hls import LiveHls
from tests.api.helpers import add_video, expect_problem, wait_done

pytestmark = pytest.mark.slow


@pytest.fixture
def stream(tmp_path: Path) -> Iterator[LiveHls]:
    live = LiveHls(lobby_scene(), tmp_path / "hls", history=4, keep=6).start()
    yield live
    live.stop()


def _until(check: Any, seconds: float = 120.0) -> Any:
    deadline = time.monotonic() + seconds
    while not (found := check()):
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.2)
    return found


def test_a_followed_stream_grows_and_stops_on_request(processing: Any, stream: LiveHls) -> None:
    client: httpx.Client = processing("acme")
    video_id = add_video(client, stream.url)
    base = f"/api/product/videos/{video_id}"
    too_long = client.post(f"{base}/execute", json={"window_s": 100000, "follow": True})
    assert expect_problem(too_long, 402, "plan_limit_exceeded")["limit"] == "live_window_max_s"
    accepted = client.post(f"{base}/execute", json={"window_s": 4, "follow": True})
    assert accepted.status_code == 202, accepted.text
    first_run = accepted.json()["run_id"]

    def published() -> dict[str, Any] | None:
        answer = client.get(f"{base}/scene-graph")
        return answer.json() if answer.status_code == 200 else None

    graph = _until(published)
    assert graph["run_id"] == first_run
    video = client.get(base).json()
    assert video["state"] == "running"  # the next window follows
    stage = video["latest_run"]["stage"]  # e.g. "window 2: following"
    assert stage.startswith("window ") and not stage.startswith("window 1:"), stage
    grown = _until(lambda: (g := published()) and g["run_id"] != first_run and g)
    assert len(grown["objects"]) >= len(graph["objects"])

    expect_problem(processing("other").post(f"{base}/runs/{first_run}/stop"), 404, "not_found")
    expect_problem(client.post(f"{base}/runs/run_nosuchrun/stop"), 404, "not_found")
    stopped = client.post(f"{base}/runs/{first_run}/stop")
    assert stopped.status_code == 202, stopped.text
    assert stopped.json()["run_id"] != first_run  # the session's current window
    final = wait_done(client, video_id)
    assert final["state"] == "succeeded"
    assert final["latest_run"]["run_id"] == stopped.json()["run_id"]
    expect_problem(client.post(f"{base}/runs/{first_run}/stop"), 409, "conflict")
