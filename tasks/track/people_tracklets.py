"""Pass 1 of ``tasks.track.people``: TRACKLETS, runs of boxes surely of one person.

Per sampled frame, in time order, each tracklet's box is predicted and the frame's boxes are
matched to the predictions (Hungarian on IoU, ByteTrack's two tiers: confident boxes first,
weak ones to the tracklets left; only a confident box starts a tracklet). Four rules make the
tracklets SURE, so that linking (pass 2) never has to undo a jump inside one:

* PREDICTION on a straight line fitted to the last ``SIDE_ROWS`` boxes: at 5 fps a walker
  moves about half a box width a frame, as much as a box jitters, so a place and a velocity
  from the last box or two are mostly jitter; a walker's velocity changes over seconds.
* LOOKS GATE a match as they gate a link: a box whose clean look (``appearance.unoccluded_rows``:
  no one standing in front of it) is further than ``max_look_distance`` from the tracklet's
  recent clean looks is not that person, whatever its place says. An unknown look (a box partly
  hidden by another) refuses nothing.
* CONTESTS. Where two tracklets' predictions overlap as much as a match (``match_iou``) and
  both could take one box, their places cannot tell who is who: both end there, and linking,
  which sees both sides and the colours, decides. Tracklets predicted apart keep the
  assignment's verdict even when a box lies between them (ending both there, as pass 1 once
  did, cut tracklets at every near pass and left linking to guess at each cut); a pair the
  looks tell apart has no contest, as the box is near only the one it looks like.
* SHARED boxes. Where the only box two tracklets predicted apart could continue is the same one
  (one person behind another, or two merged into one box), the assignment would give it to one
  of them, though it is as much the other's or a mixture of both: neither takes it, and the
  frame is a miss for both, bridged by filling (pass 3) or, if longer, by linking.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.geometry import box_iou
from tasks.track.appearance import BINS, look_distance
from tasks.track.association import assign_pairs

F64 = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

TIME_EPS = 1e-3  # t_s is float32: a 0.6 s gap must not read as 0.6000001 s
SIDE_ROWS = 5  # rows that summarise a tracklet's end or start: ~1 s at 5 fps, a stride or two


@dataclass(frozen=True)
class PeopleConfig:
    """Settings of ``track_people``. Each default follows from a principle, not from a video
    (figures in box heights take a person to be ~1.7 m tall)."""

    high_score: float = 0.5  # may start a tracklet: ByteTrack's; more likely a person than not
    # A track is kept only if one of its boxes scored this: ByteTrack starts a track only from a
    # box scoring its threshold + 0.1 (``det_thresh``). A sign or a texture the network half
    # believes in scores about 0.5 for as long as it is there; a person is seen clearly at times.
    track_score: float = 0.6
    low_score: float = 0.3  # may continue one: the person detector's floor (``min_score``)
    match_iou: float = 0.3  # SORT's default: two equal boxes about half a width apart
    # Longest a tracklet is unseen and still continued (two missed frames at 5 fps): past it,
    # IoU with a drifting prediction means little, and linking (speed, colours) takes over.
    max_miss_s: float = 0.6
    # Longest gap a link bridges: ~4 m at a walk, a parked car's length. Beyond it the speed
    # gate allows most of the picture and colours alone would decide: re-identification's job.
    max_gap_s: float = 3.0
    # Longest gap filled with estimates: under 3 m at a walk, passing behind a person or a
    # pillar, where a straight line is a fair claim; a longer guess would pose as evidence.
    max_fill_s: float = 2.0
    # Fastest plausible walk, in box heights a second: walking is ~1.4 m/s (0.8 heights/s);
    # 1.5 allows a brisk walk or a jog.
    max_speed: float = 1.5
    # Most two linked boxes' heights may differ by, as a factor: seconds of walking towards
    # the camera or a bend stay within it; an adult for a child does not.
    max_size_ratio: float = 1.5
    # Most two known looks' Bhattacharyya distance (histograms ~88 % shared). Looser than
    # re-identification's 0.2 (``tasks.track.identities``), which has colours alone: here
    # motion and time narrow the candidates first, and a whole box mixes in the background.
    # Gates a pass-1 match as it gates a link: one person, one limit on how unlike they look.
    max_look_distance: float = 0.35
    min_track_s: float = 1.0  # first to last seen box: the track stage's ``MIN_TRACK_S``
    min_rows: int = 3  # fewest seen boxes: two give a velocity, a third confirms it

    def __post_init__(self) -> None:
        if not 0 <= self.low_score <= self.high_score <= self.track_score <= 1:
            raise ValueError("need 0 <= low_score <= high_score <= track_score <= 1")
        if not 0 < self.match_iou <= 1 or self.max_size_ratio <= 1 or self.max_speed <= 0:
            raise ValueError("need 0 < match_iou <= 1, max_size_ratio > 1, max_speed > 0")


@dataclass(eq=False)
class Tracklet:
    """Rows (indices into the detections) surely of one person, and their times."""

    rows: list[int] = field(default_factory=list)
    times: list[float] = field(default_factory=list)


def frame_groups(dets: Detections) -> dict[int, IntArray]:
    """``frame_index`` -> the rows of that frame, for rows sorted by ``frame_index``."""
    runs = np.split(np.arange(len(dets)), np.flatnonzero(np.diff(dets.frame_index)) + 1)
    return {int(dets.frame_index[rows[0]]): rows for rows in runs if len(rows)}


def build_tracklets(dets: Detections, clean: F64, times: F64, cfg: PeopleConfig) -> list[Tracklet]:
    """Pass 1: tracklets over every sampled frame in time order (rows must be sorted by frame,
    as ``people._canonical`` leaves them; ``clean`` ``(N, BINS)``: their clean looks, zeros
    where unknown)."""
    by_frame, no_rows = frame_groups(dets), np.zeros(0, dtype=np.int64)
    active: list[Tracklet] = []
    done: list[Tracklet] = []
    for frame, t in enumerate(times.tolist()):
        done += [tr for tr in active if t - tr.times[-1] > cfg.max_miss_s + TIME_EPS]
        active = [tr for tr in active if t - tr.times[-1] <= cfg.max_miss_s + TIME_EPS]
        active, ended = step_tracklets(active, by_frame.get(frame, no_rows), t, dets, clean, cfg)
        done += ended
    return done + active


def step_tracklets(
    active: list[Tracklet],
    rows: IntArray,
    t: float,
    dets: Detections,
    clean: F64,
    cfg: PeopleConfig,
) -> tuple[list[Tracklet], list[Tracklet]]:
    """One frame's rows matched to the ``active`` tracklets: returns the tracklets active after
    it (new ones included) and those ended at an ambiguity."""
    rows = rows[dets.scores[rows] >= cfg.low_score]
    preds = np.array([predict_box(tr, dets, t, cfg.max_speed) for tr in active]).reshape(-1, 4)
    iou = box_iou(preds, dets.boxes[rows])
    models = np.array([side_look(tr, clean, True) for tr in active]).reshape(-1, BINS)
    unlike = look_distance(models, clean[rows]) > cfg.max_look_distance  # NaN: unknown, not
    near = (iou >= cfg.match_iou) & ~unlike  # (tracklets, rows)
    torn, contested = contests(near, box_iou(preds, preds) >= cfg.match_iou)
    shared = shared_boxes(near[~torn])
    live = [tr for tr, cut in zip(active, torn, strict=True) if not cut]
    iou = np.where(near & ~contested[None], iou, 0.0)[~torn] * ~shared[None]
    high = dets.scores[rows] >= cfg.high_score
    taken, free = np.zeros(len(rows), dtype=bool), np.ones(len(live), dtype=bool)
    for tier in (high, ~high):  # ByteTrack: confident boxes first, weak ones to the rest
        picks, cols = assign_pairs(np.where(free[:, None] & tier[None], iou, 0.0))
        for pick, col in zip(picks, cols, strict=True):
            live[pick].rows.append(int(rows[col]))
            live[pick].times.append(t)
        free[picks], taken[cols] = False, True
    born = [Tracklet([int(r)], [t]) for r in rows[high & ~taken & ~shared]]
    return live + born, [tr for tr, cut in zip(active, torn, strict=True) if cut]


def contests(near: BoolArray, same_place: BoolArray) -> tuple[BoolArray, BoolArray]:
    """Which tracklets ``(T,)`` end and which boxes ``(B,)`` no tracklet takes, given which
    boxes each tracklet could continue ``near`` ``(T, B)`` and which tracklets' predictions
    overlap as much as a match (``same_place`` ``(T, T)``). A box is CONTESTED when two
    tracklets at the same place could both continue it: their places cannot tell who is who,
    so both end there. Two tracklets predicted apart keep their places' verdict (the assignment)
    even when one box lies between them."""
    pairs = near[:, None, :] & near[None, :, :] & same_place[:, :, None]  # (T, T, B)
    pairs[np.arange(len(near)), np.arange(len(near))] = False
    return (
        np.asarray(pairs.any(axis=(1, 2)), dtype=bool),
        np.asarray(pairs.any(axis=(0, 1)), dtype=bool),
    )


def shared_boxes(near: BoolArray) -> BoolArray:
    """Which boxes ``(B,)`` are SHARED: the only box two or more tracklets could continue
    (``near`` ``(T, B)``). Where one person hides another the detector sees one box for two; it
    is either one of them or a mixture of both, and which is not known, so no tracklet takes it
    and none starts on it (it is someone already followed): the hidden one, and the one in
    front too, miss the frame, and linking or filling bridges the gap."""
    only = near & (near.sum(axis=1) == 1)[:, None]
    return np.asarray(only.sum(axis=0) >= 2, dtype=bool)


def predict_box(tracklet: Tracklet, dets: Detections, t: float, max_speed: float) -> F64:
    """``(4,)``: the tracklet's box at ``t`` on a straight line fitted to its last ``SIDE_ROWS``
    boxes (``fitted_velocity``). A walker's velocity changes over seconds; the last box, or the
    last two, carry each box's jitter in full into the prediction."""
    times = np.array(tracklet.times[-SIDE_ROWS:])
    boxes = dets.boxes[tracklet.rows[-SIDE_ROWS:]].astype(np.float64)
    velocity = fitted_velocity(times, boxes)
    height = float(np.median(boxes[:, 3] - boxes[:, 1]))
    velocity *= speed_cap((velocity[:2] + velocity[2:]) / 2, height, max_speed)
    return np.asarray(boxes.mean(axis=0) + velocity * (t - times.mean()), dtype=np.float64)


def fitted_velocity(times: F64, values: F64) -> F64:
    """The slope per second ``(K,)`` of a least-squares line through ``values`` ``(R, K)`` at
    ``times`` ``(R,)``; zeros from a single time."""
    offsets = times - times.mean()
    spread = float((offsets**2).sum())
    if spread <= 0:
        return np.zeros(values.shape[1])
    return np.asarray((offsets[:, None] * values).sum(axis=0) / spread, dtype=np.float64)


def speed_cap(velocity: F64, height: float, max_speed: float) -> float:
    """What scales a centre ``velocity`` ``(2,)`` down to ``max_speed`` box heights a second
    (1 when slower): faster than a walk is the detector's jitter, not the person."""
    return min(1.0, max_speed * height / max(float(np.hypot(*velocity)), 1e-12))


def side_look(tracklet: Tracklet, clean: F64, end: bool) -> F64:
    """``(BINS,)``: the mean of the tracklet's ``SIDE_ROWS`` clean looks nearest its end
    (``end``) or start, summing to 1; zeros without any."""
    known = np.array(tracklet.rows)[clean[tracklet.rows].sum(axis=1) > 0]
    near = known[-SIDE_ROWS:] if end else known[:SIDE_ROWS]
    look = clean[near].mean(axis=0) if len(near) else np.zeros(BINS)
    return np.asarray(look / max(float(look.sum()), 1e-12), dtype=np.float64)
