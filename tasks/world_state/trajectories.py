"""One object's rows in time order, and what they show: where it was still, which zone it
was in, when it was close to another. The world state reads tracks through these."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.geometry import ZoneSpec, box_centres, box_gap, points_in_polygon

Box = tuple[float, float, float, float]
FramePick = tuple[int, float, Box | None]  # sample index, time, box to draw (None: whole frame)


@dataclass(frozen=True)
class Track:
    """The rows of one track, in time order."""

    t: npt.NDArray[np.float32]
    boxes: npt.NDArray[np.float32]
    scores: npt.NDArray[np.float32]
    samples: npt.NDArray[np.int64]
    class_name: str
    track_id: int = -1
    text: str | None = None  # what was read, for tracks of class "text"

    @property
    def centres(self) -> npt.NDArray[np.float32]:
        return box_centres(self.boxes)

    def pick(self, i: int) -> FramePick:
        box = self.boxes[i]
        return (
            int(self.samples[i]),
            float(self.t[i]),
            (float(box[0]), float(box[1]), float(box[2]), float(box[3])),
        )


def split_tracks(tracks: Detections) -> list[Track]:
    """One ``Track`` per track id, ordered by first appearance."""
    result = []
    for track_id in np.unique(tracks.track_ids):
        rows = tracks.select(tracks.track_ids == track_id)
        order = np.argsort(rows.t_s, kind="stable")
        classes = rows.class_ids[order]
        majority = int(np.bincount(classes).argmax())
        texts = [t for t in rows.texts if t]
        result.append(
            Track(
                rows.t_s[order],
                rows.boxes[order],
                rows.scores[order],
                rows.frame_index[order],
                rows.class_names[majority],
                int(track_id),
                max(set(texts), key=texts.count) if texts else None,
            )
        )
    return sorted(result, key=lambda tr: float(tr.t[0]))


def zone_membership(track: Track, zone: ZoneSpec) -> npt.NDArray[np.bool_]:
    """Inside-or-not per row, smoothed over 3 rows so a jittery box does not flicker."""
    inside = points_in_polygon(track.centres, zone.polygon).astype(np.int8)
    if len(inside) < 3:
        return inside.astype(bool)
    padded = np.concatenate([inside[:1], inside, inside[-1:]])
    smoothed: npt.NDArray[np.bool_] = (padded[:-2] + padded[1:-1] + padded[2:]) >= 2
    return smoothed


def true_runs(mask: npt.NDArray[np.bool_]) -> list[tuple[int, int]]:
    """Runs of True as (first row, last row)."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1, strict=True))


def dwell_runs(track: Track, radius: float, min_s: float) -> list[tuple[int, int]]:
    """Maximal runs of rows whose centres stay within ``radius`` of the run's first centre."""
    centres, runs, start = track.centres, [], 0
    while start < len(centres):
        end = start
        while end + 1 < len(centres) and np.hypot(*(centres[end + 1] - centres[start])) <= radius:
            end += 1
        if float(track.t[end] - track.t[start]) >= min_s:
            runs.append((start, end))
            start = end + 1
        else:
            start += 1
    return runs


def stretches(times: list[float], max_gap: float) -> list[tuple[float, float]]:
    """Consecutive times split where two neighbours are more than ``max_gap`` apart."""
    stretches: list[tuple[float, float]] = []
    for t in times:
        if stretches and t - stretches[-1][1] <= max_gap:
            stretches[-1] = (stretches[-1][0], t)
        else:
            stretches.append((t, t))
    return stretches


def near_times(a: Track, b: Track, gap: float) -> list[float]:
    _, ia, ib = np.intersect1d(a.samples, b.samples, return_indices=True)
    return [
        float(a.t[x]) for x, y in zip(ia, ib, strict=True) if box_gap(a.boxes[x], b.boxes[y]) <= gap
    ]
