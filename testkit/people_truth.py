"""Scoring people against the hand labels of ``vtest.avi`` (``testkit/data/vtest_people.json``).

Shared by the tests and ``benchmarks/classes.py`` so both measure the same way:

* per frame, PASCAL VOC style: predicted person boxes are matched greedily, best score first, to
  the labelled people at IoU >= 0.5; a prediction on a ``difficult`` label (tiny, mostly hidden)
  is neither right nor wrong, a missed difficult label is not a miss;
* per track: a moving object's true class is ``person`` when, on most of the labelled frames it
  was seen on, its box holds a labelled person (half of the person's box inside it); tracks seen
  on no labelled frame are not scored (counted apart). A track's class is right when the run's
  class is ``person`` exactly when the truth is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tasks.geometry import box_iou, inside_share

LABELS = Path(__file__).resolve().parent / "data" / "vtest_people.json"
IOU = 0.5


@dataclass(frozen=True)
class LabelledFrame:
    frame: int
    t_s: float
    boxes: np.ndarray  # (N, 4) normalised
    difficult: np.ndarray  # (N,) bool


def load_labels(path: Path = LABELS) -> list[LabelledFrame]:
    """The labelled frames, boxes normalised to the frame size."""
    data = json.loads(path.read_text())
    width, height = data["size"]
    scale = np.array([width, height, width, height], dtype=np.float32)
    return [
        LabelledFrame(
            int(f["frame"]),
            float(f["t_s"]),
            np.asarray([p["box"] for p in f["people"]], np.float32).reshape(-1, 4) / scale,
            np.asarray([bool(p.get("difficult")) for p in f["people"]], dtype=bool),
        )
        for f in data["frames"]
    ]


@dataclass
class BoxScore:
    true_positives: int = 0
    false_positives: int = 0
    misses: int = 0

    @property
    def precision(self) -> float:
        found = self.true_positives + self.false_positives
        return self.true_positives / found if found else 1.0

    @property
    def recall(self) -> float:
        wanted = self.true_positives + self.misses
        return self.true_positives / wanted if wanted else 1.0


def score_frame(
    truth: LabelledFrame, boxes: np.ndarray, scores: np.ndarray, into: BoxScore
) -> None:
    """Add one frame's matches at IoU >= 0.5 (VOC rules for difficult labels) to ``into``."""
    taken = np.zeros(len(truth.boxes), dtype=bool)
    for i in np.argsort(-scores, kind="stable"):
        if not len(truth.boxes):
            into.false_positives += 1
            continue
        ious = box_iou(boxes[i : i + 1], truth.boxes)[0]
        ious[taken & ~truth.difficult] = -1.0
        best = int(np.argmax(ious))
        if ious[best] < IOU:
            into.false_positives += 1
        elif not truth.difficult[best]:
            taken[best] = True
            into.true_positives += 1
    into.misses += int((~taken & ~truth.difficult).sum())


def score_boxes(
    labels: Sequence[LabelledFrame], rows: Iterable[Mapping[str, Any]], fps: float
) -> BoxScore:
    """Person boxes (rows with ``t_s``, ``bbox``, ``score``) against every labelled frame."""
    by_frame: dict[int, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_frame.setdefault(round(float(row["t_s"]) * fps), []).append(row)
    total = BoxScore()
    for truth in labels:
        found = by_frame.get(truth.frame, [])
        boxes = np.asarray([r["bbox"] for r in found], np.float32).reshape(-1, 4)
        scores = np.asarray([r["score"] for r in found], np.float32)
        score_frame(truth, boxes, scores, total)
    return total


@dataclass
class TrackScore:
    correct: int = 0
    scored: int = 0
    unscored: int = 0
    wrong: list[str] = field(default_factory=list)  # "object id: run class / truth class"

    @property
    def accuracy(self) -> float:
        return self.correct / self.scored if self.scored else 1.0


def score_tracks(
    labels: Sequence[LabelledFrame], rows: Iterable[Mapping[str, Any]], fps: float
) -> TrackScore:
    """Class accuracy of the moving objects (``tracks`` rows of the ``motion`` detector)."""
    truth_by_frame = {t.frame: t for t in labels}
    holds: dict[str, list[bool]] = {}
    classes: dict[str, str] = {}
    for row in rows:
        classes[row["track_id"]] = row["class"]
        truth = truth_by_frame.get(round(float(row["t_s"]) * fps))
        if truth is None:
            continue
        box = np.asarray([row["bbox"]], np.float32)
        inside = inside_share(truth.boxes, box)[:, 0] if len(truth.boxes) else np.zeros(0)
        holds.setdefault(row["track_id"], []).append(bool((inside >= 0.5).any()))
    score = TrackScore(unscored=len(classes) - len(holds))
    for object_id, seen in holds.items():
        truth_class = "person" if sum(seen) * 2 > len(seen) else "not a person"
        said = classes[object_id]
        score.scored += 1
        if (said == "person") == (truth_class == "person"):
            score.correct += 1
        else:
            score.wrong.append(f"{object_id}: {said} / {truth_class}")
    return score
