"""Which regions of change were a person's: the person track is the object, and a motion track
that was only that person's region is dropped; a region that held nobody stays an object.
Truth is built into the boxes: where each person and each moving thing is on every frame."""

from __future__ import annotations

import numpy as np

from tasks.detections import Detections
from tasks.track.stage import held_rows, without_people

STEP = 0.2


def boxes_on(
    frames: range, box: tuple[float, float, float, float], dx: float, track: int
) -> Detections:
    """``box`` moving right by ``dx`` a frame on ``frames`` as track ``track``."""
    n = len(frames)
    shift = dx * np.arange(n, dtype=np.float32)
    boxes = np.tile(np.asarray(box, np.float32), (n, 1))
    boxes[:, [0, 2]] += shift[:, None]
    index = np.asarray(list(frames), np.int64)
    return Detections(
        boxes,
        np.full(n, 0.9),
        np.zeros(n, np.int64),
        index,
        (STEP * index).astype(np.float32),
        np.full(n, track),
    )


PERSON = (0.10, 0.30, 0.20, 0.80)  # head to feet, walking right 0.01 a frame
TOP_HALF = (0.09, 0.30, 0.21, 0.55)  # the change a walker makes over legs-coloured ground
WHOLE = (0.08, 0.28, 0.22, 0.82)  # the person and a little more
BESIDE = (0.40, 0.50, 0.60, 0.70)  # a cart a person's width away


def kept(tracks: Detections, people: Detections) -> dict[int, bool]:
    keep = without_people(tracks, np.zeros(len(tracks), bool), people)
    return {int(t): bool(keep[tracks.track_ids == t].all()) for t in np.unique(tracks.track_ids)}


def test_a_region_that_is_only_part_of_a_person_is_the_person() -> None:
    person = boxes_on(range(20), PERSON, 0.01, 1)
    tracks = Detections.concatenate(
        [boxes_on(range(20), TOP_HALF, 0.01, 1), boxes_on(range(20), WHOLE, 0.01, 2)]
    )
    assert held_rows(tracks, person).all()
    assert kept(tracks, person) == {1: False, 2: False}


def test_regions_beside_a_person_or_holding_one_for_a_minority_stay_objects() -> None:
    walker = boxes_on(range(40), PERSON, 0.01, 1)
    person = walker.select((walker.frame_index >= 10) & (walker.frame_index < 20))  # 2 s seen
    cart = boxes_on(range(20), BESIDE, 0.01, 1)
    on_path = boxes_on(range(40), PERSON, 0.01, 9)
    half = on_path.select(on_path.frame_index < 20).with_track_ids(np.full(20, 2))
    most_alone = on_path.select(on_path.frame_index >= 10).with_track_ids(np.full(30, 3))
    tracks = Detections.concatenate([cart, half, most_alone])
    assert not held_rows(cart, person).any()
    # the person is in 10 of the 20 rows of track 2 (MIN_SHARE: a half is the person's region)
    # and in 10 of the 30 of track 3 (a thing that moved on alone for 4 s)
    assert kept(tracks, person) == {1: True, 2: False, 3: True}


def test_a_small_thing_passing_through_a_person_for_a_moment_stays_an_object() -> None:
    person = boxes_on(range(30), PERSON, 0.0, 1)  # standing
    # a ball rolling left to right across the frame: inside the person's box on 2 of 20 frames
    ball = boxes_on(range(20), (0.0, 0.6, 0.04, 0.64), 0.05, 1)
    inside = held_rows(ball, person)
    truth = (ball.boxes[:, 0] >= PERSON[0] - 0.02) & (ball.boxes[:, 2] <= PERSON[2] + 0.02)
    assert inside.sum() == truth.sum() < len(ball) / 2
    assert kept(ball, person) == {1: True}


def test_no_people_keep_every_region() -> None:
    tracks = boxes_on(range(5), BESIDE, 0.0, 1)
    empty = tracks.select(np.zeros(len(tracks), bool))
    assert without_people(tracks, np.zeros(5, bool), empty).all()
