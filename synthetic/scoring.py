"""Scoring a run's scene graph against a synthetic scene's ground truth.

The perception benchmark and its seeded test score every scene with these functions, so the
figures in the docs and the assertions in CI mean the same thing. Inputs are plain rows as the
artifacts hold them (``objects``, ``tracks``): times in seconds, boxes normalised ``x1, y1, x2,
y2``. Nothing here reads files.

- Physical objects (class other than ``text``) are matched one to one to the truth's objects
  (Hungarian) when their seen intervals overlap with IoU >= 0.5 and their tracked boxes lie on
  the truth's (mean box IoU >= ``SPATIAL_IOU`` over the frames both have). Unmatched ones are
  phantoms; the count is exact when there are as many as the truth has.
- "Don't care" regions (``GroundTruth.dont_care``: people pictured in a backdrop photo, real
  pictures of people but no objects of the scene) are scored as PETS-style evaluation scores
  difficult labels: an object left unmatched by the truth's objects whose boxes lie on such a
  region (mean box IoU >= ``SPATIAL_IOU``, seen while the region is) is neither a phantom nor
  counted, nor named ``person`` wrongly, nor an answer to Ask's count; in each frame a tracked
  box on a region (IoU >= 0.5) counts neither way, and a region missed is no miss.
- Identity: per sampled frame, tracked boxes are matched to the truth's visible boxes (box IoU
  >= 0.5; a truth box more than half covered by an object drawn over it is not visible, and
  boxes matching it count neither way). IDF1 is Ristani et al.'s: identities matched once for
  the whole video, ``2 IDTP / (truth boxes + tracked boxes)``. A switch is a truth object whose
  matched track changes from one matched frame to the next.
- Texts match when the read string equals the truth's (case and spaces ignored) and the seen
  intervals overlap; first/last errors are measured on matched texts.
- Identities, scored only when the run's objects have an ``identity_id`` column (a null one, as
  on faces, counts for no identity): truth objects are
  appearances, and appearances sharing an ``identity`` are one thing (one that left and came
  back). The distinct identities are exact when the run's physical objects carry as many
  distinct ``identity_id`` as the truth has identities; a return is recognised when every
  appearance of a truth identity seen twice or more is matched and all its matches carry one
  ``identity_id`` that no other truth identity's matches carry.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from synthetic.scene import Box, GroundTruth, ObjectTruth
from tasks.geometry import box_iou

INTERVAL_IOU = 0.5
SPATIAL_IOU = 0.3
BOX_IOU = 0.5
TEXT = "text"


def interval_iou(a: tuple[float, float], b: tuple[float, float]) -> float:
    """IoU of two closed time intervals (a point interval counts as length 0)."""
    inter = min(a[1], b[1]) - max(a[0], b[0])
    union = max(a[1], b[1]) - min(a[0], b[0])
    if inter < 0:
        return 0.0
    return 1.0 if union <= 0 else inter / union


def _iou(a: Sequence[float], b: Sequence[float]) -> float:
    """IoU of two boxes, measured as the pipeline measures it (``tasks.geometry.box_iou``)."""
    return float(box_iou(a, b)[0, 0])


def normalised_text(text: str) -> str:
    """A text as compared: case and spaces do not count."""
    return "".join(text.split()).casefold()


@dataclass(frozen=True)
class Predicted:
    """One scene-graph object of a run, with its tracked boxes by frame index."""

    object_id: str
    cls: str
    first_s: float
    last_s: float
    text: str | None
    boxes: Mapping[int, Box]
    identity: str | None = None


def predicted_objects(
    objects: Iterable[Mapping[str, Any]], tracks: Iterable[Mapping[str, Any]], fps: float
) -> list[Predicted]:
    """The run's objects (``objects.parquet`` rows) with their ``tracks.parquet`` boxes, keyed
    by the video's frame index (``round(t_s * fps)``)."""
    boxes: dict[str, dict[int, Box]] = {}
    for row in tracks:
        if row.get("track_id"):
            x1, y1, x2, y2 = (float(v) for v in row["bbox"])
            boxes.setdefault(str(row["track_id"]), {})[round(row["t_s"] * fps)] = (x1, y1, x2, y2)
    found = []
    for row in objects:
        attributes = row["attributes"]
        if isinstance(attributes, str):
            attributes = json.loads(attributes)
        text = attributes.get("text") if row["class"] == TEXT else None
        identity = row.get("identity_id")
        found.append(
            Predicted(
                str(row["object_id"]),
                str(row["class"]),
                float(row["first_seen_s"]),
                float(row["last_seen_s"]),
                text,
                boxes.get(str(row["object_id"]), {}),
                None if identity is None else str(identity),
            )
        )
    return found


@dataclass
class SceneScore:
    """What one scene's run got right and wrong."""

    truth_objects: int = 0
    predicted_objects: int = 0
    matched_objects: int = 0
    first_errors_s: list[float] = field(default_factory=list)
    last_errors_s: list[float] = field(default_factory=list)
    truth_texts: int = 0
    predicted_texts: int = 0
    matched_texts: int = 0
    texts_in_time: int = 0  # matched texts whose first and last seen are within 1 s
    id_switches: int = 0
    idtp: int = 0
    truth_boxes: int = 0
    tracked_boxes: int = 0
    asked_count: int | None = None
    named_person: int = 0  # physical objects the run called "person" (no synthetic blob is one)
    dont_care_found: int = 0  # things found only on don't-care regions (not in the counts)
    truth_identities: int = 0  # distinct things; truth_objects counts their appearances
    predicted_identities: int | None = None  # None: the run's objects carry no identity_id
    returns: int = 0  # truth identities seen in two or more appearances
    returns_recognised: int | None = None  # None when identities were not scored

    @property
    def phantoms(self) -> int:
        return self.predicted_objects - self.matched_objects

    @property
    def count_exact(self) -> bool:
        return self.predicted_objects == self.truth_objects

    @property
    def ask_exact(self) -> bool:
        """Whether "How many objects appeared?" was answered right: the distinct things where
        the run has identities (Ask counts identities there, a thing that came back once),
        else the objects (every thing of ``random_scene`` is one appearance)."""
        asked = None if self.asked_count is None else self.asked_count - self.dont_care_found
        if self.predicted_identities is None:
            return asked == self.truth_objects
        return asked == self.truth_identities

    @property
    def identities_exact(self) -> bool | None:
        """Whether the run saw as many distinct things as there were; None when not scored."""
        if self.predicted_identities is None:
            return None
        return self.predicted_identities == self.truth_identities


def _normalised_truth_boxes(truth: GroundTruth, obj: ObjectTruth) -> dict[int, Box]:
    w, h = truth.spec.width, truth.spec.height
    return {i: (b[0] / w, b[1] / h, b[2] / w, b[3] / h) for i, b in obj.boxes.items()}


def _spatial_agreement(truth_boxes: Mapping[int, Box], predicted: Mapping[int, Box]) -> float:
    shared = [i for i in predicted if i in truth_boxes]
    if not shared:
        return 0.0
    return float(np.mean([_iou(truth_boxes[i], predicted[i]) for i in shared]))


def match_objects(
    truth: GroundTruth, physical: Sequence[Predicted]
) -> list[tuple[ObjectTruth, Predicted]]:
    """One-to-one matches of truth objects to physical objects (see the module doc)."""
    if not truth.objects or not physical:
        return []
    score = np.zeros((len(truth.objects), len(physical)))
    for i, obj in enumerate(truth.objects):
        boxes = _normalised_truth_boxes(truth, obj)
        for j, pred in enumerate(physical):
            t_iou = interval_iou((obj.first_seen_s, obj.last_seen_s), (pred.first_s, pred.last_s))
            if t_iou >= INTERVAL_IOU and _spatial_agreement(boxes, pred.boxes) >= SPATIAL_IOU:
                score[i, j] = t_iou
    rows, cols = linear_sum_assignment(-score)
    return [(truth.objects[i], physical[j]) for i, j in zip(rows, cols, strict=True) if score[i, j]]


def on_dont_care(truth: GroundTruth, pred: Predicted) -> bool:
    """Whether ``pred`` lies on one of the truth's don't-care regions (see the module doc):
    matched as an object is, but by being seen within the region's time rather than by interval
    IoU (a region in view all video holds a short sighting of it as well as a long one)."""
    return any(
        region.first_seen_s - 1e-6 <= pred.first_s
        and pred.last_s <= region.last_seen_s + 1e-6
        and _spatial_agreement(_normalised_truth_boxes(truth, region), pred.boxes) >= SPATIAL_IOU
        for region in truth.dont_care
    )


def _occluded(truth: GroundTruth, index: int, frame: int) -> bool:
    """More than half of object ``index``'s box is under objects drawn after it."""
    box = truth.objects[index].boxes[frame]
    area = (box[2] - box[0]) * (box[3] - box[1])
    covered = sum(
        _intersection(box, later.boxes[frame])
        for later in truth.objects[index + 1 :]
        if frame in later.boxes
    )
    return covered > area / 2


def _intersection(a: Sequence[float], b: Sequence[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return ix * iy


def _frame_matches(truth_boxes: dict[int, Box], tracked: dict[str, Box]) -> list[tuple[int, str]]:
    """Truth index -> track id at one frame, box IoU >= ``BOX_IOU``, Hungarian."""
    if not truth_boxes or not tracked:
        return []
    keys, ids = list(truth_boxes), list(tracked)
    iou = box_iou([truth_boxes[k] for k in keys], [tracked[t] for t in ids])
    rows, cols = linear_sum_assignment(-iou)
    return [(keys[r], ids[c]) for r, c in zip(rows, cols, strict=True) if iou[r, c] >= BOX_IOU]


def score_identity(
    truth: GroundTruth, physical: Sequence[Predicted], frames: Iterable[int], score: SceneScore
) -> None:
    """IDF1's counts and identity switches over the sampled ``frames``."""
    norm = [_normalised_truth_boxes(truth, o) for o in truth.objects]
    regions = [_normalised_truth_boxes(truth, o) for o in truth.dont_care]
    pair_counts: dict[tuple[int, str], int] = {}
    last_track: dict[int, str] = {}
    for frame in frames:
        visible: dict[int, Box] = {}
        hidden = [boxes[frame] for boxes in regions if frame in boxes]  # don't care, and
        for i, boxes in enumerate(norm):
            if frame in boxes and _occluded(truth, i, frame):  # truth boxes nobody can see
                hidden.append(boxes[frame])
            elif frame in boxes:
                visible[i] = boxes[frame]
        tracked = {p.object_id: p.boxes[frame] for p in physical if frame in p.boxes}
        ignored = {t for t, b in tracked.items() for h in hidden if _iou(b, h) >= BOX_IOU}
        tracked = {t: b for t, b in tracked.items() if t not in ignored}
        score.truth_boxes += len(visible)
        score.tracked_boxes += len(tracked)
        for i, track in _frame_matches(visible, tracked):
            pair_counts[(i, track)] = pair_counts.get((i, track), 0) + 1
            if last_track.get(i, track) != track:
                score.id_switches += 1
            last_track[i] = track
    score.idtp += _best_identity_matching(pair_counts)


def _best_identity_matching(pair_counts: Mapping[tuple[int, str], int]) -> int:
    if not pair_counts:
        return 0
    truths = sorted({i for i, _ in pair_counts})
    tracks = sorted({t for _, t in pair_counts})
    counts = np.zeros((len(truths), len(tracks)))
    for (i, t), n in pair_counts.items():
        counts[truths.index(i), tracks.index(t)] = n
    rows, cols = linear_sum_assignment(-counts)
    return int(counts[rows, cols].sum())


def score_texts(truth: GroundTruth, texts: Sequence[Predicted], score: SceneScore) -> None:
    """Text recall, precision and timing against the truth's signs."""
    score.truth_texts += len(truth.texts)
    score.predicted_texts += len(texts)
    used: set[str] = set()
    for sign in truth.texts:
        want = normalised_text(sign.text)
        candidates = [
            p
            for p in texts
            if p.object_id not in used
            and normalised_text(p.text or "") == want
            and interval_iou((sign.start_s, sign.end_s), (p.first_s, p.last_s)) > 0
        ]
        if not candidates:
            continue
        best = max(
            candidates, key=lambda p: min(p.last_s, sign.end_s) - max(p.first_s, sign.start_s)
        )
        used.add(best.object_id)
        score.matched_texts += 1
        if abs(best.first_s - sign.start_s) <= 1.0 and abs(best.last_s - sign.end_s) <= 1.0:
            score.texts_in_time += 1


def _overlap_s(pred: Predicted, start_s: float, end_s: float) -> float:
    return min(pred.last_s, end_s) - max(pred.first_s, start_s)


def split_dont_care(
    truth: GroundTruth,
    physical: Sequence[Predicted],
    matches: Sequence[tuple[ObjectTruth, Predicted]],
) -> tuple[list[Predicted], list[Predicted]]:
    """``physical`` as (scored, on don't-care regions): the objects no truth object took that
    lie on a don't-care region (``on_dont_care``) are not scored."""
    matched = {pred.object_id for _, pred in matches}
    free = [p for p in physical if p.object_id not in matched]
    ignored = {p.object_id for p in free if on_dont_care(truth, p)}
    return (
        [p for p in physical if p.object_id not in ignored],
        [p for p in physical if p.object_id in ignored],
    )


def _thing(pred: Predicted) -> str:
    """What Ask counts ``pred`` as: its identity, else itself."""
    return pred.identity or pred.object_id


def score_scene(
    truth: GroundTruth,
    objects: Iterable[Mapping[str, Any]],
    tracks: Iterable[Mapping[str, Any]],
    sampled_frames: Iterable[int],
    asked_count: int | None = None,
) -> SceneScore:
    """Every figure of one scene (see the module doc)."""
    objects = list(objects)
    predicted = predicted_objects(objects, tracks, truth.fps)
    physical = [p for p in predicted if p.cls != TEXT]
    matches = match_objects(truth, physical)
    physical, pictured = split_dont_care(truth, physical, matches)
    score = SceneScore(len(truth.objects), len(physical), asked_count=asked_count)
    score.dont_care_found = len({_thing(p) for p in pictured} - {_thing(p) for p in physical})
    score.named_person = sum(p.cls == "person" for p in physical)
    score.matched_objects = len(matches)
    for obj, pred in matches:
        score.first_errors_s.append(abs(pred.first_s - obj.first_seen_s))
        score.last_errors_s.append(abs(pred.last_s - obj.last_seen_s))
    score_identity(truth, physical, sampled_frames, score)
    if any("identity_id" in row for row in objects):
        score_identities(truth, physical, matches, score)
    else:
        score_appearances(truth, score)
    score_texts(truth, [p for p in predicted if p.cls == TEXT], score)
    return score


def score_appearances(truth: GroundTruth, score: SceneScore) -> dict[str, list[str]]:
    """The truth's identities and how many were seen more than once; returns each identity's
    appearances (truth object names)."""
    appearances: dict[str, list[str]] = {}
    for obj in truth.objects:
        appearances.setdefault(obj.identity, []).append(obj.name)
    score.truth_identities = len(appearances)
    score.returns = sum(len(names) > 1 for names in appearances.values())
    return appearances


def score_identities(
    truth: GroundTruth,
    physical: Sequence[Predicted],
    matches: Sequence[tuple[ObjectTruth, Predicted]],
    score: SceneScore,
) -> None:
    """Distinct identities and recognised returns (see the module doc), for a run whose
    objects have an ``identity_id`` column (null on some, e.g. faces: those count for none)."""
    appearances = score_appearances(truth, score)
    score.predicted_identities = len({p.identity for p in physical if p.identity is not None})
    given = {obj.name: pred.identity for obj, pred in matches}
    carried = {k: {given.get(n) for n in names} for k, names in appearances.items()}
    score.returns_recognised = sum(
        len(ids) == 1
        and None not in ids
        and not any(ids & other for j, other in carried.items() if j != k)
        for k, ids in carried.items()
        if len(appearances[k]) > 1
    )
