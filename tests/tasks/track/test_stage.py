"""The tracker against known truth: every detection below is labelled with the object behind it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pytest

from synthetic import ground_truth, lobby_scene
from tasks.detections import Detections
from tasks.track import kalman
from tasks.track.bytetrack import Tracker, TrackerConfig
from tasks.track.sequence import track_detections

FPS = 5.0
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Seen:
    """One detection and the truth label of the object that produced it."""

    label: str
    frame: int
    box: Box
    score: float = 0.9
    class_id: int = 0


def box_at(cx: float, cy: float, w: float = 0.06, h: float = 0.15) -> Box:
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def path(
    label: str,
    frames: Iterable[int],
    start: tuple[float, float],
    velocity: tuple[float, float] = (0.0, 0.0),
    size: tuple[float, float] = (0.06, 0.15),
    jitter: float = 0.0,
    size_jitter: float = 0.0,
    score: float = 0.9,
    class_id: int = 0,
) -> list[Seen]:
    """An object moving at ``velocity`` (per second) from ``start``, seen on ``frames``."""
    rng = np.random.default_rng(sum(map(ord, label)))
    out = []
    for frame in frames:
        t = frame / FPS
        cx, cy = (s + v * t + rng.normal(0, jitter) for s, v in zip(start, velocity, strict=True))
        w, h = (s * (1 + rng.uniform(-size_jitter, size_jitter)) for s in size)
        out.append(Seen(label, frame, box_at(cx, cy, w, h), score, class_id))
    return out


def to_detections(seen: Sequence[Seen], class_names: tuple[str, ...] = ("motion",)) -> Detections:
    if not seen:
        return Detections.empty(class_names)
    return Detections(
        boxes=np.array([s.box for s in seen]),
        scores=np.array([s.score for s in seen]),
        class_ids=np.array([s.class_id for s in seen]),
        frame_index=np.array([s.frame for s in seen]),
        t_s=np.array([s.frame / FPS for s in seen]),
        class_names=class_names,
    )


SPLIT = "split"  # the label of an output row that is a track's share of a merged region


def labels_of(out: Detections, seen: Sequence[Seen]) -> list[str]:
    """The truth label of every output row (rows are matched on frame, class and box; a row
    that is no input box is a track's share of a merged region, ``SPLIT``)."""
    dets = to_detections(seen)
    index = {
        (int(f), int(c), b.tobytes()): s.label
        for f, c, b, s in zip(dets.frame_index, dets.class_ids, dets.boxes, seen, strict=True)
    }
    rows = zip(out.frame_index, out.class_ids, out.boxes, strict=True)
    return [index.get((int(f), int(c), b.tobytes()), SPLIT) for f, c, b in rows]


def track_by_label(
    seen: Sequence[Seen],
    cfg: TrackerConfig | None = None,
    frame_times: npt.NDArray[np.float32] | None = None,
) -> dict[str, list[tuple[float, int]]]:
    """Track ``seen``; per truth label, ``(t_s, track id)`` of its kept rows in time order."""
    out = track_detections(to_detections(seen), cfg or TrackerConfig(), frame_times)
    tracked: dict[str, list[tuple[float, int]]] = {}
    rows = zip(labels_of(out, seen), out.t_s, out.track_ids, strict=True)
    for label, t, track_id in rows:
        tracked.setdefault(label, []).append((float(t), int(track_id)))
    return tracked


def ids_by_label(seen: Sequence[Seen], cfg: TrackerConfig | None = None) -> dict[str, list[int]]:
    """Per truth label, the track ids of its kept rows in time order (split rows left out)."""
    tracked = track_by_label(seen, cfg)
    return {k: [i for _, i in v] for k, v in tracked.items() if k != SPLIT}


def one_id_each(ids: dict[str, list[int]]) -> bool:
    """Each label has exactly one id and no two labels share one (zero id switches)."""
    firsts = [set(v) for v in ids.values()]
    return all(len(s) == 1 for s in firsts) and len(set.union(*firsts)) == len(firsts)


CROSSINGS = {
    "head-on": (
        path("a", range(40), (0.1, 0.50), (0.1, 0.0), jitter=0.002),
        path("b", range(40), (0.9, 0.53), (-0.1, 0.0), jitter=0.002),
    ),
    "x-shaped": (
        path("a", range(40), (0.1, 0.10), (0.1, 0.1), jitter=0.002),
        path("b", range(40), (0.9, 0.13), (-0.1, 0.1), jitter=0.002),
    ),
    "head-on, one hidden while they overlap": (
        path("a", range(40), (0.1, 0.50), (0.1, 0.0), jitter=0.002),
        path("b", [f for f in range(40) if not 18 <= f < 22], (0.9, 0.53), (-0.1, 0.0)),
    ),
    "overtaking": (
        path("a", range(25), (0.1, 0.50), (0.15, 0.0), jitter=0.002),
        path("b", range(25), (0.3, 0.52), (0.05, 0.0), jitter=0.002),
    ),
    "small through big": (
        path("a", range(40), (0.1, 0.5), (0.1, 0.0), size=(0.04, 0.1), jitter=0.002),
        path("b", range(40), (0.9, 0.5), (-0.1, 0.0), size=(0.12, 0.3), jitter=0.002),
    ),
}


@pytest.mark.parametrize("name", CROSSINGS)
def test_objects_crossing_paths_keep_their_ids(name: str) -> None:
    a, b = CROSSINGS[name]
    out = track_detections(to_detections(a + b))
    ids = ids_by_label(a + b)
    assert one_id_each(ids), ids
    # Every box is kept, under its thing's one id; where a box held both (or one hid the
    # other), each thing's share of it is there too, so no thing has fewer rows than boxes.
    rows_of = {label: int((out.track_ids == ids[label][0]).sum()) for label in ("a", "b")}
    assert rows_of["a"] >= len(a) and rows_of["b"] >= len(b), rows_of
    assert len(set(out.track_ids.tolist())) == 2


@pytest.mark.parametrize(
    ("jitter", "size_jitter"),
    [(0.0, 0.0), (0.003, 0.05), (0.008, 0.2)],
    ids=["steady", "jittery", "breathing box"],
)
def test_object_that_stops_for_10_s_keeps_one_id(jitter: float, size_jitter: float) -> None:
    walk_in = path("x", range(10), (0.3, 0.5), (0.1, 0.0), jitter=jitter)  # 2 s to (0.5, 0.5)
    dwell = path("x", range(10, 60), (0.5, 0.5), jitter=jitter, size_jitter=size_jitter)
    walk_out = path("x", range(60, 75), (0.5 - 1.2, 0.5), (0.1, 0.0), jitter=jitter)
    ids = ids_by_label(walk_in + dwell + walk_out)
    assert set(ids["x"]) == {1}
    assert len(ids["x"]) == 75


@pytest.mark.parametrize(
    ("gap_s", "shift", "with_frame_times", "same_id"),
    [
        (2.0, 0.0, False, True),
        (2.0, 0.01, True, True),
        (2.8, 0.02, False, True),
        (5.0, 0.0, False, False),
        (5.0, 0.0, True, False),
    ],
)
def test_vanished_object_resumes_its_id_within_max_lost_s(
    gap_s: float, shift: float, with_frame_times: bool, same_id: bool
) -> None:
    gap = round(gap_s * FPS)
    before = path("before", range(25), (0.5, 0.5), jitter=0.002)
    after = path("after", range(25 + gap, 50 + gap), (0.5 + shift, 0.5), jitter=0.002)
    times = np.arange(50 + gap, dtype=np.float32) / np.float32(FPS)
    tracked = track_by_label(before + after, frame_times=times if with_frame_times else None)
    ids = {label: [i for _, i in rows] for label, rows in tracked.items()}
    assert (len(ids["before"]), len(ids["after"])) == (25, 25)
    assert set(ids["before"]) == {1}
    assert set(ids["after"]) == ({1} if same_id else {2})


@pytest.mark.parametrize(("gap_s", "same_id"), [(0.4, True), (2.4, False)])
def test_what_left_at_the_edge_is_not_what_enters_there_later(gap_s: float, same_id: bool) -> None:
    """A walker leaves on the right; a visitor comes in there ``gap_s`` later, walking left. A
    short gap at the edge is a missed detection; a longer one is a new object (the two-signs
    video's walker and visitor were one object before ``exit_lost_s``)."""
    gap = round(gap_s * FPS)
    walker = path("walker", range(20), (0.5, 0.5), (0.12, 0.0))  # reaches the edge at 4 s
    walker = [s for s in walker if s.box[2] <= 1.0]
    last = walker[-1].frame
    visitor = path("visitor", range(last + 1 + gap, last + 21 + gap), (1.0, 0.5), (-0.12, 0.0))
    visitor = [
        Seen("visitor", s.frame, box_at(0.97 - 0.024 * (s.frame - last - 1 - gap), 0.5))
        for s in visitor
    ]
    ids = ids_by_label(walker + visitor)
    assert set(ids["walker"]) == {1}
    assert set(ids["visitor"]) == ({1} if same_id else {2})


def test_moving_object_hidden_for_1_s_is_found_along_its_path() -> None:
    frames = [f for f in range(40) if not 15 <= f < 20]
    ids = ids_by_label(path("x", frames, (0.1, 0.5), (0.15, 0.0), jitter=0.002))
    assert set(ids["x"]) == {1}


SPURIOUS = {
    "alone": (path("blip", [7], (0.5, 0.5)), set()),
    "next to a real object": (
        path("real", range(20), (0.2, 0.3)) + path("blip", [7], (0.7, 0.7)),
        {"real"},
    ),
    "two blips 2 s apart at one place": (path("blip", [7, 17], (0.5, 0.5)), set()),
    "one missed frame is forgiven": (path("flicker", [7, 9], (0.5, 0.5)), {"flicker"}),
    "low-score boxes never start a track": (path("weak", range(20), (0.5, 0.5), score=0.3), set()),
    "on frame 0 a box is confirmed at once": (path("early", [0], (0.5, 0.5)), {"early"}),
}


@pytest.mark.parametrize("name", SPURIOUS)
def test_min_hits_filters_spurious_detections(name: str) -> None:
    seen, tracked = SPURIOUS[name]
    assert set(ids_by_label(seen)) == tracked


def test_low_score_boxes_extend_a_tracked_object() -> None:
    strong = path("x", range(10), (0.2, 0.5), (0.1, 0.0))
    weak = path("x", range(10, 20), (0.2, 0.5), (0.1, 0.0), score=0.3)
    noise = path("x", range(20, 25), (0.2, 0.5), (0.1, 0.0), score=0.05)
    ids = ids_by_label(strong + weak + noise)
    assert ids == {"x": [1] * 20}


def test_boxes_of_different_classes_at_one_place_are_two_tracks() -> None:
    person = path("person", range(20), (0.5, 0.5), (0.02, 0.0), class_id=0)
    bag = path("bag", range(20), (0.5, 0.5), (0.02, 0.0), class_id=1)
    out = track_detections(to_detections(person + bag, ("person", "bag")))
    assert len(set(out.track_ids.tolist())) == 2
    for track_id in (1, 2):
        assert len(set(out.class_ids[out.track_ids == track_id].tolist())) == 1


def test_min_track_s_drops_short_tracks_and_ids_stay_consecutive() -> None:
    short = path("short", range(5), (0.2, 0.2))  # spans 0.8 s
    long = path("long", range(3, 30), (0.7, 0.7))
    ids = ids_by_label(short + long, TrackerConfig(min_track_s=2.0))
    assert ids == {"long": [1] * 27}


def test_row_order_of_the_input_does_not_matter() -> None:
    a, b = CROSSINGS["x-shaped"]
    seen = a + b
    shuffled = [seen[i] for i in np.random.default_rng(1).permutation(len(seen))]
    assert ids_by_label(shuffled) == ids_by_label(seen)


def test_tracker_reports_an_id_only_once_a_track_is_confirmed() -> None:
    tracker = Tracker(TrackerConfig(min_hits=3))
    dets = to_detections(path("x", [1], (0.5, 0.5)))
    seen = [tracker.update(f, f / FPS, dets).tolist() for f in (1, 2, 3, 4)]
    assert seen == [[-1], [-1], [1], [1]]


def test_tracker_refuses_frames_out_of_order() -> None:
    tracker = Tracker()
    tracker.update(3, 0.6, Detections.empty())
    with pytest.raises(ValueError, match="in order"):
        tracker.update(2, 0.4, Detections.empty())


@pytest.mark.parametrize(
    "kwargs",
    [{"low_thresh": 0.6}, {"match_iou": 0.0}, {"min_hits": 0}, {"max_lost_s": -1.0}],
)
def test_config_refuses_nonsense(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        TrackerConfig(**kwargs)  # type: ignore[arg-type]


def test_frame_index_outside_frame_times_is_refused() -> None:
    dets = to_detections(path("x", [5], (0.5, 0.5)))
    with pytest.raises(ValueError, match="frame_times"):
        track_detections(dets, frame_times=np.zeros(3, dtype=np.float32))


def test_rows_of_one_frame_at_two_times_are_refused() -> None:
    dets = to_detections(path("x", [0, 1], (0.5, 0.5)) + path("y", [1], (0.2, 0.2)))
    t_s = np.array([0.0, 0.2, 0.4], dtype=np.float32)
    clash = Detections(dets.boxes, dets.scores, dets.class_ids, dets.frame_index, t_s)
    with pytest.raises(ValueError, match="share one t_s"):
        track_detections(clash)


def test_no_detections_give_no_tracks() -> None:
    assert len(track_detections(Detections.empty())) == 0


def lobby_seen(seed: int = 7) -> tuple[list[Seen], npt.NDArray[np.float32]]:
    """The lobby's truth boxes at 5 fps, jittered (0.75 px), 5% dropped; and every frame's time."""
    truth = ground_truth(lobby_scene())
    spec, rng = truth.spec, np.random.default_rng(seed)
    scale = np.array([spec.width, spec.height] * 2, dtype=np.float64)
    frames = range(0, truth.frame_count, round(spec.fps / FPS))
    seen = []
    for sample, frame in enumerate(frames):
        for obj in truth.objects:
            box = obj.box_at(frame)
            if box is None or rng.random() < 0.05:
                continue
            x1, y1, x2, y2 = np.array(box) + rng.normal(0, 0.75, 4)
            x2, y2 = max(x2, x1 + 1), max(y2, y1 + 1)  # a sliver at the frame edge stays a box
            normalised = tuple((np.array([x1, y1, x2, y2]) / scale).tolist())
            seen.append(Seen(obj.name, sample, normalised))
    return seen, np.arange(len(frames), dtype=np.float32) / np.float32(FPS)


def test_lobby_truth_gives_one_track_per_object_spanning_its_visibility() -> None:
    truth = ground_truth(lobby_scene())
    seen, frame_times = lobby_seen()
    tracked = track_by_label(seen, frame_times=frame_times)
    assert set(tracked) == {obj.name for obj in truth.objects}
    assert one_id_each({name: [i for _, i in rows] for name, rows in tracked.items()})
    for obj in truth.objects:
        times = [t for t, _ in tracked[obj.name]]
        assert min(times) == pytest.approx(obj.first_seen_s, abs=0.5), obj.name
        assert max(times) == pytest.approx(obj.last_seen_s, abs=0.5), obj.name
    ((start, end),) = truth.object_named("loiterer").dwell_intervals
    dwelling = [i for t, i in tracked["loiterer"] if start <= t <= end]
    assert len(dwelling) >= 0.9 * (end - start) * FPS  # nothing of the dwell was dropped
    assert len(set(dwelling)) == 1


def test_frame_times_do_not_change_the_result() -> None:
    """Lost time comes from ``t_s`` and missed frames from gaps in ``frame_index``."""
    seen, frame_times = lobby_seen(seed=3)
    assert track_by_label(seen) == track_by_label(seen, frame_times=frame_times)


def test_kalman_velocity_of_a_standing_box_settles_near_zero() -> None:
    rng = np.random.default_rng(0)
    boxes = np.array(box_at(0.5, 0.5)) + rng.normal(0, 0.003, (50, 4))
    mean, cov = kalman.initiate(kalman.measure_boxes(boxes[:1]))
    for b in boxes[1:]:
        mean, cov = kalman.predict(mean, cov, 1 / FPS)
        mean, cov = kalman.correct(mean, cov, kalman.measure_boxes(b[None]))
    assert np.abs(mean[0, 4:6]).max() < 0.01  # < 1% of the frame per second


def test_kalman_prediction_does_not_depend_on_how_time_is_split() -> None:
    mean, cov = kalman.initiate(kalman.measure_boxes(np.array([box_at(0.5, 0.5)])))
    mean[:, 4:] = [0.1, -0.05, 0.01, 0.0]
    once = kalman.predict(mean, cov, 0.4)
    twice = kalman.predict(*kalman.predict(mean, cov, 0.2), 0.2)
    np.testing.assert_allclose(once[0], twice[0])
    np.testing.assert_allclose(once[1], twice[1])


def test_3000_frames_of_five_objects_track_without_blowing_up() -> None:
    lanes = [0.1, 0.3, 0.5, 0.7, 0.9]
    seen = []
    for lane, y in enumerate(lanes):
        label, speed = f"lane{lane}", 0.05 + 0.02 * lane
        for frame in range(3000):
            x = abs(((frame / FPS * speed) % 1.6) - 0.8) + 0.1  # back and forth in 0.1..0.9
            seen.append(Seen(label, frame, box_at(x, y, 0.05, 0.1)))
    ids = ids_by_label(seen)
    assert one_id_each(ids)
