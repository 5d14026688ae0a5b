"""Sign patches in several looks, all drawn with Pillow's one bundled scalable font.

Pillow ships a single scalable font, so variety comes from styles, sizes and letter spacing,
never from fonts installed on the machine (output must not depend on them):

* ``plate``: dark text on a light plate (the original look);
* ``inverse``: light text on a dark plate;
* ``bold``: dark text thickened with a stroke on a cream plate;
* ``outline``: light text with a dark outline straight on the scene, no plate;
* ``caption``: light text on a semi-transparent dark band.

A patch is exactly the sign's truth box; ``outline`` and ``caption`` carry an alpha channel and
are blended over the background.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from PIL import Image, ImageDraw, ImageFont

SIGN_STYLES = ("plate", "inverse", "bold", "outline", "caption")

RGB = tuple[int, int, int]
Frame = npt.NDArray[np.uint8]
Mask = npt.NDArray[np.float32]
Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
Runs = list[tuple[int, str]]
_Bounds = tuple[int, int, int, int]

_PLATE_RGB = (236, 236, 228)
_INK_RGB = (16, 16, 16)
_DARK_PLATE_RGB = (28, 34, 48)
_CREAM_RGB = (244, 240, 220)
_LIGHT_INK_RGB = (240, 240, 232)
_BAND_RGB = (10, 10, 14)
_BAND_ALPHA = 0.6


@dataclass(frozen=True)
class SignPatch:
    """A sign's pixels: RGB, plus (h, w, 1) alpha in 0..255 or None when fully opaque."""

    rgb: Frame
    alpha: npt.NDArray[np.uint16] | None

    @property
    def size(self) -> tuple[int, int]:
        """Width and height in pixels."""
        return int(self.rgb.shape[1]), int(self.rgb.shape[0])


def _layout(text: str, font: Font, spacing: int, stroke: int) -> tuple[Runs, _Bounds]:
    """Where to draw each run of text, and the union of their ink bounds.

    Without extra spacing the string is one run (Pillow's own advance and kerning); with it,
    each character is drawn alone, ``spacing`` pixels after the previous one's advance.
    """
    if spacing == 0:
        left, top, right, bottom = font.getbbox(text, stroke_width=stroke)
        return [(0, text)], (int(left), int(top), int(right), int(bottom))
    runs: Runs = []
    boxes: list[_Bounds] = []
    x = 0
    for ch in text:
        runs.append((x, ch))
        left, top, right, bottom = (int(v) for v in font.getbbox(ch, stroke_width=stroke))
        if right > left and bottom > top:
            boxes.append((left + x, top, right + x, bottom))
        x += round(font.getlength(ch)) + spacing
    if not boxes:  # only blanks: an empty line as wide as their advance
        return runs, (0, 0, max(x, 1), 1)
    bounds = zip(*boxes, strict=True)
    lefts, tops, rights, bottoms = (list(b) for b in bounds)
    return runs, (min(lefts), min(tops), max(rights), max(bottoms))


def _draw_runs(
    image: Image.Image,
    origin: tuple[int, int],
    runs: Runs,
    ink: RGB | int,
    *,
    font: Font,
    stroke: int,
) -> None:
    """Draw text runs at ``origin`` (stroke drawn in the ink colour, which thickens glyphs)."""
    draw = ImageDraw.Draw(image)
    for x, chunk in runs:
        xy = (origin[0] + x, origin[1])
        if stroke:
            draw.text(xy, chunk, fill=ink, font=font, stroke_width=stroke, stroke_fill=ink)
        else:
            draw.text(xy, chunk, fill=ink, font=font)


def _opaque(text: str, font_px: int, spacing: int, stroke: int, colours: tuple[RGB, RGB]) -> Frame:
    """Text in ``colours[1]`` on a plate of ``colours[0]`` with a quarter-font padding."""
    font = ImageFont.load_default(size=font_px)
    runs, (left, top, right, bottom) = _layout(text, font, spacing, stroke)
    pad = max(4, font_px // 4)
    image = Image.new("RGB", (right - left + 2 * pad, bottom - top + 2 * pad), colours[0])
    _draw_runs(image, (pad - left, pad - top), runs, colours[1], font=font, stroke=stroke)
    return np.asarray(image, dtype=np.uint8).copy()


def _masks(text: str, font_px: int, spacing: int, stroke: int, pad: tuple[int, int]) -> list[Mask]:
    """Coverage (0..1) of the plain glyphs and, if ``stroke``, of the stroked glyphs."""
    font = ImageFont.load_default(size=font_px)
    runs, (left, top, right, bottom) = _layout(text, font, spacing, stroke)
    size = (right - left + 2 * pad[0], bottom - top + 2 * pad[1])
    masks = []
    for width in sorted({0, stroke}):
        image = Image.new("L", size, 0)
        _draw_runs(image, (pad[0] - left, pad[1] - top), runs, 255, font=font, stroke=width)
        masks.append(np.asarray(image, dtype=np.float32) / np.float32(255.0))
    return masks


def _quantise(colour: npt.NDArray[np.float32], alpha: Mask) -> SignPatch:
    """Round a float colour and alpha to the 8-bit patch the renderer blends."""
    rgb = np.clip(np.rint(colour), 0, 255).astype(np.uint8)
    a = np.clip(np.rint(alpha * 255.0), 0, 255).astype(np.uint16)[:, :, None]
    return SignPatch(rgb, a)


def _outline(text: str, font_px: int, spacing: int) -> SignPatch:
    """Light glyphs inside a dark stroke, transparent elsewhere."""
    stroke = max(2, font_px // 14)
    pad = max(3, font_px // 10)
    fill, stroked = _masks(text, font_px, spacing, stroke, (pad, pad))
    alpha = np.maximum(fill, stroked)
    share = np.divide(fill, alpha, out=np.zeros_like(alpha), where=alpha > 0)[:, :, None]
    dark, light = np.array(_INK_RGB, np.float32), np.array(_LIGHT_INK_RGB, np.float32)
    return _quantise(dark + (light - dark) * share, alpha)


def _caption(text: str, font_px: int, spacing: int) -> SignPatch:
    """Light glyphs on a dark band that lets ``1 - _BAND_ALPHA`` of the scene through."""
    (fill,) = _masks(text, font_px, spacing, 0, (max(8, font_px // 3), max(4, font_px // 5)))
    alpha = _BAND_ALPHA + (1.0 - _BAND_ALPHA) * fill
    band = np.array(_BAND_RGB, np.float32) * _BAND_ALPHA
    ink = np.array(_LIGHT_INK_RGB, np.float32)
    m = fill[:, :, None]
    return _quantise((band * (1.0 - m) + ink * m) / alpha[:, :, None], alpha)


def _build(text: str, font_px: int, style: str, spacing: int) -> SignPatch:
    """Dispatch to the style's painter."""
    if style == "outline":
        return _outline(text, font_px, spacing)
    if style == "caption":
        return _caption(text, font_px, spacing)
    stroke = max(1, font_px // 16) if style == "bold" else 0
    colours = {"inverse": (_DARK_PLATE_RGB, _LIGHT_INK_RGB), "bold": (_CREAM_RGB, _INK_RGB)}
    plate_ink = colours.get(style, (_PLATE_RGB, _INK_RGB))
    return SignPatch(_opaque(text, font_px, spacing, stroke, plate_ink), None)


@lru_cache(maxsize=64)
def sign_patch(text: str, font_px: int, style: str = "plate", spacing: int = 0) -> SignPatch:
    """A sign's patch, rendered once per look and kept read-only."""
    if style not in SIGN_STYLES:
        raise ValueError(f"unknown sign style {style!r}")
    patch = _build(text, font_px, style, spacing)
    patch.rgb.flags.writeable = False
    if patch.alpha is not None:
        patch.alpha.flags.writeable = False
    return patch
