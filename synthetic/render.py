"""Drawing frames of a scene: backgrounds per segment, signs, shadows, moving objects, lighting,
infrared and noise."""

from __future__ import annotations

import bisect
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from synthetic.lighting import apply_gain, gain_at, infrared
from synthetic.patterns import object_patch
from synthetic.photos import backdrop_patch, sprite_patch
from synthetic.scene import (
    Frame,
    MovingObject,
    SceneSpec,
    TextSign,
    clip_box,
    cut_frames,
    object_mask,
    object_place,
    shadow_place,
    sign_place,
    sign_shown,
)
from synthetic.shapes import SHADOW_DARKNESS, shadow_alpha
from synthetic.signs import sign_patch

_NOISE_BANK = 4
_NOISE_MARGIN = 32
# Muted (top, bottom) gradient colours; consecutive segments never share one.
_PALETTES = (
    ((150, 138, 118), (104, 96, 86)),
    ((78, 90, 108), (128, 138, 150)),
    ((122, 132, 106), (84, 78, 94)),
)


def _gradient(height: int, width: int, segment: int) -> npt.NDArray[np.float32]:
    """Vertical two-colour gradient with a gentle horizontal shading."""
    top, bottom = (np.array(c, np.float32) for c in _PALETTES[segment % len(_PALETTES)])
    v = np.linspace(0.0, 1.0, height, dtype=np.float32)[:, None, None]
    h = np.linspace(-1.0, 1.0, width, dtype=np.float32)[None, :, None]
    shade = (8.0 if segment % 2 else -8.0) * h
    return np.asarray(top + (bottom - top) * v + shade, dtype=np.float32)


def _texture(height: int, width: int, segment: int) -> npt.NDArray[np.float32]:
    """A static pattern, different per segment: tiles, stripes or bands."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    kind = segment % 3
    if kind == 0:
        tiles = ((yy // 24 + xx // 24) % 2) * 14.0 - 7.0
        floor = (yy > height * 0.6).astype(np.float32)
        panels = ((xx % 64) < 3).astype(np.float32) * -18.0
        pattern = floor * tiles + (1.0 - floor) * panels
    elif kind == 1:
        pattern = 10.0 * np.sin((xx + yy) * (2 * np.pi / 40.0))
    else:
        pattern = 12.0 * np.sign(np.sin(yy * (2 * np.pi / 30.0))) * (xx % 80 < 60)
    return np.asarray(pattern[:, :, None], dtype=np.float32)


def _add_shapes(img: npt.NDArray[np.float32], rng: np.random.Generator) -> None:
    """Draw a few static muted rectangles and ellipses (furniture-like)."""
    height, width = img.shape[:2]
    for n in range(6):
        w = int(rng.integers(width // 12, width // 4))
        h = int(rng.integers(height // 12, height // 4))
        x, y = int(rng.integers(0, width - w)), int(rng.integers(0, height - h))
        tone = img[y + h // 2, x + w // 2] + rng.uniform(-35, 35) + rng.uniform(-6, 6, 3)
        region = img[y : y + h, x : x + w]
        if n % 2:
            yy, xx = np.ogrid[0:h, 0:w]
            mask = ((yy - h / 2) / (h / 2)) ** 2 + ((xx - w / 2) / (w / 2)) ** 2 <= 1.0
            region[mask] = tone
        else:
            region[...] = tone


@lru_cache(maxsize=8)
def _background(width: int, height: int, segment: int, seed: int) -> Frame:
    """Static background of one scene segment, cached and read-only."""
    img = _gradient(height, width, segment) + _texture(height, width, segment)
    _add_shapes(img, np.random.default_rng([seed, segment, 0xB6]))
    # Stay muted and below the plate brightness so objects and signs stand out.
    out = np.asarray(np.clip(img, 30, 195), dtype=np.uint8)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=2)
def _noise_bank(width: int, height: int, noise: float, seed: int) -> npt.NDArray[np.int8]:
    """A few oversized Gaussian noise fields that frames take shifted views of."""
    rng = np.random.default_rng([seed, 0x5E])
    shape = (_NOISE_BANK, height + _NOISE_MARGIN, width + _NOISE_MARGIN, 3)
    field = rng.standard_normal(shape, dtype=np.float32) * np.float32(noise)
    bank = np.asarray(np.clip(np.rint(field), -127, 127), dtype=np.int8)
    bank.flags.writeable = False
    return bank


def _add_noise(frame: Frame, spec: SceneSpec, index: int) -> Frame:
    """Add deterministic per-frame sensor noise.

    Drawing fresh Gaussians per frame dominates encode time at 720p, so each
    frame uses a seed-chosen field and offset from a small bank instead.
    """
    bank = _noise_bank(spec.width, spec.height, spec.noise, spec.seed)
    rng = np.random.default_rng([spec.seed, index, 0xF0])
    k = int(rng.integers(0, _NOISE_BANK))
    dy, dx = (int(v) for v in rng.integers(0, _NOISE_MARGIN + 1, size=2))
    out = frame.astype(np.int16)
    out += bank[k, dy : dy + spec.height, dx : dx + spec.width]
    np.clip(out, 0, 255, out=out)
    return out.astype(np.uint8)


def _paste_sign(frame: Frame, spec: SceneSpec, sign: TextSign) -> None:
    """Copy (or alpha-blend) a sign's patch into the frame, clipped at the edges."""
    x0, y0, box = sign_place(spec, sign)
    if box is None:
        return
    x1, y1, x2, y2 = box
    patch = sign_patch(sign.text, sign.font_px, sign.style, sign.letter_spacing)
    rgb = patch.rgb[y1 - y0 : y2 - y0, x1 - x0 : x2 - x0]
    if patch.alpha is None:
        frame[y1:y2, x1:x2] = rgb
        return
    alpha = patch.alpha[y1 - y0 : y2 - y0, x1 - x0 : x2 - x0]
    under = frame[y1:y2, x1:x2].astype(np.uint16)
    mixed = (rgb.astype(np.uint16) * alpha + under * (255 - alpha) + 127) // 255
    frame[y1:y2, x1:x2] = mixed.astype(np.uint8)


def _backdrop(spec: SceneSpec, look: int) -> Frame:
    """The static backdrop of a look: generated, or a crop of the scene's backdrop photo."""
    if spec.backdrop_photo is None:
        return _background(spec.width, spec.height, look, spec.seed)
    return backdrop_patch(spec.backdrop_photo, spec.width, spec.height, look, spec.seed)


def _cast_shadow(frame: Frame, spec: SceneSpec, obj: MovingObject, index: int) -> None:
    """Darken the pixels under an object's shadow (a soft ellipse), clipped at the edges."""
    place = shadow_place(spec, obj, index)
    if place is None:
        return
    x0, y0, w, h = place
    box = clip_box(x0, y0, x0 + w, y0 + h, spec)
    if box is None:
        return
    x1, y1, x2, y2 = box
    alpha = shadow_alpha(w, h)[y1 - y0 : y2 - y0, x1 - x0 : x2 - x0, None]
    light = 1.0 - np.float32(SHADOW_DARKNESS) * alpha
    frame[y1:y2, x1:x2] = np.rint(frame[y1:y2, x1:x2] * light).astype(np.uint8)


def _object_patch(obj: MovingObject) -> Frame | None:
    """The object's pixels over its whole box (a photo crop or a pattern); None when flat."""
    if obj.sprite is not None:
        return sprite_patch(obj.sprite, obj.size, obj.pattern_seed)
    return object_patch(obj.pattern, obj.color, obj.size, obj.pattern_seed)


def _paint_object(frame: Frame, spec: SceneSpec, obj: MovingObject, index: int) -> None:
    """Fill an object's box (or its outline, if not a box) with its colour or its cached
    pattern, clipped at the edges."""
    place = object_place(spec, obj, index)
    if place is None:
        return
    x0, y0 = place
    box = clip_box(x0, y0, x0 + obj.size[0], y0 + obj.size[1], spec)
    if box is None:
        return
    x1, y1, x2, y2 = box
    patch = _object_patch(obj)
    mask = object_mask(spec, obj, index)
    if mask is None and patch is None:
        frame[y1:y2, x1:x2] = obj.color
        return
    region = frame[y1:y2, x1:x2]
    pixels = obj.color if patch is None else patch[y1 - y0 : y2 - y0, x1 - x0 : x2 - x0]
    if mask is None:
        region[...] = pixels
    else:
        inside = mask[y1 - y0 : y2 - y0, x1 - x0 : x2 - x0]
        region[inside] = pixels if patch is None else np.asarray(pixels)[inside]


def render_frame(spec: SceneSpec, index: int) -> Frame:
    """Render frame ``index`` (time ``index / fps``) as an (H, W, 3) RGB array.

    Layers, back to front: segment background, signs, shadows, objects (in spec
    order); then the lighting gain scales the whole frame, an infrared camera turns it grey,
    and noise is added.
    """
    if index < 0:
        raise ValueError("frame index must be >= 0")
    segment = bisect.bisect_right(cut_frames(spec), index)
    frame = _backdrop(spec, segment + spec.background).copy()
    for sign in spec.signs:
        if sign_shown(spec, sign, index):
            _paste_sign(frame, spec, sign)
    for obj in spec.objects:
        _cast_shadow(frame, spec, obj, index)
    for obj in spec.objects:
        _paint_object(frame, spec, obj, index)
    frame = apply_gain(frame, gain_at(spec.lighting, index / spec.fps))
    if spec.infrared_from_s is not None and index >= spec.infrared_from_s * spec.fps - 1e-9:
        frame = infrared(frame)
    return _add_noise(frame, spec, index) if spec.noise > 0 else frame
