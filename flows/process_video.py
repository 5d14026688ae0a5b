"""The ``process-video`` flow: one run, dispatched to the path its source takes.

The flow orchestrates and nothing else: it loads the run, waits for one of its tenant's slots,
marks it running and hands it to its path: a live HLS stream window by window
(``flows.live``), any other source as one video file (``flows.video_file``), which is sampled
and detected whole or in chunks (``flows.chunks``). Every path ends in the same later stages
(``flows.later_stages``) and records its outcome the same way (``flows.outcome``).
"""

from __future__ import annotations

import time

from prefect import flow, get_run_logger
from prefect.runtime import flow_run
from pydantic import BaseModel

from flows.live import follow_live, live_stream
from flows.orchestrator import serve_tenant_last
from flows.video_file import process_file
from tasks.context import RunContext, load_context
from ves.settings import Settings
from ves.telemetry import configure_tracing, span

_SLOT_POLL_S = 1.0  # how often a run that waits for one of its tenant's slots asks again


class ProcessVideoParams(BaseModel):
    """The flow's one parameter: which run to process (everything else is in the catalog)."""

    run_id: str


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


@flow(name="process-video", persist_result=False, log_prints=False)
def process_video(params: ProcessVideoParams) -> str:
    """Process one queued run of a video into its published artifacts."""
    configure_tracing()
    attributes = {"ves.run_id": params.run_id, "prefect.flow_run.id": _flow_run_id()}
    with span("run", **attributes) as current:
        ctx = load_context(Settings(), params.run_id)
        current.set_attribute("ves.tenant_id", ctx.tenant_id)
        current.set_attribute("ves.video_id", ctx.video_id)
        return _process(ctx)


def _flow_run_id() -> str | None:
    run_id = flow_run.get_id()
    return str(run_id) if run_id else None


def _process(ctx: RunContext) -> str:
    if not _take_slot(ctx):
        get_run_logger().warning("run %s is no longer queued; nothing to do", ctx.run_id)
        return "skipped"
    serve_tenant_last(ctx.tenant_id)  # the tenant's turn is taken: others go first next time
    ctx.layout.prepare()
    if live_stream(ctx):  # a live HLS stream: window by window
        return follow_live(ctx)
    return process_file(ctx)
