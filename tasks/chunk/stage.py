"""Stages 2 and 3 of a long video, chunk by chunk: sample and detect each chunk, then join.

``analyse_chunk`` is one Prefect task per chunk (``tasks.chunk.plan``): it samples the chunk's
stretch of the video into a folder of its own and runs the run's detectors over it, exactly as the
sample and detect stages do for a whole video. The flow submits the chunks to a task runner
(``runner_for``): Prefect's thread pool in the flow's process by default, or the processes of a
Dask cluster through prefect-dask (``VES_TASK_RUNNER=dask``). ``join_chunks``
(``tasks.chunk.join``) then makes one video of them again, and the run goes on with the track
stage as for any video.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefect import task
from prefect.cache_policies import NONE
from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from tasks.chunk.plan import Chunk
from tasks.context import RunContext
from tasks.decode.stage import SourceInfo
from tasks.detect.detectors.registry import configs_for
from tasks.detect.stage import DetectReport, detect_frames
from tasks.detections import Detections
from tasks.sample.frames import ANALYSIS
from tasks.sample.gate import Gate
from tasks.sample.stage import SampledFrames, sample_config, sample_video
from ves.settings import Settings

CHUNKS_DIR = "chunks"


@dataclass(frozen=True)
class ChunkResult:
    """What one chunk found: its samples (with their rows) and every detector's boxes."""

    chunk: Chunk
    sampled: SampledFrames
    found: dict[str, Detections]
    report: DetectReport
    seconds: dict[str, float] = field(default_factory=dict)  # compute of sample and detect


def chunk_dir(scratch: Path, chunk: Chunk) -> Path:
    return scratch / CHUNKS_DIR / f"{chunk.index:04d}"


def discard_leftovers(scratch: Path) -> None:
    """Remove what the join did not take from the chunks' folders, but their analysis frames.

    The joined video reads its analysis frames from the chunks' files (``tasks.chunk.join``):
    the world state measures colours in them. They go with the run's work folder, as a video
    sampled in one pass keeps its own file until then.
    """
    for path in sorted((scratch / CHUNKS_DIR).rglob("*"), reverse=True):  # contents first
        if path.is_dir():
            if not any(path.iterdir()):
                path.rmdir()
        elif path.name != ANALYSIS:
            path.unlink(missing_ok=True)


def analyse(
    ctx: RunContext, source: SourceInfo, chunk: Chunk, gate: Gate | None = None
) -> ChunkResult:
    """Sample and detect one chunk, decoding only ``gate``'s ranges in it when given (the pure
    core of the task)."""
    started = time.perf_counter()
    cfg = sample_config(ctx, gate.within(chunk.decode_from_s, chunk.end_s) if gate else None)
    sampled = sample_video(source, cfg, chunk_dir(ctx.layout.scratch_dir, chunk), span=chunk.span)
    sampled_at = time.perf_counter()
    configs = configs_for(ctx.detector_mode, ctx.settings, ctx.yolo_model)
    found, report = detect_frames(sampled, sampled.rows, configs, ctx.detector_mode)
    seconds = {"sample": sampled_at - started, "detect": time.perf_counter() - sampled_at}
    return ChunkResult(chunk, sampled, found, report, seconds)


@task(name="analyse-chunk", task_run_name="analyse-chunk-{chunk.index}", cache_policy=NONE)
def analyse_chunk(
    ctx: RunContext, source: SourceInfo, chunk: Chunk, gate: Gate | None = None
) -> ChunkResult:
    """Sample and detect one chunk of a long video, into the chunk's own scratch folder."""
    return analyse(ctx, source, chunk, gate)


def workers(settings: Settings) -> int:
    return settings.chunk_workers or os.cpu_count() or 1


def runner_for(settings: Settings) -> TaskRunner[Any]:
    """The task runner the chunks of a run are submitted to."""
    if settings.task_runner == "dask":
        from prefect_dask.task_runners import DaskTaskRunner

        if settings.dask_address:
            return DaskTaskRunner(address=settings.dask_address)
        _keep_malloc_defaults()
        cluster = {
            "n_workers": workers(settings),
            "threads_per_worker": 1,
            "processes": True,
            "dashboard_address": None,
        }
        return DaskTaskRunner(cluster_kwargs=cluster)
    return ThreadPoolTaskRunner(max_workers=workers(settings))


def _keep_malloc_defaults() -> None:
    """Start Dask's worker processes without ``MALLOC_TRIM_THRESHOLD_``.

    Dask sets it (65536) for every worker it spawns. Any value set by hand turns off glibc's
    sliding mmap threshold, so every frame-sized array is mapped and unmapped afresh: motion
    took 13.9 s instead of 7.2 s on the 10 min clip in a Dask worker (benchmarks/chunks.py).
    """
    import dask

    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    dask.config.set({"distributed.nanny.pre-spawn-environ": environ})
