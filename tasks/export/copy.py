"""Stream copy: a clip of a source window whose packets are the source's, not re-encoded.

A clip must start where its window starts, but a decoder can only start at a keyframe. So the
packets are copied from the keyframe at or before the window's start, their timestamps shifted so
that the window's start is 0: the pre-roll packets get negative timestamps, and libavformat's mov
muxer writes an MP4 edit list that starts the presentation at 0. A player (and PyAV's demuxer)
decodes the pre-roll but shows nothing before 0, so the clip's frame at presentation time ``t``
is the source's frame at ``start_s + t``, the same pixels (tests/tasks/export/test_copy.py).
The clip starts at the first frame shown at or after the window's start (``Clip.start_s``): the
mov demuxer starts a presentation at a frame, so an edit list starting between two frames would
shift every frame by the difference.

The clip stops at the window's end, in decode order: with B-frames a frame inside the window may
come after, in decode order, a reference frame shown after the window, so the copy goes on to the
last packet in decode order whose frame lies in the window, then further until no frame is
missing before the last one it holds (at most one group of B-frames). The end it truly covers
(``Clip.end_s``, the source time of its last frame) may thus lie a few frames after the window.

The stream's codec parameters, its display matrix (a phone's rotation) among them, are copied
with it: a player turns the picture as it turned the source's, and a decoder hands over the same
unturned frames with their ``rotation``. Only the video stream is copied (audio is left out, as
the re-encoded clips always have).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from fractions import Fraction
from pathlib import Path

import av

from tasks.decode.stage import open_video
from tasks.export.cut import Clip
from tasks.mp4 import Timed, timed_packets, write_copied


def copy_clip(source: Path, window: tuple[float, float], out: Path) -> Clip:
    """Copy the source's packets that show ``window`` (seconds) to ``out`` (MP4 with an edit
    list, written beside it and renamed when whole). Packets stream through: a long window is
    never held in memory.

    Raises:
        SourceInvalid: the source does not open or demux.
        ValueError: no frame of the source lies in the window.
    """
    start_s, end_s = window
    partial = out.with_name(f".{out.name}.partial")
    try:
        with open_video(source) as container:
            stream = container.streams.video[0]
            base = stream.time_base or Fraction(1, 90000)
            start, end = round(start_s / base), math.floor(end_s / base + 1e-6)
            first = _first_shown(_from_keyframe(container, stream, start, base), start, end)
            if first is None:
                raise ValueError(f"no frame of the source lies in {start_s:.3f}-{end_s:.3f} s")
            packets = _through_window(_from_keyframe(container, stream, start, base), end)
            shown = write_copied(partial, stream, packets, first)
            size = stream.codec_context.width, stream.codec_context.height
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    times = tuple(float(pts * base) for pts in sorted(shown) if pts >= first)
    return Clip(out, times[0], times[-1], times, *size)


def _first_shown(packets: Iterable[Timed], start: int, end: int) -> int | None:
    """The pts of the first frame shown at or after ``start`` (and not after ``end``)."""
    best: int | None = None
    for packet in packets:
        if packet.dts > (end if best is None else best):
            break  # this packet and every later one are shown after it
        if start <= packet.pts <= end and (best is None or packet.pts < best):
            best = packet.pts
    return best


def _from_keyframe(
    container: av.container.InputContainer, stream: av.VideoStream, start: int, base: Fraction
) -> Iterator[Timed]:
    """The stream's packets in decode order from the last keyframe whose frame is shown at or
    before ``start`` (an index seek may land on a keyframe shown after it: then seek earlier)."""
    target = start
    while True:
        container.seek(max(0, target), backward=True, stream=stream)
        packets = timed_packets(container, stream)
        first = next((p for p in packets if p.keyframe), None)
        if first is None or first.pts <= start or target <= 0:
            break
        target = min(target, first.pts) - max(1, round(1 / base))  # a second earlier
    if first is not None:
        yield first
        yield from packets


def _through_window(packets: Iterable[Timed], end: int) -> Iterator[Timed]:
    """The shortest decode-order prefix holding every packet shown at or before ``end`` and
    every packet shown before the last one it holds (see the module's docstring), as it is
    read: packets shown after the bound wait until a later one shown within it takes them in."""
    pending: list[Timed] = []
    bound = end
    for packet in packets:
        if packet.dts > bound:
            return  # this packet and every later one are shown after the bound
        pending.append(packet)
        if packet.pts <= bound:
            bound = max(bound, *(p.pts for p in pending))
            yield from pending
            pending = []
