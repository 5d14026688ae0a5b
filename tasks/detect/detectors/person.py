"""The ``person`` detector: a learned pedestrian network (``person_model``) whose boxes ARE the
people, looked for where it pays.

A track's box used to be a region of change that HOG only voted on: people walking together
were one region, a shadow part of a person, a person standing still background. Here the
network's boxes are the people (tight, head to feet), and the track stage tracks them
(``tasks.track.people``); motion only says where to look between sweeps.

WHERE IT LOOKS, per sampled frame (every look is one pass of the network, about 10 ms):

* SWEEPS. At refresh points (the start, scene cuts) the whole frame is looked at, and so are
  overlapping tiles of 60 % (2 x 2) and 40 % (3 x 3) of its size: the network sees 300 x 300
  pixels, so a far person, 50 px tall in a 768 px frame, is 20 px at the whole frame's scale
  and 50 px in a 40 % tile, where SSD's smallest anchors are. People standing still from the
  start are found there. Every ``sweep_s`` (10 s) a light sweep (the whole frame and the 60 %
  tiles) finds people the targets below missed: one who stopped before anyone saw them move.
  A person who moved in was a target, and a person once found stays one; so the sweep is a
  safety net, at 5 looks in 10 s, not a cost on every frame.
* TARGETS. In between, the network looks at crops around what may hold a person: the motion
  boxes (gated as below) and the people found on the previous frame (so a person who stops is
  still seen). Each crop is centred on its target and sized at the smallest of 40 %, 60 % or
  100 % of the frame in which the target fills at most ``FIT`` of the crop; a target inside a
  crop already chosen needs no other.
* GATING. Motion boxes are followed frame to frame (``person_chains.LookPlanner``); one whose
  last ``settle_not_looks`` looks found nobody explaining it (a cart, a door, a synthetic blob)
  is not looked at again while it keeps its size, for ``recheck_s``, then twice as long after
  each recheck that found nobody again, up to ``recheck_max_s``. So a scene of moving things
  that are no people costs a look every few seconds per thing, not one per frame.

Boxes of overlapping crops are fused: a box touching a crop's edge inside the frame is cut by
the crop and dropped (the crop was chosen so its target fits), then boxes overlapping by more
than ``iou`` are one person, placed at their score-weighted mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from tasks.detect.detectors.base import FrameView
from tasks.detect.detectors.person_chains import LookPlanner
from tasks.detect.detectors.person_model import DEFAULT_MODEL, load_session, run_model
from tasks.detections import Detections
from tasks.geometry import box_iou, suppress_overlaps

FloatArray = npt.NDArray[np.float32]
Crop = tuple[float, float, float, float]  # normalised x1, y1, x2, y2

PERSON_CLASS = "person"
SWEEP_TILES = ((0.6, 2), (0.4, 3))  # (tile side as a share of the frame's, tiles per side)
LIGHT_SWEEP_TILES = ((0.6, 2),)
LEVELS = (0.4, 0.6, 1.0)  # the crop sizes a target may get, as a share of the frame's sides
FIT = 0.6  # a target fills at most this share of its crop (room for a walker's next steps)
EDGE = 0.01  # a box this close to a crop's inner edge was cut by it
NEVER = 1_000_000  # a chain that holds a person never settles: people are looked at each frame


class PersonConfig(BaseModel):
    """Settings of the ``person`` detector.

    Attributes:
        type: plugin discriminator.
        model_path: the ONNX network; None: the committed ``pedestrian_ssdlite.onnx``.
        threads: onnxruntime intra-op threads.
        min_score: boxes scoring less are dropped (the tracker starts tracks only from boxes
            scoring ``tasks.track.people``'s ``high_score``; weaker ones only extend them).
        iou: boxes of one frame overlapping more than this are one person.
        sweep_s: time between light sweeps (0: sweeps at refresh points only).
        min_height: motion boxes shorter than this share of the frame are no targets, and the
            track stage's class vote counts only rows this tall.
        settle_not_looks: a motion box this many looks found no person in is not looked at
            again until it changes size by more than ``resize`` or ``recheck_s`` passed.
        resize: relative change of a settled box's width or height that brings a look back.
        recheck_s: a settled box is looked at again this long after the look that settled it.
        recheck_max_s: each recheck that again found nobody doubles that wait, up to this.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["person"] = "person"
    model_path: Path | None = None
    threads: int = Field(2, ge=1, le=64)
    min_score: float = Field(0.3, ge=0.0, le=1.0)
    iou: float = Field(0.5, gt=0.0, le=1.0)
    sweep_s: float = Field(10.0, ge=0.0)
    min_height: float = Field(0.03, gt=0.0, le=1.0)
    settle_not_looks: int = Field(6, ge=1)
    resize: float = Field(0.25, ge=0.0)
    recheck_s: float = Field(1.0, ge=0.0)
    recheck_max_s: float = Field(4.0, ge=0.0)


def grid(tiles: Sequence[tuple[float, int]]) -> list[Crop]:
    """The whole frame and, per ``(side, n)``, ``n x n`` overlapping tiles of that side."""
    crops: list[Crop] = [(0.0, 0.0, 1.0, 1.0)]
    for side, n in tiles:
        for x in np.linspace(0.0, 1.0 - side, n):
            for y in np.linspace(0.0, 1.0 - side, n):
                crops.append((float(x), float(y), float(x) + side, float(y) + side))
    return crops


def _inside(box: FloatArray, crop: Crop) -> bool:
    return bool(box[0] >= crop[0] and box[1] >= crop[1] and box[2] <= crop[2] and box[3] <= crop[3])


def target_crops(targets: FloatArray) -> list[Crop]:
    """Crops covering every target box (see the module docstring), largest targets first."""
    crops: list[Crop] = []
    areas = (targets[:, 2] - targets[:, 0]) * (targets[:, 3] - targets[:, 1])
    for box in targets[np.argsort(-areas, kind="stable")]:
        if any(_inside(box, crop) for crop in crops):
            continue
        size = max(float(box[2] - box[0]), float(box[3] - box[1]))
        side = next((s for s in LEVELS if size <= FIT * s), 1.0)
        cx, cy = float(box[0] + box[2]) / 2, float(box[1] + box[3]) / 2
        x = min(max(cx - side / 2, 0.0), 1.0 - side)
        y = min(max(cy - side / 2, 0.0), 1.0 - side)
        crops.append((x, y, x + side, y + side))
    return crops


def _cut_by_edge(boxes: FloatArray, crop: Crop) -> npt.NDArray[np.bool_]:
    """Boxes touching an edge of ``crop`` that is not an edge of the frame."""
    x1, y1, x2, y2 = crop
    cut = np.zeros(len(boxes), bool)
    if x1 > 0:
        cut |= boxes[:, 0] <= x1 + EDGE
    if y1 > 0:
        cut |= boxes[:, 1] <= y1 + EDGE
    if x2 < 1:
        cut |= boxes[:, 2] >= x2 - EDGE
    if y2 < 1:
        cut |= boxes[:, 3] >= y2 - EDGE
    return cut


def fuse(boxes: FloatArray, scores: FloatArray, iou: float) -> tuple[FloatArray, FloatArray]:
    """One box per person: NMS, each kept box moved to the score-weighted mean of the boxes it
    suppressed (each box to the one kept box it overlaps most) and itself; the best score stays.
    Repeated until no two boxes overlap more than ``iou``: two means can end nearer each other
    than the boxes they came from, and the rule is the same for them."""
    while len(boxes):
        keep = suppress_overlaps(boxes, scores, iou)
        if len(keep) == len(boxes):
            break
        overlap = box_iou(boxes[keep], boxes)
        overlap[np.arange(len(keep)), keep] = np.inf
        owner, every = overlap.argmax(axis=0), np.arange(len(boxes))
        weights = np.zeros_like(overlap)
        weights[owner, every] = np.where(overlap[owner, every] > iou, scores, 0.0)
        fused = (weights @ boxes) / weights.sum(axis=1, keepdims=True)
        boxes, scores = np.asarray(fused, np.float32), scores[keep]
    return boxes, scores


class PersonDetector:
    """The ``person`` plugin (see the module docstring).

    Counters of the last ``detect`` (``cost.json``'s ``detectors.person``): ``frames_seen``
    frames looked at, ``looks`` passes of the network, ``sweeps`` frames swept whole, and
    ``settled`` motion boxes not looked at because their chain settled as no person.
    """

    name = PERSON_CLASS

    def __init__(self, config: PersonConfig) -> None:
        self.config = config
        self.model_path = config.model_path or DEFAULT_MODEL
        self.session = load_session(self.model_path, config.threads)
        self.frames_seen = self.looks = self.sweeps = self.settled = 0
        self._reset()

    def _reset(self) -> None:
        cfg = self.config
        self.planner = LookPlanner(
            NEVER, cfg.resize, cfg.recheck_s, cfg.settle_not_looks, cfg.recheck_max_s
        )
        self.previous: FloatArray = np.zeros((0, 4), np.float32)
        self.last_sweep_t = -np.inf

    @property
    def counters(self) -> dict[str, int]:
        return {"looks": self.looks, "sweeps": self.sweeps, "settled": self.settled}

    def _crops(self, view: FrameView) -> list[Crop]:
        """What to look at in ``view`` (empty: nothing there may be a person)."""
        motion = view.motion.boxes
        tall = motion[(motion[:, 3] - motion[:, 1]) >= self.config.min_height]
        chains = self.planner.follow(view.index, tall)  # followed on sweeps too
        sweep_due = view.t_s - self.last_sweep_t >= self.config.sweep_s - 1e-6
        if view.refresh or (self.config.sweep_s and sweep_due):
            self.last_sweep_t = view.t_s
            self.sweeps += 1
            return grid(SWEEP_TILES if view.refresh else LIGHT_SWEEP_TILES)
        targets = [self.previous]
        for chain in chains:
            if self.planner.settled(chain, view.t_s):
                self.settled += 1
            else:
                targets.append(chain.box[None, :])
        boxes = np.concatenate(targets)
        return target_crops(boxes) if len(boxes) else []

    def _look(self, view: FrameView, crops: list[Crop]) -> tuple[FloatArray, FloatArray]:
        image = view.person()
        height, width = image.shape[:2]
        found, scores = [], []
        for crop in crops:
            x1, y1 = round(crop[0] * width), round(crop[1] * height)
            x2, y2 = round(crop[2] * width), round(crop[3] * height)
            boxes, score = run_model(self.session, np.ascontiguousarray(image[y1:y2, x1:x2]))
            self.looks += 1
            scale = np.array([x2 - x1, y2 - y1, x2 - x1, y2 - y1], np.float32)
            origin = np.array([x1, y1, x1, y1], np.float32)
            size = np.array([width, height, width, height], np.float32)
            frame: FloatArray = np.asarray((boxes * scale + origin) / size, np.float32)
            keep = (score >= self.config.min_score) & ~_cut_by_edge(frame, crop)
            found.append(frame[keep])
            scores.append(score[keep])
        return fuse(np.concatenate(found), np.concatenate(scores), self.config.iou)

    def _frame(self, view: FrameView) -> tuple[FloatArray, FloatArray]:
        crops = self._crops(view)
        if not crops:
            self.previous = np.zeros((0, 4), np.float32)
            return self.previous, np.zeros(0, np.float32)
        self.frames_seen += 1
        people, scores = self._look(view, crops)
        for chain in self.planner.chains:
            if chain.index == view.index and any(_inside(chain.box, c) for c in crops):
                self.planner.looked(chain, view.t_s, people)
        self.previous = people
        return people, scores

    def detect(self, frames: Sequence[FrameView]) -> Detections:
        self.frames_seen = self.looks = self.sweeps = self.settled = 0
        self._reset()
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
