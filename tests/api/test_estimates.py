"""Execute's dry run and caps over real HTTP: an estimate that runs and counts nothing, made
from the source's header (or HLS playlist) or, when that cannot be read, from the bound with the
reason; caps that are validated as problem+json, and an estimate that learns the video from its
first run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from storage.catalog.database import Catalog
from synthetic import SceneSpec, lobby_scene
from testkit.hls import write_hls
from testkit.media_server import MediaServer
from tests.api.helpers import add_video, expect_problem, wait_done
from ves.plans import PlanLimits

STAGES = {"decode", "sample", "detect", "track", "world_state", "timeline", "evidence", "cost"}


def _execute(client: httpx.Client, video_id: str, **body: Any) -> httpx.Response:
    return client.post(f"/api/product/videos/{video_id}/execute", json=body)


def _runs(catalog: Catalog) -> int:
    with catalog.read() as conn:
        return int(conn.exec_driver_sql("SELECT count(*) FROM runs").scalar() or 0)


def _counted(catalog: Catalog) -> float:
    """Executions and processed seconds counted for anyone, ever."""
    query = "SELECT sum(value) FROM usage WHERE metric IN ('executions', 'processed_s')"
    with catalog.read() as conn:
        return float(conn.exec_driver_sql(query).scalar() or 0)


def test_a_dry_run_answers_the_estimate_and_runs_nothing(
    client: httpx.Client, lobby_media: MediaServer, catalog: Catalog
) -> None:
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    answer = _execute(client, video_id, dry_run=True, max_compute_s=30, sample_fps=2)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["video_id"] == video_id and body["dry_run"] is True
    estimate = body["estimate"]
    # A URL never processed: its container header says the length (the lobby: 20 s at 10 fps).
    lobby = lobby_scene()
    assert estimate["duration_known"] is True and estimate["duration_from"] == "header"
    assert estimate["duration_s"] == pytest.approx(lobby.duration_s, abs=0.05)
    assert estimate["frames_analysed"] == 20 * 2 and estimate["frames_decoded"] == 20 * 10
    header = estimate["header"]
    assert header["reason"] is None and header["keyframe_interval_s"] == pytest.approx(2.0)
    assert (header["width"], header["height"], header["fps"]) == (320, 240, 10.0)
    assert 0 < header["bytes_read"] <= header["size_bytes"]
    assert set(estimate["stages"]) >= STAGES
    assert estimate["compute_s"] == pytest.approx(sum(estimate["stages"].values()), abs=0.01)
    assert estimate["wall_s"] > 0
    assert estimate["model"] == {"source": "fallback", "runs_used": 0, "fitted_at": None}
    assert estimate["units"] == {"video_minutes": pytest.approx(20 / 60, abs=1e-3)}
    assert body["plan"]["name"] == "sandbox"
    assert body["plan"]["left"]["executions"] == PlanLimits().executions_per_month
    assert body["caps"]["max_compute_s"] == 30
    assert body["would_be_refused"] is None
    # Nothing was queued or counted; the only trace is the audit record.
    video = client.get(f"/api/product/videos/{video_id}").json()
    assert video["state"] == "registered" and video["latest_run"] is None
    assert _runs(catalog) == 0 and _counted(catalog) == 0
    audit = client.get(f"/api/product/videos/{video_id}/audit").json()["data"]
    assert ("POST /api/product/videos/{video_id}/execute", 200) in [
        (r["action"], r["outcome"]) for r in audit
    ]


def test_a_header_that_cannot_be_read_leaves_the_bound_and_says_why(
    client: httpx.Client, lobby_media: MediaServer
) -> None:
    video_id = add_video(client, lobby_media.url("junk.mp4"))
    body = _execute(client, video_id, dry_run=True, max_compute_s=30, sample_fps=2).json()
    estimate = body["estimate"]
    assert estimate["duration_known"] is False and estimate["duration_from"] == "bound"
    assert estimate["duration_s"] == 600  # the bound, at the assumed 25 fps
    assert estimate["frames_analysed"] == 600 * 2 and estimate["frames_decoded"] == 600 * 25
    assert estimate["header"]["reason"] == "not_video" and estimate["header"]["detail"]
    assert 0 < body["caps"]["stops_at_s"] < 600


def test_the_dry_run_of_a_source_the_guard_now_refuses_contacts_nothing(
    client: httpx.Client,
    client_with: Callable[..., httpx.Client],
    lobby_media: MediaServer,
) -> None:
    url = lobby_media.url("lobby.mp4")
    video_id = add_video(client, url)  # registered while the operator allowed this machine
    guarded = client_with(allow_private_sources=False)
    expect_problem(  # registering it now is refused, as before
        guarded.post("/api/videos/add", json={"url": url, "title": "x"}), 422, "source_rejected"
    )
    served = len(lobby_media.requests)
    body = _execute(guarded, video_id, dry_run=True).json()
    estimate = body["estimate"]
    assert estimate["duration_from"] == "bound" and estimate["header"]["reason"] == "refused"
    assert "loopback" in estimate["header"]["detail"]
    assert len(lobby_media.requests) == served  # the guard refused before any request


@pytest.fixture(scope="module")
def hls_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hls")
    playlist = write_hls(SceneSpec(duration_s=6.0), root).read_text()
    live = playlist.replace("#EXT-X-ENDLIST", "").replace("#EXT-X-PLAYLIST-TYPE:VOD", "")
    (root / "live.m3u8").write_text(live)
    return root


@pytest.mark.parametrize(
    ("name", "duration_from", "duration_s"),
    [("index.m3u8", "playlist", 6.0), ("live.m3u8", "live_window", PlanLimits().live_window_s)],
)
def test_an_hls_estimate_reads_the_playlist(
    client: httpx.Client, hls_root: Path, name: str, duration_from: str, duration_s: float
) -> None:
    with MediaServer(hls_root) as server:
        video_id = add_video(client, server.url(name))
        estimate = _execute(client, video_id, dry_run=True).json()["estimate"]
    assert estimate["duration_from"] == duration_from
    assert estimate["duration_s"] == pytest.approx(duration_s, abs=0.05)
    assert estimate["header"]["live"] is (name == "live.m3u8")
    assert estimate["duration_known"] is (name == "index.m3u8")


def test_the_dry_run_prices_the_run_and_says_when_the_plan_would_refuse_it(
    client_with: Callable[..., httpx.Client], lobby_media: MediaServer
) -> None:
    plans = {"sandbox": PlanLimits(executions_per_month=0)}
    client = client_with(price_per_video_minute=0.06, plans=plans)
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    body = _execute(client, video_id, dry_run=True, max_cost=0.01).json()
    estimate = body["estimate"]
    assert estimate["duration_s"] == pytest.approx(10.0)  # 0.01 / 0.06 a minute, of 20 s
    assert estimate["price"] == {"per_video_minute": 0.06, "amount": 0.01, "currency": "USD"}
    refused = body["would_be_refused"]
    assert refused["status"] == 402 and refused["code"] == "plan_limit_exceeded"
    assert refused["limit"] == "executions_per_month"
    expect_problem(_execute(client, video_id), 402, "plan_limit_exceeded")  # as execute answers


@pytest.mark.parametrize(
    "body",
    [
        {"max_compute_s": -1},
        {"max_compute_s": 0},
        {"max_compute_s": 1e9},
        {"max_compute_s": "a lot"},
        {"max_cost": 0},
        {"max_cost": -0.5},
        {"max_cost": 1e12},
        {"dry_run": True, "max_cost": -1},
    ],
)
def test_caps_out_of_range_are_refused_as_problems(
    client: httpx.Client, lobby_media: MediaServer, body: dict[str, Any]
) -> None:
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    problem = expect_problem(_execute(client, video_id, **body), 422, "validation_error")
    assert any(e["loc"][-1] in body for e in problem["errors"])  # type: ignore[union-attr]


def test_caps_that_cannot_cover_the_start_are_refused_with_the_minimum(
    client_with: Callable[..., httpx.Client], lobby_media: MediaServer, catalog: Catalog
) -> None:
    client = client_with(price_per_video_minute=0.06)
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    minimum = _execute(client, video_id, dry_run=True).json()["caps"]["minimum_compute_s"]
    problem = expect_problem(
        _execute(client, video_id, max_compute_s=0.001), 422, "validation_error"
    )
    [error] = problem["errors"]  # type: ignore[misc]
    assert error["loc"] == ["body", "max_compute_s"] and error["minimum"] == minimum
    problem = expect_problem(_execute(client, video_id, max_cost=0.0001), 422, "validation_error")
    assert problem["errors"][0]["loc"] == ["body", "max_cost"]  # type: ignore[index]
    assert _runs(catalog) == 0


@pytest.mark.slow
def test_after_a_run_the_estimate_knows_the_video(
    processing: Any, lobby_media: MediaServer
) -> None:
    client = processing("acme")
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    assert _execute(client, video_id, detector="motion").status_code == 202
    assert wait_done(client, video_id)["state"] == "succeeded"
    cost = client.get(f"/api/product/videos/{video_id}/cost").json()
    estimate = _execute(client, video_id, dry_run=True, detector="motion").json()["estimate"]
    assert estimate["duration_known"] is True and estimate["duration_from"] == "previous_run"
    assert estimate["duration_s"] == pytest.approx(cost["duration_s"])
    assert estimate["frames_analysed"] == cost["frames"]["analysed"]
    assert estimate["model"]["source"] == "fallback"  # one run of the mode is not enough
