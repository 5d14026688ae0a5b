"""Partings: a thing that comes out of a region of change that held it was there all along.

Two things that walk together a few pixels apart are ONE region of change to a motion detector
(``tasks.track.merges`` splits a region only between tracks it already knows). When they part,
the tracker keeps the region's track on one of them and starts a new track on the other, in the
middle of the picture: the new one looks as if it had just appeared, and when it leaves soon
after it is too short to be an object at all (one thing missed, or a phantom).

Things keep their size, and they do not come from nothing. So when a new track's first box and
the box its neighbour's track has in that frame together fill the box that neighbour's track
was predicted to have (``PARTED_IOU``), and the neighbour shrank by the newcomer's share (at least
``HELD_SHARE`` of its area), the neighbour's region held both: the newcomer's track is carried
back through every earlier box of the neighbour that was that much larger than the neighbour
alone (or cut by the frame's edge, as both came in), each box shared out as ``merges`` shares a
merged region. A person stepping out of a car is not such a parting (the car's box does not
shrink), nor is a thing coming in at the frame's edge (it was outside), nor a region where a
third track was seen (things that met: ``merges`` and identities keep those apart).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.geometry import box_iou, box_union, inside_share
from tasks.track.bytetrack import at_edge
from tasks.track.merges import APART_SPEED, moved_inside

F64 = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

PARTED_IOU = 0.5  # the two boxes together fill the one box predicted (IoU)
HELD_SHARE = 0.5  # the share of the newcomer's area by which the old region was larger


@dataclass(frozen=True)
class Parting:
    """A new track ``new`` that came out of track ``old`` at row ``start`` (its first row)."""

    new: int
    old: int
    start: int
    old_row: int  # the old track's row in the same frame


def _area(boxes: F64) -> F64:
    return np.asarray((boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1]))


def _predicted(rows: Detections, earlier: IntArray, t_s: float) -> F64 | None:
    """The box of a track's last two ``earlier`` rows carried on at constant velocity to ``t_s``."""
    if len(earlier) < 2:
        return None
    (a, b), (ta, tb) = rows.boxes[earlier[-2:]].astype(np.float64), rows.t_s[earlier[-2:]]
    if tb <= ta:
        return None
    return np.asarray(b + (b - a) * (t_s - tb) / (tb - ta))


def _centre(rows: Detections, group: IntArray, frame: int) -> F64:
    """The centre of ``group``'s box at sampled frame ``frame``."""
    box = rows.boxes[group[rows.frame_index[group] == frame][0]].astype(np.float64)
    return np.asarray((box[:2] + box[2:]) / 2)


def _parted(rows: Detections, ids: IntArray, old: int, mine: IntArray, held: float) -> bool:
    """Whether the new track (rows ``mine``) and track ``old`` behave as two things once
    apart: ``old`` never again holds both (area ``held``; a region that shrinks and grows back
    lost a fragment), and the two move apart (the one's place from the other's changes) at
    ``merges.APART_SPEED`` or faster, as things that met do; a thing's fragments move together.
    It takes two frames in which both are seen."""
    t0, t1 = rows.t_s[mine].min(), rows.t_s[mine].max()
    theirs = np.flatnonzero((ids == old) & (rows.t_s >= t0) & (rows.t_s <= t1))
    if (_area(rows.boxes[theirs].astype(np.float64)) >= held).any():
        return False
    shared = np.intersect1d(rows.frame_index[mine], rows.frame_index[theirs])
    if len(shared) < 2:
        return False
    first, last = shared[0], shared[-1]
    offsets = [_centre(rows, mine, f) - _centre(rows, theirs, f) for f in (first, last)]
    span = float(rows.t_s[rows.frame_index == last][0] - rows.t_s[rows.frame_index == first][0])
    both = rows.boxes[np.r_[mine, theirs]].astype(np.float64)
    side = float((both[:, 2:] - both[:, :2]).max())
    moved = float(np.linalg.norm(offsets[1] - offsets[0]))
    return span > 0 and moved / span >= APART_SPEED * side


def find_parting(rows: Detections, ids: IntArray, track: int, margin: float) -> Parting | None:
    """Whether track ``track`` came out of another track's region (see the module doc)."""
    mine = np.flatnonzero(ids == track)
    start = int(mine[np.argmin(rows.t_s[mine])])
    first = rows.boxes[start].astype(np.float64)
    if at_edge(first[None], margin)[0]:
        return None
    same_frame = np.flatnonzero((rows.frame_index == rows.frame_index[start]) & (ids != track))
    best: tuple[float, Parting] | None = None
    for row in same_frame[ids[same_frame] >= 0]:
        old = int(ids[row])
        earlier = np.flatnonzero((ids == old) & (rows.t_s < rows.t_s[start]))
        earlier = earlier[np.argsort(rows.t_s[earlier], kind="stable")]
        predicted = _predicted(rows, earlier, float(rows.t_s[start]))
        if predicted is None:
            continue
        now = rows.boxes[row].astype(np.float64)
        both = box_union(np.stack([now, first]))[0]
        fit = float(box_iou(both[None], predicted[None])[0, 0])
        held = float(_area(now) + HELD_SHARE * _area(first))
        beside = inside_share(first[None], now[None])[0, 0] < HELD_SHARE
        apart = _parted(rows, ids, old, mine, held)
        parted = fit >= PARTED_IOU and _area(predicted) >= held and beside and apart
        if parted and (best is None or fit > best[0]):
            best = (fit, Parting(track, old, start, int(row)))
    return None if best is None else best[1]


def shared_back(rows: Detections, ids: IntArray, parting: Parting, margin: float) -> IntArray:
    """The old track's rows before the parting whose boxes held both things, latest first."""
    earlier = np.flatnonzero((ids == parting.old) & (rows.t_s < rows.t_s[parting.start]))
    earlier = earlier[np.argsort(-rows.t_s[earlier], kind="stable")]
    boxes = rows.boxes.astype(np.float64)
    held = _area(boxes[parting.old_row]) + HELD_SHARE * _area(boxes[parting.start])
    big = (_area(boxes[earlier]) >= held) | at_edge(boxes[earlier], margin)
    stop = np.flatnonzero(~big)
    back = earlier[: stop[0] if len(stop) else len(earlier)]
    return np.zeros(0, np.int64) if _holds_another(rows, ids, parting, back) else back


def _holds_another(rows: Detections, ids: IntArray, parting: Parting, back: IntArray) -> bool:
    """Whether a third track was seen inside the region (``HELD_SHARE`` of its box) in one of
    the ``back`` rows: then the region was things that met, one of which may be the newcomer
    (``merges`` and identities tell those apart), not a thing hidden in it since it came in."""
    third = np.flatnonzero((ids >= 0) & (ids != parting.old) & (ids != parting.new))
    for row in back:
        there = third[rows.frame_index[third] == rows.frame_index[row]]
        if len(there) and (inside_share(rows.boxes[there], rows.boxes[[row]]) >= HELD_SHARE).any():
            return True
    return False


def _shares(rows: Detections, parting: Parting, back: IntArray) -> tuple[F64, F64]:
    """Each held region of ``back`` shared out: (new thing's boxes, old thing's boxes), each the
    thing's box at the parting moved with the region and cut to it (``merges.moved_inside``)."""
    boxes = rows.boxes.astype(np.float64)
    new, old = boxes[parting.start], boxes[parting.old_row]
    centre = (np.minimum(new[:2], old[:2]) + np.maximum(new[2:], old[2:])) / 2
    shares = []
    for region in boxes[back]:
        shift = np.tile((region[:2] + region[2:]) / 2 - centre, 2)
        shares.append([moved_inside(new + shift, region), moved_inside(old + shift, region)])
    parts = np.asarray(shares, dtype=np.float64).reshape(-1, 2, 4)
    return parts[:, 0], parts[:, 1]


def carry_back(
    rows: Detections, ids: IntArray, estimated: BoolArray, margin: float
) -> tuple[Detections, IntArray, BoolArray]:
    """``rows`` (with public track ``ids``, -1 for none) where every track that came out of
    another's region (``find_parting``) is carried back through the boxes that held it, those
    boxes shared between the two and marked estimated. Tracks are taken in order of start."""
    starts = {int(t): float(rows.t_s[ids == t].min()) for t in np.unique(ids[ids >= 0])}
    for track in sorted(starts, key=starts.__getitem__):
        parting = find_parting(rows, ids, track, margin)
        back = np.zeros(0, np.int64) if parting is None else shared_back(rows, ids, parting, margin)
        if parting is None or not len(back):
            continue
        mine, theirs = _shares(rows, parting, back)
        boxes = rows.boxes.copy()
        boxes[back] = theirs.astype(np.float32)
        copied = replace(rows.select(back), boxes=mine.astype(np.float32))
        rows = Detections.concatenate([replace(rows, boxes=boxes), copied])
        ids = np.concatenate([ids, np.full(len(back), track, dtype=np.int64)])
        estimated = np.concatenate([estimated, np.ones(len(back), dtype=bool)])
        estimated[back] = True
    order = np.lexsort((np.arange(len(rows)), rows.frame_index, rows.t_s))
    return rows.select(order), ids[order], estimated[order]
