"""Objects standing still across a chunk border.

A chunk's motion background starts from the first frame of its lead-in, so an object that stands
still from then until after the border is background to that chunk until it moves again. In
one pass over the video the object is never lost: it moved in, and still foreground is learnt only
slowly. (Seen end to end: the lobby at 4.5x length has someone wait 27 s across a border. The
chunk after the border did not see them for 3 s, and the scene graph had one more person.)

The join carries such an object forward. Take each box of the previous chunk's last own frames
that the chunk does not see near its border. It is followed through the chunk's own frames as
long as the picture inside it is still the one the previous chunk last saw there: fewer than
``CHANGED_FRACTION`` of its pixels differ by more than motion's own threshold. Each such frame gets
the box, until the chunk's motion sees something there again, or the picture changes (the object
left, and the chunk sees it move).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from tasks.chunk.stage import ChunkResult
from tasks.detect.detectors.motion import MotionConfig
from tasks.detections import Detections
from tasks.geometry import box_gap, box_iou, box_union
from tasks.sample.frames import Frame

CHANGED_FRACTION = 0.2  # above this, the picture in the box is no longer the one last seen
MIN_IOU = 0.3  # two boxes of the previous chunk this alike are one place
MIN_COVER = 0.2  # a box of the chunk covering this much of the smaller of the two: seen there
# Boxes this close (fraction of the frame) to where a released object was are of it: motion's
# own merge gap, within which it joins the fragments of one object.
NEAR = MotionConfig().merge_gap
LAST_FRAMES = 3  # boxes are taken from this many of the previous chunk's last own frames


def with_still_objects(previous: ChunkResult, current: ChunkResult, threshold: int) -> Detections:
    """``current``'s motion rows (its own frame numbers) with the still objects carried in."""
    motion = current.found["motion"]
    before, after = _own_rows(previous), _own_rows(current)
    prev_frames, frames = previous.sampled.analysis_frames(), current.sampled.analysis_frames()
    if not before or not after or not len(prev_frames) or not len(frames):
        return motion
    for box, score, template in _last_boxes(previous.found["motion"], before, prev_frames):
        carried: list[tuple[int, float]] = []
        for n, row in enumerate(after):
            index = int(row["sample_index"])
            if _seen(motion, index, box):
                if carried:
                    motion = _released(motion, after[n:], box)
                break
            if _changed(_crop(frames[index], box), template, threshold) > CHANGED_FRACTION:
                break
            carried.append((index, float(row["t_s"])))
        if carried:
            motion = Detections.concatenate([motion, _boxes(motion, box, score, carried)])
    return motion


def _boxes(
    like: Detections, box: npt.NDArray[np.float32], score: float, at: list[tuple[int, float]]
) -> Detections:
    return Detections(
        boxes=np.repeat(box[None], len(at), axis=0),
        scores=np.full(len(at), score),
        class_ids=np.zeros(len(at), dtype=np.int64),
        frame_index=np.array([index for index, _ in at]),
        t_s=np.array([t for _, t in at]),
        class_names=like.class_names,
    )


def _released(
    motion: Detections, rows: Sequence[dict[str, Any]], box: npt.NDArray[np.float32]
) -> Detections:
    """The carried object moves off: the chunk sees its new pixels and, as change too, the place
    it stood on (its background had the object there). While something is seen on that place,
    the boxes touching where the object was a frame before are one object: their union, one box
    a frame (else the tracker may follow the place it left, not the object)."""
    region = box
    for row in rows:
        index = int(row["sample_index"])
        here = np.flatnonzero(motion.frame_index == index)
        if not any(_touches(motion.boxes[i], box) for i in here):
            break  # its place is background again: the object is on its own
        touching = [i for i in here if box_gap(motion.boxes[i], region) <= NEAR]
        region = box_union(motion.boxes[touching])[0]
        keep = np.ones(len(motion), dtype=bool)
        keep[touching] = False
        one = _boxes(motion, region, float(motion.scores[touching].max()), [(index, row["t_s"])])
        motion = Detections.concatenate([motion.select(keep), one])
    return motion


def _own_rows(result: ChunkResult) -> list[dict[str, Any]]:
    return [r for r in result.sampled.rows if result.chunk.owns(r["t_s"])]


def _seen(dets: Detections, index: int, box: npt.NDArray[np.float32]) -> bool:
    """Whether the chunk's motion has a box covering part of ``box`` in this frame (the object
    moves, or the chunk sees it itself): from there the tracker follows the chunk's boxes."""
    return any(_touches(other, box) for other in dets.boxes[dets.frame_index == index])


def _touches(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> bool:
    """``a`` covers at least ``MIN_COVER`` of the smaller of the two boxes."""
    width = max(0.0, float(min(a[2], b[2]) - max(a[0], b[0])))
    height = max(0.0, float(min(a[3], b[3]) - max(a[1], b[1])))
    smaller = min(float(_area(a[None])[0]), float(_area(b[None])[0]))
    return width * height >= MIN_COVER * max(smaller, 1e-9)


def _area(boxes: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return np.asarray((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), dtype=np.float32)


def _last_boxes(
    dets: Detections, rows: Sequence[dict[str, Any]], frames: Any
) -> list[tuple[npt.NDArray[np.float32], float, Frame]]:
    """The boxes of the last own frames, the latest of each place, with the picture inside."""
    found: list[tuple[npt.NDArray[np.float32], float, Frame]] = []
    for row in reversed(rows[-LAST_FRAMES:]):
        index = int(row["sample_index"])
        for i in np.flatnonzero(dets.frame_index == index):
            box = dets.boxes[i]
            if any(float(box_iou(box[None], kept[None])[0, 0]) >= MIN_IOU for kept, _, _ in found):
                continue
            crop = _crop(frames[index], box)
            if crop.size:
                found.append((box, float(dets.scores[i]), crop))
    return found


def _crop(frame: Frame, box: npt.NDArray[np.float32]) -> Frame:
    height, width = frame.shape[:2]
    x1, x2 = int(box[0] * width), int(np.ceil(box[2] * width))
    y1, y2 = int(box[1] * height), int(np.ceil(box[3] * height))
    return frame[max(0, y1) : min(height, y2), max(0, x1) : min(width, x2)]


def _changed(crop: Frame, template: Frame, threshold: int) -> float:
    """The fraction of pixels whose colour moved by more than ``threshold`` in any channel."""
    if crop.shape != template.shape or not crop.size:
        return 1.0
    moved = np.abs(crop.astype(np.int16) - template.astype(np.int16)) > threshold
    return float(np.mean(moved.any(axis=-1) if moved.ndim == 3 else moved))
