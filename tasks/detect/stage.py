"""Stage 3, detect: run the run's detector plugins over the sampled frames.

``motion`` runs first over every sampled frame (read back small, in colour), restarting its
background where the sample stage marked a refresh. The other plugins then get the same frames
with the motion boxes attached, so they look only where and when something moved (``yolo``) or
only at the frames kept for reading text (``ocr``).

A plugin whose model is missing, unreadable or fails while running does not fail the run: its
boxes are left out, the run goes on with what remains (motion at least), and the report says
which detector fell back and why (``cost.json``'s ``fallback``, a note on every evidence span).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from storage.artifacts.layout import read_rows, write_table
from tasks.context import RunContext
from tasks.detect.detectors.base import FrameView
from tasks.detect.detectors.motion import MotionConfig, MotionDetector
from tasks.detect.detectors.registry import configs_for, create
from tasks.detect.held import analysed, carry_to_held, held_sources
from tasks.detections import Detections, detections_to_table
from tasks.sample.stage import SampledFrames
from ves.detector_mode import DetectorMode
from ves.errors import DetectorUnavailable
from ves.ids import new_id


@dataclass
class DetectReport:
    """What the detect stage ran, for ``cost.json`` and the evidence notes."""

    requested: DetectorMode
    ran: list[str] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    detectors: dict[str, dict[str, Any]] = field(default_factory=dict)
    held: int = 0  # held frames: their rows were carried from their source frame, not detected

    @property
    def physical(self) -> str:
        """The detector whose boxes are tracked as physical objects."""
        return self.mode.physical

    @property
    def mode(self) -> DetectorMode:
        """The detector mode that actually ran, e.g. ``motion+ocr`` after a YOLO fallback."""
        return DetectorMode.of_plugins(self.ran)

    @property
    def fallback_reason(self) -> str | None:
        if not self.failures:
            return None
        return "; ".join(f"{name}: {reason}" for name, reason in self.failures.items())

    def notes(self) -> tuple[str, ...]:
        """Review notes every evidence span of the run carries."""
        if not self.failures:
            return ()
        return (
            f"detector fallback: asked for {self.requested}, ran {self.mode} "
            f"({self.fallback_reason})",
        )


def frame_views(
    sampled: SampledFrames, frames: Sequence[dict[str, Any]], motion: Detections | None = None
) -> list[FrameView]:
    """One view per sampled frame, with its motion boxes when ``motion`` is given."""
    glances, analysis = sampled.glances(), sampled.analysis_frames()
    per_frame: dict[int, Detections] = {}
    if motion is not None and len(motion):
        for index in np.unique(motion.frame_index):
            per_frame[int(index)] = motion.select(motion.frame_index == index)
    empty = Detections.empty()
    return [
        FrameView(
            index=row["sample_index"],
            t_s=row["t_s"],
            refresh=row["refresh"],
            frames_dir=sampled.frames_dir,
            analysis_size=sampled.analysis_size,
            motion=per_frame.get(row["sample_index"], empty),
            text_look=bool(row.get("text_look", False)),
            glances=glances,
            analysis_frames=analysis,
        )
        for row in frames
    ]


def _run(config: Any, views: Sequence[FrameView], report: DetectReport) -> Detections | None:
    started = time.perf_counter()
    try:
        detector = create(config)
        found = detector.detect(views)
    except DetectorUnavailable as exc:
        report.failures[config.type] = exc.detail
        return None
    report.ran.append(detector.name)
    report.detectors[detector.name] = {
        "frames": detector.frames_seen,
        "boxes": len(found),
        "seconds": round(time.perf_counter() - started, 4),
    }
    report.detectors[detector.name].update(getattr(detector, "counters", {}))
    return found


def detect_frames(
    sampled: SampledFrames,
    frames: Sequence[dict[str, Any]],
    configs: Sequence[Any],
    mode: DetectorMode,
) -> tuple[dict[str, Detections], DetectReport]:
    """Every plugin's boxes by detector name, and the report (the pure core of the stage).

    ``configs`` starts with the motion config; motion cannot fall back, so its errors propagate.
    Held frames (a still stretch the gate did not decode) go through no detector: each gets
    its source frame's rows (``tasks.detect.held``); the OCR alone sees every frame.
    """
    report = DetectReport(requested=mode)
    decoded = analysed(frames)
    sources = held_sources(frames)
    times = {int(row["sample_index"]): float(row["t_s"]) for row in frames}
    report.held = len(sources)
    views = frame_views(sampled, decoded)
    motion = _run(configs[0], views, report)
    if motion is None:
        raise RuntimeError("the motion detector cannot fall back")
    found = {"motion": motion}
    gated = frame_views(sampled, decoded, motion)
    for config in configs[1:]:
        # The OCR follows texts over every frame's glance (it never reads motion boxes).
        result = _run(
            config, frame_views(sampled, frames) if config.type == "ocr" else gated, report
        )
        if result is not None:
            found[config.type] = result
    if len(found.get("ocr", ())):
        found["motion"] = motion_beside_text(configs[0], views, found["ocr"], report)
    for name in found:
        if name != "ocr":
            found[name] = carry_to_held(found[name], sources, times)
    return found, report


def motion_beside_text(
    config: MotionConfig, views: Sequence[FrameView], texts: Detections, report: DetectReport
) -> Detections:
    """Motion again, with the places where text was read left out while it was there.

    A sign put up is change, so the first motion pass keeps it as foreground for minutes, and
    whatever passes next to it merges with it into one box: the passer-by is lost (measured on
    random scenes: objects walking past a sign vanished into the sign's box). Once the OCR has
    said where and when text stood, motion runs again (about 1 ms a frame) with those boxes
    taken out of the mask and learnt into the background. The first pass still gated the OCR.
    """
    started = time.perf_counter()
    # The OCR's box hugs the letters; a sign's plate or a caption's band reaches about half a
    # letter height further (measured: a 20 px plate edge left outside became an "object").
    pad = 0.5 * (texts.boxes[:, 3] - texts.boxes[:, 1])
    padded = np.clip(texts.boxes + np.stack([-pad, -pad, pad, pad], axis=1), 0.0, 1.0)
    ignore: dict[int, Any] = {}
    for index in np.unique(texts.frame_index):
        ignore[int(index)] = padded[texts.frame_index == index]
    found = MotionDetector(config).detect(views, ignore)
    report.detectors["motion"]["boxes"] = len(found)
    report.detectors["motion"]["seconds"] += round(time.perf_counter() - started, 4)
    return found


def detections_table(found: dict[str, Detections]) -> pa.Table:
    """``detections.parquet``: every detector's rows; text rows are already tracked by the OCR
    (one object id per text instance)."""
    tables = []
    for name, dets in found.items():
        ids = None
        if name == "ocr":
            ids = {int(t): new_id("obj") for t in np.unique(dets.track_ids)}
        table = detections_to_table(dets, name, ids)
        tables.append(table)
    return pa.concat_tables(tables)


@task(name="detect", cache_policy=NONE)
def detect_task(ctx: RunContext, sampled: SampledFrames) -> DetectReport:
    """Detect on the sampled frames; writes ``detections.parquet``; returns what ran."""
    ctx.report("detect")
    frames = read_rows(ctx.layout.out_dir, "frames")
    configs = configs_for(ctx.detector_mode, ctx.settings, ctx.yolo_model)
    found, report = detect_frames(sampled, frames, configs, ctx.detector_mode)
    return record_detections(ctx, found, report)


def record_detections(
    ctx: RunContext, found: dict[str, Detections], report: DetectReport
) -> DetectReport:
    """Write ``detections.parquet`` and log what each detector found; returns ``report``."""
    write_table(ctx.layout.out_dir, "detections", detections_table(found))
    logger = get_run_logger()
    for name, stats in report.detectors.items():
        logger.info(
            "%s: %d boxes on %d frames in %.2f s",
            name,
            stats["boxes"],
            stats["frames"],
            stats["seconds"],
        )
    if report.fallback_reason:
        logger.warning("detector fallback: %s", report.fallback_reason)
    return report
