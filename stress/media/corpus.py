"""Encode the well-formed files the hostile media corpus starts from (no downloads).

The base clip is a synthetic scene (``synthetic``): 6 s of the lobby's walkers at 320x240,
10 fps. Other codecs, pixel formats, frame timings, rotations and containers are encoded from
the same rendered frames with PyAV, so each case differs from the base in one respect only.
Encoders the local FFmpeg lacks raise ``MissingCodec`` and the case is reported as skipped.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from av.video.stream import VideoStream
from PIL import Image

from synthetic import SceneSpec, lobby_scene, render_frame, write_video

LOBBY = lobby_scene()  # 20 s: long enough that a cut loses more than the 1 s tolerance
BASE = replace(LOBBY, duration_s=6.0, scene_cuts=(), objects=LOBBY.objects[:2], signs=())


class MissingCodec(Exception):
    """The local FFmpeg cannot encode or decode what a case needs."""


def require(*codecs: str) -> None:
    """Raise ``MissingCodec`` unless every codec (encoder or decoder name) is available."""
    missing = [name for name in codecs if name not in av.codecs_available]
    if missing:
        raise MissingCodec(f"no encoder/decoder: {', '.join(missing)}")


def rendered(spec: SceneSpec, count: int | None = None) -> Iterable[np.ndarray]:
    """The scene's RGB frames (the first ``count``)."""
    for index in range(spec.frame_count if count is None else count):
        yield render_frame(spec, index)


def encode(
    path: Path,
    frames: Iterable[np.ndarray],
    *,
    codec: str = "libx264",
    pix_fmt: str = "yuv420p",
    fmt: str | None = None,
    times_ms: Sequence[int] | None = None,
    options: dict[str, str] | None = None,
    rotation: int = 0,
    fps: int = 10,
) -> Path:
    """Encode RGB ``frames``; pts are ``times_ms`` (milliseconds) when given, else frame / fps."""
    require(codec)
    base = Fraction(1, 1000) if times_ms is not None else Fraction(1, fps)
    with av.open(str(path), "w", format=fmt) as out:
        stream = out.add_stream(codec, rate=fps, options=options or {})
        assert isinstance(stream, VideoStream)
        stream.pix_fmt, stream.time_base = pix_fmt, base
        if rotation:
            stream.set_display_rotation(rotation)
        for index, rgb in enumerate(frames):
            if index == 0:
                stream.width, stream.height = rgb.shape[1], rgb.shape[0]
            frame = av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format=pix_fmt)
            frame.pts = times_ms[index] if times_ms is not None else index
            frame.time_base = base
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


def base_mp4(path: Path, spec: SceneSpec = BASE) -> Path:
    """A scene as MP4 with its index first (so a cut keeps the index and loses frames)."""
    plain = path.with_name(f"plain-{path.name}")
    write_video(spec, plain)
    with (
        av.open(str(plain)) as src,
        av.open(str(path), "w", options={"movflags": "faststart"}) as out,
    ):
        in_stream = src.streams.video[0]
        out_stream = out.add_stream_from_template(in_stream)
        for packet in src.demux(in_stream):
            if packet.dts is not None:
                packet.stream = out_stream
                out.mux(packet)
    plain.unlink()
    return path


def still(path: Path, image_format: str, frames: int = 1) -> Path:
    """A PNG, or a GIF of ``frames`` frames, of the base scene (whatever ``path`` is named)."""
    images = [Image.fromarray(rgb) for rgb in rendered(BASE, frames)]
    buffer = io.BytesIO()
    images[0].save(buffer, format=image_format, save_all=frames > 1, append_images=images[1:])
    path.write_bytes(buffer.getvalue())
    return path


def audio_only(path: Path, seconds: float = 3.0) -> Path:
    """An AAC tone in MP4, no video stream."""
    require("aac")
    rate = 44100
    with av.open(str(path), "w", format="mp4") as out:
        stream = out.add_stream("aac", rate=rate)
        t = np.arange(int(rate * seconds)) / rate
        tone = (0.2 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
        for start in range(0, tone.size, 1024):
            chunk = tone[start : start + 1024].reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(chunk, format="flt", layout="mono")
            frame.sample_rate, frame.pts = rate, start
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


def huge_y4m(path: Path, width: int, height: int) -> Path:
    """A raw YUV4MPEG header declaring ``width`` x ``height``, then a few bytes of one frame."""
    path.write_bytes(
        f"YUV4MPEG2 W{width} H{height} F10:1 Ip A1:1 C420\nFRAME\n".encode() + bytes(64)
    )
    return path


def mostly_black(path: Path, seconds: int, fps: int = 2) -> Path:
    """The base scene's first frames (1% of the length), then black to ``seconds``."""
    lively = max(1, seconds * fps // 100)
    black = np.zeros((BASE.height, BASE.width, 3), np.uint8)

    def frames() -> Iterable[np.ndarray]:
        moving = replace(BASE, fps=fps, duration_s=lively / fps)
        yield from rendered(moving)
        for _ in range(seconds * fps - lively):
            yield black

    options = {"preset": "ultrafast", "g": str(fps * 10)}
    return encode(path, frames(), fps=fps, options=options)


def bomb(path: Path, frames: int, fps: int) -> Path:
    """Many tiny frames: one keyframe, then one skipped-blocks P-frame copied ``frames - 1``
    times (a few bytes each in Matroska), all within the duration bound."""
    sample = path.with_name(f"sample-{path.stem}.mkv")
    rgb = next(iter(rendered(BASE, 1)))
    encode(sample, [rgb, rgb], fps=fps, options={"preset": "ultrafast", "bf": "0"})
    with av.open(str(sample)) as src:
        stream = src.streams.video[0]
        packets = [p for p in src.demux(stream) if p.dts is not None]
        with av.open(str(path), "w", format="matroska") as out:
            out_stream = out.add_stream_from_template(stream)
            out_stream.time_base = Fraction(1, fps)
            for index in range(frames):
                packet = packets[min(index, 1)]
                packet.stream, packet.time_base = out_stream, Fraction(1, fps)
                packet.pts = packet.dts = index
                packet.duration = 1
                out.mux(packet)
    sample.unlink()
    return path
