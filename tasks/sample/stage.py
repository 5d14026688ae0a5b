"""Stage 2, sample: decode the whole stream once, keep ``sample_fps`` frames, mark scene changes.

Every frame the codec needs is decoded, but only the sampled ones are converted, once, straight
to the thumbnail size (converting every frame to numpy costs more than decoding it). Each sampled
frame is kept as one JPEG on disk: detectors read it back at their analysis size, evidence draws
on it. Nothing is held in memory, so memory stays flat however long the video. A scene-change
score between consecutive sampled frames marks where the world state must be rebuilt (a refresh
marker). Colour matters: objects as bright as the background vanish in grey.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import av
import cv2
import numpy as np
import numpy.typing as npt
from PIL import Image
from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from storage.artifacts import write_rows
from tasks.context import RunContext
from tasks.decode.stage import SourceInfo, open_video
from tasks.sample.frames import (
    ANALYSIS,
    FRAMES_DIR,
    GLANCES,
    TEXT_DIR,
    FrameFile,
    frame_name,
    read_glances,
)
from tasks.sample.text_looks import LookConfig, LookPlanner, glance_of
from ves.errors import SourceInvalid, SourceTruncated

_TINY_WIDTH = 64  # scene scores are computed on a frame about this wide
_SKIP_NONREF_RATIO = 3
_HIST_STEP = 4  # grey levels per histogram bin


@dataclass(frozen=True)
class SampleConfig:
    sample_fps: float
    max_duration_s: float
    analysis_width: int
    thumbnail_width: int
    scene_cut_threshold: float
    text_width: int = 0  # width of the frames kept for reading text; 0: keep none
    skip_loop_filter: bool = False  # decode without the deblocking filter (see Settings)
    looks: LookConfig = field(default_factory=LookConfig)


@dataclass(frozen=True)
class SampledFrames:
    """What the sample stage produced: small enough to hand between tasks."""

    count: int
    frames_dir: str
    analysis_width: int
    analysis_height: int
    decoded: int
    duration_s: float
    processed_s: float
    truncated_at_bound: bool
    rows: tuple[dict[str, Any], ...]
    glance_shape: tuple[int, int] = (0, 0)

    def thumbnail_path(self, sample_index: int) -> Path:
        """The JPEG of a sampled frame (thumbnail size)."""
        return Path(self.frames_dir) / frame_name(sample_index)

    @property
    def analysis_size(self) -> tuple[int, int]:
        return self.analysis_width, self.analysis_height

    def analysis_frame(self, sample_index: int) -> npt.NDArray[np.uint8]:
        """A sampled frame as ``(H, W, 3)`` RGB at the analysis size."""
        return self.analysis_frames()[sample_index]

    def analysis_frames(self) -> FrameFile:
        """Every sampled frame at the analysis size, ``(H, W, 3)`` each, read one at a time."""
        shape = (self.analysis_height, self.analysis_width, 3)
        return FrameFile(Path(self.frames_dir) / ANALYSIS, self.count, shape)

    def glances(self) -> FrameFile:
        """Every sampled frame's glance, ``(h, w)`` grey each, read one at a time."""
        return read_glances(Path(self.frames_dir), self.count, self.glance_shape)


def _even(value: float) -> int:
    return max(2, round(value / 2) * 2)


def scaled_size(width: int, height: int, target_width: int) -> tuple[int, int]:
    """A size at most ``target_width`` wide with the source's aspect ratio (even numbers)."""
    scale = min(1.0, target_width / width)
    return _even(width * scale), _even(height * scale)


def scene_score(previous: npt.NDArray[np.uint8] | None, tiny: npt.NDArray[np.uint8]) -> float:
    """How different two consecutive sampled frames are, 0 (same) to 1 (another scene).

    Both frames are first brought to the same mean brightness, so a light switched on or an
    auto-exposure step is no cut. Then the larger of the mean absolute difference and the earth
    mover's distance between the grey histograms (how far the levels moved: it catches cuts
    between pictures alike in brightness, and unlike a bin-overlap distance it does not jump
    when many pixels shift by a few levels), both scaled so that 32 grey levels is a certain
    cut. Measured on 60 random scenes (ves.synthetic
    .random_scene): cuts score 0.46 to 1.0, lighting steps of 15 to 35 % 0.02 to 0.17 (0.01 to
    1.0 before the brightness was matched); on the synthetic lobby, a moving object or a sign
    appearing scores <= 0.1 and the cut 0.79.
    """
    if previous is None:
        return 0.0
    a, b = _same_brightness(previous), _same_brightness(tiny)
    mad = float(np.mean(np.abs(a.astype(np.int16) - b.astype(np.int16)))) / 32.0
    h1 = np.bincount(a.ravel() // _HIST_STEP, minlength=256 // _HIST_STEP)
    h2 = np.bincount(b.ravel() // _HIST_STEP, minlength=256 // _HIST_STEP)
    moved = np.abs(np.cumsum(h1) / max(1, a.size) - np.cumsum(h2) / max(1, b.size))
    return min(1.0, max(mad, float(moved.sum()) * _HIST_STEP / 32.0))


def _same_brightness(tiny: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """``tiny`` scaled to a mean of 128 (a black frame stays black)."""
    mean = float(tiny.mean())
    if mean < 1.0:
        return tiny
    return np.asarray(np.clip(tiny.astype(np.float32) * (128.0 / mean), 0, 255), dtype=np.uint8)


class _Sampler:
    """Per-video sampling state: the next time to keep, outputs, and the previous tiny frame."""

    def __init__(self, cfg: SampleConfig, source: SourceInfo, frames: Path):
        self.cfg, self.frames_dir = cfg, frames
        self.analysis_size = scaled_size(source.width, source.height, cfg.analysis_width)
        self.thumb_size = scaled_size(source.width, source.height, cfg.thumbnail_width)
        self.tiny_step = max(1, self.thumb_size[0] // _TINY_WIDTH)
        self.text_size = scaled_size(source.width, source.height, cfg.text_width)
        self.next_t = 0.0
        self.previous: npt.NDArray[np.uint8] | None = None
        self.rows: list[dict[str, Any]] = []
        self.planner = LookPlanner(cfg.looks)
        self.glance_shape = (0, 0)
        (frames / TEXT_DIR).mkdir(exist_ok=True)
        self.glance_file = (frames / GLANCES).open("wb")
        self.analysis_file = (frames / ANALYSIS).open("wb")

    def close(self) -> None:
        self.glance_file.close()
        self.analysis_file.close()

    def wants(self, t: float) -> bool:
        return t + 1e-6 >= self.next_t

    def keep(self, frame: av.VideoFrame, t: float) -> None:
        width, height = self.thumb_size
        # AREA averages the pixels it drops: clean thumbnails, and cheaper than the default.
        small = frame.reformat(width=width, height=height, format="rgb24", interpolation="AREA")
        rgb = small.to_ndarray()
        index = len(self.rows)
        Image.fromarray(rgb).save(self.frames_dir / frame_name(index), format="JPEG", quality=85)
        analysis = cv2.resize(rgb, self.analysis_size, interpolation=cv2.INTER_AREA)
        self.analysis_file.write(np.ascontiguousarray(analysis, dtype=np.uint8).tobytes())
        tiny = rgb[:: self.tiny_step, :: self.tiny_step].mean(axis=2).astype(np.uint8)
        score = scene_score(self.previous, tiny)
        refresh = index == 0 or score >= self.cfg.scene_cut_threshold
        reason = "start" if index == 0 else ("scene_change" if refresh else None)
        look = self._glance(frame, np.asarray(rgb, dtype=np.uint8), t, refresh, index)
        self.rows.append(
            {
                "sample_index": index,
                "t_s": t,
                "scene_score": score,
                "refresh": refresh,
                "refresh_reason": reason,
                "text_look": look,
            }
        )
        self.previous = tiny
        step = 1.0 / self.cfg.sample_fps
        self.next_t = max(self.next_t + step, t + step / 2)

    def _glance(
        self, frame: av.VideoFrame, rgb: npt.NDArray[np.uint8], t: float, refresh: bool, index: int
    ) -> bool:
        """Record the frame's glance; keep it at full size if text should be read on it.

        Only a run that reads text needs glances (the looks and the OCR's text tracks), so a
        run without OCR computes none.
        """
        if not self.cfg.text_width:
            return False
        glance = glance_of(rgb)
        self.glance_shape = (int(glance.shape[0]), int(glance.shape[1]))
        self.glance_file.write(glance.tobytes())
        if not self.planner.wants(t, glance, refresh):
            return False
        width, height = self.text_size
        full = frame.reformat(width=width, height=height, format="rgb24", interpolation="AREA")
        path = self.frames_dir / TEXT_DIR / frame_name(index)
        Image.fromarray(full.to_ndarray()).save(path, format="JPEG", quality=92)
        return True


def _frame_time(frame: av.VideoFrame, start: float, decoded: int, fps: float) -> float:
    return (frame.time - start) if frame.time is not None else decoded / fps


def sample_video(
    source: SourceInfo,
    cfg: SampleConfig,
    scratch: Path,
    on_progress: Callable[[float], None] = lambda _: None,
) -> SampledFrames:
    """Decode ``source`` once and keep the sampled frames (the pure core of the stage)."""
    frames_dir = scratch / FRAMES_DIR
    frames_dir.mkdir(parents=True, exist_ok=True)
    with open_video(Path(source.path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        if cfg.sample_fps * _SKIP_NONREF_RATIO <= source.fps:
            # Frames no other frame refers to (most B-frames) are needed only if sampled; at
            # a third of the frame rate or less, the reference frames are dense enough to sample
            # from, and skipping the rest saves about a third of the decoding. Skipping every
            # B-frame (``BIDIR``) would halve the decoding, but sampling from the sparser I- and
            # P-frames cost object precision 0.83 -> 0.76 on 40 random scenes (README).
            stream.codec_context.skip_frame = "NONREF"
        if cfg.skip_loop_filter:
            # H.264/HEVC's deblocking smooths block edges for the eye; motion at 240 px and text
            # at 1280 px read the frame the same without it (40 random scenes, README).
            stream.codec_context.options = {"skip_loop_filter": "all"}
        sampler = _Sampler(cfg, source, frames_dir)
        try:
            decoded, last_t, truncated = _decode(container, stream, source, sampler, on_progress)
        finally:
            sampler.close()
    _check_complete(source, decoded, last_t, truncated)
    return _result(source, sampler, scratch, decoded, last_t, truncated)


def _decode(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    source: SourceInfo,
    sampler: _Sampler,
    on_progress: Callable[[float], None],
) -> tuple[int, float, bool]:
    """Decode the stream, handing the sampled frames to ``sampler``: (decoded, last t, bounded)."""
    cfg = sampler.cfg
    horizon = min(cfg.max_duration_s, source.duration_s or math.inf)
    base = stream.time_base
    start = float(stream.start_time * base) if stream.start_time and base else 0.0
    decoded, last_t = 0, 0.0
    for frame in container.decode(stream):
        t = _frame_time(frame, start, decoded, source.fps)
        if t >= cfg.max_duration_s - 1e-6:  # the bound is exclusive: [0, max)
            return decoded, last_t, True
        decoded, last_t = decoded + 1, max(last_t, t)
        if sampler.wants(t):
            sampler.keep(frame, t)
            if len(sampler.rows) % 25 == 0 and math.isfinite(horizon):
                on_progress(min(1.0, t / horizon))
    return decoded, last_t, False


def _check_complete(source: SourceInfo, decoded: int, last_t: float, bounded: bool) -> None:
    if decoded == 0:
        raise SourceInvalid("no frame of the video could be decoded")
    if decoded == 1:
        raise SourceInvalid("the source holds a single frame: a still image, not a video")
    declared = source.duration_s
    if bounded or declared is None:
        return
    end = last_t + 1.0 / source.fps
    if end < declared - max(1.0, 0.05 * declared):
        raise SourceTruncated(
            f"decoding stopped at {end:.1f} s of the declared {declared:.1f} s; "
            "the file is truncated or corrupt"
        )


def _result(
    source: SourceInfo, sampler: _Sampler, scratch: Path, decoded: int, last_t: float, bounded: bool
) -> SampledFrames:
    processed = last_t + 1.0 / source.fps
    duration = source.duration_s if source.duration_s is not None else processed
    width, height = sampler.analysis_size
    return SampledFrames(
        count=len(sampler.rows),
        frames_dir=str(scratch / FRAMES_DIR),
        analysis_width=width,
        analysis_height=height,
        decoded=decoded,
        duration_s=max(duration, processed),
        processed_s=processed,
        truncated_at_bound=bounded,
        rows=tuple(sampler.rows),
        glance_shape=sampler.glance_shape,
    )


@task(name="sample", cache_policy=NONE)
def sample_task(ctx: RunContext, source: SourceInfo) -> SampledFrames:
    """Sample the video; writes ``frames.parquet``; returns where the sampled frames are."""
    ctx.report("sample")
    settings = ctx.settings
    reads_text = ctx.detector_mode.reads_text
    cfg = SampleConfig(
        ctx.sample_fps,
        ctx.max_duration_s,
        settings.analysis_width,
        settings.thumbnail_width,
        settings.scene_cut_threshold,
        text_width=settings.ocr_width if reads_text else 0,
        skip_loop_filter=settings.skip_loop_filter,
        looks=LookConfig(settings.ocr_looks_per_minute, settings.ocr_min_gap_s),
    )
    result = sample_video(source, cfg, ctx.layout.scratch_dir, lambda f: ctx.report("sample", f))
    write_rows(ctx.layout.out_dir, "frames", list(result.rows))
    ctx.runs.processed(ctx.run_id, result.processed_s)
    refreshes = sum(1 for r in result.rows if r["refresh_reason"] == "scene_change")
    looks = sum(1 for r in result.rows if r["text_look"])
    get_run_logger().info(
        "decoded %d frames, sampled %d (%.1f s processed), %d scene changes, %d kept for text",
        result.decoded,
        result.count,
        result.processed_s,
        refreshes,
        looks,
    )
    return dataclasses.replace(result, rows=())
