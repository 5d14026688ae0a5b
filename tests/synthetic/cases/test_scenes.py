"""The cases family: each case's truth checked against the pixels it renders.

Scenes are taken from the first cases seeds; pixel checks render a few frames of a scene with
its noise, signs and picture changes left out (and, where exactness needs it, one object made
flat), and compare them with the same frames rendered without that object.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import numpy.typing as npt
import pytest

from synthetic import (
    CASES,
    Box,
    GroundTruth,
    MovingObject,
    RandomScene,
    SceneSpec,
    ground_truth,
    random_case_scene,
    render_frame,
)
from synthetic.cases.paths import GAP_PX
from synthetic.photos import BACKDROP_PHOTOS, backdrop_patch, sprite_patch
from synthetic.scene import object_place

SEEDS = range(60)
Mask = npt.NDArray[np.bool_]


@pytest.fixture(scope="module")
def scenes() -> list[RandomScene]:
    return [random_case_scene(seed) for seed in SEEDS]


def first_with(scenes: list[RandomScene], case: str, without: str = "") -> RandomScene:
    return next(s for s in scenes if case in s.cases and without not in s.cases)


def quiet(spec: SceneSpec, *objects: MovingObject) -> SceneSpec:
    """The spec with only ``objects``, no noise, signs, lighting or infrared."""
    return replace(spec, objects=objects, signs=(), noise=0.0, lighting=(), infrared_from_s=None)


def changed(spec: SceneSpec, obj: MovingObject, index: int) -> tuple[Mask, npt.NDArray[np.int16]]:
    """Pixels that ``obj`` changes in a frame, and by how much (summed over channels)."""
    alone = render_frame(quiet(spec, obj), index).astype(np.int16)
    empty = render_frame(quiet(spec), index).astype(np.int16)
    delta = (alone - empty).sum(axis=2)
    return np.asarray((alone != empty).any(axis=2)), delta


def inside(shape: tuple[int, ...], box: Box) -> Mask:
    yy, xx = np.ogrid[0 : shape[0], 0 : shape[1]]
    return np.asarray((xx >= box[0]) & (xx < box[2]) & (yy >= box[1]) & (yy < box[3]))


def tight(mask: Mask) -> Box:
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    return float(cols[0]), float(rows[0]), float(cols[-1] + 1), float(rows[-1] + 1)


def some_frames(truth: GroundTruth, name: str, count: int = 8) -> list[int]:
    frames = sorted(truth.object_named(name).boxes)
    return frames[:: max(1, len(frames) // count)][:count]


def test_every_scene_is_built_around_one_or_two_cases(scenes: list[RandomScene]) -> None:
    for scene in scenes:
        truth = ground_truth(scene.spec)
        assert 1 <= len(scene.cases) <= 2 and set(scene.cases) <= set(CASES)
        assert truth.scene_cuts == () and scene.name == f"random-cases-{scene.seed}"
        assert all(
            o.last_seen_s - o.first_seen_s >= 1.5 - 1 / scene.spec.fps for o in truth.objects
        )
    assert {c for s in scenes for c in s.cases} == set(CASES)
    assert random_case_scene(7) == scenes[7]


@pytest.mark.parametrize("shape", ["walker", "blob"])
def test_a_non_rigid_outline_fills_its_truth_box_exactly_and_changes(
    scenes: list[RandomScene], shape: str
) -> None:
    scene = next(s for s in scenes if any(o.shape == shape for o in s.spec.objects))
    obj = next(o for o in scene.spec.objects if o.shape == shape)
    obj = replace(obj, pattern="flat", sprite=None, shadow=None)
    truth = ground_truth(quiet(scene.spec, obj))
    boxes = set()
    for index in some_frames(truth, obj.name):
        mask, _ = changed(scene.spec, obj, index)
        box = truth.object_named(obj.name).boxes[index]
        assert tight(mask) == box
        boxes.add(box[2] - box[0])
        area = (box[2] - box[0]) * (box[3] - box[1])
        assert mask.sum() < 0.9 * area  # an outline, not a box
    assert len(boxes) > 1  # the outline's width changes as it moves


def test_a_shadow_darkens_outside_the_truth_box_and_is_no_object(scenes: list[RandomScene]) -> None:
    scene = first_with(scenes, "shadow")
    obj = replace(scene.spec.objects[0], sprite=None, pattern="flat")
    assert obj.shadow is not None
    truth = ground_truth(quiet(scene.spec, obj))
    assert [o.name for o in truth.objects] == [obj.name]
    for index in some_frames(truth, obj.name, 4):
        box = truth.object_named(obj.name).boxes[index]
        mask, delta = changed(scene.spec, obj, index)
        outside = mask & ~inside(mask.shape, box)
        assert outside.sum() > 20 and (delta[outside] < 0).all()  # darker, beside the box
        unshaded, _ = changed(scene.spec, replace(obj, shadow=None), index)
        assert not (unshaded & ~inside(mask.shape, box)).any()


def test_a_returning_thing_is_one_identity_seen_twice(scenes: list[RandomScene]) -> None:
    scene = first_with(scenes, "return")
    truth = ground_truth(scene.spec)
    first, again = (
        o for o in truth.objects if sum(p.identity == o.identity for p in truth.objects) == 2
    )
    assert (
        first.identity == again.identity == first.name
        and len(truth.identities) == len(truth.objects) - 1
    )
    assert again.first_seen_s - first.last_seen_s >= 1.5
    looks = [o for o in scene.spec.objects if o.identity == first.identity]
    assert len({replace(o, name="", keyframes=((0.0, 0.0, 0.0),)) for o in looks}) == 1  # same look
    gap = round((first.last_seen_s + again.first_seen_s) / 2 * scene.spec.fps)
    spec = quiet(scene.spec, *scene.spec.objects)
    others = quiet(scene.spec, *(o for o in scene.spec.objects if o.identity != first.identity))
    assert np.array_equal(render_frame(spec, gap), render_frame(others, gap))  # away: not drawn


def _gap(a: MovingObject, b: MovingObject, spec: SceneSpec, index: int) -> float | None:
    pa, pb = object_place(spec, a, index), object_place(spec, b, index)
    if pa is None or pb is None:
        return None
    ax, ay, bx, by = (*pa, *pb)
    dx = max(bx - (ax + a.size[0]), ax - (bx + b.size[0]))
    dy = max(by - (ay + a.size[1]), ay - (by + b.size[1]))
    return max(dx, dy)


def test_a_pair_walks_a_few_pixels_apart_for_seconds(scenes: list[RandomScene]) -> None:
    scene = first_with(scenes, "pair", without="return")
    spec = scene.spec
    a, b = spec.objects
    truth = ground_truth(spec)
    both = sorted(set(truth.object_named(a.name).boxes) & set(truth.object_named(b.name).boxes))
    gaps = [_gap(a, b, spec, i) for i in both]
    close = [g for g in gaps if g is not None and 0 < g <= GAP_PX[1] + 1]
    assert len(close) >= 2 * spec.fps


def test_things_carry_on_through_a_picture_change(scenes: list[RandomScene]) -> None:
    for scene in [s for s in scenes if "picture_change" in s.cases][:4]:
        spec, truth = scene.spec, ground_truth(scene.spec)
        at = spec.infrared_from_s if spec.infrared_from_s is not None else spec.lighting[1][0]
        k = round(at * spec.fps)
        through = [o for o in truth.objects if k - 1 in o.boxes and k in o.boxes]
        assert through and truth.scene_cuts == ()  # the same objects, no cut
        plain = replace(spec, noise=0.0)
        before, after = render_frame(plain, k - 1), render_frame(plain, k)
        if spec.infrared_from_s is not None:
            assert (after == after[:, :, :1]).all() and not (before == before[:, :, :1]).all()
        else:
            ratio = after.mean() / before.mean()
            gain = spec.lighting[1][1] / spec.lighting[0][1]
            assert math.isclose(ratio, gain, rel_tol=0.1)


def test_photo_scenes_show_a_photo_backdrop_and_photo_sprites(scenes: list[RandomScene]) -> None:
    scene = next(s for s in scenes if "photo" in s.cases and any(o.sprite for o in s.spec.objects))
    spec = scene.spec
    assert spec.backdrop_photo in BACKDROP_PHOTOS
    backdrop = backdrop_patch(
        spec.backdrop_photo, spec.width, spec.height, spec.background, spec.seed
    )
    assert np.array_equal(render_frame(quiet(spec), 0), backdrop)
    assert backdrop.min() >= 30 and backdrop.max() <= 195
    obj = next(o for o in spec.objects if o.sprite and o.shape == "box")
    truth = ground_truth(quiet(spec, obj))
    index = some_frames(truth, obj.name)[len(some_frames(truth, obj.name)) // 2]
    place = object_place(spec, obj, index)
    assert place is not None
    x1, y1, x2, y2 = (int(v) for v in truth.object_named(obj.name).boxes[index])
    frame = render_frame(quiet(spec, replace(obj, shadow=None)), index)
    patch = sprite_patch(obj.sprite or "", obj.size, obj.pattern_seed)
    px, py = place
    assert np.array_equal(frame[y1:y2, x1:x2], patch[y1 - py : y2 - py, x1 - px : x2 - px])


def test_the_man_of_the_camera_photo_is_a_dont_care_region_where_the_backdrop_shows_him() -> None:
    """He wears a black coat before a light sky and lawn: the region the truth gives him is
    darker than the rest of the backdrop, and only his photo has one."""
    spec = SceneSpec(width=320, height=240, fps=10, duration_s=2.0, backdrop_photo="camera")
    truth = ground_truth(spec)
    (man,) = truth.dont_care
    assert (man.first_seen_s, man.last_seen_s, len(man.boxes)) == (0.0, 1.9, 20)
    backdrop = render_frame(spec, 0).mean(axis=2)
    region = inside(backdrop.shape, man.boxes[0])
    assert backdrop[region].mean() < backdrop[~region].mean() - 30
    assert not truth.objects
    assert not ground_truth(replace(spec, backdrop_photo="brick")).dont_care
