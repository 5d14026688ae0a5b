"""Operations 3 to 6 and 8 over real HTTP: execute, then read every artifact.

The orchestrator is replaced by a test double that runs the real flow in a thread of this process
(under the session's Prefect test harness); ``tests/test_e2e.py`` drives the real topology.
"""

from __future__ import annotations

import hashlib
from typing import Any

import httpx
import pytest

from storage.artifacts.spans import canonical_sha256
from testkit.media_server import MediaServer
from tests.api.conftest import InlineSubmitter
from tests.api.helpers import add_video, expect_problem, wait_done
from tests.fixtures.onnx_models import build_colour_detector
from ves.settings import Settings

pytestmark = pytest.mark.slow


def test_scene_graph_timeline_and_cost_answer_with_the_run(
    executed: tuple[httpx.Client, str, dict[str, Any]],
) -> None:
    client, video_id, video = executed
    run_id = video["latest_run"]["run_id"]
    graph = client.get(f"/api/product/videos/{video_id}/scene-graph").json()
    assert graph["run_id"] == run_id
    assert len([o for o in graph["objects"] if o["class"] == "motion"]) >= 3
    texts = {o["attributes"]["text"] for o in graph["objects"] if o["class"] == "text"}
    assert texts == {"LOBBY", "EXIT 3"}  # the lobby's two signs (default mode reads text)
    assert {z["name"] for z in graph["zones"]} == {"left", "center", "right"}
    assert {"appear", "dwell", "scene_change"} <= {e["type"] for e in graph["events"]}
    assert all(isinstance(o["attributes"], dict) for o in graph["objects"])
    timeline = client.get(f"/api/product/videos/{video_id}/timeline").json()
    assert timeline["duration_s"] == pytest.approx(20.0, abs=0.2)
    times = [e["t_s"] for e in timeline["events"]]
    assert times == sorted(times) and len(times) == len(graph["events"])
    assert [m["reason"] for m in timeline["refresh_markers"]] == ["start", "scene_change"]
    cost = client.get(f"/api/product/videos/{video_id}/cost").json()
    assert cost["run_id"] == run_id and cost["detector_mode"] == "motion+person+ocr"
    assert cost["fallback"] == {"used": False, "reason": None}
    assert set(cost["detectors"]) == {"motion", "person", "ocr"}
    assert [e["type"] for e in timeline["events"]].count("text_seen") == 2
    assert cost["retention"]["days"] == 7


def test_evidence_spans_verify_and_thumbnails_need_the_key(
    executed: tuple[httpx.Client, str, dict[str, Any]], processing: Any, anon: httpx.Client
) -> None:
    client, video_id, _ = executed
    spans = client.get(f"/api/product/videos/{video_id}/evidence-view").json()["spans"]
    assert spans
    for span in spans[:5]:
        assert canonical_sha256(span) == span["sha256"]  # verifiable from the served JSON
        frame = span["frames"][0]
        image = client.get(frame["thumbnail_url"])
        assert image.headers["content-type"] == "image/jpeg"
        assert hashlib.sha256(image.content).hexdigest() == frame["sha256"]
        expect_problem(anon.get(frame["thumbnail_url"]), 401, "unauthorized")
        expect_problem(processing("other").get(frame["thumbnail_url"]), 404, "not_found")


def test_artifacts_are_not_ready_before_a_run_succeeded(
    processing: Any, lobby_media: MediaServer
) -> None:
    client = processing("acme")
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    for artifact in ("scene-graph", "timeline", "evidence-view", "cost"):
        body = expect_problem(
            client.get(f"/api/product/videos/{video_id}/{artifact}"), 409, "not_ready"
        )
        assert "registered" in str(body["detail"])


def test_another_tenant_cannot_execute_or_read(
    executed: tuple[httpx.Client, str, dict[str, Any]], processing: Any
) -> None:
    _, video_id, _ = executed
    other = processing("other")
    expect_problem(other.post(f"/api/product/videos/{video_id}/execute"), 404, "not_found")
    for artifact in ("scene-graph", "timeline", "evidence-view", "cost"):
        expect_problem(other.get(f"/api/product/videos/{video_id}/{artifact}"), 404, "not_found")


def test_a_second_execute_while_queued_is_a_conflict(
    processing: Any, lobby_media: MediaServer, submitter: InlineSubmitter
) -> None:
    client = processing("acme")
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    first = client.post(f"/api/product/videos/{video_id}/execute")
    second = client.post(f"/api/product/videos/{video_id}/execute")
    assert first.status_code == 202
    expect_problem(second, 409, "conflict")
    assert wait_done(client, video_id)["state"] == "succeeded"
    again = client.post(f"/api/product/videos/{video_id}/execute", json={"sample_fps": 2})
    assert again.status_code == 202, again.text  # a succeeded video may run again
    assert wait_done(client, video_id)["latest_run"]["run_id"] == again.json()["run_id"]


# Execute bodies refused with 422 for their own shape (tests/api/test_openapi_rules.py: the
# served schema calls each one invalid too).
BAD_EXECUTE_BODIES: list[dict[str, Any]] = [
    {"sample_fps": 0},
    {"sample_fps": 100},
    {"sample_fps": "2"},  # JSON numbers only (the fuzz run saw a string accepted)
    {"skip_still": "yes"},
    {"skip_still": 1},
    {"skip_still": "Keyframes"},  # the one word, as written
    {"follow": 1},
    {"detector": "magic"},
    {"detector": "yolo"},  # no model configured, none named
    {"detector": "yolo", "yolo_model": None},
    {"detector": "yolo", "yolo_model": "../outside.onnx"},
    {"detector": "yolo", "yolo_model": "/etc/passwd"},
    {"detector": "yolo", "yolo_model": "models\\m.onnx"},
    {"detector": "yolo", "yolo_model": "a/../../m.onnx"},
    {"detector": "yolo", "yolo_model": "./m.onnx"},
    {"detector": "motion", "yolo_model": "model.onnx"},
    {"colour": 1},
    {"zones": [{"name": "a", "polygon": [[0, 0], [2, 0], [1, 1]]}]},
    {"zones": [{"name": "a", "polygon": [[True, 0], [1, 0], [1, 1]]}]},
]


@pytest.mark.parametrize("body", BAD_EXECUTE_BODIES)
def test_bad_execute_options_are_422(
    processing: Any, lobby_media: MediaServer, body: dict[str, Any]
) -> None:
    client = processing("acme")
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    expect_problem(
        client.post(f"/api/product/videos/{video_id}/execute", json=body), 422, "validation_error"
    )
    assert client.get(f"/api/product/videos/{video_id}").json()["state"] == "registered"


def test_a_body_its_schema_refuses_is_422_before_the_plan_is_asked(
    processing: Any, lobby_media: MediaServer
) -> None:
    """A window past the plan's bound is 402, but a body that also breaks its schema (a yolo
    detector without a model here) is the 422 the schema promises (the fuzz run found a 402)."""
    client = processing("acme")
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    execute = f"/api/product/videos/{video_id}/execute"
    too_long = {"window_s": 1e9, "follow": True}
    expect_problem(client.post(execute, json=too_long), 402, "plan_limit_exceeded")
    both = {**too_long, "detector": "yolo"}
    expect_problem(client.post(execute, json=both), 422, "validation_error")


def test_an_upload_not_yet_sent_cannot_execute(processing: Any) -> None:
    client = processing("acme")
    spec = {"filename": "a.mp4", "size_bytes": 10, "content_type": "video/mp4"}
    video = client.post(
        "/api/videos/add", json={"title": "u", "source_type": "upload", "upload": spec}
    ).json()
    expect_problem(client.post(f"/api/product/videos/{video['video_id']}/execute"), 409, "conflict")


def test_orchestrator_down_is_503_and_leaves_no_stuck_run(
    processing: Any, lobby_media: MediaServer, submitter: InlineSubmitter
) -> None:
    client = processing("acme")
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    submitter.down = True
    expect_problem(client.post(f"/api/product/videos/{video_id}/execute"), 503, "unavailable")
    video = client.get(f"/api/product/videos/{video_id}").json()
    assert video["state"] == "failed"
    assert video["latest_run"]["error"]["code"] == "orchestrator_unavailable"


def test_a_source_that_is_not_a_video_fails_with_a_readable_error(
    processing: Any, lobby_media: MediaServer
) -> None:
    client = processing("acme")
    video_id = add_video(client, lobby_media.url("junk.mp4"))
    assert client.post(f"/api/product/videos/{video_id}/execute").status_code == 202
    video = wait_done(client, video_id)
    assert video["state"] == "failed"
    assert video["latest_run"]["error"]["code"] == "source_invalid"
    assert "not a readable video" in video["latest_run"]["error"]["message"]
    expect_problem(client.get(f"/api/product/videos/{video_id}/scene-graph"), 409, "not_ready")


def _run_with(client: httpx.Client, media: MediaServer, body: dict[str, Any]) -> str:
    video_id = add_video(client, media.url("lobby.mp4"))
    accepted = client.post(f"/api/product/videos/{video_id}/execute", json=body)
    assert accepted.status_code == 202, accepted.text
    video = wait_done(client, video_id)
    assert video["state"] == "succeeded", video["latest_run"]
    return video_id


def test_a_yolo_model_in_the_models_folder_names_the_objects(
    processing: Any, lobby_media: MediaServer, settings: Settings
) -> None:
    settings.models_root.mkdir(parents=True, exist_ok=True)
    build_colour_detector(settings.models_root / "colours.onnx", (320, 320))
    client = processing("acme")
    body = {"detector": "yolo+ocr", "yolo_model": "colours.onnx"}
    video_id = _run_with(client, lobby_media, body)
    graph = client.get(f"/api/product/videos/{video_id}/scene-graph").json()
    classes = sorted(o["class"] for o in graph["objects"])
    # The lobby's red walker and blue visitor, and its two signs; the green loiterer is no class
    # of this model, so it is not an object.
    assert classes == ["blue", "red", "text", "text"]
    cost = client.get(f"/api/product/videos/{video_id}/cost").json()
    assert cost["detector_mode"] == "yolo+ocr" and cost["fallback"]["used"] is False
    assert 0 < cost["detectors"]["yolo"]["frames"] < cost["frames"]["sampled"]  # motion gated


def test_a_missing_yolo_model_falls_back_to_motion_visibly(
    processing: Any, lobby_media: MediaServer
) -> None:
    client = processing("acme")
    video_id = _run_with(client, lobby_media, {"detector": "yolo", "yolo_model": "absent.onnx"})
    cost = client.get(f"/api/product/videos/{video_id}/cost").json()
    assert cost["detector_mode"] == "motion"
    assert cost["fallback"]["used"] is True
    assert "absent.onnx does not exist" in cost["fallback"]["reason"]
    graph = client.get(f"/api/product/videos/{video_id}/scene-graph").json()
    assert {o["class"] for o in graph["objects"]} == {"motion"}
    spans = client.get(f"/api/product/videos/{video_id}/evidence-view").json()["spans"]
    assert spans and all(
        any("detector fallback" in note["text"] for note in span["review_notes"]) for span in spans
    )
