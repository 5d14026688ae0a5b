"""Asking for an export and reading it, shared by the routes and the MCP ``export_evidence``
tool so both check the same things.

An export names the video's newest succeeded run at the time it is asked for (409 before any
run succeeded, as the artifacts routes answer); the selection's evidence ids must be spans of
that run (checked by the flow, which fails the export naming the unknown ids). Exports are not
counted as executions (their cost is a few clips' encoding), but a bundle's bytes count in the
plan's `storage_bytes` until it expires with its run, and none is made once that is full.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from anyio import to_thread

from api.schemas.exports import ExportCreate, ExportPublic
from flows.orchestrator import Submitter
from storage.artifacts.blobs import BlobStore
from storage.artifacts.served import RunViews
from storage.catalog.exports import Export, ExportStore
from storage.catalog.records import Tenant
from verify.clips import SpanInClip, span_clip
from verify.layout import MANIFEST
from ves.errors import NotFound, NotReady, Unavailable
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


def ready_bundle_key(export: Export) -> str:
    """The blob key of a succeeded export's bundle.

    Raises:
        NotReady: the export has not succeeded (yet), or its bundle expired with its run.
    """
    if export.expired_at is not None:
        raise NotReady(
            f"export {export.export_id}'s bundle expired with its run's artifacts at"
            f" {export.expired_at}; execute the video again, then export"
        )
    if export.state != "succeeded" or export.bundle_key is None:
        raise NotReady(f"export {export.export_id} is {export.state}; its bundle is not ready")
    return export.bundle_key


@dataclass(frozen=True)
class ClipDownload:
    """One span's clip read from a bundle in the blob store: where the span lies in it, its
    size, and its bytes (streamed; the bundle is closed when they are all read)."""

    span: SpanInClip
    size: int
    chunks: Iterator[bytes]


def open_span_clip(
    store: BlobStore, export: Export, evidence_id: str, views: RunViews
) -> ClipDownload:
    """The clip that shows ``evidence_id`` in the export's bundle, read from the zip in place.

    A span that is not one of the exported run's is unknown (404) before the export is ready
    (409): the answer for another tenant's span id is the answer for an id nobody has.

    Raises:
        NotFound: the exported run, or the bundle, holds no such span.
        NotReady: as ``ready_bundle_key``.
    """
    if export.expired_at is None:
        run = views.runs.get(export.run_id)
        spans = views.reader.span_times(run.artifacts_path or "")
        if not any(span["evidence_id"] == evidence_id for span in spans):
            raise NotFound(f"no evidence span {evidence_id} in export {export.export_id}")
    file = store.open_random(ready_bundle_key(export))
    try:
        archive = zipfile.ZipFile(file)
        found = span_clip(json.loads(archive.read(MANIFEST)), evidence_id)
        if found is None:
            raise NotFound(f"no evidence span {evidence_id} in export {export.export_id}")
        size = archive.getinfo(found.path).file_size
        member = archive.open(found.path)
    except BaseException:
        file.close()
        raise
    return ClipDownload(found, size, _chunks(member, file))


def _chunks(member: Any, file: Any, size: int = 1024 * 1024) -> Iterator[bytes]:
    try:
        while block := member.read(size):
            yield block
    finally:
        member.close()
        file.close()
