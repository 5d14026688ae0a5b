"""The person detector stops looking at a box whose looks have settled, and looks again when the
box splits, merges, vanishes for a while or changes size. Truth is built into the scene: where
each person and each blob is on every sampled frame, and a stand-in for HOG that finds the
people there (and misses some looks, as HOG does); the track stage's vote on the detector's
boxes must name every object as it does when every box is looked at, with fewer looks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pytest

from tasks.detect.detectors import person
from tasks.detect.detectors.base import FrameView
from tasks.detect.detectors.person import PersonConfig, PersonDetector
from tasks.detections import Detections
from tasks.track.classes import vote_classes

STEP = 0.2
MIN_HEIGHT = PersonConfig().min_height
Truth = dict[int, list[tuple[np.ndarray, bool]]]  # frame -> (box, is a person)


@dataclass
class Hog:
    """The stand-in's scene, the frames it misses people on, and how many looks it made."""

    truth: Truth = field(default_factory=dict)
    misses: set[int] = field(default_factory=set)
    looks: int = 0


def box(x: float, y: float = 0.2, w: float = 0.1, h: float = 0.3) -> np.ndarray:
    return np.array([x, y, x + w, y + h], np.float32)


def walker(frames: range, x0: float, y: float = 0.2, w: float = 0.1) -> dict[int, np.ndarray]:
    """A box moving right by 0.005 a frame."""
    return {f: box(x0 + 0.005 * (f - frames.start), y, w) for f in frames}


def scene(*objects: tuple[dict[int, np.ndarray], bool]) -> Truth:
    truth: Truth = {}
    for boxes, is_person in objects:
        for frame, b in boxes.items():
            truth.setdefault(frame, []).append((b, is_person))
    return truth


def ones(n: int) -> np.ndarray:
    return np.ones(n, np.float32)


def views(truth: Truth, frames: int) -> list[FrameView]:
    out = []
    for f in range(frames):
        rows = truth.get(f, [])
        b = np.stack([r[0] for r in rows]) if rows else np.zeros((0, 4), np.float32)
        n = len(b)
        motion = Detections(
            b, ones(n), np.zeros(n, np.int64), np.full(n, f), ones(n) * np.float32(f * STEP)
        )
        out.append(FrameView(f, f * STEP, f == 0, "unused", (240, 180), motion))
    return out


@pytest.fixture
def hog(monkeypatch: pytest.MonkeyPatch) -> Iterator[Hog]:
    """HOG replaced by the truth: a look finds the people whose box lies in the looked box,
    except on the frames in ``misses``; counts the looks."""
    state = Hog()

    def read_grey(view: FrameView) -> FrameView:
        return view

    def people_in_box(
        view: FrameView, looked: np.ndarray, cfg: PersonConfig
    ) -> tuple[np.ndarray, np.ndarray]:
        state.looks += 1
        if view.index in state.misses:
            return np.zeros((0, 4), np.float32), np.zeros(0, np.float32)
        found = [
            b + np.array([0.01, 0.01, -0.01, -0.01], np.float32)
            for b, is_person in state.truth.get(view.index, [])
            if is_person
            and np.all(b[:2] >= looked[:2] - 0.02)
            and np.all(b[2:] <= looked[2:] + 0.02)
        ]
        if not found:
            return np.zeros((0, 4), np.float32), np.zeros(0, np.float32)
        return np.stack(found).astype(np.float32), np.full(len(found), 0.8, np.float32)

    monkeypatch.setattr(person, "read_grey", read_grey)
    monkeypatch.setattr(person, "people_in_box", people_in_box)
    yield state


def run(hog: Hog, truth: Truth, frames: int, **config: float) -> Detections:
    """The detector on ``frames`` of ``truth``; no look a second unless ``recheck_s`` says."""
    hog.truth, hog.looks = truth, 0
    chosen = PersonConfig.model_validate({"recheck_s": 0.0, **config})
    return PersonDetector(chosen).detect(views(truth, frames))


def tracks(objects: list[dict[int, np.ndarray]]) -> Detections:
    """The truth's objects as tracks (track id = position in ``objects``)."""
    rows = [(f, b, i) for i, boxes in enumerate(objects) for f, b in boxes.items()]
    n = len(rows)
    return Detections(
        np.stack([r[1] for r in rows]),
        ones(n),
        np.zeros(n, np.int64),
        np.asarray([r[0] for r in rows]),
        np.asarray([r[0] * STEP for r in rows], np.float32),
        np.asarray([r[2] for r in rows]),
    )


def test_the_vote_names_every_object_as_with_every_look_and_looks_less(
    hog: Hog,
) -> None:
    walking, blob = walker(range(0, 60), 0.1), walker(range(0, 60), 0.5, w=0.2)
    late, short = walker(range(30, 60), 0.1, y=0.6), walker(range(10, 13), 0.7, y=0.6)
    objects = [walking, blob, late, short]
    truth = scene((walking, True), (blob, False), (late, True), (short, True))
    hog.misses = {4, 20, 21, 40}  # HOG misses a person now and then
    every = run(hog, truth, 60, settle_looks=0)
    every_looks = hog.looks
    settled = run(hog, truth, 60)
    settled_looks = hog.looks
    votes_every = vote_classes(tracks(objects), every, "person", MIN_HEIGHT)
    votes_settled = vote_classes(tracks(objects), settled, "person", MIN_HEIGHT)
    names = {t: v.name for t, v in votes_every.items()}
    assert names == {0: "person", 1: "motion", 2: "person", 3: "person"}
    assert {t: v.name for t, v in votes_settled.items()} == names
    assert {t: v.looks for t, v in votes_settled.items()} == {
        t: v.looks for t, v in votes_every.items()
    }
    assert every_looks == 60 + 60 + 30 + 3
    assert settled_looks <= 0.25 * every_looks, (settled_looks, every_looks)


def test_a_settled_box_gets_no_more_looks(hog: Hog) -> None:
    run(hog, scene((walker(range(0, 50), 0.1), True)), 50)
    assert hog.looks == 3
    run(hog, scene((walker(range(0, 50), 0.1), False)), 50)
    assert hog.looks == 6  # no person: six looks to agree (HOG misses people more than it errs)


def test_a_miss_delays_settling_until_three_looks_agree(hog: Hog) -> None:
    hog.misses = {1}
    run(hog, scene((walker(range(0, 50), 0.1), True)), 50)
    assert hog.looks == 5  # yes, no, yes, yes, yes


def test_a_split_brings_looks_back(hog: Hog) -> None:
    pair = {f: box(0.1 + 0.005 * f, w=0.2) for f in range(0, 20)}
    left = {f: box(0.1 + 0.005 * f - 0.01 * (f - 20), w=0.08) for f in range(20, 40)}
    right = {f: box(0.22 + 0.005 * f + 0.01 * (f - 20), w=0.08) for f in range(20, 40)}
    run(hog, scene((pair, True), (left, True), (right, True)), 40)
    assert hog.looks == 3 + 3 + 3


def test_a_merge_brings_looks_back(hog: Hog) -> None:
    left, right = walker(range(0, 20), 0.1, w=0.08), walker(range(0, 20), 0.3, w=0.08)
    pair = {f: box(0.2 + 0.005 * (f - 20), w=0.26) for f in range(20, 40)}
    run(hog, scene((left, True), (right, False), (pair, True)), 40)
    assert hog.looks == 3 + 6 + 3


def test_a_box_back_after_an_occlusion_is_looked_at_again(hog: Hog) -> None:
    boxes = walker(range(0, 40), 0.1)
    hidden = {f: b for f, b in boxes.items() if not 15 <= f < 25}
    run(hog, scene((hidden, True)), 40)
    assert hog.looks == 3 + 3


def test_a_settled_box_that_changes_size_is_looked_at_again(hog: Hog) -> None:
    boxes = walker(range(0, 40), 0.1)
    grown = {
        f: (b if f < 20 else b + np.array([0, -0.1, 0, 0], np.float32)) for f, b in boxes.items()
    }
    found = run(hog, scene((grown, True)), 40)
    assert hog.looks == 4  # three, then one at the new size that agrees again
    assert set(found.frame_index.tolist()) == set(range(40))  # every frame has its person


def test_a_settled_person_is_carried_inside_its_box(hog: Hog) -> None:
    boxes = walker(range(0, 30), 0.1)
    found = run(hog, scene((boxes, True)), 30)
    assert len(found) == 30
    for f, b in boxes.items():
        hit = found.boxes[found.frame_index == f][0]
        np.testing.assert_allclose(hit, b + np.array([0.01, 0.01, -0.01, -0.01]), atol=1e-5)


def test_by_default_a_settled_box_is_looked_at_once_a_second(hog: Hog) -> None:
    hog.truth = truth = scene((walker(range(0, 50), 0.1), True))
    PersonDetector(PersonConfig()).detect(views(truth, 50))
    assert hog.looks == 3 + 9  # frames 0, 1, 2, then 7, 12 ... 47


def test_recheck_looks_again_after_its_interval(hog: Hog) -> None:
    run(hog, scene((walker(range(0, 50), 0.1), True)), 50, recheck_s=2.0)
    assert hog.looks == 3 + 4  # frames 0, 1, 2, then 12, 22, 32, 42 (every 2 s)


def test_the_detector_counts_looks_and_carried_boxes(hog: Hog) -> None:
    hog.truth = truth = scene((walker(range(0, 10), 0.1), True))
    detector = PersonDetector(PersonConfig(recheck_s=0.0))
    detector.detect(views(truth, 10))
    assert (detector.looks, detector.carried, detector.frames_seen) == (3, 7, 3)
