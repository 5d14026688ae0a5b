"""Merged regions: one box of change that holds two tracked things is split back into two.

A motion detector sees regions of change, not things: when two objects cross, walk side by side
or one passes one that stopped, their regions touch and come out as ONE box. Matched as it is,
that box goes to one track (whose box then balloons and whose velocity is spoilt) while the
other track goes unseen, and it is seen again as a "new" object if the two stay together for
longer than the tracker waits: one miss and one phantom for one real thing (issue 30).

The tracker knows better than the detector where each thing should be: every live track has a
predicted box. So before matching, a box that covers the predicted boxes of two or more live
tracks is replaced by one box per track: its predicted box, moved the least it takes to lie
inside the merged box (the merged box's edges are the outer edges of what it holds). Each
track then matches its own box, keeps its identity and its velocity through the merge, and the
two are told apart by place and look when they separate. What a split box looks like is
unknown (it holds both), so it teaches no track's look.

Only tracks that are known well enough take part: confirmed, seen in the last
``RECENT_S`` seconds, with ``MIN_HITS`` boxes behind them (a fragment that started a frame ago
is no thing to keep apart), and only where their looks tell them apart: two tracks that look
alike in one region are more often the parts of one thing, seen apart for a while, than two
things (where looks are unknown, two tracks on top of each other are one thing); and only where
they move differently (``APART_SPEED``): things that meet came from different places or at
different speeds, while the parts of one thing move together. A track whose prediction lies
inside another's (``NESTED``) is not split out either: it is hidden by that thing, or a part
of it, and coasts on its prediction as any unseen track does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.geometry import box_iou, inside_share

F64 = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

COVER = 0.5  # share of a track's predicted box inside a region for the region to hold it
RECENT_S = 1.0  # a track unseen for longer has a prediction too loose to split by
MIN_HITS = 3  # boxes a track needs before it is kept apart from another in a merged region
SAME_LOOK = 0.3  # two tracks looking this alike (Bhattacharyya distance) may be one thing
SAME_PLACE_IOU = 0.7  # where looks are unknown, two predictions overlapping this much are
NESTED = 0.8  # a prediction this much inside another's is hidden by it (or a part of it)
APART_SPEED = 0.2  # two things met: they moved apart by at least this (larger side per s)


@dataclass(frozen=True)
class LiveTracks:
    """What the split needs of the tracker's live tracks (one row per track)."""

    predicted: F64  # (T, 4) predicted boxes
    class_ids: IntArray
    eligible: BoolArray  # confirmed, recently seen, with enough hits
    distance: F64  # (T, T) look distances between the tracks' models (NaN: unknown)
    velocity: F64  # (T, 2) velocities of the boxes' centres, frame units per second


@dataclass(frozen=True)
class Split:
    """A frame's boxes after splitting: the boxes, their looks, and which were split."""

    dets: Detections
    looks: F64
    split: BoolArray  # rows that are a track's share of a merged region


def moved_inside(box: F64, region: F64) -> F64:
    """``box`` moved the least it takes to lie inside ``region`` (cut to it where larger)."""
    out = box.copy()
    for lo, hi in ((0, 2), (1, 3)):
        size = min(box[hi] - box[lo], region[hi] - region[lo])
        start = np.clip(box[lo], region[lo], region[hi] - size)
        out[lo], out[hi] = start, start + size
    return out


def holders(live: LiveTracks, dets: Detections, high: BoolArray) -> dict[int, IntArray]:
    """For each high-score region that holds two or more eligible tracks, the rows of those
    tracks. A track is held by the box its predicted box overlaps best (by IoU: a thing seen
    in a box of its own inside a bigger one is that small box's), when that box covers at
    least ``COVER`` of it."""
    if not len(dets) or not live.eligible.any():
        return {}
    boxes = dets.boxes.astype(np.float64)
    usable = (live.class_ids[:, None] == dets.class_ids[None, :]) & high[None, :]
    overlap = np.where(usable, box_iou(live.predicted, boxes), 0.0)
    best = overlap.argmax(axis=1)
    share = inside_share(live.predicted, boxes)[np.arange(len(best)), best]
    held = live.eligible & usable[np.arange(len(best)), best] & (share >= COVER)
    groups = {}
    for det in np.unique(best[held]):
        rows = np.flatnonzero(held & (best == det)).astype(np.int64)
        rows = _distinct(rows, live)
        if len(rows) >= 2:
            groups[int(det)] = rows
    return groups


def _distinct(rows: IntArray, live: LiveTracks) -> IntArray:
    """``rows`` without the tracks that may be the same thing as an earlier one: alike in
    look (the parts of one textured thing that the detector saw apart for a while look
    alike, two things that meet mostly do not), or, where looks are unknown, in place."""
    kept: list[int] = []
    side = (live.predicted[:, 2:] - live.predicted[:, :2]).max(axis=1)
    for row in rows:
        distance = live.distance[row, kept]
        apart = np.where(
            np.isnan(distance),
            box_iou(live.predicted[[row]], live.predicted[kept])[0] < SAME_PLACE_IOU,
            distance > SAME_LOOK,
        )
        inside = inside_share(live.predicted[[row]], live.predicted[kept])[0]
        around = inside_share(live.predicted[kept], live.predicted[[row]])[:, 0]
        apart &= np.maximum(inside, around) < NESTED
        speed = np.linalg.norm(live.velocity[kept] - live.velocity[row], axis=1)
        apart &= speed >= APART_SPEED * np.maximum(side[kept], side[row])
        if apart.all():
            kept.append(int(row))
    return np.asarray(kept, dtype=np.int64)


def split_merged(live: LiveTracks, dets: Detections, looks: F64, high_thresh: float) -> Split:
    """``dets`` with every region holding two or more eligible tracks replaced by one box per
    track (see the module docstring); the split rows' looks are unknown (zeros)."""
    groups = holders(live, dets, dets.scores >= high_thresh)
    if not groups:
        return Split(dets, looks, np.zeros(len(dets), dtype=bool))
    keep = np.setdiff1d(np.arange(len(dets)), list(groups))
    parts, part_looks, flags = [dets.select(keep)], [looks[keep]], [np.zeros(len(keep), bool)]
    for det, rows in groups.items():
        region = dets.boxes[det].astype(np.float64)
        boxes = np.stack([moved_inside(live.predicted[r], region) for r in rows])
        one = dets.select(np.full(len(rows), det, dtype=np.int64))
        parts.append(replace(one, boxes=boxes.astype(np.float32)))
        part_looks.append(np.zeros((len(rows), looks.shape[1])))
        flags.append(np.ones(len(rows), dtype=bool))
    return Split(Detections.concatenate(parts), np.concatenate(part_looks), np.concatenate(flags))
