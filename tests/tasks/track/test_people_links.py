"""Staged linking of person tracklets (``tasks.track.people_links``): the short bits seen where
people cross go into a gap only where they lie on that gap's line and on no other's."""

from __future__ import annotations

import numpy as np

from tasks.detections import Detections
from tasks.track.people_links import place_short
from tasks.track.people_tracklets import Tracklet

MATCH_IOU = 0.3


def _dets(boxes: list[list[float]]) -> Detections:
    n = len(boxes)
    return Detections(
        boxes=np.asarray(boxes, np.float32),
        scores=np.full(n, 0.9, np.float32),
        class_ids=np.zeros(n, np.int64),
        frame_index=np.arange(n, dtype=np.int64),
        t_s=np.zeros(n, np.float32),
        class_names=("person",),
    )


def _walker(x: float, y: float = 0.3) -> list[float]:
    return [x, y, x + 0.1, y + 0.3]


def test_a_short_bit_on_one_gap_line_is_put_in_it_and_one_on_two_lines_or_none_is_not() -> None:
    # Walker A: x 0.1 at 1.0 s to x 0.3 at 2.0 s (a gap); walker B, far below: the same times.
    boxes = [
        _walker(0.1),
        _walker(0.3),  # A's end (row 0) and start (row 1)
        _walker(0.1, 0.6),
        _walker(0.3, 0.6),  # B's end (row 2) and start (row 3)
        _walker(0.2),
        _walker(0.22),  # a bit on A's line at 1.5 and 1.6 s (rows 4, 5)
        _walker(0.7),  # a bit on no line, at 1.5 s (row 6)
        [0.15, 0.3, 0.25, 0.9],  # a box over both lines at 1.5 s (row 7)
    ]
    dets = _dets(boxes)
    tracklets = [
        Tracklet([0], [1.0]),
        Tracklet([1], [2.0]),
        Tracklet([2], [1.0]),
        Tracklet([3], [2.0]),
        Tracklet([4, 5], [1.5, 1.6]),
        Tracklet([6], [1.5]),
        Tracklet([7], [1.5]),
    ]
    links = {0: 1, 2: 3}
    short = np.array([False] * 4 + [True] * 3)
    placed = place_short(tracklets, dets, links, short, MATCH_IOU)
    assert placed == {0: 4, 4: 1, 2: 3}  # A's gap takes the bit on its line, alone
    assert links == {0: 1, 2: 3}  # the given links are not changed in place


def test_two_bits_that_overlap_in_time_on_one_gap_are_both_left_out() -> None:
    boxes = [_walker(0.1), _walker(0.3), _walker(0.2), _walker(0.21)]
    tracklets = [
        Tracklet([0], [1.0]),
        Tracklet([1], [2.0]),
        Tracklet([2], [1.5]),
        Tracklet([3], [1.5]),
    ]
    short = np.array([False, False, True, True])
    assert place_short(tracklets, _dets(boxes), {0: 1}, short, MATCH_IOU) == {0: 1}


def test_bits_that_follow_each_other_on_one_gap_are_chained_in_time_order() -> None:
    boxes = [_walker(0.1), _walker(0.3), _walker(0.24), _walker(0.16)]
    tracklets = [
        Tracklet([0], [1.0]),
        Tracklet([1], [2.0]),
        Tracklet([2], [1.7]),
        Tracklet([3], [1.3]),
    ]
    short = np.array([False, False, True, True])
    placed = place_short(tracklets, _dets(boxes), {0: 1}, short, MATCH_IOU)
    assert placed == {0: 3, 3: 2, 2: 1}
