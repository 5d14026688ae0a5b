"""The dashboard in real headless Chromium, against a live API whose runs really process."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testkit.media_server import MediaServer
from tests.api.browser import open_page, row_of, sign_in
from tests.api.helpers import add_video, wait_done
from verify.bundle import verify_bundle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
HOSTILE_TITLE = "<img src=x onerror=alert(1)>"
TITLE = "Lobby walk"


@pytest.fixture
def page() -> Iterator[Any]:
    yield from open_page()


def _run_lobby(page: Any, url: str) -> None:
    page.fill("#add-title", TITLE)
    page.fill("#add-url", url)
    page.click("#add-form button")
    row = row_of(page, TITLE)
    row.locator("button.execute").click()
    # The listing polls every 2 s while the run is queued or running.
    row.locator(".state.succeeded").wait_for(timeout=180_000)


def _check_timeline(page: Any, graph: dict[str, Any]) -> None:
    """One lane per thing (an identity's appearances share it), named as the API names it."""
    page.wait_for_selector("#timeline-chart")
    things = {o["identity_id"] or o["object_id"]: o["name"] for o in graph["objects"]}
    lanes = page.locator("#timeline-chart g.row").evaluate_all("gs => gs.map(g => g.dataset.name)")
    assert sorted(lanes) == sorted(things.values())
    markers = page.eval_on_selector_all(
        "#timeline-chart line.refresh", "ls => ls.map(l => Number(l.dataset.t))"
    )
    assert any(abs(t - 12.0) <= 1.0 for t in markers), markers


def _check_thumbnails(page: Any) -> None:
    page.wait_for_function(
        "() => { const i = [...document.querySelectorAll('#evidence img')];"
        " return i.length > 0 && i.every(x => x.complete && x.naturalWidth > 0); }"
    )
    assert page.locator("#scene img").evaluate("i => i.naturalWidth") > 0


def _check_citation(page: Any) -> None:
    page.fill("#question", "How many objects appeared?")
    page.click("#ask-form button")
    link = page.locator("#answer .citations a").first
    link.wait_for()
    assert page.locator("#answer .grounded").count() == 1
    evidence_id = link.get_attribute("data-evidence-id")
    link.click()
    span = page.locator(f"#span-{evidence_id}")
    assert "highlight" in (span.get_attribute("class") or "")
    assert page.locator("#evidence li.highlight").count() == 1
    assert span.evaluate(
        "e => { const r = e.getBoundingClientRect();"
        " return r.bottom > 0 && r.top < window.innerHeight; }"
    )


def test_a_user_runs_the_lobby_and_follows_a_citation(
    page: Any, processing: Any, lobby_media: MediaServer, capsys: pytest.CaptureFixture[str]
) -> None:
    client = processing("acme")
    key = client.headers["Authorization"].removeprefix("Bearer ")
    hostile = client.post(
        "/api/videos/add", json={"url": lobby_media.url("lobby.mp4"), "title": HOSTILE_TITLE}
    )
    assert hostile.status_code == 201, hostile.text
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    sign_in(page, str(client.base_url).rstrip("/"), key)
    _run_lobby(page, lobby_media.url("lobby.mp4"))

    video_id = row_of(page, TITLE).get_attribute("data-video-id")
    graph = client.get(f"/api/product/videos/{video_id}/scene-graph").json()
    row_of(page, TITLE).locator("td").first.click()
    _check_timeline(page, graph)
    _check_thumbnails(page)
    _check_citation(page)

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "dashboard.png"
    page.screenshot(path=str(shot), full_page=True)
    with capsys.disabled():
        print(f"\ndashboard screenshot: {shot}")

    assert row_of(page, HOSTILE_TITLE).count() == 1
    assert page.locator("#videos img, #detail-title img").count() == 0
    row_of(page, HOSTILE_TITLE).locator("td").first.click()
    assert page.locator("#detail-title").text_content() == HOSTILE_TITLE
    assert page.locator("main img[src='x']").count() == 0
    page.click("#show-billing")
    page.locator("#plan-name").filter(has_text="sandbox").wait_for()
    assert page.locator("#billing-rows tr").count() > 0
    assert dialogs == []


def test_a_videos_audit_trail_lists_who_did_what_from_where(page: Any, client: Any) -> None:
    """No processing needed: a registered upload's page shows its registration and the reads
    the page itself made, newest first, with the chain's head."""
    key = client.headers["Authorization"].removeprefix("Bearer ")
    upload = {"filename": "night.mp4", "size_bytes": 1000, "content_type": "video/mp4"}
    body = {"title": "Night shift", "source_type": "upload", "upload": upload}
    video_id = client.post("/api/videos/add", json=body).json()["video_id"]
    sign_in(page, str(client.base_url).rstrip("/"), key)
    row_of(page, "Night shift").locator("td").first.click()
    page.locator("#audit-rows tr").last.wait_for()
    rows = page.locator("#audit-rows tr").all_inner_texts()
    assert "POST /api/videos/add" in rows[-1] and "201" in rows[-1] and "127.0.0.1" in rows[-1]
    assert any("/scene-graph" in r and "409" in r for r in rows)  # not processed yet
    head = client.get(f"/api/product/videos/{video_id}/audit").json()["chain_head"]
    assert page.locator("#audit-head").text_content().startswith("Chain head: seq ")
    assert head["seq"] > len(rows)  # listing reads sit in the chain, not in the video's rows


def test_a_reviewer_adds_a_note_sees_it_without_a_reload_and_exports_it_signed(
    page: Any, processing: Any, lobby_media: MediaServer
) -> None:
    client = processing("acme")
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    assert client.post(f"/api/product/videos/{video_id}/execute").status_code == 202
    assert wait_done(client, video_id)["state"] == "succeeded"
    sign_in(page, str(client.base_url).rstrip("/"), client.headers["Authorization"][7:])
    row_of(page, "lobby").locator("td").first.click()
    span = page.locator("#evidence li.span").first
    span.locator(".note-form").wait_for()
    evidence_id = span.get_attribute("data-evidence-id")
    assert span.locator(".span-head .verdict").text_content() == "not reviewed"
    page.evaluate("window.notReloaded = true")

    span.locator(".note-form input[name=text]").fill(HOSTILE_TITLE)
    span.locator(".note-form select[name=verdict]").select_option("rejected")
    span.locator(".note-form button").click()
    added = span.locator("li.note.person")
    added.wait_for()
    assert added.locator(".note-text").text_content() == HOSTILE_TITLE  # as text, not HTML
    assert span.locator(".span-head .verdict").text_content() == "rejected"
    assert span.locator(".note-form input[name=text]").input_value() == ""
    assert page.evaluate("window.notReloaded") is True
    assert page.locator("main img[src='x']").count() == 0

    url = f"/api/product/videos/{video_id}/evidence/{evidence_id}/notes"
    (note,) = client.get(url).json()["data"]
    assert (note["text"], note["verdict"]) == (HOSTILE_TITLE, "rejected")
    assert added.get_attribute("data-note-id") == note["note_id"]
    span.evaluate("e => { e.dataset.stale = 'yes'; }")
    row_of(page, "lobby").locator("td").first.click()  # opened again: drawn from the view
    fresh = page.locator(f"#span-{evidence_id}:not([data-stale])")
    fresh.locator("li.note.person").wait_for()
    assert fresh.locator(".span-head .verdict").text_content() == "rejected"
    _export_and_verify(page, client, note)


def _export_and_verify(page: Any, client: Any, note: dict[str, Any]) -> None:
    """The export button, text redaction ticked: its state while the flow makes it, then a
    download that verifies offline against the key the API publishes, holding the reviewer's
    note, with the text pixelated as the manifest records."""
    page.locator("#export-redact input[value=text]").check()
    page.locator("#export-button").click()
    page.locator("#export-state[data-state=succeeded]").wait_for(timeout=120_000)
    state = page.locator("#export-state").text_content()
    assert "sha256" in state and "text redacted" in state
    with page.expect_download() as download:
        page.locator("#export-download a").click()
    bundle = Path(download.value.path())
    keys = client.get("/api/public/signing-keys").json()["keys"]
    verdict = verify_bundle(bundle, keys[0]["public_key_pem"].encode())
    assert verdict.ok, verdict.lines()
    with zipfile.ZipFile(bundle) as archive:
        noted = [json.loads(line) for line in archive.read("notes.jsonl").splitlines()]
        manifest = json.loads(archive.read("manifest.json"))
    assert note in noted
    assert manifest["redaction"]["applied"] == ["text"]
    assert manifest["redaction"]["files"]  # every thumbnail and clip, with its regions
    assert page.locator("#export-check").is_visible()
    assert "--trust" in page.locator("#export-check").inner_text()  # the clips' C2PA, too
    roots = client.get("/api/public/signing-keys").json()["c2pa_trust_anchors_pem"]
    assert verify_bundle(bundle, None, roots).ok  # redacted clips signed, Trusted
    _download_a_clip(page, bundle, manifest)
    _export_a_range(page, client)


def _download_a_clip(page: Any, bundle: Path, manifest: dict[str, Any]) -> None:
    """Every exported span has a clip link (its group opened); the MP4 it saves is the
    bundle's own clip."""
    folded = page.locator("#evidence li.group:not(.open) .group-head")
    while folded.count():
        folded.first.click()
    spans = page.locator("#evidence li.span")
    assert page.locator("#evidence a.clip").count() == spans.count() == len(manifest["spans"])
    first = spans.first
    evidence_id = first.get_attribute("data-evidence-id")
    with page.expect_download() as download:
        first.locator("a.clip").click()
    assert download.value.suggested_filename == f"{evidence_id}.mp4"
    (span,) = [s for s in manifest["spans"] if s["evidence_id"] == evidence_id]
    with zipfile.ZipFile(bundle) as archive:
        assert Path(download.value.path()).read_bytes() == archive.read(span["clip"])


def _export_a_range(page: Any, client: Any) -> None:
    """A time range typed in is the export's selection, shown in its state; only the spans
    overlapping it get a clip link."""
    page.locator("#export-redact input[value=text]").uncheck()
    page.fill("#export-start", "2")
    page.fill("#export-end", "4")
    page.locator("#export-button").click()
    page.wait_for_function(  # the new export's state (the last one's said succeeded too)
        "() => { const s = document.getElementById('export-state');"
        " return s.dataset.state === 'succeeded' && s.textContent.includes('2-4 s'); }",
        timeout=120_000,
    )
    page.locator("#export-download a").wait_for()
    assert "redacted" not in (page.locator("#export-state").text_content() or "")
    inside = page.eval_on_selector_all(
        "#evidence li.span",
        "ls => ls.filter(l => Number(l.dataset.endS) >= 2 && Number(l.dataset.startS) <= 4)"
        ".map(l => l.dataset.evidenceId)",
    )
    linked = page.eval_on_selector_all(
        "#evidence li.span:has(a.clip)", "ls => ls.map(l => l.dataset.evidenceId)"
    )
    assert inside and linked == inside
