"""Geometry shared by the stages: box IoU against hand-computed areas."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.geometry import box_iou

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
