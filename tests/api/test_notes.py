"""Review notes over real HTTP and MCP on a really processed video: added, superseded, listed,
shown in the evidence view with both hashes provable, never stale behind an ETag, and refused
(404 as unknown, 405, 422) where they must be."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from storage.artifacts.blobs import open_blob_store
from storage.artifacts.reads import ArtifactReader
from storage.artifacts.spans import canonical_sha256, published_form
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from tests.api.helpers import expect_problem
from tests.api.test_mcp import call, ok, refused
from ves.settings import Settings

Executed = tuple[httpx.Client, str, dict[str, Any]]
NOTE_FIELDS = {
    *("note_id", "evidence_id", "run_id", "author", "text", "verdict", "created_at"),
    "supersedes",
}


def _notes_url(video_id: str, evidence_id: str) -> str:
    return f"/api/product/videos/{video_id}/evidence/{evidence_id}/notes"


def _author(catalog: Catalog, tenant_name: str) -> str:
    tenants = TenantStore(catalog)
    tenant = tenants.find_tenant(tenant_name)
    assert tenant is not None
    (key,) = tenants.list_keys(tenant.tenant_id)
    return f"key:{key.key_id}"


def _published_hashes(settings: Settings, catalog: Catalog, run_id: str) -> dict[str, str]:
    """Each span's sha256 as the run wrote it in evidence.parquet (the manifest proves the file)."""
    path = RunStore(catalog).get(run_id).artifacts_path or ""
    rows = ArtifactReader(open_blob_store(settings)).rows(path, "evidence")
    return {r["evidence_id"]: r["sha256"] for r in rows}


def _check_hashes(view: dict[str, Any], published: dict[str, str]) -> None:
    for span in view["spans"]:
        assert span["sha256"] == canonical_sha256(span)  # what was served, notes included
        assert span["published_sha256"] == published[span["evidence_id"]]
        assert canonical_sha256(published_form(span)) == span["published_sha256"]


@pytest.mark.slow
def test_notes_supersede_and_show_in_the_evidence_view_without_a_stale_etag(
    executed: Executed, catalog: Catalog, settings: Settings
) -> None:
    client, video_id, video = executed
    run_id = video["latest_run"]["run_id"]
    view_url = f"/api/product/videos/{video_id}/evidence-view"
    before = client.get(view_url)
    published = _published_hashes(settings, catalog, run_id)
    _check_hashes(before.json(), published)
    assert all(s["verdict"] is None for s in before.json()["spans"])
    span, *others = before.json()["spans"]
    url = _notes_url(video_id, span["evidence_id"])

    note = _first_note(client, url, span["evidence_id"], run_id, _author(catalog, "acme"))
    after = client.get(view_url, headers={"If-None-Match": before.headers["etag"]})
    assert after.status_code == 200 and after.headers["etag"] != before.headers["etag"]
    shown = after.json()["spans"][0]
    assert shown["review_notes"][: len(span["review_notes"])] == span["review_notes"]
    person = {k: note[k] for k in NOTE_FIELDS - {"evidence_id", "run_id"}}
    assert shown["review_notes"][len(span["review_notes"]) :] == [person]
    assert shown["verdict"] == "confirmed" and shown["sha256"] != span["sha256"]
    assert after.json()["spans"][1:] == others  # other spans are served as before
    _check_hashes(after.json(), published)

    second = client.post(url, json={"text": "No: it follows a shadow.", "verdict": "rejected"})
    assert second.status_code == 201 and second.json()["supersedes"] == note["note_id"]
    listed = client.get(url)
    assert listed.status_code == 200
    assert listed.json() == {"data": [note, second.json()], "next_cursor": None}
    current = client.get(view_url, headers={"If-None-Match": after.headers["etag"]})
    assert current.status_code == 200 and current.json()["spans"][0]["verdict"] == "rejected"
    _check_hashes(current.json(), published)
    again = client.get(view_url, headers={"If-None-Match": current.headers["etag"]})
    assert again.status_code == 304

    _check_mcp(client, video_id, current.json(), second.json())


def _first_note(
    client: httpx.Client, url: str, evidence_id: str, run_id: str, author: str
) -> dict[str, Any]:
    first = client.post(url, json={"text": "  Checked frame by frame. ", "verdict": "confirmed"})
    assert first.status_code == 201, first.text
    note: dict[str, Any] = first.json()
    assert set(note) == NOTE_FIELDS and note["note_id"].startswith("note_")
    assert (note["author"], note["text"]) == (author, "Checked frame by frame.")
    assert (note["evidence_id"], note["run_id"], note["supersedes"]) == (evidence_id, run_id, None)
    return note


def _check_mcp(
    client: httpx.Client, video_id: str, view: dict[str, Any], last: dict[str, Any]
) -> None:
    """MCP shows the same view, and a note through the tool is one more in the same chain."""
    span = view["spans"][0]
    url = _notes_url(video_id, span["evidence_id"])
    assert ok(call(client, "get_evidence", video_id=video_id)) == view
    by_tool = ok(
        call(
            client,
            "add_review_note",
            video_id=video_id,
            evidence_id=span["evidence_id"],
            text="Needs a second pair of eyes.",
            verdict="needs_review",
        )
    )
    assert by_tool["supersedes"] == last["note_id"] and by_tool["author"] == last["author"]
    assert client.get(url).json()["data"][-1] == by_tool
    viewed = ok(call(client, "get_evidence", video_id=video_id))
    rest = client.get(f"/api/product/videos/{video_id}/evidence-view").json()
    assert viewed == rest and viewed["spans"][0]["verdict"] == "needs_review"


@pytest.mark.slow
def test_notes_are_refused_where_they_must_be(executed: Executed, processing: Any) -> None:
    client, video_id, _ = executed
    evidence_id = client.get(f"/api/product/videos/{video_id}/evidence-view").json()["spans"][0][
        "evidence_id"
    ]
    url = _notes_url(video_id, evidence_id)
    body = {"text": "Checked.", "verdict": "confirmed"}
    missing = client.post(_notes_url(video_id, "ev_nobodyhasthisid"), json=body)
    unknown = expect_problem(missing, 404, "not_found")
    assert unknown["detail"] == "no evidence span ev_nobodyhasthisid"
    other = processing("other")
    for answer in (other.post(url, json=body), other.get(url)):
        assert expect_problem(answer, 404, "not_found")["detail"] == f"no video {video_id}"
    for method in ("PUT", "PATCH", "DELETE"):
        refusal = expect_problem(client.request(method, url, json=body), 405, "method_not_allowed")
        assert refusal["detail"]
    bad_bodies = [
        {"text": "Checked.", "verdict": "maybe"},
        {"text": "", "verdict": "confirmed"},
        {"text": "   ", "verdict": "confirmed"},
        {"text": "x" * 2001, "verdict": "confirmed"},
        {"text": "Checked.", "verdict": "confirmed", "author": "someone else"},
        {"text": "Checked."},
    ]
    for bad in bad_bodies:
        expect_problem(client.post(url, json=bad), 422, "validation_error")
    tool = {"video_id": video_id, "text": "Checked.", "verdict": "confirmed"}
    refused(call(client, "add_review_note", evidence_id="ev_nobodyhasthisid", **tool), "not_found")
    refused(call(other, "add_review_note", evidence_id=evidence_id, **tool), "not_found")
    maybe = {**tool, "verdict": "maybe"}
    refused(call(client, "add_review_note", evidence_id=evidence_id, **maybe), "validation_error")
    assert client.get(url).json() == {"data": [], "next_cursor": None}  # nothing was recorded
    assert client.post(url, json={**body, "text": "x" * 2000}).status_code == 201
