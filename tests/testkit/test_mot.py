"""``testkit.mot.score_tracks`` on hand-built frames whose right figures are known.

Two people walk in place: A (id 1) on the left in every frame, B (id 2) on the right in some.
Frames are numbered as in the labels (10 fps, so frame 30 is at 3.0 s).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from testkit.mot import TruthFrame, score_tracks

A, B = 1, 2
BOXES = {
    A: [0.10, 0.10, 0.20, 0.40],
    B: [0.60, 0.10, 0.70, 0.40],
    3: [0.40, 0.50, 0.45, 0.60],  # a third, small and hidden one (made difficult below)
}
FRAMES = (10, 30, 50, 70)
FPS = 10.0
NAN = float("nan")  # motmetrics' precision with no hypothesis counted (0 / 0)


def _truth(frame: int, ids: Sequence[int], difficult: Sequence[int] = ()) -> TruthFrame:
    return TruthFrame(
        frame,
        frame / FPS,
        np.asarray([BOXES[i] for i in ids], np.float32).reshape(-1, 4),
        np.asarray(ids, np.int64),
        np.asarray([i in difficult for i in ids], dtype=bool),
    )


def _row(frame: int, person: int, hyp: str, t_s: float | None = None) -> dict[str, Any]:
    """A hypothesis box exactly on ``person`` (a little shifted: IoU 0.82, a match)."""
    x1, y1, x2, y2 = BOXES[person]
    return {
        "t_s": frame / FPS if t_s is None else t_s,
        "bbox": [x1 + 0.01, y1, x2 + 0.01, y2],
        "class": "person",
        "track_id": hyp,
        "identity_id": f"idn-{hyp}",
    }


def _both() -> list[TruthFrame]:
    return [_truth(f, [A, B]) for f in FRAMES]


@pytest.mark.parametrize("key", ["track_id", "identity_id"])
def test_perfect_hypotheses_score_one(key: str) -> None:
    rows = [_row(f, p, h) for f in FRAMES for p, h in ((A, "a"), (B, "b"))]
    got = score_tracks(_both(), rows, key)  # type: ignore[arg-type]
    assert (got.mota, got.idf1, got.precision, got.recall) == (1.0, 1.0, 1.0, 1.0)
    assert (got.switches, got.false_positives, got.misses) == (0, 0, 0)
    assert (got.objects, got.people, got.mostly_tracked, got.mixed) == (8, 2, 2, (0, 2))
    assert (got.frames_scored, got.frames_labelled) == (4, 4)


def test_an_id_that_jumps_from_one_person_to_another_is_one_switch_and_mixed() -> None:
    """``x`` follows A, then B once B is in view; ``y`` takes A over: A changes id once."""
    truth = [_truth(10, [A]), _truth(30, [A]), _truth(50, [A, B]), _truth(70, [A, B])]
    rows = [_row(10, A, "x"), _row(30, A, "x")]
    rows += [_row(f, p, h) for f in (50, 70) for p, h in ((B, "x"), (A, "y"))]
    got = score_tracks(truth, rows, "track_id")
    assert got.switches == 1
    assert got.mixed == (1, 2)
    assert got.mota == pytest.approx(1 - 1 / 6)


def test_a_jump_between_people_never_in_view_together_is_not_mixed() -> None:
    truth = [_truth(10, [A]), _truth(30, [B])]
    got = score_tracks(truth, [_row(10, A, "x"), _row(30, B, "x")], "track_id")
    assert got.mixed == (0, 1)


def test_a_sampled_frame_without_rows_is_all_misses() -> None:
    """Frame 30 was sampled (``frames.parquet`` says so) but holds no person row."""
    rows = [_row(f, p, h) for f in (10, 50, 70) for p, h in ((A, "a"), (B, "b"))]
    got = score_tracks(_both(), rows, "track_id", sampled=[f / FPS for f in FRAMES])
    assert got.recall == pytest.approx(6 / 8)
    assert (got.misses, got.precision, got.frames_scored) == (2, 1.0, 4)


def test_one_missing_person_lowers_recall_by_one_box() -> None:
    rows = [_row(f, p, h) for f in FRAMES for p, h in ((A, "a"), (B, "b")) if (f, p) != (30, B)]
    got = score_tracks(_both(), rows, "track_id")
    assert got.misses == 1
    assert (got.recall, got.mota) == pytest.approx((7 / 8, 7 / 8))


def test_frames_not_sampled_are_not_scored() -> None:
    """The run looked at 1.0 s and 3.0 s only (one at float32's 1.0000000149); 5.05 s falls
    between frames. Frames 50 and 70 are neither misses nor hits."""
    rows = [_row(10, A, "a", t_s=1.0000000149), _row(10, B, "b"), _row(30, A, "a")]
    rows += [_row(30, B, "b"), _row(50, A, "a", t_s=5.05)]
    got = score_tracks(_both(), rows, "track_id")
    assert (got.frames_scored, got.frames_labelled, got.objects) == (2, 4, 4)
    assert (got.recall, got.precision, got.false_positives) == (1.0, 1.0, 0)


def test_no_labelled_frame_sampled_is_an_error() -> None:
    with pytest.raises(ValueError, match="no labelled frame"):
        score_tracks(_both(), [_row(10, A, "a", t_s=0.5)], "track_id")


@pytest.mark.parametrize(
    ("hyps", "objects", "false_positives", "misses", "precision"),
    [
        ((A, 3), 1, 0, 0, 1.0),  # a hypothesis on the difficult label: neither TP nor FP
        ((A,), 1, 0, 0, 1.0),  # the difficult label missed: no miss
        ((3,), 1, 0, 1, NAN),  # only the difficult one found: A missed, no hypothesis counted
        ((A, B), 1, 1, 0, 0.5),  # B is not labelled in this frame: a false positive
    ],
)
def test_difficult_labels_are_dont_care(
    hyps: tuple[int, ...], objects: int, false_positives: int, misses: int, precision: float
) -> None:
    truth = [_truth(10, [A, 3], difficult=[3])]
    rows = [_row(10, p, f"h{p}") for p in hyps]
    got = score_tracks(truth, rows, "track_id")
    assert (got.objects, got.false_positives, got.misses) == (objects, false_positives, misses)
    assert got.precision == pytest.approx(precision, nan_ok=True)


def test_estimated_boxes_on_scored_frames_are_counted() -> None:
    rows = [{**_row(10, A, "a"), "estimated": True}, _row(10, B, "b")]
    rows.append({**_row(20, A, "a"), "estimated": True})  # frame 20 is not labelled
    assert score_tracks(_both(), rows, "track_id").estimated == 1


def test_a_row_without_the_hypothesis_id_is_an_error() -> None:
    """Rows without an identity are not all one hypothesis."""
    rows = [_row(10, A, "a"), {**_row(10, B, "b"), "identity_id": None}]
    with pytest.raises(ValueError, match="has no identity_id"):
        score_tracks(_both(), rows, "identity_id")


def test_sighting_truth_numbers_each_spell_in_the_picture_of_a_person() -> None:
    from testkit.mot import load_truth

    people, spells = load_truth(), load_truth(by="sighting")
    assert [t.frame for t in people] == [t.frame for t in spells]
    at = {
        t.frame: dict(zip(p.ids.tolist(), t.ids.tolist(), strict=True))
        for p, t in zip(people, spells, strict=True)
    }
    # Id 1 leaves at 21.0 s and is back at 22.5 s, out at 40.5 s, back at 50.0 s.
    assert at[10][1] == 101 and at[230][1] == 102 and at[510][1] == 103
    # Id 3 leaves at 15.0 s and comes back at 21.8 s; id 7 never leaves.
    assert at[130][3] == 301 and at[230][3] == 302 and at[130][7] == 701
    # Every spell id belongs to the person it numbers.
    assert all(s // 100 == p for f in at.values() for p, s in f.items())
