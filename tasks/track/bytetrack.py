"""The tracker of the track stage: follow each detected object across sampled frames, one id.

A ByteTrack-style tracker (CPU, numpy + scipy). Per sampled frame:

1. Drop tracks that are over: a confirmed track unseen for more than ``max_lost_s`` SECONDS
   (sampling rates vary, so frames are no clock), or for more than ``exit_lost_s`` when it was
   last seen at the frame's edge (it left the picture); a tentative track that missed more than one
   sampled frame (read from gaps in ``frame_index``, so frames without rows need not be fed).
2. Predict every track's box with a constant-velocity Kalman filter (``tasks.track.kalman``),
   and split each box that holds the predictions of two or more live tracks into one box per
   track (``tasks.track.merges``: things that cross or meet keep their identities).
3. Match in four Hungarian passes, each class-aware (a box only joins a track of its class):

   a. high-score boxes vs confirmed tracks (tracked and lost), at their PREDICTED boxes;
   b. high-score boxes left over vs confirmed tracks left over, at their LAST SEEN boxes;
   c. low-score boxes vs confirmed tracks matched in the previous frame and not yet now
      (ByteTrack's rescue of occluded, low-confidence boxes; lost tracks are left out because
      a weak box far from a live track is too often noise);
   d. high-score boxes left over vs tentative tracks.

4. Unmatched high-score boxes start tentative tracks, confirmed after ``min_hits`` hits (one
   missed sampled frame in between is forgiven: motion detectors drop frames), or at once on
   frame 0 (an object already there when the video starts had no chance to be seen earlier).

The gate (documented here because it decides ids). A track and a box match when:

* their IoU is ``>= match_iou`` (default 0.15: motion detectors give boxes that jitter and
  breathe, so the usual 0.3 loses real matches); or else
* their centres are closer than ``reach`` times the larger box side (and at least 2% of the
  frame, for boxes of a few pixels whose jitter is their size). ``reach`` grows with the time
  the track has been unseen, 0.5 + 1.5 per second, capped at 1.5 sides: at 5 fps that is 0.8
  sides per frame, at 2 fps 1.25, after one missed frame 1.1. This fallback scores at most
  ``match_iou / 2``, below any IoU match, so it only decides where IoU cannot: small boxes,
  boxes that grow or shrink a lot, objects that turned while a frame was missed.

Why two places per track (predicted in pass a, last seen in pass b): the Kalman filter is tuned
smooth (velocity averaged over many samples), because velocity is what tells two crossing
objects apart. A smooth filter overshoots when an object stops, turns or starts, and pass b
catches exactly those: the object is near where it was last seen.

Appearance (issue 30). When each box comes with a LOOK (a colour histogram,
``tasks.track.appearance``), every track keeps a model of its clean looks, and each pass scales
a pair's affinity by ``appearance.look_factor(distance)`` (Bhattacharyya distance 0..1, where
both are known): 1 for the same colours, down to ``appearance.LOOK_FLOOR`` squared for none in
common.
Nothing is refused on looks alone (a light switched on changes them), but where two tracks can
reach the same boxes, as when objects cross or one comes out from behind another, each box goes
to the track it looks like. Looks of boxes that overlap another box of their frame are not
compared (a box holding two things looks like neither) and do not teach the model.

Stationary objects: with detections at one place the Kalman velocity settles at ~0 and the
prediction stays on the box. When detections vanish the track is kept for ``max_lost_s``, its
size stops changing, and it is resumed by pass a or b if a box comes back near its last place.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import Flag, auto
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.track import appearance, kalman, merges
from tasks.track.association import Pairs, assign_pairs, box_affinity, no_pairs

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# Centre fallback of the gate, in larger box sides: reach = min(0.5 + 1.5 * unseen_s, 1.5).
_CENTRE_REACH = 1.0
_REACH_PER_S = 2.5
_REACH_MAX = 2.5
_TENTATIVE_MISSES = 1  # sampled frames a tentative track may miss and still be confirmed
_TIME_EPS = 1e-3  # t_s is float32: a 3 s gap must not read as 3.0000002 s


class _Place(Flag):
    """Where a track is looked for: its predicted box, its last seen box, or both."""

    PREDICTED = auto()
    LAST_SEEN = auto()
    EITHER = PREDICTED | LAST_SEEN


@dataclass(frozen=True)
class TrackerConfig:
    """Knobs of the tracker.

    Attributes:
        high_thresh: boxes scoring at least this start tracks and take part in the first pass.
        low_thresh: boxes below this are ignored; in between they may only extend a track.
        match_iou: IoU gate of every association pass.
        min_hits: consecutive sampled frames a new track needs before it is confirmed.
        max_lost_s: seconds a confirmed track survives without a matching box.
        min_track_s: confirmed tracks spanning less time than this are dropped at the end.
        exit_lost_s: a confirmed track last seen touching the frame's edge (within
            ``edge_margin``) is over after this many seconds unseen: it left the picture, and
            whatever comes in at that edge later is something new (a walker leaving on the
            right and a visitor entering there 2.4 s later are two objects, not one).
        edge_margin: how close to the edge (normalised) counts as touching it.
    """

    high_thresh: float = 0.5
    low_thresh: float = 0.1
    match_iou: float = 0.15
    min_hits: int = 2
    max_lost_s: float = 3.0
    min_track_s: float = 0.0
    exit_lost_s: float = 0.6
    edge_margin: float = 0.02

    def __post_init__(self) -> None:
        """Refuse settings under which the passes above make no sense."""
        if not 0.0 <= self.low_thresh <= self.high_thresh <= 1.0:
            raise ValueError("need 0 <= low_thresh <= high_thresh <= 1")
        if not 0.0 < self.match_iou <= 1.0:
            raise ValueError("match_iou must be in (0, 1]")
        if self.min_hits < 1 or self.max_lost_s < 0 or self.min_track_s < 0:
            raise ValueError("need min_hits >= 1, max_lost_s >= 0 and min_track_s >= 0")


@dataclass
class _Tracks:
    """The live tracks as columns (one row per track), so Kalman steps run on all at once."""

    keys: IntArray
    class_ids: IntArray
    mean: F64
    cov: F64
    last_box: F64
    last_t: F64
    last_frame: IntArray
    hits: IntArray
    confirmed: BoolArray
    model: F64  # (T, appearance.BINS) running mean of clean looks; zeros: none yet

    @classmethod
    def start(
        cls, keys: IntArray, dets: Detections, frame_index: int, t_s: float, looks: F64
    ) -> _Tracks:
        """New tentative tracks, one per row of ``dets`` (clean ``looks`` ``(N, BINS)``, zero
        rows where unknown), seen once at ``frame_index``."""
        n = len(dets)
        mean, cov = kalman.initiate(kalman.measure_boxes(dets.boxes))
        return cls(
            keys=keys,
            class_ids=dets.class_ids.copy(),
            mean=mean,
            cov=cov,
            last_box=dets.boxes.astype(np.float64),
            last_t=np.full(n, t_s, dtype=np.float64),
            last_frame=np.full(n, frame_index, dtype=np.int64),
            hits=np.ones(n, dtype=np.int64),
            confirmed=np.zeros(n, dtype=np.bool_),
            model=looks.astype(np.float64).copy(),
        )

    def __len__(self) -> int:
        return len(self.keys)

    def keep(self, mask: BoolArray) -> None:
        """Drop the tracks where ``mask`` is False."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name)[mask])

    def extend(self, other: _Tracks) -> None:
        """Append ``other``'s tracks."""
        for f in fields(self):
            setattr(self, f.name, np.concatenate([getattr(self, f.name), getattr(other, f.name)]))


def _no_tracks() -> _Tracks:
    return _Tracks.start(
        np.zeros(0, dtype=np.int64), Detections.empty(), 0, 0.0, appearance.no_looks(0)
    )


class FrameTracks(NamedTuple):
    """One frame as tracked: its boxes, each one's track key, and which boxes are ESTIMATED
    (a track's share of a merged region, not a box the detector gave)."""

    dets: Detections
    keys: IntArray
    estimated: BoolArray


class Tracker:
    """The stateful per-frame engine: feed sampled frames in order, get a track id per box.

    Every track gets a private key when it starts (``assign``); it gets its public id, 1, 2,
    3 ... in order of confirmation, only once confirmed (``update``), so a flicker never uses up
    an id. ``track_detections`` uses the keys to give a confirmed track its tentative rows too.
    """

    def __init__(self, cfg: TrackerConfig = TrackerConfig()) -> None:
        self.cfg = cfg
        self._tracks = _no_tracks()
        self._public = np.zeros(0, dtype=np.int64)  # public id per key, -1 until confirmed
        self._next_public = 1
        self._frame: int | None = None
        self._t = 0.0
        self._looks = appearance.no_looks(0)  # the current frame's clean looks, one row per box

    def update(
        self, frame_index: int, t_s: float, dets: Detections, looks: F64 | None = None
    ) -> IntArray:
        """Track one sampled frame; return the track id per row of ``dets`` (-1: none yet).

        ``looks`` ``(N, appearance.BINS)``: each box's colour histogram (zeros: unknown), or
        None to track by place alone.

        Raises:
            ValueError: frames out of order (``frame_index`` must increase, ``t_s`` not drop).
        """
        return self.confirmed_ids(self.assign(frame_index, t_s, dets, looks).keys)

    def assign(
        self, frame_index: int, t_s: float, dets: Detections, looks: F64 | None = None
    ) -> FrameTracks:
        """Like ``update`` but return the frame's boxes as tracked (a merged region split into
        one box per track it holds, ``tasks.track.merges``), each one's track KEY (tentative
        tracks have one too) and which boxes are such estimates."""
        looks = appearance.frame_looks(dets, looks)
        self._advance(frame_index, t_s)
        split = merges.split_merged(self._live(), dets, looks, self.cfg.high_thresh)
        dets, self._looks = split.dets, split.looks
        track_rows, det_rows = self._associate(dets, frame_index)
        self._correct(track_rows, dets.select(det_rows), frame_index, t_s)
        self._learn(track_rows, dets.boxes[det_rows], self._looks[det_rows])
        keys = np.full(len(dets), -1, dtype=np.int64)
        keys[det_rows] = self._tracks.keys[track_rows]
        fresh = np.setdiff1d(np.flatnonzero(dets.scores >= self.cfg.high_thresh), det_rows)
        keys[fresh] = self._start(dets.select(fresh), frame_index, t_s, self._looks[fresh])
        return FrameTracks(dets, keys, split.split)

    def _live(self) -> merges.LiveTracks:
        """The live tracks as the merged-region split sees them (after ``_advance``)."""
        tracks = self._tracks
        recent = self._t - tracks.last_t <= merges.RECENT_S + _TIME_EPS
        return merges.LiveTracks(
            predicted=kalman.boxes_of(tracks.mean),
            class_ids=tracks.class_ids,
            eligible=tracks.confirmed & recent & (tracks.hits >= merges.MIN_HITS),
            distance=appearance.look_distance(tracks.model, tracks.model),
            velocity=tracks.mean[:, 4:6],
        )

    def confirmed_ids(self, keys: IntArray) -> IntArray:
        """Public id of the track behind each key, -1 for no key or a track never confirmed."""
        keys = np.asarray(keys, dtype=np.int64)
        ids = self._public[np.clip(keys, 0, None)] if len(self._public) else keys
        return np.where(keys >= 0, ids, -1).astype(np.int64)

    def _advance(self, frame_index: int, t_s: float) -> None:
        """Check frame order, drop tracks that are over, predict the rest to ``t_s``."""
        if self._frame is not None and (frame_index <= self._frame or t_s < self._t):
            raise ValueError(
                f"frames must come in order: frame {frame_index} at {t_s:.3f} s after "
                f"frame {self._frame} at {self._t:.3f} s"
            )
        dt = 0.0 if self._frame is None else t_s - self._t
        self._frame, self._t = frame_index, t_s
        tracks = self._tracks
        missed = tracks.last_frame < frame_index - 1 - _TENTATIVE_MISSES
        unseen = t_s - tracks.last_t
        expired = unseen > self.cfg.max_lost_s + _TIME_EPS
        exited = at_edge(tracks.last_box, self.cfg.edge_margin) & (
            unseen > self.cfg.exit_lost_s + _TIME_EPS
        )
        tracks.keep(np.where(tracks.confirmed, ~(expired | exited), ~missed))
        lost = tracks.last_frame < frame_index - 1
        tracks.mean, tracks.cov = kalman.predict(
            kalman.stop_resizing(tracks.mean, lost), tracks.cov, dt
        )

    def _associate(self, dets: Detections, frame_index: int) -> Pairs:
        """Passes a-d of the module docstring; return matched (track row, det row) pairs."""
        tracks, cfg = self._tracks, self.cfg
        high = np.flatnonzero(dets.scores >= cfg.high_thresh)
        low = np.flatnonzero((dets.scores >= cfg.low_thresh) & (dets.scores < cfg.high_thresh))
        confirmed = tracks.confirmed.copy()
        tracked = confirmed & (tracks.last_frame == frame_index - 1)
        pairs = [self._match(np.flatnonzero(confirmed), high, dets, _Place.PREDICTED)]
        confirmed[pairs[-1][0]] = tracked[pairs[-1][0]] = False
        high = np.setdiff1d(high, pairs[-1][1])
        pairs.append(self._match(np.flatnonzero(confirmed), high, dets, _Place.LAST_SEEN))
        tracked[pairs[-1][0]] = False
        high = np.setdiff1d(high, pairs[-1][1])
        pairs.append(self._match(np.flatnonzero(tracked), low, dets, _Place.EITHER))
        pairs.append(self._match(np.flatnonzero(~tracks.confirmed), high, dets, _Place.EITHER))
        return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])

    def _match(
        self, track_rows: IntArray, det_rows: IntArray, dets: Detections, place: _Place
    ) -> Pairs:
        """One Hungarian pass of ``track_rows`` against ``det_rows``."""
        if not len(track_rows) or not len(det_rows):
            return no_pairs()
        affinity = self._affinity(track_rows, dets.select(det_rows), det_rows, place)
        t, d = assign_pairs(affinity)
        return track_rows[t], det_rows[d]

    def _affinity(
        self, track_rows: IntArray, dets: Detections, det_rows: IntArray, place: _Place
    ) -> F64:
        """``(T, D)`` class-aware affinity of the tracks' predicted or last seen boxes (or both)."""
        tracks, gate = self._tracks, self.cfg.match_iou
        boxes = dets.boxes.astype(np.float64)
        unseen_s = self._t - tracks.last_t[track_rows]
        reach = np.minimum(_CENTRE_REACH + _REACH_PER_S * unseen_s, _REACH_MAX)
        affinity = np.zeros((len(track_rows), len(dets)))
        if place & _Place.PREDICTED:
            predicted = kalman.boxes_of(tracks.mean[track_rows])
            affinity = box_affinity(predicted, boxes, gate, reach)
        if place & _Place.LAST_SEEN:
            at_last = box_affinity(tracks.last_box[track_rows], boxes, gate, reach)
            affinity = np.maximum(affinity, at_last)
        same_class = tracks.class_ids[track_rows][:, None] == dets.class_ids[None, :]
        affinity = np.where(same_class, affinity, 0.0)
        distance = appearance.look_distance(tracks.model[track_rows], self._looks[det_rows])
        return np.where(np.isnan(distance), affinity, affinity * appearance.look_factor(distance))

    def _correct(
        self, track_rows: IntArray, dets: Detections, frame_index: int, t_s: float
    ) -> None:
        """Fold matched boxes into their tracks and confirm those with enough hits."""
        tracks = self._tracks
        tracks.mean[track_rows], tracks.cov[track_rows] = kalman.correct(
            tracks.mean[track_rows], tracks.cov[track_rows], kalman.measure_boxes(dets.boxes)
        )
        tracks.last_box[track_rows] = dets.boxes
        tracks.last_t[track_rows] = t_s
        tracks.last_frame[track_rows] = frame_index
        tracks.hits[track_rows] += 1
        ready = ~tracks.confirmed[track_rows] & (tracks.hits[track_rows] >= self.cfg.min_hits)
        self._confirm(track_rows[ready])

    def _learn(self, track_rows: IntArray, boxes: F32, looks: F64) -> None:
        """Fold each matched track's look into its model when it is clean: known (a non-zero
        row of ``looks``) and its box ``(M, 4)`` clear of every other track's predicted and last
        seen box (see ``appearance.clean_of_others``)."""
        tracks = self._tracks
        places = [kalman.boxes_of(tracks.mean), tracks.last_box]
        known = (looks.sum(axis=1) > 0) & appearance.clean_of_others(boxes, track_rows, places)
        rows = track_rows[known]
        self._tracks.model[rows] = appearance.updated_models(self._tracks.model[rows], looks[known])

    def _start(self, dets: Detections, frame_index: int, t_s: float, looks: F64) -> IntArray:
        """Start a track per row of ``dets`` (with their clean ``looks``); return their keys."""
        first_key = len(self._public)
        keys = np.arange(first_key, first_key + len(dets), dtype=np.int64)
        self._public = np.concatenate([self._public, np.full(len(dets), -1, dtype=np.int64)])
        at_once = frame_index == 0 or self.cfg.min_hits <= 1
        self._tracks.extend(_Tracks.start(keys, dets, frame_index, t_s, looks))
        if at_once:
            self._confirm(np.arange(len(self._tracks) - len(dets), len(self._tracks)))
        return keys

    def _confirm(self, track_rows: IntArray) -> None:
        """Mark tracks confirmed and hand out their public ids."""
        self._tracks.confirmed[track_rows] = True
        keys = self._tracks.keys[track_rows]
        self._public[keys] = np.arange(self._next_public, self._next_public + len(keys))
        self._next_public += len(keys)


def at_edge(boxes: F64, margin: float) -> BoolArray:
    """Which normalised ``(N, 4)`` boxes touch the frame's edge."""
    if not len(boxes):
        return np.zeros(0, dtype=bool)
    low = (boxes[:, 0] <= margin) | (boxes[:, 1] <= margin)
    high = (boxes[:, 2] >= 1.0 - margin) | (boxes[:, 3] >= 1.0 - margin)
    return np.asarray(low | high, dtype=bool)
