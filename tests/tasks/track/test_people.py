"""Offline person tracking (``tasks.track.people``) against KNOWN truth.

Every scene is people walking straight at known speeds, sampled at 5 fps; the detector's boxes
are the truth boxes, minus the frames where a person is hidden or missed, plus false positives
where a case needs them. Each person has a colour (a one-hot look); a box that overlaps another
looks like a mixture of both, as a real box holding two people does. Assertions are against the
truth: which person each output row lies on, and where.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest

from tasks.detections import Detections
from tasks.geometry import box_iou
from tasks.track.appearance import BINS, overlapping
from tasks.track.people import PeopleConfig, track_people
from tasks.track.people_tracklets import Tracklet, contests, predict_box

STEP = 0.2  # 5 sampled frames a second
Noise = tuple[int, list[float], float]  # a false positive: (frame, box, score)
ON_TRUTH = 0.5  # least IoU of an output box with the truth box of the person it follows


@dataclass(frozen=True)
class Walker:
    """A person ``w`` x ``h`` (normalised) at ``(x, y)`` at t = 0, walking ``vx`` frame widths
    a second, in view (and detected) on frames ``first..last`` except ``hidden`` ones."""

    x: float
    vx: float
    y: float = 0.3
    w: float = 0.1
    h: float = 0.3
    first: int = 0
    last: int = 29
    hidden: frozenset[int] = frozenset()
    colour: int = 0

    def box(self, frame: int) -> np.ndarray:
        x = self.x + self.vx * frame * STEP
        return np.array([x, self.y, x + self.w, self.y + self.h])

    def seen(self, frame: int) -> bool:
        return self.first <= frame <= self.last and frame not in self.hidden


@dataclass(frozen=True)
class Scene:
    dets: Detections
    looks: np.ndarray
    walkers: Sequence[Walker]
    times: np.ndarray


def scene(walkers: Sequence[Walker], frames: int = 30, noise: Sequence[Noise] = ()) -> Scene:
    """The detector's rows for ``walkers`` (score 0.9) and ``noise`` rows
    ``(frame, box, score)``; looks one-hot per walker's colour, mixed where boxes overlap."""
    boxes, frame_index, scores, colours = [], [], [], []
    for f in range(frames):
        for p in walkers:
            if p.seen(f):
                boxes.append(p.box(f))
                frame_index.append(f)
                scores.append(0.9)
                colours.append(np.eye(BINS)[p.colour])
    for f, box, score in noise:
        boxes.append(np.asarray(box))
        frame_index.append(f)
        scores.append(score)
        colours.append(np.eye(BINS)[BINS - 1 - len(colours) % 4])
    # float32, as the tracker sees them: whether two boxes touch must agree with the tracker's
    boxes_a = np.asarray(boxes).reshape(-1, 4).astype(np.float32)
    frames_a = np.asarray(frame_index, np.int64)
    looks = np.asarray(colours).reshape(-1, BINS)
    mixed = looks.copy()
    for f in np.unique(frames_a):
        rows = np.flatnonzero(frames_a == f)
        touching = overlapping(boxes_a[rows], boxes_a[rows]).astype(float)
        mixed[rows] = touching @ looks[rows] / touching.sum(axis=1, keepdims=True)
    dets = Detections(
        boxes=boxes_a,
        scores=np.asarray(scores, np.float32),
        class_ids=np.zeros(len(boxes_a), np.int64),
        frame_index=frames_a,
        t_s=(frames_a * STEP).astype(np.float32),
        class_names=("person",),
    )
    return Scene(dets, mixed.astype(np.float32), walkers, np.arange(frames) * STEP)


def run(s: Scene, looks: bool = True) -> tuple[Detections, np.ndarray]:
    return track_people(s.dets, s.times, s.looks if looks else None)


def follows(tracks: Detections, s: Scene) -> dict[int, int]:
    """Track id -> the one walker every row of the track lies on (fails if a row lies on none
    or a track moves from one walker to another)."""
    owner: dict[int, int] = {}
    for row in range(len(tracks)):
        f, track = int(tracks.frame_index[row]), int(tracks.track_ids[row])
        truth = np.array([p.box(f) for p in s.walkers])
        there = np.array([p.first <= f <= p.last for p in s.walkers])  # hidden ones too
        iou = np.where(there, box_iou(tracks.boxes[row : row + 1], truth)[0], 0.0)
        assert iou.max() >= ON_TRUTH, f"track {track} at frame {f} lies on nobody"
        walker = int(iou.argmax())
        assert owner.setdefault(track, walker) == walker, f"track {track} jumps at frame {f}"
    return owner


def frames_of(tracks: Detections, track: int) -> list[int]:
    return sorted(tracks.frame_index[tracks.track_ids == track].tolist())


def one_frame_each(tracks: Detections) -> None:
    """No track is in two places at once."""
    for track in np.unique(tracks.track_ids):
        frames = tracks.frame_index[tracks.track_ids == track]
        assert len(np.unique(frames)) == len(frames), f"track {track} has two rows in a frame"


CROSSING = [
    Walker(x=0.1, vx=0.12, y=0.30, colour=0, last=39),
    Walker(x=0.8, vx=-0.12, y=0.33, colour=6, last=39),
]


def test_crossing_people_keep_their_own_ids() -> None:
    s = scene(CROSSING, frames=40)
    tracks, estimated = run(s)
    owner = follows(tracks, s)
    assert sorted(owner.values()) == [0, 1]  # one track per person, each on its own person
    for track in owner:
        assert frames_of(tracks, track) == list(range(40))  # through the crossing
    # While the boxes overlap, who is who was decided by colours: those rows are estimated.
    assert 0 < estimated.sum() <= 6
    one_frame_each(tracks)


def test_without_looks_a_crossing_stays_in_pieces_none_of_which_jumps() -> None:
    s = scene(CROSSING, frames=40)
    tracks, _ = run(s, looks=False)
    owner = follows(tracks, s)
    assert sorted(set(owner.values())) == [0, 1]
    assert len(owner) == 4  # before and after the crossing, each person
    one_frame_each(tracks)


@pytest.mark.parametrize("with_looks", [True, False], ids=["looks", "motion-only"])
def test_a_person_hidden_for_1_5_s_is_one_track_with_the_gap_estimated(with_looks: bool) -> None:
    hidden = frozenset(range(10, 18))  # t = 2.0 .. 3.4 s: seen at 1.8 s and again at 3.6 s
    s = scene([Walker(x=0.05, vx=0.1, hidden=hidden)])
    tracks, estimated = run(s, with_looks)  # alone in view, motion alone may link
    assert follows(tracks, s) == {1: 0}
    assert frames_of(tracks, 1) == list(range(30))
    assert sorted(tracks.frame_index[estimated].tolist()) == sorted(hidden)
    assert (tracks.scores[estimated] == 0).all()


def test_a_gap_longer_than_max_gap_gives_two_tracks() -> None:
    hidden = frozenset(range(10, 35))  # 5 s unseen
    s = scene([Walker(x=0.05, vx=0.02, hidden=hidden, last=49)], frames=50)
    tracks, estimated = run(s)
    assert follows(tracks, s) == {1: 0, 2: 0}
    assert frames_of(tracks, 1) == list(range(10))
    assert frames_of(tracks, 2) == list(range(35, 50))
    assert not estimated.any()


def test_people_in_view_together_are_never_one_track() -> None:
    walkers = [
        Walker(x=0.05, vx=0.1, colour=0, hidden=frozenset({4, 5, 12})),
        Walker(x=0.18, vx=0.1, y=0.32, colour=0, hidden=frozenset({5, 6, 13})),  # side by side
        Walker(x=0.2, vx=0.0, y=0.6, colour=0, first=8, last=25),  # standing, appears later
        Walker(x=0.9, vx=-0.05, y=0.5, colour=3, last=12),
    ]
    s = scene(walkers)
    tracks, _ = run(s)
    one_frame_each(tracks)
    assert sorted(follows(tracks, s).values()) == [0, 1, 2, 3]


def test_sparse_false_positives_make_no_track() -> None:
    rng = np.random.default_rng(7)
    noise = []
    for f in range(0, 30, 2):
        x, y = rng.uniform(0.0, 0.85, size=2) * [1, 0.7]
        noise.append((f, [x, y, x + 0.08, y + 0.25], float(rng.uniform(0.35, 0.6))))
    s = scene([Walker(x=0.05, vx=0.1, y=0.7, h=0.25)], noise=noise)
    for with_looks in (True, False):
        tracks, _ = run(s, with_looks)
        assert follows(tracks, s) == {1: 0}


def test_missed_detections_every_third_frame_are_estimated() -> None:
    walkers = [
        Walker(x=0.05, vx=0.1, hidden=frozenset(range(0, 30, 3))),
        Walker(x=0.9, vx=-0.1, y=0.1, h=0.2, colour=5, hidden=frozenset(range(1, 30, 3))),
    ]
    s = scene(walkers)
    tracks, estimated = run(s)
    owner = follows(tracks, s)
    assert sorted(owner.values()) == [0, 1]
    for track, walker in owner.items():
        rows = tracks.track_ids == track
        seen = [f for f in range(30) if walkers[walker].seen(f)]
        assert frames_of(tracks, track) == list(range(seen[0], seen[-1] + 1))
        missed = sorted(tracks.frame_index[rows & estimated].tolist())
        assert missed == [f for f in range(seen[0], seen[-1]) if not walkers[walker].seen(f)]


def test_a_person_leaving_is_not_linked_to_one_entering_far_away() -> None:
    leaving = Walker(x=0.6, vx=0.1, last=14)  # last seen at the right edge at 2.8 s
    entering = Walker(x=-0.4, vx=0.1, first=20, colour=0)  # at the left edge at 4 s, same look
    s = scene([leaving, entering])
    tracks, estimated = run(s)
    assert follows(tracks, s) == {1: 0, 2: 1}
    assert not estimated.any()


def test_the_result_does_not_depend_on_the_order_of_rows() -> None:
    noise = [(3, [0.5, 0.1, 0.58, 0.3], 0.55), (17, [0.2, 0.6, 0.28, 0.85], 0.4)]
    hidden = frozenset({5, 11, 12, 25})
    walkers = [*CROSSING[:1], Walker(x=0.8, vx=-0.12, y=0.33, colour=6, hidden=hidden)]
    s = scene(walkers, frames=40, noise=noise)
    expected, expected_est = run(s)
    for seed in range(3):
        order = np.random.default_rng(seed).permutation(len(s.dets))
        shuffled = Scene(s.dets.select(order), s.looks[order], s.walkers, s.times)
        got, got_est = run(shuffled)
        np.testing.assert_array_equal(got.boxes, expected.boxes)
        np.testing.assert_array_equal(got.track_ids, expected.track_ids)
        np.testing.assert_array_equal(got.frame_index, expected.frame_index)
        np.testing.assert_array_equal(got_est, expected_est)


def test_settings_and_inputs_that_cannot_be_tracked_are_refused() -> None:
    with pytest.raises(ValueError, match="low_score"):
        PeopleConfig(low_score=0.6, high_score=0.5)
    s = scene([Walker(x=0.05, vx=0.1)])
    with pytest.raises(ValueError, match="increase"):
        track_people(s.dets, s.times[::-1])
    with pytest.raises(ValueError, match="frame_index"):
        track_people(s.dets, s.times[:10])
    with pytest.raises(ValueError, match="looks"):
        track_people(s.dets, s.times, s.looks[:, :3])


def test_no_detections_give_no_tracks() -> None:
    times = np.arange(10, dtype=np.float64) * STEP
    tracks, estimated = track_people(Detections.empty(("person",)), times)
    assert len(tracks) == 0 and len(estimated) == 0
    assert tracks.class_names == ("person",)


def test_a_jittery_box_between_two_people_walking_side_by_side_ends_neither() -> None:
    # Same colours, boxes overlapping (so no clean look), predicted apart (IoU ~0.18 < 0.3). At
    # frame 10 the detector's box of the first is off by a fifth of a width towards the second:
    # near both predictions, it still lies nearer its own, and no track is cut or swapped.
    walkers = [
        Walker(x=0.1, vx=0.05, hidden=frozenset({10})),
        Walker(x=0.17, vx=0.05),
    ]
    jitter = walkers[0].box(10) + np.array([0.02, 0.0, 0.02, 0.0])
    s = scene(walkers, noise=[(10, jitter.tolist(), 0.9)])
    for with_looks in (True, False):
        tracks, estimated = run(s, with_looks)
        assert sorted(follows(tracks, s).values()) == [0, 1]  # one track each, none jumps
        assert not estimated.any()
        one_frame_each(tracks)


def test_someone_else_in_a_leavers_place_does_not_continue_their_track() -> None:
    # The first walks off behind a pillar at frame 14; the next frame someone dressed otherwise
    # stands where the first was predicted. The place says "the same", the colours say not.
    leaving = Walker(x=0.05, vx=0.1, last=14)
    standing = Walker(x=float(leaving.box(15)[0]), vx=0.0, first=15, colour=6)
    s = scene([leaving, standing])
    tracks, _ = run(s)
    assert follows(tracks, s) == {1: 0, 2: 1}
    assert frames_of(tracks, 1) == list(range(15))
    tracks, _ = run(s, looks=False)  # without colours the place decides: one track, as before
    assert len(np.unique(tracks.track_ids)) == 1


def test_prediction_follows_the_line_of_the_last_boxes_not_their_jitter() -> None:
    line = np.array([0.1, 0.3, 0.2, 0.6]) + np.outer(np.arange(6) * STEP, [0.1, 0, 0.1, 0])
    jitter = np.outer([0.0, 0.01, -0.01, 0.01, 0.0, 0.0], [1, 0, 1, 0])  # last box: on the line
    boxes = (line + jitter)[:5]
    dets = Detections(
        boxes=boxes.astype(np.float32),
        scores=np.full(5, 0.9, np.float32),
        class_ids=np.zeros(5, np.int64),
        frame_index=np.arange(5),
        t_s=(np.arange(5) * STEP).astype(np.float32),
        class_names=("person",),
    )
    tracklet = Tracklet(list(range(5)), (np.arange(5) * STEP).tolist())
    predicted = predict_box(tracklet, dets, 5 * STEP, max_speed=1.5)
    # The last two boxes alone would predict a step of 0.01 (half the 0.02 walked).
    np.testing.assert_allclose(predicted, line[5], atol=0.002)


def test_a_contest_needs_two_tracklets_at_one_place() -> None:
    near = np.array([[True, False], [True, True]])  # box 0 could continue either tracklet
    torn, contested = contests(near, same_place=np.zeros((2, 2), dtype=bool))
    assert not torn.any() and not contested.any()  # predicted apart: the assignment decides
    torn, contested = contests(near, same_place=np.ones((2, 2), dtype=bool))
    assert torn.tolist() == [True, True] and contested.tolist() == [True, False]
