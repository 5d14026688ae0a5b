"""The review copy against known content: H.264 in any container is copied (the same coded
pictures, nothing re-encoded), every other codec transcoded (H.264 yuv420p, 720p at most, a
keyframe every 2 s, every frame at its source time, the picture's colours kept); every copy a
faststart MP4; a source that does not copy leaves no file and says why."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import av
import numpy as np
import pytest

from stress.media.corpus import encode
from tasks.decode.stage import stream_start_s
from tasks.review.stage import KEYFRAME_S, ReviewCopy, choose_mode, make_review_copy

FPS = 10
SECONDS = 5
RED, BLUE = (230, 30, 30), (30, 30, 230)
COPIED = {  # container: H.264 with x264's default B-frames (pictures reordered), but in AVI
    "avi": "avi",  # which keeps no presentation times: a camera's AVI has no B-frames
    "mkv": "matroska",
    "ts": "mpegts",
    "mov": "mov",
}
TRANSCODED = {  # name: (codec, container, pixel format)
    "hevc.mkv": ("libx265", "matroska", "yuv420p"),
    "hevc.mp4": ("libx265", "mp4", "yuv420p"),
    "mpeg4.avi": ("mpeg4", "avi", "yuv420p"),
    "mjpeg.avi": ("mjpeg", "avi", "yuvj422p"),
    "h264-444.mkv": ("libx264", "matroska", "yuv444p"),  # H.264 that not every browser plays
    "h264-bframes.avi": ("libx264", "avi", "yuv420p"),  # no presentation times to copy
}


def _picture(index: int, width: int, height: int) -> np.ndarray:
    """Left half red, right half blue, and a white block that moves a step a frame (so that
    every frame differs, as a camera's do)."""
    rgb = np.empty((height, width, 3), np.uint8)
    rgb[:, : width // 2], rgb[:, width // 2 :] = RED, BLUE
    step = width // (FPS * SECONDS + 1)
    rgb[: height // 8, index * step : index * step + step] = 255
    return rgb


def _frames(width: int, height: int) -> Iterator[np.ndarray]:
    return (_picture(i, width, height) for i in range(FPS * SECONDS))


def _options(codec: str) -> dict[str, str]:
    if codec == "libx265":
        return {"x265-params": "log-level=error"}
    return {"g": "12"} if codec in ("libx264", "mpeg4") else {}


@pytest.fixture(scope="module", params=sorted(COPIED))
def h264_source(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("h264") / f"source.{request.param}"
    options = {"g": "12"} | ({"bf": "0"} if request.param == "avi" else {})
    return encode(path, _frames(320, 240), fmt=COPIED[request.param], options=options, fps=FPS)


@pytest.fixture(scope="module", params=sorted(TRANSCODED))
def other_source(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    codec, fmt, pix_fmt = TRANSCODED[request.param]
    if codec not in av.codecs_available:
        pytest.skip(f"no {codec} encoder here")
    path = tmp_path_factory.mktemp("other") / f"source.{request.param.split('.')[1]}"
    frames = _frames(1280, 960)  # larger than 720p: scaled to 960x720
    return encode(
        path, frames, codec=codec, fmt=fmt, pix_fmt=pix_fmt, options=_options(codec), fps=FPS
    )


def _nal_units(data: bytes) -> list[bytes]:
    """The NAL units of an H.264 access unit, Annex B (start codes, as in MPEG-TS) or length
    prefixed (MP4, MKV), access unit delimiters left out (a TS muxer adds them)."""
    if data.startswith((b"\x00\x00\x01", b"\x00\x00\x00\x01")):
        units = [
            u.lstrip(b"\x00")
            for u in data.replace(b"\x00\x00\x01", b"\x00\x00\x01\xff").split(b"\x00\x00\x01\xff")
        ]
        units = [u.rstrip(b"\x00") for u in units if u]
    else:
        units, at = [], 0
        while at + 4 <= len(data):
            size = int.from_bytes(data[at : at + 4], "big")
            units.append(data[at + 4 : at + 4 + size])
            at += 4 + size
    return [u for u in units if u and u[0] & 0x1F != 9]


def _coded(path: Path) -> list[tuple[list[bytes], bool]]:
    with av.open(str(path)) as container:
        packets = container.demux(container.streams.video[0])
        return [(_nal_units(bytes(p)), p.is_keyframe) for p in packets if p.size]


def _decoded(path: Path, analysed: bool = False) -> list[tuple[float, av.VideoFrame]]:
    """Every frame with its time: as a player shows it, or as the analysis counts it
    (``analysed``: from the stream's first timestamp), in time order (AVI's stand-ins for its
    B-frames' times come in decode order)."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        start = stream_start_s(stream) if analysed else 0.0
        frames = [(float(f.time) - start, f) for f in container.decode(stream)]
        times = sorted(t for t, _ in frames)
        return [(t, frame) for t, (_, frame) in zip(times, frames, strict=True)]


def _moov_first(path: Path) -> bool:
    data = path.read_bytes()
    return 0 < data.find(b"moov") < data.find(b"mdat")


def test_h264_in_any_container_is_copied_not_re_encoded(h264_source: Path, tmp_path: Path) -> None:
    made = make_review_copy(h264_source, tmp_path / "review.mp4")

    assert (made.mode, made.source_codec) == ("copy", "h264")
    assert (made.width, made.height, made.bytes) == (
        320,
        240,
        (tmp_path / "review.mp4").stat().st_size,
    )
    assert _coded(tmp_path / "review.mp4") == _coded(h264_source)  # every picture, as coded
    assert _moov_first(tmp_path / "review.mp4")
    copied, original = _decoded(tmp_path / "review.mp4"), _decoded(h264_source, analysed=True)
    assert [round(t, 3) for t, _ in copied] == [round(t, 3) for t, _ in original]
    assert [p for p in tmp_path.iterdir()] == [tmp_path / "review.mp4"]  # no partial left


def test_other_codecs_are_transcoded_to_a_browser_playable_720p_h264(
    other_source: Path, tmp_path: Path
) -> None:
    made = make_review_copy(other_source, tmp_path / "review.mp4")

    assert made.mode == "transcode" and "transcoded to H.264" in made.reason
    assert (made.width, made.height) == (960, 720)  # 1280x960 fitted within 1280x720, even
    with av.open(str(tmp_path / "review.mp4")) as container:
        stream = container.streams.video[0]
        assert (stream.codec_context.name, stream.codec_context.pix_fmt) == ("h264", "yuv420p")
        assert (stream.codec_context.width, stream.codec_context.height) == (960, 720)
    assert _moov_first(tmp_path / "review.mp4")
    copy, source = _decoded(tmp_path / "review.mp4"), _decoded(other_source, analysed=True)
    assert len(copy) == len(source) == FPS * SECONDS
    for (t_copy, _), (t_source, _) in zip(copy, source, strict=True):
        assert t_copy == pytest.approx(t_source, abs=0.5 / FPS)  # within a frame
    keyframes = [t for t, frame in copy if frame.key_frame]  # every 2 s from the first frame
    assert keyframes == pytest.approx([copy[0][0] + n * KEYFRAME_S for n in range(3)], abs=1e-3)
    for index in (0, 23, FPS * SECONDS - 1):  # the colours survive, and each frame is its own
        rgb = copy[index][1].to_ndarray(format="rgb24").astype(int)
        assert np.abs(rgb[600, 240] - RED).max() < 24 and np.abs(rgb[600, 720] - BLUE).max() < 24
        block = 1280 // (FPS * SECONDS + 1)  # the source's block width: 0.75 of it in the copy
        assert rgb[20, round((index + 0.5) * block * 0.75)].min() > 200  # where it was


def test_a_copy_covers_the_runs_bound_at_most(h264_source: Path, tmp_path: Path) -> None:
    made = make_review_copy(h264_source, tmp_path / "review.mp4", bound_s=2.0)
    times = [t for t, _ in _decoded(tmp_path / "review.mp4")]
    # Cut in decode order: with B-frames, a frame or two shown just after the bound come along.
    assert made.mode == "copy" and 1.9 <= max(times) <= 2.0 + 3 / FPS


@pytest.mark.parametrize(
    "content",
    [b"", b"this is not a video at all" * 100, b"RIFF\x00\x00\x00\x00AVI LIST" + bytes(3000)],
)
def test_a_source_that_does_not_copy_gives_none_with_the_reason_and_no_file(
    content: bytes, tmp_path: Path
) -> None:
    source = tmp_path / "source.avi"
    source.write_bytes(content)
    made = make_review_copy(source, tmp_path / "out" / "review.mp4")
    assert made.mode == "none" and made.reason.startswith("the review copy failed: ")
    assert made.bytes == 0 and not (tmp_path / "out").exists()


def test_a_truncated_source_gives_the_copy_of_what_is_there(tmp_path: Path) -> None:
    whole = encode(tmp_path / "whole.avi", _frames(320, 240), codec="mpeg4", fmt="avi", fps=FPS)
    cut = tmp_path / "cut.avi"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size * 6 // 10])
    made = make_review_copy(cut, tmp_path / "review.mp4")
    times = [t for t, _ in _decoded(tmp_path / "review.mp4")]
    assert made.mode == "transcode" and 1.5 < max(times) < SECONDS - 1


@pytest.mark.parametrize(
    ("codec", "pix_fmt", "mode"),
    [
        ("h264", "yuv420p", "copy"),
        ("h264", "yuvj420p", "copy"),
        ("h264", "yuv420p10le", "transcode"),
        ("h264", "yuv422p", "transcode"),
        ("hevc", "yuv420p", "transcode"),
        ("vp9", "yuv420p", "transcode"),
        ("mpeg4", "yuv420p", "transcode"),
        ("mjpeg", "yuvj422p", "transcode"),
    ],
)
def test_only_h264_a_browser_plays_is_copied(codec: str, pix_fmt: str, mode: str) -> None:
    assert choose_mode(codec, pix_fmt)[0] == mode
    assert choose_mode(codec, pix_fmt, "matroska", reordered=True)[0] == mode
    assert choose_mode(codec, pix_fmt, "avi", reordered=False)[0] == mode
    assert choose_mode(codec, pix_fmt, "avi", reordered=True)[0] == "transcode"


def test_the_cost_block_names_how_and_why() -> None:
    made = ReviewCopy("copy", "why", 0.123456, 10, 320, 240, "h264", "ab" * 32)
    assert made.as_cost() == {
        "mode": "copy",
        "reason": "why",
        "seconds": 0.1235,
        "bytes": 10,
        "width": 320,
        "height": 240,
        "source_codec": "h264",
        "source_sha256": "ab" * 32,
    }
    assert ReviewCopy.none("an HLS source").as_cost()["mode"] == "none"
