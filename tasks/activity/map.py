"""The activity map (issue 32): which GOPs of a video are still, from what costs almost nothing.

One pass over the file: every packet of the video stream is read without decoding (size,
keyframe flag, timestamps), and only the keyframes are decoded (``skip_frame="NONKEY"``: the
decoder drops every other packet unread), each reduced at once to a small frame. Measured on
a 30 s 1080p clip (15 keyframes, a loaded machine): demuxing alone 0.05 s, the keyframes by
``NONKEY`` 0.84 s, by seeking to each 0.72 s (after a demux pass for their times); the keyframe
decodes dominate both. One pass is kept: it reads the packets too, and needs no seekable input
(live windows, HLS). Cheaper keyframe decodes, measured on the 30 s 1080p clip's 15 keyframes
(CPU seconds, least of 6 runs interleaved, a loaded machine): as is 0.350, ``skip_loop_filter``
"all" 0.338, grey instead of rgb24 0.341, ``thread_type`` "AUTO" 0.371 (wall time within the
noise of three other engineers' jobs). Kept: skipping the loop filter (both keyframes of a
comparison lose it alike). Not kept: grey (the motion detector compares colour, and a green
box on a backdrop of its luminance must still differ), threads (more CPU on a shared machine
for one frame at a time). A GOP is still when

1. its keyframe matches the previous GOP's keyframe at the motion detector's own sensitivity
   (its blur, threshold, opening and smallest region: ``tasks.detect.detectors.motion``), and
2. its busiest half second of non-key packets (the largest mean size over any window of
   ``SHORTEST_EVENT_S`` of frames) stays at the stream's idle level, learnt from this stream:
   the median of that figure over the GOPs whose keyframes matched, plus a margin from their
   spread. Measured: the largest single packet is too noisy (a 0.5 s pass on a noisy B-frame
   stream stayed within the idle spread), and the GOP's mean dilutes a 0.5 s pass 20 times in a
   10 s GOP; a half-second window averages the P/B pattern and noise without diluting.

The second test is what sees an event that starts and ends between two keyframes: the
keyframes match, but the encoder spent more bits on the frames in between. A stream without a
usable keyframe cadence (fewer than two keyframes, or GOPs a minute long) is all active, with
the reason in ``fallback``.

The active spans are finer than GOPs (see ``build_spans``): the same half-second windows, over
all non-key packets in display order, locate where the sizes rose above the idle level, and a
span runs from the keyframe at or before (first raised time - ``margin_s``) to (last
raised time + the larger of ``margin_s`` and the raised stretch's length), wherever that
falls. A GOP whose keyframes differ is active whole, up to
and including the next keyframe (so a still stretch after it is shown as it now is); when none
of its packets rose (a slow change, a fade) the change cannot be located at all, and it keeps
one GOP of margin on each side.
"""

from __future__ import annotations

import itertools
import statistics
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import av
import numpy as np

from tasks.activity.keyframes import Grey, keyframe_changed, keyframe_judgement, sure_event_s
from tasks.activity.spans import PacketStats, build_spans, locate_raised, margin_s
from tasks.decode.stage import open_video
from tasks.detect.detectors.motion import MotionConfig
from ves.errors import SourceInvalid

# A GOP this long (or none) gives too few keyframes to judge stillness from (issue 32).
MAX_GOP_S = 60.0
# The idle level's margin, in robust standard deviations (1.4826 MAD) of the idle GOPs' busiest
# half second: 3 sigma marks about 0.1 % of idle GOPs active by chance (a false "active"
# costs only a decode; a false "still" misses an event). A clean stream's idle packets are all
# alike (MAD 0), so the margin is at least a tenth of the level itself.
IDLE_SIGMAS = 3.0
IDLE_FLOOR_FRACTION = 0.1
_MAD_TO_SIGMA = 1.4826
# The packet test is trusted only where packets rose in this share of the GOPs whose keyframes
# changed (at least this many to judge by): see ``packets_blind``.
MIN_PACKET_AGREEMENT = 0.6
MIN_CHANGED_GOPS = 3
SHORTEST_EVENT_S = 0.5  # the shortest event issue 32's truth test plants
THUMB_WIDTH = 320  # the keyframes are compared at about this width (the motion detector's scale)
Cue = Literal["packets", "keyframes"]


@dataclass(frozen=True)
class ActivityMap:
    """Per GOP (in stream order): where it starts, whether it is active, and why; and the spans.

    ``reasons`` per GOP: ``"keyframe"`` (its keyframe differs from the next one: the change
    happened within it), ``"packets"`` (its packets rose above the idle level), ``"first"``
    (the stream's first keyframe, decoded so a still start has a frame), ``"margin"`` (only a
    margin reaches into it), ``"fallback"`` or ``"still"``. ``ends_s[i]`` is the next GOP's start
    (the last GOP ends after the last frame). ``active[i]``: some active span overlaps GOP ``i``.
    ``spans`` are the active spans (see ``active_spans``); ``raised_s`` the located stretches of
    raised packets, before any margin.
    """

    starts_s: tuple[float, ...]
    ends_s: tuple[float, ...]
    active: tuple[bool, ...]
    reasons: tuple[str, ...]
    gop_bytes: tuple[int, ...]
    gop_frames: tuple[int, ...]
    idle_level: float | None
    fallback: str | None
    cost_s: float
    spans: tuple[tuple[float, float], ...] = ()
    raised_s: tuple[tuple[float, float], ...] = ()
    margin_s: float = 0.0
    details: dict[str, float] = field(default_factory=dict)
    cue: Cue = "packets"  # what stillness was judged from (see ``map_activity``)
    sure_event_s: float | None = None  # keyframe mode: the shortest event it is sure to see

    def active_spans(self) -> list[tuple[float, float]]:
        """The stretches to decode, ``(start_s, end_s)`` in order and disjoint: each starts at a
        keyframe's time (decoding starts there) and ends, exclusive, where decoding may stop."""
        return list(self.spans)

    def still_spans(self) -> list[tuple[float, float, str]]:
        """The complement of ``active_spans`` within the video: ``(start_s, end_s, reason)``."""
        if not self.starts_s:
            return []
        out: list[tuple[float, float, str]] = []
        cursor = self.starts_s[0]
        for start, end in [*self.spans, (self.ends_s[-1], self.ends_s[-1])]:
            if start - cursor > 1e-6:
                out.append((cursor, start, self._still_reason(cursor)))
            cursor = max(cursor, end)
        return out

    def _still_reason(self, start: float) -> str:
        if any(abs(start - s) < 1e-6 for s in self.starts_s):
            return "keyframes matched and packets at the idle level"
        return "packets back at the idle level after an event and its margin"

    @property
    def still_fraction(self) -> float:
        """The share of the video's time judged still (outside every active span)."""
        if not self.starts_s:
            return 0.0
        total = self.ends_s[-1] - self.starts_s[0]
        active = sum(e - s for s, e in self.spans)
        return max(0.0, 1.0 - active / total) if 0 < total < float("inf") else 0.0

    def to_dict(self) -> dict[str, object]:
        """A JSON-able summary: the idle level, fallback, cost, still share, GOPs and spans."""
        gops = zip(self.starts_s, self.ends_s, self.active, self.reasons, strict=True)
        return {
            "idle_level": self.idle_level,
            "fallback": self.fallback,
            "cost_s": round(self.cost_s, 3),
            "still_fraction": round(self.still_fraction, 4),
            "margin_s": self.margin_s,
            "gops": [{"start_s": s, "end_s": e, "active": a, "reason": r} for s, e, a, r in gops],
            "active_spans": [list(span) for span in self.spans],
            "still_spans": [list(span) for span in self.still_spans()],
        }


def map_activity(
    path: Path, motion: MotionConfig | None = None, cue: Cue = "packets"
) -> ActivityMap:
    """The activity map of a local video file (see the module docstring); with ``cue``
    ``"keyframes"``, judged from the keyframes alone (``tasks.activity.keyframes``)."""
    started = time.perf_counter()
    cfg = motion or MotionConfig()
    try:
        gops, keys, fps = _read_stream(path)
    except SourceInvalid as exc:  # cut short or corrupt: decoded whole, the sample stage says so
        unread = f"the stream could not be read to its end ({exc}): decoded whole"
        return replace(_all_active([], 25.0, unread, time.perf_counter() - started), cue=cue)
    reason = _no_cadence(gops) or _undecoded(keys)
    if reason is not None:
        return replace(_all_active(gops, fps, reason, time.perf_counter() - started), cue=cue)
    key_changed = [i > 0 and keyframe_changed(keys[i - 1], keys[i], cfg) for i in range(len(gops))]
    if cue == "keyframes":
        reasons, spans = keyframe_judgement(gops, key_changed, 1.0 / fps)
        found = _finish(gops, reasons, spans, [], None, None, fps, time.perf_counter() - started)
        return replace(found, cue=cue, sure_event_s=sure_event_s(gops, 1.0 / fps), margin_s=0.0)
    window = max(1, round(SHORTEST_EVENT_S * fps))
    busy = [g.busiest(window) for g in gops]
    level = _idle_level(busy, key_changed)
    if level is None:
        return _all_active(
            gops,
            fps,
            "too few idle GOPs to learn the idle level from",
            time.perf_counter() - started,
        )
    blind = packets_blind(busy, key_changed, level)
    if blind is not None:
        return _all_active(gops, fps, blind, time.perf_counter() - started)
    raised = locate_raised(gops, window, level, 1.0 / fps)
    reasons = _judge(gops, busy, key_changed, level, raised)
    spans = build_spans(gops, reasons, raised, margin_s(fps), 1.0 / fps)
    return _finish(gops, reasons, spans, raised, level, None, fps, time.perf_counter() - started)


def _read_stream(path: Path) -> tuple[list[PacketStats], list[Grey | None], float]:
    """One pass: every packet's size and flag, and each keyframe decoded to a small frame."""
    gops: list[PacketStats] = []
    keys: list[Grey | None] = []
    with open_video(path) as container:
        stream = container.streams.video[0]
        ctx = stream.codec_context
        ctx.skip_frame = "NONKEY"
        ctx.options = {"skip_loop_filter": "all"}  # see the module docstring: ~5 % less CPU
        size = _thumb_size(ctx.width, ctx.height)
        fps = float(stream.average_rate or stream.guessed_rate or 0) or 25.0
        # Times from the stream's start, as the sample stage counts them (MPEG-TS starts late).
        base = stream.time_base
        start = float(stream.start_time * base) if stream.start_time and base else 0.0
        for packet in container.demux(stream):
            if packet.size == 0:
                continue
            if packet.is_keyframe or not gops:
                gops.append(PacketStats(_packet_time(packet, len(gops)) - start))
                keys.append(None)
            _count(gops[-1], packet, _packet_time(packet, len(gops)) - start)
            for frame in ctx.decode(packet):
                _store_key(keys, frame, size)
        for frame in ctx.decode(None):
            _store_key(keys, frame, size)
    return gops, keys, fps


def _store_key(keys: list[Grey | None], frame: av.VideoFrame, size: tuple[int, int]) -> None:
    """Put a decoded keyframe in the first GOP still without one (keyframes come in order)."""
    small = frame.reformat(width=size[0], height=size[1], format="rgb24", interpolation="AREA")
    for index, key in enumerate(keys):
        if key is None:
            keys[index] = np.asarray(small.to_ndarray(), dtype=np.uint8)
            return


def _thumb_size(width: int, height: int) -> tuple[int, int]:
    scale = min(1.0, THUMB_WIDTH / max(width, 1))
    return max(2, round(width * scale / 2) * 2), max(2, round(height * scale / 2) * 2)


def _packet_time(packet: av.Packet[av.VideoStream], index: int) -> float:
    stamp = packet.pts if packet.pts is not None else packet.dts
    if stamp is None or packet.time_base is None:
        return float(index)
    return float(stamp * packet.time_base)


def _count(gop: PacketStats, packet: av.Packet[av.VideoStream], when: float) -> None:
    """Count a packet shown at ``when`` (seconds from the stream's start) into its GOP."""
    gop.frames += 1
    gop.bytes += packet.size
    gop.last_s = max(gop.last_s, when)
    if not packet.is_keyframe:
        gop.nonkey_sizes.append(packet.size)
        gop.nonkey_times.append(when)


def _no_cadence(gops: list[PacketStats]) -> str | None:
    """Why the stream's keyframes cannot tell still from active, or None when they can."""
    if len(gops) < 2:
        return f"{len(gops)} keyframe(s): no cadence to compare keyframes at"
    gaps = [b.start_s - a.start_s for a, b in itertools.pairwise(gops)]
    longest = max(gaps)
    if longest >= MAX_GOP_S:
        return f"a GOP of {longest:.0f} s: keyframes too far apart to judge stillness"
    return None


def _undecoded(keys: list[Grey | None]) -> str | None:
    """Why the keyframes cannot be compared: some did not decode alone (x264's open GOPs
    flag recovery points as keyframes, and a ``NONKEY`` decode gives only a few of them)."""
    missing = sum(key is None for key in keys)
    if missing:
        return f"{missing} of {len(keys)} keyframes did not decode alone (open GOPs?)"
    return None


def packets_blind(busy: list[float], key_changed: list[bool], level: float) -> str | None:
    """Why this stream's packet sizes cannot be trusted to show an event between keyframes,
    or None when they can.

    Where the keyframes say something changed (the change happened in the GOP before), the
    packets of a constant-quality stream rise above the idle level nearly always; a rate-capped
    encoder (a bitrate target or ceiling, as most cameras use) keeps them near its cap and
    lowers the quality instead. Measured (the GOPs whose keyframes changed that had raised
    packets): 24 of 27 on the truth scenes (constant quality, per stream 67-100 %), 15 of 36 and
    6 of 12 on benchmarks/activity.py's 4 Mbit/s clips, where 3 of 24 passes lay wholly
    between keyframes with their packets at the idle level. Below ``MIN_PACKET_AGREEMENT``
    (with at least ``MIN_CHANGED_GOPS`` to judge by) everything is decoded.
    """
    changed = [i - 1 for i in range(1, len(busy)) if key_changed[i]]
    if len(changed) < MIN_CHANGED_GOPS:
        return None
    raised = sum(1 for i in changed if busy[i] > level)
    if raised >= MIN_PACKET_AGREEMENT * len(changed):
        return None
    return (
        f"packet sizes do not follow activity in this stream (only {raised} of {len(changed)}"
        " GOPs whose keyframes changed had raised packets: a rate-capped encoder can hide an"
        " event between keyframes)"
    )


def _idle_level(busy: list[float], key_changed: list[bool]) -> float | None:
    """The busiest half second an idle GOP of this stream holds, with its margin."""
    idle = [
        b
        for i, b in enumerate(busy)
        if i > 0 and not key_changed[i] and (i + 1 >= len(busy) or not key_changed[i + 1])
    ]
    if len(idle) < 2:
        return None
    middle = statistics.median(idle)
    spread = _MAD_TO_SIGMA * statistics.median(abs(x - middle) for x in idle)
    return middle + max(IDLE_SIGMAS * spread, IDLE_FLOOR_FRACTION * middle)


def _judge(
    gops: list[PacketStats],
    busy: list[float],
    key_changed: list[bool],
    level: float,
    raised: list[tuple[float, float]],
) -> list[str]:
    """Each GOP's reason before any margin: a change between keyframes ``i - 1`` and ``i``
    happened within GOP ``i - 1``; raised packets mark the GOPs they fall in."""
    reasons = ["still"] * len(gops)
    for i in range(1, len(gops)):
        if key_changed[i]:
            reasons[i - 1] = "keyframe"
    ends = [*(g.start_s for g in gops[1:]), float("inf")]
    for i, gop in enumerate(gops):
        touched = any(a < ends[i] and b > gop.start_s for a, b in raised)
        if reasons[i] == "still" and (busy[i] > level or touched):
            reasons[i] = "packets"
    if reasons[0] == "still":
        reasons[0] = "first"
    return reasons


def _finish(
    gops: list[PacketStats],
    reasons: list[str],
    spans: list[tuple[float, float]],
    raised: list[tuple[float, float]],
    level: float | None,
    fallback: str | None,
    fps: float,
    cost: float,
) -> ActivityMap:
    """Mark the GOPs the spans reach (``"margin"`` where only a margin does) and build the map."""
    starts = tuple(g.start_s for g in gops)
    ends = (*starts[1:], max(g.last_s for g in gops) + 1.0 / fps) if gops else ()
    active = tuple(
        any(a < e and b > s for a, b in spans) for s, e in zip(starts, ends, strict=True)
    )
    final = [
        r if r != "still" or not on else "margin" for r, on in zip(reasons, active, strict=True)
    ]
    return ActivityMap(
        starts_s=starts,
        ends_s=ends,
        active=active,
        reasons=tuple(final),
        gop_bytes=tuple(g.bytes for g in gops),
        gop_frames=tuple(g.frames for g in gops),
        idle_level=level,
        fallback=fallback,
        cost_s=cost,
        spans=tuple(spans),
        raised_s=tuple(raised),
        margin_s=margin_s(fps) if fallback is None else 0.0,
    )


def _all_active(gops: list[PacketStats], fps: float, reason: str, cost: float) -> ActivityMap:
    if not gops:
        return _finish(gops, [], [], [], None, reason, fps, cost)
    whole = [(gops[0].start_s, max(g.last_s for g in gops) + 1.0 / fps)]
    return _finish(gops, ["fallback"] * len(gops), whole, [], None, reason, fps, cost)
