"""Video records: register (operation 1), upload bytes, list (operation 2) and read one."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, status
from starlette.concurrency import run_in_threadpool

from api.audit import AuditedRoute, note_ids
from api.deps import SettingsDep, StoreDep, TenantDep, VideosDep
from api.operations.videos import list_page, register_video
from api.problems import CursorQuery, problem_responses
from api.schemas.videos import VideoCreate, VideoPublic, VideosPublic
from storage.artifacts.uploads import UploadExpectation, store_upload, upload_key
from storage.catalog.records import VIDEO_STATES
from ves.errors import (
    Conflict,
    UnsupportedMediaType,
)

router = APIRouter(tags=["videos"], route_class=AuditedRoute)

_BY_VIDEO_ID = {"video_id": "$response.body#/video_id"}
# OpenAPI links from a registered video to what can be done with it next (add -> upload or
# execute -> read): clients and the stateful fuzzer (stress/fuzz/run.py) follow them.
ADD_LINKS = {
    "GetVideo": {
        "operationId": "get_video_api_product_videos__video_id__get",
        "parameters": _BY_VIDEO_ID,
        "description": "The video's state and latest run.",
    },
    "UploadContent": {
        "operationId": "upload_content_api_videos__video_id__content_put",
        "parameters": _BY_VIDEO_ID,
        "description": "The bytes of a registered upload (`state: awaiting_upload`).",
    },
    "ExecuteVideo": {
        "operationId": "execute_video_api_product_videos__video_id__execute_post",
        "parameters": _BY_VIDEO_ID,
        "description": "Queue a run of the video.",
    },
}
_UPLOAD_BODY = {
    "required": True,
    "description": "The recording's bytes, exactly `size_bytes` of them.",
    "content": {
        media: {"schema": {"type": "string", "format": "binary"}}
        for media in ("video/mp4", "application/octet-stream")
    },
}

_UPLOAD_MEDIA = ("video/", "application/octet-stream")


@router.post(
    "/api/videos/add",
    status_code=status.HTTP_201_CREATED,
    summary="Register a video",
    description=(
        "Register a video from an `http(s)` URL, an HLS playlist (`.m3u8`), or a recording to "
        "upload (`source_type: upload` with `upload` metadata; then PUT the bytes to "
        "`upload_url`). "
        "URLs are checked before anything is stored: the host must resolve to a public address "
        "(unless the operator allows private ones) and answer."
    ),
    responses={
        201: {"description": "The registered video.", "links": ADD_LINKS},
        **problem_responses(400, 401, 402, 413, 415, 422),
    },
)
def add_video(
    body: VideoCreate,
    request: Request,
    tenant: TenantDep,
    videos: VideosDep,
    settings: SettingsDep,
) -> VideoPublic:
    video = register_video(body, tenant, videos, settings)
    note_ids(request, video_id=video.video_id)
    return video


@router.put(
    "/api/videos/{video_id}/content",
    summary="Upload a registered recording's bytes",
    description=(
        "Stream the recording's bytes (`Content-Type: video/*` or `application/octet-stream`). "
        "They must match the declared `size_bytes` (and `sha256`, when declared), else 422 and "
        "the upload may be retried. On success the video is `registered` and carries "
        "`source_sha256`."
    ),
    responses=problem_responses(401, 404, 409, 413, 415, 422),
    openapi_extra={"requestBody": _UPLOAD_BODY},
)
async def upload_content(
    video_id: str,
    request: Request,
    tenant: TenantDep,
    videos: VideosDep,
    settings: SettingsDep,
    store: StoreDep,
) -> VideoPublic:
    video = await run_in_threadpool(videos.get, tenant.tenant_id, video_id)
    if video.state != "awaiting_upload" or video.upload is None:
        raise Conflict(f"video {video_id} is {video.state}, not awaiting an upload")
    content_type = request.headers.get("content-type", "application/octet-stream").lower()
    if not content_type.startswith(_UPLOAD_MEDIA):
        raise UnsupportedMediaType("send the bytes as video/* or application/octet-stream")
    key = upload_key(tenant.tenant_id, video_id, video.upload["filename"])
    expect = UploadExpectation(
        size=video.upload["size_bytes"],
        sha256=video.upload.get("sha256"),
        limit=settings.max_upload_bytes,
    )
    stored = await store_upload(request.stream(), store, key, expect, settings.uploads_dir)
    try:
        done = await run_in_threadpool(
            videos.complete_upload,
            tenant.tenant_id,
            video_id,
            path=stored.key,
            sha256=stored.sha256,
            size=stored.size,
        )
    except Conflict:
        await run_in_threadpool(store.delete, stored.key)
        raise
    return VideoPublic.from_video(done)


@router.get(
    "/api/product/videos",
    summary="List the workspace's videos",
    description="Newest first, with each video's state and latest run. Filter with `?state=`.",
    responses=problem_responses(400, 401, 422),
)
def list_videos(
    tenant: TenantDep,
    videos: VideosDep,
    state: Annotated[
        str | None,
        Query(
            description="Only videos in this state.",
            json_schema_extra={"enum": list(VIDEO_STATES)},
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: CursorQuery = None,
) -> VideosPublic:
    return list_page(tenant, videos, state, limit, cursor)


@router.get(
    "/api/product/videos/{video_id}",
    summary="Read one video",
    description="The video record, its state and latest run (stage and progress while it runs).",
    responses=problem_responses(401, 404),
)
def get_video(video_id: str, tenant: TenantDep, videos: VideosDep) -> VideoPublic:
    return VideoPublic.from_video(videos.get(tenant.tenant_id, video_id))
