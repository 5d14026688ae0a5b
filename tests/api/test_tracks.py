"""The tracked boxes route over real HTTP, on the lobby processed by the real flow (known
truth), and the object names it shares with every other answer."""

from __future__ import annotations

import bisect
from typing import Any

import httpx
import pytest

from synthetic import lobby_scene
from synthetic.scene import position_at
from testkit.media_server import MediaServer
from tests.api.helpers import add_video, expect_problem

pytestmark = pytest.mark.slow

Executed = tuple[httpx.Client, str, dict[str, Any]]
SCENE = lobby_scene()
FRAME_W, FRAME_H = SCENE.width, SCENE.height
WALKER = next(o for o in SCENE.objects if o.name == "walker")  # red, left to right 0.5-8.5 s


def box_at(rows: dict[str, list[Any]], t: float) -> list[float] | None:
    """A track's box at ``t``, interpolated linearly between its rows (as the dashboard does)."""
    times = rows["t_s"]
    i = bisect.bisect_right(times, t)
    if i == 0 or i == len(times):
        return None
    a, b = rows["bbox"][i - 1], rows["bbox"][i]
    f = (t - times[i - 1]) / (times[i] - times[i - 1])
    return [p + (q - p) * f for p, q in zip(a, b, strict=True)]


def _tracks(client: httpx.Client, video_id: str, query: str = "") -> dict[str, Any]:
    response = client.get(f"/api/product/videos/{video_id}/tracks{query}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_the_walkers_track_follows_the_walker(executed: Executed) -> None:
    client, video_id, video = executed
    tracks = _tracks(client, video_id)
    assert tracks["run_id"] == video["latest_run"]["run_id"]
    graph = client.get(f"/api/product/videos/{video_id}/scene-graph").json()
    by_id = {o["object_id"]: o for o in graph["objects"]}
    for obj in tracks["objects"]:
        rows = obj["rows"]
        assert len(rows["t_s"]) == len(rows["bbox"]) == len(rows["estimated"]) > 0
        assert rows["t_s"] == sorted(rows["t_s"])
        assert all(0 <= v <= 1 for box in rows["bbox"] for v in box)
        assert obj["name"] == by_id[obj["object_id"]]["name"]
        assert obj["class"] == by_id[obj["object_id"]]["class"]
    walker = next(o for o in tracks["objects"] if o["name"] == "red object")
    for t in (2.0, 4.55, 7.0):
        box = box_at(walker["rows"], t)
        truth = position_at(WALKER, t)
        assert box is not None and truth is not None
        centre = ((box[0] + box[2]) / 2 * FRAME_W, (box[1] + box[3]) / 2 * FRAME_H)
        assert abs(centre[0] - truth[0]) < 8 and abs(centre[1] - truth[1]) < 8, (t, centre, truth)
    _check_window(client, video_id, video["latest_run"]["run_id"], tracks)


def _check_window(client: httpx.Client, video_id: str, run_id: str, whole: dict[str, Any]) -> None:
    """A window keeps the rows shown in it; a run may be named; the answer revalidates."""
    window = _tracks(client, video_id, f"?start_s=2&end_s=4.5&run_id={run_id}")
    assert (window["start_s"], window["end_s"], window["run_id"]) == (2.0, 4.5, run_id)
    expected = {
        o["object_id"]: [t for t in o["rows"]["t_s"] if 2 <= t <= 4.5] for o in whole["objects"]
    }
    assert {o["object_id"]: o["rows"]["t_s"] for o in window["objects"]} == {
        k: v for k, v in expected.items() if v
    }
    url = f"/api/product/videos/{video_id}/tracks"
    etag = client.get(url).headers["etag"]
    assert client.get(url, headers={"If-None-Match": etag}).status_code == 304


def test_bad_windows_unknown_runs_and_videos_get_their_problem(
    processing: Any, lobby_media: MediaServer, executed: Executed
) -> None:
    client, video_id, _ = executed
    url = f"/api/product/videos/{video_id}/tracks"
    expect_problem(client.get(f"{url}?start_s=5&end_s=4"), 422, "validation_error")
    expect_problem(client.get(f"{url}?start_s=-1"), 422, "validation_error")
    expect_problem(client.get(f"{url}?end_s=soon"), 422, "validation_error")
    expect_problem(client.get(f"{url}?run_id=run_nope"), 404, "not_found")
    expect_problem(client.get("/api/product/videos/vid_nope/tracks"), 404, "not_found")
    other = processing("other")
    expect_problem(other.get(url), 404, "not_found")
    fresh = add_video(client, lobby_media.url("lobby.mp4"))
    expect_problem(client.get(f"/api/product/videos/{fresh}/tracks"), 409, "not_ready")


def test_one_name_for_each_object_in_every_answer(executed: Executed) -> None:
    client, video_id, _ = executed
    base = f"/api/product/videos/{video_id}"
    graph = client.get(f"{base}/scene-graph").json()
    names = {o["object_id"]: o["name"] for o in graph["objects"]}
    assert {'"LOBBY"', '"EXIT 3"', "red object", "green object"} <= set(names.values())
    timeline = client.get(f"{base}/timeline").json()
    for entry in timeline["events"]:
        assert entry["object_name"] == names.get(entry["object_id"])
    of_event = {e["event_id"]: e["object_id"] for e in graph["events"]}
    for span in client.get(f"{base}/evidence-view").json()["spans"]:
        about = span["object_id"] or of_event.get(span["event_id"])
        assert span["object_name"] == names.get(about)
    answer = client.post(f"{base}/ask", json={"question": "What text is visible?"}).json()
    assert answer["citations"]
    for cite in answer["citations"]:
        assert cite["object_name"] == names[cite["object_id"]]
    hits = client.get("/api/product/search", params={"q": "LOBBY"}).json()["data"]
    assert hits and all(h["object_name"] == names[h["object_id"]] for h in hits if h["object_id"])
