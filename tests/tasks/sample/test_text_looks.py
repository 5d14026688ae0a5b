"""Which sampled frames are text looks, against KNOWN truth: synthetic glances at 5 fps.

Every glance is a flat grey background with a little noise from a seeded generator; things are
bright rectangles drawn at known places and times, so each expected look is derived from when
they appear, settle and leave (never read off the planner's output).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection

import numpy as np
import pytest

from tasks.sample.text_looks import Glance, LookConfig, LookPlanner, cell_differences, glance_of

FPS = 5
STEP_S = 1 / FPS
HEIGHT, WIDTH = 60, 80
BACKGROUND = 100
BRIGHT = 220
CELL = LookConfig().cell

Draw = Callable[[Glance, int], None]  # draws what frame i shows on its glance, in place


def nothing(glance: Glance, i: int) -> None:
    """A scene where nothing happens."""


def fill(glance: Glance, rows: slice, cols: slice, level: int = BRIGHT) -> None:
    glance[rows, cols] = level


def looks_of(
    draw: Draw,
    frames: int,
    config: LookConfig | None = None,
    refreshes: Collection[int] = (),
    seed: int = 0,
) -> list[int]:
    """The sampled frames (indices, at ``FPS``) that the planner keeps as looks."""
    rng = np.random.default_rng(seed)
    planner = LookPlanner(config or LookConfig())
    looks = []
    for i in range(frames):
        glance = (BACKGROUND + rng.integers(-1, 2, (HEIGHT, WIDTH))).astype(np.uint8)
        draw(glance, i)
        if planner.wants(i / FPS, glance, refresh=i in refreshes):
            looks.append(i)
    return looks


def first_frame_at(t_s: float) -> int:
    """The first sampled frame at or after ``t_s``."""
    return math.ceil(t_s * FPS - 1e-6)


def appearing(start: int, rows: slice, cols: slice, end: int | None = None) -> Draw:
    """A bright patch shown from frame ``start`` (to ``end``, excluded, if given)."""

    def draw(glance: Glance, i: int) -> None:
        if start <= i and (end is None or i < end):
            fill(glance, rows, cols)

    return draw


def moving_square(x0: int, speed: int, size: int = 4, top: int = 28) -> Draw:
    """A small bright square at ``x0 + speed * i`` on frame i (clipped by the frame's edges)."""

    def draw(glance: Glance, i: int) -> None:
        x = x0 + speed * i
        fill(glance, slice(top, top + size), slice(max(x, 0), max(min(x + size, WIDTH), 0)))

    return draw


def both(*draws: Draw) -> Draw:
    def draw(glance: Glance, i: int) -> None:
        for one in draws:
            one(glance, i)

    return draw


def cell_patch(k: int) -> tuple[slice, slice]:
    """The k-th whole cell of the glance, row by row (so each k is a fresh place)."""
    row, col = divmod(k, WIDTH // CELL)
    return slice(row * CELL, (row + 1) * CELL), slice(col * CELL, (col + 1) * CELL)


# glance_of


def test_glance_of_is_the_floored_grey_mean_of_each_4x4_block() -> None:
    colours = [[(30, 60, 90), (255, 255, 255), (0, 0, 0)], [(10, 20, 31), (0, 0, 0), (200, 0, 0)]]
    rgb = np.full((10, 13, 3), 255, dtype=np.uint8)  # the last 2 rows and 1 column fill no block
    for r, row in enumerate(colours):
        for c, colour in enumerate(row):
            rgb[4 * r : 4 * r + 4, 4 * c : 4 * c + 4] = colour
    rgb[4:8, 4:8][::2, :] = 255  # a block of half white rows, half black ones: grey 127.5
    expected = [[60, 255, 0], [20, 127, 66]]  # (r + g + b) / 3, floored: 61 / 3 -> 20

    glance = glance_of(rgb)

    assert glance.dtype == np.uint8
    assert glance.tolist() == expected


@pytest.mark.parametrize(
    ("height", "width", "shape"),
    [(4, 4, (1, 1)), (7, 9, (1, 2)), (8, 12, (2, 3)), (270, 480, (67, 120))],
)
def test_glance_of_drops_edges_that_fill_no_block(
    height: int, width: int, shape: tuple[int, int]
) -> None:
    rgb = np.zeros((height, width, 3), dtype=np.uint8)
    rgb[shape[0] * 4 :, :] = 255
    rgb[:, shape[1] * 4 :] = 255

    glance = glance_of(rgb)

    assert glance.shape == shape
    assert not glance.any()  # the white edges went unseen


# cell_differences


def test_cell_differences_are_cell_means_of_absolute_differences_partial_cells_too() -> None:
    a = np.zeros((7, 8), dtype=np.uint8)  # cells of 3: rows 3, 3, 1 and columns 3, 3, 2
    b = np.zeros((7, 8), dtype=np.uint8)
    for r, rows in enumerate((slice(0, 3), slice(3, 6), slice(6, 7))):
        for c, cols in enumerate((slice(0, 3), slice(3, 6), slice(6, 8))):
            b[rows, cols] = 10 * (3 * r + c)
    b[6, 6:8] = (4, 8)  # the 1 x 2 corner cell: mean 6 over its own two pixels
    expected = [[0, 10, 20], [30, 40, 50], [60, 70, 6]]

    assert cell_differences(a, b, 3).tolist() == expected
    assert cell_differences(b, a, 3).tolist() == expected


def test_cell_differences_do_not_wrap_nor_dilute_partial_cells() -> None:
    dark = np.zeros((7, 8), dtype=np.uint8)
    light = np.full((7, 8), 255, dtype=np.uint8)

    differences = cell_differences(dark, light, 3)

    assert differences.dtype == np.float32
    assert differences.shape == (3, 3)
    assert differences.tolist() == [[255.0] * 3] * 3


# LookPlanner


def test_first_frame_is_the_only_look_of_a_still_scene() -> None:
    assert looks_of(nothing, 100) == [0]


@pytest.mark.parametrize("settle_s", [0.5, 0.7, 1.0])
def test_a_patch_that_appears_and_stays_is_looked_at_once_when_it_has_settled(
    settle_s: float,
) -> None:
    appears = 25  # at 5.0 s
    draw = appearing(appears, slice(20, 32), slice(30, 48))

    looks = looks_of(draw, 100, LookConfig(settle_s=settle_s))

    # It has settled once a whole ``settle_s`` of frames shows it: not before, and then at once.
    assert looks == [0, first_frame_at(appears / FPS + settle_s)]
    assert appears / FPS + settle_s <= looks[1] / FPS < appears / FPS + settle_s + STEP_S


def test_a_patch_that_keeps_changing_is_looked_at_once_it_stops() -> None:
    def flicker_then_stay(glance: Glance, i: int) -> None:
        if i >= 20:  # from 4.0 s, a different level every frame until 6.0 s
            fill(glance, slice(20, 32), slice(30, 48), BRIGHT if i >= 30 else 140 + 20 * (i % 4))

    looks = looks_of(flicker_then_stay, 80)

    assert looks == [0, first_frame_at(30 / FPS + LookConfig().settle_s)]


@pytest.mark.parametrize("speed", [2, 3])
@pytest.mark.parametrize("top", [0, 28, 56])
def test_a_square_moving_across_the_frame_never_calls_a_look(speed: int, top: int) -> None:
    square = moving_square(x0=-4, speed=speed, top=top)  # enters after the first frame

    looks = looks_of(square, (WIDTH + 8) // speed + 10)  # until it has left on the right

    assert looks == [0]


def test_a_look_that_sees_a_passer_by_calls_no_more_looks_where_they_pass() -> None:
    sign_at = 10
    sign = appearing(sign_at, slice(4, 10), slice(60, 72))
    square = moving_square(x0=-4, speed=2)  # mid-frame when the sign's look is taken

    looks = looks_of(both(sign, square), 60)

    assert looks == [0, first_frame_at(sign_at / FPS + LookConfig().settle_s)]


def test_a_passer_by_in_the_first_frame_calls_at_most_one_more_look() -> None:
    # A refresh has no history: the first look cannot know the square is passing. The places
    # it left call one look; that one sees it move, and where it passes calls no more.
    looks = looks_of(moving_square(x0=10, speed=2), 60)

    assert looks[0] == 0
    assert len(looks) == 2


def test_an_object_that_stops_is_looked_at_once_and_once_more_when_it_leaves() -> None:
    stop, go, x_stop = 20, 60, -4 + 2 * 20

    def dwell(glance: Glance, i: int) -> None:
        moving_square(x0=-4, speed=2)(glance, min(i, stop) + max(i - go, 0))

    cfg = LookConfig()
    cell_end = (x_stop // CELL + 1) * CELL  # the square stands in one column of cells
    left = go + math.ceil((cell_end - x_stop) / 2)  # the first frame without it there

    looks = looks_of(dwell, 100)

    assert looks == [
        0,
        first_frame_at(stop / FPS + cfg.settle_s),
        first_frame_at(left / FPS + cfg.settle_s),
    ]


def test_text_still_changing_when_a_look_is_taken_is_read_again_once_settled() -> None:
    cfg = LookConfig()

    def sign_and_caption(glance: Glance, i: int) -> None:
        if i >= 20:
            fill(glance, slice(0, 12), slice(0, 12))
        if i >= 22:  # a caption being written: half done on the sign's look, done at frame 24
            fill(glance, slice(48, 54), slice(6, 42), 150 if i < 24 else 30)

    sign_look = first_frame_at(20 / FPS + cfg.settle_s)
    assert 22 <= sign_look < 24

    looks = looks_of(sign_and_caption, 60)

    caption_look = max(
        first_frame_at(24 / FPS + cfg.settle_s), first_frame_at(sign_look / FPS + cfg.min_gap_s)
    )
    assert looks == [0, sign_look, caption_look]


def test_a_refresh_always_looks_even_within_min_gap_s() -> None:
    cfg = LookConfig()
    change_look = first_frame_at(25 / FPS + cfg.settle_s)
    refresh = change_look + 1
    assert (refresh - change_look) / FPS < cfg.min_gap_s

    looks = looks_of(appearing(25, slice(20, 32), slice(30, 48)), 60, refreshes={refresh})

    assert looks == [0, change_look, refresh]


def test_refreshes_count_in_the_budget_and_a_deferred_change_is_read_when_it_allows() -> None:
    cfg = LookConfig(max_per_minute=3)
    refreshes = {0, 1, 2, 3}  # the fourth within the minute is over the budget
    patch = appearing(50, slice(20, 32), slice(30, 48))  # at 10 s, and it stays

    looks = looks_of(patch, 320, cfg, refreshes)

    # The look at 0 s leaves the window at 60 s: the change is still there, so it is read then.
    assert looks == [0, 1, 2, first_frame_at(60.0)]


def test_a_change_gone_before_the_budget_allows_is_never_read() -> None:
    cfg = LookConfig(max_per_minute=2)
    first = appearing(5, slice(0, 12), slice(0, 12))  # read at once: the budget is then spent
    gone = appearing(50, slice(20, 32), slice(30, 48), end=150)  # from 10 s to 30 s only

    looks = looks_of(both(first, gone), 400, cfg)

    assert looks == [0, first_frame_at(5 / FPS + cfg.settle_s)]


def test_min_gap_s_is_kept_between_change_looks() -> None:
    cfg = LookConfig(min_gap_s=1.9)
    a = appearing(25, slice(0, 12), slice(0, 12))  # at 5.0 s: read at 5.6 s
    b = appearing(29, slice(36, 48), slice(48, 60))  # at 5.8 s: settled at 6.4 s, too soon
    a_look = first_frame_at(25 / FPS + cfg.settle_s)

    looks = looks_of(both(a, b), 80, cfg)

    assert looks == [0, a_look, first_frame_at(a_look / FPS + cfg.min_gap_s)]


def test_the_budget_caps_looks_in_any_sliding_minute() -> None:
    cfg = LookConfig(max_per_minute=4)
    every = FPS  # a new patch every second, each at a fresh place, and each stays

    def patches(glance: Glance, i: int) -> None:
        for k in range(1, i // every + 1):
            fill(glance, *cell_patch(k))

    looks = looks_of(patches, 125 * FPS, cfg)
    times = [i / FPS for i in looks]

    in_window = [sum(t - 60.0 < u <= t for u in times) for t in times]
    assert max(in_window) == cfg.max_per_minute
    gaps = np.diff(times)
    assert gaps.min() >= cfg.min_gap_s - 1e-9
    # Changes keep coming: each look the budget deferred came as soon as a look left the window.
    for i in range(cfg.max_per_minute, len(times)):
        assert times[i] - times[i - cfg.max_per_minute] <= 60.0 + STEP_S + 1e-9
    assert times[-1] > 120.0


def test_a_glance_of_another_shape_acts_as_a_refresh() -> None:
    rng = np.random.default_rng(3)
    planner = LookPlanner()
    shapes = [(HEIGHT, WIDTH)] * 3 + [(30, 40)] * 10 + [(HEIGHT, WIDTH)] * 10

    looks = []
    for i, shape in enumerate(shapes):
        glance = (BACKGROUND + rng.integers(-1, 2, shape)).astype(np.uint8)
        if planner.wants(i / FPS, glance, refresh=False):
            looks.append(i)

    changes = [i for i in range(1, len(shapes)) if shapes[i] != shapes[i - 1]]
    # The first change is within min_gap_s of the first look: only a refresh looks there.
    assert LookConfig().min_gap_s > changes[0] / FPS
    assert looks == [0, *changes]
