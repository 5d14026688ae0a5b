"""Exports: signed evidence bundles that anyone can verify offline (issue 16, chain of custody).

`POST .../exports` queues one (202; a Prefect flow, `export-evidence`, makes it: its state is
visible here and in the Prefect UI); `GET .../exports/{export_id}` tells where it stands and,
once it succeeded, the bundle's size, sha256 and signing key; `GET .../bundle` downloads the zip,
and `GET .../clips/{evidence_id}` the one MP4 clip (from the bundle) that shows a span.
Check a bundle with `ves verify BUNDLE.zip --public-key KEY.pem` (docs/how-to/exports.md).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from fastapi.responses import StreamingResponse

from api.audit import AuditedRoute, note_ids
from api.deps import SettingsDep, StoreDep, SubmitterDep, TenantDep, ViewsDep
from api.operations.exports import (
    find_export,
    open_span_clip,
    queue_export,
    read_export,
    ready_bundle_key,
)
from api.problems import problem_responses
from api.schemas.exports import ExportCreate, ExportPublic

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
        "overlapping a time range) as canonical JSON with their thumbnails; the clips (MP4) "
        "that show them, one per merged window (spans widened by a second each side; those that "
        "overlap or touch share one), the source's own frames copied at their source times "
        "(re-encoded only where `redact` asks); with `start_s`/`end_s`, clips are cut to that "
        "range and the manifest says which spans were cut; the parts of "
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
        "is the export's `bundle.sha256`; verify it offline with `ves verify`. Clips are one "
        "per merged window (format version 2): see `GET .../clips/{evidence_id}` for one span's."
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
    return StreamingResponse(
        store.iter_bytes(ready_bundle_key(export)),
        media_type="application/zip",
        headers={
            "Content-Disposition": f'attachment; filename="{export_id}.zip"',
            "Content-Length": str(export.bundle_bytes),
        },
    )


CLIP_HEADERS = {
    "X-Clip-Start-S": "The span's start in the clip's time (seconds from its first frame).",
    "X-Clip-End-S": "The span's end in the clip's time.",
    "X-Clip-Source-Start-S": "The source time of the clip's first frame: its frame at `t` "
    "shows the source at this + `t`.",
    "X-Clip-Method": "`copied` (the source's own packets) or `re-encoded` (redacted).",
    "X-Clip-Path": "The clip's path in the bundle (its sha256 is in the bundle's manifest).",
}


@router.get(
    f"{_BASE}/{{export_id}}/clips/{{evidence_id}}",
    summary="Download the clip that shows one span",
    description=(
        "The MP4 (`video/mp4`) from a succeeded export's bundle that shows the span: the clip of "
        "the merged window it lies in, so spans that overlap share it, byte for byte the "
        "bundle's file (its sha256 is listed in the bundle's `manifest.json`). Where the span "
        "lies in it comes in headers, e.g. `X-Clip-Start-S: 1.0`, `X-Clip-End-S: 4.2`, "
        "`X-Clip-Source-Start-S: 11.0` (the clip's frame at `t` shows the source at 11.0 + `t`) "
        "and `X-Clip-Method: copied`. 404 for a span that is not the exported run's or that the "
        "bundle does not hold (or another tenant's export); 409 `not_ready` before the export "
        "succeeded or after it expired. "
        "Example: `curl -o span.mp4 -D - $API/api/product/videos/$VID/exports/$EXP/clips/"
        "ev_01m7zbsdnj1ww6bq0c0c9d3bx2 -H 'Authorization: Bearer $KEY'`."
    ),
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"video/mp4": {}},
            "description": "The clip.",
            "headers": {
                name: {"description": text, "schema": {"type": "string"}}
                for name, text in CLIP_HEADERS.items()
            },
        },
        **problem_responses(401, 404, 409),
    },
)
def download_clip(
    video_id: str,
    export_id: str,
    evidence_id: str,
    tenant: TenantDep,
    views: ViewsDep,
    store: StoreDep,
) -> StreamingResponse:
    export = find_export(tenant, video_id, export_id, views)
    clip = open_span_clip(store, export, evidence_id, views)
    span = clip.span
    name = f"{export_id}_{evidence_id}.mp4"
    return StreamingResponse(
        clip.chunks,
        media_type="video/mp4",
        headers={
            "Content-Disposition": f'attachment; filename="{name}"',
            "Content-Length": str(clip.size),
            "X-Clip-Start-S": f"{span.clip_start_s:.3f}",
            "X-Clip-End-S": f"{span.clip_end_s:.3f}",
            "X-Clip-Source-Start-S": f"{span.source_start_s:.3f}",
            "X-Clip-Method": span.method,
            "X-Clip-Path": span.path,
        },
    )
