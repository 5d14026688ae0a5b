"""Photographs from scikit-image's bundled data: crops as object sprites and as backdrops.

Only photos shipped inside the scikit-image wheel are used (``skimage.data``'s local files, no
download). scikit-image is one of the test extras, so it is imported when a photo is first
needed: a product install that never renders a photo scene does not need it. Backdrops are muted
into 30..195 as the generated backdrops are, so objects and signs stay apart from them.

Some photos show people: the man of ``camera`` is a real picture of a person, which the person
network finds. He is no object of the scene (he never moves), but no detector should be blamed
for finding him either, so ``backdrop_people`` says where he is in each backdrop crop, and the
scene's truth holds those places as "don't care" regions (``synthetic.scene.GroundTruth``).
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

SPRITE_PHOTOS = ("astronaut", "chelsea", "coffee", "rocket")
BACKDROP_PHOTOS = ("brick", "grass", "gravel", "camera", "coffee", "rocket", "hubble_deep_field")

# The people each backdrop photo shows, as (x1, y1, x2, y2) in the photo's pixels, measured by
# eye on the drawn photo: the man of ``camera`` from his hair to the bottom edge, his coat's
# back to the hand on the camcorder (the camcorder and tripod are not him).
BACKDROP_PEOPLE: dict[str, tuple[tuple[int, int, int, int], ...]] = {
    "camera": ((0, 62, 332, 512),),
}

Frame = npt.NDArray[np.uint8]
Window = tuple[int, int, int, int]  # x, y, width, height of a crop in its photo


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


def _window(image: Frame, aspect: float, share: float, rng: np.random.Generator) -> Window:
    """A crop of width/height ``aspect`` spanning ``share`` of the largest such crop."""
    h, w = image.shape[:2]
    cw, ch = (w, w / aspect) if w / aspect <= h else (h * aspect, h)
    cw, ch = max(2, int(cw * share)), max(2, int(ch * share))
    return int(rng.integers(0, w - cw + 1)), int(rng.integers(0, h - ch + 1)), cw, ch


def _crop(image: Frame, aspect: float, share: float, rng: np.random.Generator) -> Frame:
    """The pixels of ``_window``."""
    x, y, cw, ch = _window(image, aspect, share, rng)
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


def backdrop_window(name: str, width: int, height: int, look: int, seed: int) -> Window:
    """Where in photo ``name`` the backdrop of a ``width`` x ``height`` scene is cropped from."""
    rng = np.random.default_rng([seed, look, 0xBD])
    return _window(photo(name), width / height, float(rng.uniform(0.7, 1.0)), rng)


def backdrop_people(
    name: str, width: int, height: int, look: int, seed: int
) -> tuple[tuple[int, int, int, int], ...]:
    """The pixel boxes, in the frame, of the people of ``BACKDROP_PEOPLE`` that the backdrop
    crop shows (any part of them: a half-seen person is still a person)."""
    x, y, cw, ch = backdrop_window(name, width, height, look, seed)
    boxes = []
    for x1, y1, x2, y2 in BACKDROP_PEOPLE.get(name, ()):
        left, top = max(x1, x) - x, max(y1, y) - y
        right, bottom = min(x2, x + cw) - x, min(y2, y + ch) - y
        if right > left and bottom > top:
            sx, sy = width / cw, height / ch
            boxes.append((round(left * sx), round(top * sy), round(right * sx), round(bottom * sy)))
    return tuple(boxes)


@lru_cache(maxsize=8)
def backdrop_patch(name: str, width: int, height: int, look: int, seed: int) -> Frame:
    """A frame-sized crop of photo ``name`` (another crop per ``look``), muted to 30..195."""
    x, y, cw, ch = backdrop_window(name, width, height, look, seed)
    crop = photo(name)[y : y + ch, x : x + cw]
    resized = cv2.resize(crop, (width, height), interpolation=cv2.INTER_LINEAR)
    muted = 30 + resized.astype(np.float32) * (165 / 255)
    out = np.asarray(np.rint(muted), dtype=np.uint8)
    out.flags.writeable = False
    return out
