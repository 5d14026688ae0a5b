"""Queueing a run and handing it to the orchestrator (operation 3), shared by execute, the demo
workspace and the MCP ``execute_video`` tool."""

from __future__ import annotations

from anyio import to_thread

from api.operations.estimates import check_compute_cap
from flows.orchestrator import Submitter, sweep_deliveries
from storage.catalog.records import Run, Tenant
from storage.catalog.runs.store import RunFailure, RunStore
from storage.catalog.webhooks.store import WebhookStore
from tasks.options import RunOptions
from ves.errors import PlanLimitExceeded, Unavailable
from ves.settings import Settings


async def queue_run(
    tenant: Tenant,
    video_id: str,
    options: RunOptions | None,
    runs: RunStore,
    submitter: Submitter,
    settings: Settings,
) -> Run:
    """Queue a run of the tenant's video within its plan and hand it to the orchestrator.

    Shared by the REST route and the MCP ``execute_video`` tool.
    """
    limits = settings.plan(tenant.plan)
    chosen = (options or RunOptions()).resolved(settings, limits)
    if chosen.max_compute_s is not None:
        check = (runs.catalog, settings, tenant, video_id, chosen)
        await to_thread.run_sync(check_compute_cap, *check)
    params = chosen.stored()
    try:
        run = await to_thread.run_sync(
            runs.create, tenant.tenant_id, video_id, params, limits, settings.max_queued_runs
        )
    except PlanLimitExceeded:
        await sweep_deliveries(WebhookStore(runs.catalog), submitter)  # usage.limit_reached
        raise
    await submit_run(run, runs, submitter, limits.concurrent_runs)
    return run


async def submit_run(run: Run, runs: RunStore, submitter: Submitter, concurrency: int) -> None:
    """Hand a queued run to the orchestrator and remember its flow run id.

    At most ``concurrency`` runs of the tenant execute at once (the plan's ``concurrent_runs``,
    enforced by the tenant's work queue in Prefect); the others wait ``queued`` in line.

    Raises:
        Unavailable: the orchestrator cannot take it; the run is failed first, so the video can
            be executed again (503 for the client).
    """
    try:
        flow_run_id = await submitter.submit(run, concurrency=concurrency)
    except Unavailable:
        failure = RunFailure("orchestrator_unavailable", "the orchestrator could not take the run")
        await to_thread.run_sync(runs.fail, run.run_id, failure)
        raise
    await to_thread.run_sync(runs.set_flow_run, run.run_id, flow_run_id)
