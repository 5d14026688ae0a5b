"""What a tracked thing looks like, and what that buys the tracker. Truth is built in: pictures
painted with known colours at known places, and two objects whose paths are known frame by frame.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image

from tasks.detections import Detections, detections_to_table
from tasks.sample.frames import frame_name
from tasks.track import appearance
from tasks.track.appearance import (
    BINS,
    box_looks,
    clean_of_others,
    clean_rows,
    detection_looks,
    look_distance,
    look_factor,
    unoccluded_rows,
    updated_models,
)
from tasks.track.sequence import track_detections
from tasks.track.stage import thumbnail_reader, track_table

RED, BLUE, GREY = (200, 30, 30), (30, 40, 200), (128, 128, 128)
STEP = 0.2


def picture(*patches: tuple[tuple[int, int, int], tuple[float, float, float, float]]) -> np.ndarray:
    """A 320x240 grey picture with flat colour patches at normalised boxes."""
    frame = np.full((240, 320, 3), GREY, np.uint8)
    for colour, (x1, y1, x2, y2) in patches:
        frame[int(y1 * 240) : int(y2 * 240), int(x1 * 320) : int(x2 * 320)] = colour
    return frame


def test_a_look_counts_the_colours_inside_the_box_not_its_rim() -> None:
    red_box, blue_box = (0.1, 0.1, 0.3, 0.4), (0.6, 0.5, 0.8, 0.9)
    frame = picture((RED, red_box), (BLUE, blue_box))
    grown = (0.05, 0.05, 0.35, 0.45)  # a loose motion box: its rim is the grey floor
    looks = box_looks(frame, np.array([red_box, blue_box, grown], np.float32))
    assert looks.shape == (3, BINS) and np.allclose(looks.sum(axis=1), 1.0)
    assert looks[0].max() == 1.0 and looks[1].max() == 1.0  # one colour, one bin each
    assert looks[0].argmax() != looks[1].argmax()
    assert looks[2].argmax() == looks[0].argmax() and looks[2].max() > 0.6


def test_a_box_outside_the_picture_has_no_look() -> None:
    looks = box_looks(picture(), np.array([[1.2, 1.2, 1.5, 1.5]], np.float32))
    assert not looks.any()


def test_looks_are_near_for_one_thing_under_noise_and_far_for_two_things() -> None:
    rng = np.random.default_rng(3)
    box = np.array([[0.2, 0.2, 0.5, 0.6]], np.float32)
    red = box_looks(picture((RED, tuple(box[0]))), box)
    noisy = picture((RED, tuple(box[0]))).astype(np.int16) + rng.integers(-12, 13, (240, 320, 3))
    red_again = box_looks(noisy.clip(0, 255).astype(np.uint8), box)
    blue = box_looks(picture((BLUE, tuple(box[0]))), box)
    distance = look_distance(np.concatenate([red, red_again]), np.concatenate([red, blue]))
    assert distance[0, 0] == pytest.approx(0.0, abs=1e-6)
    assert distance[1, 0] < 0.3 and distance[0, 1] > 0.9 and distance[1, 1] > 0.9


def test_an_unknown_look_compares_as_nan() -> None:
    known = np.eye(BINS)[:1]
    assert np.isnan(look_distance(known, np.zeros((1, BINS)))).all()


def test_clean_looks_overlap_no_other_box_and_no_other_track() -> None:
    boxes = np.array([[0.0, 0.0, 0.2, 0.2], [0.1, 0.1, 0.3, 0.3], [0.6, 0.6, 0.8, 0.8]], np.float32)
    assert clean_rows(boxes).tolist() == [False, False, True]
    # Box 0 is matched to track 0, box 1 to track 1; track 1's predicted place lies on box 0.
    places = [np.array([[0.0, 0.0, 0.2, 0.2], [0.05, 0.05, 0.15, 0.15]])]
    alone = np.array([[0.0, 0.0, 0.2, 0.2], [0.5, 0.5, 0.7, 0.7]], np.float32)
    assert clean_of_others(alone, [0, 1], places).tolist() == [False, True]


def test_a_person_in_front_keeps_a_clean_look_the_one_behind_and_two_level_do_not() -> None:
    # Person 0 stands nearer (feet at 0.9), person 1 behind (feet at 0.7), half hidden by 0.
    near, far = [0.30, 0.40, 0.40, 0.90], [0.35, 0.25, 0.45, 0.70]
    # Persons 2 and 3 stand level (feet 0.90 and 0.92), overlapping: neither is known in front.
    left, right = [0.60, 0.40, 0.70, 0.90], [0.66, 0.42, 0.76, 0.92]
    # Person 4 touches 5's box only at the rim, outside the counted inner part of both.
    rim_a, rim_b = [0.00, 0.00, 0.10, 0.30], [0.095, 0.00, 0.195, 0.30]
    boxes = np.array([near, far, left, right, rim_a, rim_b], np.float32)
    assert unoccluded_rows(boxes).tolist() == [True, False, False, False, True, True]
    assert clean_rows(boxes).tolist() == [False] * 6  # the test for any box: all touch another
    assert unoccluded_rows(np.zeros((0, 4), np.float32)).tolist() == []


def test_a_model_starts_from_its_first_look_then_follows_slowly() -> None:
    first, second = np.eye(BINS)[[0]], np.eye(BINS)[[1]]
    model = updated_models(np.zeros((1, BINS)), first)
    assert np.array_equal(model, first)
    model = updated_models(model, second)
    assert model[0, 0] == pytest.approx(1 - appearance.MODEL_RATE)


def test_detection_looks_reads_each_frame_once_and_leaves_unknown_frames_empty() -> None:
    box = (0.1, 0.1, 0.3, 0.4)
    dets = Detections(
        np.array([box, box, box], np.float32),
        np.ones(3),
        np.zeros(3),
        np.array([0, 0, 1]),
        np.array([0.0, 0.0, 0.2]),
    )
    read: list[int] = []

    def frame_at(index: int) -> np.ndarray | None:
        read.append(index)
        return picture((RED, box)) if index == 0 else None

    looks = detection_looks(dets, frame_at)
    assert read == [0, 1] and looks[:2].max() == 1.0 and not looks[2].any()


def test_look_factor_favours_like_looks_and_refuses_none() -> None:
    factors = look_factor(np.array([0.0, 0.5, 1.0]))
    assert factors[0] == 1.0 and factors[0] > factors[1] > factors[2] > 0


def meet_and_part() -> tuple[Detections, list[str], np.ndarray]:
    """A (red) comes from the left, B (blue) from the right; they meet, stand together as one
    motion box for five frames, and each goes back the way it came (so their motion, carried on
    through the meeting, points each one's track at the other)."""
    rows: list[tuple[int, tuple[float, float, float, float], str]] = []
    for f in range(18):
        a = 0.1 + 0.05 * f if f < 6 else 0.37 if f <= 10 else 0.37 - 0.05 * (f - 10)
        b = 0.75 - 0.05 * f if f < 6 else 0.43 if f <= 10 else 0.43 + 0.05 * (f - 10)
        if 6 <= f <= 10:
            rows.append((f, (min(a, b), 0.4, max(a, b) + 0.1, 0.6), "AB"))
        else:
            rows += [(f, (a, 0.4, a + 0.1, 0.6), "A"), (f, (b, 0.4, b + 0.1, 0.6), "B")]
    frames = np.array([r[0] for r in rows])
    dets = Detections(
        np.array([r[1] for r in rows], np.float32),
        np.full(len(rows), 0.9),
        np.zeros(len(rows)),
        frames,
        STEP * frames,
        np.full(len(rows), -1),
    )
    red, blue = np.eye(BINS)[0], np.eye(BINS)[10]
    colours = {"A": red, "B": blue, "AB": (red + blue) / 2}
    return dets, [r[2] for r in rows], np.array([colours[r[2]] for r in rows])


def identities_after_parting(tracked: Detections, dets: Detections, who: list[str]) -> set[str]:
    """Which of A and B end (last frame) with the track id they started with."""
    names = {
        (int(f), tuple(np.round(b, 4))): w
        for f, b, w in zip(dets.frame_index, dets.boxes, who, strict=True)
    }
    named = [  # the first and last frames (in between, merged boxes are split per track)
        (names[(int(f), tuple(np.round(b, 4)))], int(f), int(t))
        for f, b, t in zip(tracked.frame_index, tracked.boxes, tracked.track_ids, strict=True)
        if f in (0, 17)
    ]
    first = {w: t for w, f, t in named if f == 0}
    last = {w: t for w, f, t in named if f == 17}
    return {w for w in ("A", "B") if first[w] == last[w]}


def test_two_things_that_meet_and_part_keep_their_identities_by_their_looks() -> None:
    dets, who, looks = meet_and_part()
    by_place = track_detections(dets)
    assert identities_after_parting(by_place, dets, who) == set()  # places alone swap them
    by_look = track_detections(dets, looks=looks)
    assert identities_after_parting(by_look, dets, who) == {"A", "B"}


def test_looks_of_the_wrong_shape_are_refused() -> None:
    dets, _, looks = meet_and_part()
    with pytest.raises(ValueError, match="looks must have shape"):
        track_detections(dets, looks=looks[:, :3])


def test_the_track_stage_reads_looks_from_the_thumbnails(tmp_path: Path) -> None:
    """The stage's core with the sample stage's thumbnails: the meeting above, painted."""
    dets, who, _ = meet_and_part()
    for f in range(18):
        rows = [k for k in range(len(who)) if dets.frame_index[k] == f]
        boxes = [tuple(float(v) for v in dets.boxes[k]) for k in rows]
        if who[rows[0]] == "AB":  # A stands left of B inside the one motion box
            x1, y1, x2, y2 = boxes[0]
            patches = [(RED, (x1, y1, x1 + 0.1, y2)), (BLUE, (x2 - 0.1, y1, x2, y2))]
        else:
            patches = [
                (RED if who[k] == "A" else BLUE, b) for k, b in zip(rows, boxes, strict=True)
            ]
        Image.fromarray(picture(*patches)).save(tmp_path / frame_name(f), quality=90)
    table = detections_to_table(dets, "motion")
    tracked, _ = track_table(table, "motion", thumbnail_reader(tmp_path))
    assert left_ids(tracked) == (left_ids(tracked)[0],) * 2  # A is A again after parting
    by_place, _ = track_table(table, "motion")
    assert len(set(left_ids(by_place))) == 2  # without looks, B took A's id
    assert thumbnail_reader(tmp_path)(99) is None


def left_ids(table: pa.Table) -> tuple[str, str]:
    """The object id of the leftmost box at the first and at the last frame (A both times)."""
    rows = table.to_pylist()
    first, last = min(r["t_s"] for r in rows), max(r["t_s"] for r in rows)
    ends = [
        min((r for r in rows if r["t_s"] == t), key=lambda r: r["bbox"][0]) for t in (first, last)
    ]
    return str(ends[0]["track_id"]), str(ends[1]["track_id"])
