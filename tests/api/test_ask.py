"""Operation 7 over real HTTP, on the lobby processed by the real flow (known truth)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from storage.catalog.asks import AskLog
from storage.catalog.database import Catalog
from synthetic import ground_truth, lobby_scene
from testkit.media_server import MediaServer
from tests.api.helpers import add_video, expect_problem, wait_done
from ves.clock import now_rfc3339

pytestmark = pytest.mark.slow

TRUTH = ground_truth(lobby_scene())
Executed = tuple[httpx.Client, str, dict[str, Any]]


def _ask(client: httpx.Client, video_id: str, question: str) -> dict[str, Any]:
    response = client.post(f"/api/product/videos/{video_id}/ask", json={"question": question})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _spans(client: httpx.Client, video_id: str) -> dict[str, dict[str, Any]]:
    spans = client.get(f"/api/product/videos/{video_id}/evidence-view").json()["spans"]
    return {s["evidence_id"]: s for s in spans}


def _assert_cited(answer: dict[str, Any], spans: dict[str, dict[str, Any]]) -> None:
    assert answer["grounded"] is True and answer["refusal_reason"] is None
    assert answer["citations"]
    for cite in answer["citations"]:
        span = spans[cite["evidence_id"]]
        assert (cite["start_s"], cite["end_s"]) == (span["start_s"], span["end_s"])


def test_the_three_questions_of_the_issue_are_grounded_cited_and_true(executed: Executed) -> None:
    client, video_id, video = executed
    spans = _spans(client, video_id)
    count = _ask(client, video_id, "How many objects appeared?")
    _assert_cited(count, spans)
    assert count["answer"].startswith(f"{len(TRUTH.objects)} objects appeared")
    assert len(count["citations"]) == len(TRUTH.objects)
    first = _ask(client, video_id, "When did the first object appear?")
    _assert_cited(first, spans)
    truth_first = min(o.first_seen_s for o in TRUTH.objects)
    (cite,) = first["citations"]
    assert abs(cite["start_s"] - truth_first) <= 1.0
    assert f"{cite['start_s']:.1f} s" in first["answer"]
    texts = _ask(client, video_id, "What text is visible?")
    _assert_cited(texts, spans)
    for sign in TRUTH.texts:
        assert f'"{sign.text}"' in texts["answer"]
    assert texts["run_id"] == video["latest_run"]["run_id"]
    assert texts["coverage"]["detector_mode"] == "motion+person+ocr"


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        ("Did a helicopter land?", "outside_detectors"),
        ("What colour is the car?", "outside_detectors"),
        ("What is the capital of France?", "off_topic"),
        ("Is there a sign saying PIZZA?", "no_evidence"),
    ],
)
def test_what_the_artifacts_cannot_back_is_refused(
    executed: Executed, question: str, reason: str
) -> None:
    client, video_id, _ = executed
    answer = _ask(client, video_id, question)
    assert (answer["grounded"], answer["refusal_reason"], answer["citations"]) == (
        False,
        reason,
        [],
    )
    if reason == "no_evidence":  # absence is only as good as what was looked at
        assert "Examined: 20.0 s of video, 100 frames analysed" in answer["answer"]


def test_asks_are_logged_with_their_run_and_counted(executed: Executed, catalog: Catalog) -> None:
    client, video_id, video = executed
    questions = ["How many objects appeared?", "Did a helicopter land?"]
    asked = [_ask(client, video_id, q) for q in questions]
    log = AskLog(catalog).for_run(video["latest_run"]["run_id"])
    assert [r.question for r in log] == questions
    assert [r.ask_id for r in log] == [a["ask_id"] for a in asked]
    assert [r.grounded for r in log] == [True, False]
    tenant = log[0].tenant_id
    now = now_rfc3339()
    assert AskLog(catalog).usage(tenant, now[:7]) == AskLog(catalog).usage(tenant, now[:10]) == 2


@pytest.mark.parametrize(
    "body", [{}, {"question": ""}, {"question": "   "}, {"question": "x" * 501}, {"q": "hi"}]
)
def test_bad_questions_are_422(executed: Executed, body: dict[str, Any]) -> None:
    client, video_id, _ = executed
    response = client.post(f"/api/product/videos/{video_id}/ask", json=body)
    expect_problem(response, 422, "validation_error")


def test_asking_before_a_run_succeeded_or_another_tenants_video(
    processing: Any, lobby_media: MediaServer, executed: Executed
) -> None:
    client = processing("acme")
    fresh = add_video(client, lobby_media.url("lobby.mp4"))
    body = {"question": "How many objects appeared?"}
    expect_problem(client.post(f"/api/product/videos/{fresh}/ask", json=body), 409, "not_ready")
    _, video_id, _ = executed
    other = processing("other")
    expect_problem(other.post(f"/api/product/videos/{video_id}/ask", json=body), 404, "not_found")


def test_the_videos_title_names_its_place_and_counts_agree(
    processing: Any, lobby_media: MediaServer, executed: Executed
) -> None:
    """Issue 44 over HTTP: the title's words are "in this video" ("the atrium" of a video titled
    "Atrium camera" narrows nothing), other videos do not know them, and the summary states the
    number of different objects that "how many different objects" states."""
    client = processing("acme")
    response = client.post(
        "/api/videos/add", json={"url": lobby_media.url("lobby.mp4"), "title": "Atrium camera"}
    )
    assert response.status_code == 201, response.text
    atrium = response.json()["video_id"]
    assert client.post(f"/api/product/videos/{atrium}/execute").status_code == 202
    assert wait_done(client, atrium)["state"] == "succeeded"
    question = "How many different objects moved through the atrium?"
    answer = _ask(client, atrium, question)
    assert answer["grounded"] and answer["interpreted"]["qualifiers"]["place"] == "atrium"
    assert answer["answer"].startswith(f"{len(TRUTH.objects)} ")
    _, lobby, _ = executed  # titled "lobby": "atrium" is a word it does not know
    assert _ask(client, lobby, question)["refusal_reason"] == "not_understood"
    summary = _ask(client, atrium, "Summarize what happens in the video.")
    assert summary["answer"].split(" ", 1)[0] == answer["answer"].split(" ", 1)[0]
