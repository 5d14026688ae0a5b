"""The one interface every detector plugin implements, and the frames it is given.

A detector gets the run's sampled frames as ``FrameView``s, in time order, and returns the boxes
it found as one ``Detections`` (normalised boxes, its own class names). Views are lazy: pixels are
read from the sampled JPEGs only when a detector asks for them, at the size it asks for, so a
detector that looks at a handful of frames pays for a handful.

``motion`` runs first, over every frame; the views the other detectors get carry its boxes
(``FrameView.motion``), so they can look only where, and when, something moved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.sample.frames import (
    PEOPLE_DIR,
    TEXT_DIR,
    Frame,
    FrameFile,
    Frames,
    frame_name,
    read_rgb,
)


@dataclass(frozen=True)
class FrameView:
    """One sampled frame as a detector sees it.

    Attributes:
        index: sampled-frame index (``sample_index`` in every artifact).
        t_s: time of the frame in the video, seconds.
        refresh: the scene was (re)started here (first frame, scene change).
        frames_dir: folder of the sampled JPEGs (thumbnail size).
        analysis_size: ``(width, height)`` motion is detected at.
        motion: the motion boxes of this frame (empty for the motion detector itself).
        text_look: a full-size frame was kept for reading text (see ``tasks.sample.text_looks``).
        glances: the glances of EVERY sampled frame of the run, ``(frames, h, w)``, shared by
            all views (mapped from disk, not loaded; see ``tasks.sample.text_looks``).
    """

    index: int
    t_s: float
    refresh: bool
    frames_dir: str
    analysis_size: tuple[int, int]
    motion: Detections
    text_look: bool = False
    glances: npt.NDArray[np.uint8] | FrameFile | None = None
    analysis_frames: Frames | None = None  # every frame at the analysis size, see analysis()

    @property
    def thumbnail_path(self) -> Path:
        return Path(self.frames_dir) / frame_name(self.index)

    @property
    def text_path(self) -> Path:
        return Path(self.frames_dir) / TEXT_DIR / frame_name(self.index)

    def analysis(self) -> Frame:
        """The frame at the analysis size (small: for motion), from the sample stage's raw
        analysis frames when there are (a JPEG decode otherwise)."""
        if self.analysis_frames is not None and self.index < len(self.analysis_frames):
            return self.analysis_frames[self.index]
        return read_rgb(self.thumbnail_path, self.analysis_size)

    def thumbnail(self) -> Frame:
        """The frame at the thumbnail size (the largest kept for every sampled frame)."""
        return read_rgb(self.thumbnail_path)

    def person(self) -> Frame:
        """The frame at the person detector's size (``frames/people/``; the thumbnail where
        the sample stage kept none)."""
        path = Path(self.frames_dir) / PEOPLE_DIR / frame_name(self.index)
        return read_rgb(path) if path.exists() else self.thumbnail()

    def full(self) -> Frame | None:
        """The full-size frame kept for reading text, or None where none was kept."""
        return read_rgb(self.text_path) if self.text_look else None


class Detector(Protocol):
    """A detector plugin: boxes of its classes in the frames it is given.

    ``name`` is what ``detections.parquet``'s ``detector`` column and ``cost.json``'s
    ``detector_mode`` call it; ``frames_seen`` is how many frames the last ``detect`` call
    looked at (``cost.json``'s ``detectors`` block). ``detect`` raises ``DetectorUnavailable``
    when its model fails at run time; the stage then falls back to motion and says why.
    """

    name: str
    frames_seen: int

    def detect(self, frames: Sequence[FrameView]) -> Detections:
        """Every box found in ``frames`` (``frame_index`` = ``FrameView.index``)."""
        ...
