"""A long video's sample and detect stages, chunk by chunk, in parallel (``tasks.chunk``).

The flow asks ``plan_chunks_task`` where to split; a video of one chunk goes through the sample
and detect stages as it always did. Otherwise every chunk is one ``analyse-chunk`` task,
submitted to the run's chunk task runner (Prefect's thread pool, or a Dask cluster through
prefect-dask), and ``join-chunks`` makes one video of the results, writing ``frames.parquet`` and
``detections.parquet`` as the two stages do. Each chunk task shows in the Prefect UI under the
flow run, with its own state and logs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from tasks.chunk.join import join_chunks
from tasks.chunk.plan import Chunk, plan_chunks
from tasks.chunk.stage import ChunkResult, analyse_chunk, discard_leftovers, runner_for
from tasks.context import RunContext
from tasks.decode.stage import SourceInfo
from tasks.detect.detectors.ocr import OcrConfig
from tasks.detect.stage import DetectReport, record_detections
from tasks.sample.frames import FRAMES_DIR
from tasks.sample.gate import Gate
from tasks.sample.stage import SampledFrames, record_samples


@dataclass(frozen=True)
class Analysed:
    """The joined outcome of the chunks, and the compute each stage took over all of them."""

    sampled: SampledFrames
    report: DetectReport
    seconds: dict[str, float]


@task(name="plan-chunks", cache_policy=NONE)
def plan_chunks_task(ctx: RunContext, source: SourceInfo, gate: Gate | None = None) -> list[Chunk]:
    """Where the video is split (one chunk: not at all); at still keyframes where it can."""
    settings = ctx.settings
    chunks = plan_chunks(source, ctx.max_duration_s, settings.chunk_s, settings.chunk_lead_s, gate)
    if len(chunks) > 1:
        get_run_logger().info(
            "%d chunks, starting at %s s",
            len(chunks),
            ", ".join(f"{c.start_s:.1f}" for c in chunks),
        )
    return chunks


@task(name="join-chunks", cache_policy=NONE)
def join_chunks_task(
    ctx: RunContext, source: SourceInfo, results: list[ChunkResult]
) -> tuple[SampledFrames, DetectReport]:
    """Join the chunks; writes ``frames.parquet`` and ``detections.parquet``.

    The chunks' analysis frames stay until the run ends: the joined video reads them there.
    """
    scratch = ctx.layout.scratch_dir
    joined = join_chunks(results, source, scratch / FRAMES_DIR, OcrConfig().max_gap_s)
    discard_leftovers(scratch)  # what the join did not take; not the frames colours need
    sampled = record_samples(ctx, joined.sampled)
    return sampled, record_detections(ctx, joined.found, joined.report)


def analyse_in_chunks(
    ctx: RunContext, source: SourceInfo, chunks: list[Chunk], gate: Gate | None = None
) -> Analysed:
    """Sample and detect every chunk on the chunk task runner (each decoding only ``gate``'s
    ranges, when given), then join them."""
    ctx.report("sample")
    results: list[ChunkResult] = []
    with runner_for(ctx.settings) as runner:
        futures = [
            runner.submit(
                analyse_chunk, {"ctx": ctx, "source": source, "chunk": chunk, "gate": gate}
            )
            for chunk in chunks
        ]
        for done, future in enumerate(futures, 1):
            results.append(future.result())
            ctx.report("sample", done / len(futures))
    ctx.report("detect", 1.0)
    started = time.perf_counter()
    sampled, report = join_chunks_task(ctx, source, results)
    seconds = {stage: sum(r.seconds[stage] for r in results) for stage in ("sample", "detect")}
    seconds["join"] = time.perf_counter() - started
    return Analysed(sampled, report, seconds)
