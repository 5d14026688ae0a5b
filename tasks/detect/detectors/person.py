"""The ``person`` detector: OpenCV's HOG people detector, run only around the motion boxes.

No package in the registries ships a COCO-class network, but ``opencv-python-headless`` 4.x
ships a trained linear SVM over HOG features (Dalal and Triggs, trained on INRIA pedestrians:
upright people seen whole, about 96 px tall in a 64x128 window). It is cheap enough for a CPU
when it is not run over whole frames:

* GATING. Only sampled frames with motion boxes are looked at, and only around each box tall
  enough to hold a person (``min_height`` of the frame), so the cost grows with activity, not
  with the video's length. Motion boxes of people walking side by side merge; HOG still finds
  each of them inside the crop.
* SCALE. Each crop (the box and a margin) is scaled so the box is ``working_height`` px tall:
  a person filling it stands at the window's scale, found by the first few pyramid levels;
  small, far people are upscaled (their box is often 40-60 px in a thumbnail).
* BOXES. HOG's window has about 16 px of margin on every side around the person it was trained
  on (Dalal and Triggs 2005, section 3); hits are shrunk by that training geometry, not by a
  figure fitted to any video, mapped back to normalised frame coordinates, and duplicates from
  overlapping crops are dropped by NMS.

Scores are the SVM margin squashed into 0..1 (``1 / (1 + exp(-margin))``: 0.5 on the boundary).
Whether a moving object IS a person is decided over its whole track by the track stage
(``tasks.track.classes``): one look can miss or fire on a shadow; many looks rarely agree wrongly.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from tasks.detect.detectors.base import FrameView
from tasks.detect.detectors.person_chains import LookPlanner
from tasks.detections import Detections
from tasks.geometry import suppress_overlaps

FloatArray = npt.NDArray[np.float32]
Grey = npt.NDArray[np.uint8]

PERSON_CLASS = "person"
WINDOW = (64, 128)  # HOG's detection window, width x height
# The person inside a hit window (Dalal and Triggs: ~16 px margin in the 64x128 window).
INSET = np.array([12 / 64, 16 / 128, -12 / 64, -16 / 128], dtype=np.float32)


class PersonConfig(BaseModel):
    """Settings of the ``person`` detector.

    Attributes:
        type: plugin discriminator.
        min_height: motion boxes shorter than this fraction of the frame's height are not looked
            at (a person there is too few pixels for HOG); the track stage counts only the looks
            at boxes this tall.
        working_height: a motion box is scaled to this many pixels tall before the search.
        margin: context around the box, as a fraction of its height, on every side.
        hit_threshold: SVM margin a window needs (0: OpenCV's default boundary).
        pyramid_scale: step between the pyramid's levels.
        iou: hits of one frame overlapping a better one by more than this are duplicates.
        settle_looks: a box followed over frames whose last this many looks all found it a
            person is not looked at again until it splits, merges, vanishes or changes size by
            more than ``resize`` (``tasks.detect.detectors.person_chains``); 0 looks at every
            box.
        settle_not_looks: the same for a box whose last this many looks all found no person.
        resize: relative change of a settled box's width or height that brings a look back.
        recheck_s: a settled box is looked at again this long after its last look (0: never).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["person"] = "person"
    min_height: float = Field(0.06, gt=0.0, le=1.0)
    working_height: int = Field(128, ge=64, le=512)
    margin: float = Field(0.25, ge=0.0, le=2.0)
    hit_threshold: float = 0.0
    pyramid_scale: float = Field(1.1, gt=1.0, le=2.0)
    iou: float = Field(0.5, gt=0.0, le=1.0)
    settle_looks: int = Field(3, ge=0)
    settle_not_looks: int = Field(6, ge=1)
    resize: float = Field(0.25, ge=0.0)
    recheck_s: float = Field(1.0, ge=0.0)


@lru_cache(maxsize=1)
def _hog() -> Any:
    hog = cv2.HOGDescriptor()
    hog.setSVMDetector(np.asarray(cv2.HOGDescriptor.getDefaultPeopleDetector(), np.float32))
    return hog


def read_grey(view: FrameView) -> Grey:
    """The frame's thumbnail in grey (HOG works on intensity gradients)."""
    with Image.open(view.thumbnail_path) as image:
        return np.asarray(image.convert("L"), dtype=np.uint8)


def _crop(grey: Grey, box: FloatArray, cfg: PersonConfig) -> tuple[Grey, float, int, int]:
    """The scaled crop around a normalised box, its scale and its top-left corner in pixels."""
    height, width = grey.shape
    x1, y1, x2, y2 = box * np.array([width, height, width, height], dtype=np.float32)
    pad = cfg.margin * (y2 - y1)
    left, top = max(0, int(x1 - pad)), max(0, int(y1 - pad))
    right, bottom = min(width, int(np.ceil(x2 + pad))), min(height, int(np.ceil(y2 + pad)))
    scale = cfg.working_height / max(1.0, float(y2 - y1))
    part = grey[top:bottom, left:right]
    size = (max(1, round(part.shape[1] * scale)), max(1, round(part.shape[0] * scale)))
    crop: Grey = np.asarray(cv2.resize(part, size, interpolation=cv2.INTER_LINEAR), np.uint8)
    grow_x, grow_y = max(0, WINDOW[0] - crop.shape[1]), max(0, WINDOW[1] - crop.shape[0])
    if grow_x or grow_y:  # a window must fit: pad by repeating the edge
        crop = np.pad(crop, ((0, grow_y), (0, grow_x)), mode="edge")
    return crop, scale, left, top


def people_in_box(grey: Grey, box: FloatArray, cfg: PersonConfig) -> tuple[FloatArray, FloatArray]:
    """People found around one normalised motion box: their boxes (normalised) and scores."""
    crop, scale, left, top = _crop(grey, box, cfg)
    rects, margins = _hog().detectMultiScale(
        crop,
        hitThreshold=cfg.hit_threshold,
        winStride=(8, 8),
        padding=(16, 16),
        scale=cfg.pyramid_scale,
    )
    if len(rects) == 0:
        return np.zeros((0, 4), np.float32), np.zeros(0, np.float32)
    rects = np.asarray(rects, dtype=np.float32).reshape(-1, 4)
    windows = np.concatenate([rects[:, :2], rects[:, :2] + rects[:, 2:]], axis=1)
    inside = windows + INSET * np.tile(rects[:, 2:], 2)
    height, width = grey.shape
    origin = np.array([left, top, left, top], np.float32)
    people = (inside / scale + origin) / np.array([width, height, width, height], np.float32)
    margin = np.asarray(margins, dtype=np.float64).reshape(-1)
    scores = np.asarray(1.0 / (1.0 + np.exp(-margin)), dtype=np.float32)
    return np.clip(people, 0.0, 1.0).astype(np.float32), scores


class PersonDetector:
    """People around the motion of each sampled frame (see the module docstring)."""

    name = PERSON_CLASS

    def __init__(self, config: PersonConfig) -> None:
        self.config = config
        self.frames_seen = 0
        self.planner = self._planner()

    def _planner(self) -> LookPlanner:
        cfg = self.config
        return LookPlanner(cfg.settle_looks, cfg.resize, cfg.recheck_s, cfg.settle_not_looks)

    @property
    def looks(self) -> int:
        """Motion boxes looked at by the last ``detect``."""
        return self.planner.looks

    @property
    def carried(self) -> int:
        """Motion boxes answered from their settled chain by the last ``detect``."""
        return self.planner.carried

    def _frame(self, view: FrameView) -> tuple[FloatArray, FloatArray]:
        boxes = view.motion.boxes
        tall = boxes[(boxes[:, 3] - boxes[:, 1]) >= self.config.min_height]
        chains = self.planner.follow(view.index, tall)
        if not len(tall):
            return np.zeros((0, 4), np.float32), np.zeros(0, np.float32)
        found, grey = [], None
        for chain in chains:
            if self.config.settle_looks and self.planner.settled(chain, view.t_s):
                found.append(self.planner.carry(chain))
                continue
            if grey is None:
                self.frames_seen += 1
                grey = read_grey(view)
            people, scores = people_in_box(grey, chain.box, self.config)
            self.planner.looked(chain, view.t_s, people, scores)
            found.append((people, scores))
        people = np.concatenate([f[0] for f in found])
        scores = np.concatenate([f[1] for f in found])
        keep = suppress_overlaps(people, scores, self.config.iou)
        return people[keep], scores[keep]

    def detect(self, frames: Sequence[FrameView]) -> Detections:
        self.frames_seen = 0
        self.planner = self._planner()
        boxes, scores, index, times = [], [], [], []
        for view in frames:
            people, score = self._frame(view)
            boxes.append(people)
            scores.append(score)
            index.extend([view.index] * len(people))
            times.extend([view.t_s] * len(people))
        return Detections(
            boxes=np.concatenate(boxes) if boxes else np.zeros((0, 4), np.float32),
            scores=np.concatenate(scores) if scores else np.zeros(0, np.float32),
            class_ids=np.zeros(len(index), dtype=np.int64),
            frame_index=np.asarray(index, dtype=np.int64),
            t_s=np.asarray(times, dtype=np.float32),
            class_names=(PERSON_CLASS,),
        )
