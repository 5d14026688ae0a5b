"""Playing a processed video: ``media-url`` answers the newest run's review copy (an upload's and
a URL video's alike), marked as a review copy of the original; its bytes by ranges to whoever
holds the signed URL, and to no one once the token is forged, moved or expired, to another
tenant, or after retention deleted the run."""

from __future__ import annotations

import hashlib
import io
import time
from dataclasses import replace
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import av
import httpx
import pytest

from api.routes.media import media_secret
from storage.catalog.database import Catalog
from storage.catalog.tenants import TenantStore
from stress.media.corpus import encode
from synthetic import lobby_scene, render_frame, scale_scene
from tasks.retention import sweep_retention
from tests.api.helpers import expect_problem, upload_spec, wait_done
from ves.clock import utc_now
from ves.media_url import review_scope, sign_media_token
from ves.settings import Settings

SCENE = replace(scale_scene(lobby_scene(), width=320, height=240, duration_s=4), noise=0.0)


@pytest.fixture(scope="module")
def street_avi(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A camera export as the street clip comes: MPEG-4 Part 2 in AVI (no browser plays it)."""
    frames = (render_frame(SCENE, i) for i in range(SCENE.frame_count))
    path = tmp_path_factory.mktemp("street") / "street.avi"
    return encode(path, frames, codec="mpeg4", fmt="avi", fps=SCENE.fps).read_bytes()


def _upload(client: httpx.Client, data: bytes) -> str:
    spec = upload_spec(data, sha256=hashlib.sha256(data).hexdigest(), filename="street.avi")
    spec["content_type"] = "video/x-msvideo"
    video = client.post(
        "/api/videos/add", json={"title": "street", "upload": spec, "source_type": "upload"}
    )
    assert video.status_code == 201, video.text
    put = client.put(
        video.json()["upload_url"], content=data, headers={"content-type": "video/x-msvideo"}
    )
    assert put.status_code == 200, put.text
    return str(video.json()["video_id"])


def _executed(client: httpx.Client, video_id: str) -> str:
    accepted = client.post(f"/api/product/videos/{video_id}/execute")
    assert accepted.status_code == 202, accepted.text
    video = wait_done(client, video_id)
    assert video["state"] == "succeeded", video["latest_run"]
    return str(video["latest_run"]["run_id"])


def _anon(client: httpx.Client) -> httpx.Client:
    return httpx.Client(base_url=client.base_url)


def _review_url(client: httpx.Client, video_id: str, run_id: str) -> dict[str, Any]:
    answer = client.get(f"/api/product/videos/{video_id}/media-url")
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    assert (body["kind"], body["content_type"], body["review_copy"]) == (
        "review",
        "video/mp4",
        True,
    )
    assert body["run_id"] == run_id and body["expires_at"].endswith("Z")
    assert urlsplit(body["url"]).path == f"/api/media/videos/{video_id}/runs/{run_id}/review"
    return body


def _played(data: bytes) -> tuple[str, str, int]:
    """Codec, pixel format and frame count of an MP4 held in memory; and it is faststart."""
    assert 0 < data.find(b"moov") < data.find(b"mdat")
    with av.open(io.BytesIO(data)) as container:
        stream = container.streams.video[0]
        frames = sum(1 for _ in container.decode(stream))
        return stream.codec_context.name, str(stream.codec_context.pix_fmt), frames


def test_an_uploaded_avi_plays_its_review_copy_once_a_run_made_one(
    processing: Any, street_avi: bytes
) -> None:
    client = processing("acme")
    video_id = _upload(client, street_avi)
    before = client.get(f"/api/product/videos/{video_id}/media-url").json()
    assert (before["kind"], before["content_type"]) == ("stored", "video/x-msvideo")
    original = hashlib.sha256(street_avi).hexdigest()
    assert before["review_copy"] is False and before["original_sha256"] == original

    run_id = _executed(client, video_id)
    body = _review_url(client, video_id, run_id)
    assert body["original_sha256"] == original
    with _anon(client) as anon:
        whole = anon.get(body["url"])
        assert whole.status_code == 200, whole.text
        assert whole.headers["x-review-copy"] == f"true; original-sha256={original}"
        assert whole.headers["etag"] == f'"{hashlib.sha256(whole.content).hexdigest()}"'
        assert whole.headers["content-type"] == "video/mp4"
        assert _played(whole.content) == ("h264", "yuv420p", SCENE.frame_count)
        part = anon.get(body["url"], headers={"Range": "bytes=100-199"})
        assert part.status_code == 206 and part.content == whole.content[100:200]
        assert part.headers["content-range"] == f"bytes 100-199/{len(whole.content)}"
        assert part.headers["x-review-copy"] == whole.headers["x-review-copy"]
        head = anon.head(body["url"], headers={"Range": "bytes=-10"})
        assert (head.status_code, head.content) == (206, b"")
    cost = client.get(f"/api/product/videos/{video_id}/cost").json()["review_copy"]
    assert (cost["mode"], cost["source_codec"], cost["bytes"]) == (
        "transcode",
        "mpeg4",
        len(whole.content),
    )


def test_a_url_video_plays_its_review_copy_after_a_run(
    executed: tuple[httpx.Client, str, dict[str, Any]],
) -> None:
    client, video_id, video = executed
    body = _review_url(client, video_id, video["latest_run"]["run_id"])
    with _anon(client) as anon:
        part = anon.get(body["url"], headers={"Range": "bytes=0-1023"})
        assert part.status_code == 206, part.text
        assert part.headers["x-review-copy"].startswith("true; original-sha256=")
        whole = anon.get(body["url"]).content
    assert _played(whole)[:2] == ("h264", "yuv420p") and part.content == whole[:1024]
    cost = client.get(f"/api/product/videos/{video_id}/cost").json()["review_copy"]
    assert cost["mode"] == "copy" and body["original_sha256"] == cost["source_sha256"]


@pytest.fixture
def processed_upload(processing: Any, street_avi: bytes) -> tuple[httpx.Client, str, str, str]:
    """(acme's client, the uploaded street clip's video id, its run's id, its review URL)."""
    client = processing("acme")
    video_id = _upload(client, street_avi)
    run_id = _executed(client, video_id)
    return client, video_id, run_id, _review_url(client, video_id, run_id)["url"]


def test_a_review_url_is_refused_when_forged_moved_expired_or_another_tenants(
    processed_upload: tuple[httpx.Client, str, str, str],
    processing: Any,
    settings: Settings,
    catalog: Catalog,
) -> None:
    client, video_id, run_id, url = processed_upload
    path, token = urlsplit(url).path, parse_qs(urlsplit(url).query)["token"][0]
    tenant_id, secret = token.split(".")[1], media_secret(settings)
    source_token = sign_media_token(secret, tenant_id, video_id, 2**40)  # the source's scope
    expired = sign_media_token(
        secret, tenant_id, video_id, int(time.time()) - 1, review_scope(run_id)
    )
    other_run = path.replace(run_id, "run_01m7zc0q1g2h3j4k5m6n7p8q9r")
    with _anon(client) as anon:
        for bad in (token[:-2] + "xx", "nonsense", source_token):
            expect_problem(anon.get(path, params={"token": bad}), 403, "forbidden")
        expect_problem(anon.get(other_run, params={"token": token}), 403, "forbidden")
        source_path = f"/api/media/videos/{video_id}/source"
        expect_problem(anon.get(source_path, params={"token": token}), 403, "forbidden")
        refused = expect_problem(anon.get(path, params={"token": expired}), 403, "forbidden")
        assert "expired" in str(refused["detail"])
        other = processing("other")
        expect_problem(other.get(f"/api/product/videos/{video_id}/media-url"), 404, "not_found")
        stranger = TenantStore(catalog).find_tenant("other")
        assert stranger is not None
        theirs = sign_media_token(secret, stranger.tenant_id, video_id, 2**40, review_scope(run_id))
        expect_problem(anon.get(path, params={"token": theirs}), 404, "not_found")


def test_retention_deletes_the_review_copy_and_the_upload_plays_as_stored_again(
    processed_upload: tuple[httpx.Client, str, str, str], settings: Settings, catalog: Catalog
) -> None:
    client, video_id, run_id, url = processed_upload

    swept = sweep_retention(settings, catalog, utc_now() + timedelta(days=400))

    assert [s.run.run_id for s in swept.swept] == [run_id]
    with _anon(client) as anon:
        expect_problem(anon.get(url), 404, "not_found")
    after = client.get(f"/api/product/videos/{video_id}/media-url").json()
    assert (after["kind"], after["review_copy"]) == ("stored", False)
