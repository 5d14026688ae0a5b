"""The activity map (issue 32): which GOPs of a video are still, from what costs almost nothing.

One pass over the file: every packet of the video stream is read without decoding (size,
keyframe flag, timestamps), and only the keyframes are decoded (``skip_frame="NONKEY"``: the
decoder drops every other packet unread), each reduced at once to a small frame. Measured on
a 30 s 1080p clip (15 keyframes, a loaded machine): demuxing alone 0.05 s, the keyframes by
``NONKEY`` 0.84 s, by seeking to each 0.72 s (after a demux pass for their times); the keyframe
decodes dominate both. One pass is kept: it reads the packets too, and needs no seekable input
(live windows, HLS). A GOP is still when

1. its keyframe matches the previous GOP's keyframe at the motion detector's own sensitivity
   (its blur, threshold, opening and smallest region: ``tasks.detect.detectors.motion``), and
2. its busiest half second of non-key packets (the largest mean size over any window of
   ``SHORTEST_EVENT_S`` of frames) stays at the stream's idle level, learnt from this stream:
   the median of that figure over the GOPs whose keyframes matched, plus a margin from their
   spread. Measured: the largest single packet is too noisy (a 0.5 s pass on a noisy B-frame
   stream stayed within the idle spread), and the GOP's mean dilutes a 0.5 s pass 20 times in a
   10 s GOP; a half-second window averages the P/B pattern and noise without diluting.

The second test is what sees an event that starts and ends between two keyframes: the
keyframes match, but the encoder spent more bits on the frames in between. Everything not still,
plus one GOP on each side, is active. A stream without a usable keyframe cadence (fewer than
two keyframes, or GOPs a minute long) is all active, with the reason in ``fallback``.
"""

from __future__ import annotations

import itertools
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import av
import cv2
import numpy as np
import numpy.typing as npt

from tasks.decode.stage import open_video
from tasks.detect.detectors.motion import (
    MotionConfig,
    boxes_from_mask,
    difference_image,
    mask_changes,
    to_planes,
)
from tasks.sample.text_looks import GLANCE_BLOCK, LookConfig, cell_differences

# A GOP this long (or none) gives too few keyframes to judge stillness from (issue 32).
MAX_GOP_S = 60.0
# The idle level's margin, in robust standard deviations (1.4826 MAD) of the idle GOPs' busiest
# half second: 3 sigma marks about 0.1 % of idle GOPs active by chance (a false "active"
# costs only a decode; a false "still" misses an event). A clean stream's idle packets are all
# alike (MAD 0), so the margin is at least a tenth of the level itself.
IDLE_SIGMAS = 3.0
IDLE_FLOOR_FRACTION = 0.1
_MAD_TO_SIGMA = 1.4826
SHORTEST_EVENT_S = 0.5  # the shortest event issue 32's truth test plants
THUMB_WIDTH = 320  # the keyframes are compared at about this width (the motion detector's scale)
# The glance of a 480 px thumbnail (Settings.thumbnail_width) is 4x4 block means: 120 px wide.
GLANCE_WIDTH = 480 // GLANCE_BLOCK

Grey = npt.NDArray[np.uint8]


@dataclass
class PacketStats:
    """What the demuxer says of one GOP's packets (no decoding)."""

    start_s: float
    frames: int = 0
    bytes: int = 0
    nonkey_sizes: list[int] = field(default_factory=list)

    def busiest(self, window: int) -> float:
        """The largest mean size of ``window`` consecutive non-key packets (0 if none)."""
        sizes = np.asarray(self.nonkey_sizes, dtype=np.float64)
        if not len(sizes):
            return 0.0
        width = min(window, len(sizes))
        sums = np.convolve(sizes, np.ones(width), mode="valid")
        return float(sums.max() / width)


@dataclass(frozen=True)
class ActivityMap:
    """Per GOP (in stream order): where it starts, whether it is active, and why.

    ``reasons`` per GOP: ``"keyframe"`` (its keyframe differs from a neighbour's), ``"packets"``
    (its packets rose above the idle level), ``"margin"`` (next to an active GOP), ``"first"``
    (nothing to compare it with), ``"fallback"`` or ``"still"``. ``ends_s[i]`` is the next GOP's
    start (the last GOP ends at the last packet's end).
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
    details: dict[str, float] = field(default_factory=dict)

    def active_spans(self) -> list[tuple[float, float]]:
        """The active stretches ``(start_s, end_s)``, adjacent GOPs joined."""
        spans: list[tuple[float, float]] = []
        for start, end, on in zip(self.starts_s, self.ends_s, self.active, strict=True):
            if on and spans and abs(spans[-1][1] - start) < 1e-6:
                spans[-1] = (spans[-1][0], end)
            elif on:
                spans.append((start, end))
        return spans

    @property
    def still_fraction(self) -> float:
        """The share of the video's time judged still."""
        total = sum(e - s for s, e in zip(self.starts_s, self.ends_s, strict=True))
        still = sum(
            e - s for s, e, a in zip(self.starts_s, self.ends_s, self.active, strict=True) if not a
        )
        return still / total if total > 0 else 0.0


def map_activity(path: Path, motion: MotionConfig | None = None) -> ActivityMap:
    """The activity map of a local video file (see the module docstring)."""
    started = time.perf_counter()
    cfg = motion or MotionConfig()
    gops, keys, fps = _read_stream(path)
    reason = _no_cadence(gops)
    if reason is not None:
        return _all_active(gops, reason, time.perf_counter() - started)
    key_changed = [i > 0 and _changed(keys[i - 1], keys[i], cfg) for i in range(len(gops))]
    window = max(1, round(SHORTEST_EVENT_S * fps))
    busy = [g.busiest(window) for g in gops]
    level = _idle_level(busy, key_changed)
    reasons = _judge(busy, key_changed, level)
    return _finish(gops, reasons, level, None, time.perf_counter() - started)


def _read_stream(path: Path) -> tuple[list[PacketStats], list[Grey | None], float]:
    """One pass: every packet's size and flag, and each keyframe decoded to a small grey frame."""
    gops: list[PacketStats] = []
    keys: list[Grey | None] = []
    with open_video(path) as container:
        stream = container.streams.video[0]
        ctx = stream.codec_context
        ctx.skip_frame = "NONKEY"
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
            _count(gops[-1], packet)
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


def _count(gop: PacketStats, packet: av.Packet[av.VideoStream]) -> None:
    gop.frames += 1
    gop.bytes += packet.size
    if not packet.is_keyframe:
        gop.nonkey_sizes.append(packet.size)


def _no_cadence(gops: list[PacketStats]) -> str | None:
    """Why the stream's keyframes cannot tell still from active, or None when they can."""
    if len(gops) < 2:
        return f"{len(gops)} keyframe(s): no cadence to compare keyframes at"
    gaps = [b.start_s - a.start_s for a, b in itertools.pairwise(gops)]
    longest = max(gaps)
    if longest >= MAX_GOP_S:
        return f"a GOP of {longest:.0f} s: keyframes too far apart to judge stillness"
    return None


def _changed(previous: Grey | None, current: Grey | None, cfg: MotionConfig) -> bool:
    """Whether the motion detector, or the text looks' test, would see a change between two
    keyframes."""
    if previous is None or current is None or previous.shape != current.shape:
        return True
    if _glance_changed(previous, current):
        return True
    before = to_planes(previous, cfg.blur_sigma)
    after = to_planes(current, cfg.blur_sigma)
    diff = difference_image(after, before)
    mask = mask_changes(diff, cfg.threshold, cfg.open_px)
    boxes, _ = boxes_from_mask(mask, diff, cfg)
    return len(boxes) > 0


def _glance(frame: Grey) -> npt.NDArray[np.uint8]:
    """A keyframe as the sample stage's glance sees it: grey block means about a quarter of
    the thumbnail's width (``tasks.sample.text_looks``)."""
    grey = frame.mean(axis=2) if frame.ndim == 3 else frame.astype(np.float64)
    width = max(2, GLANCE_WIDTH)
    height = max(2, round(grey.shape[0] * width / grey.shape[1]))
    small = cv2.resize(grey.astype(np.float32), (width, height), interpolation=cv2.INTER_AREA)
    return np.asarray(np.clip(small, 0, 255), dtype=np.uint8)


def _glance_changed(previous: Grey, current: Grey) -> bool:
    """Whether a cell of the glance changed as much as the text looks' own test asks before
    the OCR looks again (``LookConfig.changed_level``). A sign put up is often too thin or too
    faint for the motion detector's test (an outlined caption: measured on random scene
    100031, where the gate without this test skipped the 6.5 s before the OCR read it), but
    the OCR would read it at its next look."""
    looks = LookConfig()
    differences = cell_differences(_glance(previous), _glance(current), looks.cell)
    return bool((differences > looks.changed_level).any())


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


def _judge(busy: list[float], key_changed: list[bool], level: float | None) -> list[str]:
    """Each GOP's reason before the margin: a change between keyframes ``i - 1`` and ``i``
    happened within GOP ``i - 1`` (the margin then covers keyframe ``i``'s GOP too)."""
    reasons = ["still"] * len(busy)
    reasons[0] = "first"
    for i in range(1, len(busy)):
        if key_changed[i]:
            reasons[i - 1] = "keyframe"
    for i, figure in enumerate(busy):
        over = level is None or figure > level
        if reasons[i] == "still" and over:
            reasons[i] = "packets"
    return reasons


def _finish(
    gops: list[PacketStats],
    reasons: list[str],
    level: float | None,
    fallback: str | None,
    cost: float,
) -> ActivityMap:
    """Add the margin of one GOP on each side of every active GOP, and build the map."""
    hot = [r != "still" for r in reasons]
    for i in range(len(gops)):
        near = (i > 0 and hot[i - 1]) or (i + 1 < len(gops) and hot[i + 1])
        if reasons[i] == "still" and near:
            reasons[i] = "margin"
    starts = tuple(g.start_s for g in gops)
    ends = (*starts[1:], _last_end(gops)) if gops else ()
    return ActivityMap(
        starts_s=starts,
        ends_s=ends,
        active=tuple(r != "still" for r in reasons),
        reasons=tuple(reasons),
        gop_bytes=tuple(g.bytes for g in gops),
        gop_frames=tuple(g.frames for g in gops),
        idle_level=level,
        fallback=fallback,
        cost_s=cost,
    )


def _last_end(gops: list[PacketStats]) -> float:
    """The last GOP's end: its start plus as long as a typical GOP per frame it holds."""
    last = gops[-1]
    if len(gops) < 2:
        return float("inf")
    per_frame = (last.start_s - gops[0].start_s) / max(sum(g.frames for g in gops[:-1]), 1)
    return last.start_s + per_frame * last.frames


def _all_active(gops: list[PacketStats], reason: str, cost: float) -> ActivityMap:
    return _finish(gops, ["fallback"] * len(gops), None, reason, cost)
