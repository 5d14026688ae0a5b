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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import av
import numpy as np
import numpy.typing as npt
from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from storage.artifacts.layout import write_rows
from tasks.context import RunContext
from tasks.decode.stage import (
    MAX_FRAME_RATE,
    SourceInfo,
    frame_budget,
    open_video,
    stream_start_s,
)
from tasks.sample.frames import (
    ANALYSIS,
    FRAMES_DIR,
    FrameFile,
    FramePart,
    Frames,
    JoinedFrames,
    frame_name,
    read_glances,
    still_stretches,
)
from tasks.sample.gate import Gate, gated_frames, range_of_frame
from tasks.sample.sampler import SampleConfig, Sampler, Span
from tasks.sample.text_looks import LookConfig
from ves.errors import LimitExceeded, SourceInvalid, SourceTruncated

WHOLE_VIDEO = Span()  # the default pass: every frame of the video
_SKIP_NONREF_RATIO = 3
_SEEK_SLACK_S = 0.5  # a seek that lands later than this after its keyframe missed it


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
    last_t: float = 0.0  # time of the last frame decoded
    budget_stop_s: float | None = None  # where the compute budget stopped sampling
    held: int = 0  # sampled times inside still stretches: the last decoded frame stands for them
    skipped: int = 0  # frames the activity gate did not decode (still stretches)
    still_spans: tuple[tuple[float, float], ...] = ()  # where frames were held (set on record)
    analysis_parts: tuple[FramePart, ...] = ()  # joined from chunks: where its analysis frames are

    def thumbnail_path(self, sample_index: int) -> Path:
        """The JPEG of a sampled frame (thumbnail size)."""
        return Path(self.frames_dir) / frame_name(sample_index)

    @property
    def analysis_size(self) -> tuple[int, int]:
        return self.analysis_width, self.analysis_height

    def analysis_frame(self, sample_index: int) -> npt.NDArray[np.uint8]:
        """A sampled frame as ``(H, W, 3)`` RGB at the analysis size."""
        return self.analysis_frames()[sample_index]

    def analysis_frames(self) -> Frames:
        """Every sampled frame at the analysis size, ``(H, W, 3)`` each, read one at a time
        (a video joined from chunks reads them from the chunks' files)."""
        if self.analysis_parts:
            return JoinedFrames(self.analysis_parts)
        shape = (self.analysis_height, self.analysis_width, 3)
        return FrameFile(Path(self.frames_dir) / ANALYSIS, self.count, shape)

    def glances(self) -> FrameFile:
        """Every sampled frame's glance, ``(h, w)`` grey each, read one at a time."""
        return read_glances(Path(self.frames_dir), self.count, self.glance_shape)


class _SeekMissed(Exception):
    """Seeking landed after the span's start (a container without a usable index)."""


def _frame_time(frame: av.VideoFrame, start: float, decoded: int, fps: float) -> float:
    return (frame.time - start) if frame.time is not None else decoded / fps


def sample_video(
    source: SourceInfo,
    cfg: SampleConfig,
    scratch: Path,
    on_progress: Callable[[float], None] = lambda _: None,
    span: Span = WHOLE_VIDEO,
) -> SampledFrames:
    """Decode ``span`` of ``source`` once and keep the sampled frames (the pure core of the stage).

    A span that does not start at 0 is reached by seeking to its keyframe; where the container's
    index takes the seek past it, the span is decoded from the start of the file instead.
    """
    frames_dir = scratch / FRAMES_DIR
    frames_dir.mkdir(parents=True, exist_ok=True)
    try:
        return _sample(source, cfg, frames_dir, on_progress, span, seek=True)
    except _SeekMissed:
        return _sample(source, cfg, frames_dir, on_progress, span, seek=False)


def _sample(
    source: SourceInfo,
    cfg: SampleConfig,
    frames_dir: Path,
    on_progress: Callable[[float], None],
    span: Span,
    seek: bool,
) -> SampledFrames:
    with open_video(Path(source.path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        if cfg.sample_fps * _SKIP_NONREF_RATIO <= source.fps:
            # Frames no other frame refers to (most B-frames) are needed only if sampled; at
            # a third of the frame rate or less, the reference frames are dense enough to sample
            # from, and skipping the rest saves about a third of the decoding. Skipping every
            # B-frame (``BIDIR``) would halve the decoding, but sampling from the sparser I- and
            # P-frames cost object precision 0.83 -> 0.76 on 40 random scenes
            # (docs/measured/performance.md).
            stream.codec_context.skip_frame = "NONREF"
        if cfg.skip_loop_filter:
            # H.264/HEVC's deblocking smooths block edges for the eye; motion at 240 px and text
            # at 1280 px read the frame the same without it (40 random scenes,
            # docs/measured/performance.md).
            stream.codec_context.options = {"skip_loop_filter": "all"}
        if seek and span.decode_from_s > 0:
            _seek(container, stream, span.decode_from_s)
        sampler = Sampler(cfg, source, frames_dir, span)
        try:
            decoded, last_t, truncated = _decode(container, stream, source, sampler, on_progress)
        finally:
            sampler.close()
    if span.whole:  # frames the gate judged still and did not decode are frames of the video
        check_complete(source, decoded + sampler.gated.skipped, last_t, truncated)
    return _result(source, sampler, frames_dir.parent, decoded, last_t, truncated)


def _seek(container: av.container.InputContainer, stream: av.VideoStream, t: float) -> None:
    """Move to the keyframe at or before ``t`` seconds (a keyframe's own time lands on it)."""
    base = stream.time_base
    if not base:
        raise _SeekMissed
    offset = int((t + stream_start_s(stream) + 1e-4) / base)
    container.seek(offset, backward=True, any_frame=False, stream=stream)


def _decode(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    source: SourceInfo,
    sampler: Sampler,
    on_progress: Callable[[float], None],
) -> tuple[int, float, bool]:
    """Decode the span, handing the sampled frames to ``sampler``: (decoded, last t, bounded).

    ``bounded`` is true when the run's duration bound (not the span's end) stopped decoding.
    """
    cfg, span = sampler.cfg, sampler.span
    stop = min(cfg.max_duration_s, span.end_s)
    horizon = min(stop, source.duration_s or math.inf) - span.decode_from_s
    budget = frame_budget(cfg.max_duration_s)  # frames with equal or tiny steps of time
    decoded, last_t = 0, 0.0
    for n, (frame, t) in enumerate(_frames(container, stream, source, sampler)):
        if n == 0 and t > span.decode_from_s + _SEEK_SLACK_S:
            raise _SeekMissed
        if t < span.decode_from_s - 1e-6:
            continue  # before the span (decoding from the start of the file)
        if t >= stop - 1e-6:  # the bound is exclusive: [0, max)
            sampler.hold_until(stop)
            return decoded, last_t, t >= cfg.max_duration_s - 1e-6
        if sampler.wants(t) and sampler.out_of_budget(t):
            return decoded, last_t, True
        decoded, last_t = decoded + 1, max(last_t, t)
        if decoded > budget:
            raise LimitExceeded(
                f"the video holds more than {budget} frames in its first "
                f"{cfg.max_duration_s:g} s (over {MAX_FRAME_RATE} fps); decoding stopped there"
            )
        if sampler.wants(t):
            sampler.keep(frame, t)
            if len(sampler.rows) % 25 == 0 and math.isfinite(horizon) and horizon > 0:
                on_progress(min(1.0, (t - span.decode_from_s) / horizon))
    if cfg.gate is None:
        return decoded, last_t, False
    return decoded, *_hold_to_end(sampler, cfg.gate, stop, last_t, source.fps)


def _hold_to_end(
    sampler: Sampler, gate: Gate, stop: float, last_t: float, fps: float
) -> tuple[float, bool]:
    """Hold a still stretch to the end of the span or of the stream's packets: (the last
    frame's time, whether the run's duration bound cut the stream)."""
    end = min(stop, gate.end_s)
    sampler.hold_until(end)
    if sampler.held and math.isfinite(end):  # its frames exist up to there, judged still
        last_t = max(last_t, end - 1.0 / fps)
    return last_t, stop >= sampler.cfg.max_duration_s and gate.end_s > stop + 1e-6


def _frames(
    container: av.container.InputContainer,
    stream: av.VideoStream,
    source: SourceInfo,
    sampler: Sampler,
) -> Iterator[tuple[av.VideoFrame, float]]:
    """The decoded frames and their times; with the activity gate, only its ranges', each
    range's first frame preceded by the held frames of the still stretch before it."""
    start = stream_start_s(stream)
    gate = sampler.cfg.gate
    if gate is None:
        for n, frame in enumerate(container.decode(stream)):
            yield frame, _frame_time(frame, start, n, source.fps)
        return
    current: int | None = None
    stop = min(sampler.cfg.max_duration_s, sampler.span.end_s)
    frames = gated_frames(container, stream, gate, start, sampler.gated, stop)
    for n, (frame, fed) in enumerate(frames):
        t = _frame_time(frame, start, n, source.fps)
        index = range_of_frame(gate, t, fed)
        if index is None:
            continue  # shows a time before its range's keyframe: an open GOP's leading frame
        if index != current:
            current = index
            sampler.hold_until(gate.ranges[index].from_s)
        yield frame, t


def check_complete(source: SourceInfo, decoded: int, last_t: float, bounded: bool) -> None:
    """Refuse a source that is no video or was cut short; ``decoded``: the frames decoded,
    or judged still by the activity gate and skipped."""
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
    source: SourceInfo, sampler: Sampler, scratch: Path, decoded: int, last_t: float, bounded: bool
) -> SampledFrames:
    processed = last_t + 1.0 / source.fps
    if bounded:  # a frame's length past the bound is not processed (nor billed)
        processed = min(processed, sampler.cfg.max_duration_s)
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
        last_t=last_t,
        budget_stop_s=sampler.budget_stop_s,
        held=sampler.held,
        skipped=sampler.gated.skipped,
    )


@task(name="sample", cache_policy=NONE)
def sample_task(ctx: RunContext, source: SourceInfo, gate: Gate | None = None) -> SampledFrames:
    """Sample the video (only ``gate``'s ranges decoded, when given); writes ``frames.parquet``;
    returns where the sampled frames are."""
    ctx.report("sample")
    cfg = sample_config(ctx, gate)
    result = sample_video(source, cfg, ctx.layout.scratch_dir, lambda f: ctx.report("sample", f))
    return record_samples(ctx, result)


def sample_config(ctx: RunContext, gate: Gate | None = None) -> SampleConfig:
    """The run's sampling settings (``gate``: the activity gate, if the run has one)."""
    settings = ctx.settings
    return SampleConfig(
        ctx.sample_fps,
        ctx.max_duration_s,
        settings.analysis_width,
        settings.thumbnail_width,
        settings.scene_cut_threshold,
        text_width=settings.ocr_width if ctx.detector_mode.reads_text else 0,
        person_width=settings.person_width if ctx.detector_mode.names_people else 0,
        skip_loop_filter=settings.skip_loop_filter,
        looks=LookConfig(settings.ocr_looks_per_minute, settings.ocr_min_gap_s),
        budget=ctx.budget,
        gate=gate,
    )


def record_samples(ctx: RunContext, result: SampledFrames) -> SampledFrames:
    """Write ``frames.parquet``, record the processed length; ``result`` without its rows."""
    write_rows(ctx.layout.out_dir, "frames", list(result.rows))
    ctx.runs.processed(ctx.run_id, result.processed_s)
    refreshes = sum(1 for r in result.rows if r["refresh_reason"] == "scene_change")
    looks = sum(1 for r in result.rows if r["text_look"])
    get_run_logger().info(
        "decoded %d frames, sampled %d (%.1f s processed), %d scene changes, %d kept for text"
        "; %d frames in still stretches not decoded, %d sampled times held",
        result.decoded,
        result.count,
        result.processed_s,
        refreshes,
        looks,
        result.skipped,
        result.held,
    )
    still = tuple(still_stretches(list(result.rows)))
    return dataclasses.replace(result, rows=(), still_spans=still)
