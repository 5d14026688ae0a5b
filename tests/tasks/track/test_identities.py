"""Re-identification with known truth: painted things whose comings and goings are built in.

Each thing is a box painted in two colours (a coat over trousers) on a grey floor; the tracks
say when each was in view. Which tracks are one thing is known by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest

from tasks.detections import Detections, detections_to_table
from tasks.track.identities import (
    MIN_CLEAN_LOOKS,
    half_boxes,
    half_looks,
    identify_tracks,
    link_identities,
    summarise_tracks,
)
from tasks.track.stage import track_table
from tasks.world_state.appearances import identities_of, number_appearances

Colour = tuple[int, int, int]
RED, BLUE, GREEN, BLACK = (200, 30, 30), (30, 40, 200), (30, 170, 40), (20, 20, 20)
GREY = (128, 128, 128)
STEP = 0.5
PERSON = (0.0, 0.0, 0.1, 0.3)  # a tall box, moved along x


@dataclass(frozen=True)
class Pass:
    """One track: a thing with a coat and trousers colour, in view from ``start`` for ``n``
    samples, ``width`` wide, walking right from ``x``."""

    coat: Colour
    trousers: Colour
    start: int
    n: int = 8
    x: float = 0.1
    width: float = 0.1


def scene(passes: Sequence[Pass]) -> tuple[Detections, Callable[[int], np.ndarray | None]]:
    """The passes as tracks (numbers 1, 2, ... in order) and the painted picture of each
    sample."""
    rows: list[tuple[int, int, list[float]]] = []
    for number, p in enumerate(passes, 1):
        for k in range(p.n):
            x = p.x + 0.04 * k
            rows.append((p.start + k, number, [x, 0.3, x + p.width, 0.3 + PERSON[3]]))
    rows.sort(key=lambda r: r[0])
    dets = Detections(
        boxes=np.asarray([r[2] for r in rows], np.float32),
        scores=np.ones(len(rows), np.float32),
        class_ids=np.zeros(len(rows), np.int64),
        frame_index=np.asarray([r[0] for r in rows], np.int64),
        t_s=np.asarray([r[0] * STEP for r in rows], np.float32),
        track_ids=np.asarray([r[1] for r in rows], np.int64),
        class_names=("motion",),
    )

    def frame_at(index: int) -> np.ndarray | None:
        frame = np.full((240, 320, 3), GREY, np.uint8)
        for row in np.flatnonzero(dets.frame_index == index):
            p = passes[int(dets.track_ids[row]) - 1]
            top, bottom = half_boxes(dets.boxes[row : row + 1])
            for colour, (x1, y1, x2, y2) in ((p.coat, top[0]), (p.trousers, bottom[0])):
                frame[int(y1 * 240) : int(y2 * 240), int(x1 * 320) : int(x2 * 320)] = colour
        return frame

    return dets, frame_at


def identities(passes: Sequence[Pass]) -> list[int]:
    """The identity number of each pass, in order."""
    dets, frame_at = scene(passes)
    numbers = identify_tracks(dets, frame_at)
    return [numbers[n] for n in range(1, len(passes) + 1)]


@pytest.mark.parametrize(
    ("passes", "expected"),
    [
        # one thing leaving and coming back twice: one identity, three appearances
        ([Pass(RED, BLUE, 0), Pass(RED, BLUE, 20), Pass(RED, BLUE, 40)], [1, 1, 1]),
        # another coat is another thing
        ([Pass(RED, BLUE, 0), Pass(GREEN, BLUE, 20)], [1, 2]),
        # the same colours the other way up are another thing
        ([Pass(RED, BLUE, 0), Pass(BLUE, RED, 20)], [1, 2]),
        # two alike things in view at the same time are two things
        ([Pass(RED, BLUE, 0), Pass(RED, BLUE, 4, x=0.6)], [1, 2]),
        # a box twice as wide (two people side by side) is not one of them come back
        ([Pass(BLACK, BLUE, 0), Pass(BLACK, BLUE, 20, width=0.2)], [1, 2]),
        # one thing comes back while another passes: each keeps its own
        (
            [Pass(RED, BLUE, 0), Pass(GREEN, BLACK, 10, x=0.6), Pass(RED, BLUE, 20)],
            [1, 2, 1],
        ),
    ],
)
def test_things_that_come_back_are_one_identity_and_others_are_not(
    passes: list[Pass], expected: list[int]
) -> None:
    assert identities(passes) == expected


def test_an_identity_never_holds_two_tracks_in_view_at_once() -> None:
    # A (0..4 s) and B (5..9 s) are alike, and C (7..11 s) is alike to A; C is in view with B,
    # so once A and B are one identity, C cannot join it.
    passes = [Pass(RED, BLUE, 0), Pass(RED, BLUE, 10), Pass(RED, BLUE, 14)]
    numbers = identities(passes)
    assert numbers[0] == numbers[1] != numbers[2]


def test_a_track_seen_too_little_keeps_its_own_identity() -> None:
    passes = [Pass(RED, BLUE, 0), Pass(RED, BLUE, 20, n=MIN_CLEAN_LOOKS - 1)]
    assert identities(passes) == [1, 2]


def test_boxes_that_overlap_teach_no_look() -> None:
    dets, frame_at = scene([Pass(RED, BLUE, 0), Pass(GREEN, BLACK, 0, x=0.15)])
    upper, lower = half_looks(dets, frame_at)
    assert not upper.any() and not lower.any()  # every box touches the other one
    summaries = summarise_tracks(dets, upper, lower)
    assert [s.clean_looks for s in summaries] == [0, 0]
    assert not any(s.known for s in summaries)


def test_without_pictures_every_track_is_its_own_identity() -> None:
    dets, _ = scene([Pass(RED, BLUE, 0), Pass(RED, BLUE, 20)])
    assert identify_tracks(dets, None) == {1: 1, 2: 2}
    assert link_identities([]) == {}


def test_the_track_stage_writes_identities_and_the_world_state_numbers_appearances() -> None:
    # Far apart in time, so the tracker itself cannot carry one track into the next.
    passes = [Pass(RED, BLUE, 0), Pass(GREEN, BLACK, 30, x=0.6), Pass(RED, BLUE, 60)]
    dets, frame_at = scene(passes)
    tracks, count = track_table(detections_to_table(dets, "motion"), "motion", frame_at)
    assert count == 3
    by_object = identities_of(tracks)
    assert len(by_object) == 3 and len(set(by_object.values())) == 2
    objects = [
        {"object_id": obj, "first_seen_s": min(r["t_s"] for r in rows)}
        for obj in by_object
        for rows in [[r for r in tracks.to_pylist() if r["track_id"] == obj]]
    ]
    objects.append({"object_id": "obj_text", "first_seen_s": 0.0})
    number_appearances(objects, by_object)
    numbered = sorted((o["first_seen_s"], o["appearance"], o["appearances"]) for o in objects[:3])
    assert numbered == [(0.0, 1, 2), (15.0, 1, 1), (30.0, 2, 2)]
    assert objects[3]["identity_id"] is None and objects[3]["appearances"] is None
