"""The ``process-video`` flow: the eight stages of one run, then an atomic publish.

The flow orchestrates and nothing else: it loads the run, marks it running, calls the stage tasks
in order (each writes its artifact into the run's work folder), publishes the folder to the blob
store (one rename on the local store, manifest last on an object store) and records the outcome
in the catalog. Whatever stops it, the run ends ``failed`` with a reason a user can act on and its
work folder and any uploads are removed; a flow killed outright is noticed by the reaper.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from prefect import flow, get_run_logger
from prefect.exceptions import TerminationSignal
from pydantic import BaseModel

from flows.chunks import analyse_in_chunks, plan_chunks_task
from flows.costing import record_run_cost, truncation_of, with_budget
from flows.live import follow_live, live_stream
from flows.orchestrator import serve_tenant_last
from flows.reporting import publish_prefect_artifacts
from flows.webhook_dispatch import hand_over
from storage.artifacts.layout import discard_run, publish, published_bytes
from storage.catalog.runs.store import RunFailure
from tasks.context import RunContext, heartbeat, load_context
from tasks.cost.stage import CostInputs, cost_task
from tasks.decode.stage import SourceInfo, decode_task
from tasks.detect.stage import detect_task
from tasks.evidence.stage import evidence_task
from tasks.sample.stage import sample_task
from tasks.timeline.stage import timeline_task
from tasks.track.stage import track_task
from tasks.world_state.stage import world_state_task
from ves.errors import VesError
from ves.settings import Settings

T = TypeVar("T")

_SLOT_POLL_S = 1.0  # how often a run that waits for one of its tenant's slots asks again


class ProcessVideoParams(BaseModel):
    """The flow's one parameter: which run to process (everything else is in the catalog)."""

    run_id: str


class _Stopwatch:
    """Times each stage call (the ``stages`` block of ``cost.json``)."""

    def __init__(self) -> None:
        self.stages: dict[str, float] = {}

    def run(self, name: str, call: Callable[[], T]) -> T:
        started = time.perf_counter()
        try:
            return call()
        finally:
            self.stages[name] = self.stages.get(name, 0.0) + time.perf_counter() - started


def _run_stages(ctx: RunContext, started: float) -> tuple[dict[str, Any], SourceInfo, int]:
    """The stages in order: ``cost.json``, the source, and how many chunks it was sampled in."""
    clock = _Stopwatch()
    source = clock.run("decode", lambda: decode_task(ctx))
    ctx = with_budget(ctx, source, started)  # max_compute_s: sampled in one pass, see there
    chunks = [] if ctx.budget else clock.run("decode", lambda: plan_chunks_task(ctx, source))
    if len(chunks) > 1:
        # Compute summed over the chunks (which ran side by side), and the join's.
        analysed = analyse_in_chunks(ctx, source, chunks)
        sampled, detected = analysed.sampled, analysed.report
        clock.stages.update(analysed.seconds)
    else:
        sampled = clock.run("sample", lambda: sample_task(ctx, source))
        detected = clock.run("detect", lambda: detect_task(ctx, sampled))
    clock.run("track", lambda: track_task(ctx, detected.physical))
    spans = clock.run("world_state", lambda: world_state_task(ctx, sampled.analysis_frames()))
    clock.run("timeline", lambda: timeline_task(ctx))
    notes = detected.notes()
    clock.run("evidence", lambda: evidence_task(ctx, spans, source, sampled, notes))
    inputs = CostInputs(
        video_id=ctx.video_id,
        run_id=ctx.run_id,
        detector_mode=str(detected.mode),
        fallback_reason=detected.fallback_reason,
        detectors=detected.detectors,
        duration_s=sampled.duration_s,
        processed_s=sampled.processed_s,
        stages=clock.stages,
        frames_decoded=sampled.decoded,
        frames_sampled=sampled.count,
        frames_analysed=sampled.count,
        retention_days=ctx.plan.retention_days,
        price_per_video_minute=ctx.settings.price_per_video_minute,
        truncated=sampled.truncated_at_bound,
        truncation=truncation_of(ctx, sampled),
        max_cost=ctx.options.max_cost,
        max_compute_s=ctx.options.max_compute_s,
    )
    return cost_task(ctx, inputs), source, max(len(chunks), 1)


def _take_slot(ctx: RunContext) -> bool:
    """Start the run once fewer than the plan's ``concurrent_runs`` of its tenant are running.

    Prefect's tenant queue nearly always ensures that already; when two workers polled at the
    same instant, the second one's run waits here (queued, beating) for a slot to free.
    Returns False when the run is no longer queued (it failed meanwhile).
    """
    first = True
    while (outcome := ctx.runs.try_start(ctx.run_id, ctx.plan.concurrent_runs)) == "busy":
        if first:
            get_run_logger().info(
                "run %s waits: %d run(s) of its workspace are running (its plan's limit)",
                ctx.run_id,
                ctx.plan.concurrent_runs,
            )
        first = False
        time.sleep(_SLOT_POLL_S)
    return outcome == "started"


def _failure_of(exc: BaseException, flow_run: str) -> RunFailure:
    if isinstance(exc, VesError) and type(exc) is not VesError:
        return RunFailure(exc.code, exc.detail)
    if isinstance(exc, TerminationSignal | KeyboardInterrupt | SystemExit):
        # The process is being shut down under the run (a stop signal, which Prefect's engine
        # turns into one of these): the run did nothing wrong.
        how = f" by signal {exc.signal}" if isinstance(exc, TerminationSignal) else ""
        return RunFailure(
            "processing_stopped",
            f"the processing was stopped{how} (the worker or the service was stopped or"
            " killed); execute the video again",
        )
    return RunFailure(
        "internal",
        f"an internal error stopped the processing (flow run {flow_run}); it has been logged",
    )


@flow(name="process-video", persist_result=False, log_prints=False)
def process_video(params: ProcessVideoParams) -> str:
    """Process one queued run of a video into its published artifacts."""
    logger = get_run_logger()
    ctx = load_context(Settings(), params.run_id)
    if not _take_slot(ctx):
        logger.warning("run %s is no longer queued; nothing to do", ctx.run_id)
        return "skipped"
    serve_tenant_last(ctx.tenant_id)  # the tenant's turn is taken: others go first next time
    ctx.layout.prepare()
    if live_stream(ctx):  # a live HLS stream: window by window (flows/live.py)
        return follow_live(ctx)
    store = ctx.store
    try:
        # Beat well within the reaper's timeout, whatever it is set to (a 10 s beat against an 8 s
        # timeout let a busy stage be reaped while it ran).
        with heartbeat(ctx, every_s=min(10.0, ctx.settings.heartbeat_timeout_s / 4)):
            started = time.perf_counter()
            cost, source, chunks = _run_stages(ctx, started)
            ctx.report("publish")
            final = publish(ctx.layout, store)
    except BaseException as exc:
        ctx.runs.fail(ctx.run_id, _failure_of(exc, _flow_run_id()), ctx.plan.bill_failed_runs)
        discard_run(ctx.layout, store)
        hand_over(ctx.runs.catalog)  # its run.failed webhooks (written with the failure)
        raise
    kept = published_bytes(store, final)
    succeeded = ctx.runs.succeed(ctx.run_id, final, cost["processed_s"], kept, ctx.plan)
    hand_over(ctx.runs.catalog)  # its run.succeeded webhooks, sent by their own flow runs
    if not succeeded:
        # The reaper gave up on this run meanwhile: its artifacts must not outlive the verdict.
        store.delete_prefix(final)
        logger.warning("run %s was failed while it ran; its artifacts were withdrawn", ctx.run_id)
        return "withdrawn"
    record_run_cost(ctx, cost, source, chunks, time.perf_counter() - started)
    publish_prefect_artifacts(ctx, store, final, cost)
    logger.info("run %s published to %s", ctx.run_id, final)
    return str(final)


def _flow_run_id() -> str:
    from prefect.runtime import flow_run

    return str(flow_run.get_id() or "unknown")
