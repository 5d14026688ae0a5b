"""Multi-object tracking figures of person tracks against the hand labels of ``vtest.avi``.

``testkit/people_truth.py`` asks whether each box is a person; this module asks whether the run
keeps each person under ONE id over time, which only the labels' identity ids (1..12, the same
person keeps hers through exits and returns) can tell. The CLEAR MOT and identity figures (MOTA,
IDF1, switches, ...) are py-motmetrics' own, so they mean what they mean in the MOT literature;
this module only prepares each labelled frame for its ``MOTAccumulator``:

* only labelled frames the run sampled are scored (a row's ``t_s`` within 1e-3 s of
  ``frame / fps``): a frame the run never looked at is neither a miss nor a hit;
* ``difficult`` labels (tiny, mostly hidden, cut by the edge) are "don't care" regions, as in
  PETS-style evaluation: in each frame, hypotheses are matched greedily, best IoU first, to all
  labels at IoU >= 0.5; the difficult labels and the hypotheses matched to them are removed
  before the frame reaches the accumulator, so a missed difficult label is no miss and a
  hypothesis on one is neither a true nor a false positive (a hypothesis that fits a clearly
  visible person better is not lost to a difficult one next to it);
* distances are ``1 - IoU``, ``nan`` below the IoU threshold, computed here: motmetrics 1.4.0's
  ``distances.iou_matrix`` calls ``np.asfarray``, which numpy 2 removed. Ids are given to it as
  integers (string ids are numbered in order of appearance).

Tracks are scored against ``load_truth(by="sighting")`` (a track is not expected to follow a
person out of the picture and back; the labels' own ids would cap IDF1 by track at 0.66 on this
clip with perfect tracking), identities against ``load_truth()``.

``mixed`` counts hypothesis ids that hold two people who were in view at the same labelled frame:
whatever linked them, they were plainly two people, which no appearance model should merge.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

import motmetrics as mm
import numpy as np

from tasks.geometry import box_iou
from testkit.people_truth import LABELS, load_labels

TIME_TOLERANCE_S = 1e-3
METRICS = (
    "mota",
    "idf1",
    "precision",
    "recall",
    "num_switches",
    "num_false_positives",
    "num_misses",
    "num_objects",
    "num_unique_objects",
    "mostly_tracked",
)
HypothesisKey = Literal["track_id", "identity_id"]
TruthKey = Literal["person", "sighting"]
IDENTITIES = LABELS.parent / "vtest_identities.json"


@dataclass(frozen=True)
class TruthFrame:
    """A labelled frame: boxes ``(N, 4)`` normalised, identity ids ``(N,)``, difficult ``(N,)``."""

    frame: int
    t_s: float
    boxes: np.ndarray
    ids: np.ndarray
    difficult: np.ndarray


def load_truth(path: Path = LABELS, by: TruthKey = "person") -> list[TruthFrame]:
    """The labelled frames of ``vtest_people.json``, each box with its person's id (``by``
    ``"person"``) or with the id of the person's spell in the picture (``"sighting"``: a person
    who leaves and comes back starts a new one, numbered ``100 * person + spell``)."""
    frames = json.loads(path.read_text())["frames"]
    spells = _sightings() if by == "sighting" else {}
    truth = []
    for labelled, raw in zip(load_labels(path), frames, strict=True):
        ids = [p["id"] for p in raw["people"]]
        if spells:
            ids = [100 * i + _spell(spells[i], labelled.t_s) for i in ids]
        truth.append(
            TruthFrame(
                labelled.frame,
                labelled.t_s,
                labelled.boxes,
                np.asarray(ids, np.int64),
                labelled.difficult,
            )
        )
    return truth


def _sightings() -> dict[int, list[tuple[float, float]]]:
    """Each person's spells in the picture, from ``vtest_identities.json``."""
    people = json.loads(IDENTITIES.read_text())["people"]
    return {p["id"]: [(float(a), float(b)) for a, b in p["sightings"]] for p in people}


def _spell(spells: list[tuple[float, float]], t_s: float) -> int:
    """The number (1, 2, ...) of the spell nearest ``t_s`` (a box at an exit's edge counts)."""
    gaps = [max(start - t_s, t_s - end, 0.0) for start, end in spells]
    return 1 + int(np.argmin(gaps))


@dataclass(frozen=True)
class MotFigures:
    """py-motmetrics' figures for one hypothesis key, and the frames and merges behind them."""

    key: str
    frames_scored: int
    frames_labelled: int
    objects: int  # truth boxes scored (difficult ones left out)
    people: int  # distinct truth ids among them
    mota: float
    idf1: float
    precision: float
    recall: float
    switches: int
    false_positives: int
    misses: int
    mostly_tracked: int
    mixed: tuple[int, int]  # (hypothesis ids holding two people in view together, ids seen)
    estimated: int  # hypothesis boxes on scored frames that no detector saw there

    HEADER = (
        "| hypothesis id | frames scored | MOTA | IDF1 | precision | recall | switches | FP "
        "| misses | mostly tracked | holding two people in view together |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|"
    )

    def row(self) -> str:
        """This key's line of the markdown table under ``HEADER``."""
        mixed, seen = self.mixed
        return (
            f"| {self.key} | {self.frames_scored} of {self.frames_labelled} | {self.mota:.3f} "
            f"| {self.idf1:.3f} | {self.precision:.3f} | {self.recall:.3f} | {self.switches} "
            f"| {self.false_positives} | {self.misses} | {self.mostly_tracked} of {self.people} "
            f"| {mixed} of {seen} |"
        )

    def markdown(self) -> str:
        """A table of this key alone."""
        return f"{self.HEADER}\n{self.row()}"


def score_tracks(
    truth: Sequence[TruthFrame],
    rows: Iterable[Mapping[str, Any]],
    key: HypothesisKey,
    fps: float = 10.0,
    iou: float = 0.5,
    sampled: Iterable[float] | None = None,
) -> MotFigures:
    """MOT figures of person ``rows`` (``t_s``, normalised ``bbox``, ``key``) against ``truth``.

    Args:
        truth: the labelled frames (``load_truth()``).
        rows: the run's person rows of ``tracks.parquet``; ``estimated`` may be absent.
        key: the column that names a hypothesis: ``track_id`` or ``identity_id``.
        fps: the video's frame rate, to turn labelled frame numbers into times.
        iou: the least IoU of a match.
        sampled: the times the run sampled (``frames.parquet``); by default the rows' times, so
            a sampled labelled frame without a single person row is then not scored.

    Raises:
        ValueError: no labelled frame was sampled.
    """
    rows = list(rows)
    looked = _labelled_at(truth, _times(rows) if sampled is None else sampled, fps)
    scored = [t for t in truth if t.frame in looked]
    if not scored:
        raise ValueError("no labelled frame was sampled by the run")
    found = _rows_by_frame(scored, rows, fps)
    accumulator, numbers = _accumulate(scored, found, key, iou)
    summary = mm.metrics.create().compute(accumulator, metrics=list(METRICS), name=key)
    figures = {name: summary[name].iloc[0] for name in METRICS}
    on_scored = [row for frame_rows in found.values() for row in frame_rows]
    return MotFigures(
        key=key,
        frames_scored=len(scored),
        frames_labelled=len(truth),
        objects=int(figures["num_objects"]),
        people=int(figures["num_unique_objects"]),
        mota=float(figures["mota"]),
        idf1=float(figures["idf1"]),
        precision=float(figures["precision"]),
        recall=float(figures["recall"]),
        switches=int(figures["num_switches"]),
        false_positives=int(figures["num_false_positives"]),
        misses=int(figures["num_misses"]),
        mostly_tracked=int(figures["mostly_tracked"]),
        mixed=(_mixed(accumulator, truth), len(numbers)),
        estimated=sum(bool(row.get("estimated")) for row in on_scored),
    )


def _times(rows: Iterable[Mapping[str, Any]]) -> list[float]:
    return [float(row["t_s"]) for row in rows]


def _labelled_at(truth: Sequence[TruthFrame], times: Iterable[float], fps: float) -> set[int]:
    """The labelled frame numbers that one of ``times`` falls on."""
    labelled = {t.frame for t in truth}
    return {f for f in (_frame_at(s, fps) for s in times) if f is not None and f in labelled}


def _frame_at(t_s: float, fps: float) -> int | None:
    """The frame ``t_s`` falls on, within ``TIME_TOLERANCE_S``, or None between frames."""
    frame = round(t_s * fps)
    return frame if abs(t_s - frame / fps) <= TIME_TOLERANCE_S else None


def _rows_by_frame(
    truth: Sequence[TruthFrame], rows: Iterable[Mapping[str, Any]], fps: float
) -> dict[int, list[Mapping[str, Any]]]:
    """The rows on each of ``truth``'s frames (every frame present, maybe with none)."""
    found: dict[int, list[Mapping[str, Any]]] = {t.frame: [] for t in truth}
    for row in rows:
        frame = _frame_at(float(row["t_s"]), fps)
        if frame in found:
            found[frame].append(row)
    return found


def _accumulate(
    truth: Sequence[TruthFrame],
    found: Mapping[int, list[Mapping[str, Any]]],
    key: str,
    iou: float,
) -> tuple[Any, dict[str, int]]:
    """A ``MOTAccumulator`` fed every scored frame, and the hypothesis ids numbered for it."""
    accumulator = mm.MOTAccumulator(auto_id=False)
    numbers: dict[str, int] = {}
    for frame in truth:
        frame_rows = found[frame.frame]
        hyps = np.asarray([r["bbox"] for r in frame_rows], np.float64).reshape(-1, 4)
        hyp_ids = np.asarray([_number(numbers, r, key) for r in frame_rows], np.int64)
        keep_truth, keep_hyps = cared_for(frame, hyps, iou)
        distances = iou_distances(frame.boxes[keep_truth], hyps[keep_hyps], iou)
        accumulator.update(
            frame.ids[keep_truth], hyp_ids[keep_hyps], distances, frameid=frame.frame
        )
    return accumulator, numbers


def _number(numbers: dict[str, int], row: Mapping[str, Any], key: str) -> int:
    """The integer motmetrics knows ``row``'s hypothesis id by (a new one for a new id)."""
    if row.get(key) is None:  # all such rows would otherwise be one hypothesis, "None"
        raise ValueError(f"a person row at {row['t_s']} s has no {key}")
    return numbers.setdefault(str(row[key]), len(numbers))


def cared_for(frame: TruthFrame, hyps: np.ndarray, iou: float) -> tuple[np.ndarray, np.ndarray]:
    """Which labels and which hypotheses ``(M, 4)`` remain once the don't-care regions go.

    Hypotheses and all labels are paired greedily, best IoU first, at IoU >= ``iou``; difficult
    labels and the hypotheses paired with them are dropped. Returns two bool masks, ``(N,)``
    over ``frame``'s labels and ``(M,)`` over ``hyps``.
    """
    keep_hyps = np.ones(len(hyps), dtype=bool)
    if not frame.difficult.any() or not len(hyps):
        return ~frame.difficult, keep_hyps
    ious = box_iou(frame.boxes, hyps)
    while ious.size and ious.max() >= iou:
        label, hyp = np.unravel_index(int(np.argmax(ious)), ious.shape)
        if frame.difficult[label]:
            keep_hyps[hyp] = False
        ious[label, :] = -1.0
        ious[:, hyp] = -1.0
    return ~frame.difficult, keep_hyps


def iou_distances(truth: np.ndarray, hyps: np.ndarray, iou: float) -> np.ndarray:
    """``(N, M)`` distances ``1 - IoU`` of truth boxes to hypotheses, ``nan`` below ``iou``."""
    ious = box_iou(truth, hyps)
    return np.where(ious >= iou, 1.0 - ious, np.nan)


def _mixed(accumulator: Any, truth: Sequence[TruthFrame]) -> int:
    """Hypothesis ids matched to two truth ids that share a labelled frame."""
    together = {
        pair for frame in truth for pair in combinations(sorted({int(i) for i in frame.ids}), 2)
    }
    events = accumulator.mot_events
    matched = events[events["Type"].isin(["MATCH", "SWITCH"])]
    held: dict[int, set[int]] = {}
    for hyp, person in zip(matched["HId"], matched["OId"], strict=True):
        held.setdefault(int(hyp), set()).add(int(person))
    return sum(
        any(pair in together for pair in combinations(sorted(people), 2))
        for people in held.values()
    )
