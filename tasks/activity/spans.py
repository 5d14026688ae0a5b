"""Where an activity map's spans lie (issue 32): raised packets located in time, and spans.

The seam with ``tasks.activity.map``: that module reads the stream and judges each GOP;
this one turns the judgements and the packets' sizes into the spans a sampler decodes, each
starting at a keyframe (decoding starts there) and ending wherever activity and its margin do.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

# The margin around located raised packets: the larger of MARGIN_S and MARGIN_FRAMES frames
# before; after, also at least the located stretch's own length. Measured: on the truth test's
# constant-quality scenes (``benchmarks/activity.py --truth``: H.264 and HEVC, 2 s and 10 s GOPs)
# a raised window, itself half a second long, already starts 0.17 s before its event and ends
# 0.07 s after it at the worst, so no margin was needed there. On ``benchmarks/activity.py``'s
# bit-rate-capped 360p clips the rate control starves the rest of a pass once it has spent
# on its start: the raised stretch began up to 0.59 s after a 1.5 s pass did and ended up to
# 0.88 s before it did (a 0.5 s margin missed 3 of 24 passes at 20 %, 3 of 6 at 5 % with
# 10 s GOPs). Hence 1 s each side, and after a long raised stretch as long again (a longer
# event leaves a longer starved tail), and a few frames of context at low frame rates.
MARGIN_S = 1.0
MARGIN_FRAMES = 4


@dataclass
class PacketStats:
    """What the demuxer says of one GOP's packets (no decoding); times in display order."""

    start_s: float
    frames: int = 0
    bytes: int = 0
    last_s: float = 0.0
    nonkey_sizes: list[int] = field(default_factory=list)
    nonkey_times: list[float] = field(default_factory=list)

    def busiest(self, window: int) -> float:
        """The largest mean size of ``window`` consecutive non-key packets (0 if none)."""
        sizes = np.asarray(self._in_display_order()[1], dtype=np.float64)
        if not len(sizes):
            return 0.0
        width = min(window, len(sizes))
        sums = np.convolve(sizes, np.ones(width), mode="valid")
        return float(sums.max() / width)

    def _in_display_order(self) -> tuple[list[float], list[int]]:
        pairs = sorted(zip(self.nonkey_times, self.nonkey_sizes, strict=True))
        return [t for t, _ in pairs], [n for _, n in pairs]


def margin_s(fps: float) -> float:
    """The margin around located raised packets: the larger of ``MARGIN_S`` and
    ``MARGIN_FRAMES`` frames (a low frame rate's frames are long)."""
    return max(MARGIN_S, MARGIN_FRAMES / fps)


def locate_raised(
    gops: list[PacketStats], window: int, level: float, frame_s: float
) -> list[tuple[float, float]]:
    """Where the non-key packets rose above ``level``: every window of ``window`` consecutive
    non-key packets (display order, across GOPs) whose mean size exceeds it, as the time from
    its first frame to the end of its last, overlapping windows joined."""
    pairs = sorted(
        (t, n) for g in gops for t, n in zip(g.nonkey_times, g.nonkey_sizes, strict=True)
    )
    if not pairs:
        return []
    times = np.asarray([t for t, _ in pairs])
    sizes = np.asarray([n for _, n in pairs], dtype=np.float64)
    width = min(window, len(sizes))
    means = np.convolve(sizes, np.ones(width), mode="valid") / width
    raised = np.flatnonzero(means > level)
    return join_spans([(float(times[j]), float(times[j + width - 1]) + frame_s) for j in raised])


def build_spans(
    gops: list[PacketStats],
    reasons: list[str],
    raised: list[tuple[float, float]],
    margin: float,
    frame_s: float,
) -> list[tuple[float, float]]:
    """The active spans, each widened back to the keyframe at or before its start.

    - Raised packets: from (first raised - ``margin``) to (last raised + the larger of
      ``margin`` and the raised stretch's length).
    - A keyframe change in a GOP with raised packets: the GOP whole and the next keyframe (so
      what follows is shown in its new state), without GOP margins: the raised packets, with
      their margins, say where the event reaches beyond it. Not the raised packets alone: a
      pass crossing a keyframe can raise the packets before it and not those after (found by
      ``benchmarks/activity.py`` at 20 %: the box's exit after the keyframe stayed at idle).
    - A keyframe change in a GOP without raised packets (a slow change, a fade): the GOP whole,
      plus one GOP each side, since a change below the detector's threshold at the keyframes
      around it may have begun before it and may go on after it.
    - The first keyframe (a one-frame span), so a still start has a frame to show.
    - A GOP judged "packets" whose windows were not located (a GOP shorter than a window): whole.
    """
    starts = [g.start_s for g in gops]
    end_of_video = max(g.last_s for g in gops) + frame_s
    ends = [*starts[1:], end_of_video]
    wanted = [(a - margin, b + max(margin, b - a)) for a, b in raised]
    wanted.append((starts[0], starts[0] + frame_s))
    for i, reason in enumerate(reasons):
        located = any(a < ends[i] and b > starts[i] for a, b in raised)
        if reason == "keyframe" and located:
            wanted.append((starts[i], ends[i] + (frame_s if i + 1 < len(gops) else 0.0)))
        elif reason == "keyframe" or (reason == "packets" and not located):
            wanted.append((starts[max(i - 1, 0)], ends[min(i + 1, len(gops) - 1)]))
    return join_spans(
        [(_keyframe_at_or_before(starts, a), min(b, end_of_video)) for a, b in wanted]
    )


def _keyframe_at_or_before(starts: list[float], when: float) -> float:
    index = bisect.bisect_right(starts, when + 1e-9) - 1
    return starts[max(index, 0)]


def join_spans(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of ``spans``, in order, touching ones joined."""
    out: list[tuple[float, float]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1] + 1e-6:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
