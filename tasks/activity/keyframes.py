"""Keyframes in the activity map: when two differ, and keyframe mode (issue 42), stillness
judged from keyframes alone.

Two keyframes differ when the motion detector's own test, or the text looks' test, sees a
change between them (``keyframe_changed``; the module docstring of ``tasks.activity.map`` says
why both).

A rate-capped encoder (a bitrate target or ceiling, as most cameras send) keeps its packets near
the cap whatever happens, so packet sizes cannot say where an event lies between two keyframes
and the packet cue falls back to decoding everything (``tasks.activity.map.packets_blind``).
Asked for (``skip_still: "keyframes"``), the map judges each GOP by its keyframes only: a GOP
whose keyframe differs from the next one is active with one GOP on each side (the change may
have begun before the keyframe that first shows it and go on after the one that last does),
and the rest is still.

What this mode cannot see, said in every place a still stretch is reported: an event that
begins and ends between two keyframes leaves both alike. It is sure to see only an event at
least as long as the longest GOP (``sure_event_s``), which always spans a keyframe.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
import numpy.typing as npt

from tasks.activity.spans import PacketStats, join_spans
from tasks.detect.detectors.motion import (
    MotionConfig,
    boxes_from_mask,
    difference_image,
    mask_changes,
    to_planes,
)
from tasks.sample.text_looks import GLANCE_BLOCK, LookConfig, cell_differences

# The glance of a 480 px thumbnail (Settings.thumbnail_width) is 4x4 block means: 120 px wide.
GLANCE_WIDTH = 480 // GLANCE_BLOCK

Grey = npt.NDArray[np.uint8]


def keyframe_judgement(
    gops: Sequence[PacketStats], key_changed: Sequence[bool], frame_s: float
) -> tuple[list[str], list[tuple[float, float]]]:
    """Each GOP's reason (``"keyframe"``, ``"first"`` or ``"still"``) and the active spans:
    every GOP whose keyframe differs from the next, one GOP each side and the keyframe after
    them (so a still stretch after is shown in its new state), and the first keyframe."""
    count = len(gops)
    reasons = ["still"] * count
    for i in range(1, count):
        if key_changed[i]:
            reasons[i - 1] = "keyframe"
    if reasons[0] == "still":
        reasons[0] = "first"
    starts = [g.start_s for g in gops]
    end_of_video = max(g.last_s for g in gops) + frame_s
    ends = [*starts[1:], end_of_video]
    wanted = [(starts[0], min(starts[0] + frame_s, end_of_video))]
    for i, reason in enumerate(reasons):
        if reason == "keyframe":
            last = min(i + 1, count - 1)
            wanted.append((starts[max(i - 1, 0)], min(ends[last] + frame_s, end_of_video)))
    return reasons, join_spans(wanted)


def sure_event_s(gops: Sequence[PacketStats], frame_s: float) -> float:
    """The shortest event keyframe mode is sure to see: the longest GOP (such an event always
    spans a keyframe, which then differs from one of its neighbours)."""
    starts = [g.start_s for g in gops]
    ends = [*starts[1:], max(g.last_s for g in gops) + frame_s]
    return round(max(b - a for a, b in zip(starts, ends, strict=True)), 3)


def keyframe_changed(previous: Grey | None, current: Grey | None, cfg: MotionConfig) -> bool:
    """Whether the motion detector, or the text looks' test, would see a change between two
    keyframes."""
    if previous is None or current is None or previous.shape != current.shape:
        return True
    if glance_changed(previous, current):
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


def glance_changed(previous: Grey, current: Grey) -> bool:
    """Whether a cell of the glance changed as much as the text looks' own test asks before
    the OCR looks again (``LookConfig.changed_level``). A sign put up is often too thin or too
    faint for the motion detector's test (an outlined caption: measured on random scene
    100031, where the gate without this test skipped the 6.5 s before the OCR read it), but
    the OCR would read it at its next look."""
    looks = LookConfig()
    differences = cell_differences(_glance(previous), _glance(current), looks.cell)
    return bool((differences > looks.changed_level).any())
