"""Who read or wrote a video, its artifacts and asks: its audit trail (storage.catalog.audit)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from api.audit import AuditedRoute, AuditRecorder
from api.deps import CatalogDep, TenantDep, VideosDep
from api.operations.videos import decode_cursor, encode_cursor
from api.problems import CursorQuery, problem_responses
from api.schemas.audit import RECORD_EXAMPLE, AuditRecordsPublic
from storage.catalog.audit import AuditLog

router = APIRouter(tags=["audit"], route_class=AuditedRoute)

_MAX_SEQ_DIGITS = 18


def _is_seq(value: str) -> bool:
    return value.isascii() and value.isdigit() and len(value) <= _MAX_SEQ_DIGITS


@router.get(
    "/api/product/videos/{video_id}/audit",
    summary="Audit trail of a video",
    description=(
        "Every recorded read and write of the video, its artifacts and asks (REST routes and "
        "MCP tools), newest first: who (`key_id`), what (`action`, `ids`), the answer's status "
        "(`outcome`), when (`at`) and from where (`client`). Each record is a link of the "
        "workspace's hash chain (`hash` = sha256 of `prev_hash` + the record's canonical JSON), "
        "which `ves audit verify` walks. `chain_head` is the chain's newest link: note it, and a "
        "later answer whose chain no longer reaches it shows that records were removed. This "
        "read is itself recorded (after it answers)."
    ),
    responses={
        200: {
            "content": {
                "application/json": {
                    "example": {
                        "data": [RECORD_EXAMPLE],
                        "next_cursor": None,
                        "chain_head": {"seq": 57, "hash": RECORD_EXAMPLE["hash"]},
                    }
                }
            }
        },
        **problem_responses(400, 401, 404, 422),
    },
)
async def video_audit(
    video_id: str,
    request: Request,
    tenant: TenantDep,
    videos: VideosDep,
    catalog: CatalogDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: CursorQuery = None,
) -> AuditRecordsPublic:
    await run_in_threadpool(videos.get, tenant.tenant_id, video_id)  # 404 as for an unknown id
    before = int(decode_cursor(cursor, _is_seq)) if cursor else None
    recorder: AuditRecorder = request.app.state.audit
    await run_in_threadpool(recorder.flush)  # every read answered before this one is in
    read = AuditLog(catalog).for_video
    page = await run_in_threadpool(read, tenant.tenant_id, video_id, before, limit)
    after = encode_cursor(str(page.next_before)) if page.next_before is not None else None
    return AuditRecordsPublic.from_page(page, after)
