"""Colour names measured from pixels: a perceptual space, a fixed vocabulary, a confidence."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.world_state.colour import measure_colour, name_lab, rgb_to_lab
from tasks.world_state.trajectories import Track


@pytest.mark.parametrize(
    ("rgb", "name"),
    [
        ((210, 40, 40), "red"),
        ((170, 25, 30), "red"),
        ((50, 80, 210), "blue"),
        ((40, 180, 70), "green"),
        ((235, 235, 230), "white"),
        ((15, 15, 20), "black"),
        ((240, 200, 30), "yellow"),
    ],
)
def test_colours_are_named_from_the_fixed_vocabulary(rgb: tuple[int, int, int], name: str) -> None:
    colour = name_lab(rgb_to_lab(np.array(rgb, dtype=np.float64)))
    assert colour.name == name and 0 < colour.confidence <= 1


def test_a_tracks_colour_is_measured_inside_its_box_over_clean_looks() -> None:
    frame = np.full((100, 100, 3), 128, dtype=np.uint8)  # grey background
    frame[20:60, 30:50] = (50, 80, 210)  # a blue object
    boxes = np.array([[0.3, 0.2, 0.5, 0.6], [0.0, 0.2, 0.2, 0.6]], dtype=np.float32)
    track = Track(
        np.array([0.0, 0.2], dtype=np.float32),
        boxes,
        np.ones(2, dtype=np.float32),
        np.array([0, 1]),
        "motion",
    )
    colour = measure_colour(track, lambda index: frame)
    assert colour is not None and colour.name == "blue" and colour.confidence > 0.3
