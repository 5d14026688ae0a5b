"""Seeded random scenes with exact ground truth, for benchmarking on scenes nobody tuned for.

``random_scene(seed)`` draws, from ``numpy.random.default_rng(seed)`` alone:

* format: 852x480, 1280x720 or 1920x1080 at 15, 25 or 30 fps; 10..20 s ("short") or
  30..60 s ("long"), a whole number of frames; which backdrop look the first segment uses;
* 0..2 scene cuts, on frame boundaries, >= 3 s apart and >= 2 s from either end;
* lighting: none, a step (gain jumps by 0.15..0.35 between two frames, a light switched on or
  off) or a drift (a linear ramp of +-10..25 % over 3..8 s, auto-exposure);
* camera noise sigma 0..6, and either clean encoding (crf 18..23) or a low bitrate (1..3 times
  300 kbit/s at 480p, 700 kbit/s at 720p, 1.5 Mbit/s at 1080p); an .mp4 or .mkv container;
* objects (``synthetic.random_motion``) and signs (``synthetic.random_signs``).

Each part draws from its own child generator, so the parts vary independently. Every draw is
valid by construction or redrawn deterministically: the function never raises for a seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from synthetic.encode import write_video
from synthetic.lighting import Keyframes
from synthetic.random_motion import random_objects
from synthetic.random_signs import random_signs
from synthetic.scene import GroundTruth, SceneSpec
from synthetic.truth import ground_truth

PROFILES = {"short": (10.0, 20.0), "long": (30.0, 60.0)}
RESOLUTIONS = ((852, 480), (1280, 720), (1920, 1080))
FRAME_RATES = (15, 25, 30)
EXTENSIONS = (".mp4", ".mkv")
CUT_GAP_S = 3.0
CUT_MARGIN_S = 2.0
STEP_GAIN = (0.15, 0.35)
DRIFT_GAIN = (0.10, 0.25)
DRIFT_S = (3.0, 8.0)
MAX_NOISE = 6.0
CRF = (18, 23)
LOW_BITRATE = {480: 300_000, 720: 700_000, 1080: 1_500_000}
BACKDROP_LOOKS = 3  # render cycles through three palette-and-texture looks
_CUTS_P = (0.35, 0.4, 0.25)  # 0..2 cuts
_LIGHTING_P = (0.4, 0.3, 0.3)  # none, step, drift
_NO_NOISE_P = 0.15
_CLEAN_P = 0.5


@dataclass(frozen=True)
class RandomScene:
    """A generated scene: its spec, and the container extension to write it with.

    ``cases`` names what a scene of the cases family (``synthetic.cases.scenes``) is built
    around; ``random_scene``'s scenes have none.
    """

    seed: int
    profile: str
    spec: SceneSpec
    extension: str
    cases: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """A file name stem that says how to regenerate it, e.g. ``random-short-42``."""
        return f"random-{self.profile}-{self.seed}"

    def truth(self) -> GroundTruth:
        """The scene's exact ground truth."""
        return ground_truth(self.spec)

    def write(self, directory: Path) -> tuple[Path, GroundTruth]:
        """Encode the scene into ``directory`` as ``<name><extension>``; return path and truth."""
        path = Path(directory) / f"{self.name}{self.extension}"
        return path, write_video(self.spec, path)


def _format(rng: np.random.Generator, profile: str) -> tuple[int, int, int, int]:
    """Width, height, fps and a whole number of frames within the profile's duration."""
    width, height = RESOLUTIONS[int(rng.integers(0, len(RESOLUTIONS)))]
    fps = FRAME_RATES[int(rng.integers(0, len(FRAME_RATES)))]
    lo, hi = PROFILES[profile]
    frames = int(rng.integers(math.ceil(lo * fps), math.floor(hi * fps) + 1))
    return width, height, fps, frames


def _cut_frames(rng: np.random.Generator, fps: int, frames: int) -> list[int]:
    """0..2 cut frames, >= CUT_GAP_S apart and >= CUT_MARGIN_S from both ends.

    The slack left after the required gaps is split at random, so the rules hold by
    construction; a video too short for the drawn count gets fewer cuts.
    """
    gap, margin = round(CUT_GAP_S * fps), round(CUT_MARGIN_S * fps)
    count = int(rng.choice(len(_CUTS_P), p=_CUTS_P))
    while count and frames - 2 * margin - gap * (count - 1) < 0:
        count -= 1
    slack = frames - 2 * margin - gap * (count - 1)
    offsets = np.sort(rng.integers(0, slack + 1, size=count))
    return [margin + int(u) + gap * i for i, u in enumerate(offsets)]


def _step(rng: np.random.Generator, fps: int, frames: int, cuts: list[int]) -> Keyframes:
    """A gain jump between frames k and k + 1, >= 1 s from the ends and from any cut."""
    candidates = [k for k in range(fps, frames - fps) if all(abs(k - c) >= fps for c in cuts)]
    k = candidates[int(rng.integers(0, len(candidates)))] if candidates else frames // 2
    before = round(float(rng.uniform(0.85, 1.1)), 2)
    jump = round(float(rng.uniform(*STEP_GAIN)), 2) * (1 if rng.random() < 0.5 else -1)
    return ((k / fps, before), ((k + 1) / fps, round(before + jump, 2)))


def _drift(rng: np.random.Generator, fps: int, frames: int) -> Keyframes:
    """A linear ramp from gain 1 by +-10..25 % over 3..8 s, starting on a frame."""
    length = int(rng.integers(round(DRIFT_S[0] * fps), round(DRIFT_S[1] * fps) + 1))
    start = int(rng.integers(0, max(frames - length, 1)))
    change = round(float(rng.uniform(*DRIFT_GAIN)), 2) * (1 if rng.random() < 0.5 else -1)
    return ((start / fps, 1.0), ((start + length) / fps, round(1.0 + change, 2)))


def _lighting(rng: np.random.Generator, fps: int, frames: int, cuts: list[int]) -> Keyframes:
    """No lighting change, a step or a drift."""
    kind = int(rng.choice(len(_LIGHTING_P), p=_LIGHTING_P))
    if kind == 1:
        return _step(rng, fps, frames, cuts)
    return _drift(rng, fps, frames) if kind == 2 else ()


def _camera(rng: np.random.Generator, height: int) -> tuple[float, int | None, int]:
    """Noise sigma, and a bitrate (heavy compression) or None with a clean crf."""
    noise = 0.0 if rng.random() < _NO_NOISE_P else round(float(rng.uniform(0.5, MAX_NOISE)), 1)
    if rng.random() < _CLEAN_P:
        return noise, None, int(rng.integers(CRF[0], CRF[1] + 1))
    bitrate = round(LOW_BITRATE[height] * float(rng.uniform(1.0, 3.0)), -4)
    return noise, int(bitrate), SceneSpec.crf


def draw_stage(rng: np.random.Generator, seed: int, profile: str) -> SceneSpec:
    """Everything but objects and signs: format, backdrop, cuts, lighting, noise, encoding.

    Public for the cases family, which draws its stage the same way.
    """
    width, height, fps, frames = _format(rng, profile)
    cuts = _cut_frames(rng, fps, frames)
    lighting = _lighting(rng, fps, frames, cuts)
    noise, bitrate, crf = _camera(rng, height)
    background = int(rng.integers(0, BACKDROP_LOOKS))
    return SceneSpec(
        width=width,
        height=height,
        fps=fps,
        duration_s=frames / fps,
        scene_cuts=tuple(c / fps for c in cuts),
        noise=noise,
        bitrate=bitrate,
        seed=seed,
        crf=crf,
        lighting=lighting,
        background=background,
    )


def random_scene(seed: int, *, profile: str = "short") -> RandomScene:
    """The scene of ``seed`` (a non-negative int): the same seed always gives the same scene."""
    if seed < 0 or profile not in PROFILES:
        raise ValueError(f"seed must be >= 0 and profile one of {sorted(PROFILES)}")
    stage_rng, object_rng, sign_rng, file_rng = np.random.default_rng(seed).spawn(4)
    spec = draw_stage(stage_rng, seed, profile)
    spec = replace(spec, objects=random_objects(object_rng, spec))
    spec = replace(spec, signs=random_signs(sign_rng, spec))
    extension = EXTENSIONS[int(file_rng.integers(0, len(EXTENSIONS)))]
    return RandomScene(seed, profile, spec, extension)


def random_scenes(count: int, seed: int, *, profile: str = "short") -> list[RandomScene]:
    """``count`` scenes with distinct seeds derived from ``seed``."""
    rng = np.random.default_rng(seed)
    seeds: list[int] = []
    while len(seeds) < count:
        child = int(rng.integers(0, 2**31))
        if child not in seeds:
            seeds.append(child)
    return [random_scene(s, profile=profile) for s in seeds]
