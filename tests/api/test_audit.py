"""The audit trail over real HTTP: every authenticated call on a video (REST routes and MCP tools)
leaves one record in its tenant's chain, with who, what, ids, outcome and from where; a video's
records page newest first with the chain's head; another tenant's video is 404; a failing audit
log never breaks a read."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.app import create_app
from api.audit import AuditRecorder
from storage.catalog.audit import GENESIS, AuditEntry, AuditLog, chain_hash
from storage.catalog.database import Catalog
from testkit.live_server import serve_app
from tests.api.helpers import expect_problem
from tests.api.test_mcp import call, ok
from ves.settings import Settings

VIDEO = "/api/product/videos/{video_id}"
# an upload to come: registered without contacting any source
UPLOAD = {"filename": "lobby.mp4", "size_bytes": 1000, "content_type": "video/mp4"}
BODY = {"title": "Lobby", "source_type": "upload", "upload": UPLOAD}


@pytest.fixture
def app(settings: Settings, catalog: Catalog) -> FastAPI:
    return create_app(settings, catalog)


@pytest.fixture
def api_url(app: FastAPI) -> Iterator[str]:
    """The API of ``app`` (so a test can flush its audit writer)."""
    with serve_app(app) as url:
        yield url


def audit_of(client: httpx.Client, video_id: str, **params: Any) -> dict[str, Any]:
    answer = client.get(f"/api/product/videos/{video_id}/audit", params=params)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _fields(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in {"prev_hash", "hash"}}


def test_each_call_on_a_video_is_recorded_newest_first_with_its_chain(
    client: httpx.Client, catalog: Catalog, app: FastAPI
) -> None:
    video_id = client.post("/api/videos/add", json=BODY).json()["video_id"]
    assert client.get(f"/api/product/videos/{video_id}").status_code == 200
    assert client.get(f"/api/product/videos/{video_id}/timeline").status_code == 409
    body = audit_of(client, video_id)
    actions = [(r["action"], r["outcome"]) for r in body["data"]]
    assert actions == [
        (f"GET {VIDEO}/timeline", 409),
        (f"GET {VIDEO}", 200),
        ("POST /api/videos/add", 201),
    ]
    (key,) = [k for k in _keys(catalog)]
    for record in body["data"]:
        assert record["video_id"] == video_id and record["key_id"] == key
        assert record["client"] == "127.0.0.1" and record["at"].endswith("Z")
        assert record["hash"] == chain_hash(record["prev_hash"], _fields(record))
    assert body["data"][-1]["prev_hash"] == GENESIS
    assert body["chain_head"] == {"seq": 3, "hash": body["data"][0]["hash"]}
    assert body["next_cursor"] is None
    assert app.state.audit.flush()
    (report,) = AuditLog(catalog).verify()
    assert report.ok and report.checked == 4  # the audit read itself, recorded after it answered


def _keys(catalog: Catalog) -> list[str]:
    with catalog.read() as conn:
        return [str(k) for k in conn.exec_driver_sql("SELECT key_id FROM api_keys").scalars()]


def test_pages_follow_the_cursor_and_a_bad_cursor_is_400(client: httpx.Client) -> None:
    video_id = client.post("/api/videos/add", json=BODY).json()["video_id"]
    for _ in range(4):
        client.get(f"/api/product/videos/{video_id}")
    first = audit_of(client, video_id, limit=3)
    second = audit_of(client, video_id, limit=3, cursor=first["next_cursor"])
    seqs = [r["seq"] for r in first["data"] + second["data"]]
    assert seqs == [5, 4, 3, 2, 1] and second["next_cursor"] is None
    bad = client.get(f"/api/product/videos/{video_id}/audit", params={"cursor": "x!"})
    expect_problem(bad, 400, "invalid_request")


def test_another_tenants_video_is_404_and_failed_keys_leave_no_record(
    client: httpx.Client, client_for: Any, anon: httpx.Client, catalog: Catalog, app: FastAPI
) -> None:
    video_id = client.post("/api/videos/add", json=BODY).json()["video_id"]
    other = client_for("other")
    expect_problem(other.get(f"/api/product/videos/{video_id}/audit"), 404, "not_found")
    unknown = "vid_01jd3k8m2qa7x4r5t6y7v8w9z0"
    expect_problem(other.get(f"/api/product/videos/{unknown}/audit"), 404, "not_found")
    assert anon.get(f"/api/product/videos/{video_id}").status_code == 401
    records = audit_of(client, video_id)["data"]
    assert [r["action"] for r in records] == ["POST /api/videos/add"]  # nothing of B's or anon's
    assert app.state.audit.flush()
    reports = {r.tenant_id: r for r in AuditLog(catalog).verify()}
    assert [r.checked for r in reports.values()] == [2, 2] and all(r.ok for r in reports.values())


class _Broken(AuditLog):
    def append_many(self, entries: list[AuditEntry]) -> Any:
        raise RuntimeError("the catalog is gone (test)")


def test_a_failing_audit_log_never_breaks_the_answer(
    client: httpx.Client, app: FastAPI, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    app.state.audit = recorder = AuditRecorder(_Broken(catalog))
    added = client.post("/api/videos/add", json=BODY)  # a write: recorded before answering
    assert added.status_code == 201
    video_id = added.json()["video_id"]
    assert client.get(f"/api/product/videos/{video_id}").status_code == 200  # a read: queued
    assert recorder.flush() and recorder.failures == 2
    assert "audit record lost (2 so far): GET /api/product/videos/{video_id}" in caplog.text


@pytest.mark.slow
def test_reads_asks_and_mcp_tools_record_the_ids_they_touched(
    executed: tuple[httpx.Client, str, dict[str, Any]],
) -> None:
    client, video_id, video = executed
    run_id = video["latest_run"]["run_id"]
    spans = client.get(f"/api/product/videos/{video_id}/evidence-view").json()["spans"]
    thumb = spans[0]["frames"][0]["thumbnail_url"]
    assert client.get(thumb).status_code == 200
    asked = client.post(
        f"/api/product/videos/{video_id}/ask", json={"question": "How many objects appeared?"}
    ).json()
    ok(call(client, "get_evidence", video_id=video_id))
    records = audit_of(client, video_id)["data"]
    by_action = {r["action"]: r for r in reversed(records)}  # the newest of each
    assert by_action[f"POST {VIDEO}/execute"]["ids"] == {"run_id": run_id}
    assert by_action[f"POST {VIDEO}/execute"]["outcome"] == 202
    assert by_action[f"GET {VIDEO}/evidence-view"]["ids"] == {"run_id": run_id}
    thumb_ids = by_action[f"GET {VIDEO}/runs/{{run_id}}/thumbs/{{name}}"]["ids"]
    assert thumb_ids == {"run_id": run_id, "name": thumb.rsplit("/", 1)[1]}
    cited = [c["evidence_id"] for c in asked["citations"]]
    assert cited and by_action[f"POST {VIDEO}/ask"]["ids"] == {
        "run_id": run_id,
        "ask_id": asked["ask_id"],
        "evidence_ids": cited,
    }
    tool = by_action["mcp:get_evidence"]
    assert (tool["outcome"], tool["ids"], tool["client"]) == (200, {"run_id": run_id}, "127.0.0.1")
