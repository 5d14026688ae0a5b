"""One thing, one identity through stops and picture changes, against KNOWN truth.

Synthetic scenes are rendered, sampled at 5 fps, brought to the analysis size, run through
the motion detector (restarting where a brightness-matched scene score over the service's
threshold says the scene was cut, as the sample stage flags it), tracked, and ended at cuts
where they do not carry on (``tasks.track.continuity``). Each truth object must be ONE track
whose boxes lie on the truth's, and nothing else may be tracked (no ghost of where a thing
stood, no track carried into another place).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from synthetic import GroundTruth, MovingObject, SceneSpec, ground_truth, render_frame
from tasks.detect.detectors.motion import MotionDetector
from tasks.detections import Detections
from tasks.geometry import box_iou
from tasks.sample.scene_score import scene_score
from tasks.track.bytetrack import TrackerConfig
from tasks.track.continuity import split_at_cuts
from tasks.track.sequence import track_detections
from tasks.track.stage import MIN_TRACK_S, scene_cuts

SAMPLE_FPS = 5
ANALYSIS_WIDTH = 240
CUT_SCORE = 0.3  # the service's scene_cut_threshold
Frame = npt.NDArray[np.uint8]
Look = Callable[[Frame], Frame]


def infrared(frame: Frame) -> Frame:
    """The picture after a camera's infrared filter switched: colour gone, levels stretched
    (blue-heavy mix, x2.2 contrast): no gain follows it, and its scene score (0.34 on the
    walk below) reads as a cut."""
    rgb = frame.astype(np.float32)
    grey = 0.1 * rgb[..., 0] + 0.2 * rgb[..., 1] + 0.7 * rgb[..., 2]
    stretched = np.clip(2.2 * (grey - 60.0) + 40.0, 0, 255).astype(np.uint8)
    return np.repeat(stretched[..., None], 3, axis=2)


@dataclass(frozen=True)
class Tracked:
    truth: GroundTruth
    tracks: Detections
    times: list[float]


def run_scene(spec: SceneSpec, look_from: float | None = None, look: Look = infrared) -> Tracked:
    """Detect and track ``spec`` as the pipeline does; from ``look_from`` s every frame is shown
    through ``look``."""
    detector, previous, parts, cuts, times = MotionDetector(), None, [], [], []
    for k, index in enumerate(range(0, spec.frame_count, spec.fps // SAMPLE_FPS)):
        t = index / spec.fps
        rgb = render_frame(spec, index)
        rgb = look(rgb) if look_from is not None and t >= look_from else rgb
        height = round(spec.height * ANALYSIS_WIDTH / spec.width / 2) * 2
        small = cv2.resize(rgb, (ANALYSIS_WIDTH, height), interpolation=cv2.INTER_AREA)
        tiny = small[::4, ::4].mean(axis=2).astype(np.uint8)
        cut = k > 0 and scene_score(previous, tiny) >= CUT_SCORE
        previous = tiny
        cuts += [t] if cut else []
        times.append(t)
        parts.append(detector.detect_frame(k, t, small, refreshed=cut))
    tracks = track_detections(Detections.concatenate(parts), TrackerConfig(min_track_s=MIN_TRACK_S))
    return Tracked(ground_truth(spec), split_at_cuts(tracks, cuts, MIN_TRACK_S), times)


def truth_ious(run: Tracked, track: int, name: str) -> list[float]:
    """IoU of ``track``'s box with object ``name``'s truth box, per frame the track has."""
    spec, obj = run.truth.spec, run.truth.object_named(name)
    scale = np.array([spec.width, spec.height] * 2)
    rows = np.flatnonzero(run.tracks.track_ids == track)
    out = []
    for row in rows:
        index = round(float(run.tracks.t_s[row]) * spec.fps)
        box = obj.box_at(index)
        out.append(
            0.0
            if box is None
            else float(box_iou(run.tracks.boxes[row], np.array(box) / scale)[0, 0])
        )
    return out


def walker(keys: tuple[tuple[float, float, float], ...], name: str = "walker") -> MovingObject:
    return MovingObject(name, (220, 60, 40), (60, 90), keys, "texture", 3)


def scene(*objects: MovingObject, cuts: tuple[float, ...] = (), **kw: Any) -> SceneSpec:
    """A 852x480, 25 fps scene of 12 s (``kw`` overrides) with ``objects`` and ``cuts``."""
    fields = {"width": 852, "height": 480, "fps": 25, "duration_s": 12.0, "noise": 2.0, "seed": 5}
    return SceneSpec(objects=objects, scene_cuts=cuts, **{**fields, **kw})


def one_track_on(run: Tracked, name: str) -> int:
    """The one track there is, checked to lie on ``name``'s truth nearly everywhere."""
    ids = np.unique(run.tracks.track_ids)
    assert len(ids) == 1, [(int(t), run.tracks.t_s[run.tracks.track_ids == t].min()) for t in ids]
    ious = truth_ious(run, int(ids[0]), name)
    assert np.mean(np.array(ious) >= 0.5) >= 0.9, np.round(ious, 2)
    return int(ids[0])


WALK = ((0.0, -40.0, 240.0), (12.0, 900.0, 240.0))


@pytest.mark.parametrize("gain", [0.65, 1.35])
def test_an_object_walking_through_a_light_switched_on_or_off_stays_one_track(gain: float) -> None:
    run = run_scene(scene(walker(WALK), lighting=((5.0, 1.0), (5.04, gain))))
    one_track_on(run, "walker")


def test_an_object_walking_through_an_infrared_switch_stays_one_track() -> None:
    """The sample stage reads the switch as a cut (the background restarts), yet the walker
    keeps its place and motion across it: one track, on the truth's boxes."""
    run = run_scene(scene(walker(WALK)), look_from=5.0)
    track = one_track_on(run, "walker")
    after = run.tracks.t_s[run.tracks.track_ids == track]
    assert after.min() < 1.0 and after.max() > 11.0


def test_an_object_that_stops_8_s_stays_tracked_and_leaves_no_ghost() -> None:
    stop = walker(
        ((0.0, -40.0, 240.0), (3.0, 400.0, 240.0), (11.0, 400.0, 240.0), (14.0, 900.0, 240.0))
    )
    run = run_scene(scene(stop, duration_s=16.0))
    track = one_track_on(run, "walker")
    seen = {round(float(t) * SAMPLE_FPS) for t in run.tracks.t_s[run.tracks.track_ids == track]}
    stopped = {round(t * SAMPLE_FPS) for t in run.times if 3.4 <= t <= 11.0}
    assert stopped <= seen  # every sampled frame of the stop


def test_a_thing_there_when_the_picture_began_that_stops_nearby_leaves_no_ghost() -> None:
    """It stood in the first frame (the background's), walks 100 px down and stops: where it
    stood and where it stops are two regions of change a few pixels apart, which merged into
    one box with its ghost before ghosts were looked for in each region."""
    there = walker(((0.0, 400.0, 170.0), (1.5, 400.0, 270.0), (12.0, 400.0, 270.0)))
    run = run_scene(scene(there))
    track = one_track_on(run, "walker")
    assert np.mean(np.array(truth_ious(run, track, "walker"))[-40:]) > 0.7


def test_a_cut_to_another_place_ends_every_object() -> None:
    """Before the cut a walker heads right; after it, in another place, another thing walks
    down-right from a little ahead of where the walker was (within the tracker's reach, which
    linked them into one track before tracks were ended at cuts): two objects."""
    before = walker(((0.0, -40.0, 240.0), (5.96, 420.0, 240.0)), "before")
    after = MovingObject(
        "after", (40, 200, 90), (60, 90), ((6.0, 560.0, 300.0), (12.0, 760.0, 400.0))
    )
    run = run_scene(scene(before, after, cuts=(6.0,)))
    ids = np.unique(run.tracks.track_ids)
    assert len(ids) == 2
    for track, name in zip(ids, ("before", "after"), strict=True):
        assert np.mean(np.array(truth_ious(run, int(track), name)) >= 0.5) >= 0.8


# split_at_cuts on its own: a track of boxes moving right 0.02 a frame, cut at t = 2 s.
def _tracks(boxes: list[tuple[float, float, float, float]], ids: list[int]) -> Detections:
    n = len(boxes)
    return Detections(
        boxes=np.array(boxes, dtype=np.float32),
        scores=np.full(n, 0.9, dtype=np.float32),
        class_ids=np.zeros(n, dtype=np.int64),
        frame_index=np.arange(n, dtype=np.int64),
        t_s=np.arange(n, dtype=np.float32) * 0.2,
        class_names=("motion",),
        track_ids=np.array(ids, dtype=np.int64),
    )


def _walk(n: int, jump_at: int | None = None) -> list[tuple[float, float, float, float]]:
    out = []
    for k in range(n):
        x = 0.1 + 0.02 * k + (0.4 if jump_at is not None and k >= jump_at else 0.0)
        out.append((x, 0.4, x + 0.08, 0.6))
    return out


@pytest.mark.parametrize(
    ("jump_at", "cuts", "expected"),
    [
        (None, [2.0], [1] * 20),  # carries on across the cut: one track
        (10, [2.0], [1] * 10 + [2] * 10),  # somewhere else after the cut: ended there
        (10, [], [7] * 20),  # no cut: the tracker's word stands, untouched
    ],
)
def test_split_at_cuts(jump_at: int | None, cuts: list[float], expected: list[int]) -> None:
    out = split_at_cuts(_tracks(_walk(20, jump_at), [7] * 20), cuts, 1.0)
    assert out.track_ids.tolist() == expected


def test_a_part_shorter_than_min_track_s_after_a_cut_is_dropped() -> None:
    out = split_at_cuts(_tracks(_walk(20, 17), [1] * 20), [17 * 0.2], 1.0)
    assert out.track_ids.tolist() == [1] * 17


def test_only_certain_cuts_end_tracks() -> None:
    """A refresh scoring under CERTAIN_CUT_SCORE may be a new look of the same place (an
    infrared switch scored 0.31): the track stage ends tracks only at certain cuts."""
    rows = [
        {"t_s": 0.0, "refresh_reason": "start", "scene_score": 0.0},
        {"t_s": 2.0, "refresh_reason": "scene_change", "scene_score": 0.31},
        {"t_s": 4.0, "refresh_reason": "scene_change", "scene_score": 0.6},
        {"t_s": 6.0, "refresh_reason": "chunk_start", "scene_score": 0.9},
    ]
    assert scene_cuts(rows) == [4.0]
