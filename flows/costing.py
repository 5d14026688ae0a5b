"""The flow's part of estimates and caps: a capped run's compute budget, why a run was truncated,
and the run's measured figures kept for the cost model (docs/how-to/estimates.md)."""

from __future__ import annotations

import dataclasses
from typing import Any

from prefect import get_run_logger

from storage.catalog.database import Catalog
from storage.catalog.runs.costs import CostSample, RunCostStore
from tasks.context import ComputeBudget, RunContext
from tasks.cost.model import CostModel, Workload, fit_model
from tasks.decode.stage import SourceInfo
from tasks.sample.stage import SampledFrames
from ves.clock import from_rfc3339


def cost_model_of(ctx: RunContext, detector_mode: str) -> CostModel:
    """The cost model of a detector mode, fitted on the installation's newest runs."""
    settings = ctx.settings
    store = RunCostStore(Catalog.from_settings(settings, migrate=False))
    samples = store.newest(settings.cost_model_runs)
    return fit_model(samples, detector_mode, settings.cost_model_min_runs)


def with_budget(ctx: RunContext, source: SourceInfo, started_at: float) -> RunContext:
    """``ctx`` with the compute budget of its ``max_compute_s`` (unchanged without one).

    A capped run is sampled in one pass, never in chunks: its stop is then a clean prefix of the
    video (chunks side by side would stop each at its own point, leaving holes), and one pass
    spends less compute than chunks do (their lead-ins are decoded twice).
    """
    cap = ctx.options.max_compute_s
    if cap is None:
        return ctx
    model = cost_model_of(ctx, str(ctx.detector_mode))
    duration = min(source.duration_s or ctx.max_duration_s, ctx.max_duration_s)
    rate = source.size_bytes / source.duration_s if source.duration_s else 0.0
    work = Workload(
        duration,
        source.fps,
        source.width,
        source.height,
        ctx.sample_fps,
        str(ctx.detector_mode),
        bytes_per_s=rate,
    )
    fixed, per_frame = model.downstream(work)
    get_run_logger().info(
        "compute cap %.1f s: the stages after sampling are expected to take %.2f s + %.4f s a"
        " frame (%s model)",
        cap,
        fixed,
        per_frame,
        model.source,
    )
    return dataclasses.replace(ctx, budget=ComputeBudget(cap, started_at, fixed, per_frame))


def truncation_of(ctx: RunContext, sampled: SampledFrames) -> dict[str, Any] | None:
    """Why the run processed less than the video (``cost.json``'s ``truncation``), or None."""
    at_s = round(sampled.processed_s, 3)
    if sampled.budget_stop_s is not None:
        return {"reason": "max_compute_s", "at_s": at_s, "cap": ctx.options.max_compute_s}
    if not sampled.truncated_at_bound:
        return None
    cost_bound = ctx.cost_bound_s
    if cost_bound is not None and cost_bound <= ctx.max_duration_s + 1e-9:
        return {"reason": "max_cost", "at_s": at_s, "cap": ctx.options.max_cost}
    return {"reason": "max_duration_s", "at_s": at_s, "cap": ctx.max_duration_s}


def record_run_cost(
    ctx: RunContext, cost: dict[str, Any], source: SourceInfo, chunks: int, wall_s: float
) -> None:
    """Keep the succeeded run's measured figures for the cost model (never fails the run)."""
    try:
        run = ctx.runs.get(ctx.run_id)
        start_s = 0.0
        if run.started_at:
            queued = from_rfc3339(run.started_at) - from_rfc3339(run.created_at)
            start_s = max(queued.total_seconds(), 0.0)
        sample = CostSample(
            detector_mode=cost["detector_mode"],
            sample_fps=ctx.sample_fps,
            source_fps=source.fps,
            width=source.width,
            height=source.height,
            duration_s=cost["duration_s"],
            processed_s=cost["processed_s"],
            frames_decoded=cost["frames"]["decoded"],
            frames_analysed=cost["frames"]["analysed"],
            frames_skipped=cost["frames"].get("skipped", 0),
            stages=dict(cost["stages"]),
            wall_s=wall_s,
            start_s=start_s,
            chunks=chunks,
            source_bytes=source.size_bytes,
            run_id=ctx.run_id,
            tenant_id=ctx.tenant_id,
            video_id=ctx.video_id,
        )
        RunCostStore(Catalog.from_settings(ctx.settings, migrate=False)).record(sample)
    except Exception:  # a lost sample must never fail a published run
        get_run_logger().exception("run %s: its cost sample was not recorded", ctx.run_id)
