"""Join the chunks of a long video into one video's samples and detections.

Each chunk keeps only what it owns (``[start_s, end_s)``); its lead-in was there to warm it up
and to overlap the previous chunk. Sampled frames are renumbered in time order and their
thumbnails moved into the run's one frames folder, so the later stages see one video:

* scene changes are continuous: a chunk's first own frame was scored against its lead-in, as it
  would have been against the previous chunk (a chunk that could not have a lead-in, because
  its keyframes are too far apart, marks its first frame ``chunk_start``);
* physical objects need no stitching here: the track stage tracks the joined boxes of the
  whole video, so an object crossing a border keeps one id; an object standing still across a
  border, which the next chunk's background took in, is carried forward (``tasks.chunk.still``);
* texts are tracked by the OCR inside each chunk, so a text standing across a border is one
  instance on each side: the instance the chunk saw during its lead-in (the frames the previous
  chunk saw at its end) is matched to the previous chunk's by place, and keeps its id and text;
* the raw analysis frames stay in the chunks' files: the joined video reads its frames there
  (``SampledFrames.analysis_parts``), so the world state measures colours as in one pass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tasks.chunk.stage import ChunkResult
from tasks.chunk.still import with_still_objects
from tasks.decode.stage import SourceInfo
from tasks.detect.detectors.motion import MotionConfig
from tasks.detect.stage import DetectReport
from tasks.detections import Detections
from tasks.geometry import box_iou
from tasks.sample.frames import ANALYSIS, FramePart, frame_name
from tasks.sample.stage import SampledFrames, check_complete
from ves.errors import SourceTruncated

MIN_TEXT_IOU = 0.5  # a text's box on both sides of a border: the same sign overlaps itself


@dataclass(frozen=True)
class Joined:
    """The whole video's samples (with their rows), boxes by detector, and detect report."""

    sampled: SampledFrames
    found: dict[str, Detections]
    report: DetectReport


def join_chunks(
    results: Sequence[ChunkResult], source: SourceInfo, frames_dir: Path, text_gap_s: float
) -> Joined:
    """One video again from its chunks (the pure core of the join)."""
    ordered = sorted(results, key=lambda r: r.chunk.index)
    check_continuous(ordered, source)
    rows, maps = _join_frames(ordered, frames_dir)
    report = _join_report(ordered)
    found = {name: _join_boxes(ordered, maps, name, text_gap_s) for name in _every(ordered)}
    for name, dets in found.items():
        report.detectors[name]["boxes"] = len(dets)
    last, first = ordered[-1].sampled, ordered[0].sampled
    sampled = SampledFrames(
        count=len(rows),
        frames_dir=str(frames_dir),
        analysis_width=first.analysis_width,
        analysis_height=first.analysis_height,
        decoded=sum(r.sampled.decoded for r in ordered),
        duration_s=max(source.duration_s or 0.0, last.processed_s),
        processed_s=last.processed_s,
        truncated_at_bound=last.truncated_at_bound,
        rows=tuple(rows),
        glance_shape=first.glance_shape,
        last_t=last.last_t,
        held=sum(1 for row in rows if row.get("held")),
        skipped=sum(r.sampled.skipped for r in ordered),
        analysis_parts=analysis_parts(ordered, maps),
    )
    return Joined(sampled, found, report)


def analysis_parts(
    ordered: Sequence[ChunkResult], maps: Sequence[npt.NDArray[np.int64]]
) -> tuple[FramePart, ...]:
    """Where each joined frame's analysis pixels are: the frame it was in its chunk's file."""
    parts = []
    for result, local in zip(ordered, maps, strict=True):
        owned = np.flatnonzero(local >= 0)
        if not len(owned):
            continue
        sampled = result.sampled
        shape = (sampled.analysis_height, sampled.analysis_width, 3)
        path = str(Path(sampled.frames_dir) / ANALYSIS)
        indices = tuple(int(i) for i in owned[np.argsort(local[owned])])  # in joined order
        parts.append(FramePart(path, sampled.count, shape, indices))
    return tuple(parts)


def check_continuous(ordered: Sequence[ChunkResult], source: SourceInfo) -> None:
    """Every chunk decoded up to its end: a chunk that stopped early is a truncated source."""
    frame_s = 1.0 / source.fps
    for result in ordered[:-1]:
        reached = (
            result.sampled.last_t + frame_s if result.sampled.decoded else result.chunk.start_s
        )
        if reached < result.chunk.end_s - max(1.0, 2 * frame_s):
            raise SourceTruncated(
                f"decoding stopped at {reached:.1f} s of the declared "
                f"{source.duration_s or 0.0:.1f} s; the file is truncated or corrupt"
            )
    last = ordered[-1].sampled
    check_complete(
        source, sum(r.sampled.decoded for r in ordered), last.last_t, last.truncated_at_bound
    )


def _join_frames(
    ordered: Sequence[ChunkResult], frames_dir: Path
) -> tuple[list[dict[str, Any]], list[npt.NDArray[np.int64]]]:
    """The owned frame rows renumbered, their thumbnails moved; per chunk, local -> global."""
    frames_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    maps = []
    for result in ordered:
        local = np.full(result.sampled.count, -1, dtype=np.int64)
        for row in result.sampled.rows:
            if not result.chunk.owns(row["t_s"]):
                continue
            index = len(rows)
            local[row["sample_index"]] = index
            result.sampled.thumbnail_path(row["sample_index"]).replace(
                frames_dir / frame_name(index)
            )
            joined = {**row, "sample_index": index}
            if result.chunk.index and row["refresh_reason"] == "start":
                joined["refresh_reason"] = "chunk_start"
            rows.append(joined)
        maps.append(local)
    return rows, maps


def _every(ordered: Sequence[ChunkResult]) -> list[str]:
    """Detectors that ran in every chunk (a detector that fell back anywhere is left out)."""
    return [name for name in ordered[0].found if all(name in r.found for r in ordered)]


def _join_report(ordered: Sequence[ChunkResult]) -> DetectReport:
    report = DetectReport(requested=ordered[0].report.requested)
    for result in ordered:
        report.failures.update(result.report.failures)
    report.ran = [name for name in ordered[0].report.ran if name not in report.failures]
    for name in report.ran:
        stats = [r.report.detectors[name] for r in ordered if name in r.report.detectors]
        counts = dict.fromkeys(key for s in stats for key in s if key not in ("boxes", "seconds"))
        report.detectors[name] = {
            **{key: sum(s.get(key, 0) for s in stats) for key in counts},  # frames, looks ...
            "boxes": 0,
            "seconds": round(sum(s["seconds"] for s in stats), 4),
        }
    return report


def _owned(result: ChunkResult, dets: Detections, local: npt.NDArray[np.int64]) -> Detections:
    """The rows of frames the chunk owns, with their frames' joined numbers."""
    mapped = local[dets.frame_index] if len(dets) else np.zeros(0, dtype=np.int64)
    kept = dets.select(mapped >= 0)
    return Detections(
        kept.boxes,
        kept.scores,
        kept.class_ids,
        mapped[mapped >= 0],
        kept.t_s,
        kept.track_ids,
        kept.class_names,
        kept.texts,
    )


def _join_boxes(
    ordered: Sequence[ChunkResult], maps: Sequence[npt.NDArray[np.int64]], name: str, gap_s: float
) -> Detections:
    parts: list[Detections] = []
    previous: Detections | None = None
    still_from: ChunkResult | None = None  # the previous chunk, with what was carried into it
    next_id = 0
    for result, local in zip(ordered, maps, strict=True):
        dets = result.found[name]
        if name == "motion" and still_from is not None:
            dets = with_still_objects(still_from, result, MotionConfig().threshold)
        if name == "motion":
            # An object still across several borders is carried on from what was carried in:
            # the next chunk's lead-in never saw it move, nor did this chunk's.
            still_from = dataclasses.replace(result, found={**result.found, "motion": dets})
        if name == "ocr" and len(dets):
            ids, texts = _text_ids(previous, dets, result.chunk.start_s, gap_s, next_id)
            next_id = max(next_id, max(ids.values(), default=-1) + 1)
            dets = Detections(
                dets.boxes,
                dets.scores,
                dets.class_ids,
                dets.frame_index,
                dets.t_s,
                np.asarray([ids[int(t)] for t in dets.track_ids], dtype=np.int64),
                dets.class_names,
                np.asarray(
                    [
                        texts.get(int(t), text)
                        for t, text in zip(dets.track_ids, dets.texts, strict=True)
                    ],
                    dtype=object,
                ),
            )
        owned = _owned(result, dets, local)
        parts.append(owned)
        previous = owned
    return Detections.concatenate(parts) if parts else Detections.empty()


def _text_ids(
    previous: Detections | None, current: Detections, border: float, gap_s: float, next_id: int
) -> tuple[dict[int, int], dict[int, str]]:
    """Joined ids for the chunk's text instances: the previous chunk's id (and reading) for an
    instance that continues one across the border, a new id for the others."""
    ids: dict[int, int] = {}
    texts: dict[int, str] = {}
    for local, (joined, text) in _continued(previous, current, border, gap_s).items():
        ids[local], texts[local] = joined, text
    for local in np.unique(current.track_ids):
        if int(local) not in ids:
            ids[int(local)] = next_id
            next_id += 1
    return ids, texts


def _continued(
    previous: Detections | None, current: Detections, border: float, gap_s: float
) -> dict[int, tuple[int, str]]:
    """Instances of ``current`` seen at the border matched to ``previous`` ones seen there."""
    if previous is None or not len(previous):
        return {}
    ending = _near(previous, border, gap_s, last=True)
    starting = _near(current, border, gap_s, last=False)
    if not ending or not starting:
        return {}
    a_ids, a_boxes = list(ending), np.stack([box for box, _ in ending.values()])
    b_ids, b_boxes = list(starting), np.stack([box for box, _ in starting.values()])
    overlap = box_iou(b_boxes, a_boxes)
    matched: dict[int, tuple[int, str]] = {}
    taken: set[int] = set()
    for flat in np.argsort(-overlap, axis=None):
        b, a = np.unravel_index(flat, overlap.shape)
        if overlap[b, a] < MIN_TEXT_IOU:
            break
        if b_ids[b] in matched or a_ids[a] in taken:
            continue
        matched[b_ids[b]] = (a_ids[a], ending[a_ids[a]][1])
        taken.add(a_ids[a])
    return matched


def _near(
    dets: Detections, border: float, gap_s: float, *, last: bool
) -> dict[int, tuple[npt.NDArray[np.float32], str]]:
    """Per instance seen within ``gap_s`` of the border (ending there, or starting by then): its
    median box there and its reading."""
    found: dict[int, tuple[npt.NDArray[np.float32], str]] = {}
    for instance in np.unique(dets.track_ids):
        rows = np.flatnonzero(dets.track_ids == instance)
        times = dets.t_s[rows]
        seen = times.max() >= border - gap_s if last else times.min() <= border + gap_s
        if not seen:
            continue
        near = rows[np.abs(times - border) <= gap_s + abs(times - border).min()]
        found[int(instance)] = (np.median(dets.boxes[near], axis=0), str(dets.texts[rows[0]]))
    return found
