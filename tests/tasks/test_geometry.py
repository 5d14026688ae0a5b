"""Geometry shared by the stages: box IoU, unions and NMS against hand-worked tables."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from tasks.geometry import box_iou, box_union, suppress_overlaps

Box = tuple[float, float, float, float]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((0.1, 0.1, 0.3, 0.4), (0.1, 0.1, 0.3, 0.4), 1.0),
        ((0.0, 0.0, 0.2, 0.2), (0.5, 0.5, 0.7, 0.7), 0.0),
        ((0.0, 0.0, 0.2, 0.2), (0.2, 0.0, 0.4, 0.2), 0.0),  # touching edges share no area
        ((0.0, 0.0, 2.0, 1.0), (1.0, 0.0, 3.0, 1.0), 1 / 3),  # 1 shared of 2 + 2 - 1
        ((0.0, 0.0, 1.0, 1.0), (0.0, 0.0, 2.0, 2.0), 1 / 4),  # inside: 1 of 4
        ((0.5, 0.5, 0.5, 0.5), (0.5, 0.5, 0.5, 0.5), 0.0),  # no area at all
    ],
)
def test_box_iou(a: Box, b: Box, expected: float) -> None:
    assert box_iou([a], [b])[0, 0] == pytest.approx(expected)
    assert box_iou([b], [a])[0, 0] == pytest.approx(expected)


def test_box_iou_is_every_pair() -> None:
    a = np.array([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 2.0, 2.0]])
    b = np.array([[0.0, 0.0, 1.0, 1.0], [5.0, 5.0, 6.0, 6.0], [1.0, 0.0, 3.0, 1.0]])
    iou = box_iou(a, b)
    assert iou.shape == (2, 3)
    expected = [[1.0, 0.0, 0.0], [0.25, 0.0, 1 / 5]]
    np.testing.assert_allclose(iou, expected)
    assert box_iou(np.zeros((0, 4)), b).shape == (0, 3)


def boxes_of(*rows: Box) -> npt.NDArray[np.float32]:
    return np.array(rows, dtype=np.float32).reshape(-1, 4)


@pytest.mark.parametrize(
    ("boxes", "groups", "expected"),
    [
        ([(0, 0, 1, 1)], None, [(0, 0, 1, 1)]),  # one box is its own union
        ([(0, 0, 1, 1), (2, 3, 4, 5)], None, [(0, 0, 4, 5)]),  # apart: the box around both
        ([(1, 1, 3, 3), (0, 2, 2, 4)], None, [(0, 1, 3, 4)]),  # overlapping
        ([(0, 0, 1, 1), (0.2, 0.2, 0.5, 0.5)], None, [(0, 0, 1, 1)]),  # inside: the outer box
        ([(0, 0, 1, 1), (5, 5, 6, 6), (1, 1, 2, 2)], [0, 1, 0], [(0, 0, 2, 2), (5, 5, 6, 6)]),
        ([(5, 5, 6, 6), (0, 0, 1, 1)], [1, 0], [(0, 0, 1, 1), (5, 5, 6, 6)]),  # by group number
        ([], [], []),
    ],
)
def test_box_union(boxes: list[Box], groups: list[int] | None, expected: list[Box]) -> None:
    ids = None if groups is None else np.array(groups, dtype=np.int64)
    union = box_union(boxes_of(*boxes), ids)
    assert union.dtype == np.float32  # the boxes' dtype is kept
    np.testing.assert_array_equal(union, boxes_of(*expected))


def test_box_union_of_no_box_in_one_group_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one box"):
        box_union(np.zeros((0, 4)))


def test_box_union_of_plain_tuples_is_float64() -> None:
    assert box_union([(0, 0, 1, 1), (1, 1, 2, 3)]).tolist() == [[0.0, 0.0, 2.0, 3.0]]
    assert box_union([(0, 0, 1, 1)]).dtype == np.float64


SQUARE, SHIFTED, FAR = (0, 0, 10, 10), (1, 1, 11, 11), (50, 50, 60, 60)  # SQUARE~SHIFTED: 0.68
HALF = (5, 0, 15, 10)  # IoU with SQUARE: 1/3


@pytest.mark.parametrize(
    ("boxes", "scores", "iou", "class_ids", "kept"),
    [
        ([], [], 0.45, None, []),
        ([SQUARE, SHIFTED, FAR], [0.8, 0.9, 0.5], 0.45, None, [1, 2]),  # weaker overlap goes
        ([SQUARE, SHIFTED, FAR], [0.8, 0.9, 0.5], 0.45, [0, 0, 0], [1, 2]),  # one class: same
        ([SQUARE, SHIFTED, FAR], [0.8, 0.9, 0.5], 0.45, [0, 1, 0], [1, 0, 2]),  # classes apart
        ([SQUARE, HALF], [0.9, 0.8], 0.45, None, [0, 1]),  # 1/3 is at most 0.45: both kept
        ([SQUARE, HALF], [0.9, 0.8], 0.3, None, [0]),  # above 0.3: the weaker goes
        ([SQUARE, HALF], [0.9, 0.8], 1 / 3, None, [0, 1]),  # exactly at the threshold: kept
        ([SQUARE, SQUARE], [0.5, 0.5], 0.45, None, [0]),  # equal scores: input order wins
        ([SQUARE, SHIFTED, FAR], [0.1, 0.2, 0.3], 0.0, None, [2, 1]),  # best score first
        # A chain: b overlaps a and c, a and c do not; once b (best) is kept, both go.
        ([(0, 0, 10, 10), (4, 0, 14, 10), (8, 0, 18, 10)], [0.8, 0.9, 0.7], 0.3, None, [1]),
        # ...and with a best, b dropped by it, c (apart from a) stays: greedy, not transitive.
        ([(0, 0, 10, 10), (4, 0, 14, 10), (9, 0, 19, 10)], [0.9, 0.8, 0.7], 0.3, None, [0, 2]),
    ],
)
def test_suppress_overlaps(
    boxes: list[Box],
    scores: list[float],
    iou: float,
    class_ids: list[int] | None,
    kept: list[int],
) -> None:
    ids = None if class_ids is None else np.array(class_ids, dtype=np.int64)
    result = suppress_overlaps(boxes_of(*boxes), np.array(scores, np.float32), iou, ids)
    assert result.dtype == np.int64
    assert result.tolist() == kept
