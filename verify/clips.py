"""Reading a bundle's clips: the times of a clip's frames (PyAV's errors translated here), and
which clip shows a span and where (``span_clip``, for the single-clip download).

A clip's frame at presentation time ``t`` (pts x time_base, as the container gives it) shows the
source at ``source_start_s + t``; a thumbnail's time is held when a frame lies within half a
frame interval of it.
"""

from __future__ import annotations

import itertools
import statistics
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

import av

# What a corrupt clip raises from PyAV and from the zip under it: never a traceback.
_CLIP_ERRORS = (
    av.error.FFmpegError,
    ValueError,
    OSError,
    EOFError,
    IndexError,
    RuntimeError,
    zipfile.BadZipFile,
    zlib.error,
)


class ClipUnreadable(Exception):
    """The clip does not decode (the reason is the message)."""


def clip_frame_times(clip: IO[bytes]) -> tuple[list[float], float]:
    """The presentation times (s) of every frame of the clip's video stream and its frame
    interval (s).

    Raises:
        ClipUnreadable: not a video, no video stream, no frame, or corrupt data.
    """
    try:
        with av.open(clip, mode="r") as container:
            if not container.streams.video:
                raise ClipUnreadable("holds no video stream")
            stream = container.streams.video[0]
            times = [float(f.time) for f in container.decode(stream) if f.time is not None]
            rate = stream.average_rate or stream.guessed_rate
    except _CLIP_ERRORS as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise ClipUnreadable(f"does not decode ({reason})") from exc
    if not times:
        raise ClipUnreadable("decodes to no frame")
    return times, _interval(times, float(rate) if rate else None)


def _interval(times: list[float], rate: float | None) -> float:
    if rate:
        return 1.0 / rate
    steps = [b - a for a, b in itertools.pairwise(times) if b > a]
    return statistics.median(steps) if steps else 1.0


def times_not_held(
    frame_times: Sequence[float], interval: float, source_start_s: float, wanted: Sequence[float]
) -> list[float]:
    """The source times in ``wanted`` that no frame shows within half a frame interval."""
    shown = [source_start_s + t for t in frame_times]
    slack = interval / 2 + 1e-6
    return [t for t in wanted if not any(abs(s - t) <= slack for s in shown)]


@dataclass(frozen=True)
class SpanInClip:
    """The clip that shows a span: its bundle path, the span's start and end in clip time, the
    source time at the clip's time 0 and how the clip was made."""

    evidence_id: str
    path: str
    clip_start_s: float
    clip_end_s: float
    source_start_s: float
    method: str


def span_clip(manifest: Mapping[str, Any], evidence_id: str) -> SpanInClip | None:
    """Where a bundle's manifest (format version 1 or 2) says the span is shown; None when the
    bundle has no such span."""
    if manifest.get("format_version") == 1:
        return _span_clip_v1(manifest, evidence_id)
    span = next((s for s in manifest["spans"] if s["evidence_id"] == evidence_id), None)
    if span is None:
        return None
    clip = next(c for c in manifest["clips"] if c["path"] == span["clip"])
    return SpanInClip(
        evidence_id,
        clip["path"],
        float(span["clip_start_s"]),
        float(span["clip_end_s"]),
        float(clip["source_start_s"]),
        clip["method"],
    )


def _span_clip_v1(manifest: Mapping[str, Any], evidence_id: str) -> SpanInClip | None:
    """Version 1: the span's own clip, cut from the span widened by a second each side."""
    clip = next((c for c in manifest["clips"] if c["evidence_id"] == evidence_id), None)
    span = next((s for s in manifest["spans"] if s["evidence_id"] == evidence_id), None)
    if clip is None or span is None:
        return None
    start = float(clip["source_start_s"])
    end = float(clip["source_end_s"]) - start
    return SpanInClip(evidence_id, clip["path"], 0.0, end, start, "re-encoded")
