"""Playing a stored source: the signed media URL and the range requests a player makes."""

from __future__ import annotations

import hashlib
import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from api.routes.media import media_secret
from storage.catalog.tenants import TenantStore
from testkit.media_server import MediaServer
from tests.api.helpers import expect_problem, upload_recording, upload_spec
from tests.conftest import Client
from ves.media_url import sign_media_token
from ves.settings import Settings

DATA = bytes(range(256)) * 40  # 10,240 bytes whose every range is recognisable


def _media_url(client: httpx.Client, video_id: str) -> str:
    answer = client.get(f"/api/product/videos/{video_id}/media-url")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["kind"], body["content_type"]) == ("stored", "video/mp4")
    assert body["expires_at"].endswith("Z")
    assert body["review_copy"] is False and body["run_id"] is None
    return str(body["url"])


@pytest.fixture
def played(client: httpx.Client, anon: httpx.Client) -> tuple[httpx.Client, str, str]:
    """(a client without any key, the signed URL of an uploaded recording, its video id)."""
    video_id = upload_recording(client, DATA)
    return anon, _media_url(client, video_id), video_id


def test_the_whole_source_is_served_without_the_key(
    played: tuple[httpx.Client, str, str],
) -> None:
    anon, url, _ = played
    assert "ves_" not in url  # the URL carries a token, never the key
    whole = anon.get(url)
    assert whole.status_code == 200
    assert whole.content == DATA
    assert whole.headers["content-type"] == "video/mp4"
    assert whole.headers["accept-ranges"] == "bytes"
    assert whole.headers["content-length"] == str(len(DATA))
    assert whole.headers["etag"] == f'"{hashlib.sha256(DATA).hexdigest()}"'
    head = anon.head(url)
    assert (head.status_code, head.content) == (200, b"")
    assert head.headers["content-length"] == str(len(DATA))


@pytest.mark.parametrize(
    ("asked", "start", "end"),
    [
        ("bytes=0-99", 0, 99),
        ("bytes=100-", 100, len(DATA) - 1),
        ("bytes=-50", len(DATA) - 50, len(DATA) - 1),
        ("bytes=10000-99999", 10000, len(DATA) - 1),  # clamped to the end
        ("bytes=-99999", 0, len(DATA) - 1),
    ],
)
def test_a_range_answers_206_with_exactly_those_bytes(
    played: tuple[httpx.Client, str, str], asked: str, start: int, end: int
) -> None:
    anon, url, _ = played
    part = anon.get(url, headers={"Range": asked})
    assert part.status_code == 206, part.text
    assert part.content == DATA[start : end + 1]
    sent = f"bytes {start}-{end}/{len(DATA)}"
    assert part.headers["content-range"] == sent
    assert part.headers["content-length"] == str(end - start + 1)
    head = anon.head(url, headers={"Range": asked})
    assert (head.status_code, head.headers["content-range"]) == (206, sent)


@pytest.mark.parametrize("asked", ["bytes=10240-", "bytes=99999-100000", "bytes=-0"])
def test_a_range_past_the_end_is_a_416_naming_the_size(
    played: tuple[httpx.Client, str, str], asked: str
) -> None:
    anon, url, _ = played
    refused = anon.get(url, headers={"Range": asked})
    expect_problem(refused, 416, "range_not_satisfiable")
    assert refused.headers["content-range"] == f"bytes */{len(DATA)}"


@pytest.mark.parametrize("asked", ["bytes=0-1,5-9", "bytes=9-3", "pages=1-2", "bytes=-"])
def test_a_range_that_does_not_parse_is_ignored(
    played: tuple[httpx.Client, str, str], asked: str
) -> None:
    anon, url, _ = played
    whole = anon.get(url, headers={"Range": asked})
    assert (whole.status_code, whole.content) == (200, DATA)


def test_a_forged_moved_or_expired_token_is_a_403(
    played: tuple[httpx.Client, str, str], client: httpx.Client, settings: Settings
) -> None:
    anon, url, video_id = played
    token = parse_qs(urlsplit(url).query)["token"][0]
    path = urlsplit(url).path
    other_video = upload_recording(client, b"other bytes")
    for bad in (token[:-2] + "xx", "v1.ten_x.1", "nonsense", token.replace("v1.", "v2.")):
        expect_problem(anon.get(path, params={"token": bad}), 403, "forbidden")
    moved = path.replace(video_id, other_video)
    expect_problem(anon.get(moved, params={"token": token}), 403, "forbidden")
    tenant_id = token.split(".")[1]
    secret = media_secret(settings)
    expired = sign_media_token(secret, tenant_id, video_id, int(time.time()) - 1)
    body = expect_problem(anon.get(path, params={"token": expired}), 403, "forbidden")
    assert "expired" in str(body["detail"])
    expect_problem(anon.get(path), 422, "validation_error")  # no token at all


def test_another_tenants_video_is_a_404_even_with_a_valid_signature(
    client_for: Client, tenants: TenantStore, settings: Settings, anon: httpx.Client
) -> None:
    acme, other = client_for("acme"), client_for("other")
    video_id = upload_recording(acme, DATA)
    expect_problem(other.get(f"/api/product/videos/{video_id}/media-url"), 404, "not_found")
    stranger = tenants.find_tenant("other")
    assert stranger is not None
    token = sign_media_token(media_secret(settings), stranger.tenant_id, video_id, 2**40)
    path = f"/api/media/videos/{video_id}/source"
    expect_problem(anon.get(path, params={"token": token}), 404, "not_found")


def test_an_hls_source_is_played_from_its_own_playlist(
    client: httpx.Client, media: MediaServer
) -> None:
    playlist = media.url("hls/index.m3u8")
    video = client.post("/api/videos/add", json={"url": playlist, "title": "h"}).json()
    body = client.get(f"/api/product/videos/{video['video_id']}/media-url").json()
    assert body == {
        "kind": "hls",
        "url": playlist,
        "expires_at": None,
        "content_type": "application/vnd.apple.mpegurl",
        "review_copy": False,
        "run_id": None,
        "original_sha256": None,
    }


def test_a_source_whose_bytes_are_not_kept_answers_a_clear_problem(
    client: httpx.Client, anon: httpx.Client, media: MediaServer
) -> None:
    url_video = client.post("/api/videos/add", json={"url": media.url("clip.mp4"), "title": "a"})
    assert url_video.status_code == 201, url_video.text
    body = expect_problem(
        client.get(f"/api/product/videos/{url_video.json()['video_id']}/media-url"),
        409,
        "no_stored_source",
    )
    assert "not kept" in str(body["detail"])
    spec = {"title": "u", "source_type": "upload", "upload": upload_spec(b"xyz")}
    waiting = client.post("/api/videos/add", json=spec).json()["video_id"]
    expect_problem(client.get(f"/api/product/videos/{waiting}/media-url"), 409, "no_stored_source")
    expect_problem(anon.get(f"/api/product/videos/{waiting}/media-url"), 401, "unauthorized")
