"""The decode stage against files whose nature is known: real clips, impostors, and URL sources.

Every bad input must fail with the service's own error and a message a user can act on; every
good input must report exactly what the synthetic clip was written with.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from synthetic import SceneSpec, lobby_scene, write_video
from tasks.context import SourceRef
from tasks.decode.stage import SourceInfo, decode_source, open_video, probe_video
from testkit.hls import write_hls
from testkit.media_server import MediaServer
from ves.errors import (
    LimitExceeded,
    SourceInvalid,
    SourceRejected,
    SourceUnreachable,
    StorageUnavailable,
    VesError,
)
from ves.settings import Settings

CLIP = SceneSpec(duration_s=4.0, objects=lobby_scene().objects[:1])  # 320x240, 10 fps, 40 frames
MP4 = "mov,mp4,m4a,3gp,3g2,mj2"
METADATA = "http://169.254.169.254/latest/meta-data/"

Probe = tuple[float | None, int, int, float, str, str]


def write_audio_only(path: Path, seconds: float = 1.0, rate: int = 8000) -> None:
    """An AAC file without any video stream."""
    with av.open(str(path), "w") as out:
        stream = out.add_stream("aac", rate=rate)
        frame = av.AudioFrame.from_ndarray(
            np.zeros((1, int(rate * seconds)), np.float32), format="fltp", layout="mono"
        )
        frame.sample_rate, frame.pts = rate, 0
        out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


def write_truncated(source: Path, target: Path, fraction: float) -> Path:
    """The first ``fraction`` of ``source``'s bytes."""
    data = source.read_bytes()
    target.write_bytes(data[: int(len(data) * fraction)])
    return target


MAKERS: dict[str, Callable[[Path], object]] = {
    "clip.mp4": lambda p: write_video(CLIP, p),
    "clip.ts": lambda p: write_video(CLIP, p),
    "clip.mkv": lambda p: write_video(CLIP, p),
    "empty.mp4": lambda p: p.write_bytes(b""),
    "text.mp4": lambda p: p.write_text("this is not a video\n" * 20),
    "still.png": lambda p: Image.new("RGB", (64, 48), (200, 30, 30)).save(p),
    "still.jpg": lambda p: Image.new("RGB", (64, 48), (30, 200, 30)).save(p),
    "audio.m4a": write_audio_only,
    "half.mp4": lambda p: write_truncated(p.parent / "clip.mp4", p, 0.5),
}


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every file of ``MAKERS`` in one folder (also served by the media server)."""
    root = tmp_path_factory.mktemp("media")
    for name, make in MAKERS.items():
        make(root / name)
    write_hls(CLIP, root / "hls")
    return root


@pytest.fixture
def server(media: Path) -> Iterator[MediaServer]:
    with MediaServer(media) as srv:
        yield srv


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    path = tmp_path / "scratch"
    path.mkdir()
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- probe_video ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("clip.mp4", (4.0, 320, 240, 10.0, "h264", MP4)),
        ("clip.ts", (4.0, 320, 240, 10.0, "h264", "mpegts")),
        ("clip.mkv", (4.0, 320, 240, 10.0, "h264", "matroska,webm")),
    ],
)
def test_probe_reports_what_was_written(
    media: Path, settings: Settings, name: str, expected: Probe
) -> None:
    duration, *rest = probe_video(media / name, settings)
    assert duration == pytest.approx(expected[0], abs=0.01)
    assert tuple(rest) == expected[1:]


@pytest.mark.parametrize(
    ("name", "error", "message"),
    [
        ("empty.mp4", SourceInvalid, r"empty \(0 bytes\)"),
        ("text.mp4", SourceInvalid, "not a readable video"),
        ("still.png", SourceInvalid, "still image"),
        ("still.jpg", SourceInvalid, "still image"),
        ("audio.m4a", SourceInvalid, "no video stream"),
        ("half.mp4", SourceInvalid, "not a readable video"),  # the moov index was at the end
    ],
)
def test_probe_refuses_what_is_not_a_video(
    media: Path, settings: Settings, name: str, error: type[VesError], message: str
) -> None:
    with pytest.raises(error, match=message):
        probe_video(media / name, settings)


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ({"max_width": 319}, "320x240; the largest accepted is 319x2160"),
        ({"max_height": 239}, "320x240; the largest accepted is 3840x239"),
    ],
)
def test_probe_enforces_the_size_bounds(
    media: Path, settings: Settings, bounds: dict[str, int], message: str
) -> None:
    with pytest.raises(LimitExceeded, match=message):
        probe_video(media / "clip.mp4", settings.model_copy(update=bounds))


def test_probe_accepts_exactly_the_bounds(media: Path, settings: Settings) -> None:
    exact = settings.model_copy(update={"max_width": 320, "max_height": 240})
    assert probe_video(media / "clip.mp4", exact)[1:3] == (320, 240)


def test_open_video_translates_pyav_errors_raised_inside_the_block(media: Path) -> None:
    with pytest.raises(SourceInvalid, match="corrupt") as caught, open_video(media / "clip.mp4"):
        raise av.error.InvalidDataError(1094995529, "Invalid data found")
    assert isinstance(caught.value.__cause__, av.error.FFmpegError)


# --- decode_source: uploads -------------------------------------------------------------------


def test_an_upload_is_hashed_and_probed_in_place(
    media: Path, settings: Settings, scratch: Path
) -> None:
    path = media / "clip.mp4"
    info = decode_source(SourceRef("upload", None, str(path)), scratch, settings)
    assert info == SourceInfo(
        str(path), sha256(path), path.stat().st_size, info.duration_s, 320, 240, 10.0, "h264", MP4
    )
    assert info.duration_s == pytest.approx(4.0, abs=0.01)
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("path", [None, "/nonexistent/clip.mp4"])
def test_a_missing_upload_is_source_invalid(
    settings: Settings, scratch: Path, path: str | None
) -> None:
    with pytest.raises(SourceInvalid, match="upload it again"):
        decode_source(SourceRef("upload", None, path), scratch, settings)


# --- decode_source: URL and HLS sources -------------------------------------------------------


@dataclass(frozen=True)
class Fetched:
    """What a URL source should come back as."""

    kind: str
    path: str
    container: str
    local_name: str


@pytest.mark.parametrize(
    "case",
    [
        Fetched("url", "clip.mp4", MP4, "source.bin"),
        Fetched("url", "clip.mkv", "matroska,webm", "source.bin"),
        Fetched("hls", "hls/index.m3u8", "mpegts", "source.ts"),
    ],
    ids=lambda c: f"{c.kind}-{c.path}",
)
def test_a_url_source_is_downloaded_hashed_and_probed(
    server: MediaServer, media: Path, settings: Settings, scratch: Path, case: Fetched
) -> None:
    info = decode_source(SourceRef(case.kind, server.url(case.path), None), scratch, settings)
    local = scratch / case.local_name
    assert info.path == str(local)
    if case.kind == "url":
        assert local.read_bytes() == (media / case.path).read_bytes()
    assert (info.sha256, info.size_bytes) == (sha256(local), local.stat().st_size)
    assert (info.width, info.height, info.fps, info.codec) == (320, 240, 10.0, "h264")
    assert info.container == case.container
    assert info.duration_s == pytest.approx(4.0, abs=0.15)


def test_a_redirect_to_cloud_metadata_is_rejected(
    server: MediaServer, settings: Settings, scratch: Path
) -> None:
    url = server.add_route("go", status=302, headers={"Location": METADATA})
    with pytest.raises(SourceRejected, match=r"169\.254\.169\.254"):
        decode_source(SourceRef("url", url, None), scratch, settings)
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize(
    ("path", "message"), [("missing.mp4", "HTTP 404"), ("hls/missing.m3u8", "HTTP 404")]
)
def test_a_missing_url_is_unreachable(
    server: MediaServer, settings: Settings, scratch: Path, path: str, message: str
) -> None:
    kind = "hls" if path.endswith(".m3u8") else "url"
    with pytest.raises(SourceUnreachable, match=message):
        decode_source(SourceRef(kind, server.url(path), None), scratch, settings)


def test_private_sources_are_refused_unless_allowed(
    server: MediaServer, settings: Settings, scratch: Path
) -> None:
    strict = settings.model_copy(update={"allow_private_sources": False})
    with pytest.raises(SourceRejected, match="loopback"):
        decode_source(SourceRef("url", server.url("clip.mp4"), None), scratch, strict)


def test_a_source_over_max_source_bytes_leaves_nothing_behind(
    server: MediaServer, media: Path, settings: Settings, scratch: Path
) -> None:
    size = (media / "clip.mp4").stat().st_size
    small = settings.model_copy(update={"max_source_bytes": size - 1})
    with pytest.raises(LimitExceeded, match=f"limit of {size - 1} bytes"):
        decode_source(SourceRef("url", server.url("clip.mp4"), None), scratch, small)
    assert list(scratch.iterdir()) == []
    exact = settings.model_copy(update={"max_source_bytes": size})
    assert decode_source(SourceRef("url", server.url("clip.mp4"), None), scratch, exact).size_bytes


def test_a_download_cut_off_mid_body_is_unreachable_and_leaves_nothing(
    server: MediaServer, media: Path, settings: Settings, scratch: Path
) -> None:
    data = (media / "clip.mp4").read_bytes()
    url = server.add_route("dropped.mp4", body=data, abort_after=len(data) // 3)
    with pytest.raises(SourceUnreachable, match="complete message body"):
        decode_source(SourceRef("url", url, None), scratch, settings)
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("name", ["text.mp4", "still.png", "audio.m4a"])
def test_a_downloaded_impostor_is_source_invalid(
    server: MediaServer, settings: Settings, scratch: Path, name: str
) -> None:
    with pytest.raises(SourceInvalid):
        decode_source(SourceRef("url", server.url(name), None), scratch, settings)


def test_probe_refuses_a_decompression_bomb(tmp_path: Path, settings: Settings) -> None:
    """3,000 tiny frames at 1000 fps: within a 10 s duration bound, over its 2,400-frame budget."""
    from stress.media.corpus import bomb

    path = bomb(tmp_path / "bomb.mkv", 3000, 1000)
    assert path.stat().st_size < 200_000
    bounded = settings.model_copy(update={"max_duration_s": 10})
    with pytest.raises(LimitExceeded, match="declares 1000 frames per second; at most 2400"):
        probe_video(path, bounded)
    assert probe_video(path, settings)[0] == pytest.approx(3.0)  # 600 s: 144,000 frames allowed


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (SourceUnreachable("the host does not answer"), True),
        (StorageUnavailable("the bucket refused"), True),
        (SourceInvalid("not a video"), False),
        (LimitExceeded("too many frames"), False),
        (ValueError("a bug"), False),
    ],
)
def test_only_transient_failures_are_retried(error: Exception, retried: bool) -> None:
    """An invalid or oversized source fails at once; a second try could only repeat it."""
    from prefect.states import Failed

    from tasks.decode.stage import transient

    assert transient(None, None, Failed(data=error)) is retried


def test_a_stream_of_an_unknown_codec_is_source_invalid(tmp_path: Path, settings: Settings) -> None:
    """FFmpeg opens the file but has no decoder for its stream (a flipped bit in a codec id
    did this to an MP4 of the hostile media corpus, and the run failed as ``internal``)."""
    write_video(CLIP, tmp_path / "clip.mkv")
    data = (tmp_path / "clip.mkv").read_bytes()
    assert data.count(b"V_MPEG4/ISO/AVC") == 1
    (tmp_path / "odd.mkv").write_bytes(data.replace(b"V_MPEG4/ISO/AVC", b"V_MPEG4/ISO/XYZ"))
    with pytest.raises(SourceInvalid, match="codec is unknown"):
        probe_video(tmp_path / "odd.mkv", settings)


def test_an_hls_stream_is_fetched_only_up_to_the_run_s_bound(
    media: Path, server: MediaServer, scratch: Path, settings: Settings
) -> None:
    """A run bounded to 2 s fetches the first 2 s segment of the 4 s stream, not the second."""
    ref = SourceRef("hls", server.url("hls/index.m3u8"), None)
    info = decode_source(ref, scratch, settings, max_duration_s=2.0)
    assert info.size_bytes == (media / "hls" / "segment_000.ts").stat().st_size
    fetched = [r.path for r in server.requests if r.path.endswith(".ts")]
    assert fetched == ["/hls/segment_000.ts"]
