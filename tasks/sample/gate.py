"""The activity gate in the sample stage (issue 32): decode only what the activity map calls active.

The activity map (``tasks.activity.map``) splits a video into active spans and still
stretches. With the gate on, the sample stage still demuxes every packet of the stream (cheap),
but hands the decoder only the packets of the decode ranges: each starts at the keyframe at or
before an active span's start (a decoder can start nowhere else) and stops once the packets'
decoding times pass the span's end (every frame shown before the end has then been fed with
its references). A frame the decoder returns from before its range's keyframe (an open GOP's
leading frames, which refer to the GOP that was not decoded) is dropped.

A sampled time inside a still stretch is not decoded: the last decoded sampled frame stands for
it (``Sampler.hold``), marked ``held`` in ``frames.parquet``. The stretch was judged unchanged at
the motion detector's own sensitivity, so the detectors see what they would have seen there,
and tracks, dwells and texts carry on through it as they would have.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import av

_EPS = 1e-3  # a keyframe's time matches a range's start within a millisecond


@dataclass(frozen=True)
class DecodeRange:
    """One stretch handed to the decoder: from the keyframe at ``from_s`` to ``end_s``."""

    from_s: float
    end_s: float


@dataclass(frozen=True)
class Gate:
    """Which stretches of a video are decoded; the rest is judged still.

    Args:
        ranges: decode ranges in time order, each starting at a keyframe and apart from the next.
        end_s: where the stream's packets end: a still stretch at the end is held up to here,
            never to the length the container declares (a truncated file stays truncated).
        keyframes: every keyframe's time (where a chunk's first GOP ends).
    """

    ranges: tuple[DecodeRange, ...]
    end_s: float = math.inf
    keyframes: tuple[float, ...] = ()

    @classmethod
    def of_spans(
        cls,
        spans: Sequence[tuple[float, float]],
        keyframes: Sequence[float],
        end_s: float = math.inf,
    ) -> Gate:
        """Decode ranges for active ``spans``: each from the keyframe at or before its start
        (``keyframes`` sorted), overlapping or touching ranges joined."""
        ranges: list[DecodeRange] = []
        for start, end in sorted(spans):
            index = bisect.bisect_right(keyframes, start + _EPS) - 1
            begin = keyframes[index] if index >= 0 else 0.0
            if ranges and begin <= ranges[-1].end_s + _EPS:
                ranges[-1] = DecodeRange(ranges[-1].from_s, max(ranges[-1].end_s, end))
            else:
                ranges.append(DecodeRange(begin, end))
        return cls(tuple(ranges), end_s, tuple(keyframes))

    def within(self, decode_from_s: float, end_s: float) -> Gate:
        """The gate of one chunk ``[decode_from_s, end_s)`` (``decode_from_s`` a keyframe): its
        ranges cut to the chunk, and its first GOP always decoded (a chunk begins with a real
        frame, which the still stretch after it can hold)."""
        after = bisect.bisect_right(self.keyframes, decode_from_s + _EPS)
        first_end = self.keyframes[after] if after < len(self.keyframes) else self.end_s
        spans = [(decode_from_s, first_end)]
        spans += [
            (max(r.from_s, decode_from_s), min(r.end_s, end_s))
            for r in self.ranges
            if r.end_s > decode_from_s and r.from_s < end_s
        ]
        return Gate.of_spans(spans, self.keyframes, self.end_s)

    def is_still(self, t: float) -> bool:
        """Whether time ``t`` lies in no decode range (and within the stream)."""
        return t < self.end_s and _inside(self, t) is None

    def range_at_keyframe(self, t: float) -> int | None:
        """The index of the range that starts at keyframe time ``t``, or None."""
        for index, r in enumerate(self.ranges):
            if abs(r.from_s - t) <= _EPS:
                return index
            if r.from_s > t + _EPS:
                return None
        return None


@dataclass
class GateCount:
    """What the gate did in one pass: packets fed to the decoder and packets skipped."""

    fed: int = 0
    skipped: int = 0


def _seconds(stamp: int | None, base: object, start: float) -> float | None:
    if stamp is None or not base:
        return None
    return float(stamp * base) - start  # type: ignore[operator]


def gated_frames(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    gate: Gate,
    start_s: float,
    count: GateCount,
    stop_s: float = math.inf,
) -> Iterator[tuple[av.VideoFrame, int]]:
    """Decode only ``gate``'s ranges of ``stream``: yields each frame with its range's index.

    ``start_s`` is the stream's start time (frame times are counted from it); demuxing ends at
    ``stop_s`` (a chunk's end, the run's bound) when no range is being decoded there.
    """
    current: int | None = None
    last_fed = 0
    for packet in container.demux(stream):
        if packet.size == 0:  # the demuxer's end-of-stream packet: the decoder gives up the rest
            for frame in stream.decode(packet):
                yield frame, last_fed
            continue
        if packet.is_keyframe:
            pts = _seconds(packet.pts, packet.time_base, start_s)
            current = gate.range_at_keyframe(pts) if pts is not None else None
            if current is None and pts is not None:
                current = _inside(gate, pts)
        else:
            dts = _seconds(packet.dts, packet.time_base, start_s)
            if current is not None and dts is not None and dts >= gate.ranges[current].end_s - _EPS:
                current = None
            if current is None and dts is not None and dts >= stop_s:
                yield from _drain(stream, last_fed)
                return
        if current is None:
            count.skipped += 1
            continue
        count.fed, last_fed = count.fed + 1, current
        for frame in stream.decode(packet):
            yield frame, current


def _drain(stream: av.VideoStream, fed: int) -> Iterator[tuple[av.VideoFrame, int]]:
    """The frames the decoder still holds (reordering, threads), before stopping early."""
    try:
        for frame in stream.decode(None):
            if frame.time_base is None:  # a flushed frame has no packet to take it from
                frame.time_base = stream.time_base
            yield frame, fed
    except av.error.EOFError:
        return


def _inside(gate: Gate, t: float) -> int | None:
    """A keyframe inside a range (not at its start) keeps the range going."""
    for index, r in enumerate(gate.ranges):
        if r.from_s - _EPS <= t < r.end_s - _EPS:
            return index
    return None


def range_of_frame(gate: Gate, t: float, fed_range: int) -> int | None:
    """The range a decoded frame at ``t`` belongs to, or None when it shows a time before its
    range's keyframe (an open GOP's leading frame: its references were never decoded)."""
    if fed_range < 0 or fed_range >= len(gate.ranges):
        return None
    if t < gate.ranges[fed_range].from_s - _EPS:
        # Frames the decoder still held from an earlier range come out late (threads,
        # B-frame reordering): they belong to the range whose time they show.
        earlier = _inside(gate, t)
        return earlier if earlier is not None and earlier < fed_range else None
    return fed_range
