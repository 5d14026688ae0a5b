"""The workspace search over processed synthetic videos of KNOWN truth, by real HTTP: every planted
text and object is found where and when it was shown, nothing else is, and another tenant's
videos are never seen.

Two videos are processed by the real flow: the lobby (``synthetic.scenes.lobby_scene``: signs
"LOBBY" throughout and "EXIT 3" during 4-9 s; walker, loiterer and visitor; a cut at 12 s) and
a gate clip (the lobby's walker alone, the sign "GATE 7" during 2-8 s), recorded at known clock
times. A third tenant processes the gate clip too.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text

from storage.artifacts.hits import normalize_text
from storage.catalog.database import Catalog
from synthetic import TextSign, lobby_scene, write_video
from testkit.media_server import MediaServer
from tests.api.helpers import expect_problem, wait_done
from tests.api.test_mcp import call, ok

LOBBY_AT = "2026-11-20T21:00:00Z"
GATE_AT = "2026-11-20T22:10:00Z"
# (text, start_s, end_s) shown in each video.
TEXTS = {"lobby": {("LOBBY", 0.0, 20.0), ("EXIT 3", 4.0, 9.0)}, "gate": {("GATE 7", 2.0, 8.0)}}
# (name, first_s, last_s) of each moving thing (the loiterer dwells 3.5-9.5 s).
THINGS = {
    "lobby": {("walker", 0.5, 8.5), ("loiterer", 1.0, 11.9), ("visitor", 13.0, 19.5)},
    "gate": {("walker", 0.5, 8.5)},
}


def gate_scene() -> Any:
    lobby = lobby_scene(seed=3)
    return replace(
        lobby,
        objects=lobby.objects[:1],
        # Twice the lobby's sign size: the plate appearing scores 0.2, no scene change (0.57, a
        # false cut, while the scene score matched the brightness by the whole frame's mean).
        signs=(TextSign("GATE 7", 2.0, 8.0, (160, 40), font_px=40),),
        scene_cuts=(),
    )


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("search-clips")
    write_video(lobby_scene(), root / "lobby.mp4")
    write_video(gate_scene(), root / "gate.mp4")
    return root


def _process(client: httpx.Client, url: str, title: str, recorded_at: str) -> str:
    body = {"url": url, "title": title, "recorded_at": recorded_at}
    registered = client.post("/api/videos/add", json=body)
    assert registered.status_code == 201, registered.text
    assert registered.json()["recorded_at"] == recorded_at.replace("Z", ".000Z")
    video_id = str(registered.json()["video_id"])
    assert client.post(f"/api/product/videos/{video_id}/execute").status_code == 202
    assert wait_done(client, video_id)["state"] == "succeeded"
    return video_id


@pytest.fixture
def workspace(processing: Any, clips: Path) -> dict[str, Any]:
    with MediaServer(clips) as media:
        acme, globex = processing("acme"), processing("globex")
        ids = {
            "lobby": _process(acme, media.url("lobby.mp4"), "Lobby camera", LOBBY_AT),
            "gate": _process(acme, media.url("gate.mp4"), "Front gate", GATE_AT),
            "other": _process(globex, media.url("gate.mp4"), "Globex gate", GATE_AT),
        }
    return {"acme": acme, "globex": globex, "ids": ids}


def _search(client: httpx.Client, **params: Any) -> dict[str, Any]:
    response = client.get("/api/product/search", params=params)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def _overlaps(hit: dict[str, Any], start_s: float, end_s: float, slack_s: float = 1.0) -> bool:
    return hit["start_s"] <= end_s + slack_s and hit["end_s"] >= start_s - slack_s


def test_every_planted_text_is_found_where_it_was_shown_and_nothing_else(
    workspace: dict[str, Any],
) -> None:
    acme, ids = workspace["acme"], workspace["ids"]
    names = {ids["lobby"]: "lobby", ids["gate"]: "gate"}
    texts = _search(acme, **{"class": "text"}, limit=200)["data"]
    # OCR may read a space or not ("GATE7"): searches compare texts without spaces, and so here.
    found = {(names[h["video_id"]], normalize_text(h["text"])) for h in texts}
    assert found == {(v, normalize_text(t)) for v, shown in TEXTS.items() for t, _, _ in shown}
    for hit in texts:
        shown = TEXTS[names[hit["video_id"]]]
        start, end = next(
            (a, b) for t, a, b in shown if t.replace(" ", "") == hit["text"].replace(" ", "")
        )
        assert _overlaps(hit, start, end), hit
        assert hit["evidence_ids"] and hit["thumbnail_url"]
        assert workspace["acme"].get(hit["thumbnail_url"]).headers["content-type"] == "image/jpeg"

    gate = _search(acme, q="GATE 7")
    assert [(names[h["video_id"]], normalize_text(h["text"])) for h in gate["data"]] == [
        ("gate", "gate7")
    ]
    assert gate["interpreted"]["text"] == "GATE 7" and gate["interpreted"]["finds"] == "text"
    hit = gate["data"][0]
    assert hit["title"] == "Front gate" and hit["recorded_start"].startswith("2026-11-20T22:10:0")
    spans = acme.get(f"/api/product/videos/{ids['gate']}/evidence-view").json()
    cited = {s["evidence_id"]: s for s in spans["spans"]}
    assert all(e in cited for e in hit["evidence_ids"])  # cite exactly as Ask does

    assert _search(acme, text="exit3")["data"][0]["text"] == "EXIT 3"  # any case, no spaces
    assert _search(acme, text="EXIT", text_match="exact")["data"] == []
    assert _search(acme, q='"GATE 7" after 0:30')["data"] == []  # shown 2-8 s only
    assert _search(acme, q="GATE 7 after 5 s")["data"][0]["video_id"] == ids["gate"]


def test_every_moving_thing_is_found_once_and_clock_times_narrow_them(
    workspace: dict[str, Any],
) -> None:
    acme, ids = workspace["acme"], workspace["ids"]
    names = {ids["lobby"]: "lobby", ids["gate"]: "gate"}
    moving = [h for h in _search(acme, limit=200)["data"] if h["kind"] == "object"]
    for video, things in THINGS.items():
        hits = [h for h in moving if names[h["video_id"]] == video]
        assert len(hits) == len(things), (video, hits)
        for _, first, last in things:
            assert any(_overlaps(h, first, last) for h in hits), (video, first, last, hits)

    # The gate clip was recorded at 22:10; the lobby at 21:00 (20 s long).
    late = _search(acme, q="objects after 22:00 on 2026-11-20")
    assert {h["video_id"] for h in late["data"]} == {ids["gate"]}
    assert late["interpreted"]["recorded_after"] == "2026-11-20T22:00:00.000Z"
    early = _search(acme, recorded_before="2026-11-20T21:00:05Z")
    assert {h["video_id"] for h in early["data"]} == {ids["lobby"]}
    assert all(h["start_s"] <= 5.0 for h in early["data"])

    cuts = _search(acme, event="scene_change")["data"]
    assert [(names[h["video_id"]], round(h["start_s"])) for h in cuts] == [("lobby", 12)]


def test_another_tenants_videos_are_never_found(workspace: dict[str, Any]) -> None:
    acme, globex, ids = workspace["acme"], workspace["globex"], workspace["ids"]
    theirs = _search(globex, q="GATE 7")
    assert [h["video_id"] for h in theirs["data"]] == [ids["other"]]
    assert theirs["searched"] == {"runs": 1, "videos": 1, "read": 1}
    everything = _search(acme, limit=200, run="all")["data"]
    assert ids["other"] not in {h["video_id"] for h in everything}
    mine = acme.get("/api/product/search", params={"video_id": ids["other"]})
    unknown = acme.get("/api/product/search", params={"video_id": "vid_01m8dnobodyhasthis000000"})
    assert expect_problem(mine, 404, "not_found")["detail"] == f"no video {ids['other']}"
    expect_problem(unknown, 404, "not_found")


def test_pages_follow_one_another_and_bad_queries_are_problems(
    workspace: dict[str, Any],
) -> None:
    acme = workspace["acme"]
    whole = _search(acme, limit=200)["data"]
    paged, cursor = [], None
    while True:
        page = _search(acme, limit=2, **({"cursor": cursor} if cursor else {}))
        paged += page["data"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert [h["hit_id"] + h["run_id"] for h in paged] == [h["hit_id"] + h["run_id"] for h in whole]

    other = acme.get("/api/product/search", params={"cursor": cursor or "x", "class": "text"})
    expect_problem(other, 400, "invalid_request")
    bad = expect_problem(
        acme.get("/api/product/search", params={"q": "did a helicopter land"}),
        422,
        "not_understood",
    )
    assert "helicopter" in str(bad["detail"])
    expect_problem(
        acme.get("/api/product/search", params={"start_s": 9, "end_s": 3}), 422, "validation_error"
    )
    expect_problem(
        acme.get("/api/product/search", params={"event": "explode"}), 422, "validation_error"
    )


def test_filters_beside_free_text_take_the_place_of_what_it_said(
    workspace: dict[str, Any],
) -> None:
    """``q`` and filters go together: each filter given replaces what ``q`` said of the same
    filter, the others of ``q`` still hold, and ``interpreted`` shows what was searched."""
    acme, ids = workspace["acme"], workspace["ids"]
    gate_late = _search(acme, q="GATE 7 after 0:30")
    assert gate_late["data"] == [] and gate_late["interpreted"]["start_s"] == 30
    given = _search(acme, q="GATE 7 after 0:30", start_s=0)  # GATE 7 is shown 2-8 s
    assert given["interpreted"]["start_s"] == 0 and given["interpreted"]["text"] == "GATE 7"
    assert [h["video_id"] for h in given["data"]] == [ids["gate"]]
    narrowed = _search(acme, q="GATE 7", end_s=1)  # the text and the window both hold
    assert narrowed["data"] == [] and narrowed["interpreted"]["end_s"] == 1
    lobby_texts = _search(acme, q="GATE 7", text="EXIT 3", video_id=ids["lobby"])
    assert lobby_texts["interpreted"]["text"] == "EXIT 3"
    found = {normalize_text(h["text"]) for h in lobby_texts["data"]}
    assert found == {"exit3"}
    expect_problem(
        acme.get("/api/product/search", params={"q": "GATE 7 after 0:30", "end_s": 10}),
        422,
        "validation_error",  # the window given ends before the one read starts
    )


def test_the_workspace_ask_and_the_mcp_tools_find_the_same(workspace: dict[str, Any]) -> None:
    acme, ids = workspace["acme"], workspace["ids"]
    asked = acme.post("/api/product/ask", json={"question": "Which videos show EXIT 3?"})
    assert asked.status_code == 200, asked.text
    answer = asked.json()
    assert answer["grounded"] and "Lobby camera" in answer["answer"]
    assert {c["video_id"] for c in answer["citations"]} == {ids["lobby"]}
    spans = acme.get(f"/api/product/videos/{ids['lobby']}/evidence-view").json()["spans"]
    cited = {s["evidence_id"]: s for s in spans}
    for citation in answer["citations"]:
        span = cited[citation["evidence_id"]]  # a span of that video's run, with its times
        assert (span["start_s"], span["end_s"]) == (citation["start_s"], citation["end_s"])
        assert citation["start_s"] <= 9.5 and citation["end_s"] >= 3.5  # EXIT 3: 4-9 s
    count = acme.post(
        "/api/product/ask", json={"question": "How many objects were seen across all videos?"}
    ).json()
    things = sum(len(t) for t in THINGS.values())
    assert count["grounded"] and count["answer"].startswith(f"{things} things were seen"), count
    assert len(count["citations"]) == things
    refused = acme.post("/api/product/ask", json={"question": "Did a helicopter land?"}).json()
    assert not refused["grounded"] and refused["refusal_reason"] == "outside_detectors"
    assert acme.get("/api/product/billing/state").json()["usage"]["asks"] == 3

    by_mcp = ok(call(acme, "search_videos", q="GATE 7"))
    assert by_mcp == _search(acme, q="GATE 7")
    assert (
        ok(call(acme, "ask_workspace", question="Which videos show EXIT 3?"))["citations"]
        == (answer["citations"])
    )
    problem = call(acme, "search_videos", q="did a helicopter land")
    assert problem.is_error and problem.structured_content["code"] == "not_understood"


def test_each_run_is_indexed_for_search_as_it_succeeds(
    workspace: dict[str, Any], catalog: Catalog
) -> None:
    # Before any search met the runs. The flow indexes a run just after marking it succeeded,
    # so the last run's row may land a moment after the client saw "succeeded".
    deadline = time.monotonic() + 30
    while True:
        with catalog.read() as conn:
            rows = conn.execute(text("SELECT video_id, has_file, texts FROM search_runs")).all()
        if len(rows) >= len(workspace["ids"]) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert sorted(r.video_id for r in rows) == sorted(workspace["ids"].values())
    assert all(r.has_file == 1 for r in rows)
    texts = {r.video_id: r.texts.split() for r in rows}
    assert texts[workspace["ids"]["lobby"]] == ["exit3", "lobby"]


@pytest.mark.parametrize("moment", ["2026-11-20", "1763676000", "2026-11-20T22:00:00", "soon"])
def test_a_clock_time_is_an_rfc3339_moment_with_its_offset(client_for: Any, moment: str) -> None:
    client = client_for("acme")
    response = client.get("/api/product/search", params={"recorded_after": moment})
    body = expect_problem(response, 422, "validation_error")
    assert "recorded_after" in str(body["detail"])
    fine = client.get("/api/product/search", params={"recorded_after": "2026-11-20T22:00:00Z"})
    assert fine.status_code == 200 and fine.json()["data"] == []
