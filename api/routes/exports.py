"""Exports: signed evidence bundles that anyone can verify offline (issue 16, chain of custody).

`POST .../exports` queues one (202; a Prefect flow, `export-evidence`, makes it: its state is
visible here and in the Prefect UI); `GET .../exports/{export_id}` tells where it stands and,
once it succeeded, the bundle's size, sha256 and signing key; `GET .../bundle` downloads the zip.
Check it with `ves verify BUNDLE.zip --public-key KEY.pem` (docs/how-to/exports.md).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from fastapi.responses import StreamingResponse

from api.audit import AuditedRoute, note_ids
from api.deps import SettingsDep, StoreDep, SubmitterDep, TenantDep, ViewsDep
from api.operations.exports import find_export, queue_export, read_export
from api.problems import problem_responses
from api.schemas.exports import ExportCreate, ExportPublic
from ves.errors import NotReady

router = APIRouter(tags=["exports"], route_class=AuditedRoute)

_BASE = "/api/product/videos/{video_id}/exports"
EXPORT_EXAMPLES: dict[str, Any] = {
    "all": {"summary": "Every span of the served run", "value": {}},
    "spans": {
        "summary": "Chosen spans",
        "value": {"evidence_ids": ["ev_01m7zbsdnj1ww6bq0c0c9d3bx2"]},
    },
    "range": {"summary": "Spans within a time range", "value": {"start_s": 12.0, "end_s": 30.0}},
    "redacted": {
        "summary": "Every span, faces and text pixelated",
        "value": {"redact": ["faces", "text"]},
    },
}


@router.post(
    _BASE,
    status_code=202,
    summary="Export evidence as a signed bundle",
    description=(
        "Queues an export of the video's newest succeeded run: the chosen spans (all, by id, or "
        "overlapping a time range) as canonical JSON with their thumbnails, a clip (MP4) cut "
        "from the source around each span whose frames keep their source times, the parts of "
        "the scene graph and timeline the spans belong to, `cost.json`, the run's manifest, "
        "where the source came from, review notes and the video's audit records, listed with "
        "their sha256 in a `manifest.json` signed with the service's Ed25519 key. The source is "
        "fetched again and must be the file the run analysed. With `redact`, faces and/or text are "
        "pixelated in the thumbnails and clips, and the manifest records what and keeps the "
        "originals' hashes. The bundle is kept until the run's artifacts expire, and its bytes "
        "count in the plan's `storage_bytes` until then: 402 `plan_limit_exceeded` when that is "
        "full. 409 before any run succeeded; "
        "503 when the orchestrator cannot take it (nothing is left queued)."
    ),
    responses=problem_responses(400, 401, 402, 404, 409, 415, 422, 503),
)
async def create_export(
    video_id: str,
    request: Request,
    tenant: TenantDep,
    views: ViewsDep,
    submitter: SubmitterDep,
    settings: SettingsDep,
    body: Annotated[ExportCreate | None, Body(openapi_examples=EXPORT_EXAMPLES)] = None,
) -> ExportPublic:
    limits = settings.plan(tenant.plan)
    export = await queue_export(tenant, video_id, body, views, submitter, limits)
    note_ids(request, export_id=export.export_id, run_id=export.run_id)
    return export


@router.get(
    f"{_BASE}/{{export_id}}",
    summary="An export and where it stands",
    description=(
        "`queued`, `running`, `succeeded` (with the bundle's bytes, sha256, signing key id and "
        "download URL) or `failed` (with `error {code, message}`). Another tenant's export, or "
        "one of another video, answers 404 as an unknown id."
    ),
    responses=problem_responses(401, 404),
)
def get_export(video_id: str, export_id: str, tenant: TenantDep, views: ViewsDep) -> ExportPublic:
    return read_export(tenant, video_id, export_id, views)


@router.get(
    f"{_BASE}/{{export_id}}/bundle",
    summary="Download an export's bundle",
    description=(
        "The zip (`application/zip`) of a succeeded export; 409 `not_ready` before. Its sha256 "
        "is the export's `bundle.sha256`; verify it offline with `ves verify`."
    ),
    response_class=StreamingResponse,
    responses={
        200: {"content": {"application/zip": {}}, "description": "The bundle."},
        **problem_responses(401, 404, 409),
    },
)
def download_bundle(
    video_id: str, export_id: str, tenant: TenantDep, views: ViewsDep, store: StoreDep
) -> StreamingResponse:
    export = find_export(tenant, video_id, export_id, views)
    if export.expired_at is not None:
        raise NotReady(
            f"export {export_id}'s bundle expired with its run's artifacts at {export.expired_at};"
            " execute the video again, then export"
        )
    if export.state != "succeeded" or export.bundle_key is None:
        raise NotReady(f"export {export_id} is {export.state}; its bundle is not ready")
    return StreamingResponse(
        store.iter_bytes(export.bundle_key),
        media_type="application/zip",
        headers={
            "Content-Disposition": f'attachment; filename="{export_id}.zip"',
            "Content-Length": str(export.bundle_bytes),
        },
    )
