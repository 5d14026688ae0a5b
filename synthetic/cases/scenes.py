"""The cases family: seeded scenes, each built around one or two cases ``random_scene`` lacks.

``random_case_scene(seed)`` draws, from ``numpy.random.default_rng([seed, 0xCA5E])`` alone, a
scene on ``random_scene``'s stage (format, backdrop look, noise, encoding, container; no cuts and
no other lighting) with its signs, around one case (two in half the scenes):

* ``picture_change``: while something moves in view, the camera switches to infrared (every
  frame grey from then on) or the exposure resets (the gain jumps by 0.35..0.6 between two
  frames); truth: the same objects before and after;
* ``return``: one thing leaves through an edge and comes back 1.5..4 s later with the same look
  (through the edge it left by, mostly): two appearances (two truth objects) of one identity;
* ``non_rigid``: walkers (stick figures swinging legs and arms) and blobs (wobbling, breathing
  outlines): the truth box is the outline's tight box, frame by frame;
* ``shadow``: every object casts a soft shadow at its feet, which is no object and lies partly
  outside the truth box;
* ``photo``: a photo backdrop, and photo sprites on most objects (``synthetic.photos``);
* ``pair``: two objects walk a few px apart (``synthetic.cases.paths``), both in view together
  for at least 2 s; half the pairs part.

A scene without ``return`` or ``pair`` has one or two objects walking across the frame. Each
object is in view for at least 1.5 s; paths that are not are redrawn faster.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from synthetic.cases.paths import GAP_PX, case_speed, pair, stay, visit, walk
from synthetic.patterns import OBJECT_PATTERNS
from synthetic.photos import BACKDROP_PHOTOS, SPRITE_PHOTOS
from synthetic.random_motion import visible_frames, vivid_colours
from synthetic.random_scene import EXTENSIONS, RandomScene, draw_stage
from synthetic.random_signs import random_signs
from synthetic.scene import MovingObject, SceneSpec, object_box, object_place, position_at

CASES = ("picture_change", "return", "non_rigid", "shadow", "photo", "pair")
FAMILY = "cases"
AWAY_S = (1.5, 4.0)
EXPOSURE_JUMP = (0.35, 0.6)
MIN_VISIBLE_S = 1.5
TOGETHER_S = 2.0
_TWO_CASES_P = 0.5
_SPRITE_P = 0.7
_WALKER_P = 0.6
_STAY_P = 0.4
_ATTEMPTS = 12
_FASTER = 1.15  # each redraw walks this much faster


def _draw_cases(rng: np.random.Generator) -> tuple[str, ...]:
    """One case, or two distinct ones, in ``CASES`` order."""
    count = 2 if rng.random() < _TWO_CASES_P else 1
    picked = rng.choice(len(CASES), size=count, replace=False)
    return tuple(CASES[i] for i in sorted(int(k) for k in picked))


def _size(rng: np.random.Generator, spec: SceneSpec, shape: str) -> tuple[int, int]:
    """A walker half as wide as tall (15..35 % of the frame height), else 7..30 % across."""
    if shape == "walker":
        h = int(np.clip(round(spec.height * rng.uniform(0.15, 0.35)), 40, 300))
        return h // 2, h
    side = spec.height * rng.uniform(0.07 if shape == "box" else 0.1, 0.3)
    root = math.sqrt(rng.uniform(0.5, 2.0))
    return int(np.clip(round(side * root), 30, 250)), int(np.clip(round(side / root), 30, 250))


def _look(
    rng: np.random.Generator,
    spec: SceneSpec,
    name: str,
    color: tuple[int, int, int],
    cases: tuple[str, ...],
) -> MovingObject:
    """An object's look (shape, size, surface, sprite, shadow) on a placeholder path."""
    shape = "box"
    if "non_rigid" in cases:
        shape = "walker" if rng.random() < _WALKER_P else "blob"
    size = _size(rng, spec, shape)
    pattern = OBJECT_PATTERNS[int(rng.integers(0, len(OBJECT_PATTERNS)))]
    sprites = [p for p in SPRITE_PHOTOS if p != spec.backdrop_photo]
    sprite = None
    if "photo" in cases and rng.random() < _SPRITE_P:
        sprite = sprites[int(rng.integers(0, len(sprites)))]
    shadow = None
    if "shadow" in cases:
        side = 1 if rng.random() < 0.5 else -1
        shadow = (
            round(side * size[0] * rng.uniform(0.2, 0.6)),
            round(size[1] * rng.uniform(0, 0.15)),
        )
    seed = int(rng.integers(0, 2**31))
    keys = ((0.0, 0.0, 0.0),)
    return MovingObject(name, color, size, keys, pattern, seed, shape, sprite, shadow, name)


def _visible(spec: SceneSpec, objects: list[MovingObject]) -> bool:
    """Every object is in view for at least ``MIN_VISIBLE_S``."""
    needed = math.ceil(MIN_VISIBLE_S * spec.fps - 1e-9)
    return all(visible_frames(spec, o) >= needed for o in objects)


def _returning(
    rng: np.random.Generator, spec: SceneSpec, look: MovingObject, speed: float
) -> list[MovingObject]:
    """Two appearances of one thing: a visit, 1.5..4 s away, then another visit or a stay."""
    side = int(rng.integers(0, 4))
    first, out = visit(rng, spec, look.size, side, rng.uniform(0.0, 1.5), speed)
    back = out if rng.random() < 0.7 else int(rng.integers(0, 4))
    t1 = first[-1][0] + rng.uniform(*AWAY_S)
    if rng.random() < _STAY_P:
        second = stay(rng, spec, look.size, back, t1, speed)
    else:
        second = visit(rng, spec, look.size, back, t1, speed)[0]
    again = replace(look, name=f"{look.name}-back", keyframes=second)
    return [replace(look, keyframes=first), again]


def _paired(
    rng: np.random.Generator, spec: SceneSpec, looks: list[MovingObject], speed: float
) -> list[MovingObject]:
    """Two looks walking together (see ``case_paths.pair``)."""
    first, second = pair(rng, spec, looks[0], looks[1], speed)
    return [replace(looks[0], keyframes=first), replace(looks[1], keyframes=second)]


def _walkers(
    rng: np.random.Generator, spec: SceneSpec, looks: list[MovingObject], speed: float
) -> list[MovingObject]:
    """Each look walking across the frame on its own."""
    return [replace(look, keyframes=walk(rng, spec, look.size, speed)) for look in looks]


def _apart_px(spec: SceneSpec, first: MovingObject, second: MovingObject, index: int) -> float:
    """How far apart two objects' boxes are in a frame (inf when either is out of view)."""
    if object_box(spec, first, index) is None or object_box(spec, second, index) is None:
        return math.inf
    (ax, ay), (bx, by) = (object_place(spec, o, index) or (0, 0) for o in (first, second))
    dx = max(bx - ax - first.size[0], ax - bx - second.size[0])
    return max(dx, by - ay - first.size[1], ay - by - second.size[1])


def _together(spec: SceneSpec, first: MovingObject, second: MovingObject) -> int:
    """Frames in which both of a pair are in view, walking at most ``GAP_PX`` apart."""
    near = GAP_PX[1] + 1
    return sum(_apart_px(spec, first, second, i) <= near for i in range(spec.frame_count))


def _planned(
    rng: np.random.Generator, spec: SceneSpec, looks: list[MovingObject], plan: str, speed: float
) -> list[MovingObject]:
    """One draw of the paths of ``looks`` by ``plan`` ("return", "pair" or "walk")."""
    if plan == "return":
        return _returning(rng, spec, looks[0], speed)
    if plan == "pair":
        return _paired(rng, spec, looks, speed)
    return _walkers(rng, spec, looks, speed)


def _drawn(
    rng: np.random.Generator, spec: SceneSpec, looks: list[MovingObject], plan: str
) -> list[MovingObject]:
    """Paths for ``looks`` by ``plan``, redrawn faster until each object is in view for
    ``MIN_VISIBLE_S`` (and a pair together for ``TOGETHER_S``)."""
    speed = case_speed(rng, spec)
    objects: list[MovingObject] = []
    for attempt in range(_ATTEMPTS):
        objects = _planned(rng, spec, looks, plan, speed * _FASTER**attempt)
        together = plan != "pair" or _together(spec, *objects) >= TOGETHER_S * spec.fps
        if together and _visible(spec, objects):
            return objects
    return objects


def _case_objects(
    rng: np.random.Generator, spec: SceneSpec, cases: tuple[str, ...]
) -> tuple[MovingObject, ...]:
    """The scene's objects: the returning one and the pair when asked for, else 1..2 walkers."""
    plans: list[str] = [c for c in ("return", "pair") if c in cases] or ["walk"]
    counts = {"return": 1, "pair": 2, "walk": int(rng.integers(1, 3))}
    colours = vivid_colours(rng, sum(counts[p] for p in plans))
    names = (f"object{k + 1}" for k in range(len(colours)))
    objects: list[MovingObject] = []
    for plan in plans:
        looks = [_look(rng, spec, next(names), colours.pop(0), cases) for _ in range(counts[plan])]
        objects += _drawn(rng, spec, looks, plan)
    return tuple(objects)


def _moving_in_view(spec: SceneSpec, index: int) -> bool:
    """Some object is in view at frame ``index`` and moves on to the next frame."""
    t0, t1 = index / spec.fps, (index + 1) / spec.fps
    return any(
        object_box(spec, o, index) is not None and position_at(o, t0) != position_at(o, t1)
        for o in spec.objects
    )


def _picture_change(rng: np.random.Generator, spec: SceneSpec) -> SceneSpec:
    """An infrared switch or an exposure reset between frames k and k + 1, while things move."""
    frames = [i for i in range(spec.fps, spec.frame_count - spec.fps) if _moving_in_view(spec, i)]
    k = frames[int(rng.integers(0, len(frames)))] if frames else spec.frame_count // 2
    if rng.random() < 0.5:
        return replace(spec, infrared_from_s=(k + 1) / spec.fps)
    low = round(float(rng.uniform(0.55, 0.8)), 2)
    high = round(low + float(rng.uniform(*EXPOSURE_JUMP)), 2)
    before, after = (low, high) if rng.random() < 0.5 else (high, low)
    return replace(spec, lighting=((k / spec.fps, before), ((k + 1) / spec.fps, after)))


def random_case_scene(seed: int) -> RandomScene:
    """The cases-family scene of ``seed`` (a non-negative int); the same seed, the same scene."""
    if seed < 0:
        raise ValueError("seed must be >= 0")
    stage_rng, case_rng, object_rng, sign_rng, file_rng = np.random.default_rng(
        [seed, 0xCA5E]
    ).spawn(5)
    spec = replace(draw_stage(stage_rng, seed, "short"), scene_cuts=(), lighting=())
    cases = _draw_cases(case_rng)
    if "photo" in cases:
        spec = replace(
            spec, backdrop_photo=BACKDROP_PHOTOS[int(case_rng.integers(0, len(BACKDROP_PHOTOS)))]
        )
    spec = replace(spec, objects=_case_objects(object_rng, spec, cases))
    if "picture_change" in cases:
        spec = _picture_change(case_rng, spec)
    spec = replace(spec, signs=random_signs(sign_rng, spec))
    extension = EXTENSIONS[int(file_rng.integers(0, len(EXTENSIONS)))]
    return RandomScene(seed, FAMILY, spec, extension, cases)
