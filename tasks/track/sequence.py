"""Tracking a whole run's boxes: the frames fed to the tracker (``tasks.track.bytetrack``) in
time order, short tracks dropped, ids numbered in order of first appearance."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.track.bytetrack import F64, BoolArray, Tracker, TrackerConfig
from tasks.track.partings import carry_back

IntArray = npt.NDArray[np.int64]
DEFAULT = TrackerConfig()
TIME_EPS = 1e-3  # t_s is float32: a 1 s track must not read as 0.9999998 s

Frame = tuple[int, float, IntArray]  # (frame_index, t_s, rows of dets)


def frames_with_rows(dets: Detections) -> list[Frame]:
    """The frames that have rows, ordered by ``t_s`` (then ``frame_index``)."""
    order = np.lexsort((np.arange(len(dets)), dets.frame_index, dets.t_s)).astype(np.int64)
    changes = (np.diff(dets.frame_index[order]) != 0) | (np.diff(dets.t_s[order]) != 0)
    groups = np.split(order, np.flatnonzero(changes) + 1)
    frames = [(int(dets.frame_index[g[0]]), float(dets.t_s[g[0]]), g) for g in groups if len(g)]
    if len({f for f, _, _ in frames}) != len(frames):
        raise ValueError("rows of one frame_index must share one t_s")
    return frames


def sampled_frames(dets: Detections, frame_times: npt.NDArray[np.float32] | None) -> list[Frame]:
    """Every sampled frame to feed the tracker, in time order.

    Without ``frame_times`` only frames that have rows exist; with it every sampled frame does,
    and its time comes from ``frame_times[frame_index]``.
    """
    found = frames_with_rows(dets)
    if frame_times is None:
        return found
    times = np.asarray(frame_times, dtype=np.float64).reshape(-1)
    if found and not 0 <= int(dets.frame_index.min()) <= int(dets.frame_index.max()) < len(times):
        raise ValueError(f"frame_index must lie in 0..{len(times) - 1} (len(frame_times))")
    rows = {f: g for f, _, g in found}
    empty = np.zeros(0, dtype=np.int64)
    return [(i, float(t), rows.get(i, empty)) for i, t in enumerate(times)]


def drop_short(ids: IntArray, t_s: F64, min_track_s: float) -> IntArray:
    """Set to -1 the ids of tracks spanning less than ``min_track_s`` seconds."""
    if min_track_s <= 0 or not len(ids):
        return ids
    _, group = np.unique(ids, return_inverse=True)
    group = group.reshape(-1)
    first = np.full(group.max() + 1, np.inf)
    last = np.full(group.max() + 1, -np.inf)
    np.minimum.at(first, group, t_s)
    np.maximum.at(last, group, t_s)
    too_short = (last - first)[group] < min_track_s - TIME_EPS
    return np.where(too_short, -1, ids).astype(np.int64)


def number_by_appearance(ids: IntArray) -> IntArray:
    """Renumber ids ``1, 2, 3 ...`` in order of first occurrence in ``ids``."""
    if not len(ids):
        return ids
    _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(1, len(first) + 1)
    return rank[inverse.reshape(-1)]


def track_detections(
    dets: Detections,
    cfg: TrackerConfig = DEFAULT,
    frame_times: npt.NDArray[np.float32] | None = None,
    looks: F64 | None = None,
) -> Detections:
    """Track every row of ``dets`` (all frames, any order) and keep the confirmed tracks' rows
    (``tracked_boxes`` without saying which rows are estimates)."""
    return tracked_boxes(dets, cfg, frame_times, looks)[0]


def tracked_boxes(
    dets: Detections,
    cfg: TrackerConfig = DEFAULT,
    frame_times: npt.NDArray[np.float32] | None = None,
    looks: F64 | None = None,
) -> tuple[Detections, BoolArray]:
    """Track every row of ``dets`` (all frames, any order) and keep the confirmed tracks' rows.

    Args:
        dets: rows of any number of sampled frames; rows of one frame share ``t_s``.
        cfg: tracker settings.
        frame_times: optional time of EVERY sampled frame (index = ``frame_index``). Frames
            without rows are then fed to the tracker too. The result does not depend on it:
            lost time is read from ``t_s`` and missed frames from gaps in ``frame_index``.
        looks: optional ``(N, appearance.BINS)`` colour histogram of every row (zeros where
            unknown, see ``tasks.track.appearance``); without it tracks follow places only.

    Returns:
        The rows of confirmed tracks, including the rows that led to their confirmation, in time
        order, with ``track_ids`` 1, 2, 3 ... in order of first appearance; and which rows are
        ESTIMATED: a merged region that held several tracks is there once per track, with that
        track's share of it (``tasks.track.merges``), where the detector gave one box.

    Raises:
        ValueError: a frame's rows disagree on ``t_s`` or ``frame_index`` lies outside
            ``frame_times``.
    """
    tracker = Tracker(cfg)
    tracked = [
        tracker.assign(f, t, dets.select(rows), None if looks is None else looks[rows])
        for f, t, rows in sampled_frames(dets, frame_times)
    ]
    rows = Detections.concatenate([dets.select(np.zeros(0, np.int64))] + [f.dets for f in tracked])
    keys = np.concatenate([np.zeros(0, dtype=np.int64)] + [f.keys for f in tracked])
    estimated = np.concatenate([np.zeros(0, dtype=bool)] + [f.estimated for f in tracked])
    ids = tracker.confirmed_ids(keys)
    rows, ids, estimated = carry_back(rows, ids, estimated, cfg.edge_margin)
    ids = drop_short(ids, rows.t_s.astype(np.float64), cfg.min_track_s)
    kept = ids >= 0
    return rows.select(kept).with_track_ids(number_by_appearance(ids[kept])), estimated[kept]
