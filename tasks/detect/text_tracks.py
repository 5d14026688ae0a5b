"""Texts read at a few looks become texts seen over time: one instance per text and place.

OCR runs on few frames (``tasks.sample.text_looks``), so a reading alone says only "this text was
there at this instant". How long it stayed is read from the glances of EVERY sampled frame: a text
is still there while the pixels of its box stay as they were when it was read. From each reading the
scan goes backwards and forwards while the box's region stays within ``same_level`` (mean absolute
difference, grey levels); a difference that lasts less than ``max_gap_s`` (someone walking in front)
is bridged when the region comes back. The scan stops at scene changes: a new scene's text is read
on its own look.

Readings of the same text at the same place (boxes overlapping by ``same_place_iou``) whose
intervals touch or overlap, within ``max_gap_s``, are one instance: one object of class ``text``.
Two readings that differ slightly (an OCR slip: ``EXIT 3`` and ``EXlT 3``) at the same place and
time are one instance too, named by the reading with the best total score.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.geometry import box_iou, box_union
from tasks.sample.frames import FrameFile

Box = tuple[float, float, float, float]
Glances = npt.NDArray[np.uint8] | FrameFile  # (frames, h, w), indexed one frame at a time


@dataclass(frozen=True)
class Reading:
    """One text the OCR read on one look: where (normalised box), what, how sure."""

    look: int  # sampled-frame index of the look
    box: Box
    text: str
    score: float


@dataclass(frozen=True)
class TextTrackConfig:
    same_level: float = 12.0
    min_level: float = 3.0
    one_place_iou: float = 0.5
    max_gap_s: float = 2.0
    same_place_iou: float = 0.3
    similar_text: float = 0.8


@dataclass
class TextInstance:
    """One text at one place over a stretch of sampled frames."""

    box: Box
    samples: set[int] = field(default_factory=set)
    votes: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    scores: list[float] = field(default_factory=list)

    @property
    def text(self) -> str:
        return max(self.votes.items(), key=lambda kv: (kv[1], kv[0]))[0]

    @property
    def score(self) -> float:
        return float(np.mean(self.scores))


def normalised(text: str) -> str:
    """The text as compared: case and spaces do not count."""
    return "".join(text.split()).casefold()


def _overlap(a: Box, b: Box) -> float:
    return float(box_iou([a], [b])[0, 0])


def _region(box: Box, shape: tuple[int, ...]) -> tuple[slice, slice]:
    """The glance pixels of a normalised box, at least 2x2, widened by one pixel."""
    h, w = shape[-2], shape[-1]
    x1 = min(max(int(box[0] * w) - 1, 0), w - 2)
    y1 = min(max(int(box[1] * h) - 1, 0), h - 2)
    x2 = max(min(int(np.ceil(box[2] * w)) + 1, w), x1 + 2)
    y2 = max(min(int(np.ceil(box[3] * h)) + 1, h), y1 + 2)
    return slice(y1, y2), slice(x1, x2)


def _scan(
    glances: Glances,
    times: Sequence[float],
    scene: Sequence[int],
    reading: Reading,
    step: int,
    cfg: TextTrackConfig,
    stop: int | None = None,
) -> list[int]:
    """Sampled frames, from the look in one direction, where the reading's region is unchanged.

    The scan ends at ``stop`` (excluded) when given: the look of the next reading of the same
    text at the same place, which scans on from there.
    """
    rows, cols = _region(reading.box, glances.shape)
    whole = glances[reading.look]
    reference = whole[rows, cols].astype(np.float32)
    level = same_level(reference, cfg)
    kept: list[int] = []
    last_same = reading.look
    i = reading.look + step
    while 0 <= i < len(times) and i != stop and scene[i] == scene[reading.look]:
        if abs(times[i] - times[last_same]) > cfg.max_gap_s:
            break
        gain = np.float32(frame_gain(glances[i], whole))
        patch = glances[i][rows, cols].astype(np.float32)
        if float(np.mean(np.abs(patch - reference * gain))) <= level:
            kept.append(i)
            last_same = i
        i += step
    # Frames inside a bridged gap count as seen: the text was behind whatever passed.
    if kept:
        far = max(kept) if step > 0 else min(kept)
        lo, hi = sorted((reading.look + step, far))
        return list(range(lo, hi + 1))
    return []


def same_level(reference: npt.NDArray[np.float32], cfg: TextTrackConfig) -> float:
    """How much a text's region may differ and still show the text: ``same_level``, or less
    for faint text (half its own contrast, at least ``min_level``). Text with no plate (an
    outline, a thin caption) changes its region by a few grey levels when it goes; measured on
    random scenes, a fixed 12 kept such text "seen" long after it was gone."""
    contrast = float(np.mean(np.abs(reference - np.median(reference))))
    return min(cfg.same_level, max(cfg.min_level, 0.5 * contrast))


def frame_gain(glance: npt.NDArray[np.uint8], reference: npt.NDArray[np.uint8]) -> float:
    """How much brighter ``glance`` is than ``reference`` overall (median ratio of lit pixels):
    a light switched on changes every region, and must not end every text."""
    a = glance[::2, ::2].astype(np.float32)
    b = reference[::2, ::2].astype(np.float32)
    lit = b > 20
    if lit.sum() < 16:
        return 1.0
    gain = float(np.median(a[lit] / b[lit]))
    return gain if 0.5 < gain < 2.0 else 1.0


def _same_instance(inst: TextInstance, reading: Reading, cfg: TextTrackConfig) -> bool:
    mine, theirs = normalised(inst.text), normalised(reading.text)
    if _part_of(inst.box, reading.box) and (mine in theirs or theirs in mine):
        return True  # the OCR read a word of the text on its own (wide letter spacing)
    if _overlap(inst.box, reading.box) < cfg.same_place_iou:
        return False
    return mine == theirs or SequenceMatcher(None, mine, theirs).ratio() >= cfg.similar_text


def _joins(
    inst: TextInstance,
    reading: Reading,
    span: set[int],
    times: Sequence[float],
    cfg: TextTrackConfig,
) -> bool:
    """Whether a reading (visible over ``span``) is more of ``inst``: the same text at the same
    place in touching time, or any text at the very same place at the same time (one place
    shows one text at a time: a different string there is an OCR slip, e.g. "DNE 46" for
    "ZONE 46" while a passer-by hid its first letter)."""
    if _same_instance(inst, reading, cfg) and _touches(inst, span, times, cfg.max_gap_s):
        return True
    return bool(inst.samples & span) and _overlap(inst.box, reading.box) >= cfg.one_place_iou


def _part_of(a: Box, b: Box) -> bool:
    """Whether the smaller of two boxes lies mostly (80 %) inside the larger."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return smaller > 0 and ix * iy >= 0.8 * smaller


def _touches(inst: TextInstance, span: set[int], times: Sequence[float], gap_s: float) -> bool:
    if inst.samples & span:
        return True
    a0, a1, b0, b1 = min(inst.samples), max(inst.samples), min(span), max(span)
    gap = times[b0] - times[a1] if b0 > a1 else times[a0] - times[b1]
    return gap <= gap_s


def _neighbour(others: Iterable[Reading], reading: Reading, cfg: TextTrackConfig) -> int | None:
    """The look of the nearest other reading of the same text at the same place, if any."""
    for other in others:
        same_text = normalised(other.text) == normalised(reading.text)
        same_place = _overlap(other.box, reading.box) >= cfg.same_place_iou
        if other.look != reading.look and same_text and same_place:
            return other.look
    return None


def text_instances(
    readings: Sequence[Reading],
    glances: Glances,
    times: Sequence[float],
    scene: Sequence[int],
    cfg: TextTrackConfig = TextTrackConfig(),
) -> list[TextInstance]:
    """Group ``readings`` into instances with the sampled frames each was visible on.

    Args:
        readings: what the OCR read, any order.
        glances: ``(frames, h, w)`` grey glances of every sampled frame.
        times: time of every sampled frame.
        scene: scene number of every sampled frame (increases at each scene change).
        cfg: thresholds (see the module docstring).
    """
    instances: list[TextInstance] = []
    ordered = sorted(readings, key=lambda r: (r.look, -r.score))
    for k, reading in enumerate(ordered):
        before = _neighbour(reversed(ordered[:k]), reading, cfg)
        after = _neighbour(ordered[k + 1 :], reading, cfg)
        back = _scan(glances, times, scene, reading, -1, cfg, before)
        ahead = _scan(glances, times, scene, reading, +1, cfg, after)
        span = {reading.look, *back, *ahead}
        match = next((i for i in instances if _joins(i, reading, span, times, cfg)), None)
        if match is None:
            match = TextInstance(reading.box)
            instances.append(match)
        elif len(normalised(reading.text)) > len(normalised(match.text)):
            x1, y1, x2, y2 = (float(v) for v in box_union([match.box, reading.box])[0])
            match.box = (x1, y1, x2, y2)  # the whole of a text read in parts
        elif reading.score > max(match.scores):
            match.box = reading.box
        match.samples |= span
        # A longer reading says more: "TAXI 564" outvotes its parts "TAXI" and "564".
        match.votes[reading.text] += reading.score * len(normalised(reading.text))
        match.scores.append(reading.score)
    return sorted(_join_parts(instances, times, cfg), key=lambda inst: min(inst.samples))


def _join_parts(
    instances: list[TextInstance], times: Sequence[float], cfg: TextTrackConfig
) -> list[TextInstance]:
    """Fold an instance that is a part of another (its text a piece of the other's, its box
    inside the other's, seen at the same time) into the other: one sign, one text."""
    kept: list[TextInstance] = []
    for inst in sorted(instances, key=lambda i: -len(normalised(i.text))):
        whole = next(
            (
                k
                for k in kept
                if normalised(inst.text) in normalised(k.text)
                and _part_of(k.box, inst.box)
                and _touches(k, inst.samples, times, cfg.max_gap_s)
            ),
            None,
        )
        if whole is None:
            kept.append(inst)
            continue
        whole.samples |= inst.samples
        whole.scores.extend(inst.scores)
    return kept


def explained_by_text(
    tracks: Detections, texts: Detections, cover: float = 0.7
) -> npt.NDArray[np.int64]:
    """Motion track numbers that are text appearing, not a thing moving.

    A sign put up or a caption shown is change, so motion finds it; when the OCR read text in the
    motion box on at least ``cover`` of the track's frames (the text box mostly inside the motion
    box, which is at most a few times larger), the text object tells the story and the motion
    track would only count the sign twice.
    """
    if not len(texts) or not len(tracks):
        return np.zeros(0, dtype=np.int64)
    # Text rows sorted by frame once; every (motion row, text row of its frame) pair at once.
    order = np.argsort(texts.frame_index, kind="stable")
    frames, boxes = texts.frame_index[order], texts.boxes[order]
    starts = np.searchsorted(frames, tracks.frame_index, side="left")
    counts = np.searchsorted(frames, tracks.frame_index, side="right") - starts
    row_of = np.repeat(np.arange(len(tracks)), counts)
    text_of = np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(counts.sum())
    hit = np.zeros(len(tracks), dtype=bool)
    np.logical_or.at(hit, row_of, _text_inside(tracks.boxes[row_of], boxes[text_of]))
    numbers, inverse = np.unique(tracks.track_ids, return_inverse=True)
    inverse = inverse.reshape(-1)
    hits = np.bincount(inverse, weights=hit.astype(np.float64))
    rows = np.bincount(inverse)
    return np.asarray(numbers[hits >= cover * rows], dtype=np.int64)


def _text_inside(
    boxes: npt.NDArray[np.float32], texts: npt.NDArray[np.float32]
) -> npt.NDArray[np.bool_]:
    """Row by row: do the box and the text box mostly cover each other (60 % of the smaller),
    the box at most 6 times larger? A sign appearing often gives motion only on part of it (the
    part that differs most from what was behind), so the box may also lie inside the text."""
    ix = np.clip(
        np.minimum(boxes[:, 2], texts[:, 2]) - np.maximum(boxes[:, 0], texts[:, 0]), 0, None
    )
    iy = np.clip(
        np.minimum(boxes[:, 3], texts[:, 3]) - np.maximum(boxes[:, 1], texts[:, 1]), 0, None
    )
    text_area = (texts[:, 2] - texts[:, 0]) * (texts[:, 3] - texts[:, 1])
    box_area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    shared = ix * iy >= 0.6 * np.minimum(text_area, box_area)
    return np.asarray(shared & (box_area <= 6.0 * text_area), dtype=bool)
