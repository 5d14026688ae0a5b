"""What a tracked thing looks like: a colour histogram per box, compared cheaply (issue 30).

Motion tells where things are, not which is which: when two objects cross, or one reappears
from behind another, several tracks can reach the same box and the box's place alone cannot
choose. Each box therefore gets a LOOK, a normalised histogram of its colours in HSV (hue is
what a lighting step or an exposure drift changes least): ``HUE_BINS x SAT_BINS`` bins for
coloured pixels, plus ``GREY_BINS`` bins of value for pixels too grey to have a hue. Only the
inner part of the box is counted (``INNER``): a motion box is loose, and its rim is background.

A track's model is the running mean of its CLEAN looks only, the boxes that overlap no other
box of their frame: a box that holds two objects looks like neither, and learning it would
make both tracks look alike. Looks are compared with the Bhattacharyya distance (0: the same
colours, 1: no colour in common), which the tracker uses next to the boxes' places
(``tasks.track.bytetrack``).

Everything is numpy over the analysis-size frames the sample stage already wrote (a few
thousand pixels a box), so it costs well under a millisecond a box.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import cv2
import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.geometry import box_iou

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
Frame = npt.NDArray[np.uint8]

HUE_BINS = 8
SAT_BINS = 2
GREY_BINS = 4
BINS = HUE_BINS * SAT_BINS + GREY_BINS
GREY_SAT = 0.25  # below this saturation a pixel's hue is noise: it counts by its value
INNER = 0.7  # the central share of the box's width and height that is counted
MODEL_RATE = 0.3  # weight of a new clean look in the running mean of a track's model
LOOK_FLOOR = 0.1  # a wholly different look scales a pair's affinity by this squared
# Two people whose feet lines differ by less than this share of a height stand level, side by
# side: about a stride's depth at the distances a street camera sees people.
LEVEL = 0.1


def box_looks(frame: Frame, boxes: F32, inner: float = INNER) -> F32:
    """``(N, BINS)`` colour histograms (each summing to 1) of normalised ``(N, 4)`` boxes in an
    ``(H, W, 3)`` RGB frame; all zeros for a box with no pixel inside the frame. Only the
    boxes' ``inner`` parts are converted (a frame's worth of HSV would cost ten times more);
    a caller that has already cut a box to what it wants counted passes 1."""
    height, width = frame.shape[:2]
    looks = np.zeros((len(boxes), BINS), dtype=np.float32)
    for row, box in enumerate(np.asarray(boxes, dtype=np.float64)):
        x1, y1, x2, y2 = _inner(box, inner) * np.array([width, height, width, height])
        left, top = max(0, int(x1)), max(0, int(y1))
        right, bottom = min(width, int(np.ceil(x2))), min(height, int(np.ceil(y2)))
        if right <= left or bottom <= top:
            continue
        crop = np.ascontiguousarray(frame[top:bottom, left:right])
        hsv = np.asarray(cv2.cvtColor(crop, cv2.COLOR_RGB2HSV), np.uint8)
        counts = np.bincount(_pixel_bins(hsv).ravel(), minlength=BINS).astype(np.float32)
        looks[row] = counts / counts.sum()
    return looks


def _inner(box: F64, inner: float = INNER) -> F64:
    """The central ``inner`` share of a box's width and height."""
    centre, half = (box[:2] + box[2:]) / 2, (box[2:] - box[:2]) * inner / 2
    return np.concatenate([centre - half, centre + half])


def _pixel_bins(hsv: Frame) -> npt.NDArray[np.int64]:  # H 0..179, S and V 0..255
    """Each pixel's bin: hue x saturation when coloured, value when grey."""
    hue, sat, val = (hsv[..., k].astype(np.int32) for k in range(3))
    coloured = sat >= GREY_SAT * 255
    # Bins centred on the primaries (red at hue 0 would otherwise straddle the wrap).
    hue_bin = (hue + 90 // HUE_BINS) % 180 * HUE_BINS // 180
    sat_bin = np.minimum((sat - GREY_SAT * 255) * SAT_BINS // (255 * (1 - GREY_SAT)), SAT_BINS - 1)
    grey_bin = HUE_BINS * SAT_BINS + np.minimum(val * GREY_BINS // 256, GREY_BINS - 1)
    return np.where(coloured, hue_bin * SAT_BINS + sat_bin, grey_bin).astype(np.int64)


def look_distance(a: npt.ArrayLike, b: npt.ArrayLike) -> F64:
    """``(A, B)`` Bhattacharyya distances between histograms ``(A, BINS)`` and ``(B, BINS)``;
    NaN where either has no look (all zeros)."""
    a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    overlap = np.sqrt(a64) @ np.sqrt(b64).T
    distance = np.sqrt(np.clip(1.0 - overlap, 0.0, 1.0))
    known = (a64.sum(axis=1) > 0)[:, None] & (b64.sum(axis=1) > 0)[None, :]
    return np.where(known, distance, np.nan)


def overlapping(a: npt.ArrayLike, b: npt.ArrayLike) -> BoolArray:
    """``(A, B)``: which boxes of ``a`` ``(A, 4)`` and ``b`` ``(B, 4)`` share some area."""
    return np.asarray(box_iou(a, b) > 0, dtype=bool)


def clean_rows(boxes: F32) -> BoolArray:
    """Which boxes of ONE frame ``(N, 4)`` overlap no other box of it (their looks are clean)."""
    touching = overlapping(boxes, boxes)
    np.fill_diagonal(touching, False)
    return np.asarray(~touching.any(axis=1), dtype=bool)


def unoccluded_rows(boxes: F32, level: float = LEVEL) -> BoolArray:
    """Which PERSON boxes of ONE frame ``(N, 4)`` have a clean look: no box standing in front
    of them, or level with them, reaches into their ``INNER`` part. People stand on the ground,
    so the lower a box's bottom (the feet) the nearer the camera: where two people overlap the
    nearer one hides the other, and the overlap's pixels are the nearer one's. The nearer
    person's look is clean, the hidden one's is not; two people level with each other (within
    ``level`` of a height) are side by side and neither is known to be in front. Boxes merely
    touching at the edges (outside the counted ``INNER`` part) leave both clean, as a pair
    walking together often is."""
    box = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    inner = np.array([_inner(b) for b in box]).reshape(-1, 4)
    reaches = box_iou(inner, box) > 0  # (looked at, other)
    np.fill_diagonal(reaches, False)
    height = box[:, 3] - box[:, 1]
    nearer = box[None, :, 3] >= box[:, None, 3] - level * height[:, None]
    return np.asarray(~(reaches & nearer).any(axis=1), dtype=bool)


def clean_of_others(boxes: F32, owners: npt.ArrayLike, places: Sequence[F64]) -> BoolArray:
    """Which ``boxes`` ``(M, 4)``, each matched to track ``owners[m]``, overlap no place of any
    OTHER track (each of ``places`` is ``(T, 4)``: where every track is predicted, last seen...).
    One box alone in its frame can still hold two things: the one it was matched to and one
    whose track lost it there; its look is then a mixture and must not teach the model."""
    owner = np.asarray(owners, dtype=np.int64)
    clean = np.ones(len(boxes), dtype=bool)
    for place in places:
        touching = overlapping(boxes, place)
        touching[np.arange(len(owner)), owner] = False
        clean &= ~touching.any(axis=1)
    return clean


def updated_models(models: F64, looks: F64) -> F64:
    """Each track's model ``(T, BINS)`` moved towards its new clean look ``(T, BINS)`` by
    ``MODEL_RATE``; a track without a model yet takes the look as it is."""
    fresh = models.sum(axis=1) == 0
    blended = (1 - MODEL_RATE) * models + MODEL_RATE * looks
    return np.where(fresh[:, None], looks, blended)


def detection_looks(dets: Detections, frame_at: Callable[[int], Frame | None]) -> F32:
    """``(N, BINS)``: the look of every row of ``dets``, read in the picture ``frame_at`` gives
    for its ``frame_index`` (rows of a frame it has no picture of get zeros: unknown)."""
    looks = np.zeros((len(dets), BINS), dtype=np.float32)
    for index in np.unique(dets.frame_index):
        frame = frame_at(int(index))
        if frame is not None:
            rows = dets.frame_index == index
            looks[rows] = box_looks(frame, dets.boxes[rows])
    return looks


def no_looks(n: int) -> F64:
    """``(n, BINS)`` zeros: n looks unknown."""
    return np.zeros((n, BINS), dtype=np.float64)


def look_factor(distance: F64) -> F64:
    """What a look ``distance`` (0..1) scales a pair's affinity by: ``max(1 - d, LOOK_FLOOR)``
    squared. Squared, so that where places disagree only a little (a merged box, a prediction
    that overshot) colours decide; floored, so that no pair is refused on looks alone."""
    return np.asarray(np.maximum(1.0 - distance, LOOK_FLOOR) ** 2, dtype=np.float64)


def frame_looks(dets: Detections, looks: F64 | None) -> F64:
    """``looks`` with the rows of boxes that overlap another box of the frame zeroed (unknown);
    all zeros without looks."""
    if looks is None:
        return no_looks(len(dets))
    looks = np.asarray(looks, dtype=np.float64)
    if looks.shape != (len(dets), BINS):
        raise ValueError(f"looks must have shape ({len(dets)}, {BINS}), got {looks.shape}")
    return np.where(clean_rows(dets.boxes)[:, None], looks, 0.0)
