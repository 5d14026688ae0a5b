"""A video file's run (a URL, an upload, an HLS stream that has ended): its stages, then an
atomic publish.

Decode brings the file next to the worker; a long video is then sampled and detected chunk by
chunk in parallel (``flows.chunks``), any other in one pass; the later stages follow
(``flows.later_stages``). The run's work folder is published to the blob store (one rename on
the local store, manifest last on an object store) and the outcome recorded in the catalog.
Whatever stops it, the run ends ``failed`` with a reason a user can act on and its work folder
and any uploads are removed (``flows.outcome``); a flow killed outright is noticed by the reaper.
"""

from __future__ import annotations

import time
from typing import Any

from prefect import get_run_logger

from flows.chunks import analyse_in_chunks, plan_chunks_task
from flows.costing import record_run_cost, with_budget
from flows.later_stages import Analysis, Billing, Stopwatch, run_later_stages
from flows.outcome import fail_run
from flows.reporting import index_for_search, publish_prefect_artifacts
from flows.webhook_dispatch import hand_over
from storage.artifacts.layout import publish, published_bytes
from tasks.activity.stage import map_activity_task
from tasks.context import RunContext, heartbeat
from tasks.decode.stage import SourceInfo, decode_task
from tasks.detect.stage import detect_task
from tasks.review.stage import review_copy_task
from tasks.sample.stage import sample_task


def process_file(ctx: RunContext) -> str:
    """Process ``ctx``'s run of a video file into its published artifacts; returns where they
    are (``withdrawn`` when the run was failed while it ran)."""
    logger = get_run_logger()
    store = ctx.store
    try:
        with heartbeat(ctx):
            started = time.perf_counter()
            cost, source, chunks = _run_stages(ctx, started)
            ctx.report("publish")
            final = publish(ctx.layout, store)
    except BaseException as exc:
        fail_run(ctx, exc)
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
    index_for_search(ctx, final)
    publish_prefect_artifacts(ctx, store, final, cost)
    logger.info("run %s published to %s", ctx.run_id, final)
    return str(final)


def _run_stages(ctx: RunContext, started: float) -> tuple[dict[str, Any], SourceInfo, int]:
    """The stages in order: ``cost.json``, the source, and how many chunks it was sampled in."""
    clock = Stopwatch(run_id=ctx.run_id)
    source = clock.run("decode", lambda: decode_task(ctx))
    ctx = with_budget(ctx, source, started)  # max_compute_s: sampled in one pass, see there
    plan = clock.run("decode", lambda: map_activity_task(ctx, source))
    if ctx.budget:
        chunks = []
    else:
        chunks = clock.run("decode", lambda: plan_chunks_task(ctx, source, plan.gate))
    if len(chunks) > 1:
        # Compute summed over the chunks (which ran side by side), and the join's.
        analysed = analyse_in_chunks(ctx, source, chunks, plan.gate)
        sampled, detected = analysed.sampled, analysed.report
        clock.stages.update(analysed.seconds)
    else:
        sampled = clock.run("sample", lambda: sample_task(ctx, source, plan.gate))
        detected = clock.run("detect", lambda: detect_task(ctx, sampled))
    # The source is still on this machine (a URL's bytes too): the player's copy of it.
    review = clock.run("review_copy", lambda: review_copy_task(ctx, source))
    analysis = Analysis(source, sampled, detected, plan, review)
    cost = run_later_stages(ctx, analysis, clock, Billing.of_video(ctx, sampled))
    return cost, source, max(len(chunks), 1)
