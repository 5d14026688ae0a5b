"""The media server speaks enough HTTP for FFmpeg: ranges, HEAD, errors, HLS."""

from __future__ import annotations

import http.client
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import av
import pytest

from synthetic import GroundTruth, lobby_scene, write_video
from testkit.hls import write_hls
from testkit.media_server import MediaServer, RangeNotSatisfiableError, parse_range

BLOB = bytes(range(256)) * 40  # 10240 bytes, every offset distinguishable mod 256
# Never go through a proxy from the environment for loopback traffic.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GroundTruth]:
    base = tmp_path_factory.mktemp("media")
    (base / "secret.txt").write_text("top secret")
    root = base / "root"
    (root / "sub").mkdir(parents=True)
    (root / "blob.bin").write_bytes(BLOB)
    (root / "sub" / "name with space.txt").write_text("spaced")
    for suffix in (".mp4", ".mkv", ".ts", ".m3u8", ".m4s", ".jpg"):
        (root / f"empty{suffix}").write_bytes(b"")
    spec = replace(lobby_scene(), duration_s=6.0, scene_cuts=(3.0,))
    spec = replace(spec, objects=spec.objects[:2], signs=spec.signs[:1])
    truth = write_video(spec, root / "clip.mp4")
    write_hls(spec, root / "hls")
    return root, truth


@pytest.fixture
def server(media: tuple[Path, GroundTruth]) -> Iterator[MediaServer]:
    with MediaServer(media[0]) as srv:
        yield srv


def fetch(
    url: str, headers: dict[str, str] | None = None, method: str = "GET", timeout: float = 5.0
) -> tuple[int, dict[str, str], bytes]:
    """Make one request; HTTP errors come back as a status, not an exception."""
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with OPENER.open(request, timeout=timeout) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, dict(err.headers), err.read()


def raw_get(srv: MediaServer, raw_path: str) -> tuple[int, bytes]:
    """GET a path byte for byte, with no client-side normalisation."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    try:
        conn.putrequest("GET", raw_path, skip_host=False, skip_accept_encoding=True)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def test_full_get(server: MediaServer) -> None:
    status, headers, body = fetch(server.url("blob.bin"))
    assert (status, body) == (200, BLOB)
    assert headers["Accept-Ranges"] == "bytes"
    assert headers["Content-Length"] == str(len(BLOB))
    assert "Content-Range" not in headers


@pytest.mark.parametrize(
    ("header", "first", "last"),
    [
        ("bytes=0-99", 0, 99),
        ("bytes=5000-5000", 5000, 5000),
        ("bytes=10000-", 10000, 10239),
        ("bytes=-50", 10190, 10239),
        ("bytes=-999999", 0, 10239),
        ("bytes=10200-999999", 10200, 10239),
    ],
)
def test_range_forms(server: MediaServer, header: str, first: int, last: int) -> None:
    status, headers, body = fetch(server.url("blob.bin"), {"Range": header})
    assert status == 206
    assert headers["Content-Range"] == f"bytes {first}-{last}/{len(BLOB)}"
    assert headers["Content-Length"] == str(last - first + 1)
    assert body == BLOB[first : last + 1]


@pytest.mark.parametrize("header", ["bytes=10240-", "bytes=99999-100000", "bytes=-0"])
def test_unsatisfiable_range_is_416(server: MediaServer, header: str) -> None:
    status, headers, _ = fetch(server.url("blob.bin"), {"Range": header})
    assert status == 416
    assert headers["Content-Range"] == f"bytes */{len(BLOB)}"


@pytest.mark.parametrize("header", ["bytes=5-2", "items=0-5", "bytes=0-1,4-5", "bytes=-"])
def test_ignored_range_serves_everything(server: MediaServer, header: str) -> None:
    status, _, body = fetch(server.url("blob.bin"), {"Range": header})
    assert (status, body) == (200, BLOB)


def test_parse_range_edge_cases() -> None:
    assert parse_range(None, 10) is None
    assert parse_range(" bytes=2-3 ", 10) == (2, 3)
    with pytest.raises(RangeNotSatisfiableError):
        parse_range("bytes=-5", 0)
    with pytest.raises(RangeNotSatisfiableError):
        parse_range("bytes=0-", 0)


def test_head_has_get_headers_and_no_body(server: MediaServer) -> None:
    status, headers, body = fetch(server.url("blob.bin"), {"Range": "bytes=0-9"}, method="HEAD")
    assert (status, body) == (206, b"")
    assert headers["Content-Length"] == "10"
    assert headers["Content-Range"] == f"bytes 0-9/{len(BLOB)}"


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("empty.mp4", "video/mp4"),
        ("empty.mkv", "video/x-matroska"),
        ("empty.ts", "video/mp2t"),
        ("empty.m3u8", "application/vnd.apple.mpegurl"),
        ("empty.m4s", "video/iso.segment"),
        ("empty.jpg", "image/jpeg"),
        ("blob.bin", "application/octet-stream"),
    ],
)
def test_content_types(server: MediaServer, name: str, content_type: str) -> None:
    status, headers, _ = fetch(server.url(name), method="HEAD")
    assert (status, headers["Content-Type"]) == (200, content_type)


def test_missing_files_and_directories_are_404(server: MediaServer) -> None:
    assert fetch(server.url("nope.mp4"))[0] == 404
    assert fetch(server.url("sub"))[0] == 404
    assert fetch(server.url("sub/name with space.txt"))[2] == b"spaced"


@pytest.mark.parametrize(
    "raw_path", ["/../secret.txt", "/%2e%2e/secret.txt", "/sub/../../secret.txt", "/a%00b"]
)
def test_path_traversal_is_refused(server: MediaServer, raw_path: str) -> None:
    status, body = raw_get(server, raw_path)
    assert status in (403, 404)
    assert b"secret" not in body


def test_canned_routes(server: MediaServer) -> None:
    assert fetch(server.add_route("/boom", status=500, body=b"oops"))[::2] == (500, b"oops")
    moved = server.add_route("old.bin", status=302, headers={"Location": server.url("blob.bin")})
    assert fetch(moved)[::2] == (200, BLOB)
    slow = server.add_route("slow", body=b"late", delay_s=1.0)
    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        fetch(slow, timeout=0.2)
    cut = server.add_route("cut.bin", body=BLOB, abort_after=100)
    with pytest.raises(http.client.IncompleteRead):
        fetch(cut)
    assert [r.path for r in server.requests] == [
        "/boom",
        "/old.bin",
        "/blob.bin",
        "/slow",
        "/cut.bin",
    ]


def test_pyav_decodes_mp4_over_http(server: MediaServer, media: tuple[Path, GroundTruth]) -> None:
    truth = media[1]
    with av.open(server.url("clip.mp4"), timeout=10) as container:
        times = [float(f.time or 0.0) for f in container.decode(video=0)]
    assert times == pytest.approx([i / truth.fps for i in range(truth.frame_count)], abs=1e-6)
    ranges = [r.range for r in server.requests if r.path == "/clip.mp4"]
    assert len(ranges) >= 2 and all(r and r.startswith("bytes=") for r in ranges)


def test_pyav_decodes_hls_over_http(server: MediaServer, media: tuple[Path, GroundTruth]) -> None:
    truth = media[1]
    playlist = (media[0] / "hls" / "index.m3u8").read_text()
    assert "#EXT-X-ENDLIST" in playlist and playlist.count(".ts") == 3  # 6 s in 2 s segments
    with av.open(server.url("hls/index.m3u8"), timeout=10) as container:
        assert container.format.name == "hls"
        times = [float(f.time or 0.0) for f in container.decode(video=0)]
    assert len(times) == truth.frame_count
    assert times[0] == pytest.approx(0.0, abs=0.05)
    assert times[-1] == pytest.approx(truth.duration_s - 1 / truth.fps, abs=0.05)


def test_hls_from_an_existing_video(tmp_path: Path, media: tuple[Path, GroundTruth]) -> None:
    playlist = write_hls(media[0] / "clip.mp4", tmp_path / "hls", segment_s=4.0)
    assert playlist.read_text().count(".ts") == 2  # GOP is 2 s: cuts at 4 s, then the rest
    with av.open(str(playlist)) as container:
        frames = sum(1 for _ in container.decode(video=0))
    assert frames == media[1].frame_count
