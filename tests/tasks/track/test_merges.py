"""Merged regions (``tasks.track.merges``): one box of change that holds two tracked things.

Every case is built from known paths: where each thing is in every frame, and which motion box
the detector gives (one box per thing, or their union while they touch).
"""

from __future__ import annotations

import numpy as np

from tasks.detections import Detections
from tasks.geometry import box_iou
from tasks.track.appearance import BINS
from tasks.track.merges import LiveTracks, moved_inside, split_merged
from tasks.track.sequence import track_detections, tracked_boxes

STEP = 0.2  # 5 sampled frames a second
FRAMES = 45
RED, BLUE = np.eye(BINS)[0], np.eye(BINS)[10]


def thing(x: float, y: float = 0.4, w: float = 0.08, h: float = 0.2) -> np.ndarray:
    return np.array([x, y, x + w, y + h])


def union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.concatenate([np.minimum(a[:2], b[:2]), np.maximum(a[2:], b[2:])])


def scene(
    paths: dict[str, list[np.ndarray]], colours: dict[str, np.ndarray]
) -> tuple[Detections, np.ndarray, dict[tuple[int, str], np.ndarray]]:
    """The detector's boxes for things on ``paths`` (their union where they overlap or
    touch), their looks (a merged box looks like neither: unknown), and the truth per frame."""
    boxes, frames, looks, truth = [], [], [], {}
    for f in range(len(next(iter(paths.values())))):
        here = {name: path[f] for name, path in paths.items()}
        truth.update({(f, name): box for name, box in here.items()})
        (a, box_a), (b, box_b) = here.items()
        touching = box_a[0] <= box_b[2] and box_b[0] <= box_a[2]
        if touching:
            boxes.append(union(box_a, box_b))
            looks.append(np.zeros(BINS))
            frames.append(f)
        else:
            boxes += [box_a, box_b]
            looks += [colours[a], colours[b]]
            frames += [f, f]
    return boxes_at(np.array(boxes), np.array(frames)), np.array(looks), truth


def boxes_at(boxes: np.ndarray, frames: np.ndarray) -> Detections:
    """Motion boxes ``(N, 4)`` seen on sampled ``frames`` ``(N,)``."""
    n = len(boxes)
    frame_index = frames.astype(np.int64)
    return Detections(
        boxes.astype(np.float32),
        np.full(n, 0.9, dtype=np.float32),
        np.zeros(n, dtype=np.int64),
        frame_index,
        (STEP * frame_index).astype(np.float32),
    )


def crossing() -> dict[str, list[np.ndarray]]:
    """A goes right, B goes left at the same height; their boxes touch for 7 frames."""
    return {
        "A": [thing(0.2 + 0.012 * f) for f in range(FRAMES)],
        "B": [thing(0.72 - 0.012 * f) for f in range(FRAMES)],
    }


def apart(truth: dict[tuple[int, str], np.ndarray], f: int) -> bool:
    """Whether the two things can be told apart by place at frame ``f`` (as the scorer does:
    at the very middle of a crossing one box lies on both)."""
    return bool(box_iou(truth[(f, "A")], truth[(f, "B")])[0, 0] < 0.5)


def ids_of(tracked: Detections, truth: dict[tuple[int, str], np.ndarray]) -> dict[str, set[int]]:
    """Per thing, the track ids of the rows lying on it (box IoU >= 0.5) where the two are
    apart."""
    found: dict[str, set[int]] = {}
    for f, box, track in zip(tracked.frame_index, tracked.boxes, tracked.track_ids, strict=True):
        for (frame, name), place in truth.items():
            if frame == f and apart(truth, frame) and box_iou(box, place)[0, 0] >= 0.5:
                found.setdefault(name, set()).add(int(track))
    return found


def test_two_things_crossing_in_one_box_keep_one_id_each_and_their_own_boxes() -> None:
    dets, looks, truth = scene(crossing(), {"A": RED, "B": BLUE})
    assert len(dets) < 2 * FRAMES  # the detector did merge them
    tracked = track_detections(dets, looks=looks)
    ids = ids_of(tracked, truth)
    assert len(ids["A"]) == len(ids["B"]) == 1 and ids["A"] != ids["B"], ids
    assert len(np.unique(tracked.track_ids)) == 2
    # Through the merge each thing kept a box of its own, on its true place.
    for f in (f for f in range(FRAMES) if apart(truth, f)):
        rows = np.flatnonzero(tracked.frame_index == f)
        assert len(rows) == 2, f
        for name in ("A", "B"):
            best = box_iou(tracked.boxes[rows], truth[(f, name)]).max()
            assert best >= 0.5, (f, name, best)


def test_the_crossing_is_one_box_for_several_frames() -> None:
    """The case is a real merge: for frames on end the detector gives one box, wider than
    either thing, where two things are."""
    dets, _, _ = scene(crossing(), {"A": RED, "B": BLUE})
    merged_frames = [f for f in range(FRAMES) if (dets.frame_index == f).sum() == 1]
    assert len(merged_frames) >= 6
    widths = [float(np.ptp(dets.boxes[dets.frame_index == f][0, [0, 2]])) for f in merged_frames]
    assert max(widths) > 1.5 * 0.08  # as they meet and part, far wider than either thing


def live(
    predicted: list[np.ndarray], looks: list[np.ndarray], velocity: list[tuple[float, float]]
) -> LiveTracks:
    p = np.array(predicted)
    models = np.array(looks)
    overlap = np.sqrt(models) @ np.sqrt(models).T
    return LiveTracks(
        predicted=p,
        class_ids=np.zeros(len(p), dtype=np.int64),
        eligible=np.ones(len(p), dtype=bool),
        distance=np.sqrt(np.clip(1 - overlap, 0, 1)),
        velocity=np.array(velocity, dtype=np.float64),
    )


def one_box(box: np.ndarray) -> Detections:
    return boxes_at(box[None], np.zeros(1))


def test_a_region_holding_two_moving_things_that_look_different_is_split() -> None:
    a, b = thing(0.40), thing(0.46)
    split = split_merged(
        live([a, b], [RED, BLUE], [(0.15, 0), (-0.15, 0)]),
        one_box(union(a, b)),
        np.zeros((1, BINS)),
        0.5,
    )
    assert len(split.dets) == 2 and split.split.all() and not split.looks.any()
    assert np.allclose(np.sort(split.dets.boxes[:, 0]), [0.40, 0.46], atol=1e-6)


def test_parts_of_one_thing_are_not_split() -> None:
    """Two tracks on the two halves of one thing: they look alike and move together."""
    a, b = thing(0.40, w=0.05), thing(0.46, w=0.05)
    merged = one_box(union(a, b))
    alike = split_merged(
        live([a, b], [RED, RED], [(0.15, 0), (-0.15, 0)]), merged, np.zeros((1, BINS)), 0.5
    )
    together = split_merged(
        live([a, b], [RED, BLUE], [(0.1, 0), (0.1, 0)]), merged, np.zeros((1, BINS)), 0.5
    )
    assert len(alike.dets) == len(together.dets) == 1 and not alike.split.any()


def test_a_prediction_inside_another_is_not_split_out() -> None:
    big, small = thing(0.40, w=0.2), thing(0.45, w=0.05)
    split = split_merged(
        live([big, small], [RED, BLUE], [(0.1, 0), (-0.1, 0)]),
        one_box(big),
        np.zeros((1, BINS)),
        0.5,
    )
    assert len(split.dets) == 1


def test_a_thing_with_a_box_of_its_own_is_not_taken_into_a_bigger_box() -> None:
    """A small thing seen in its own box inside a big thing's box: two boxes, no split."""
    big, small = thing(0.40, w=0.3, h=0.4), thing(0.5, y=0.5, w=0.05, h=0.1)
    dets = boxes_at(np.stack([big, small]), np.zeros(2))
    split = split_merged(
        live([big, small], [RED, BLUE], [(0.1, 0), (-0.1, 0)]), dets, np.zeros((2, BINS)), 0.5
    )
    assert len(split.dets) == 2 and not split.split.any()


def test_a_box_is_moved_inside_the_region_the_least_it_takes() -> None:
    region = np.array([0.2, 0.2, 0.6, 0.6])
    assert np.allclose(moved_inside(np.array([0.5, 0.3, 0.7, 0.5]), region), [0.4, 0.3, 0.6, 0.5])
    assert np.allclose(moved_inside(np.array([0.3, 0.3, 0.4, 0.4]), region), [0.3, 0.3, 0.4, 0.4])
    assert np.allclose(moved_inside(np.array([0.1, 0.1, 0.9, 0.3]), region), [0.2, 0.2, 0.6, 0.4])


def test_the_split_rows_and_only_they_are_marked_estimated() -> None:
    dets, looks, _ = scene(crossing(), {"A": RED, "B": BLUE})
    tracked, estimated = tracked_boxes(dets, looks=looks)
    given = {(int(f), b.tobytes()) for f, b in zip(dets.frame_index, dets.boxes, strict=True)}
    made = [
        (int(f), b.tobytes()) not in given
        for f, b in zip(tracked.frame_index, tracked.boxes, strict=True)
    ]
    assert estimated.tolist() == made and 4 <= estimated.sum() < len(estimated)
