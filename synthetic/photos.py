"""Photographs from scikit-image's bundled data: crops as object sprites and as backdrops.

Only photos shipped inside the scikit-image wheel are used (``skimage.data``'s local files, no
download). scikit-image is one of the test extras, so it is imported when a photo is first
needed: a product install that never renders a photo scene does not need it. Backdrops are muted
into 30..195 as the generated backdrops are, so objects and signs stay apart from them.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

SPRITE_PHOTOS = ("astronaut", "chelsea", "coffee", "rocket")
BACKDROP_PHOTOS = ("brick", "grass", "gravel", "camera", "coffee", "rocket", "hubble_deep_field")

Frame = npt.NDArray[np.uint8]


@lru_cache(maxsize=16)
def photo(name: str) -> Frame:
    """One of ``skimage.data``'s bundled photos as (H, W, 3) RGB, read-only."""
    if name not in SPRITE_PHOTOS + BACKDROP_PHOTOS:
        raise ValueError(f"unknown photo {name!r}")
    from skimage import data  # the test extras only

    image = np.asarray(getattr(data, name)(), dtype=np.uint8)
    rgb = np.repeat(image[:, :, None], 3, axis=2) if image.ndim == 2 else image[:, :, :3]
    out = np.ascontiguousarray(rgb)
    out.flags.writeable = False
    return out


def _crop(image: Frame, aspect: float, share: float, rng: np.random.Generator) -> Frame:
    """A crop of width/height ``aspect`` spanning ``share`` of the largest such crop."""
    h, w = image.shape[:2]
    cw, ch = (w, w / aspect) if w / aspect <= h else (h * aspect, h)
    cw, ch = max(2, int(cw * share)), max(2, int(ch * share))
    x, y = int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1))
    return image[y : y + ch, x : x + cw]


@lru_cache(maxsize=32)
def sprite_patch(name: str, size: tuple[int, int], seed: int) -> Frame:
    """A ``size`` (w, h) crop of photo ``name``, placed by ``seed``, read-only."""
    width, height = size
    rng = np.random.default_rng([seed, 0x5B])
    crop = _crop(photo(name), width / height, float(rng.uniform(0.45, 0.9)), rng)
    out = cv2.resize(crop, (width, height), interpolation=cv2.INTER_AREA)
    out.flags.writeable = False
    return np.asarray(out, dtype=np.uint8)


@lru_cache(maxsize=8)
def backdrop_patch(name: str, width: int, height: int, look: int, seed: int) -> Frame:
    """A frame-sized crop of photo ``name`` (another crop per ``look``), muted to 30..195."""
    rng = np.random.default_rng([seed, look, 0xBD])
    crop = _crop(photo(name), width / height, float(rng.uniform(0.7, 1.0)), rng)
    resized = cv2.resize(crop, (width, height), interpolation=cv2.INTER_LINEAR)
    muted = 30 + resized.astype(np.float32) * (165 / 255)
    out = np.asarray(np.rint(muted), dtype=np.uint8)
    out.flags.writeable = False
    return out
