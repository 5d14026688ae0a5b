"""Naming moving objects by their looks: a track is a person when most looks agreed; faces are
tracked and linked to the person that holds them. Truth is built into the boxes: where each
person, blob and face is on every sampled frame."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from tasks.detect.detectors.person import PersonConfig
from tasks.detections import Detections, detections_to_table
from tasks.geometry import width_cover
from tasks.track.classes import ClassVote, vote_classes
from tasks.track.stage import track_table
from tasks.world_state.parts import class_votes, part_of
from tasks.world_state.stage import WorldConfig, build_world_state
from tasks.world_state.trajectories import split_tracks

STEP = 0.2
MIN_HEIGHT = PersonConfig().min_height


def walk(x0: float, frames: range, height: float = 0.3, track: int = -1) -> Detections:
    """A box 0.1 wide moving right by 0.01 a frame, on ``frames``."""
    n = len(frames)
    x = x0 + 0.01 * np.arange(n, dtype=np.float32)
    boxes = np.stack([x, np.full(n, 0.3), x + 0.1, np.full(n, 0.3 + height)], axis=1)
    return Detections(
        boxes,
        np.full(n, 0.9),
        np.zeros(n),
        np.asarray(list(frames)),
        STEP * np.asarray(list(frames), np.float32),
        np.full(n, track),
    )


def shrunk(dets: Detections, frames: set[int], name: str) -> Detections:
    """A detector's box inside each box of ``dets`` on ``frames`` only (the looks that agree)."""
    rows = np.isin(dets.frame_index, sorted(frames))
    inner = dets.boxes[rows] + np.array([0.02, 0.02, -0.02, -0.02], np.float32)
    kept = dets.select(rows)
    no_track = np.full(len(kept), -1)
    return Detections(
        inner, kept.scores, kept.class_ids, kept.frame_index, kept.t_s, no_track, (name,)
    )


def test_a_track_is_a_person_when_most_of_its_looks_agree() -> None:
    person = walk(0.0, range(20), track=1)
    blob = walk(0.5, range(20), track=2)
    tiny = walk(0.2, range(20), height=MIN_HEIGHT / 2, track=3)  # never looked at
    tracks = Detections.concatenate([person, blob, tiny])
    found = Detections.concatenate(
        [
            shrunk(person, set(range(0, 20)) - {3, 7, 11}, "person"),  # 17 of 20 looks agree
            shrunk(blob, {5, 6}, "person"),  # 2 of 20: a shadow fooled it twice
        ]
    )
    votes = vote_classes(tracks, found, "person", MIN_HEIGHT)
    assert votes[1].name == "person" and votes[1].looks == 20 and votes[1].share == 0.85
    assert votes[2].name == "motion" and votes[2].share == 0.1
    assert votes[3].name == "motion" and votes[3].looks == 0


def test_a_person_elsewhere_in_the_frame_is_no_vote() -> None:
    blob = walk(0.0, range(10), track=1)
    person_far_away = walk(0.6, range(10))
    votes = vote_classes(blob, shrunk(person_far_away, set(range(10)), "person"), "person", 0.0)
    assert votes[1].name == "motion" and votes[1].share == 0.0


def detections_table(*parts: tuple[Detections, str]) -> pa.Table:
    return pa.concat_tables([detections_to_table(d, name) for d, name in parts])


def test_the_track_stage_tracks_people_by_detection_and_tracks_faces() -> None:
    """The person detector's boxes become the person track; the motion region that was only
    that person goes; the blob nobody was found in stays a ``motion`` object."""
    person, blob = walk(0.0, range(20)), walk(0.5, range(20))
    face = Detections(
        person.boxes[:, [0, 1, 2, 1]] + np.array([0.03, 0.01, -0.03, 0.05], np.float32),
        np.full(20, 0.9),
        np.zeros(20),
        person.frame_index,
        person.t_s,
        class_names=("face",),
    )
    table = detections_table(
        (Detections.concatenate([person, blob]), "motion"),
        (shrunk(person, set(range(20)), "person"), "person"),
        (face, "face"),
    )
    tracks, count = track_table(table, "motion")
    rows = tracks.to_pylist()
    assert count == 3
    assert {(r["detector"], r["class"]) for r in rows} == {
        ("person", "person"),
        ("motion", "motion"),
        ("face", "face"),
    }
    people = [r for r in rows if r["detector"] == "person"]
    assert len(people) == 20 and not any(r["estimated"] for r in people)
    moving = [r for r in rows if r["detector"] == "motion"]
    assert all(r["bbox"][0] >= 0.5 for r in moving)  # the blob's, not the person's region
    votes = class_votes(tracks, table)
    assert [v.name for v in votes.values()] == ["motion"]


def test_the_world_state_links_a_face_to_its_person_and_keeps_the_share() -> None:
    person, other = walk(0.0, range(20), track=1), walk(0.6, range(20), track=2)
    face_boxes = person.boxes[:, [0, 1, 2, 1]] + np.array([0.03, 0.01, -0.03, 0.05], np.float32)
    both = Detections.concatenate([person, other])
    tracks = Detections(
        np.concatenate([both.boxes, face_boxes]),
        np.full(60, 0.9),
        np.concatenate([np.zeros(40), np.ones(20)]),  # 0: person, 1: face
        np.concatenate([both.frame_index, person.frame_index]),
        np.concatenate([both.t_s, person.t_s]),
        np.concatenate([both.track_ids, np.full(20, 3)]),
        ("person", "face"),
    )
    frames = [
        {
            "sample_index": i,
            "t_s": STEP * i,
            "refresh": i == 0,
            "refresh_reason": "start",
            "scene_score": 0.0,
        }
        for i in range(25)
    ]
    ids = {1: "obj_p1", 2: "obj_p2", 3: "obj_f"}
    votes = {"obj_p1": ClassVote("person", 0.85, 20), "obj_p2": ClassVote("person", 0.6, 20)}
    world = build_world_state(tracks, frames, WorldConfig((), STEP), ids, votes)
    objects = {o["object_id"]: o for o in world.objects}
    assert objects["obj_p1"]["class"] == "person" and objects["obj_f"]["class"] == "face"
    assert objects["obj_p1"]["confidence"] == 0.85  # how sure the class is
    assert json.loads(objects["obj_p1"]["attributes"])["class_looks"] == 20
    parts = [r for r in world.relations if r["predicate"] == "part_of"]
    assert [(r["subject_id"], r["object_id"]) for r in parts] == [("obj_f", "obj_p1")]
    assert parts[0]["start_s"] == 0.0 and abs(parts[0]["end_s"] - 19 * STEP) < 1e-6
    near = [r for r in world.relations if r["predicate"] == "near"]
    assert all("obj_f" not in (r["subject_id"], r["object_id"]) for r in near)


def test_a_face_outside_every_person_is_part_of_nobody() -> None:
    person = split_tracks(walk(0.0, range(10), track=1))[0]
    face = split_tracks(walk(0.7, range(10), height=0.05, track=2))[0]
    assert part_of([(face, "f")], [(person, "p")]) == []


def boxes(*rows: tuple[float, float, float, float]) -> np.ndarray:
    return np.asarray(rows, dtype=np.float32).reshape(-1, 4)


def test_width_cover_spans_the_union_of_the_hits_inside_the_box() -> None:
    outer = boxes((0.0, 0.0, 1.0, 1.0))[0]
    cases = [
        (boxes(), 0.0),
        (boxes((0.1, 0.0, 0.5, 1.0)), 0.4),
        (boxes((0.0, 0.0, 0.4, 1.0), (0.5, 0.0, 0.9, 1.0)), 0.8),  # two people side by side
        (boxes((0.0, 0.0, 0.4, 1.0), (0.2, 0.0, 0.6, 1.0)), 0.6),  # overlapping hits count once
        (boxes((-0.5, 0.0, 0.3, 1.0)), 0.3),  # clipped to the box
    ]
    for inner, want in cases:
        assert width_cover(inner, outer) == pytest.approx(want)


def rounded_blob(frames: range) -> Detections:
    """A 186x176 px blob at 1280x720 moving right (as wide as it is tall, no person)."""
    n = len(frames)
    x = 0.1 + 0.01 * np.arange(n, dtype=np.float32)
    w, h = 186 / 1280, 176 / 720
    rows = np.stack([x, np.full(n, 0.3), x + w, np.full(n, 0.3 + h)], axis=1)
    index = np.asarray(list(frames))
    return Detections(rows, np.full(n, 0.9), np.zeros(n), index, STEP * index, np.full(n, 1))


def test_a_person_shaped_window_on_the_edge_of_a_blob_is_no_person() -> None:
    """HOG's smallest hit in a box scaled 128 px tall is a 40x96 person: on a square blob it
    lies inside the box but spans a third of its width, on every look."""
    blob = rounded_blob(range(20))
    b = blob.boxes
    w, h = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
    hit = np.stack([b[:, 0], b[:, 1] + 0.1 * h, b[:, 0] + 0.33 * w, b[:, 1] + 0.85 * h], axis=1)
    found = Detections(
        hit.astype(np.float32),
        blob.scores,
        blob.class_ids,
        blob.frame_index,
        blob.t_s,
        class_names=("person",),
    )
    votes = vote_classes(blob, found, "person", MIN_HEIGHT)
    assert votes[1].name == "motion" and votes[1].looks == 20 and votes[1].share == 0.0


def test_two_people_side_by_side_in_one_box_are_a_person() -> None:
    pair = walk(0.0, range(10), track=1)  # one box 0.1 wide holding two walkers
    b = pair.boxes
    left = b + np.array([0.005, 0.01, -0.055, -0.01], np.float32)
    right = b + np.array([0.055, 0.01, -0.005, -0.01], np.float32)
    people = Detections(
        np.concatenate([left, right]),
        np.concatenate([pair.scores, pair.scores]),
        np.zeros(20),
        np.concatenate([pair.frame_index, pair.frame_index]),
        np.concatenate([pair.t_s, pair.t_s]),
        class_names=("person",),
    )
    assert vote_classes(pair, people, "person", MIN_HEIGHT)[1].name == "person"
