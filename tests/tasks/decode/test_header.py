"""The header read of a URL or HLS source over real HTTP, against clips of KNOWN length.

Each clip is written here: 60 s at 10 fps with a keyframe every 2 s (``SceneSpec``'s GOP), and
the same clip looped ten times (600 s), each with its index at the end (as FFmpeg writes an MP4)
and at the start (``faststart``), served with and without byte ranges. Every read must say the
written length, or say why it could not, within its byte and time bounds.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from synthetic import SceneSpec, write_video
from tasks.decode.header import HeaderLimits, SourceHeader, read_header
from tasks.decode.ranged import BLOCK_BYTES
from testkit.hls import write_hls
from testkit.media_server import MediaServer
from testkit.remux import remux

CLIP = SceneSpec(duration_s=60.0, fps=10)  # 320x240, a keyframe every 2 s
LIMITS = HeaderLimits(max_bytes=4 * 1024 * 1024, timeout_s=3.0, allow_private=True)
METADATA = "http://169.254.169.254/latest/meta-data/"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("headers")
    write_video(CLIP, root / "60s-end.mp4")
    remux(root / "60s-end.mp4", root / "60s-start.mp4", faststart=True)
    remux(root / "60s-end.mp4", root / "600s-end.mp4", loops=10)
    remux(root / "60s-end.mp4", root / "600s-start.mp4", faststart=True, loops=10)
    remux(root / "600s-start.mp4", root / "600s.mkv")
    remux(root / "600s-start.mp4", root / "600s.ts")
    playlist = write_hls(root / "60s-end.mp4", root / "hls").read_text()
    (root / "hls" / "live.m3u8").write_text(
        playlist.replace("#EXT-X-ENDLIST", "").replace("#EXT-X-PLAYLIST-TYPE:VOD", "")
    )
    (root / "junk.mp4").write_bytes(b"this is not a video at all" * 400)
    return root


@pytest.fixture(params=[True, False], ids=["ranges", "no-ranges"])
def server(root: Path, request: pytest.FixtureRequest) -> Iterator[MediaServer]:
    with MediaServer(root, ranges=request.param) as srv:
        yield srv


@pytest.fixture
def ranged(root: Path) -> Iterator[MediaServer]:
    with MediaServer(root) as srv:
        yield srv


def _read(server: MediaServer, name: str, kind: str = "url", **bounds: object) -> SourceHeader:
    limits = HeaderLimits(**{**LIMITS.__dict__, **bounds})  # type: ignore[arg-type]
    return read_header(server.url(name), kind, limits)


def test_the_written_clips_keep_their_index_where_the_test_says(root: Path) -> None:
    for name in ("60s-end.mp4", "600s-end.mp4"):
        data = (root / name).read_bytes()
        assert data.index(b"moov") > data.index(b"mdat")
    for name in ("60s-start.mp4", "600s-start.mp4"):
        data = (root / name).read_bytes()
        assert data.index(b"moov") < data.index(b"mdat")


@pytest.mark.parametrize("name", ["60s-end.mp4", "60s-start.mp4", "600s-end.mp4", "600s-start.mp4"])
def test_an_mp4_header_says_the_written_length_with_or_without_ranges(
    server: MediaServer, root: Path, name: str
) -> None:
    header = _read(server, name)
    known_s = CLIP.duration_s * (10 if name.startswith("600") else 1)
    size = (root / name).stat().st_size
    assert header.reason is None and header.found == "header", header.detail
    assert header.duration_s == pytest.approx(known_s, abs=0.05)
    assert (header.width, header.height, header.fps) == (CLIP.width, CLIP.height, CLIP.fps)
    assert header.keyframe_interval_s == pytest.approx(2.0)
    assert header.size_bytes == size
    assert header.bitrate_bps == pytest.approx(size * 8 / known_s, rel=0.01)
    assert header.bytes_read <= size


@pytest.mark.parametrize("name", ["600s-end.mp4", "600s-start.mp4"])
def test_with_ranges_only_the_head_and_the_index_are_read(ranged: MediaServer, name: str) -> None:
    header = _read(ranged, name)
    assert header.duration_s == pytest.approx(600.0, abs=0.05)
    head_only = name.endswith("start.mp4")
    assert header.bytes_read <= (1 if head_only else 3) * BLOCK_BYTES
    requests = [r for r in ranged.requests if r.path == f"/{name}"]
    assert all(r.range for r in requests) and len(requests) == (1 if head_only else 2)


def test_without_ranges_an_index_past_the_budget_is_too_large(root: Path) -> None:
    with MediaServer(root, ranges=False) as server:
        header = _read(server, "600s-end.mp4", max_bytes=BLOCK_BYTES)
        assert header.reason == "too_large" and header.duration_s is None
        assert header.bytes_read <= BLOCK_BYTES
        assert "first 262144 bytes" in (header.detail or "")
        # The same budget covers a file whose index comes first.
        header = _read(server, "600s-start.mp4", max_bytes=BLOCK_BYTES)
        assert header.duration_s == pytest.approx(600.0, abs=0.05)


def test_an_mkv_prefix_says_its_length(server: MediaServer) -> None:
    header = _read(server, "600s.mkv", max_bytes=BLOCK_BYTES)
    assert header.found == "header" and header.duration_s == pytest.approx(600.0, abs=0.05)
    assert header.bytes_read <= BLOCK_BYTES


def test_an_mpeg_ts_prefix_does_not_guess_its_length(server: MediaServer) -> None:
    header = _read(server, "600s.ts", max_bytes=BLOCK_BYTES)
    assert header.reason == "no_duration" and header.duration_s is None
    assert "mpegts" in (header.detail or "") and header.width == CLIP.width


def test_an_hls_vod_is_the_sum_of_its_segments(server: MediaServer, root: Path) -> None:
    header = _read(server, "hls/index.m3u8", "hls")
    assert header.reason is None and header.found == "playlist"
    assert header.duration_s == pytest.approx(CLIP.duration_s, abs=0.05)
    assert (header.width, header.height, header.fps) == (CLIP.width, CLIP.height, CLIP.fps)
    first = (root / "hls" / "segment_000.ts").stat().st_size
    assert header.bitrate_bps == pytest.approx(first * 8 / 2.0, rel=0.1)  # 2 s segments


def test_a_live_playlist_has_no_end_and_says_so(ranged: MediaServer) -> None:
    header = _read(ranged, "hls/live.m3u8", "hls")
    assert header.live and header.reason == "live" and header.duration_s is None
    assert "no end" in (header.detail or "") and header.width == CLIP.width


def test_a_stalled_server_is_bounded_in_time(ranged: MediaServer) -> None:
    ranged.add_route("stall.mp4", delay_s=5.0, body=b"late")
    header = _read(ranged, "stall.mp4", timeout_s=1.0)
    assert header.reason == "timeout" and header.read_s < 2.0


def test_a_server_lying_about_its_length_is_bounded_in_time(
    ranged: MediaServer, root: Path
) -> None:
    head = (root / "60s-start.mp4").read_bytes()[:4096]
    lies = {"Content-Length": str(10 * len(head))}  # then sends a tenth of it and waits
    ranged.add_route("lies.mp4", body=head, headers=lies)
    header = _read(ranged, "lies.mp4", timeout_s=1.0)
    assert header.reason == "timeout" and header.read_s < 2.0


@pytest.fixture
def trickle() -> Iterator[str]:
    """A server that declares 10 MB and sends 100 bytes every 50 ms, forever (never idle long
    enough for a read timeout): only the deadline bounds it."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            head = b"HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\n"
            connection.sendall(head)
            while not stop.wait(0.05):
                try:
                    connection.sendall(b"\0" * 100)
                except OSError:
                    return

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/slow.mp4"
    stop.set()
    thread.join(timeout=5)
    listener.close()


def test_a_trickling_server_is_bounded_by_the_deadline(trickle: str) -> None:
    limits = HeaderLimits(max_bytes=LIMITS.max_bytes, timeout_s=1.0, allow_private=True)
    header = read_header(trickle, "url", limits)
    assert header.reason == "timeout" and header.read_s < 1.5


@pytest.mark.parametrize(
    ("name", "reason"), [("junk.mp4", "not_video"), ("missing.mp4", "unreachable")]
)
def test_what_is_not_a_video_says_why(ranged: MediaServer, name: str, reason: str) -> None:
    header = _read(ranged, name)
    assert header.reason == reason and header.duration_s is None and header.detail


def test_the_address_guard_refuses_before_any_byte(ranged: MediaServer) -> None:
    header = _read(ranged, "60s-start.mp4", allow_private=False)
    assert header.reason == "refused" and "loopback" in (header.detail or "")
    assert ranged.requests == []
    ranged.add_route("hop.mp4", status=302, headers={"Location": METADATA})
    header = _read(ranged, "hop.mp4")
    assert header.reason == "refused" and "link-local" in (header.detail or "")
    assert header.bytes_read == 0


REASONS = {"unreachable", "refused", "not_video", "too_large", "timeout", "no_duration", "live"}


@pytest.mark.parametrize("seed", range(12))
def test_hostile_bytes_never_escape_as_an_error(root: Path, tmp_path: Path, seed: int) -> None:
    """Damaged headers (cut, bytes flipped in the index, a bogus box size) come back as a
    header or a reason, within the bounds: never as an exception."""
    rng = np.random.default_rng(seed)
    data = bytearray((root / "60s-start.mp4").read_bytes())
    moov = data.index(b"moov")
    if seed % 3 == 0:
        data = data[: int(rng.integers(8, moov + 4000))]
    else:
        for at in rng.integers(0, moov + 3000, size=int(rng.integers(1, 40))):
            data[int(at)] = int(rng.integers(0, 256))
    if seed % 4 == 1:
        data[moov - 4 : moov] = b"\xff\xff\xff\xf0"  # the index claims 4 GB
    (tmp_path / "hostile.mp4").write_bytes(bytes(data))
    with MediaServer(tmp_path) as server:
        header = _read(server, "hostile.mp4", timeout_s=2.0, max_bytes=BLOCK_BYTES)
    assert header.reason in REASONS or header.duration_s is not None
    assert header.read_s < 3.0 and header.bytes_read <= BLOCK_BYTES
