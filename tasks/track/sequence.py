"""How the tracker is fed and what it hands back: frames in time order, short tracks dropped,
ids numbered in order of first appearance (``tasks.track.bytetrack.track_detections``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections

F64 = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
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
