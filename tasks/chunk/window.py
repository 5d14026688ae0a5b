"""A window of a live HLS stream as a chunk: sampled and detected once, joined at every publish.

A live session (``flows/live.py``) analyses each window as the chunk join analyses a chunk of a
long video: the window's file (``tasks.decode.live``) starts with the previous window's last
segment as its lead-in, so the window is ``Chunk(k, decode_from_s = its lead's start, start_s =
its own start, end_s = its end)`` on the session's time line. Sampling and detection run once per
window; their times are moved from the file's clock to the session's. At every publish the
session joins ALL its windows so far (``tasks.chunk.join``), and tracking runs once over the
joined boxes: an object that crosses a window border keeps one id, and a text keeps its reading.

The join moves thumbnails out of the chunk folders; a window is joined again at every later
publish, so it is handed to the join as a copy made of hard links (``linked``).
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from pathlib import Path

import numpy as np

from tasks.activity.stage import gate_for
from tasks.chunk.plan import Chunk
from tasks.chunk.stage import ChunkResult
from tasks.context import RunContext
from tasks.decode.live import WindowBytes
from tasks.decode.stage import SourceInfo, display_rotation, probe_video
from tasks.detect.detectors.registry import configs_for
from tasks.detect.stage import detect_frames
from tasks.detections import Detections
from tasks.sample.frames import link_or_copy
from tasks.sample.stage import SampledFrames, sample_config, sample_video


def window_source(window: WindowBytes, ctx: RunContext) -> SourceInfo:
    """The window's file, probed (bounds enforced) as any source."""
    duration, width, height, fps, codec, fmt = probe_video(window.path, ctx.settings)
    rotation = display_rotation(window.path)
    if rotation in (90, 270):
        width, height = height, width
    return SourceInfo(
        str(window.path),
        window.sha256,
        window.size,
        duration,
        width,
        height,
        fps,
        codec,
        fmt,
        rotation,
    )


def analyse_window(
    ctx: RunContext, window: WindowBytes, index: int, folder: Path
) -> tuple[SourceInfo, ChunkResult]:
    """Sample and detect one window into ``folder``; times on the session's time line."""
    source = window_source(window, ctx)
    length = window.lead_s + window.duration_s
    cue = ctx.still_cue
    cfg = sample_config(ctx, gate_for(window.path, cue).gate if cue else None)
    cfg = dataclasses.replace(cfg, max_duration_s=max(cfg.max_duration_s, length + 10.0))
    started = time.perf_counter()
    sampled = sample_video(source, cfg, folder)
    sampled_at = time.perf_counter()
    configs = configs_for(ctx.detector_mode, ctx.settings, ctx.yolo_model)
    found, report = detect_frames(sampled, sampled.rows, configs, ctx.detector_mode)
    seconds = {"sample": sampled_at - started, "detect": time.perf_counter() - sampled_at}
    offset = window.start_s - window.lead_s
    chunk = Chunk(index, offset, window.start_s, window.start_s + window.duration_s)
    moved = {name: _shifted(dets, offset) for name, dets in found.items()}
    shifted = _shifted_frames(sampled, offset)
    return source, ChunkResult(chunk, shifted, moved, report, seconds)


def _shifted(dets: Detections, offset: float) -> Detections:
    moved = (np.asarray(dets.t_s, dtype=np.float64) + offset).astype(np.float32)
    return dataclasses.replace(dets, t_s=moved)


def _shifted_frames(sampled: SampledFrames, offset: float) -> SampledFrames:
    rows = tuple({**row, "t_s": float(row["t_s"]) + offset} for row in sampled.rows)
    return dataclasses.replace(
        sampled,
        rows=rows,
        processed_s=sampled.processed_s + offset,
        duration_s=sampled.duration_s + offset,
        last_t=sampled.last_t + offset,
    )


def linked(result: ChunkResult, folder: Path) -> ChunkResult:
    """``result`` with its frames folder replaced by a copy of hard links in ``folder``."""
    source = Path(result.sampled.frames_dir)
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, folder, copy_function=link_or_copy)  # the join moves links
    sampled = dataclasses.replace(result.sampled, frames_dir=str(folder))
    return dataclasses.replace(result, sampled=sampled)
