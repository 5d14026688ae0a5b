"""Re-identification of PEOPLE with known truth: painted walkers with tight boxes.

Each walker is painted as a person fills a detector's box: hair, a coat, trousers and shoes, on
a grey floor; the tracks say when and where each was in view (5 samples a second, like the
sampler). Which tracks are one person is known by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest

from tasks.detections import Detections
from tasks.track.identities import (
    FEET,
    HEAD,
    LEGS_WIDTH,
    LINK_DISTANCE,
    RETURN_DISTANCE,
    TORSO_WIDTH,
    WAIST,
    clothes_boxes,
    half_looks,
    identify_tracks,
    summarise_tracks,
    summary_distance,
)
from tests.tasks.track.test_identities import BLACK, BLUE, GREEN, GREY, RED, Colour

SKIN, YELLOW = (220, 170, 140), (230, 220, 40)
STEP = 0.2  # seconds between samples: the sampler's 5 a second
WIDTH, HEIGHT = 0.08, 0.25  # a walker's tight box: ~0.3 heights wide in a 4:3 picture
SIZE = (240, 320)


@dataclass(frozen=True)
class Walk:
    """One track: a walker in ``coat`` and ``trousers`` from sample ``start`` for ``n`` samples,
    its box's left edge at ``x`` moving ``dx`` a sample; ``hair`` and ``shoes`` are what the
    box holds besides clothes, ``stripe`` a band of another colour across the coat (a bag's
    strap: the same person's look, a little changed)."""

    coat: Colour
    trousers: Colour
    start: int
    n: int = 20
    x: float = 0.5
    dx: float = 0.02
    hair: Colour = BLACK
    shoes: Colour = BLACK
    stripe: Colour | None = None


def scene(
    walks: Sequence[Walk], class_name: str = "person"
) -> tuple[Detections, Callable[[int], np.ndarray | None]]:
    """The walks as tracks (numbers 1, 2, ... in order) and the painted picture of a sample."""
    rows = [
        (w.start + k, number, [w.x + w.dx * k, 0.4, w.x + w.dx * k + WIDTH, 0.4 + HEIGHT])
        for number, w in enumerate(walks, 1)
        for k in range(w.n)
    ]
    rows.sort(key=lambda r: r[0])
    dets = Detections(
        boxes=np.asarray([r[2] for r in rows], np.float32),
        scores=np.ones(len(rows), np.float32),
        class_ids=np.zeros(len(rows), np.int64),
        frame_index=np.asarray([r[0] for r in rows], np.int64),
        t_s=np.asarray([r[0] * STEP for r in rows], np.float32),
        track_ids=np.asarray([r[1] for r in rows], np.int64),
        class_names=(class_name,),
    )

    def frame_at(index: int) -> np.ndarray | None:
        frame = np.full((*SIZE, 3), GREY, np.uint8)
        for row in np.flatnonzero(dets.frame_index == index):
            paint(frame, dets.boxes[row], walks[int(dets.track_ids[row]) - 1])
        return frame

    return dets, frame_at


def paint(frame: np.ndarray, box: np.ndarray, walk: Walk) -> None:
    """Paint one walker into ``frame``, filling its box from hair to shoes."""
    # Hair and shoes a little inside the head and feet shares: a whole pixel row of either at
    # the crop's rounded edge would be a tenth of a small torso's look.
    bands = [(0.0, WAIST, walk.coat), (0.0, 0.8 * HEAD, walk.hair)]
    bands += [(WAIST, 1.0, walk.trousers), (1 - 0.8 * (1 - FEET), 1.0, walk.shoes)]
    if walk.stripe is not None:
        bands.append((0.25, 0.29, walk.stripe))
    x1, y1, x2, y2 = box
    for top, bottom, colour in bands:
        rows = slice(
            int((y1 + top * (y2 - y1)) * SIZE[0]), int((y1 + bottom * (y2 - y1)) * SIZE[0])
        )
        frame[rows, int(x1 * SIZE[1]) : int(x2 * SIZE[1])] = colour


def identities(walks: Sequence[Walk], class_name: str = "person") -> list[int]:
    """The identity number of each walk, in order."""
    dets, frame_at = scene(walks, class_name)
    numbers = identify_tracks(dets, frame_at)
    return [numbers[n] for n in range(1, len(walks) + 1)]


def distance(a: Walk, b: Walk) -> float:
    """How unalike two walks' summaries look."""
    dets, frame_at = scene([a, b])
    upper, lower = half_looks(dets, frame_at)
    first, second = summarise_tracks(dets, upper, lower)
    return summary_distance(first, second)


OUT_RIGHT = Walk(RED, BLUE, 0, x=0.5)  # walks right, out at the right edge at 3.8 s


def test_clothes_are_the_torso_and_the_legs_of_a_tight_box() -> None:
    torso, legs = clothes_boxes(np.array([[0.2, 0.1, 0.3, 0.5]]))
    side, leg_side = 0.1 * (1 - TORSO_WIDTH) / 2, 0.1 * (1 - LEGS_WIDTH) / 2
    assert torso[0] == pytest.approx([0.2 + side, 0.1 + 0.4 * HEAD, 0.3 - side, 0.1 + 0.4 * WAIST])
    assert legs[0] == pytest.approx(
        [0.2 + leg_side, 0.1 + 0.4 * WAIST, 0.3 - leg_side, 0.1 + 0.4 * FEET]
    )


def test_hair_and_shoes_do_not_tell_people_apart() -> None:
    # The same clothes with a yellow hat and yellow shoes, coming in at the other edge (no
    # return to lean on): the same person on colours alone.
    back = Walk(RED, BLUE, 40, x=0.0, dx=0.02, hair=YELLOW, shoes=YELLOW)
    assert distance(OUT_RIGHT, back) <= LINK_DISTANCE
    assert identities([OUT_RIGHT, back]) == [1, 1]


def test_two_alike_people_in_view_together_are_never_one_identity() -> None:
    twin = Walk(RED, BLUE, 10, x=0.1)  # in view with the first from 2 s to 3.8 s
    later = Walk(RED, BLUE, 60, x=0.9, dx=-0.02)  # comes back long after both left
    numbers = identities([OUT_RIGHT, twin, later])
    assert numbers[0] != numbers[1]
    assert len(set(numbers)) == 2  # the later one is one of them, never both


def test_a_person_back_where_they_left_is_joined_though_their_look_changed_a_little() -> None:
    # Out at the right edge at 3.8 s, back in at the right edge 5 s later with a strap across
    # the coat: further apart than colours alone may link, within a return's limit.
    back = Walk(RED, BLUE, 44, x=0.9, dx=-0.02, stripe=GREEN)
    assert LINK_DISTANCE < distance(OUT_RIGHT, back) <= RETURN_DISTANCE
    assert identities([OUT_RIGHT, back]) == [1, 1]


def test_a_changed_look_coming_in_elsewhere_is_not_joined() -> None:
    # The same look as above, but coming in at the left edge: no return, colours alone decide.
    elsewhere = Walk(RED, BLUE, 44, x=0.0, dx=0.02, stripe=GREEN)
    assert identities([OUT_RIGHT, elsewhere]) == [1, 2]


def test_a_track_beginning_mid_picture_just_after_one_left_at_the_far_edge_is_someone_else() -> (
    None
):
    # Alike in every colour, but 0.5 s is no time to walk from the right edge to the left third.
    soon = Walk(RED, BLUE, 22, n=10, x=0.3, dx=-0.02)
    assert identities([OUT_RIGHT, soon]) == [1, 2]
    # Given time to walk there, the same look is the same person.
    assert identities([OUT_RIGHT, Walk(RED, BLUE, 60, n=10, x=0.3, dx=-0.02)]) == [1, 1]


def test_motion_tracks_keep_no_pace() -> None:
    # A loose motion region has no known speed (a car, a cart): only people are held to a walk.
    soon = Walk(RED, BLUE, 22, n=10, x=0.3, dx=-0.02)
    assert identities([OUT_RIGHT, soon], class_name="motion") == [1, 1]
