"""The frame files the sample stage writes, and how to read them back.

Under the run's scratch folder, ``frames/`` holds one JPEG per sampled frame at the thumbnail
size (``0000042.jpg``), ``frames/text/`` the full-size frames kept for reading text (same
names), ``frames/glances.u8`` every sampled frame's glance, one after the other (see
``tasks.sample.text_looks``), and ``frames/analysis.u8`` every sampled frame at the analysis
size, raw RGB: motion reads each frame once or twice, and decoding a JPEG each time cost more
than the detector's own work on it. Later stages (detect, evidence) read them through these helpers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
from PIL import Image

Frame = npt.NDArray[np.uint8]
FRAMES_DIR = "frames"
TEXT_DIR = "text"  # beside the sampled JPEGs: full-size frames kept for reading text
GLANCES = "glances.u8"
ANALYSIS = "analysis.u8"  # every sampled frame at the analysis size, RGB, one after the other


def frame_name(sample_index: int) -> str:
    """The file name of a sampled frame (thumbnail and full-size alike)."""
    return f"{sample_index:07d}.jpg"


def read_rgb(path: Path, size: tuple[int, int] | None = None) -> Frame:
    """A JPEG as ``(H, W, 3)`` RGB, resized to ``size`` (width, height) when given."""
    with Image.open(path) as image:
        if size is not None:
            image.draft("RGB", size)  # the JPEG decoder downscales by 2, 4 or 8 for free
        picture = image.convert("RGB")
        if size is not None and picture.size != size:
            picture = picture.resize(size, Image.Resampling.BILINEAR)
    return np.asarray(picture, dtype=np.uint8)


def read_glances(frames_dir: Path, count: int, shape: tuple[int, int]) -> npt.NDArray[np.uint8]:
    """Every sampled frame's glance, ``(count, h, w)`` grey, mapped from disk (not loaded)."""
    path = frames_dir / GLANCES
    if not count or not all(shape) or not path.exists():
        return np.zeros((0, *shape), dtype=np.uint8)
    return np.memmap(path, dtype=np.uint8, mode="r", shape=(count, *shape))


def read_frames(path: Path, count: int, shape: tuple[int, int, int]) -> npt.NDArray[np.uint8]:
    """Raw frames ``(count, *shape)`` written one after the other, mapped from disk."""
    if not count or not all(shape) or not path.exists():
        return np.zeros((0, *shape), dtype=np.uint8)
    return np.memmap(path, dtype=np.uint8, mode="r", shape=(count, *shape))
