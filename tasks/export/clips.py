"""Reading a bundle's clip: the times of its frames, with PyAV's errors translated here.

A clip's frame at presentation time ``t`` (pts x time_base, as the container gives it) shows the
source at ``source_start_s + t``; a thumbnail's time is held when a frame lies within half a
frame interval of it.
"""

from __future__ import annotations

import itertools
import statistics
import zipfile
import zlib
from collections.abc import Sequence
from typing import IO

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
