"""Exports over real HTTP on a really processed video (the lobby, fetched by URL): queued with
202, made by the ``export-evidence`` flow, downloaded, and verified offline by ``ves verify``
against the key the API publishes; refused as they must be."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from storage.catalog.usage import ALL, add
from tasks.retention import sweep_retention
from testkit.service import wait_state
from tests.api.conftest import InlineSubmitter
from tests.api.helpers import expect_problem
from tests.api.test_mcp import call, ok, refused
from tests.cli.test_verify import run_verify
from tests.fixtures.credentials import flip_one_mdat_byte, independent
from ves.clock import utc_now
from ves.settings import Settings

Executed = tuple[httpx.Client, str, dict[str, Any]]
pytestmark = pytest.mark.slow

FINAL = {"succeeded", "failed"}


def _stored(client: httpx.Client) -> int:
    return int(client.get("/api/product/billing/state").json()["usage"]["storage_bytes"])


def _exports(video_id: str) -> str:
    return f"/api/product/videos/{video_id}/exports"


def test_an_export_downloads_and_verifies_offline_with_the_published_key(
    executed: Executed, tmp_path: Path
) -> None:
    client, video_id, video = executed
    view = client.get(f"/api/product/videos/{video_id}/evidence-view").json()
    accepted = client.post(_exports(video_id))
    assert accepted.status_code == 202, accepted.text
    queued = accepted.json()
    assert queued["state"] == "queued" and queued["run_id"] == video["latest_run"]["run_id"]
    url = f"{_exports(video_id)}/{queued['export_id']}"

    export = wait_state(client, url, FINAL)
    assert export["state"] == "succeeded", export["error"]
    download = client.get(export["bundle"]["download_url"])
    assert download.status_code == 200 and download.headers["content-type"] == "application/zip"
    assert hashlib.sha256(download.content).hexdigest() == export["bundle"]["sha256"]
    (tmp_path / "evidence.zip").write_bytes(download.content)
    keys = httpx.get(f"{client.base_url}/api/public/signing-keys").json()["keys"]
    (active,) = [k for k in keys if k["key_id"] == export["bundle"]["signing_key_id"]]
    (tmp_path / "service.pem").write_text(active["public_key_pem"])

    checked = run_verify(tmp_path, "evidence.zip", "--public-key", "service.pem")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    with zipfile.ZipFile(tmp_path / "evidence.zip") as archive:
        manifest = json.loads(archive.read("manifest.json"))
        spans = [json.loads(archive.read(s["path"])) for s in manifest["spans"]]
        source = json.loads(archive.read("source.json"))
        audit = [json.loads(line) for line in archive.read("audit.jsonl").splitlines()]
    by_id = {s["evidence_id"]: s for s in view["spans"]}
    assert {s["evidence_id"]: s for s in spans} == by_id  # every span, exactly as served
    assert source["url"] == video["source"]["url"] and source["sha256"] == spans[0]["source_sha256"]
    assert manifest["export"]["export_id"] == queued["export_id"]
    actions = [record["action"] for record in audit]
    assert "POST /api/product/videos/{video_id}/execute" in actions  # who ran it, from where
    assert "POST /api/product/videos/{video_id}/exports" in actions  # and who asked for this
    assert all(r["video_id"] == video_id for r in audit)
    assert manifest["export"]["audit_head"]["seq"] >= audit[-1]["seq"]
    _check_single_clip_downloads(client, url, tmp_path / "evidence.zip", manifest)
    _check_content_credentials(client, tmp_path, manifest)


def _check_content_credentials(
    client: httpx.Client, folder: Path, manifest: dict[str, Any]
) -> None:
    """Every clip's C2PA manifest Trusted under the roots the API publishes, by ``ves verify
    --trust`` and by the independent npm verifier; one mdat byte changed fails the latter too."""
    public = httpx.get(f"{client.base_url}/api/public/signing-keys").json()
    (folder / "roots.pem").write_text(public["c2pa_trust_anchors_pem"])
    checked = run_verify(folder, "evidence.zip", "--trust", "roots.pem")
    assert checked.returncode == 0 and "c2pa        ok" in checked.stdout, checked.stdout
    clip = manifest["clips"][0]
    with zipfile.ZipFile(folder / "evidence.zip") as archive:
        (folder / "clip.mp4").write_bytes(archive.read(clip["path"]))
    code, report = independent(folder / "clip.mp4", folder / "roots.pem")
    assert code == 0 and report["label"] == clip["c2pa_manifest"], report
    code, report = independent(
        flip_one_mdat_byte(folder / "clip.mp4", folder / "t.mp4"), folder / "roots.pem"
    )
    assert code == 1 and not report["bmff_hash_bound"]


def _check_single_clip_downloads(
    client: httpx.Client, url: str, bundle: Path, manifest: dict[str, Any]
) -> None:
    """Each span's clip, alone: the bundle's file byte for byte, where the span lies in it in
    its headers; an unknown span is 404."""
    clips = {c["path"]: c for c in manifest["clips"]}
    with zipfile.ZipFile(bundle) as archive:
        for span in manifest["spans"][:3]:
            got = client.get(f"{url}/clips/{span['evidence_id']}")
            assert got.status_code == 200, got.text
            assert got.headers["content-type"] == "video/mp4"
            assert got.content == archive.read(span["clip"])
            assert float(got.headers["X-Clip-Start-S"]) == pytest.approx(span["clip_start_s"])
            assert float(got.headers["X-Clip-End-S"]) == pytest.approx(span["clip_end_s"])
            start = clips[span["clip"]]["source_start_s"]
            assert float(got.headers["X-Clip-Source-Start-S"]) == pytest.approx(start)
            assert got.headers["X-Clip-Method"] == "copied"
    expect_problem(client.get(f"{url}/clips/ev_nope"), 404, "not_found")


def test_a_selection_of_an_unknown_span_fails_with_its_reason_and_has_no_bundle(
    executed: Executed,
) -> None:
    client, video_id, _ = executed
    accepted = client.post(_exports(video_id), json={"evidence_ids": ["ev_nope"]})
    assert accepted.status_code == 202
    url = f"{_exports(video_id)}/{accepted.json()['export_id']}"
    export = wait_state(client, url, FINAL)
    assert export["state"] == "failed" and export["bundle"] is None
    assert export["error"] == {
        "code": "invalid_request",
        "message": "no evidence span ev_nope in the run",
    }
    expect_problem(client.get(f"{url}/bundle"), 409, "not_ready")
    expect_problem(client.get(f"{url}/clips/ev_nope"), 404, "not_found")  # not the run's
    first = client.get(f"/api/product/videos/{video_id}/evidence-view").json()["spans"][0]
    expect_problem(client.get(f"{url}/clips/{first['evidence_id']}"), 409, "not_ready")


def test_exports_are_refused_where_they_must_be(
    executed: Executed, processing: Any, submitter: InlineSubmitter, lobby_media: Any
) -> None:
    client, video_id, _ = executed
    expect_problem(
        client.post(_exports(video_id), json={"start_s": 5, "end_s": 1}), 422, "validation_error"
    )
    expect_problem(
        client.post(_exports(video_id), json={"redact": ["plates"]}), 422, "validation_error"
    )
    for not_a_number in ({"end_s": False}, {"start_s": "2"}):  # found by the fuzz run
        expect_problem(client.post(_exports(video_id), json=not_a_number), 422, "validation_error")
    other = processing("globex")
    expect_problem(other.post(_exports(video_id)), 404, "not_found")
    mine = client.post(_exports(video_id)).json()
    expect_problem(other.get(f"{_exports(video_id)}/{mine['export_id']}"), 404, "not_found")
    theirs = f"{_exports(video_id)}/{mine['export_id']}/clips/ev_nope"
    expect_problem(other.get(theirs), 404, "not_found")
    fresh = other.post("/api/videos/add", json={"url": lobby_media.url("lobby.mp4"), "title": "x"})
    expect_problem(other.post(_exports(fresh.json()["video_id"])), 409, "not_ready")
    submitter.down = True
    expect_problem(client.post(_exports(video_id)), 503, "unavailable")


def test_the_mcp_tool_exports_and_redacts_as_the_route_does(executed: Executed) -> None:
    client, video_id, _ = executed
    view = client.get(f"/api/product/videos/{video_id}/evidence-view").json()
    first = view["spans"][0]["evidence_id"]

    queued = ok(
        call(client, "export_evidence", video_id=video_id, evidence_ids=[first], redact=["text"])
    )

    assert queued["state"] == "queued"
    assert queued["selection"] == {"evidence_ids": [first], "redact": ["text"]}
    export = wait_state(client, f"{_exports(video_id)}/{queued['export_id']}", FINAL)
    assert export["state"] == "succeeded", export["error"]
    bundle = client.get(export["bundle"]["download_url"]).content
    with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert [s["evidence_id"] for s in manifest["spans"]] == [first]
    url = f"{_exports(video_id)}/{queued['export_id']}/clips"
    assert client.get(f"{url}/{first}").headers["X-Clip-Method"] == "re-encoded"  # redacted
    if len(view["spans"]) > 1:  # a span of the run that this bundle does not hold
        left_out = view["spans"][1]["evidence_id"]
        expect_problem(client.get(f"{url}/{left_out}"), 404, "not_found")
    assert manifest["redaction"]["applied"] == ["text"]
    assert set(manifest["redaction"]["files"]) == {
        f["path"] for f in manifest["files"] if f["path"].startswith(("thumbnails/", "clips/"))
    }
    refused(call(client, "export_evidence", video_id=video_id, evidence_ids=[]), "validation_error")


def test_a_bundle_counts_in_storage_until_it_expires_with_its_run(
    executed: Executed, settings: Settings, catalog: Catalog
) -> None:
    """Its bytes are part of the plan's `storage_bytes`; retention deletes it with its run's
    artifacts (the export then says when, and the download answers 409); and no export is
    made once the storage the plan buys is full."""
    client, video_id, _ = executed
    before = _stored(client)
    accepted = client.post(_exports(video_id)).json()
    url = f"{_exports(video_id)}/{accepted['export_id']}"
    export = wait_state(client, url, FINAL)
    assert export["state"] == "succeeded", export["error"]
    used = _stored(client)
    assert used == before + export["bundle"]["bytes"]

    later = utc_now() + timedelta(days=settings.plan("sandbox").retention_days + 1)
    sweep_retention(settings, catalog, now=later)
    expired = client.get(url).json()
    assert expired["expired_at"] is not None and expired["bundle"] is None
    expect_problem(client.get(f"{url}/bundle"), 409, "not_ready")
    assert _stored(client) == 0

    client.post(f"/api/product/videos/{video_id}/execute")
    assert wait_state(client, f"/api/product/videos/{video_id}", FINAL)["state"] == "succeeded"
    tenant_id = TenantStore(catalog).find_tenant("acme").tenant_id  # type: ignore[union-attr]
    with catalog.write() as conn:  # as if the plan's storage were used up by other runs
        add(conn, tenant_id, ALL, "storage_bytes", float(settings.plan("sandbox").storage_bytes))
    expect_problem(client.post(_exports(video_id)), 402, "plan_limit_exceeded")
