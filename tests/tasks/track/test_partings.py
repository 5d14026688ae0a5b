"""Partings (``tasks.track.partings``): a thing that comes out of a region that held it.

A rendered pair, walking a few pixels apart until one of them stops, is detected and tracked as
the pipeline does and checked against its KNOWN truth; hand-made boxes check what is no parting:
a fragment that moves with its thing, a thing that grows no smaller when another comes out of
it, a thing that comes in at the frame's edge.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from synthetic import MovingObject, SceneSpec, ground_truth, render_frame
from tasks.detect.detectors.motion import MotionDetector
from tasks.detections import Detections
from tasks.geometry import box_iou
from tasks.track.bytetrack import TrackerConfig
from tasks.track.partings import carry_back
from tasks.track.sequence import tracked_boxes
from tasks.track.stage import MIN_TRACK_S

SAMPLE_FPS = 5
WIDE, HIGH = 852, 480


def pair_that_parts() -> SceneSpec:
    """Two boxes walk in from the left 6 px apart (a lower one under an upper one) from 0.5 s;
    at 3 s the lower one stops and the upper one walks on out of the picture."""
    top = MovingObject("top", (230, 200, 20), (90, 80), ((0.5, -50.0, 200.0), (6.5, 900.0, 200.0)))
    x = -50.0 + 950.0 * 2.5 / 6.0
    bottom = MovingObject(
        "bottom", (40, 60, 230), (70, 90), ((0.5, -50.0, 291.0), (3.0, x, 291.0), (8.0, x, 291.0))
    )
    return SceneSpec(WIDE, HIGH, fps=25, duration_s=8.0, noise=2.0, objects=(top, bottom))


def detect(spec: SceneSpec) -> Detections:
    """The motion boxes of ``spec`` sampled at 5 fps and brought to the analysis size (240)."""
    detector, parts = MotionDetector(), []
    for k, index in enumerate(range(0, spec.frame_count, spec.fps // SAMPLE_FPS)):
        small = cv2.resize(render_frame(spec, index), (240, 136), interpolation=cv2.INTER_AREA)
        parts.append(detector.detect_frame(k, index / spec.fps, small))
    return Detections.concatenate(parts)


def test_a_pair_that_parts_is_two_tracks_from_when_they_came_in() -> None:
    spec = pair_that_parts()
    truth = ground_truth(spec)
    tracks, estimated = tracked_boxes(detect(spec), TrackerConfig(min_track_s=MIN_TRACK_S))
    assert len(np.unique(tracks.track_ids)) == 2
    scale = np.array([WIDE, HIGH, WIDE, HIGH])
    for obj in truth.objects:
        on = []
        for track in np.unique(tracks.track_ids):
            rows = np.flatnonzero(tracks.track_ids == track)
            frames = [round(float(t) * spec.fps) for t in tracks.t_s[rows]]
            truth_boxes = np.array([obj.boxes.get(f, (0, 0, 0, 0)) for f in frames]) / scale
            ious = np.diag(box_iou(tracks.boxes[rows], truth_boxes))
            on.append((float(np.mean(ious >= 0.3)), float(tracks.t_s[rows].min())))
        share, first = max(on)
        assert share >= 0.8, (obj.name, on)
        assert abs(first - obj.first_seen_s) <= 0.6, (obj.name, on)
    assert estimated.any()


def rows_of(paths: dict[int, list[list[float]]]) -> tuple[Detections, np.ndarray]:
    """Tracked rows of hand-made ``paths``: track id -> box per sampled frame (None: unseen)."""
    boxes, frames, ids = [], [], []
    for track, path in paths.items():
        for frame, box in enumerate(path):
            if box is not None:
                boxes.append(box)
                frames.append(frame)
                ids.append(track)
    frame_index = np.array(frames, dtype=np.int64)
    n = len(boxes)
    dets = Detections(
        np.array(boxes, dtype=np.float32),
        np.full(n, 0.9, dtype=np.float32),
        np.zeros(n, dtype=np.int64),
        frame_index,
        (frame_index / SAMPLE_FPS).astype(np.float32),
    )
    return dets, np.array(ids, dtype=np.int64)


def walk(x0: float, dx: float, frames: range, y: float = 0.4, w: float = 0.1, h: float = 0.2):
    return [[x0 + dx * f, y, x0 + dx * f + w, y + h] for f in frames]


def held_then(second: list[list[float]], first: list[list[float]]) -> list[list[float]]:
    """The region holding ``first`` and ``second`` (their union) frame by frame."""
    return [
        [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]
        for a, b in zip(first, second, strict=True)
    ]


# A pair walking right, the lower thing 0.2 below the upper, seen as one region for 8 frames.
UPPER = walk(0.2, 0.02, range(14))
LOWER = walk(0.2, 0.02, range(8), y=0.6) + walk(0.34, 0.0, range(6), y=0.6)  # stops at 8
TOGETHER = held_then(UPPER[:8], LOWER[:8])


@pytest.mark.parametrize(
    ("paths", "carried"),
    [
        # the lower thing stops and the upper walks on: it came out of the region
        ({1: TOGETHER + UPPER[8:], 2: [None] * 8 + LOWER[8:]}, True),
        # a fragment that moves along with its thing, then joins it again: no parting
        (
            {
                1: TOGETHER + [u for u in UPPER[8:11]] + held_then(UPPER[11:], LOWER[11:]),
                2: [None] * 8 + walk(0.36, 0.02, range(8, 11), y=0.6) + [None] * 3,
            },
            False,
        ),
        # a thing comes out of one that grows no smaller (someone stepping out of a car)
        (
            {1: TOGETHER + TOGETHER[-1:] * 6, 2: [None] * 8 + walk(0.5, 0.05, range(6), y=0.6)},
            False,
        ),
        # a thing comes in at the frame's edge beside another
        ({1: TOGETHER + UPPER[8:], 2: [None] * 8 + walk(0.0, 0.0, range(6), y=0.6, w=0.05)}, False),
    ],
)
def test_only_a_thing_that_parted_from_a_region_is_carried_back(
    paths: dict[int, list[list[float]]], carried: bool
) -> None:
    dets, ids = rows_of(paths)
    rows, out, estimated = carry_back(dets, ids, np.zeros(len(ids), bool), 0.02)
    first = float(rows.t_s[out == 2].min())
    assert (first == 0.0) is carried
    assert estimated.sum() == (16 if carried else 0)
