"""The hostile media corpus: one ``Case`` per file, what it is and what the service must do.

Each case is made into a folder by ``make`` (PyAV encodes and byte surgery, nothing downloaded)
and states its expectation: ``succeeds``, or the error codes a clear failure may carry, plus the
time and memory bounds its run must stay within.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from stress.media import corpus, hls, surgery

SUCCEEDS = "succeeds"
TRUNCATED = ("source_truncated", "source_invalid")
BROKEN = (SUCCEEDS, "source_invalid", "source_truncated")


@dataclass(frozen=True)
class Case:
    """One hostile input. ``make(folder)`` writes it and returns its file (or HLS playlist)."""

    name: str
    what: str
    expect: tuple[str, ...]
    make: Callable[[Path], Path]
    time_s: float = 15.0  # a 6 s clip runs in ~3 s, most of it the child starting
    memory_mib: float = 600.0  # a run of these small clips peaks near 300 MiB
    options: dict[str, object] = field(default_factory=dict)
    hls: bool = False
    quick: bool = False


def _base(folder: Path) -> Path:
    path = folder / "base.mp4"
    return path if path.exists() else corpus.base_mp4(path)


def _from_base(name: str, edit: Callable[[Path, Path], None]) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        dest = folder / name
        edit(_base(folder), dest)
        return dest

    return make


def _lobby(folder: Path) -> Path:
    path = folder / "lobby.mp4"
    return path if path.exists() else corpus.base_mp4(path, corpus.LOBBY)


def _truncated(percent: int) -> Case:
    def make(folder: Path) -> Path:
        dest = folder / f"truncated_{percent:02d}.mp4"
        surgery.truncate(_lobby(folder), dest, percent / 100)
        return dest

    return Case(
        f"truncated_{percent:02d}",
        f"the 20 s lobby MP4 (index first) cut after {percent}% of its bytes",
        TRUNCATED,
        make,
        quick=percent in (5, 55, 95),
    )


def _renamed(name: str, fmt_suffix: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        real = folder / f"real-{name}{fmt_suffix}"
        corpus.encode(real, corpus.rendered(corpus.BASE))
        return real.rename(folder / name)

    return make


def _encoded(
    name: str, times_ms: list[int] | None = None, rotation: int = 0
) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        frames = corpus.rendered(corpus.BASE)
        return corpus.encode(folder / name, frames, times_ms=times_ms, rotation=rotation)

    return make


def _vfr_times() -> list[int]:
    return list(itertools.accumulate([0] + [60 + (i * 37) % 140 for i in range(59)]))


def _codec(
    name: str, codec: str, decoder: str, suffix: str, pix_fmt: str = "yuv420p", **options: str
) -> Case:
    """The base clip in another codec or pixel format (skipped where FFmpeg lacks it)."""

    def make(folder: Path) -> Path:
        corpus.require(decoder)
        frames = corpus.rendered(corpus.BASE)
        path = folder / f"{name}{suffix}"
        return corpus.encode(path, frames, codec=codec, pix_fmt=pix_fmt, options=options)

    return Case(name, f"{codec} {pix_fmt} in {suffix}", (SUCCEEDS,), make)


def _write(name: str, writer: Callable[[Path], Path]) -> Callable[[Path], Path]:
    return lambda folder: writer(folder / name)


def _empty(path: Path) -> Path:
    path.write_bytes(b"")
    return path


def _one_frame(path: Path) -> Path:
    return corpus.encode(path, corpus.rendered(corpus.BASE, 1))


CASES: tuple[Case, ...] = (
    Case("baseline", "the base clip: 6 s 320x240 H.264 MP4", (SUCCEEDS,), _base, quick=True),
    *(_truncated(p) for p in (5, 15, 25, 35, 45, 55, 65, 75, 85, 95)),
    Case(
        "bitflip_header",
        "40 bits flipped in the first 2% (ftyp and moov)",
        BROKEN,
        _from_base("bitflip_header.mp4", lambda s, d: surgery.flip_bits(s, d, (0, 0.02), 40, 1)),
    ),
    Case(
        "bitflip_stream",
        "200 bits flipped in the middle of the stream (40-60%)",
        BROKEN,
        _from_base("bitflip_stream.mp4", lambda s, d: surgery.flip_bits(s, d, (0.4, 0.6), 200, 2)),
        quick=True,
    ),
    Case(
        "mkv_named_mp4",
        "Matroska named .mp4",
        (SUCCEEDS,),
        _renamed("mkv_named.mp4", ".mkv"),
        quick=True,
    ),
    Case("ts_named_mov", "MPEG-TS named .mov", (SUCCEEDS,), _renamed("ts_named.mov", ".ts")),
    Case(
        "zero_length",
        "an empty file named .mp4",
        ("source_invalid",),
        _write("empty.mp4", _empty),
        quick=True,
    ),
    Case(
        "png_named_mp4",
        "a PNG named .mp4",
        ("source_invalid",),
        _write("png.mp4", lambda p: corpus.still(p, "PNG")),
        quick=True,
    ),
    Case(
        "gif_named_mp4",
        "an animated GIF (3 frames) named .mp4",
        ("source_invalid",),
        _write("gif.mp4", lambda p: corpus.still(p, "GIF", 3)),
    ),
    Case(
        "moov_long",
        "moov, tkhd and mdhd declare 10x the real duration",
        (SUCCEEDS, "source_truncated"),
        _from_base("moov_long.mp4", lambda s, d: surgery.scale_durations(s, d, 10)),
    ),
    Case(
        "moov_oversized",
        "the moov box claims 4 GiB",
        BROKEN,
        _from_base("moov_oversized.mp4", surgery.oversize_moov),
    ),
    Case(
        "huge_dims_header",
        "tkhd and avc1 declare 60000x60000 (the H.264 stream is 320x240)",
        (SUCCEEDS, "limit_exceeded"),
        _from_base("huge_dims.mp4", lambda s, d: surgery.huge_sample_entry(s, d, 60000, 60000)),
    ),
    Case(
        "huge_dims_y4m",
        "a raw YUV4MPEG header declaring 60000x60000 (FFmpeg refuses the size)",
        ("source_invalid",),
        _write("huge.y4m", lambda p: corpus.huge_y4m(p, 60000, 60000)),
        quick=True,
    ),
    Case(
        "large_dims_y4m",
        "a raw YUV4MPEG header declaring 8000x8000, over VES_MAX_WIDTH/HEIGHT",
        ("limit_exceeded",),
        _write("large.y4m", lambda p: corpus.huge_y4m(p, 8000, 8000)),
        quick=True,
    ),
    Case(
        "zero_fps",
        "every stts entry 0 ticks long (no frame rate)",
        BROKEN,
        _from_base("zero_fps.mp4", surgery.zero_frame_durations),
    ),
    Case(
        "vfr",
        "variable frame rate: frame gaps of 60..199 ms (Matroska)",
        (SUCCEEDS,),
        _encoded("vfr.mkv", times_ms=_vfr_times()),
    ),
    Case(
        "rotated",
        "display matrix: rotated 90 degrees",
        (SUCCEEDS,),
        _encoded("rotated.mp4", rotation=90),
        quick=True,
    ),
    _codec("h264_10bit", "libx264", "h264", ".mp4", pix_fmt="yuv420p10le"),
    _codec("h264_444", "libx264", "h264", ".mp4", pix_fmt="yuv444p"),
    _codec("hevc", "libx265", "hevc", ".mp4", **{"x265-params": "log-level=error"}),
    _codec("vp9", "libvpx-vp9", "vp9", ".webm"),
    _codec("av1", "libsvtav1", "av1", ".mkv", preset="12"),
    Case(
        "audio_only",
        "AAC audio in MP4, no video stream",
        ("source_invalid",),
        _write("audio.mp4", corpus.audio_only),
        quick=True,
    ),
    Case(
        "one_frame",
        "an H.264 MP4 of a single frame",
        ("source_invalid",),
        _write("one.mp4", _one_frame),
        quick=True,
    ),
    Case(
        "black_2h",
        "2 hours at 2 fps, 99% black; processed to VES_MAX_DURATION_S (600 s)",
        (SUCCEEDS,),
        _write("black_2h.mp4", lambda p: corpus.mostly_black(p, 7200)),
        time_s=60.0,
    ),
    Case(
        "bomb",
        "decompression bomb: 5 MB, 200,000 frames of 320x240 at 1000 fps (200 s)",
        ("limit_exceeded",),
        _write("bomb.mkv", lambda p: corpus.bomb(p, 200_000, 1000)),
        quick=True,
    ),
)


HLS_CASES: tuple[Case, ...] = (
    Case(
        "hls_vod",
        "HLS VOD of the base clip (3 segments)",
        (SUCCEEDS,),
        hls.vod,
        hls=True,
        quick=True,
    ),
    Case(
        "hls_loop_master",
        "HLS master playlist whose variant is itself",
        ("source_invalid",),
        hls.loop_master,
        hls=True,
        quick=True,
    ),
    Case(
        "hls_loop_segment",
        "HLS media playlist whose segments are itself",
        ("source_invalid",),
        hls.loop_segment,
        hls=True,
    ),
    Case(
        "hls_10k_segments",
        "HLS playlist of 10,000 x 2 s segments (run bound max_duration_s=60)",
        (SUCCEEDS,),
        hls.ten_thousand,
        hls=True,
        options={"max_duration_s": 60},
        time_s=30.0,
    ),
)


def by_name() -> dict[str, Case]:
    return {case.name: case for case in (*CASES, *HLS_CASES)}
