"""Operations 1 and 2 and the upload route, over real HTTP against a real media server."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from testkit.media_server import MediaServer
from tests.api.helpers import expect_problem, upload_spec
from tests.conftest import Client


def test_register_a_url_video(client: httpx.Client, media: MediaServer) -> None:
    response = client.post(
        "/api/videos/add", json={"url": media.url("clip.mp4"), "title": " Lobby "}
    )
    assert response.status_code == 201, response.text
    video = response.json()
    assert video["video_id"].startswith("vid_")
    assert video["title"] == "Lobby"
    assert video["source"] == {"type": "url", "url": media.url("clip.mp4")}
    assert video["state"] == "registered" and video["latest_run"] is None
    assert video["created_at"].endswith("Z")
    assert client.get(f"/api/product/videos/{video['video_id']}").json() == video


def test_an_m3u8_url_registers_as_hls(client: httpx.Client, media: MediaServer) -> None:
    response = client.post(
        "/api/videos/add", json={"url": media.url("hls/index.m3u8"), "title": "Dock"}
    )
    assert response.status_code == 201, response.text
    assert response.json()["source"]["type"] == "hls"


def test_an_hls_url_that_serves_no_playlist_is_rejected(
    client: httpx.Client, media: MediaServer
) -> None:
    response = client.post(
        "/api/videos/add", json={"url": media.url("not-a-playlist.m3u8"), "title": "x"}
    )
    expect_problem(response, 422, "source_rejected")


def test_upload_flow_with_a_failed_attempt_then_a_retry(
    client: httpx.Client, media_root: Path
) -> None:
    data = (media_root / "clip.mp4").read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    spec = upload_spec(data, sha256=digest, recorded_at="2026-11-20T08:00:00Z")
    created = client.post(
        "/api/videos/add", json={"title": "Rec", "source_type": "upload", "upload": spec}
    )
    assert created.status_code == 201, created.text
    video = created.json()
    assert video["state"] == "awaiting_upload"
    assert video["upload_url"] == f"/api/videos/{video['video_id']}/content"
    assert video["source_sha256"] is None
    corrupt = data[:-10] + b"0123456789"
    expect_problem(client.put(video["upload_url"], content=corrupt), 422, "validation_error")
    assert (
        client.get(f"/api/product/videos/{video['video_id']}").json()["state"] == "awaiting_upload"
    )
    done = client.put(video["upload_url"], content=data, headers={"content-type": "video/mp4"})
    assert done.status_code == 200, done.text
    assert done.json()["state"] == "registered"
    assert done.json()["source_sha256"] == digest
    assert done.json()["upload_url"] is None
    expect_problem(client.put(video["upload_url"], content=data), 409, "conflict")


def test_upload_of_the_wrong_size_is_refused(client: httpx.Client) -> None:
    spec = upload_spec(b"x" * 100)
    video = client.post(
        "/api/videos/add", json={"title": "r", "source_type": "upload", "upload": spec}
    ).json()
    expect_problem(client.put(video["upload_url"], content=b"x" * 99), 422, "validation_error")
    expect_problem(client.put(video["upload_url"], content=b"x" * 101), 422, "validation_error")


def test_a_size_written_as_a_whole_float_is_that_integer(client: httpx.Client) -> None:
    """JSON Schema's integer is a number with no fraction, so 100.0 is 100 (the fuzz run sent
    it); the bytes then must be 100 long."""
    spec = {**upload_spec(b"x" * 100), "size_bytes": 100.0}
    added = client.post("/api/videos/add", json={"title": "r", "upload": spec})
    assert added.status_code == 201, added.text
    assert added.json()["upload"]["size_bytes"] == 100
    upload_url = added.json()["upload_url"]
    expect_problem(client.put(upload_url, content=b"x" * 99), 422, "validation_error")
    put = client.put(upload_url, content=b"x" * 100)
    assert put.status_code == 200 and put.json()["state"] == "registered", put.text


def test_upload_media_type_is_checked(client: httpx.Client) -> None:
    spec = upload_spec(b"x" * 10)
    video = client.post(
        "/api/videos/add", json={"title": "r", "source_type": "upload", "upload": spec}
    ).json()
    response = client.put(
        video["upload_url"], content=b"x" * 10, headers={"content-type": "text/html"}
    )
    expect_problem(response, 415, "unsupported_media_type")


def test_listing_pages_filters_and_rejects_bad_cursors(
    client: httpx.Client, media: MediaServer
) -> None:
    ids = [
        client.post(
            "/api/videos/add", json={"url": media.url("clip.mp4"), "title": f"v{n}"}
        ).json()["video_id"]
        for n in range(5)
    ]
    upload = {"title": "u", "source_type": "upload", "upload": upload_spec(b"x")}
    waiting = client.post("/api/videos/add", json=upload).json()["video_id"]
    first = client.get("/api/product/videos", params={"limit": 4}).json()
    second = client.get(
        "/api/product/videos", params={"limit": 4, "cursor": first["next_cursor"]}
    ).json()
    assert [v["video_id"] for v in first["data"] + second["data"]] == [waiting, *ids[::-1]]
    assert second["next_cursor"] is None
    only = client.get("/api/product/videos", params={"state": "awaiting_upload"}).json()["data"]
    assert [v["video_id"] for v in only] == [waiting]
    expect_problem(
        client.get("/api/product/videos", params={"cursor": "garbage!"}), 400, "invalid_request"
    )
    expect_problem(
        client.get("/api/product/videos", params={"state": "dancing"}), 422, "validation_error"
    )
    expect_problem(
        client.get("/api/product/videos", params={"limit": 101}), 422, "validation_error"
    )


def test_another_tenants_videos_are_invisible_on_every_route(
    client_for: Client, media: MediaServer
) -> None:
    acme, other = client_for("acme"), client_for("other")
    url_video = acme.post(
        "/api/videos/add", json={"url": media.url("clip.mp4"), "title": "a"}
    ).json()
    upload = {"title": "u", "source_type": "upload", "upload": upload_spec(b"xyz")}
    up_video = acme.post("/api/videos/add", json=upload).json()
    expect_problem(other.get(f"/api/product/videos/{url_video['video_id']}"), 404, "not_found")
    expect_problem(other.put(up_video["upload_url"], content=b"xyz"), 404, "not_found")
    assert other.get("/api/product/videos").json() == {"data": [], "next_cursor": None}
    assert (
        acme.get(f"/api/product/videos/{up_video['video_id']}").json()["state"] == "awaiting_upload"
    )
    expect_problem(acme.get("/api/product/videos/vid_unknown"), 404, "not_found")


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"url": "file:///etc/passwd", "title": "x"}, "source_rejected"),
        ({"url": "ftp://example.com/a.mp4", "title": "x"}, "source_rejected"),
        ({"url": "http://169.254.169.254/latest/meta-data/", "title": "x"}, "source_rejected"),
        ({"url": "http://no-such-host.invalid/a.mp4", "title": "x"}, "source_unreachable"),
        ({"url": "http://127.0.0.1:9/a.mp4", "title": "x"}, "source_unreachable"),
        ({"url": "not a url", "title": "x"}, "source_rejected"),
        ({"url": "https://example.com/a.mp4", "title": ""}, "validation_error"),
        ({"url": "https://example.com/a.mp4", "title": "a\u0000b"}, "validation_error"),
        ({"url": "https://example.com/a.mp4", "title": "x" * 201}, "validation_error"),
        ({"title": "no url"}, "validation_error"),
        ({"url": "https://example.com/a.mp4"}, "validation_error"),
        ({"url": "https://example.com/a.mp4", "title": "x", "colour": "red"}, "validation_error"),
        ({"title": "x", "source_type": "upload"}, "validation_error"),
        (
            {
                "title": "x",
                "source_type": "upload",
                "upload": {"filename": "a", "size_bytes": 0, "content_type": "video/mp4"},
            },
            "validation_error",
        ),
        (
            {
                "title": "x",
                "source_type": "upload",
                "upload": {"filename": "a", "size_bytes": True, "content_type": "video/mp4"},
            },
            "validation_error",
        ),
        (
            {
                "title": "x",
                "source_type": "upload",
                "upload": {"filename": "a", "size_bytes": 5.5, "content_type": "video/mp4"},
            },
            "validation_error",
        ),
        (  # an upload's url, when given, is an http(s) URL too (found by the fuzz run)
            {
                "title": "x",
                "url": "Https://host:90*",
                "upload": {"filename": "a", "size_bytes": 5, "content_type": "video/mp4"},
            },
            "source_rejected",
        ),
        (
            {
                "title": "x",
                "source_type": "upload",
                "upload": {"filename": "a", "size_bytes": 5, "content_type": "text/html"},
            },
            "validation_error",
        ),
        (
            {
                "title": "x",
                "source_type": "upload",
                "upload": {
                    "filename": "a",
                    "size_bytes": 5,
                    "content_type": "video/mp4",
                    "sha256": "zz",
                },
            },
            "validation_error",
        ),
        (  # a number of seconds is no RFC 3339 date-time (found by stress/fuzz/run.py)
            {
                "title": "x",
                "source_type": "upload",
                "upload": {
                    "filename": "a",
                    "size_bytes": 5,
                    "content_type": "video/mp4",
                    "recorded_at": 0,
                },
            },
            "validation_error",
        ),
    ],
)
def test_bad_registrations_get_their_problem(
    client: httpx.Client, body: dict[str, object], code: str
) -> None:
    response = client.post("/api/videos/add", json=body)
    problem = expect_problem(response, 422, code)
    if code == "validation_error":
        assert problem["errors"]
    assert client.get("/api/product/videos").json()["data"] == []


def test_private_sources_are_refused_unless_allowed(
    client_with: Callable[..., httpx.Client], media: MediaServer
) -> None:
    client = client_with(allow_private_sources=False)
    response = client.post("/api/videos/add", json={"url": media.url("clip.mp4"), "title": "x"})
    assert "loopback" in str(expect_problem(response, 422, "source_rejected")["detail"])


def test_redirects_are_checked_hop_by_hop(client: httpx.Client, media: MediaServer) -> None:
    media.add_route("/to-metadata", status=302, headers={"Location": "http://169.254.169.254/"})
    media.add_route("/to-clip", status=302, headers={"Location": "/clip.mp4"})
    response = client.post("/api/videos/add", json={"url": media.url("to-metadata"), "title": "x"})
    expect_problem(response, 422, "source_rejected")
    ok = client.post("/api/videos/add", json={"url": media.url("to-clip"), "title": "x"})
    assert ok.status_code == 201, ok.text


def test_a_source_answering_an_error_is_unreachable(
    client: httpx.Client, media: MediaServer
) -> None:
    media.add_route("/broken.mp4", status=500, body=b"oops")
    response = client.post("/api/videos/add", json={"url": media.url("broken.mp4"), "title": "x"})
    assert "500" in str(expect_problem(response, 422, "source_unreachable")["detail"])
    response = client.post("/api/videos/add", json={"url": media.url("missing.mp4"), "title": "x"})
    expect_problem(response, 422, "source_unreachable")


def test_declared_upload_over_the_limit_is_refused(
    client_with: Callable[..., httpx.Client],
) -> None:
    client = client_with(max_upload_bytes=1000, max_body_bytes=1000)
    body = {"title": "big", "source_type": "upload", "upload": upload_spec(b"x" * 1001)}
    expect_problem(client.post("/api/videos/add", json=body), 413, "payload_too_large")


def test_an_upload_over_the_limit_is_a_413_and_leaves_nothing(
    client_with: Callable[..., httpx.Client], data_dir: Path
) -> None:
    client = client_with(max_upload_bytes=5000, max_body_bytes=1000)
    body = {"title": "r", "source_type": "upload", "upload": upload_spec(b"x" * 5000)}
    video = client.post("/api/videos/add", json=body).json()
    response = client.put(video["upload_url"], content=iter([b"x" * 4000, b"x" * 4000]))
    expect_problem(response, 413, "payload_too_large")
    response = client.put(video["upload_url"], content=b"x" * 6000)
    expect_problem(response, 413, "payload_too_large")
    leftovers = [p for p in (data_dir / "uploads").rglob("*") if p.is_file()]
    assert leftovers == []
