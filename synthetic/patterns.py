"""Object surfaces: flat colour, a two-tone gradient or a deterministic texture.

A patched object still covers exactly its box (so its truth box stays exact); the pattern only
varies the pixels inside it, between the object's colour and a darker tone of the same hue, so
a detector cannot rely on a uniform blob. Patches are built once per object look and cached.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import numpy.typing as npt

OBJECT_PATTERNS = ("flat", "gradient", "texture")

Frame = npt.NDArray[np.uint8]
Weights = npt.NDArray[np.float32]

# The second tone: same hue and saturation, darker, so it stays vivid against muted scenes.
_SHADE = 0.55


def shade_of(color: tuple[int, int, int]) -> tuple[int, int, int]:
    """The darker tone a pattern mixes with the object's colour."""
    r, g, b = (round(c * _SHADE) for c in color)
    return r, g, b


def _grid(height: int, width: int) -> tuple[Weights, Weights]:
    """Row and column coordinates as float arrays of shape (h, 1) and (1, w)."""
    yy = np.arange(height, dtype=np.float32)[:, None]
    xx = np.arange(width, dtype=np.float32)[None, :]
    return yy, xx


def _gradient(height: int, width: int, rng: np.random.Generator) -> Weights:
    """Share of the dark tone: top to bottom, or along one of the two diagonals."""
    yy, xx = _grid(height, width)
    v = yy / max(height - 1, 1)
    u = xx / max(width - 1, 1)
    kind = int(rng.integers(0, 3))
    if kind == 0:
        return np.broadcast_to(v, (height, width)).astype(np.float32)
    return np.asarray((v + (u if kind == 1 else 1.0 - u)) / 2.0, dtype=np.float32)


def _checker(height: int, width: int, rng: np.random.Generator) -> Weights:
    """A checkerboard of 6..16 px cells."""
    cell = int(rng.integers(6, 17))
    yy, xx = _grid(height, width)
    return np.asarray(((yy // cell + xx // cell) % 2), dtype=np.float32)


def _stripes(height: int, width: int, rng: np.random.Generator) -> Weights:
    """Hard stripes 4..10 px wide, horizontal, vertical or diagonal."""
    half = int(rng.integers(4, 11))
    ay, ax = ((1, 0), (0, 1), (1, 1), (1, -1))[int(rng.integers(0, 4))]
    yy, xx = _grid(height, width)
    phase = (yy * ay + xx * ax + 4 * width) // half
    return np.asarray(phase % 2, dtype=np.float32)


def _blotches(height: int, width: int, rng: np.random.Generator) -> Weights:
    """Blocky value noise: random levels on an 8..14 px grid, upsampled without smoothing."""
    cell = int(rng.integers(8, 15))
    levels = rng.random((height // cell + 1, width // cell + 1), dtype=np.float32)
    up = np.repeat(np.repeat(levels, cell, axis=0), cell, axis=1)
    return np.asarray(up[:height, :width], dtype=np.float32)


def _texture(height: int, width: int, rng: np.random.Generator) -> Weights:
    """One of three textures, chosen by the object's seed."""
    makers = (_checker, _stripes, _blotches)
    return makers[int(rng.integers(0, len(makers)))](height, width, rng)


@lru_cache(maxsize=32)
def object_patch(
    pattern: str, color: tuple[int, int, int], size: tuple[int, int], seed: int
) -> Frame | None:
    """The (h, w, 3) pixels of a patterned object; None for a flat one (painted as a fill)."""
    if pattern == "flat":
        return None
    width, height = size
    rng = np.random.default_rng([seed, *color, 0x0B])
    maker = _gradient if pattern == "gradient" else _texture
    share = maker(height, width, rng)[:, :, None]
    light = np.array(color, np.float32)
    dark = np.array(shade_of(color), np.float32)
    patch = np.clip(np.rint(light + (dark - light) * share), 0, 255).astype(np.uint8)
    patch.flags.writeable = False
    return patch
