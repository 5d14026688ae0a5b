"""The review copy: the run's video as H.264 in a faststart MP4, which every browser plays.

Camera exports are often AVI, MKV or MPEG-TS, MPEG-4 Part 2, MJPEG or HEVC, which a browser
does not play; a reviewer must still watch what the run found. So a video file's run writes
``review.mp4`` beside its other artifacts, after sampling and detection (the source is on the
worker's disk then, a URL source's bytes included) and before the later stages, whose
``cost.json`` reports it (``review_copy``):

- ``copy``: a source already in H.264 with 8-bit 4:2:0 pictures (whatever its container) has
  its packets copied, not re-encoded: the same pictures, size and keyframes as the source, so
  a 4K source gives a 4K copy, and one with a keyframe a minute seeks as slowly as it did;
- ``transcode``: any other source is decoded and encoded again (``tasks.mp4``: libx264
  ``veryfast``, crf 23, yuv420p), fitted within 1280x720 (720x1280 standing), turned upright,
  with a keyframe every ``KEYFRAME_S`` seconds;
- ``none``: an HLS source or live window (its own playlist plays: ``media-url`` kind ``hls``),
  or a source the copy failed on, with the reason. A review copy is a convenience, the
  analysis is the product: a source that analysed but does not copy still publishes its run,
  and its player falls back to the stored upload, if any.

Either way the copy's time 0 is the analysis's (the stream's first timestamp,
``stream_start_s``), so a span at 12.4 s is 12.4 s into the copy; it stops at the run's
duration bound (a copy cuts in decode order: with B-frames, a frame or two past it come along),
and leaves audio out. The original stays the evidence: every hash a span or an
export carries is of the original's frames, and the API marks the copy as a review copy wherever
it serves it. The MP4 is written under a temporary name and renamed when whole: a run that dies
midway publishes nothing, and a failed copy leaves no file.
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal

import av
from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from storage.artifacts.layout import REVIEW_COPY
from tasks.context import RunContext
from tasks.decode.stage import SourceInfo, display_rotation, open_video, stream_start_s
from tasks.mp4 import (
    FASTSTART,
    Rgb,
    add_h264_stream,
    frame_at,
    timed_packets,
    upright,
    upright_size,
    write_copied,
)
from ves.errors import SourceInvalid

KEYFRAME_S = 2.0  # a transcoded copy's keyframe interval: any seek decodes at most this much
MAX_LONG, MAX_SHORT = 1280, 720  # a transcoded copy's largest picture: 720p
BROWSER_PIXELS = ("yuv420p", "yuvj420p")  # 8-bit 4:2:0, the H.264 every browser decodes
REORDER = 16  # pictures whose times may come permuted (B-frames in AVI): x264's most is 16
Mode = Literal["copy", "transcode", "none"]
Picture = Rgb | av.VideoFrame


@dataclass(frozen=True)
class ReviewCopy:
    """What the review copy is (``cost.json``'s ``review_copy`` block): how it was made and
    why, what it took (``seconds``), its ``bytes`` and picture size, and the source's codec and
    sha256 (the original, which stays the evidence)."""

    mode: Mode
    reason: str
    seconds: float = 0.0
    bytes: int = 0
    width: int | None = None
    height: int | None = None
    source_codec: str | None = None
    source_sha256: str | None = None

    @classmethod
    def none(cls, reason: str, source_codec: str | None = None) -> ReviewCopy:
        """No review copy, because of ``reason``."""
        return cls("none", reason, source_codec=source_codec)

    def as_cost(self) -> dict[str, Any]:
        """The ``cost.json`` block (seconds rounded as its stages are)."""
        return asdict(self) | {"seconds": round(self.seconds, 4)}


def choose_mode(
    codec: str, pix_fmt: str | None, container: str = "mp4", reordered: bool = False
) -> tuple[Mode, str]:
    """``copy`` for H.264 a browser plays as it is, else ``transcode``; with the reason.

    AVI keeps decode times only: its H.264 with B-frames (``reordered``) has no presentation
    times to copy (FFmpeg's stand-ins are in decode order), so it is transcoded, its frames
    taken in the order the decoder shows them.
    """
    if codec == "h264" and pix_fmt in BROWSER_PIXELS:
        if not (reordered and container == "avi"):
            return "copy", "H.264 with 8-bit 4:2:0 pictures plays in every browser: copied"
        return (
            "transcode",
            "AVI keeps no presentation times of H.264's B-frames: transcoded to H.264",
        )
    what = f"H.264 in {pix_fmt}" if codec == "h264" else codec
    return "transcode", f"{what} does not play in every browser: transcoded to H.264"


def make_review_copy(source: Path, out: Path, bound_s: float | None = None) -> ReviewCopy:
    """Write the review copy of ``source`` to ``out`` (written beside it, renamed when whole),
    covering at most ``bound_s`` seconds. A source that fails to copy gives ``none`` with the
    reason, and no file (the pure core of the stage)."""
    started = time.perf_counter()
    partial = out.with_name(f".{out.name}.partial")
    codec: str | None = None
    try:
        with open_video(source) as container:
            stream = container.streams.video[0]
            context = stream.codec_context
            codec, reordered = context.name, bool(context.has_b_frames)
            mode, reason = choose_mode(codec, context.pix_fmt, container.format.name, reordered)
            if mode == "copy":
                size = _copy(container, stream, partial, bound_s)
            else:
                size = _transcode(container, stream, partial, bound_s, display_rotation(source))
        partial.replace(out)
    except (SourceInvalid, ValueError, av.error.FFmpegError) as exc:
        failed = ReviewCopy.none(f"the review copy failed: {exc}", codec)
        return replace(failed, seconds=time.perf_counter() - started)
    finally:
        partial.unlink(missing_ok=True)
    seconds = time.perf_counter() - started
    return ReviewCopy(mode, reason, seconds, out.stat().st_size, *size, source_codec=codec)


def _copy(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    out: Path,
    bound_s: float | None,
) -> tuple[int, int]:
    """Copy the stream's packets, time 0 at its first timestamp; its coded size."""
    base = stream.time_base
    if base is None:
        raise ValueError("the video stream has no time base")
    start = round(stream_start_s(stream) / base)
    packets = timed_packets(container, stream)
    if bound_s is not None:  # decode order: a B-frame or two past the bound may be left out
        last = start + bound_s / base
        packets = (p for p in packets if p.dts <= last)
    if not write_copied(out, stream, packets, start, FASTSTART):
        raise ValueError("the video stream has no timed packet to copy")
    return stream.codec_context.width, stream.codec_context.height


def _transcode(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    out: Path,
    bound_s: float | None,
    rotation: int,
) -> tuple[int, int]:
    """Decode every frame and encode it again (720p at most, upright); its coded size."""
    stream.thread_type = "AUTO"
    turns = rotation // 90 % 4
    size = upright_size(stream, turns, MAX_LONG, MAX_SHORT)
    written = 0
    with av.open(str(out), "w", format="mp4", options=FASTSTART) as sink:
        encoder = add_h264_stream(sink, size, stream.average_rate, KEYFRAME_S)
        pictures = (
            (frame.time, upright(frame, size, turns) if turns else _scaled(frame, size))
            for frame in container.decode(stream)
        )
        for t, picture in _in_time_order(pictures, stream_start_s(stream)):
            if bound_s is not None and t > bound_s + 1e-6:
                break
            sink.mux(encoder.encode(frame_at(picture, t)))
            written += 1
        sink.mux(encoder.encode(None))
    if not written:
        raise ValueError("no frame of the video decoded")
    return size


def _in_time_order(
    pictures: Iterable[tuple[float | None, Picture]], start: float
) -> Iterator[tuple[float, Picture]]:
    """The decoded pictures, in the order the decoder shows them, with their times from
    ``start``, each a millisecond at least after the one before (an MP4's order).

    A decoder shows pictures in order, but AVI keeps no presentation times: FFmpeg's stand-ins
    for its B-frames are the decode order's, so the times of a few pictures in a row come
    permuted. The times are the right ones, sorted: each picture takes the smallest of those
    seen within ``REORDER`` pictures of it.
    """
    last_ms = -1
    for shown, picture in _times_sorted(pictures, start):
        if round(shown * 1000) > last_ms:  # else: one of two frames at the same instant
            last_ms = round(shown * 1000)
            yield shown, picture


def _times_sorted(
    pictures: Iterable[tuple[float | None, Picture]], start: float
) -> Iterator[tuple[float, Picture]]:
    times: list[float] = []
    waiting: deque[Picture] = deque()
    for t, picture in pictures:
        if t is None:
            continue  # no time at all: it cannot be placed
        heapq.heappush(times, t - start)
        waiting.append(picture)
        if len(waiting) > REORDER:
            yield heapq.heappop(times), waiting.popleft()
    while waiting:
        yield heapq.heappop(times), waiting.popleft()


def _scaled(frame: av.VideoFrame, size: tuple[int, int]) -> av.VideoFrame:
    """``frame`` at ``size`` in yuv420p, converted once and never through RGB."""
    return frame.reformat(width=size[0], height=size[1], format="yuv420p")


@task(name="review-copy", cache_policy=NONE)
def review_copy_task(ctx: RunContext, source: SourceInfo) -> ReviewCopy:
    """Make the run's review copy (none for an HLS source: its playlist plays)."""
    if ctx.source.kind == "hls":
        return ReviewCopy.none("an HLS source plays from its own playlist", source.codec)
    ctx.report("review_copy")
    out, bound = ctx.layout.out_dir / REVIEW_COPY, ctx.max_duration_s
    made = replace(make_review_copy(Path(source.path), out, bound), source_sha256=source.sha256)
    get_run_logger().info(
        "review copy: %s (%s) in %.2f s, %d bytes", made.mode, made.reason, made.seconds, made.bytes
    )
    return made
