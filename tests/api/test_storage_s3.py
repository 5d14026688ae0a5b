"""The API and a real flow on an S3 store (moto's server), whatever ``VES_TEST_STORAGE`` says:
an upload lands in the bucket and a run reads it from there, thumbnails stream from the bucket or
redirect to a presigned URL, the review copy plays from the bucket by ranges, and a run whose
manifest is gone is never served."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from storage.artifacts.blobs import BlobStore, open_blob_store
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from testkit.s3 import S3Server
from testkit.service import wait_state
from tests.api.helpers import expect_problem, upload_recording, upload_spec, wait_done
from ves.settings import Settings

pytestmark = pytest.mark.slow


@pytest.fixture
def storage_overrides(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """This module always runs on a fresh bucket (overrides the root conftest's switch)."""
    return s3_server.use_fresh_bucket(monkeypatch)


@pytest.fixture
def store(settings: Settings) -> BlobStore:
    return open_blob_store(settings)


@pytest.fixture
def uploaded_run(
    processing: Any, lobby_root: Path, store: BlobStore, settings: Settings, catalog: Catalog
) -> tuple[httpx.Client, str, str]:
    """An uploaded lobby recording, executed to success: (client, video id, run key)."""
    client = processing("acme")
    data = (lobby_root / "lobby.mp4").read_bytes()
    spec = upload_spec(data, sha256=hashlib.sha256(data).hexdigest())
    video = client.post(
        "/api/videos/add", json={"title": "rec", "source_type": "upload", "upload": spec}
    ).json()
    put = client.put(video["upload_url"], content=data, headers={"content-type": "video/mp4"})
    assert put.status_code == 200, put.text
    tenant = TenantStore(catalog).find_tenant("acme")
    assert tenant is not None
    uploads = store.list(f"uploads/tenant={tenant.tenant_id}/video={video['video_id']}")
    assert [b.size for b in uploads] == [len(data)]  # in the bucket, and nowhere on disk
    assert not [p for p in settings.uploads_dir.rglob("*") if p.is_file()]
    run_id = client.post(f"/api/product/videos/{video['video_id']}/execute").json()["run_id"]
    done = wait_done(client, video["video_id"])
    assert done["state"] == "succeeded", done["latest_run"]
    key = RunStore(catalog).get(run_id).artifacts_path
    assert key == f"artifacts/tenant={tenant.tenant_id}/video={video['video_id']}/run={run_id}"
    return client, video["video_id"], key


def _first_frame(client: httpx.Client, video_id: str) -> dict[str, Any]:
    spans = client.get(f"/api/product/videos/{video_id}/evidence-view").json()["spans"]
    frame: dict[str, Any] = spans[0]["frames"][0]
    return frame


def test_an_upload_is_read_from_the_bucket_and_published_there(
    uploaded_run: tuple[httpx.Client, str, str], store: BlobStore, settings: Settings
) -> None:
    client, video_id, key = uploaded_run
    names = {b.key.removeprefix(f"{key}/") for b in store.list(key)}
    assert {"manifest.json", "cost.json", "events.parquet", "review.mp4"} <= names
    assert client.get(f"/api/product/videos/{video_id}/scene-graph").json()["objects"]
    assert client.get(f"/api/product/videos/{video_id}/cost").json()["processed_s"] > 0
    assert not list(settings.work_root.glob("run_*"))  # worker-local scratch is gone
    assert not (settings.data_dir / "artifacts").exists()


def test_thumbnails_stream_from_the_bucket_or_redirect_when_presigning(
    uploaded_run: tuple[httpx.Client, str, str], client_with: Callable[..., httpx.Client]
) -> None:
    client, video_id, _ = uploaded_run
    frame = _first_frame(client, video_id)
    streamed = client.get(frame["thumbnail_url"])
    assert streamed.headers["content-type"] == "image/jpeg"
    assert hashlib.sha256(streamed.content).hexdigest() == frame["sha256"]

    presigning = client_with(s3_presign=True)
    redirect = presigning.get(frame["thumbnail_url"], follow_redirects=False)
    assert redirect.status_code == 307
    fetched = httpx.get(redirect.headers["location"])  # no API key: the URL is the credential
    assert hashlib.sha256(fetched.content).hexdigest() == frame["sha256"]
    missing = frame["thumbnail_url"].rsplit("/", 1)[0] + "/ev_0_999.jpg"
    expect_problem(presigning.get(missing), 404, "not_found")


def test_a_run_without_its_manifest_is_never_served(
    uploaded_run: tuple[httpx.Client, str, str],
    store: BlobStore,
    client_with: Callable[..., httpx.Client],
) -> None:
    client, video_id, key = uploaded_run
    frame = _first_frame(client, video_id)
    store.delete(f"{key}/manifest.json")
    fresh = client_with()  # a new API process: nothing verified yet
    for artifact in ("scene-graph", "timeline", "evidence-view", "cost"):
        expect_problem(fresh.get(f"/api/product/videos/{video_id}/{artifact}"), 409, "not_ready")
    expect_problem(fresh.get(frame["thumbnail_url"]), 404, "not_found")


def test_an_export_lands_in_the_bucket_and_one_spans_clip_is_read_from_it_in_place(
    uploaded_run: tuple[httpx.Client, str, str],
) -> None:
    """The single-clip download reads the zip in the bucket by ranges (its clip is the
    bundle's file byte for byte)."""
    client, video_id, _ = uploaded_run
    exports = f"/api/product/videos/{video_id}/exports"
    url = f"{exports}/{client.post(exports).json()['export_id']}"
    export = wait_state(client, url, {"succeeded", "failed"})
    assert export["state"] == "succeeded", export["error"]
    bundle = client.get(export["bundle"]["download_url"]).content
    with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
        span = json.loads(archive.read("manifest.json"))["spans"][0]
        clip = client.get(f"{url}/clips/{span['evidence_id']}")
        assert clip.status_code == 200, clip.text
        assert clip.content == archive.read(span["clip"])


def test_a_player_reads_the_review_copy_from_the_bucket_by_ranges(
    uploaded_run: tuple[httpx.Client, str, str], store: BlobStore
) -> None:
    client, video_id, key = uploaded_run
    body = client.get(f"/api/product/videos/{video_id}/media-url").json()
    assert (body["kind"], body["review_copy"]) == ("review", True)
    copy = store.get_bytes(f"{key}/review.mp4")
    with httpx.Client(base_url=client.base_url) as anon:
        part = anon.get(body["url"], headers={"Range": "bytes=1000-1999"})
    assert part.status_code == 206, part.text
    assert part.content == copy[1000:2000]
    assert part.headers["x-review-copy"] == f"true; original-sha256={body['original_sha256']}"


def test_a_player_reads_an_upload_from_the_bucket_by_ranges(
    client: httpx.Client, anon: httpx.Client, store: BlobStore
) -> None:
    """The media route seeks in the object: a range of the bucket's copy, not of a local one."""
    data = bytes(range(256)) * 4096  # 1 MiB, past one read chunk
    video_id = upload_recording(client, data)
    url = client.get(f"/api/product/videos/{video_id}/media-url").json()["url"]
    part = anon.get(url, headers={"Range": "bytes=300000-300099"})
    assert part.status_code == 206, part.text
    assert part.content == data[300000:300100]
    assert part.headers["content-range"] == f"bytes 300000-300099/{len(data)}"
    assert anon.get(url, headers={"Range": "bytes=-70000"}).content == data[-70000:]
    assert anon.get(url).content == data
