"""The ``yolo`` detector: an Ultralytics-style ONNX object detector, run where motion says to look.

The design is Frigate's, for a CPU that cannot afford a neural network on every sampled frame:

* GATING. The model runs only on frames with motion boxes, and on ``refresh`` frames (the first
  frame and scene changes), where it looks at the whole frame so that objects standing still from
  the start are seen too. Motion never boxes them: the background starts from a frame they are in.
* REGIONS. On a motion frame the model looks at a square-ish region around the union of the
  motion boxes (grown for context, never smaller than a minimum), when that region is below
  ``region_fraction`` of the frame: the object then fills more of the model's input, which helps
  small, far objects most. Larger regions are not worth a crop, so the whole frame is used.
* LETTERBOX. Each image is resized keeping its aspect ratio and padded with grey 114, centred, as
  Ultralytics does in training and export, so the model sees what it was trained on.
* DECODING and class-aware NMS are plain numpy (a few hundred candidates per image); boxes are
  mapped back through the letterbox and the region to normalised WHOLE-frame coordinates.
* BATCHING. When the model's batch dimension is dynamic, up to ``max_batch`` images go in one
  ``session.run`` (fewer calls into onnxruntime); otherwise they go one at a time.

Loading, checking and running the ONNX model live in ``tasks.detect.detectors.yolo_model``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field

from tasks.detect.detectors.base import FrameView
from tasks.detect.detectors.yolo_model import YoloModel, load_model
from tasks.detections import Detections
from tasks.geometry import box_union, suppress_overlaps
from tasks.sample.frames import Frame

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

PAD_GREY = 114  # Ultralytics' letterbox colour
REGION_GROWTH = 1.2  # the region's side per longer side of the motion union (context around it)
REGION_MARGIN = 0.05  # plus this fraction of the frame's shorter side
REGION_MIN = 0.25  # and at least this fraction of the frame's shorter side


class YoloConfig(BaseModel):
    """Settings of the ``yolo`` detector.

    Attributes:
        type: plugin discriminator.
        model_path: the Ultralytics-style ``.onnx`` detection model.
        names_path: class names, one per line or a JSON list or ``{index: name}`` dict; wins over
            the model's ``names`` metadata. Without either, classes are ``class0``, ``class1``...
        confidence: smallest class score kept.
        iou: boxes of one class that overlap a better one by more than this IoU are dropped (NMS).
        threads: onnxruntime intra-op threads (one detector runs one graph at a time).
        max_batch: most images per ``session.run`` when the model's batch dimension is dynamic.
        region_fraction: a motion frame is cropped to the region around its motion when that
            region covers less than this fraction of the frame; 0 always uses the whole frame.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["yolo"] = "yolo"
    model_path: Path
    names_path: Path | None = None
    confidence: float = Field(0.35, ge=0.0, le=1.0)
    iou: float = Field(0.45, ge=0.0, le=1.0)
    threads: int = Field(2, ge=1, le=64)
    max_batch: int = Field(8, ge=1, le=64)
    region_fraction: float = Field(0.4, ge=0.0, le=1.0)


@dataclass(frozen=True)
class Region:
    """A crop of a frame in pixels, ``x1, y1`` included and ``x2, y2`` excluded."""

    x1: int
    y1: int
    x2: int
    y2: int

    @classmethod
    def whole(cls, width: int, height: int) -> Region:
        return cls(0, 0, width, height)

    @property
    def area(self) -> int:
        return (self.x2 - self.x1) * (self.y2 - self.y1)

    def crop(self, frame: Frame) -> Frame:
        return frame[self.y1 : self.y2, self.x1 : self.x2]


def letterbox(image: Frame, size: tuple[int, int]) -> tuple[FloatArray, float, tuple[int, int]]:
    """``image`` ``(h, w, 3)`` uint8 RGB fitted into ``size`` ``(H, W)`` as Ultralytics does.

    Returns:
        The ``(3, H, W)`` float32 tensor in 0..1, the scale ``min(H / h, W / w)`` and the padding
        ``(left, top)`` in pixels; an input pixel ``p`` shows image pixel ``(p - pad) / scale``.
    """
    height, width = size
    scale = min(height / image.shape[0], width / image.shape[1])
    new_w, new_h = round(image.shape[1] * scale), round(image.shape[0] * scale)
    # Ultralytics' rounding: an odd padding puts its extra pixel on the bottom and right.
    left, top = round((width - new_w) / 2 - 0.1), round((height - new_h) / 2 - 0.1)
    canvas = np.full((height, width, 3), PAD_GREY, dtype=np.uint8)
    if (new_w, new_h) != (image.shape[1], image.shape[0]):
        resized = Image.fromarray(image).resize((new_w, new_h), Image.Resampling.BILINEAR)
        image = np.asarray(resized, dtype=np.uint8)
    canvas[top : top + new_h, left : left + new_w] = image
    tensor = np.ascontiguousarray(canvas.transpose(2, 0, 1), dtype=np.float32) / np.float32(255)
    return tensor, scale, (left, top)


def decode(output: FloatArray, confidence: float) -> tuple[FloatArray, FloatArray, IntArray]:
    """Candidates of one image's output ``(4 + C, N)`` whose best class score is ``>= confidence``.

    Returns:
        Boxes ``(K, 4)`` ``x1, y1, x2, y2`` in model-input pixels, scores ``(K,)`` and class ids
        ``(K,)`` (the best-scoring class of each candidate).
    """
    class_scores = output[4:]
    class_ids = class_scores.argmax(axis=0)
    scores = class_scores.max(axis=0)
    keep = scores >= confidence
    cx, cy, w, h = output[:4, keep]
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    return (
        boxes.astype(np.float32).reshape(-1, 4),
        scores[keep].astype(np.float32),
        class_ids[keep].astype(np.int64),
    )


def motion_region(motion: FloatArray, width: int, height: int, fraction: float) -> Region:
    """Where to look in a ``width`` x ``height`` frame with normalised ``motion`` boxes ``(N, 4)``.

    A square around the union of the boxes, ``REGION_GROWTH`` times its longer side plus a margin
    and at least ``REGION_MIN`` of the frame's shorter side, moved (not cut) to stay inside the
    frame. The whole frame when that square covers ``fraction`` of it or more.
    """
    x1, y1, x2, y2 = box_union(motion)[0] * (width, height, width, height)
    short = min(width, height)
    side = max(max(x2 - x1, y2 - y1) * REGION_GROWTH + REGION_MARGIN * short, REGION_MIN * short)
    side_x, side_y = min(side, width), min(side, height)
    left = min(max((x1 + x2 - side_x) / 2, 0.0), width - side_x)
    top = min(max((y1 + y2 - side_y) / 2, 0.0), height - side_y)
    region = Region(round(left), round(top), round(left + side_x), round(top + side_y))
    return region if region.area < fraction * width * height else Region.whole(width, height)


def boxes_to_frame(
    boxes: FloatArray, scale: float, pad: tuple[int, int], region: Region, frame: tuple[int, int]
) -> FloatArray:
    """Model-input pixel boxes ``(N, 4)`` as normalised boxes of the whole ``(W, H)`` frame.

    Undoes the letterbox (padding, then scale), clips to the region the model saw, moves by the
    region's offset and divides by the frame size.
    """
    pad_x, pad_y = pad
    in_region = (boxes - np.array([pad_x, pad_y, pad_x, pad_y])) / scale
    limits = np.array([region.x2 - region.x1, region.y2 - region.y1] * 2)
    in_frame = np.clip(in_region, 0, limits) + np.array([region.x1, region.y1] * 2)
    width, height = frame
    return np.asarray(in_frame / np.array([width, height] * 2), dtype=np.float32)


@dataclass(frozen=True)
class _Input:
    """One image ready for the model, and what maps its boxes back to its frame."""

    view: FrameView
    tensor: FloatArray
    scale: float
    pad: tuple[int, int]
    region: Region
    frame_size: tuple[int, int]


class YoloDetector:
    """Objects of the model's classes in the sampled frames where motion (or a refresh) is.

    Loading the model happens in ``__init__``; it raises ``DetectorUnavailable`` as ``detect``
    does when onnxruntime fails, so the detect stage can fall back to motion.
    """

    name = "yolo"

    def __init__(self, config: YoloConfig) -> None:
        self.config = config
        self.model: YoloModel = load_model(config.model_path, config.names_path, config.threads)
        self.class_names = self.model.class_names
        self.frames_seen = 0  # frames the last ``detect`` ran the model on

    @property
    def batch_size(self) -> int:
        """Images per ``session.run``: ``max_batch`` if the batch dimension is dynamic, else 1."""
        return self.config.max_batch if self.model.dynamic_batch else 1

    def detect(self, frames: Sequence[FrameView]) -> Detections:
        """Boxes in the frames with motion or a refresh; other frames are skipped."""
        views = [view for view in frames if view.refresh or len(view.motion) > 0]
        self.frames_seen = len(views)
        parts = [self._detect_batch(batch) for batch in _batches(views, self.batch_size)]
        return Detections.concatenate(parts) if parts else Detections.empty(self.class_names)

    def _detect_batch(self, views: Sequence[FrameView]) -> Detections:
        """One ``session.run`` over ``views`` (each prepared only now: tensors are large)."""
        inputs = [self._prepare(view) for view in views]
        outputs = self.model.run(np.stack([item.tensor for item in inputs]))
        return Detections.concatenate(
            [
                self._frame_detections(item, output)
                for item, output in zip(inputs, outputs, strict=True)
            ]
        )

    def _prepare(self, view: FrameView) -> _Input:
        """The letterboxed region of ``view`` the model should look at (see the module docs)."""
        frame = view.thumbnail()
        height, width = frame.shape[:2]
        region = Region.whole(width, height)
        if not view.refresh:
            motion = view.motion.boxes
            region = motion_region(motion, width, height, self.config.region_fraction)
        tensor, scale, pad = letterbox(region.crop(frame), self.model.input_size)
        return _Input(view, tensor, scale, pad, region, (width, height))

    def _frame_detections(self, item: _Input, output: FloatArray) -> Detections:
        """The boxes of one image's output, after NMS, in whole-frame normalised coordinates."""
        boxes, scores, class_ids = decode(output, self.config.confidence)
        kept = suppress_overlaps(boxes, scores, self.config.iou, class_ids)
        n = len(kept)
        return Detections(
            boxes=boxes_to_frame(boxes[kept], item.scale, item.pad, item.region, item.frame_size),
            scores=scores[kept],
            class_ids=class_ids[kept],
            frame_index=np.full(n, item.view.index, dtype=np.int64),
            t_s=np.full(n, item.view.t_s, dtype=np.float32),
            class_names=self.class_names,
        )


def _batches(views: Sequence[FrameView], size: int) -> Iterator[Sequence[FrameView]]:
    """``views`` in consecutive chunks of at most ``size``."""
    for start in range(0, len(views), size):
        yield views[start : start + size]
