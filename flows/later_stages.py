"""The later stages every run shares: track -> world state -> timeline -> evidence -> cost.

However a run sampled and detected its video (in one pass, in chunks joined by
``flows.chunks``, or as the windows of a live session joined at each publish by ``flows.live``),
what follows is the same: the tasks below, in this order, over the run's ``frames.parquet`` and
``detections.parquet``, and ``cost.json`` at the end. What differs is only what the run bills
(``Billing``) and how its compute is booked (``Stopwatch``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flows.costing import truncation_of
from tasks.activity.stage import GatePlan, gate_summary, still_reason
from tasks.context import RunContext
from tasks.cost.stage import CostInputs, cost_task
from tasks.decode.stage import SourceInfo
from tasks.detect.stage import DetectReport
from tasks.evidence.stage import evidence_task
from tasks.review.stage import ReviewCopy
from tasks.sample.stage import SampledFrames
from tasks.timeline.stage import timeline_task
from tasks.track.stage import track_task
from tasks.world_state.stage import world_state_task
from ves.telemetry import span

T = TypeVar("T")
NO_REVIEW_COPY = "a live window plays from its HLS playlist"  # the one path without a copy


class Stopwatch:
    """Times each stage call (the ``stages`` block of ``cost.json``).

    Args:
        book_as: book every call under this one name instead of the stage's own (a live
            window books its whole publish, the join and the later stages, as ``join``: what
            grows with the session).
    """

    def __init__(self, book_as: str | None = None, run_id: str | None = None) -> None:
        self.stages: dict[str, float] = {}
        self.book_as = book_as
        self.run_id = run_id

    def run(self, name: str, call: Callable[[], T]) -> T:
        """Call ``call`` in a span of its own, adding the seconds it took to stage ``name``."""
        key = self.book_as or name
        started = time.perf_counter()
        try:
            with span(f"stage {name}", **{"ves.stage": name, "ves.run_id": self.run_id}):
                return call()
        finally:
            self.stages[key] = self.stages.get(key, 0.0) + time.perf_counter() - started


@dataclass(frozen=True)
class Analysis:
    """What sampling and detection hand the later stages (samples and boxes already written)."""

    source: SourceInfo
    sampled: SampledFrames
    detected: DetectReport
    gate: GatePlan = field(default_factory=GatePlan.off)  # the activity gate, if the run had one
    review: ReviewCopy = field(default_factory=lambda: ReviewCopy.none(NO_REVIEW_COPY))


@dataclass(frozen=True)
class Billing:
    """What ``cost.json`` bills the run for, whether it was cut short, and the caps it shows."""

    processed_s: float
    truncated: bool = False
    truncation: dict[str, Any] | None = None
    max_cost: float | None = None
    max_compute_s: float | None = None

    @classmethod
    def of_video(cls, ctx: RunContext, sampled: SampledFrames) -> Billing:
        """A video file's run: what it sampled, and its caps (README "Estimates and caps")."""
        return cls(
            processed_s=sampled.processed_s,
            truncated=sampled.truncated_at_bound,
            truncation=truncation_of(ctx, sampled),
            max_cost=ctx.options.max_cost,
            max_compute_s=ctx.options.max_compute_s,
        )

    @classmethod
    def of_window(cls, seconds: float) -> Billing:
        """A live window's run: its own window's seconds only (every second billed once)."""
        return cls(processed_s=seconds)


def run_later_stages(
    ctx: RunContext, analysis: Analysis, clock: Stopwatch, billing: Billing
) -> dict[str, Any]:
    """Track, build the world state, the timeline and the evidence, timed by ``clock``; then
    write ``cost.json`` with ``clock``'s stages. Returns the ``cost.json`` document."""
    source, sampled, detected = analysis.source, analysis.sampled, analysis.detected
    clock.run("track", lambda: track_task(ctx, detected.physical, sampled.frames_dir))
    spans = clock.run("world_state", lambda: world_state_task(ctx, sampled.analysis_frames()))
    still = still_reason(analysis.gate.summary)
    clock.run("timeline", lambda: timeline_task(ctx, still))
    notes = detected.notes()
    clock.run("evidence", lambda: evidence_task(ctx, spans, source, sampled, notes))
    return cost_task(ctx, cost_inputs(ctx, analysis, clock.stages, billing))


def cost_inputs(
    ctx: RunContext, analysis: Analysis, stages: dict[str, float], billing: Billing
) -> CostInputs:
    """Everything ``cost.json`` reports about the run, from its analysis and billing."""
    detected, sampled = analysis.detected, analysis.sampled
    return CostInputs(
        video_id=ctx.video_id,
        run_id=ctx.run_id,
        detector_mode=str(detected.mode),
        fallback_reason=detected.fallback_reason,
        detectors=detected.detectors,
        duration_s=sampled.duration_s,
        processed_s=billing.processed_s,
        stages=stages,
        frames_decoded=sampled.decoded,
        frames_sampled=sampled.count,
        frames_analysed=sampled.count - sampled.held,  # held frames go through no detector
        frames_held=sampled.held,
        frames_skipped=sampled.skipped,
        activity_gate=gate_summary(analysis.gate, sampled.still_spans),
        retention_days=ctx.plan.retention_days,
        price_per_video_minute=ctx.settings.price_per_video_minute,
        truncated=billing.truncated,
        truncation=billing.truncation,
        max_cost=billing.max_cost,
        max_compute_s=billing.max_compute_s,
        review_copy=analysis.review.as_cost(),
    )
