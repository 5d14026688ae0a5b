"""Random moving objects for ``random_scene``: vivid boxes on varied paths with stops and crossings.

Each object enters through a frame edge or appears in view, wanders through 1..3 waypoints
inside the frame (stopping at up to two of them for 2..10 s), then leaves through an edge or
vanishes in view. Some objects are laid out to cross another one's path at the moment it passes
(an occlusion). Every object is visible for at least 1.5 s; a draw that is not is redrawn, and
a fixed left-to-right walk is the deterministic last resort.
"""

from __future__ import annotations

import colorsys
import itertools
import math
from dataclasses import dataclass

import numpy as np

from synthetic.patterns import OBJECT_PATTERNS
from synthetic.scene import MovingObject, SceneSpec, cut_frames, object_box, position_at

Point = tuple[float, float]
Keys = tuple[tuple[float, float, float], ...]

SPEED_PX_S = (40.0, 400.0)
SIDE_PX = (30, 250)
STOP_S = (2.0, 10.0)
MIN_VISIBLE_S = 1.5
_COUNT_P = (0.1, 0.3, 0.35, 0.25)  # 0..3 objects
_STOPS_P = (0.45, 0.35, 0.2)  # 0..2 stops
_PATTERN_P = (0.4, 0.3, 0.3)  # flat, gradient, texture
_EDGE_P = 0.65  # enter (or leave) through an edge rather than appear (or vanish) in view
_EARLY_P = 0.2  # already under way when the video starts
_CROSS_P = 0.4  # cross an earlier object's path
_ATTEMPTS = 12
_FALLBACK_SPEED = 150.0


@dataclass(frozen=True)
class _Look:
    """What an object looks like; its path is drawn separately."""

    name: str
    color: tuple[int, int, int]
    size: tuple[int, int]
    pattern: str
    pattern_seed: int

    def moving(self, keys: Keys) -> MovingObject:
        """The object following ``keys``."""
        return MovingObject(self.name, self.color, self.size, keys, self.pattern, self.pattern_seed)


def vivid_colours(rng: np.random.Generator, count: int) -> list[tuple[int, int, int]]:
    """Saturated, bright colours with hues spread around the wheel.

    Backgrounds are muted greys in 30..195, so saturation >= 0.75 and value >= 0.8 keep
    objects apart from them, and spread hues keep objects apart from each other.
    """
    start = float(rng.random())
    colours = []
    for k in range(count):
        hue = (start + k / max(count, 1) + rng.uniform(-0.08, 0.08) / max(count, 1)) % 1.0
        rgb = colorsys.hsv_to_rgb(hue, rng.uniform(0.75, 1.0), rng.uniform(0.8, 1.0))
        r, g, b = (round(c * 255) for c in rgb)
        colours.append((r, g, b))
    return colours


def _size(rng: np.random.Generator, height: int) -> tuple[int, int]:
    """A box 7..30 % of the frame height across, aspect 0.4..2.5, sides kept in 30..250 px."""
    side = height * rng.uniform(0.07, 0.3)
    root = math.sqrt(math.exp(rng.uniform(math.log(0.4), math.log(2.5))))
    lo, hi = SIDE_PX
    return int(np.clip(round(side * root), lo, hi)), int(np.clip(round(side / root), lo, hi))


def _look(
    rng: np.random.Generator, spec: SceneSpec, index: int, color: tuple[int, int, int]
) -> _Look:
    """Size, surface pattern and name of the ``index``-th object."""
    pattern = OBJECT_PATTERNS[int(rng.choice(len(OBJECT_PATTERNS), p=_PATTERN_P))]
    seed = int(rng.integers(0, 2**31))
    return _Look(f"object{index + 1}", color, _size(rng, spec.height), pattern, seed)


def _inside(rng: np.random.Generator, spec: SceneSpec, size: tuple[int, int]) -> Point:
    """A centre that keeps the whole box inside the frame."""
    w, h = size
    return rng.uniform(w / 2, spec.width - w / 2), rng.uniform(h / 2, spec.height - h / 2)


def _outside(rng: np.random.Generator, spec: SceneSpec, size: tuple[int, int]) -> Point:
    """A centre just past one of the four edges, so the box is entirely off-frame."""
    w, h = size
    x, y = _inside(rng, spec, size)
    side = int(rng.integers(0, 4))
    if side < 2:
        return (-w / 2 - 1 if side == 0 else spec.width + w / 2 + 1), y
    return x, (-h / 2 - 1 if side == 2 else spec.height + h / 2 + 1)


def _speed(rng: np.random.Generator, base: float) -> float:
    """A segment's speed: the object's own speed give or take 30 %, within 40..400 px/s."""
    return float(np.clip(base * rng.uniform(0.7, 1.3), *SPEED_PX_S))


def _timed(rng: np.random.Generator, points: list[Point], stops: dict[int, float]) -> Keys:
    """Keyframes from t = 0 along ``points``, dwelling ``stops[i]`` seconds at point ``i``."""
    speed = rng.uniform(*SPEED_PX_S)
    t = 0.0
    keys = [(0.0, *points[0])]
    for i in range(1, len(points)):
        t += max(math.dist(points[i - 1], points[i]) / _speed(rng, speed), 0.1)
        keys.append((t, *points[i]))
        if i in stops:
            t += stops[i]
            keys.append((t, *points[i]))
    return tuple(keys)


def _shifted(keys: Keys, t0: float) -> Keys:
    """Keyframes moved to start at ``t0``, rounded to ms and tenths of a pixel."""
    return tuple((round(t + t0, 3), round(x, 1), round(y, 1)) for t, x, y in keys)


def _wander(rng: np.random.Generator, spec: SceneSpec, size: tuple[int, int]) -> Keys:
    """Edge-or-appear, 1..3 waypoints (0..2 of them stops), edge-or-vanish."""
    n_stops = int(rng.choice(len(_STOPS_P), p=_STOPS_P))
    n_mid = max(n_stops, int(rng.integers(1, 4)))
    first = _outside(rng, spec, size) if rng.random() < _EDGE_P else _inside(rng, spec, size)
    last = _outside(rng, spec, size) if rng.random() < _EDGE_P else _inside(rng, spec, size)
    points = [first, *(_inside(rng, spec, size) for _ in range(n_mid)), last]
    at = rng.choice(np.arange(1, n_mid + 1), size=n_stops, replace=False)
    stops = {int(i): round(float(rng.uniform(*STOP_S)), 1) for i in at}
    keys = _timed(rng, points, stops)
    early = rng.random() < _EARLY_P
    lo = -min(keys[-1][0] * 0.5, spec.duration_s * 0.3) if early else 0.0
    return _shifted(keys, rng.uniform(lo, max(spec.duration_s - 2.5, lo)))


def _passing_frames(spec: SceneSpec, other: MovingObject) -> list[int]:
    """Frames in the middle 80 % of the video where ``other`` is in view and moving."""
    frames = []
    for i in range(spec.frame_count // 10, spec.frame_count * 9 // 10):
        now, then = position_at(other, i / spec.fps), position_at(other, (i + 1) / spec.fps)
        inside = now is not None and 0 < now[0] < spec.width and 0 < now[1] < spec.height
        if inside and then is not None and now != then:
            frames.append(i)
    return frames


def _crossing(
    rng: np.random.Generator, spec: SceneSpec, size: tuple[int, int], other: MovingObject
) -> Keys | None:
    """Edge to edge through the point ``other`` passes, at the moment it passes there."""
    frames = _passing_frames(spec, other)
    if not frames:
        return None
    tc = frames[int(rng.integers(0, len(frames)))] / spec.fps
    meet = position_at(other, tc)
    if meet is None:  # cannot happen: a passing frame lies inside other's lifetime
        return None
    start, end = _outside(rng, spec, size), _outside(rng, spec, size)
    speed = rng.uniform(80.0, SPEED_PX_S[1])
    t_in, t_out = math.dist(start, meet) / speed, math.dist(meet, end) / speed
    return _shifted(((0.0, *start), (t_in, *meet), (t_in + t_out, *end)), tc - t_in)


def _fallback(spec: SceneSpec, size: tuple[int, int]) -> Keys:
    """Left edge to right edge across the middle at 150 px/s, centred in time."""
    w = size[0]
    span = (spec.width + w + 2) / _FALLBACK_SPEED
    t0 = max((spec.duration_s - span) / 2, 0.0)
    keys = ((0.0, -w / 2 - 1, spec.height / 2), (span, spec.width + w / 2 + 1, spec.height / 2))
    return _shifted(keys, t0)


def within_one_scene(spec: SceneSpec, obj: MovingObject) -> MovingObject:
    """The object cut to the one scene segment where it is in view the longest.

    A scene cut shows another place (another camera): the same thing seen on both sides of a
    cut is no continuous object that anyone could track, so an object ends at a cut (it is
    gone from the new picture) or starts at one. Signs, unlike objects, may stay across cuts
    (captions burnt into the video do).
    """
    bounds = [0, *cut_frames(spec), spec.frame_count]
    seen = [
        sum(object_box(spec, obj, i) is not None for i in range(a, b))
        for a, b in itertools.pairwise(bounds)
    ]
    best = int(np.argmax(seen))
    start, end = bounds[best] / spec.fps, (bounds[best + 1] - 1) / spec.fps
    keys = [k for k in obj.keyframes if start < k[0] < end]
    first, last = position_at(obj, start), position_at(obj, end)
    if first is not None:
        keys.insert(0, (start, *first))
    if last is not None:
        keys.append((end, *last))
    if not keys:
        return obj
    return MovingObject(obj.name, obj.color, obj.size, tuple(keys), obj.pattern, obj.pattern_seed)


def visible_frames(spec: SceneSpec, obj: MovingObject) -> int:
    """Number of frames in which any part of the object is in view."""
    return sum(object_box(spec, obj, i) is not None for i in range(spec.frame_count))


def _object(
    rng: np.random.Generator, spec: SceneSpec, look: _Look, other: MovingObject | None
) -> MovingObject:
    """Draw paths until one is visible long enough (crossing ``other`` in the first half)."""
    needed = math.ceil(MIN_VISIBLE_S * spec.fps - 1e-9)
    for attempt in range(_ATTEMPTS):
        keys = None
        if other is not None and attempt < _ATTEMPTS // 2:
            keys = _crossing(rng, spec, look.size, other)
        obj = within_one_scene(spec, look.moving(keys or _wander(rng, spec, look.size)))
        if visible_frames(spec, obj) >= needed:
            return obj
    return look.moving(_fallback(spec, look.size))


def random_objects(rng: np.random.Generator, spec: SceneSpec) -> tuple[MovingObject, ...]:
    """0..3 objects (mostly 1..3) for a scene of ``spec``'s size, rate and length."""
    count = int(rng.choice(len(_COUNT_P), p=_COUNT_P))
    objects: list[MovingObject] = []
    for index, color in enumerate(vivid_colours(rng, count)):
        look = _look(rng, spec, index, color)
        other = None
        if objects and rng.random() < _CROSS_P:
            other = objects[int(rng.integers(0, len(objects)))]
        objects.append(_object(rng, spec, look, other))
    return tuple(objects)
