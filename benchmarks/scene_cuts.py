"""The scene score measured directly on frames of known truth (no flow, no video).

    nice -n 15 .venv/bin/python benchmarks/scene_cuts.py [--seeds heldout] [--count 200]
        [--families scenes,cases,signs] [--cache /tmp/ves-scene-cuts]

For each seed of ``testkit.perception.FAMILY_SEED_RANGES`` (the first ``--count`` of the range),
the frames the sampler keeps at the default 5 fps are rendered (``synthetic.render``), shrunk
to the thumbnail (480 wide, area-averaged) and to the tiny grey frame as
``tasks.sample.sampler`` makes it (``tiny_step``, ``tiny_grey``), and each consecutive pair is
scored twice: by the score before this change (``_score_before``, the mean brightness matched)
and by ``tasks.sample.scene_score.scene_score``. Each pair is labelled from the spec's truth,
the first that applies: ``cut`` (a cut frame in the pair), ``infrared`` (the camera turns
grey), ``lighting step`` (a gain jump between two frames), ``sign`` (a sign appears or
disappears), ``drift`` (the gain ramps), ``motion`` (an object is in view), ``still``.

The ``signs`` family is targeted: on the backdrops of the family's scene seeds (no objects,
noise sigma 2), a still scene made dark (gain 0.35) or light (gain 1.35), then the same scene
with a sign plate of 1..30 % of the frame pasted on it: a light plate on the dark scene, a dark
plate (``inverse``) on the light one. Every such pair is a negative.

Printed per family and category: pairs, how many score >= 0.3 (a ``scene_change`` event) and
>= 0.45 (the track stage ends tracks there), before -> after, and the score range. For cuts
the same counts are the recall. Tiny frames are cached (``--cache``), so rescoring is quick.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from synthetic.lighting import apply_gain, gain_at, lighting_changes
from synthetic.random_scene import RandomScene
from synthetic.render import render_frame
from synthetic.scene import (
    SceneSpec,
    TextSign,
    cut_frames,
    object_box,
    sign_place,
    sign_shown,
)
from synthetic.signs import sign_patch
from tasks.sample.sampler import scaled_size
from tasks.sample.scene_score import scene_score, tiny_grey, tiny_step
from testkit.perception import FAMILIES, FAMILY_SEED_RANGES

Grey = npt.NDArray[np.uint8]
Scorer = Callable[[Grey | None, Grey], float]
SAMPLE_FPS = 5.0  # ves.settings.processing: sample_fps
THUMB_WIDTH = 480  # ves.settings.processing: thumbnail_width
EVENT, CERTAIN = 0.3, 0.45  # scene_cut_threshold; tasks.track.stage.CERTAIN_CUT_SCORE
PLATE_SHARES = (0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)
ORDER = ("cut", "infrared", "lighting step", "sign", "drift", "motion", "still")


def _score_before(previous: Grey | None, tiny: Grey) -> float:
    """The scene score at a8d3178: mean brightness matched, then max(MAD, histogram EMD)."""
    if previous is None:
        return 0.0

    def same(t: Grey) -> Grey:
        mean = float(t.mean())
        if mean < 1.0:
            return t
        return np.asarray(np.clip(t.astype(np.float32) * (128.0 / mean), 0, 255), np.uint8)

    a, b = same(previous), same(tiny)
    mad = float(np.mean(np.abs(a.astype(np.int16) - b.astype(np.int16)))) / 32.0
    h1 = np.bincount(a.ravel() // 4, minlength=64)
    h2 = np.bincount(b.ravel() // 4, minlength=64)
    moved = np.abs(np.cumsum(h1) / a.size - np.cumsum(h2) / b.size)
    return min(1.0, max(mad, float(moved.sum()) * 4 / 32.0))


def sampled_indices(fps: float, frame_count: int) -> list[int]:
    """The frames ``Sampler`` keeps from a whole video decoded frame by frame."""
    step, next_t, kept = 1.0 / SAMPLE_FPS, 0.0, []
    for index in range(frame_count):
        t = index / fps
        if t + 1e-6 >= next_t:
            kept.append(index)
            next_t = max(next_t + step, t + step / 2)
    return kept


def tiny_of(rgb: npt.NDArray[np.uint8]) -> Grey:
    """The tiny grey frame the sampler scores, from a full-size RGB frame."""
    height, width = rgb.shape[:2]
    thumb = cv2.resize(rgb, scaled_size(width, height, THUMB_WIDTH), interpolation=cv2.INTER_AREA)
    return tiny_grey(thumb, tiny_step(thumb.shape[1]))


def _moving(spec: SceneSpec, i: int, j: int) -> bool:
    return any(object_box(spec, o, k) is not None for o in spec.objects for k in (i, j))


def label(spec: SceneSpec, i: int, j: int) -> str:
    """What happens between sampled frames ``i`` < ``j`` (the first that applies, ``ORDER``)."""
    if any(i < c <= j for c in cut_frames(spec)):
        return "cut"
    ir = spec.infrared_from_s
    if ir is not None and i < ir * spec.fps - 1e-9 <= j:
        return "infrared"
    gi, gj = gain_at(spec.lighting, i / spec.fps), gain_at(spec.lighting, j / spec.fps)
    steps = [c for c in lighting_changes(spec.lighting) if c.end_s - c.start_s <= 1.5 / spec.fps]
    if gi != gj and any(i / spec.fps <= c.start_s and c.end_s <= j / spec.fps for c in steps):
        return "lighting step"
    if any(sign_shown(spec, s, i) != sign_shown(spec, s, j) for s in spec.signs):
        return "sign"
    if gi != gj:
        return "drift"
    return "motion" if _moving(spec, i, j) else "still"


def _cached(cache: Path, key: str, make: Callable[[], Grey]) -> Grey:
    path = cache / f"{hashlib.sha1(key.encode()).hexdigest()[:16]}.npy"
    if path.exists():
        return np.asarray(np.load(path), dtype=np.uint8)
    tiny = make()
    partial = path.with_suffix(".partial.npy")
    np.save(partial, tiny)
    partial.replace(path)  # whole or absent, even with two runs at once
    return tiny


def scene_pairs(scene: RandomScene, cache: Path) -> Iterator[tuple[str, Grey, Grey]]:
    spec = scene.spec
    kept = sampled_indices(spec.fps, spec.frame_count)
    key = f"{scene.profile}-{scene.seed}-{spec.width}x{spec.height}-{len(kept)}"
    tinies = _cached(cache, key, lambda: np.stack([tiny_of(render_frame(spec, k)) for k in kept]))
    for n in range(1, len(kept)):
        yield label(spec, kept[n - 1], kept[n]), tinies[n - 1], tinies[n]


def _plate_font(text: str, style: str, spec: SceneSpec, share: float) -> int:
    """The font size whose plate covers about ``share`` of the frame."""
    area = spec.width * spec.height * share
    lo, hi = 4, 2000
    while lo < hi:
        mid = (lo + hi) // 2
        w, h = sign_patch(text, mid, style, 0).size
        lo, hi = (mid + 1, hi) if w * h < area and w < spec.width else (lo, mid)
    return lo


def sign_pairs(scene: RandomScene, cache: Path) -> Iterator[tuple[str, Grey, Grey]]:
    """A still dark (light) scene, then a light (dark) plate of each share appearing on it."""
    spec = replace(scene.spec, objects=(), signs=(), scene_cuts=(), lighting=(), noise=0.0)
    backdrop = render_frame(spec, 0)
    rng = np.random.default_rng([scene.seed, 0x5C])
    noise = [rng.normal(0.0, 2.0, backdrop.shape).astype(np.float32) for _ in range(2)]

    def noisy(frame: npt.NDArray[np.uint8], k: int) -> npt.NDArray[np.uint8]:
        return np.asarray(np.clip(np.rint(frame + noise[k]), 0, 255), dtype=np.uint8)

    for look, gain, style in (("light on dark", 0.35, "plate"), ("dark on light", 1.35, "inverse")):
        still = apply_gain(backdrop, gain)
        first = _cached(cache, f"signs-{scene.seed}-{look}", lambda s=still: tiny_of(noisy(s, 0)))
        for share in PLATE_SHARES:
            text = "EXIT 12"
            font = _plate_font(text, style, spec, share)
            sign = TextSign(text, 0.0, 1.0, (spec.width // 2, spec.height // 2), font, style)

            def after(sign: TextSign = sign, still: Grey = still, style: str = style) -> Grey:
                frame = still.copy()
                x0, y0, box = sign_place(spec, sign)
                assert box is not None
                x1, y1, x2, y2 = box
                rgb = sign_patch(sign.text, sign.font_px, style, 0).rgb
                frame[y1:y2, x1:x2] = rgb[y1 - y0 : y2 - y0, x1 - x0 : x2 - x0]
                return tiny_of(noisy(frame, 1))

            second = _cached(cache, f"signs-{scene.seed}-{look}-{share}-{font}", after)
            yield f"{look} {share:.0%}", first, second


def _row(name: str, before: list[float], after: list[float]) -> str:
    def counts(scores: list[float]) -> str:
        s = np.asarray(scores)
        return f"{int((s >= EVENT).sum()):4d} {int((s >= CERTAIN).sum()):4d}"

    def span(scores: list[float]) -> str:
        return f"{min(scores):.2f}-{max(scores):.2f}"

    return (
        f"| {name:<20} | {len(before):5d} | {counts(before)} -> {counts(after)} "
        f"| {span(before)} | {span(after)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", choices=("tuning", "heldout"), default="heldout")
    parser.add_argument("--count", type=int, default=200, help="first N seeds of each range")
    parser.add_argument("--families", default="scenes,cases,signs")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/ves-scene-cuts"))
    args = parser.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    for family in args.families.split(","):
        ranges = FAMILY_SEED_RANGES["scenes" if family == "signs" else family]
        seeds = list(ranges[args.seeds])[: args.count if family != "signs" else 20]
        make = FAMILIES["scenes" if family == "signs" else family]
        pairs = sign_pairs if family == "signs" else scene_pairs
        before: dict[str, list[float]] = defaultdict(list)
        after: dict[str, list[float]] = defaultdict(list)
        started = time.perf_counter()
        for seed in seeds:
            for kind, a, b in pairs(make(seed), args.cache):
                before[kind].append(_score_before(a, b))
                after[kind].append(scene_score(a, b))
        took = time.perf_counter() - started
        span = f"{seeds[0]}..{seeds[-1]} ({len(seeds)})"
        print(f"\n{family}, {args.seeds} seeds {span}, {took:.0f} s")
        print("| pairs                | count | >=0.3 >=0.45 before -> after | before | after |")
        print("|---|---|---|---|---|")
        kinds = ORDER if family != "signs" else tuple(before)
        for kind in kinds:
            if before.get(kind):
                print(_row(kind, before[kind], after[kind]))


if __name__ == "__main__":
    main()
