"""Where a long video is split: chunks of about ``chunk_s`` that begin at keyframes.

Each chunk owns the stretch ``[start_s, end_s)`` of the video and decodes from ``decode_from_s``,
a keyframe up to a few seconds before its start (the lead-in): the motion background and the
text readings are warm when the chunk's own stretch begins, and what the lead-in saw is what
the previous chunk saw at its end, so tracks and texts can be matched across the border.

Borders are keyframes, found by reading the container's packets without decoding them (about
0.1 s for ten minutes of 1080p). A container without a seek index (MPEG-TS, raw streams) is
never split: seeking in it would land on a guess.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tasks.decode.stage import SourceInfo, open_video
from tasks.sample.gate import Gate
from tasks.sample.sampler import Span

# Containers whose index lets PyAV land exactly on a keyframe.
_SEEKABLE = ("mov", "mp4", "matroska", "webm", "avi")
_LEAD_REACH = 3.0  # a lead-in may start up to this many lead lengths before the border


@dataclass(frozen=True)
class Chunk:
    """One chunk of a long video: which stretch it owns and where its decoding starts."""

    index: int
    decode_from_s: float  # a keyframe, at or before start_s
    start_s: float
    end_s: float  # math.inf for the last chunk

    @property
    def span(self) -> Span:
        return Span(self.decode_from_s, self.end_s)

    @property
    def lead_s(self) -> float:
        return self.start_s - self.decode_from_s

    def owns(self, t: float) -> bool:
        return self.start_s - 1e-6 <= t < self.end_s - 1e-6


def whole(index: int = 0) -> tuple[Chunk, ...]:
    return (Chunk(index, 0.0, 0.0, math.inf),)


def seekable(container_name: str) -> bool:
    return any(name in _SEEKABLE for name in container_name.split(","))


def keyframe_times(path: Path) -> list[float]:
    """Times (seconds from the stream's start) of the video stream's keyframes, in order."""
    with open_video(path) as container:
        stream = container.streams.video[0]
        base = stream.time_base
        if not base:
            return [0.0]
        start = stream.start_time or 0
        times = {
            float((packet.pts - start) * base)
            for packet in container.demux(stream)
            if packet.is_keyframe and packet.pts is not None
        }
    return sorted(times)


def borders(
    keyframes: list[float], duration_s: float, chunk_s: float, still: Sequence[float] = ()
) -> list[float]:
    """Keyframes nearest to every multiple of ``chunk_s``, at least half a chunk apart and from
    either end; a ``still`` keyframe (the activity gate's: nothing happens around it) within a
    quarter chunk of the multiple is taken first, so that no border cuts through an event and
    the lead-in before it costs no decoding."""
    chosen: list[float] = []
    for k in range(1, math.ceil(duration_s / chunk_s)):
        target = k * chunk_s
        calm = [t for t in still if abs(t - target) <= chunk_s / 4]
        nearest = min(calm or keyframes, key=lambda t: abs(t - target))
        previous = chosen[-1] if chosen else 0.0
        if nearest - previous >= chunk_s / 2 and duration_s - nearest >= chunk_s / 2:
            chosen.append(nearest)
    return chosen


def lead_start(keyframes: list[float], border: float, lead_s: float) -> float:
    """The latest keyframe at least ``lead_s`` before ``border``; the border itself when that
    keyframe is too far back (a sparse keyframe interval), or when no lead is wanted."""
    if lead_s <= 0:
        return border
    before = [t for t in keyframes if t <= border - lead_s + 1e-6]
    if before and border - before[-1] <= _LEAD_REACH * lead_s:
        return before[-1]
    return border


def plan(
    keyframes: list[float],
    duration_s: float,
    chunk_s: float,
    lead_s: float,
    still: Sequence[float] = (),
) -> list[Chunk]:
    """The chunks of a video of ``duration_s`` with these keyframes (the pure core); borders
    at ``still`` keyframes where there are some (see ``borders``)."""
    if chunk_s <= 0 or duration_s <= chunk_s or len(keyframes) < 2:
        return list(whole())
    starts = [0.0, *borders(keyframes, duration_s, chunk_s, still)]
    ends = [*starts[1:], math.inf]
    return [
        Chunk(i, lead_start(keyframes, start, lead_s) if i else 0.0, start, end)
        for i, (start, end) in enumerate(zip(starts, ends, strict=True))
    ]


def plan_chunks(
    source: SourceInfo, horizon_s: float, chunk_s: float, lead_s: float, gate: Gate | None = None
) -> list[Chunk]:
    """The chunks of ``source`` up to ``horizon_s`` (the run's duration bound); with the
    activity ``gate``, borders at keyframes it judged still where it can."""
    duration = min(source.duration_s or 0.0, horizon_s)
    if chunk_s <= 0 or duration <= chunk_s or not seekable(source.container):
        return list(whole())
    keyframes = keyframe_times(Path(source.path))
    still = [t for t in keyframes if gate is not None and gate.is_still(t)]
    return plan(keyframes, duration, chunk_s, lead_s, still)
