"""Seeded random scenes: their specs keep the stated ranges and their pixels match their truth."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt
import pytest

from synthetic import (
    OBJECT_PATTERNS,
    SIGN_STYLES,
    Box,
    GroundTruth,
    LightingChange,
    MovingObject,
    RandomScene,
    SceneSpec,
    TextSign,
    ground_truth,
    lobby_scene,
    random_scene,
    random_scenes,
    render_frame,
)
from synthetic.random_signs import NUMBERED, WORDS

SEEDS = range(50)
EPS = 1e-6
Mask = npt.NDArray[np.bool_]
Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class Drawn:
    scene: RandomScene
    truth: GroundTruth

    @property
    def spec(self) -> SceneSpec:
        return self.scene.spec


@pytest.fixture(scope="module")
def drawn() -> list[Drawn]:
    scenes = [random_scene(seed) for seed in SEEDS]
    return [Drawn(s, ground_truth(s.spec)) for s in scenes]


def box_mask(shape: tuple[int, ...], box: Box) -> Mask:
    yy, xx = np.ogrid[0 : shape[0], 0 : shape[1]]
    x1, y1, x2, y2 = box
    return np.asarray((xx >= x1) & (xx < x2) & (yy >= y1) & (yy < y2))


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def stops(obj: MovingObject) -> list[float]:
    """Durations of the spans where two consecutive keyframes share a position (a stop that a
    scene cut ends, at the object's first or last keyframe, may be shorter and is left out)."""
    pairs = list(itertools.pairwise(obj.keyframes))
    inner = pairs[1:-1] if len(pairs) > 2 else []
    ends = [p for p in pairs if p not in inner]
    whole = [b[0] - a[0] for a, b in inner if a[1:] == b[1:] and b[0] > a[0]]
    return whole + [b[0] - a[0] for a, b in ends if a[1:] == b[1:] and b[0] - a[0] >= 2.0 - EPS]


def expected_background(spec: SceneSpec, index: int) -> npt.NDArray[np.float64]:
    """The frame with nothing in it, times the lighting gain (unrounded)."""
    empty = replace(spec, objects=(), signs=(), lighting=(), noise=0.0)
    gain = ground_truth(replace(spec, objects=(), signs=())).gain_at(index)
    return render_frame(empty, index).astype(np.float64) * gain


# Determinism -------------------------------------------------------------------------------


def test_same_seed_same_scene_and_same_pixels() -> None:
    a, b = random_scene(11), random_scene(11)
    assert a == b and a.spec == b.spec
    index = a.spec.frame_count // 2
    assert render_frame(a.spec, index).tobytes() == render_frame(b.spec, index).tobytes()
    assert random_scene(12).spec != a.spec


def test_random_scenes_derive_distinct_seeds_deterministically() -> None:
    batch = random_scenes(5, 99)
    assert batch == random_scenes(5, 99)
    assert len({s.seed for s in batch}) == 5
    assert all(s == random_scene(s.seed) for s in batch)
    assert [s.seed for s in random_scenes(5, 100)] != [s.seed for s in batch]


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError):
        random_scene(-1)
    with pytest.raises(ValueError):
        random_scene(1, profile="epic")


# Stated ranges over many seeds ---------------------------------------------------------------


def test_format_encoding_and_container(drawn: list[Drawn]) -> None:
    for d in drawn:
        spec = d.spec
        assert (spec.width, spec.height) in {(852, 480), (1280, 720), (1920, 1080)}
        assert spec.fps in {15, 25, 30}
        assert 10.0 - EPS <= spec.duration_s <= 20.0 + EPS
        assert d.truth.duration_s == pytest.approx(spec.duration_s, abs=EPS)
        assert 0.0 <= spec.noise <= 6.0
        if spec.bitrate is None:
            assert 18 <= spec.crf <= 23
        else:
            low = {480: 300_000, 720: 700_000, 1080: 1_500_000}[spec.height]
            assert low - 5_000 <= spec.bitrate <= 3 * low + 5_000
        assert d.scene.extension in {".mp4", ".mkv"}
    assert {d.spec.height for d in drawn} == {480, 720, 1080}
    assert {d.scene.extension for d in drawn} == {".mp4", ".mkv"}
    assert {d.spec.bitrate is None for d in drawn} == {True, False}


def test_objects_sizes_colours_and_visibility(drawn: list[Drawn]) -> None:
    for d in drawn:
        assert len(d.spec.objects) <= 3
        for obj, truth in zip(d.spec.objects, d.truth.objects, strict=True):
            assert all(30 <= side <= 250 for side in obj.size), obj.size
            assert obj.pattern in OBJECT_PATTERNS
            assert max(obj.color) - min(obj.color) >= 0.75 * 0.8 * 255 - 1, obj.color  # vivid
            assert len(truth.boxes) / d.spec.fps >= 1.5 - EPS, (d.scene.seed, obj.name)
    counts = [len(d.spec.objects) for d in drawn]
    assert set(counts) == {0, 1, 2, 3} and sum(1 <= c <= 3 for c in counts) >= 40
    patterns = {o.pattern for d in drawn for o in d.spec.objects}
    assert patterns == set(OBJECT_PATTERNS)


def test_stops_and_speeds(drawn: list[Drawn]) -> None:
    per_object = []
    for d in drawn:
        for obj in d.spec.objects:
            spans = stops(obj)
            assert len(spans) <= 2 and all(2.0 - EPS <= s <= 10.0 + EPS for s in spans), spans
            per_object.append(len(spans))
            for a, b in itertools.pairwise(obj.keyframes):
                if a[1:] != b[1:]:
                    speed = float(np.hypot(b[1] - a[1], b[2] - a[2])) / (b[0] - a[0])
                    assert speed <= 400 * 1.02, (obj.name, speed)
                    assert speed >= 40 * 0.98 or b[0] - a[0] <= 0.1 + 2e-3, (obj.name, speed)
    assert set(per_object) == {0, 1, 2}


def test_objects_enter_leave_appear_and_vanish(drawn: list[Drawn]) -> None:
    kinds: set[str] = set()
    for d in drawn:
        frame = (0.0, 0.0, float(d.spec.width), float(d.spec.height))
        for obj in d.spec.objects:
            w, h = obj.size
            for label, (_, x, y) in (("in", obj.keyframes[0]), ("out", obj.keyframes[-1])):
                box = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
                if not overlaps(box, frame):
                    kinds.add(f"{label}:edge")
                elif box[0] >= 0 and box[1] >= 0 and box[2] <= frame[2] and box[3] <= frame[3]:
                    kinds.add(f"{label}:view")
    assert kinds == {"in:view", "in:edge", "out:view", "out:edge"}


def test_some_objects_cross_paths(drawn: list[Drawn]) -> None:
    crossings = 0
    for d in drawn:
        for a, b in itertools.combinations(d.truth.objects, 2):
            shared = set(a.boxes) & set(b.boxes)
            crossings += any(overlaps(a.boxes[i], b.boxes[i]) for i in shared)
    assert crossings >= 3


def test_cuts_are_spaced(drawn: list[Drawn]) -> None:
    for d in drawn:
        cuts = d.truth.scene_cuts
        assert len(cuts) <= 2 and cuts == d.spec.scene_cuts
        assert all(2.0 - EPS <= c <= d.truth.duration_s - 2.0 + EPS for c in cuts), cuts
        assert all(b - a >= 3.0 - EPS for a, b in itertools.pairwise(cuts)), cuts
    assert {len(d.truth.scene_cuts) for d in drawn} == {0, 1, 2}


def test_lighting_is_none_a_step_or_a_drift(drawn: list[Drawn]) -> None:
    kinds = set()
    for d in drawn:
        fps, changes = d.spec.fps, d.truth.lighting_changes
        if not changes:
            kinds.add("none")
            continue
        (change,) = changes
        frames = round((change.end_s - change.start_s) * fps)
        if frames == 1:
            kinds.add("step")
            assert 0.15 - EPS <= abs(change.delta) <= 0.35 + EPS
            assert all(abs(change.start_s - c) >= 1.0 - EPS for c in d.truth.scene_cuts)
        else:
            kinds.add("drift")
            assert 3.0 - EPS <= change.end_s - change.start_s <= 8.0 + EPS
            assert 0.10 - EPS <= abs(change.delta / change.gain_before) <= 0.25 + EPS
    assert kinds == {"none", "step", "drift"}


def test_signs_read_like_signs_and_stay_in_the_frame(drawn: list[Drawn]) -> None:
    vocabulary = set(WORDS) | set(NUMBERED)
    for d in drawn:
        assert len(d.spec.signs) <= 3
        assert len({s.text for s in d.spec.signs}) == len(d.spec.signs)
        for sign, truth in zip(d.spec.signs, d.truth.texts, strict=True):
            match = re.fullmatch(r"([A-Z][A-Z ]*[A-Z])( [A-H]?\d{1,3})?", sign.text)
            assert match is not None and match.group(1) in vocabulary, sign.text
            assert 28 <= sign.font_px <= 80 and sign.style in SIGN_STYLES
            assert (truth.font_px, truth.style) == (sign.font_px, sign.style)
            x1, y1, x2, y2 = truth.box
            assert x1 >= 0 and y1 >= 0 and x2 <= d.spec.width and y2 <= d.spec.height
            assert truth.end_s - truth.start_s >= 2.0 - EPS, (sign.text, truth)
        for a, b in itertools.combinations(d.truth.texts, 2):
            assert not overlaps(a.box, b.box), (a, b)
    assert {s.style for d in drawn for s in d.spec.signs} == set(SIGN_STYLES)


def test_sign_timing_varies(drawn: list[Drawn]) -> None:
    starts, across_cut, to_end, corners = 0, 0, 0, 0
    for d in drawn:
        for t in d.truth.texts:
            starts += t.start_s == 0.0
            across_cut += any(t.start_s < c <= t.end_s for c in d.truth.scene_cuts)
            to_end += abs(t.end_s - (d.truth.frame_count - 1) / d.spec.fps) < EPS
            x1, y1, x2, y2 = t.box
            near_x = x1 <= 16 or x2 >= d.spec.width - 16
            corners += near_x and (y1 <= 16 or y2 >= d.spec.height - 16)
    total = sum(len(d.truth.texts) for d in drawn)
    assert min(starts, across_cut, to_end, corners) >= 3 and starts < total


def hidden_share(truth: GroundTruth, box: Box, index: int) -> float:
    """Share of a sign's box that the objects' union covers in a frame."""
    x1, y1, x2, y2 = (int(v) for v in box)
    cover = np.zeros((y2 - y1, x2 - x1), bool)
    for obj in truth.object_at(index):
        bx1, by1, bx2, by2 = (int(v) for v in obj.boxes[index])
        ox1, oy1, ox2, oy2 = bx1 - x1, by1 - y1, bx2 - x1, by2 - y1
        cover[max(oy1, 0) : max(oy2, 0), max(ox1, 0) : max(ox2, 0)] = True
    return float(cover.mean())


def test_objects_never_hide_half_a_sign_for_more_than_a_second(drawn: list[Drawn]) -> None:
    for d in drawn:
        for text in d.truth.texts:
            first, last = round(text.start_s * d.spec.fps), round(text.end_s * d.spec.fps)
            frames = range(first, last + 1)
            hidden = sum(hidden_share(d.truth, text.box, i) > 0.5 for i in frames)
            assert hidden <= d.spec.fps, (d.scene.seed, text.text, hidden)


# Pixels against the truth --------------------------------------------------------------------


def pixel_checks(spec: SceneSpec, truth: GroundTruth, index: int) -> None:
    """Outside objects and signs: background x gain; inside: the object or the sign shows."""
    frame = render_frame(replace(spec, noise=0.0), index).astype(np.int16)
    expected = expected_background(spec, index)
    shown = np.zeros(frame.shape[:2], bool)
    objects = truth.object_at(index)
    for obj in objects:
        shown |= box_mask(frame.shape, obj.boxes[index])
    for text in truth.texts_at(index):
        shown |= box_mask(frame.shape, text.box)
    outside = np.abs(frame - np.clip(np.rint(expected), 0, 255))[~shown]
    assert outside.size == 0 or int(outside.max()) <= 1, index
    diff = np.abs(frame - expected).max(axis=2)
    for k, obj in enumerate(objects):
        visible = box_mask(frame.shape, obj.boxes[index])
        for later in objects[k + 1 :]:
            visible &= ~box_mask(frame.shape, later.boxes[index])
        if visible.sum() > 0:
            assert float((diff[visible] > 8).mean()) >= 0.95, (obj.name, index)
    under = np.zeros(frame.shape[:2], bool)
    for obj in objects:
        under |= box_mask(frame.shape, obj.boxes[index])
    for text in truth.texts_at(index):
        visible = box_mask(frame.shape, text.box) & ~under
        if visible.sum() > 0.5 * box_mask(frame.shape, text.box).sum():
            assert float((diff[visible] > 20).mean()) >= 0.1, (text.text, index)


def test_pixels_match_truth_boxes_and_lighting(drawn: list[Drawn]) -> None:
    busy = [d for d in drawn if d.spec.objects and d.spec.signs and d.spec.lighting][:4]
    assert len(busy) == 4
    for d in busy:
        frames = {i for o in d.truth.objects for i in list(o.boxes)[:: max(len(o.boxes) // 3, 1)]}
        frames |= {round(c.end_s * d.spec.fps) for c in d.truth.lighting_changes}
        for index in sorted(i for i in frames if i < d.truth.frame_count):
            pixel_checks(d.spec, d.truth, index)


def test_a_patterned_object_paints_exactly_its_box() -> None:
    spec = SceneSpec(width=160, height=120, fps=10, duration_s=1.0)
    for pattern in OBJECT_PATTERNS:
        keys = ((0.0, -10.0, 60.0), (1.0, 90.0, 60.0))  # enters through the left edge
        obj = MovingObject("o", (230, 60, 30), (40, 30), keys, pattern=pattern, pattern_seed=3)
        with_obj = replace(spec, objects=(obj,))
        truth = ground_truth(with_obj)
        for index in (0, 2, 7):
            diff = np.any(render_frame(with_obj, index) != render_frame(spec, index), axis=2)
            ys, xs = np.nonzero(diff)
            painted = (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))
            assert painted == truth.object_named("o").boxes[index], (pattern, index)
            assert bool(diff[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].all())
        colours = np.unique(render_frame(with_obj, 7)[diff].reshape(-1, 3), axis=0)
        assert (len(colours) == 1) == (pattern == "flat"), pattern


def test_lighting_gain_applies_at_known_times() -> None:
    lighting = ((1.0, 1.0), (1.1, 1.3), (2.0, 1.3), (3.0, 0.8))
    spec = SceneSpec(width=64, height=48, fps=10, duration_s=4.0, lighting=lighting)
    plain = replace(spec, lighting=())
    truth = ground_truth(spec)
    assert truth.lighting_changes == (
        LightingChange(1.0, 1.1, 1.0, 1.3),
        LightingChange(2.0, 3.0, 1.3, 0.8),
    )
    for index, gain in ((0, 1.0), (10, 1.0), (11, 1.3), (25, 1.05), (30, 0.8), (39, 0.8)):
        assert truth.gain_at(index) == pytest.approx(gain)
        base = render_frame(plain, index).astype(np.float64)
        lit = render_frame(spec, index).astype(np.float64)
        assert np.abs(lit - np.clip(np.rint(base * gain), 0, 255)).max() <= 1, index
    assert np.array_equal(render_frame(spec, 10), render_frame(plain, 10))
    assert (truth.objects, truth.texts, truth.cut_frames) == ((), (), ())


def test_new_fields_default_to_the_old_look() -> None:
    spec = lobby_scene(noise=0.0)
    explicit = replace(
        spec,
        lighting=((0.0, 1.0),),
        objects=tuple(replace(o, pattern="flat") for o in spec.objects),
        signs=tuple(replace(s, style="plate", letter_spacing=0) for s in spec.signs),
    )
    for index in (0, 50, 130):
        assert np.array_equal(render_frame(spec, index), render_frame(explicit, index))
    assert ground_truth(spec).lighting_changes == ()


@pytest.mark.parametrize(
    "build",
    [
        lambda: MovingObject("x", (1, 2, 3), (4, 4), ((0.0, 0, 0),), pattern="stripes"),
        lambda: TextSign("HI", 0.0, 1.0, (10, 10), style="neon"),
        lambda: TextSign("HI", 0.0, 1.0, (10, 10), letter_spacing=-1),
        lambda: SceneSpec(lighting=((2.0, 1.0), (1.0, 1.2))),
        lambda: SceneSpec(lighting=((1.0, 0.0),)),
    ],
)
def test_bad_new_fields_are_rejected(build: object) -> None:
    assert callable(build)
    with pytest.raises(ValueError):
        build()


# Encoded files -------------------------------------------------------------------------------


def small_scene(extension: str) -> RandomScene:
    """The first seed giving a 480p 15 fps scene in the given container."""
    for seed in itertools.count():
        scene = random_scene(seed)
        if (scene.spec.height, scene.spec.fps, scene.extension) == (480, 15, extension):
            return scene
    raise AssertionError("unreachable")


@pytest.mark.parametrize("extension", [".mp4", ".mkv"])
def test_encoded_scene_decodes_with_its_frame_count_and_size(
    tmp_path: Path, extension: str
) -> None:
    scene = small_scene(extension)
    path, truth = scene.write(tmp_path)
    assert path.name == f"random-short-{scene.seed}{extension}"
    with av.open(str(path)) as container:
        decoded = list(container.decode(container.streams.video[0]))
    assert len(decoded) == truth.frame_count
    assert {(f.width, f.height) for f in decoded} == {(scene.spec.width, scene.spec.height)}
    times = [float(f.time or 0.0) for f in decoded]
    assert times == pytest.approx([i / truth.fps for i in range(truth.frame_count)], abs=2e-3)
    image: Image = decoded[len(decoded) // 2].to_ndarray(format="rgb24")
    clean = render_frame(replace(scene.spec, noise=0.0), len(decoded) // 2)
    assert float(np.abs(image.astype(np.float64) - clean).mean()) < 12
