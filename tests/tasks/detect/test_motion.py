"""The motion detector against KNOWN truth: synthetic scenes sampled at 5 fps like the pipeline.

The lobby's objects are coloured boxes whose BRIGHTNESS is close to the background's (the green
loiterer is within 3 to 13 grey levels of the floor where it dwells), so on grey frames no motion
detector can see them. The truth tests therefore run three ways: the lobby and the 640x360 demo
scene on small colour frames, and a lobby whose objects are bright on small grey frames.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
import pytest
from PIL import Image

from synthetic import (
    Box,
    GroundTruth,
    MovingObject,
    SceneSpec,
    ground_truth,
    lobby_scene,
    render_frame,
)
from synthetic.scenes import demo_scene
from tasks.detect.detectors.background import edge_strength, edges_in, remap_background
from tasks.detect.detectors.motion import (
    MotionConfig,
    MotionDetector,
    boxes_from_mask,
    merge_boxes,
    score_regions,
)
from tasks.detections import Detections

SAMPLE_FPS = 5
WIDTH = 320
Frame = npt.NDArray[np.uint8]


def small_frame(rgb: Frame, *, grey: bool, width: int = WIDTH) -> Frame:
    """Downscale to ``width`` px wide (and to grey), as the sampler hands frames to detectors."""
    image = Image.fromarray(rgb)
    if image.width != width:
        height = round(image.height * width / image.width)
        image = image.resize((width, height), Image.Resampling.BILINEAR)
    return np.asarray(image.convert("L") if grey else image, dtype=np.uint8)


def bright_lobby() -> SceneSpec:
    """The lobby with near-white objects, which differ from its muted background in brightness."""
    spec = lobby_scene()
    colours = ((245, 225, 225), (225, 245, 225), (225, 225, 250))
    objects = tuple(replace(o, color=c) for o, c in zip(spec.objects, colours, strict=True))
    return replace(spec, objects=objects)


@dataclass(frozen=True)
class Run:
    """A scene fed to the detector: its truth and, per sampled frame, (video frame, boxes)."""

    truth: GroundTruth
    frames: list[tuple[int, Detections]]

    def normalised(self, box: Box) -> Box:
        """A truth box in pixels, as a normalised box."""
        w, h = self.truth.spec.width, self.truth.spec.height
        return box[0] / w, box[1] / h, box[2] / w, box[3] / h


def sampled_indices(truth: GroundTruth) -> list[tuple[int, bool]]:
    """Video frames sampled at 5 fps, each with whether a scene cut came just before it."""
    step = truth.fps // SAMPLE_FPS
    indices = list(range(0, truth.frame_count, step))
    return [(i, any(i - step < c <= i for c in truth.cut_frames)) for i in indices]


def run_detector(spec: SceneSpec, *, grey: bool, config: MotionConfig | None = None) -> Run:
    """Render, downscale and detect every sampled frame, flagging the first after each cut."""
    truth = ground_truth(spec)
    detector = MotionDetector(config or MotionConfig())
    frames = []
    for k, (i, cut) in enumerate(sampled_indices(truth)):
        frame = small_frame(render_frame(spec, i), grey=grey)
        frames.append((i, detector.detect_frame(k, i / spec.fps, frame, refreshed=cut)))
    return Run(truth, frames)


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two x1, y1, x2, y2 boxes."""
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - w * h
    return w * h / union if union > 0 else 0.0


def ious(run: Run, box: Box, dets: Detections) -> list[float]:
    """IoU of a truth pixel box with every detected box of one frame."""
    truth = run.normalised(box)
    return [
        iou(truth, (float(x1), float(y1), float(x2), float(y2))) for x1, y1, x2, y2 in dets.boxes
    ]


def settled(run: Run) -> list[tuple[int, Box, list[float], bool]]:
    """Objects in view for >= 0.5 s and not a sliver: (frame, truth box, IoUs, dwelling)."""
    spec, min_area = run.truth.spec, MotionConfig().min_area
    rows = []
    for i, dets in run.frames:
        for obj in run.truth.object_at(i):
            box = obj.boxes[i]
            area = (box[2] - box[0]) * (box[3] - box[1]) / (spec.width * spec.height)
            if (i - min(obj.boxes)) / spec.fps >= 0.5 and area >= min_area:
                rows.append((i, box, ious(run, box, dets), obj.is_dwelling(i / spec.fps)))
    return rows


RUNS: dict[str, Callable[[], Run]] = {
    "lobby-colour": lambda: run_detector(lobby_scene(), grey=False),
    "demo-640x360-colour": lambda: run_detector(demo_scene(), grey=False),
    "bright-lobby-grey": lambda: run_detector(bright_lobby(), grey=True),
}


@pytest.fixture(scope="module", params=sorted(RUNS))
def run(request: pytest.FixtureRequest) -> Run:
    return RUNS[request.param]()


def test_finds_settled_objects(run: Run) -> None:
    rows = settled(run)
    hits = [max(r[2], default=0.0) >= 0.5 for r in rows]
    assert len(rows) > 50
    assert sum(hits) >= 0.9 * len(rows), f"{sum(hits)}/{len(rows)} frames matched"


def test_dwelling_object_stays_detected(run: Run) -> None:
    dwelling = [r for r in settled(run) if r[3]]
    missed = [r[0] for r in dwelling if max(r[2], default=0.0) < 0.5]
    assert len(dwelling) >= 25  # the loiterer stands still for 6 s (9 s in the demo scene)
    assert not missed, f"dwelling object lost on frames {missed}"


def test_one_object_gives_one_box(run: Run) -> None:
    rows = settled(run)
    single = [sum(v > 0 for v in r[2]) == 1 for r in rows]
    assert sum(single) >= 0.95 * len(rows)


def test_no_boxes_without_objects(run: Run) -> None:
    empty = [dets for i, dets in run.frames if not run.truth.object_at(i)]
    assert len(empty) >= 10
    assert sum(len(d) > 0 for d in empty) <= 0.02 * len(empty)


def test_every_box_is_an_object_or_a_sign_that_appeared(run: Run) -> None:
    """A sign that appears mid-scene is a real change, and it stays foreground like a dweller."""
    unexplained = 0
    for i, dets in run.frames:
        truths = [o.boxes[i] for o in run.truth.object_at(i)]
        truths += [t.box for t in run.truth.texts_at(i) if t.start_s > 0]
        for row in range(len(dets)):
            one = dets.select(np.array([row]))
            unexplained += max((max(ious(run, t, one)) for t in truths), default=0.0) < 0.3
    assert unexplained <= 0.02 * sum(len(d) for _, d in run.frames)


def test_scene_cut_restarts_background(run: Run) -> None:
    cuts = [i for i, cut in sampled_indices(run.truth) if cut]
    by_frame = dict(run.frames)
    assert cuts
    for cut in cuts:
        assert len(by_frame[cut]) == 0
    largest = max(
        float(np.prod(d.boxes[:, 2:] - d.boxes[:, :2], axis=1).max(initial=0))
        for d in by_frame.values()
    )
    assert largest < 0.1


@pytest.mark.parametrize("grey", [True, False], ids=["grey", "colour"])
def test_missed_cut_gives_no_full_frame_box(grey: bool) -> None:
    """Without the upstream flag the cut changes > 35 % of the frame, so the detector restarts."""
    spec = lobby_scene()
    detector = MotionDetector(MotionConfig())
    cut = ground_truth(spec).cut_frames[0]
    for k, i in enumerate(range(cut - 20, cut + 20, 2)):
        dets = detector.detect_frame(k, i / spec.fps, small_frame(render_frame(spec, i), grey=grey))
        areas = np.prod(dets.boxes[:, 2:] - dets.boxes[:, :2], axis=1)
        assert areas.max(initial=0) < 0.1, f"frame {i}"


@pytest.mark.parametrize("noise", [2.0, 3.0, 6.0])
@pytest.mark.parametrize("grey", [True, False], ids=["grey", "colour"])
def test_static_noisy_scene_gives_no_boxes(noise: float, grey: bool) -> None:
    spec = SceneSpec(width=WIDTH, height=180, fps=SAMPLE_FPS, duration_s=20.0, noise=noise)
    detector = MotionDetector(MotionConfig())
    frames = [small_frame(render_frame(spec, i), grey=grey) for i in range(100)]
    boxes = [len(detector.detect_frame(i, i / SAMPLE_FPS, f)) for i, f in enumerate(frames)]
    assert sum(boxes) == 0


def test_slow_lighting_drift_is_absorbed() -> None:
    """Half a grey level brighter every sampled frame (+50 over 20 s) never becomes motion."""
    spec = SceneSpec(width=WIDTH, height=180, fps=SAMPLE_FPS, duration_s=20.0, noise=2.0)
    detector = MotionDetector(MotionConfig())
    total = 0
    for i in range(100):
        frame = np.clip(render_frame(spec, i).astype(np.int16) + i // 2, 0, 255).astype(np.uint8)
        total += len(detector.detect_frame(i, i / SAMPLE_FPS, small_frame(frame, grey=True)))
    assert total == 0


def test_colour_frames_catch_an_object_as_bright_as_the_background() -> None:
    background = np.full((90, 160, 3), 120, dtype=np.uint8)
    scene = background.copy()
    scene[30:60, 60:80] = (40, 180, 70)  # luma 125.6 against 120
    found = {}
    for grey in (True, False):
        detector = MotionDetector(MotionConfig())
        detector.reset(small_frame(background, grey=grey, width=160))
        found[grey] = detector.detect_frame(1, 0.2, small_frame(scene, grey=grey, width=160))
    assert len(found[True]) == 0
    assert len(found[False]) == 1
    np.testing.assert_allclose(found[False].boxes[0], [60 / 160, 30 / 90, 80 / 160, 60 / 90])


def _mask(shape: tuple[int, int], *rects: tuple[int, int, int, int]) -> npt.NDArray[np.bool_]:
    """A boolean mask with the given x1, y1, x2, y2 rectangles set."""
    mask = np.zeros(shape, dtype=bool)
    for x1, y1, x2, y2 in rects:
        mask[y1:y2, x1:x2] = True
    return mask


MERGE_CASES = [
    # (name, rectangles drawn on a 20x20 mask, merge gap in px, expected boxes)
    ("nothing", [], 2, []),
    ("one region", [(2, 2, 6, 5)], 2, [(2, 2, 6, 5)]),
    ("two far apart", [(0, 0, 4, 4), (12, 12, 16, 16)], 2, [(0, 0, 4, 4), (12, 12, 16, 16)]),
    ("gap of 2 px merged", [(0, 0, 4, 4), (6, 0, 10, 4)], 2, [(0, 0, 10, 4)]),
    ("gap of 3 px kept apart", [(0, 0, 4, 4), (7, 0, 10, 4)], 2, [(0, 0, 4, 4), (7, 0, 10, 4)]),
    ("near on one axis only", [(0, 0, 4, 4), (5, 10, 9, 14)], 2, [(0, 0, 4, 4), (5, 10, 9, 14)]),
    ("diagonal neighbours", [(0, 0, 4, 4), (5, 5, 9, 9)], 2, [(0, 0, 9, 9)]),
    ("chain of three", [(0, 0, 3, 3), (5, 0, 8, 3), (10, 0, 13, 3)], 2, [(0, 0, 13, 3)]),
    # An L-shaped region's box overlaps a region that none of its pixels come near.
    ("box overlap", [(0, 0, 12, 2), (0, 0, 2, 12), (8, 8, 10, 10)], 0, [(0, 0, 12, 12)]),
    # A merged box reaches a region that neither part reached: merging repeats.
    ("transitive", [(0, 0, 10, 1), (12, 0, 13, 10), (4, 4, 6, 6)], 2, [(0, 0, 13, 10)]),
]


@pytest.mark.parametrize(
    ("rects", "gap", "expected"), [c[1:] for c in MERGE_CASES], ids=[c[0] for c in MERGE_CASES]
)
def test_boxes_from_mask_merges_fragments(
    rects: list[tuple[int, int, int, int]], gap: int, expected: list[Box]
) -> None:
    mask = _mask((20, 20), *rects)
    config = MotionConfig(min_area=0.0, merge_gap=gap / 20)
    boxes, scores = boxes_from_mask(mask, mask * np.float32(50), config)
    got = sorted(tuple(float(v) for v in b) for b in boxes)
    assert got == sorted(expected)
    assert len(scores) == len(boxes)


def test_merge_boxes_maps_each_box_to_its_group() -> None:
    boxes = np.array([[0, 0, 2, 2], [50, 50, 52, 52], [2, 0, 4, 2]], dtype=np.float64)
    merged, groups = merge_boxes(boxes, gap=0.0)
    assert groups[0] == groups[2] != groups[1]
    np.testing.assert_array_equal(merged[groups[0]], [0, 0, 4, 2])


def test_small_regions_are_dropped_after_merging() -> None:
    """Two 2x2 fragments are each under min_area, but together they are one region of 8 px."""
    mask = _mask((20, 20), (0, 0, 2, 2), (3, 0, 5, 2))
    config = MotionConfig(min_area=7 / 400, merge_gap=2 / 20)
    assert len(boxes_from_mask(mask, mask * np.float32(50), config)[0]) == 1
    config = MotionConfig(min_area=7 / 400, merge_gap=0.0)
    assert len(boxes_from_mask(mask, mask * np.float32(50), config)[0]) == 0


def test_scores_grow_with_area_and_difference() -> None:
    areas = np.array([10.0, 100.0, 1000.0])
    by_area = score_regions(areas, np.full(3, 40.0), min_pixels=50.0, threshold=25.0)
    by_diff = score_regions(np.full(3, 100.0), np.array([26.0, 60.0, 200.0]), 50.0, 25.0)
    for scores in (by_area, by_diff):
        assert np.all(np.diff(scores) > 0)
        assert np.all((scores > 0) & (scores < 1))


def test_refresh_and_size_change_restart_without_boxes() -> None:
    detector = MotionDetector(MotionConfig())
    still = np.full((60, 80), 100, dtype=np.uint8)
    moved = still.copy()
    moved[20:40, 30:50] = 200
    assert len(detector.detect_frame(0, 0.0, still)) == 0  # the first frame starts the background
    assert len(detector.detect_frame(1, 0.2, moved)) == 1
    assert len(detector.detect_frame(2, 0.4, moved, refreshed=True)) == 0
    assert (
        len(detector.detect_frame(3, 0.6, moved)) == 0
    )  # the refreshed frame is the background now
    assert len(detector.detect_frame(4, 0.8, np.full((30, 40), 100, dtype=np.uint8))) == 0


@pytest.mark.parametrize(
    "frame",
    [np.zeros((10, 10), np.float32), np.zeros((2, 10, 10, 3), np.uint8), np.zeros(10, np.uint8)],
    ids=["float", "4-d", "1-d"],
)
def test_rejects_frames_that_are_not_small_uint8_images(frame: npt.NDArray[np.generic]) -> None:
    with pytest.raises(ValueError, match=r"\(H, W\) or \(H, W, C\) uint8"):
        MotionDetector(MotionConfig()).detect_frame(0, 0.0, frame)  # type: ignore[arg-type]


def test_config_is_selected_by_type_and_refuses_unknown_fields() -> None:
    assert MotionConfig.model_validate({"type": "motion", "threshold": 30}).threshold == 30
    with pytest.raises(ValueError, match="extra"):
        MotionConfig.model_validate({"type": "motion", "thresold": 30})


@pytest.mark.parametrize("gain", [0.75, 0.85, 1.15, 1.2, 1.35])
def test_a_light_switched_on_or_off_is_no_motion(gain: float) -> None:
    """A frame-wide step of 15 to 35 % between two sampled frames (a light, auto-exposure)
    changes no pixel's verdict: the background follows the frame's gain."""
    spec = SceneSpec(width=WIDTH, height=180, fps=SAMPLE_FPS, duration_s=8.0, noise=2.0)
    detector = MotionDetector(MotionConfig())
    total = 0
    for i in range(40):
        frame = render_frame(spec, i).astype(np.float32) * (gain if i >= 20 else 1.0)
        small = small_frame(np.clip(frame, 0, 255).astype(np.uint8), grey=False)
        total += len(detector.detect_frame(i, i / SAMPLE_FPS, small))
    assert total == 0


def test_an_object_there_at_the_start_leaves_no_ghost_where_it_stood() -> None:
    """The background starts from a frame with the object in it; once the object has moved on,
    the place it left is not reported (the ghost test), and the object itself still is."""
    start = (80.0, 90.0)
    walker = MovingObject("walker", (220, 40, 40), (30, 60), ((0.0, *start), (6.0, 280.0, 90.0)))
    spec = SceneSpec(width=WIDTH, height=180, fps=SAMPLE_FPS, duration_s=6.0, objects=(walker,))
    truth = ground_truth(spec)
    detector = MotionDetector(MotionConfig())
    left_behind = (start[0] - 15) / WIDTH, 60 / 180, (start[0] + 15) / WIDTH, 120 / 180
    ghosts, found = 0, 0
    for i in range(30):
        dets = detector.detect_frame(
            i, i / SAMPLE_FPS, small_frame(render_frame(spec, i), grey=False)
        )
        truth_box = truth.objects[0].boxes[i]
        here = (truth_box[0] / WIDTH, truth_box[1] / 180, truth_box[2] / WIDTH, truth_box[3] / 180)
        found += any(iou(tuple(b), here) > 0.5 for b in dets.boxes.tolist())
        if i >= 10:  # the walker is 80 px past where it stood
            ghosts += sum(iou(tuple(b), left_behind) > 0.3 for b in dets.boxes.tolist())
    assert ghosts == 0
    assert found >= 25


def test_edges_in_a_window_equal_the_whole_frames_edges_there() -> None:
    """The ghost test's edges come from a window and its one-pixel ring: exactly the same
    values as the whole frame's, at the frame's borders too."""
    rng = np.random.default_rng(7)
    planes = rng.uniform(0, 255, size=(3, 40, 60)).astype(np.float32)
    whole = edge_strength(planes)
    for y1, y2, x1, x2 in [(0, 40, 0, 60), (0, 5, 0, 7), (10, 20, 30, 45), (33, 40, 52, 60)]:
        np.testing.assert_array_equal(edges_in(planes, (y1, y2, x1, x2)), whole[y1:y2, x1:x2])


def test_remap_background_recovers_a_colour_mix_despite_what_moved() -> None:
    """The frame is the background through a 3x3 colour mix plus an offset (colour turning
    grey, levels stretched), with a tenth of it covered by something else: the fit ignores the
    cover and gives the background's new look."""
    rng = np.random.default_rng(3)
    background = rng.uniform(30, 190, size=(3, 60, 80)).astype(np.float32)
    mix = np.array([[0.2, 0.3, 0.6], [0.2, 0.3, 0.6], [0.2, 0.3, 0.6]]) * 1.2
    frame = (np.einsum("ij,jhw->ihw", mix, background) - 20.0).astype(np.float32)
    frame[:, 10:30, 10:30] = 250.0  # a thing in front
    remapped = remap_background(background, frame)
    off = np.ones((60, 80), dtype=bool)
    off[10:30, 10:30] = False
    assert np.abs(remapped - frame)[:, off].max() < 1.0


def test_a_walker_stays_a_box_when_the_place_takes_a_new_look() -> None:
    """An exposure reset or an infrared switch that the gain does not follow changes most of
    the frame: the background is remapped, not restarted, and the walker is a box on its truth
    in every frame, the switch's included."""
    walker = MovingObject(
        "walker", (220, 60, 40), (30, 45), ((0.0, -20.0, 90.0), (8.0, 340.0, 90.0)), "texture"
    )
    spec = SceneSpec(
        width=WIDTH, height=180, fps=SAMPLE_FPS, duration_s=8.0, noise=2.0, objects=(walker,)
    )
    truth = ground_truth(spec)
    detector = MotionDetector(MotionConfig())
    for i in range(40):
        rgb = render_frame(spec, i)
        if i >= 20:  # blue-heavy grey, stretched: colour gone, levels moved
            grey = rgb.astype(np.float32) @ np.array([0.1, 0.2, 0.7], dtype=np.float32)
            rgb = np.repeat(np.clip(2.2 * (grey - 60) + 40, 0, 255)[..., None], 3, 2)
        dets = detector.detect_frame(
            i, i / SAMPLE_FPS, small_frame(rgb.astype(np.uint8), grey=False)
        )
        box = truth.objects[0].boxes.get(i)
        if box is not None and 3 <= i <= 36:
            here = (box[0] / WIDTH, box[1] / 180, box[2] / WIDTH, box[3] / 180)
            assert any(iou(tuple(b), here) > 0.5 for b in dets.boxes.tolist()), i
    assert detector.remapped == [20]
