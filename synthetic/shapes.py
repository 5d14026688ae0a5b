"""Non-rigid outlines and soft shadows: a walking stick figure, a breathing blob, a shadow's alpha.

An object whose shape is not "box" covers only the pixels of its mask at each moment, inside its
``size`` box, and its truth box is the tight box around the visible mask
(``synthetic.scene.object_box``), so the box changes as the outline does: a walker's legs and
arms swing (its box widens and narrows with each stride), a blob's outline wobbles and breathes.
A shadow is a soft translucent ellipse; it darkens what lies under it and is no object.
"""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

SHAPES = ("box", "walker", "blob")

Mask = npt.NDArray[np.bool_]
Alpha = npt.NDArray[np.float32]

STRIDE_HZ = 1.4  # a walker's legs swing through a full stride this often
SWING_RAD = math.radians(30)
BREATH_S = 2.0  # a blob's size cycles this slowly
SHADOW_DARKNESS = 0.5  # the share of light a shadow takes at its centre


def _walker(width: int, height: int, t: float) -> Mask:
    """A stick figure: head, torso, two legs and two arms swinging in opposition."""
    canvas = np.zeros((height, width), np.uint8)
    thick = max(3, round(height * 0.07))
    head = max(3, round(height * 0.1))
    cx = width / 2
    hip, shoulder = (cx, height * 0.55), (cx, head * 2 + height * 0.06)
    swing = SWING_RAD * math.sin(2 * math.pi * STRIDE_HZ * t)
    leg, arm = height - hip[1] - thick / 2 - 1, height * 0.3
    ends = [(hip, leg, swing), (hip, leg, -swing), (shoulder, arm, -0.8 * swing)]
    ends.append((shoulder, arm, 0.8 * swing))
    cv2.circle(canvas, (round(cx), head + 1), head, 1, -1)
    cv2.line(canvas, (round(cx), head * 2), (round(hip[0]), round(hip[1])), 1, thick)
    for (x0, y0), length, angle in ends:
        x1, y1 = x0 + length * math.sin(angle), y0 + length * math.cos(angle)
        cv2.line(canvas, (round(x0), round(y0)), (round(x1), round(y1)), 1, thick)
    return canvas.astype(bool)


def _blob(width: int, height: int, t: float) -> Mask:
    """A closed outline whose radius wobbles with two travelling lobes and breathes in size."""
    phi = np.linspace(0.0, 2 * math.pi, 72, endpoint=False)
    wobble = 1 + 0.12 * np.sin(3 * phi + 2 * math.pi * t / 1.3)
    wobble += 0.08 * np.sin(2 * phi - 2 * math.pi * t / 2.1)
    breath = 0.85 + 0.15 * math.sin(2 * math.pi * t / BREATH_S)
    radius = wobble * breath / 1.2  # the wobble peaks below 1.2, so the outline stays inside
    xs = width / 2 + (width / 2 - 1) * radius * np.cos(phi)
    ys = height / 2 + (height / 2 - 1) * radius * np.sin(phi)
    canvas = np.zeros((height, width), np.uint8)
    points = np.stack([xs, ys], axis=1).round().astype(np.int32)
    cv2.fillPoly(canvas, [points], 1)
    return canvas.astype(bool)


@lru_cache(maxsize=256)
def shape_mask(shape: str, size: tuple[int, int], t_ms: int) -> Mask | None:
    """The (h, w) mask of a shape at time ``t_ms`` (milliseconds); None for a "box" (all of it).

    The time is in whole milliseconds so that masks are cached per frame; the cached mask is
    read-only.
    """
    if shape == "box":
        return None
    if shape not in SHAPES:
        raise ValueError(f"shape must be one of {SHAPES}")
    maker = _walker if shape == "walker" else _blob
    mask = maker(size[0], size[1], t_ms / 1000)
    mask.flags.writeable = False
    return mask


@lru_cache(maxsize=16)
def shadow_alpha(width: int, height: int) -> Alpha:
    """A soft ellipse filling a ``width`` x ``height`` patch: 1 at the centre, 0 at the rim."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    u = (xx + 0.5 - width / 2) / (width / 2)
    v = (yy + 0.5 - height / 2) / (height / 2)
    alpha = np.clip(1.0 - (u * u + v * v), 0.0, 1.0) ** 0.7
    out = np.asarray(alpha, dtype=np.float32)
    out.flags.writeable = False
    return out
