"""Face truth from scikit-image's packaged photos, shared by the face tests and the benchmark.

``skimage.data.lfw_subset()`` holds 200 grey 25 x 25 crops: the first 100 are faces (from Labeled
Faces in the Wild), the last 100 are not. Each is enlarged and pasted on a plain grey canvas at a
seeded random place, so where a face is is KNOWN, and the detector is run on the canvas.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from PIL import Image

Frame = npt.NDArray[np.uint8]
FindBoxes = Callable[[Frame], npt.NDArray[np.float32]]  # image -> (N, 4) pixel boxes

# Drawn by hand on ``skimage.data.astronaut()`` (512 x 512): fringe to chin, cheek to cheek.
ASTRONAUT_FACE = (180.0, 76.0, 273.0, 182.0)
LFW_FACES = 100  # the first 100 images of lfw_subset are faces, the rest are not
CANVAS_GREY = 128


def photo(name: str) -> npt.NDArray[Any]:
    """One of ``skimage.data``'s packaged images by name (e.g. ``astronaut``, ``lfw_subset``)."""
    from skimage import data  # the test extras only

    return np.asarray(getattr(data, name)())


def paste(
    crop: npt.NDArray[np.float64], side: int, canvas: int, rng: np.random.Generator
) -> tuple[Frame, tuple[int, int, int, int]]:
    """A grey ``canvas`` x ``canvas`` RGB image with ``crop`` (grey, 0..1) enlarged to ``side``
    at a random place, and that place ``x1, y1, x2, y2`` in pixels."""
    grey = Image.fromarray(np.round(crop * 255).astype(np.uint8)).resize(
        (side, side), Image.Resampling.BICUBIC
    )
    image = np.full((canvas, canvas, 3), CANVAS_GREY, dtype=np.uint8)
    x, y = (int(v) for v in rng.integers(0, canvas - side + 1, size=2))
    image[y : y + side, x : x + side] = np.asarray(grey)[:, :, None]
    return image, (x, y, x + side, y + side)


def centres_inside(boxes: npt.NDArray[np.float32], place: tuple[int, int, int, int]) -> int:
    """How many of ``boxes`` ``(N, 4)`` have their centre inside ``place``."""
    cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
    x1, y1, x2, y2 = place
    return int(np.count_nonzero((cx >= x1) & (cx <= x2) & (cy >= y1) & (cy <= y2)))


def lfw_recall(
    find: FindBoxes, side: int = 100, canvas: int = 320, seed: int = 0
) -> dict[str, float]:
    """Recall on lfw_subset's faces and false positives on its non-faces, pasted on canvases.

    Returns:
        ``recall``: share of faces with a found box centred inside the pasted face;
        ``fp_rate``: share of non-face canvases with any box at all;
        ``stray_rate``: share of face canvases with a box centred outside the pasted face;
        ``faces`` and ``non_faces``: how many images of each kind were tried.
    """
    images = photo("lfw_subset")
    rng = np.random.default_rng(seed)
    found = strays = false = 0
    for index, crop in enumerate(images):
        image, place = paste(crop, side, canvas, rng)
        boxes = find(image)
        inside = centres_inside(boxes, place)
        if index < LFW_FACES:
            found += inside > 0
            strays += len(boxes) > inside
        else:
            false += len(boxes) > 0
    faces, non_faces = LFW_FACES, len(images) - LFW_FACES
    return {
        "recall": found / faces,
        "fp_rate": false / non_faces,
        "stray_rate": strays / faces,
        "faces": faces,
        "non_faces": non_faces,
    }
