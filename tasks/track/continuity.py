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
import numpy.typing as npt

from tasks.detections import Detections
from tasks.geometry import box_iou

# The first box after a cut continues a track when it overlaps, by this IoU, the track's last
# box before the cut or that box moved on by the track's last step (motion boxes breathe, and
# a restarted background gives a frame without boxes, so the thing has moved a step or two).
CONTINUE_IOU = 0.3


def split_at_cuts(tracks: Detections, cuts_s: Sequence[float], min_track_s: float) -> Detections:
    """``tracks`` with every track that does not carry on across a cut split there: the rows
    kept by ``ids_across_cuts``, in the same order, with its ids."""
    ids = ids_across_cuts(tracks, cuts_s, min_track_s)
    return tracks.select(ids >= 0).with_track_ids(ids[ids >= 0])


def ids_across_cuts(
    tracks: Detections, cuts_s: Sequence[float], min_track_s: float
) -> npt.NDArray[np.int64]:
    """Each row's track id once every track that does not carry on across a cut is split there.

    Args:
        tracks: tracked rows (``track_ids`` >= 1), any order.
        cuts_s: times of the first sampled frame after each cut.
        min_track_s: a part shorter than this after splitting gets -1 (as the tracker drops
            short tracks: a fragment is no object).

    Returns:
        ``(N,)`` ids 1, 2, 3 ... in order of first appearance (the rows' own ids, untouched,
        without cuts), -1 for rows of parts too short to keep.
    """
    if not len(tracks) or not len(cuts_s):
        return tracks.track_ids.copy()
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


def _carries_on(
    tracks: Detections, before: npt.NDArray[np.int64], after: npt.NDArray[np.int64]
) -> bool:
    """Whether the first box of ``after`` continues the last of ``before`` (rows of one track)."""
    order = before[np.argsort(tracks.t_s[before], kind="stable")]
    last = tracks.boxes[order[-1]].astype(np.float64)
    step = last - tracks.boxes[order[-2]] if len(order) > 1 else np.zeros(4)
    first = tracks.boxes[after[np.argmin(tracks.t_s[after])]]
    places = np.stack([last, last + step, last + 2 * step])
    return bool(box_iou(places, first).max() >= CONTINUE_IOU)


def _renumbered(
    tracks: Detections, ids: npt.NDArray[np.int64], min_track_s: float
) -> npt.NDArray[np.int64]:
    """``ids`` renumbered 1, 2, 3 ... by first appearance; -1 for parts under ``min_track_s``."""
    first_t: dict[int, float] = {}
    for track in np.unique(ids):
        times = tracks.t_s[ids == track]
        if float(times.max() - times.min()) >= min_track_s - 1e-3:
            first_t[int(track)] = float(times.min())
    kept = sorted(first_t, key=lambda t: (first_t[t], t))
    number = {t: n for n, t in enumerate(kept, 1)}
    return np.array([number.get(int(t), -1) for t in ids], dtype=np.int64)
