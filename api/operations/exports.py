"""Asking for an export and reading it, shared by the routes and the MCP ``export_evidence``
tool so both check the same things.

An export names the video's newest succeeded run at the time it is asked for (409 before any
run succeeded, as the artifacts routes answer); the selection's evidence ids must be spans of
that run (checked by the flow, which fails the export naming the unknown ids). Exports are not
counted as executions (their cost is a few clips' encoding), but a bundle's bytes count in the
plan's `storage_bytes` until it expires with its run, and none is made once that is full.
"""

from __future__ import annotations

from anyio import to_thread

from api.schemas.exports import ExportCreate, ExportPublic
from flows.orchestrator import Submitter
from storage.artifacts.served import RunViews
from storage.catalog.exports import Export, ExportStore
from storage.catalog.records import Tenant
from ves.errors import Unavailable
from ves.plans import PlanLimits


async def queue_export(
    tenant: Tenant,
    video_id: str,
    body: ExportCreate | None,
    views: RunViews,
    submitter: Submitter,
    limits: PlanLimits,
) -> ExportPublic:
    """Record a queued export of the video's served run and hand it to the orchestrator.

    Raises:
        PlanLimitExceeded: the tenant's kept bytes (artifacts and bundles) are at its plan's
            ``storage_bytes`` already (a bundle is kept until its run expires).
    """
    run = await to_thread.run_sync(views.run_of, tenant.tenant_id, video_id)
    exports = ExportStore(views.runs.catalog)
    params = (body or ExportCreate()).model_dump(mode="json", exclude_none=True)
    export = await to_thread.run_sync(
        lambda: exports.create(
            tenant.tenant_id, video_id, run.run_id, tenant.key_id, params, limits.storage_bytes
        )
    )
    try:
        flow_run_id = await submitter.submit_export(export)
    except Unavailable:
        message = "the orchestrator could not take the export; export again"
        await to_thread.run_sync(
            exports.fail, export.export_id, "orchestrator_unavailable", message
        )
        raise
    await to_thread.run_sync(exports.set_flow_run, export.export_id, flow_run_id)
    return ExportPublic.of(exports.get(export.export_id))


def read_export(tenant: Tenant, video_id: str, export_id: str, views: RunViews) -> ExportPublic:
    """The tenant's export of that video (another's, or another video's, is not found)."""
    return ExportPublic.of(find_export(tenant, video_id, export_id, views))


def find_export(tenant: Tenant, video_id: str, export_id: str, views: RunViews) -> Export:
    """The record of the tenant's export of that video (404 otherwise, as ``read_export``)."""
    views.videos.get(tenant.tenant_id, video_id)  # 404 for a video that is not the tenant's
    return ExportStore(views.runs.catalog).of_video(tenant.tenant_id, video_id, export_id)
