"""The ``motion`` detector: boxes where a cheap background model says the scene changed.

As in Frigate, motion comes first because it is almost free (about 1 ms per 320x180 grey frame).
On small frames a running-average background, a threshold on the blurred difference, an opening
and connected components find regions of change, and regions that overlap or nearly touch are
merged so that one object gives one box. Heavier detectors can then look only at sampled frames
with motion, and only there.

The background update is SELECTIVE. Pixels that look like background adapt at ``learning_rate``;
pixels that are foreground adapt only at the much smaller ``foreground_rate``. A plain running
average at 0.05 per sampled frame swallows an object that stops within about 5 s at 5 fps, so a
person who stops to wait would vanish and the tracker would lose them. With the selective update
a dwelling object stays detected for about ``ln(difference / threshold) / foreground_rate``
sampled frames (minutes), while a slow lighting drift, which never crosses the threshold, is still
followed (measured: a thing that stops for 8 s stays a box in every sampled frame, and leaves no
ghost when it goes, ``tests/tasks/track/test_continuity.py``). The price is the classic one:
whatever stood in the frame when the background was (re)started leaves a "ghost" where it stood
once it moves away, and that ghost would fade only at the slow rate too; the ghost test
(``background.ghost_regions``) finds it, in each region of change before regions are merged (a
thing that stops again near where it stood is otherwise one box with its ghost) and in the
merged boxes, and the background takes the frame there at once.

Hence, too, as few restarts as possible. The background restarts at the sample stage's scene
cuts, and on a frame-wide change (``max_changed_fraction``) only when a remap of the background
to the frame's new look (``background.remap_background``: an exposure reset, a light, an
infrared filter switching) does not explain it (``remap_max_fraction``): a new look of the same
place keeps the remapped background, so what was moving or standing there stays foreground.
Which identities carry on across a cut is the track stage's call (``tasks.track.continuity``).

Fragments are joined by merging their BOXES (``merge_gap``) rather than by a dilation or closing
of the mask: a dilation fattens every box by its radius (which costs IoU on small objects) and
costs a full-frame pass, while box merging is exact and works on a handful of boxes.

Frames may be grey ``(H, W)`` or have channels ``(H, W, C)``; then the largest per-channel
difference counts. Colour matters for objects as bright as what is behind them: in the synthetic
lobby the green loiterer is within 3 to 13 grey levels of the floor where it dwells, so on grey
frames it is invisible at any threshold above the noise, while on colour frames its red channel
stands about 85 levels out. Colour costs about twice the time of grey.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field
from scipy import ndimage
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

from tasks.detect.detectors.background import (
    FloatImage,
    Mask,
    forget_ghosts,
    forget_text,
    frame_gain,
    learn,
    remap_background,
)
from tasks.detect.detectors.base import FrameView
from tasks.detections import Detections
from tasks.geometry import box_union

Frame = npt.NDArray[np.uint8]
Boxes = npt.NDArray[np.float64]
Values = npt.NDArray[np.float64]
Groups = npt.NDArray[np.int64]
Boxes32 = npt.NDArray[np.float32]

_SQUARE = np.ones((3, 3), dtype=bool)


class MotionConfig(BaseModel):
    """Settings of the ``motion`` detector.

    Lengths at the scale of objects (``min_area``, ``merge_gap``) are fractions of the frame, so
    any frame size works; lengths at the scale of noise (``blur_sigma``, ``open_px``) are pixels,
    because sensor noise is per pixel whatever the frame size.

    Attributes:
        type: plugin discriminator.
        threshold: grey-level difference (after the blur; per channel for colour frames) that
            counts as change. Noise of 2 to 6 grey levels gives no box once blurred (tested);
            lower it for low-contrast scenes, raise it for heavily compressed ones.
        min_area: smallest region kept, as a fraction of the frame area (counted in changed
            pixels after merging, so the fragments of a faint object add up).
        blur_sigma: gaussian blur, in pixels, applied before differencing; it averages sensor and
            compression noise so that single pixels rarely cross the threshold.
        learning_rate: per sampled frame, for pixels that look like background.
        foreground_rate: per sampled frame, for pixels that are foreground (see module docstring).
        open_px: radius in pixels of the opening that removes specks of change (1 = 3x3 square);
            0 turns it off.
        merge_gap: boxes closer than this fraction of the frame width are merged into one, which
            joins the fragments of one object whose middle matches the background.
        ghost_edge_ratio: a region whose outline is this much sharper in the background than
            in the frame is a ghost (see ``ghost_regions``): it gives no box and the background
            takes the frame's pixels there at once. 0 turns it off.
        follow_gain: scale the background by the frame's global gain before differencing, so
            a light switched on or an auto-exposure drift changes no pixel's verdict.
        max_changed_fraction: when more than this fraction of the frame changes at once, the
            change is a missed scene cut, a lighting jump or a camera bump rather than motion; the
            background restarts from that frame, which gives no boxes (Frigate recalibrates too,
            at 80 %). Lower here because the selective update would otherwise keep a frame-wide
            box for minutes: the lobby's cut changes only 46 % of a grey frame by > 25 levels.
        remap_max_fraction: before restarting on a frame-wide change, the background is
            remapped to the frame's new look (``remap_background``: an exposure reset, an
            infrared filter switching); when that leaves at most this fraction of the frame
            changed, it was the same place in a new look, and the background keeps the remap,
            so whatever was moving or standing there stays foreground (a restart would take it
            into the background, and leave its ghost when it moves). Small, because a cut
            between two plain pictures is also explained by a remap all but 11 to 15 % (the
            lobby's cut, measured) and each pixel left over would be change for minutes.
            0 restarts on every frame-wide change.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["motion"] = "motion"
    threshold: int = Field(25, ge=1, le=255)
    min_area: float = Field(0.0015, ge=0.0, lt=1.0)
    blur_sigma: float = Field(1.0, ge=0.0)
    learning_rate: float = Field(0.05, gt=0.0, le=1.0)
    foreground_rate: float = Field(0.002, ge=0.0, le=1.0)
    open_px: int = Field(1, ge=0, le=8)
    merge_gap: float = Field(0.02, ge=0.0, le=1.0)
    max_changed_fraction: float = Field(0.35, gt=0.0, le=1.0)
    follow_gain: bool = True
    ghost_edge_ratio: float = Field(0.6, ge=0.0, le=1.0)
    remap_max_fraction: float = Field(0.05, ge=0.0, le=1.0)


def check_frame(frame: Frame) -> None:
    """Refuse what is not a small ``(H, W)`` grey or ``(H, W, C)`` uint8 frame.

    Raises:
        ValueError: on another dtype or number of dimensions.
    """
    if frame.dtype != np.uint8 or frame.ndim not in (2, 3) or min(frame.shape[:2]) < 2:
        raise ValueError(
            f"expected an (H, W) or (H, W, C) uint8 frame, got {frame.shape} {frame.dtype}"
        )


def to_planes(frame: Frame, sigma: float) -> FloatImage:
    """The frame as contiguous float32 planes ``(C, H, W)`` (grey gives one), blurred spatially.

    Channels go first so that the blur, the difference and the update run over contiguous planes;
    the blur never mixes channels.
    """
    planes = frame[None] if frame.ndim == 2 else np.moveaxis(frame, 2, 0)
    out = np.empty(planes.shape, dtype=np.float32)
    if sigma > 0:
        ndimage.gaussian_filter(planes, sigma=(0.0, sigma, sigma), output=out, mode="nearest")
    else:
        out[...] = planes
    return out


def difference_image(planes: FloatImage, background: FloatImage) -> FloatImage:
    """``(H, W)`` absolute difference of ``(C, H, W)`` planes, the largest over the channels."""
    diff = np.abs(planes - background)
    return np.asarray(diff.max(axis=0), dtype=np.float32)


def changed_window(mask: Mask, margin: int) -> tuple[slice, slice] | None:
    """The rows and columns that hold changed pixels, widened by ``margin``; None if none do.

    Motion is usually a small part of the frame, so the morphology and the labelling run on
    this window only (a 640x360 opening costs ~4 ms, the window around one person ~0.2 ms).
    """
    rows = np.flatnonzero(mask.any(axis=1))
    if not len(rows):
        return None
    cols = np.flatnonzero(mask.any(axis=0))
    top, left = max(int(rows[0]) - margin, 0), max(int(cols[0]) - margin, 0)
    return slice(top, int(rows[-1]) + margin + 1), slice(left, int(cols[-1]) + margin + 1)


def mask_changes(diff: FloatImage, threshold: float, open_px: int) -> Mask:
    """Pixels whose difference exceeds ``threshold``, with specks removed by an opening.

    Outside the window every pixel is unchanged, so opening the window alone gives the same mask.
    """
    mask = diff > threshold
    window = changed_window(mask, open_px + 1)
    if open_px > 0 and window is not None:
        mask[window] = ndimage.binary_opening(mask[window], _SQUARE, iterations=open_px)
    return mask


def find_regions(mask: Mask, diff: FloatImage) -> tuple[Boxes, Values, Values]:
    """Connected regions of ``mask``: pixel boxes ``(N, 4)``, areas ``(N,)``, summed differences."""
    window = changed_window(mask, 0)
    if window is None:
        return np.zeros((0, 4)), np.zeros(0), np.zeros(0)
    sub = mask[window]
    labels, count = ndimage.label(sub)
    corner = np.array([window[1].start, window[0].start] * 2, dtype=np.float64)
    boxes = corner + np.array(
        [(s[1].start, s[0].start, s[1].stop, s[0].stop) for s in ndimage.find_objects(labels)],
        dtype=np.float64,
    ).reshape(-1, 4)
    # Only the changed pixels carry a label, so counting them alone is enough (and much cheaper).
    flat = labels[sub] - 1
    areas = np.bincount(flat, minlength=count).astype(np.float64)
    sums = np.bincount(flat, weights=diff[window][sub], minlength=count).astype(np.float64)
    return boxes, areas, sums


def _near_pairs(boxes: Boxes, gap: float) -> csr_array:
    """Adjacency of boxes that overlap or lie within ``gap`` of each other on both axes."""
    x1, y1, x2, y2 = (boxes[:, k] for k in range(4))
    near_x = (x1[:, None] <= x2[None, :] + gap) & (x1[None, :] <= x2[:, None] + gap)
    near_y = (y1[:, None] <= y2[None, :] + gap) & (y1[None, :] <= y2[:, None] + gap)
    return csr_array(near_x & near_y)


def merge_boxes(boxes: Boxes, gap: float) -> tuple[Boxes, Groups]:
    """Merge boxes that overlap or lie within ``gap`` of each other, until none do.

    A merged box can reach boxes that none of its parts reached, so merging repeats until the
    number of boxes stops falling.

    Args:
        boxes: ``(N, 4)`` ``x1, y1, x2, y2`` in any unit (``gap`` is in the same unit).
        gap: largest distance between two boxes that still merges them; 0 merges touching boxes.

    Returns:
        The merged boxes ``(M, 4)`` and, for each input box, the index of its merged box ``(N,)``.
    """
    merged = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    groups = np.arange(len(merged), dtype=np.int64)
    while len(merged) > 1:
        count, step = connected_components(_near_pairs(merged, gap), directed=False)
        if count == len(merged):
            break
        merged = box_union(merged, step.astype(np.int64))
        groups = step.astype(np.int64)[groups]
    return merged, groups


def score_regions(areas: Values, mean_diffs: Values, min_pixels: float, threshold: float) -> Values:
    """Scores in 0..1 that grow with a region's area and with its mean difference.

    ``(1 - exp(-area / min_area)) * (1 - exp(-mean_diff / threshold))``: a region of just
    ``min_area`` scores at most 0.63 and one of 2x ``min_area`` at most 0.86; a region only just
    over the threshold keeps at most 0.63 of that, one at 2x the threshold 0.86. So a clear
    object twice the smallest size starts a track (the tracker's ``high_thresh`` is 0.5), and a
    faint speck at the threshold only extends one. (With ``4 min_area`` here, objects under 0.6 %
    of the frame, a 65x94 figure at 1080p, never started a track: measured on random scenes.)
    """
    size = 1.0 - np.exp(-areas / max(min_pixels, 1.0))
    contrast = 1.0 - np.exp(-mean_diffs / threshold)
    return np.asarray(size * contrast, dtype=np.float64)


def boxes_from_mask(mask: Mask, diff: FloatImage, config: MotionConfig) -> tuple[Boxes, Values]:
    """Pixel boxes ``(N, 4)`` and scores ``(N,)`` of the merged regions of change.

    Regions are merged before small ones are dropped, so the fragments of one faint object add
    up to one box instead of each falling under ``min_area``.
    """
    height, width = mask.shape
    boxes, areas, sums = find_regions(mask, diff)
    merged, groups = merge_boxes(boxes, config.merge_gap * width)
    areas = np.bincount(groups, weights=areas, minlength=len(merged)).astype(np.float64)
    sums = np.bincount(groups, weights=sums, minlength=len(merged)).astype(np.float64)
    min_pixels = config.min_area * height * width
    keep = areas >= max(min_pixels, 1.0)
    mean_diffs = sums[keep] / areas[keep]
    return merged[keep], score_regions(areas[keep], mean_diffs, min_pixels, config.threshold)


class MotionDetector:
    """Finds moving (and recently stopped) things in the sampled frames of one video, in order.

    Frames are small ``(H, W)`` grey uint8 arrays, or ``(H, W, C)`` ones: then a change in any
    channel counts, which also catches objects whose brightness matches the background (see the
    module docstring). One detector holds the background of one video; it is not thread-safe.
    """

    name = "motion"
    class_names = ("motion",)

    def __init__(self, config: MotionConfig | None = None) -> None:
        self.config = config or MotionConfig()
        self.frames_seen = 0
        self._background: FloatImage | None = None
        self._frames_since_reset = 0
        self.remapped: list[int] = []  # frames where the background took a new look, in order

    def reset(self, grey: Frame) -> None:
        """Start a new background from ``grey`` (first frame, or the first after a scene cut)."""
        check_frame(grey)
        self._restart(to_planes(grey, self.config.blur_sigma))

    def detect(
        self, frames: Sequence[FrameView], ignore: Mapping[int, Boxes32] | None = None
    ) -> Detections:
        """Boxes of change in every frame, in order (the plugin interface); the background
        restarts on refreshes. ``ignore``: normalised boxes per frame index where change does
        not count (text read there, see ``tasks.detect.stage.motion_beside_text``)."""
        self.frames_seen = len(frames)
        parts = [
            self.detect_frame(
                view.index,
                view.t_s,
                view.analysis(),
                refreshed=view.refresh,
                ignore=None if ignore is None else ignore.get(view.index),
            )
            for view in frames
        ]
        return Detections.concatenate(parts) if parts else Detections.empty(self.class_names)

    def detect_frame(
        self,
        frame_index: int,
        t_s: float,
        grey: Frame,
        refreshed: bool = False,
        ignore: Boxes32 | None = None,
    ) -> Detections:
        """Boxes of change in one sampled frame, then the background learns from it.

        Args:
            frame_index: sampled-frame index, copied into the detections.
            t_s: time of the frame in the video, seconds.
            grey: the downscaled frame (see the class docstring).
            refreshed: the scene was cut just before this frame: restart the background here.
            ignore: normalised boxes ``(N, 4)`` where change does not count; the background
                takes the frame's pixels there.

        Returns:
            One box per region of change (normalised coordinates); none on a restart, which also
            happens on the first frame, when the frame size changes and when more than
            ``max_changed_fraction`` of the frame changed at once.

        Raises:
            ValueError: when ``grey`` is not an ``(H, W)`` or ``(H, W, C)`` uint8 array.
        """
        check_frame(grey)
        planes = to_planes(grey, self.config.blur_sigma)
        background = self._background
        if refreshed or background is None or background.shape != planes.shape:
            return self._restart(planes)
        if self.config.follow_gain:
            background *= np.float32(frame_gain(planes, background))
        diff = difference_image(planes, background)
        mask = mask_changes(diff, self.config.threshold, self.config.open_px)
        if mask.mean() > self.config.max_changed_fraction:
            background = remap_background(background, planes)
            diff = difference_image(planes, background)
            mask = mask_changes(diff, self.config.threshold, self.config.open_px)
            if mask.mean() > self.config.remap_max_fraction:
                return self._restart(planes)
            self._background = background
            self.remapped.append(frame_index)
        if ignore is not None and len(ignore):
            min_pixels = max(self.config.min_area * mask.size, 1.0)
            forget_text(mask, ignore, background, planes, min_pixels)
        # Ghosts are looked for in each region of change before regions are merged (a thing
        # that stood where the background began and stopped again nearby is two regions, its
        # ghost and itself, merged into one box whose outline is the thing's), then in the
        # merged boxes (a ghost in fragments).
        edge_ratio = self.config.ghost_edge_ratio
        forget_ghosts(find_regions(mask, diff)[0], mask, planes, background, edge_ratio)
        boxes, scores = boxes_from_mask(mask, diff, self.config)
        ghosts = forget_ghosts(boxes, mask, planes, background, edge_ratio)
        boxes, scores = boxes[~ghosts], scores[~ghosts]
        self._learn(background, planes, mask)
        height, width = mask.shape
        return self._detections(frame_index, t_s, boxes / [width, height, width, height], scores)

    def _restart(self, planes: FloatImage) -> Detections:
        """Begin a new background from ``planes``; that frame itself gives no boxes."""
        self._background = planes
        self._frames_since_reset = 0
        return Detections.empty(self.class_names)

    def _learn(self, background: FloatImage, planes: FloatImage, mask: Mask) -> None:
        """Selective update, warmed up after a restart (``background.learn``)."""
        rates = (self.config.learning_rate, self.config.foreground_rate)
        learn(background, planes, mask, rates, self._frames_since_reset)
        self._frames_since_reset += 1

    def _detections(self, frame_index: int, t_s: float, boxes: Boxes, scores: Values) -> Detections:
        """Rows of one frame: normalised ``boxes`` ``(N, 4)`` with their ``scores``."""
        n = len(boxes)
        return Detections(
            boxes=boxes.astype(np.float32),
            scores=scores.astype(np.float32),
            class_ids=np.zeros(n, dtype=np.int64),
            frame_index=np.full(n, frame_index, dtype=np.int64),
            t_s=np.full(n, t_s, dtype=np.float32),
            class_names=self.class_names,
        )
