"""Submitting runs to Prefect, and noticing runs that stopped without saying so (the reaper).

The API never processes video: ``submit`` creates a flow run of the ``process-video`` deployment
and returns at once; a worker of the process work pool picks it up.

Fair queues are Prefect's own: every tenant has a work queue ``tenant-<tenant_id>`` in the pool
whose concurrency limit is its plan's ``concurrent_runs``. Prefect's server hands a worker a run
from a queue only while that queue has a free slot, so a tenant's runs beyond its limit wait
``SCHEDULED`` (the catalog says ``queued``) and never stand in front of another tenant's runs:
workers poll every queue of the pool, and a queue at its limit offers them nothing. Among queues
with a free slot Prefect serves the lowest priority number first; a run that starts moves its
tenant's queue to the back (``serve_tenant_last``), so when workers are the bottleneck tenants
take turns (least recently served first) instead of the oldest queue winning every slot.
The queue's limit is a count at poll time, not a lock (two workers polling at one instant may
each get a run for the last slot), so the flow also takes its slot in the catalog
(``RunStore.try_start``) and waits, queued, when the tenant's ``concurrent_runs`` are taken.

The reaper asks two questions on a timer (and at start-up): has a running run stopped beating?
did Prefect see its flow run crash, fail or get cancelled? Either way the run ends ``failed``
with a reason, never stuck. It also closes, the other way round, a flow run that Prefect still
holds open after its run ended (``close_flow_runs``).
Prefect-client errors are translated here, into ``Unavailable``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Protocol

import httpx
from prefect.client.orchestration import PrefectClient, get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterId,
    FlowRunFilterState,
    FlowRunFilterStateType,
    FlowRunFilterTags,
)
from prefect.client.schemas.objects import State, StateType
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound, PrefectException
from prefect.states import Completed, Crashed

from flows.webhook_dispatch import create_delivery_run
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.layout import RunLayout, discard_run
from storage.catalog.exports import Export, ExportStore
from storage.catalog.records import Run
from storage.catalog.runs.store import RunFailure, RunStore
from storage.catalog.webhooks.store import Delivery, WebhookStore
from ves.clock import now_rfc3339, to_rfc3339, utc_now
from ves.errors import Unavailable
from ves.settings import Settings

DEPLOYMENT = "process-video/process-video"
EXPORT_DEPLOYMENT = "export-evidence/export-evidence"
WORK_POOL = "ves-process"
# A run or export queued this recently without a flow run may still be on its way to Prefect:
# the reaper fails only older ones.
SUBMIT_GRACE_S = 120.0
_ENDED_BADLY = {
    StateType.CRASHED: "the processing crashed or was killed (flow run {id}); execute the video "
    "again",
    StateType.FAILED: "the processing failed in the orchestrator (flow run {id}); execute the "
    "video again",
    StateType.CANCELLED: "the run was cancelled in the orchestrator (flow run {id})",
}

_FINAL = (StateType.COMPLETED, StateType.FAILED, StateType.CRASHED, StateType.CANCELLED)

log = logging.getLogger("ves.orchestrator")


def tenant_queue(tenant_id: str) -> str:
    """The work queue of a tenant's runs (its concurrency limit is the plan's)."""
    return f"tenant-{tenant_id}"


class Submitter(Protocol):
    """Hands a queued run to whatever processes it."""

    async def submit(self, run: Run, *, concurrency: int) -> str: ...

    async def submit_export(self, export: Export) -> str: ...

    async def submit_delivery(self, delivery: Delivery, *, swept: bool = False) -> str: ...

    async def ended_badly(self, flow_run_ids: Sequence[str]) -> dict[str, str]: ...

    async def mark_crashed(self, flow_run_id: str, message: str) -> None: ...

    async def still_open(self) -> list[str]: ...

    async def mark_completed(self, flow_run_id: str, message: str) -> None: ...


class PrefectSubmitter:
    """Submits to the ``process-video`` deployment of the configured Prefect server."""

    def __init__(self) -> None:
        self._deployment_id: uuid.UUID | None = None
        self._queue_limits: dict[str, int] = {}  # queue name -> limit known to be set

    async def submit(self, run: Run, *, concurrency: int) -> str:
        """Create the flow run in the tenant's queue (at most ``concurrency`` of its runs at
        once); returns its id. Raises ``Unavailable`` if Prefect is down."""
        queue = tenant_queue(run.tenant_id)
        try:
            async with get_client() as client:
                if self._deployment_id is None:
                    self._deployment_id = (await client.read_deployment_by_name(DEPLOYMENT)).id
                await self._ensure_queue(client, queue, concurrency)
                flow_run = await client.create_flow_run_from_deployment(
                    self._deployment_id,
                    parameters={"params": {"run_id": run.run_id}},
                    name=run.run_id,
                    tags=["ves", f"tenant:{run.tenant_id}", f"video:{run.video_id}"],
                    idempotency_key=run.run_id,
                    work_queue_name=queue,
                )
        except (PrefectException, httpx.HTTPError, RuntimeError) as exc:
            self._deployment_id = None
            self._queue_limits.clear()
            raise Unavailable(f"the orchestrator cannot take the run now ({exc})") from exc
        return str(flow_run.id)

    async def submit_export(self, export: Export) -> str:
        """Create the flow run of an export (the pool's default queue); returns its id.
        Raises ``Unavailable`` if Prefect is down."""
        try:
            async with get_client() as client:
                deployment = await client.read_deployment_by_name(EXPORT_DEPLOYMENT)
                flow_run = await client.create_flow_run_from_deployment(
                    deployment.id,
                    parameters={"params": {"export_id": export.export_id}},
                    name=export.export_id,
                    tags=["ves", f"tenant:{export.tenant_id}", f"video:{export.video_id}"],
                    idempotency_key=export.export_id,
                )
        except (PrefectException, httpx.HTTPError, RuntimeError) as exc:
            raise Unavailable(f"the orchestrator cannot take the export now ({exc})") from exc
        return str(flow_run.id)

    async def submit_delivery(self, delivery: Delivery, *, swept: bool = False) -> str:
        """Create the flow run of the delivery's next attempt, scheduled for its time; returns
        its id (``swept``: its earlier flow run was lost). Raises ``Unavailable``."""
        return await create_delivery_run(delivery, swept)

    async def _ensure_queue(self, client: PrefectClient, name: str, limit: int) -> None:
        """Create the tenant's work queue, or set its limit when the plan changed."""
        if self._queue_limits.get(name) == limit:
            return
        try:
            queue = await client.read_work_queue_by_name(name, work_pool_name=WORK_POOL)
        except ObjectNotFound:
            try:
                await client.create_work_queue(
                    name, concurrency_limit=limit, work_pool_name=WORK_POOL
                )
            except ObjectAlreadyExists:  # another API process created it just now
                await self._ensure_queue(client, name, limit)
                return
        else:
            if queue.concurrency_limit != limit:
                await client.update_work_queue(queue.id, concurrency_limit=limit)
        self._queue_limits[name] = limit

    async def ended_badly(self, flow_run_ids: Sequence[str]) -> dict[str, str]:
        """Flow run id -> failure message, for flow runs that crashed, failed or were cancelled."""
        if not flow_run_ids:
            return {}
        ids = [uuid.UUID(i) for i in flow_run_ids]
        try:
            async with get_client() as client:
                flow_runs = await client.read_flow_runs(
                    flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=ids))
                )
        except (PrefectException, httpx.HTTPError, RuntimeError) as exc:
            log.warning("reaper could not ask the orchestrator: %s", exc)
            return {}
        return {
            str(fr.id): _ENDED_BADLY[fr.state.type].format(id=fr.id)
            for fr in flow_runs
            if fr.state is not None and fr.state.type in _ENDED_BADLY
        }

    async def mark_crashed(self, flow_run_id: str, message: str) -> None:
        """Tell Prefect a flow run is dead, so its UI does not show it RUNNING forever."""
        await self._force(flow_run_id, Crashed(message=message))

    async def mark_completed(self, flow_run_id: str, message: str) -> None:
        """Tell Prefect a flow run's work is done (its process stopped before it could say so)."""
        await self._force(flow_run_id, Completed(message=message))

    async def _force(self, flow_run_id: str, state: State) -> None:
        try:
            async with get_client() as client:
                await client.set_flow_run_state(uuid.UUID(flow_run_id), state, force=True)
        except (PrefectException, httpx.HTTPError, RuntimeError, ValueError) as exc:
            log.warning("could not mark flow run %s %s: %s", flow_run_id, state.type.value, exc)

    async def still_open(self) -> list[str]:
        """Ids of the service's flow runs that Prefect holds in a state that is not final."""
        open_states = FlowRunFilterStateType(not_any_=list(_FINAL))
        wanted = FlowRunFilter(
            tags=FlowRunFilterTags(all_=["ves"]), state=FlowRunFilterState(type=open_states)
        )
        try:
            async with get_client() as client:
                flow_runs = await client.read_flow_runs(flow_run_filter=wanted, limit=200)
        except (PrefectException, httpx.HTTPError, RuntimeError) as exc:
            log.warning("reaper could not ask the orchestrator: %s", exc)
            return []
        return [str(fr.id) for fr in flow_runs]


def serve_tenant_last(tenant_id: str) -> None:
    """Give the tenant's queue the back place in the pool's priorities (a run of it started).

    Best effort: a run never fails over its queue's place; a run started outside a tenant queue
    (tests run flows in-process) has none to move.
    """
    try:
        with get_client(sync_client=True) as client:
            queue = client.read_work_queue_by_name(
                tenant_queue(tenant_id), work_pool_name=WORK_POOL
            )
            # One past the highest: Prefect then moves nobody else (a priority some other queue
            # holds makes Prefect 3.8 renumber the others, and it can leave two queues tied).
            queues = client.read_work_queues(work_pool_name=WORK_POOL)
            highest = max(q.priority for q in queues)
            if queue.priority != highest or sum(q.priority == highest for q in queues) > 1:
                client.update_work_queue(queue.id, priority=highest + 1)
    except (PrefectException, httpx.HTTPError, RuntimeError) as exc:
        log.info("tenant queue of %s keeps its place: %s", tenant_id, exc)


async def reap(settings: Settings, runs: RunStore, submitter: Submitter) -> list[str]:
    """Fail every run that stopped without finishing; returns their ids."""
    failed = runs.fail_silent(settings.heartbeat_timeout_s)
    for run_id in failed:
        run = runs.get(run_id)
        if run.flow_run_id:
            await submitter.mark_crashed(run.flow_run_id, run.error_message or "stopped")
    active = runs.active()
    bad = await submitter.ended_badly([r.flow_run_id for r in active if r.flow_run_id])
    for run in active:
        if run.flow_run_id in bad and runs.fail(
            run.run_id, RunFailure("processing_stopped", bad[run.flow_run_id])
        ):
            failed.append(run.run_id)
    failed += _fail_unsubmitted(runs, active)
    for run_id in failed:
        _discard_work(settings, runs.get(run_id))
    if failed:
        log.warning("reaper failed %d stopped run(s): %s", len(failed), ", ".join(failed))
    await close_flow_runs(settings, runs, submitter)
    await reap_exports(ExportStore(runs.catalog), submitter, settings.heartbeat_timeout_s)
    await sweep_deliveries(WebhookStore(runs.catalog), submitter)
    return failed


async def sweep_deliveries(store: WebhookStore, submitter: Submitter) -> list[str]:
    """Hand the orchestrator every due webhook delivery that no live flow run holds: never
    handed over (Prefect was down, the writer was killed after its commit), or whose flow run
    crashed, failed or was cancelled. Returns the delivery ids handed over."""
    due = store.due(now_rfc3339())
    held = [d.flow_run_id for d in due if d.flow_run_id]
    bad = await submitter.ended_badly(held) if held else {}
    handed = []
    for delivery in due:
        if delivery.flow_run_id is not None and delivery.flow_run_id not in bad:
            continue
        try:
            flow_run_id = await submitter.submit_delivery(
                delivery, swept=delivery.flow_run_id is not None
            )
        except Unavailable as exc:
            log.warning("delivery %s waits for the orchestrator: %s", delivery.delivery_id, exc)
            break
        store.set_flow_run(delivery.delivery_id, flow_run_id)
        handed.append(delivery.delivery_id)
    return handed


async def reap_exports(
    exports: ExportStore, submitter: Submitter, heartbeat_timeout_s: float
) -> list[str]:
    """Fail the exports that stopped beating, those whose flow run crashed, failed or was
    cancelled, and those never handed to the orchestrator; returns their ids."""
    failed = exports.fail_silent(heartbeat_timeout_s)
    active = exports.active()
    asked = [e.flow_run_id for e in active if e.flow_run_id]
    bad = await submitter.ended_badly(asked) if asked else {}
    cutoff = to_rfc3339(utc_now() - timedelta(seconds=SUBMIT_GRACE_S))
    for export in active:
        if export.flow_run_id in bad:
            message = bad[export.flow_run_id].replace("execute the video again", "export again")
        elif export.flow_run_id is None and export.created_at < cutoff:
            message = "the export never reached the orchestrator; export again"
        else:
            continue
        if exports.fail(export.export_id, "processing_stopped", message):
            failed.append(export.export_id)
    if failed:
        log.warning("reaper failed %d stopped export(s): %s", len(failed), ", ".join(failed))
    return failed


async def close_flow_runs(settings: Settings, runs: RunStore, submitter: Submitter) -> list[str]:
    """Give a final state to the flow runs of runs that ended a heartbeat timeout ago while
    Prefect still holds them open; returns their ids.

    A flow run whose process was stopped after its run ended (the Prefect server was down when
    it tried to report, then the service stopped it) would otherwise show RUNNING in the UI
    forever: it is marked COMPLETED when its run succeeded, else CRASHED with the run's reason.
    """
    open_ids = await submitter.still_open()
    cutoff = to_rfc3339(utc_now() - timedelta(seconds=settings.heartbeat_timeout_s))
    closed = []
    for run in runs.ended_with_flow_runs(open_ids, finished_before=cutoff):
        assert run.flow_run_id is not None
        if run.state == "succeeded":
            await submitter.mark_completed(run.flow_run_id, f"run {run.run_id} was published")
        else:
            await submitter.mark_crashed(run.flow_run_id, run.error_message or "stopped")
        closed.append(run.flow_run_id)
    if closed:
        log.warning("reaper closed %d flow run(s) of ended runs: %s", len(closed), closed)
    return closed


def _fail_unsubmitted(runs: RunStore, active: list[Run]) -> list[str]:
    cutoff = to_rfc3339(utc_now() - timedelta(seconds=SUBMIT_GRACE_S))
    failure = RunFailure(
        "not_submitted", "the run never reached the orchestrator; execute the video again"
    )
    return [
        r.run_id
        for r in active
        if r.state == "queued"
        and r.flow_run_id is None
        and r.created_at < cutoff
        and runs.fail(r.run_id, failure)
    ]


def _discard_work(settings: Settings, run: Run) -> None:
    """The stopped run's work folder (when it ran here) and whatever it uploaded."""
    layout = RunLayout(settings.work_root, run.tenant_id, run.video_id, run.run_id)
    discard_run(layout, open_blob_store(settings))
