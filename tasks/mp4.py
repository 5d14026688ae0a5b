"""Writing MP4 with PyAV, shared by the review copy (``tasks/review``) and an export's clips
(``tasks/export``): the picture's coded size, the libx264 encoder, frames turned upright, and
packets stream-copied from a source.

The encoder is libx264 ``veryfast`` at crf ``CRF`` (``benchmarks/export.py`` measured the size
and quality it gives, docs/measured/exports.md), without B-frames, so that a frame's
presentation time is its decode time and every frame keeps its source time to the millisecond
(``TIME_BASE``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt
from av.video.frame import PictureType

TIME_BASE = Fraction(1, 1000)  # encoded frames' timestamps in milliseconds
PRESET = "veryfast"
CRF = 23
FASTSTART = {"movflags": "+faststart"}
"""The mov muxer's option that writes the index (``moov``) before the media (``mdat``): a
player starts, and seeks, before it has read the whole file."""
Rgb = npt.NDArray[np.uint8]


def even_size(
    width: int, height: int, max_long: int, max_short: int | None = None
) -> tuple[int, int]:
    """``width`` x ``height`` scaled down (never up) so that its longer side is at most
    ``max_long`` and its shorter at most ``max_short`` (default: ``max_long``), both even (what
    4:2:0 chroma needs)."""
    short = max_long if max_short is None else max_short
    scale = min(1.0, max_long / max(width, height), short / min(width, height))
    return max(2, 2 * round(width * scale / 2)), max(2, 2 * round(height * scale / 2))


def upright_size(
    stream: av.VideoStream, turns: int, max_long: int, max_short: int | None = None
) -> tuple[int, int]:
    """The coded size of ``stream``'s pictures once turned ``turns`` quarter turns and fitted
    within ``max_long`` x ``max_short`` (``even_size``)."""
    width, height = stream.codec_context.width, stream.codec_context.height
    if turns % 2:
        width, height = height, width
    return even_size(width, height, max_long, max_short)


def add_h264_stream(
    sink: av.container.OutputContainer,
    size: tuple[int, int],
    rate: Fraction | None,
    keyframe_s: float | None = None,
) -> av.VideoStream:
    """A libx264 stream of ``size`` in ``sink`` (yuv420p, 8-bit: what every browser plays);
    with ``keyframe_s``, a keyframe every ``keyframe_s`` seconds exactly (x264's scene-cut
    keyframes off), so that a player seeks to any time within that much decoding."""
    options = {"preset": PRESET, "crf": str(CRF), "bf": "0"}
    if keyframe_s is not None:
        gop = str(max(1, round(keyframe_s * float(rate or 25))))
        options |= {"g": gop, "keyint_min": gop, "sc_threshold": "0"}
    encoder = sink.add_stream("libx264", rate=rate or 25, options=options)
    encoder.width, encoder.height = size
    encoder.pix_fmt = "yuv420p"
    encoder.time_base = TIME_BASE
    return encoder


def upright(frame: av.VideoFrame, size: tuple[int, int], turns: int) -> Rgb:
    """``frame`` as RGB of ``size`` (the upright picture's), turned ``turns`` quarter turns
    counterclockwise (a phone's display matrix, ``tasks.decode.stage.display_rotation``)."""
    width, height = size if turns % 2 == 0 else size[::-1]
    small = frame.reformat(width=width, height=height, format="rgb24")
    rgb: Rgb = np.asarray(small.to_ndarray(), dtype=np.uint8)
    return np.ascontiguousarray(np.rot90(rgb, turns)) if turns else rgb


def frame_at(picture: Rgb | av.VideoFrame, t_s: float) -> av.VideoFrame:
    """``picture`` as a yuv420p frame to encode, shown at ``t_s`` seconds.

    A decoded frame keeps its picture type, and libx264 makes a keyframe of every frame typed
    I: the type is cleared, so that the encoder's keyframe interval holds (an MJPEG source's
    frames are all I).
    """
    if isinstance(picture, av.VideoFrame):
        frame = picture.reformat(format="yuv420p")
    else:
        frame = av.VideoFrame.from_ndarray(picture, format="rgb24").reformat(format="yuv420p")
    frame.pict_type = PictureType.NONE
    frame.pts = round(t_s / TIME_BASE)
    frame.time_base = TIME_BASE
    return frame


@dataclass(frozen=True)
class Timed:
    """A packet with its timestamps (stream time base), both known."""

    packet: av.Packet[av.VideoStream]
    pts: int
    dts: int
    keyframe: bool


def timed_packets(
    container: av.container.InputContainer, stream: av.VideoStream
) -> Iterator[Timed]:
    """The stream's packets in decode order, those without a pts left out.

    Matroska stores no decode times: with B-frames, the demuxer knows none for the first few
    packets (until its reorder delay has passed, after the start and after a seek). Those get
    decode times a frame apart before the first one it knows, which keeps them increasing and
    never after their presentation (an MP4 muxer needs both); without any, pts stands in.
    """
    waiting: list[av.Packet[av.VideoStream]] = []
    for packet in container.demux(stream):
        if packet.pts is None:
            continue
        if packet.dts is None:
            waiting.append(packet)
            continue
        step = packet.duration or 1
        for back, early in enumerate(waiting):
            assert early.pts is not None
            yield Timed(
                early, early.pts, packet.dts - (len(waiting) - back) * step, early.is_keyframe
            )
        waiting = []
        yield Timed(packet, packet.pts, packet.dts, packet.is_keyframe)
    for early in waiting:
        assert early.pts is not None
        yield Timed(early, early.pts, early.pts, early.is_keyframe)


def write_copied(
    path: Path,
    stream: av.VideoStream,
    packets: Iterable[Timed],
    start: int,
    options: dict[str, str] | None = None,
) -> list[int]:
    """Mux ``packets`` of ``stream`` into the MP4 ``path``, shifted by ``start`` (stream time
    base) so that the frame shown at ``start`` is shown at 0, not re-encoded; the pts
    (unshifted) of those written. ``options`` go to the muxer (``FASTSTART``)."""
    written = []
    with av.open(str(path), "w", format="mp4", options=options or {}) as sink:
        copied = sink.add_stream_from_template(stream)
        for timed in packets:
            packet = timed.packet
            packet.pts, packet.dts = timed.pts - start, timed.dts - start
            packet.stream = copied
            sink.mux(packet)
            written.append(timed.pts)
    return written
