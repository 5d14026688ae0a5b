"""What carries on across a scene cut: a track keeps its identity there only where its thing does.

A scene cut (``frames.refresh_reason = 'scene_change'``, the sample stage's verdict) shows
another place, or the same place in a new look (an infrared filter switching, an exposure
reset, which brightness-matched scene scores do not always tell from a cut). The motion
detector's background restarts at either, so the boxes right after it are new regions of
change, and the tracker links them to the tracks before by place, as it would any frame.
Whether that link is true is decided here, per track and cut, from what the issue asks of
continuity: a thing that keeps its place and its motion across the cut is the same thing; a
track whose first box after the cut is somewhere else took another place's object, and is
ended at the cut (the part after it gets an identity of its own). A cut to another place
therefore ends every object, and an object moving through a new look of the same place stays
one.

This runs on the tracker's output (``tasks.track.bytetrack`` is not told about cuts); a
tracker that ends tracks at cuts itself, keeping those whose predicted box the first box after
the cut overlaps by ``CONTINUE_IOU``, makes it a no-op.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tasks.detections import Detections
from tasks.geometry import box_iou

# The first box after a cut continues a track when it overlaps, by this IoU, the track's last
# box before the cut or that box moved on by the track's last step (motion boxes breathe, and
# a restarted background gives a frame without boxes, so the thing has moved a step or two).
CONTINUE_IOU = 0.3


def split_at_cuts(tracks: Detections, cuts_s: Sequence[float], min_track_s: float) -> Detections:
    """``tracks`` with every track that does not carry on across a cut split there.

    Args:
        tracks: tracked rows (``track_ids`` >= 1), any order.
        cuts_s: times of the first sampled frame after each cut.
        min_track_s: a part shorter than this after splitting is dropped (as the tracker drops
            short tracks: a fragment is no object).

    Returns:
        The rows kept, in the same order, with ``track_ids`` renumbered 1, 2, 3 ... in order of
        first appearance.
    """
    if not len(tracks) or not len(cuts_s):
        return tracks
    ids = tracks.track_ids.copy()
    next_id = int(ids.max()) + 1
    for cut in sorted(cuts_s):
        for track in np.unique(ids):
            rows = np.flatnonzero(ids == track)
            before, after = rows[tracks.t_s[rows] < cut], rows[tracks.t_s[rows] >= cut]
            if len(before) and len(after) and not _carries_on(tracks, before, after):
                ids[after] = next_id
                next_id += 1
    return _renumbered(tracks, ids, min_track_s)


def _carries_on(tracks: Detections, before: np.ndarray, after: np.ndarray) -> bool:
    """Whether the first box of ``after`` continues the last of ``before`` (rows of one track)."""
    order = before[np.argsort(tracks.t_s[before], kind="stable")]
    last = tracks.boxes[order[-1]].astype(np.float64)
    step = last - tracks.boxes[order[-2]] if len(order) > 1 else np.zeros(4)
    first = tracks.boxes[after[np.argmin(tracks.t_s[after])]]
    places = np.stack([last, last + step, last + 2 * step])
    return bool(box_iou(places, first).max() >= CONTINUE_IOU)


def _renumbered(tracks: Detections, ids: np.ndarray, min_track_s: float) -> Detections:
    """Rows of parts spanning at least ``min_track_s``, ids 1, 2, 3 ... by first appearance."""
    keep = np.ones(len(ids), dtype=bool)
    first_t: dict[int, float] = {}
    for track in np.unique(ids):
        rows = ids == track
        span = float(tracks.t_s[rows].max() - tracks.t_s[rows].min())
        keep &= ~rows | (span >= min_track_s - 1e-3)
        first_t[int(track)] = float(tracks.t_s[rows].min())
    kept = [t for t in sorted(first_t, key=lambda t: (first_t[t], t)) if keep[ids == t].any()]
    number = {t: n for n, t in enumerate(kept, 1)}
    new_ids = np.array([number.get(int(t), -1) for t in ids], dtype=np.int64)
    return tracks.select(keep).with_track_ids(new_ids[keep])
