"""The frame files the sample stage writes, and how to read them back.

Under the run's scratch folder, ``frames/`` holds one JPEG per sampled frame at the thumbnail
size (``0000042.jpg``), ``frames/text/`` the full-size frames kept for reading text (same
names), ``frames/people/`` every frame at the person detector's size when it runs (same
names), ``frames/glances.u8`` every sampled frame's glance, one after the other (see
``tasks.sample.text_looks``), and ``frames/analysis.u8`` every sampled frame at the analysis
size, raw RGB: motion reads each frame once or twice, and decoding a JPEG each time cost more
than the detector's own work on it. Later stages (detect, evidence) read them through these helpers.
A video joined from chunks reads its analysis frames from the chunks' own files (``JoinedFrames``).
"""

from __future__ import annotations

import bisect
import itertools
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image

Frame = npt.NDArray[np.uint8]
FRAMES_DIR = "frames"
TEXT_DIR = "text"  # beside the sampled JPEGs: full-size frames kept for reading text
PEOPLE_DIR = "people"  # beside them: every frame at the person detector's size (if it runs)
GLANCES = "glances.u8"
ANALYSIS = "analysis.u8"  # every sampled frame at the analysis size, RGB, one after the other


def frame_name(sample_index: int) -> str:
    """The file name of a sampled frame (thumbnail and full-size alike)."""
    return f"{sample_index:07d}.jpg"


def still_stretches(frames: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """The stretches whose sampled frames were held (judged still, not decoded): from the
    first held frame to the next decoded one (or the last held frame's end)."""
    stretches: list[tuple[float, float]] = []
    start: float | None = None
    step = min((b["t_s"] - a["t_s"] for a, b in itertools.pairwise(frames)), default=0.0)
    for frame in frames:
        if frame.get("held") and start is None:
            start = frame["t_s"]
        elif not frame.get("held") and start is not None:
            stretches.append((start, frame["t_s"]))
            start = None
    if start is not None:
        stretches.append((start, frames[-1]["t_s"] + max(step, 0.0)))
    return stretches


def link_or_copy(source: Path | str, dest: Path | str) -> None:
    """``dest`` as a hard link to ``source`` (a copy where links are refused, as across file
    systems): a frame file shared, never written twice."""
    try:
        os.link(source, dest)
    except OSError:
        shutil.copy2(source, dest)


def write_jpeg(picture: Frame, path: Path, quality: int) -> None:
    """Write an RGB frame as a JPEG at ``path``.

    Through a write-only file: Pillow opens a path it is given for reading too, and its
    buffered reader-writer cost a quarter of a millisecond a frame more (the same bytes).
    """
    with path.open("wb") as handle:
        Image.fromarray(picture).save(handle, format="JPEG", quality=quality)


def read_rgb(path: Path, size: tuple[int, int] | None = None) -> Frame:
    """A JPEG as ``(H, W, 3)`` RGB, resized to ``size`` (width, height) when given.

    At its own size it is decoded by OpenCV: the same libjpeg-turbo decode as Pillow's, the
    same pixels (tested), without Pillow's two copies into numpy (a 960 px frame in about a
    fifth of the time). Pillow keeps the resized reads, whose draft mode decodes at a half,
    a quarter or an eighth of the size.

    Raises:
        OSError: the file is missing or is not a readable JPEG.
    """
    if size is None:
        flags = cv2.IMREAD_COLOR_RGB | cv2.IMREAD_IGNORE_ORIENTATION
        picture = cv2.imdecode(np.fromfile(path, np.uint8), flags)
        if picture is None:
            raise OSError(f"{path} is not a readable JPEG")
        return np.asarray(picture, dtype=np.uint8)
    with Image.open(path) as image:
        image.draft("RGB", size)  # the JPEG decoder downscales by 2, 4 or 8 for free
        resized = image.convert("RGB")
        if resized.size != size:
            resized = resized.resize(size, Image.Resampling.BILINEAR)
    return np.asarray(resized, dtype=np.uint8)


def read_glances(frames_dir: Path, count: int, shape: tuple[int, int]) -> FrameFile:
    """Every sampled frame's glance, ``(h, w)`` grey each, read one at a time (see FrameFile)."""
    return FrameFile(frames_dir / GLANCES, count if all(shape) else 0, shape)


class FrameFile:
    """Raw frames of one shape written one after the other, read one at a time.

    Each read is a ``pread`` from the page cache, never a mapping: mapped pages count in the
    process's resident memory once touched, and a 10-minute video's analysis frames (300 MB at
    1080p) would make memory grow with the video's length.
    """

    def __init__(self, path: Path, count: int, shape: tuple[int, ...]) -> None:
        self.path, self.shape = path, (count, *shape)
        self.frame_bytes = int(np.prod(shape)) if count else 0
        self._fd: int | None = None  # opened at the first read, closed with the object

    def __del__(self) -> None:
        if self._fd is not None:
            os.close(self._fd)

    def __len__(self) -> int:
        return self.shape[0] if self.frame_bytes and self.path.exists() else 0

    def __getitem__(self, index: int) -> Frame:
        if not 0 <= index < len(self):
            raise IndexError(f"frame {index} of {len(self)}")
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        data = os.pread(self._fd, self.frame_bytes, index * self.frame_bytes)
        return np.frombuffer(data, dtype=np.uint8).reshape(self.shape[1:])


class Frames(Protocol):
    """Frames of one video read one at a time by sample index (``FrameFile``, ``JoinedFrames``)."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> Frame: ...


@dataclass(frozen=True)
class FramePart:
    """The frames a joined video takes from one chunk's frame file, in the joined order.

    The file at ``path`` holds ``count`` frames of ``shape``; the joined video's next
    ``len(indices)`` frames are its frames ``indices``.
    """

    path: str
    count: int
    shape: tuple[int, int, int]
    indices: tuple[int, ...]


class JoinedFrames:
    """A joined video's frames, read one at a time from its chunks' own frame files.

    The join never copies the chunks' raw frames into one file: a live session joins all its
    windows again at every publish, and a copy would grow with the session at each one. One
    chunk's file is open at a time (a long live session has hundreds of windows).
    """

    def __init__(self, parts: Sequence[FramePart]) -> None:
        self.parts = tuple(parts)
        self._starts = list(itertools.accumulate((len(p.indices) for p in self.parts), initial=0))
        self._open: tuple[int, FrameFile] | None = None

    def __len__(self) -> int:
        """Every joined frame, or none when a chunk's file is gone (as ``FrameFile``)."""
        whole = all(Path(part.path).exists() for part in self.parts)
        return self._starts[-1] if whole else 0

    def __getitem__(self, index: int) -> Frame:
        if not 0 <= index < self._starts[-1]:
            raise IndexError(f"frame {index} of {self._starts[-1]}")
        number = bisect.bisect_right(self._starts, index) - 1
        if self._open is None or self._open[0] != number:
            part = self.parts[number]
            self._open = number, FrameFile(Path(part.path), part.count, part.shape)
        return self._open[1][self.parts[number].indices[index - self._starts[number]]]
