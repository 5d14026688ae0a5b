"""Paths of the cases family (``synthetic.cases.scenes``): walks, visits that leave and return,
and pairs walking together.

A walk crosses the frame from the left or right edge to the opposite one. A visit comes in
through an edge to a point 15..45 % into the frame and goes out again (through the same edge
half the time), or stays there to the end. A pair is two objects a few pixels apart (one beside
or one behind the other) on one walk; half the pairs part on the way: the second one turns off
to the top or bottom edge, or stops where it is. Keyframes are rounded as
``synthetic.random_motion``'s are.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from synthetic.scene import MovingObject, SceneSpec, position_at

Point = tuple[float, float]
Keys = tuple[tuple[float, float, float], ...]
Size = tuple[int, int]

SPEED_SHARE = (0.15, 0.3)  # of the frame width per second
SPEED_PX_S = (60.0, 500.0)
DEPTH = (0.15, 0.45)
GAP_PX = (2, 12)
_PART_P = 0.5
_SAME_EDGE_P = 0.5


def case_speed(rng: np.random.Generator, spec: SceneSpec) -> float:
    """A walking speed that crosses the frame in about 3 to 7 s, whatever its width."""
    return float(np.clip(spec.width * rng.uniform(*SPEED_SHARE), *SPEED_PX_S))


def edge_point(spec: SceneSpec, size: Size, side: int, along: float) -> Point:
    """A centre just past edge ``side`` (0 left, 1 right, 2 top, 3 bottom), the box wholly out;
    ``along`` (0..1) places it along the edge."""
    w, h = size
    if side < 2:
        return (-w / 2 - 1 if side == 0 else spec.width + w / 2 + 1), h / 2 + along * (
            spec.height - h
        )
    return w / 2 + along * (spec.width - w), (-h / 2 - 1 if side == 2 else spec.height + h / 2 + 1)


def timed(points: list[Point], speed: float, t0: float) -> Keys:
    """Keyframes along ``points`` at ``speed`` from ``t0`` (rounded to ms and 0.1 px)."""
    keys, t = [(t0, *points[0])], t0
    for a, b in itertools.pairwise(points):
        t += max(math.dist(a, b) / speed, 0.1)
        keys.append((t, *b))
    return tuple((round(t, 3), round(x, 1), round(y, 1)) for t, x, y in keys)


def walk(rng: np.random.Generator, spec: SceneSpec, size: Size, speed: float) -> Keys:
    """Across the frame from the left or right edge to the opposite one, starting so that it
    is in view for a good part of the video."""
    side = int(rng.integers(0, 2))
    start = edge_point(spec, size, side, rng.uniform(0.1, 0.9))
    end = edge_point(spec, size, 1 - side, rng.uniform(0.1, 0.9))
    span = math.dist(start, end) / speed
    t0 = rng.uniform(-0.3 * span, max(spec.duration_s - 0.6 * span, 0.0))
    return timed([start, end], speed, t0)


def _inside_from(rng: np.random.Generator, spec: SceneSpec, size: Size, side: int) -> Point:
    """A centre 15..45 % into the frame from edge ``side``, the box wholly in view."""
    w, h = size
    depth = rng.uniform(*DEPTH)
    x, y = rng.uniform(w / 2, spec.width - w / 2), rng.uniform(h / 2, spec.height - h / 2)
    if side < 2:
        x = w / 2 + (depth if side == 0 else 1 - depth) * (spec.width - w)
    else:
        y = h / 2 + (depth if side == 2 else 1 - depth) * (spec.height - h)
    return x, y


def visit(
    rng: np.random.Generator, spec: SceneSpec, size: Size, side: int, t0: float, speed: float
) -> tuple[Keys, int]:
    """In through edge ``side`` at ``t0``, to a point inside, and out; returns the keyframes and
    the edge it left by (the same one half the time)."""
    out = side if rng.random() < _SAME_EDGE_P else int(rng.integers(0, 4))
    start = edge_point(spec, size, side, rng.uniform(0.1, 0.9))
    end = edge_point(spec, size, out, rng.uniform(0.1, 0.9))
    return timed([start, _inside_from(rng, spec, size, side), end], speed, t0), out


def stay(
    rng: np.random.Generator, spec: SceneSpec, size: Size, side: int, t0: float, speed: float
) -> Keys:
    """In through edge ``side`` at ``t0`` to a point inside, standing there to the end."""
    start = edge_point(spec, size, side, rng.uniform(0.1, 0.9))
    keys = timed([start, _inside_from(rng, spec, size, side)], speed, t0)
    return (*keys, (round(max(spec.duration_s, keys[-1][0]), 3), *keys[-1][1:]))


def _offset(rng: np.random.Generator, sizes: tuple[Size, Size], leftwards: bool) -> Point:
    """Where the second of a pair walks from the first: below it, or behind it, a gap apart."""
    (w0, h0), (w1, h1) = sizes
    gap = rng.uniform(*GAP_PX)
    if rng.random() < 0.5:
        return 0.0, (h0 + h1) / 2 + gap
    behind = (w0 + w1) / 2 + gap
    return (behind if leftwards else -behind), 0.0


def _parted(
    rng: np.random.Generator, spec: SceneSpec, follower: MovingObject, part_s: float, speed: float
) -> Keys:
    """The second of a pair from ``part_s`` on: off to the top or bottom edge, or stopped."""
    here = position_at(follower, part_s)
    if here is None:
        return follower.keyframes
    kept = tuple(k for k in follower.keyframes if k[0] < part_s)
    stop = (round(part_s, 3), round(here[0], 1), round(here[1], 1))
    if rng.random() < 0.5:
        return (*kept, stop, (round(max(spec.duration_s, part_s + 0.1), 3), *stop[1:]))
    side = 2 if here[1] < spec.height / 2 else 3
    away = edge_point(spec, follower.size, side, rng.uniform(0.1, 0.9))
    return (*kept, *timed([here, away], speed, part_s))


def pair(
    rng: np.random.Generator,
    spec: SceneSpec,
    first: MovingObject,
    second: MovingObject,
    speed: float,
) -> tuple[Keys, Keys]:
    """Two objects on one walk a few pixels apart; half the pairs part 40..70 % of the way."""
    keys = walk(rng, spec, first.size, speed)
    leftwards = keys[-1][1] < keys[0][1]
    dx, dy = _offset(rng, (first.size, second.size), leftwards)
    if dy and keys[0][2] + dy > spec.height - second.size[1] / 2:
        dy = -dy  # the second walks above the first where there is no room below
    shifted = tuple((t, round(x + dx, 1), round(y + dy, 1)) for t, x, y in keys)
    if rng.random() >= _PART_P:
        return keys, shifted
    part_s = keys[0][0] + (keys[-1][0] - keys[0][0]) * rng.uniform(0.4, 0.7)
    follower = MovingObject(second.name, second.color, second.size, shifted)
    return keys, _parted(rng, spec, follower, part_s, speed)
