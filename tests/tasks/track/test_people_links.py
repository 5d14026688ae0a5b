"""Staged linking of person tracklets (``tasks.track.people_links``): the short bits seen where
people cross go into a gap only where they lie on that gap's line, look like its person and lie
on no other gap's line; two bits at once in one gap undo its link."""

from __future__ import annotations

import numpy as np

from tasks.detections import Detections
from tasks.track.appearance import BINS
from tasks.track.people_links import Bits, place_short
from tasks.track.people_tracklets import PeopleConfig, Tracklet

CFG = PeopleConfig()


def _bits(boxes: list[list[float]], short: list[bool], colours: list[int] | None = None) -> Bits:
    """The rows of ``boxes``, each with a clean look of one colour (None: looks unknown)."""
    looks = np.zeros((len(boxes), BINS))
    if colours is not None:
        looks = np.eye(BINS)[colours]
    return Bits(_dets(boxes), looks, np.array(short))


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
    placed, contested = place_short(tracklets, _bits(boxes, [False] * 4 + [True] * 3), links, CFG)
    assert placed == {0: 4, 4: 1, 2: 3} and contested == []  # A's gap takes the bit, alone
    assert links == {0: 1, 2: 3}  # the given links are not changed in place


def test_two_bits_at_once_on_one_gap_undo_its_link_unless_looks_tell_them_apart() -> None:
    # Two people side by side (IoU 0.25) on the gap's line at 1.5 s: the link claims one person
    # where two were, and which of them the start is, places cannot tell.
    boxes = [_walker(0.1), _walker(0.3), _walker(0.17), _walker(0.23)]
    tracklets = [
        Tracklet([0], [1.0]),
        Tracklet([1], [2.0]),
        Tracklet([2], [1.5]),
        Tracklet([3], [1.5]),
    ]
    short = [False, False, True, True]
    assert place_short(tracklets, _bits(boxes, short), {0: 1}, CFG) == ({}, [0])
    # The gap's person wears colour 0; one bit does, the other wears colour 5: it is not her.
    placed = place_short(tracklets, _bits(boxes, short, [0, 0, 0, 5]), {0: 1}, CFG)
    assert placed == ({0: 2, 2: 1}, [])


def test_bits_that_follow_each_other_on_one_gap_are_chained_in_time_order() -> None:
    boxes = [_walker(0.1), _walker(0.3), _walker(0.24), _walker(0.16)]
    tracklets = [
        Tracklet([0], [1.0]),
        Tracklet([1], [2.0]),
        Tracklet([2], [1.7]),
        Tracklet([3], [1.3]),
    ]
    placed = place_short(tracklets, _bits(boxes, [False, False, True, True]), {0: 1}, CFG)
    assert placed == ({0: 3, 3: 2, 2: 1}, [])
