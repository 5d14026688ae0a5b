"""The scene score on frames of known truth: a cut is a cut, a plate or a light is not."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from synthetic.lighting import apply_gain
from synthetic.render import render_frame
from synthetic.scene import SceneSpec
from tasks.sample.sampler import scaled_size
from tasks.sample.scene_score import scene_score, tiny_grey, tiny_step

RGB = npt.NDArray[np.uint8]
EVENT, CERTAIN = 0.3, 0.45  # scene_cut_threshold; tasks.track.stage.CERTAIN_CUT_SCORE
SPEC = SceneSpec(width=640, height=360, fps=10, duration_s=4.0, scene_cuts=(2.0,), seed=7)


def tiny(rgb: RGB) -> npt.NDArray[np.uint8]:
    """The tiny grey frame the sampler scores (thumbnail 480 wide, area-averaged)."""
    height, width = rgb.shape[:2]
    thumb = cv2.resize(rgb, scaled_size(width, height, 480), interpolation=cv2.INTER_AREA)
    return tiny_grey(thumb, tiny_step(thumb.shape[1]))


def with_plate(frame: RGB, share: float, level: int, ink: int) -> RGB:
    """``frame`` with a centred plate of ``share`` of its area at ``level``, with ``ink`` lines
    across it (text)."""
    height, width = frame.shape[:2]
    w, h = round(width * np.sqrt(share * 2)), round(height * np.sqrt(share / 2))
    x, y = (width - w) // 2, (height - h) // 2
    out = frame.copy()
    out[y : y + h, x : x + w] = level
    for row in range(y + h // 5, y + h - h // 5, max(2, h // 8)):
        out[row : row + max(1, h // 16), x + w // 10 : x + w - w // 10] = ink
    return out


@pytest.mark.parametrize("share", [0.02, 0.05, 0.1, 0.2, 0.3])
@pytest.mark.parametrize(
    ("gain", "level", "ink"),
    [(0.35, 236, 16), (1.35, 28, 240)],
    ids=["light-on-dark", "dark-on-light"],
)
def test_a_plate_appearing_is_no_cut(share: float, gain: float, level: int, ink: int) -> None:
    """A plate of up to 30 % of a still frame appears: no scene change (it was one from 2 %
    of a dark frame while the brightness was matched by the mean)."""
    still = apply_gain(render_frame(SPEC, 0), gain)
    assert scene_score(tiny(still), tiny(with_plate(still, share, level, ink))) < EVENT


@pytest.mark.parametrize("seed", range(6))
def test_a_cut_between_backdrops_alike_in_brightness_is_certain(seed: int) -> None:
    spec = replace(SPEC, seed=seed, background=seed % 3)
    before, after = render_frame(spec, 19), render_frame(spec, 20)
    # the two looks are alike in brightness: matched, the cut still scores as certain
    after = apply_gain(after, float(before.mean()) / float(after.mean()))
    assert scene_score(tiny(before), tiny(after)) >= CERTAIN


@pytest.mark.parametrize("seed", range(4))
def test_a_cut_between_random_backgrounds_of_one_brightness_is_certain(seed: int) -> None:
    """Two random patchworks (as a room and another room), matched to the same mean."""
    rng = np.random.default_rng(seed)
    a, b = (rng.integers(40, 200, (9, 16, 3), dtype=np.uint8) for _ in range(2))
    big = [cv2.resize(x, (640, 360), interpolation=cv2.INTER_NEAREST) for x in (a, b)]
    big[1] = apply_gain(big[1], float(big[0].mean()) / float(big[1].mean()))
    assert scene_score(tiny(big[0]), tiny(big[1])) >= CERTAIN


@pytest.mark.parametrize("step", [0.15, 0.25, 0.35, -0.15, -0.25, -0.35])
def test_a_lighting_step_is_no_cut(step: float) -> None:
    """A light switched on or off (the gain jumps by 15 to 35 %) changes no content."""
    frame = render_frame(replace(SPEC, noise=2.0), 5)
    assert scene_score(tiny(frame), tiny(apply_gain(frame, 1.0 + step))) < 0.2
