"""Video records: register (operation 1), upload bytes, list (operation 2) and read one."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from fastapi import APIRouter, Query, Request, status
from starlette.concurrency import run_in_threadpool

from api.deps import SettingsDep, TenantDep, VideosDep
from api.problems import problem_responses
from api.schemas import VideoCreate, VideoPublic, VideosPublic
from storage.records import VIDEO_STATES
from storage.uploads import UploadExpectation, store_upload, upload_path
from storage.usage import ALL, UsageStore, refuse
from storage.videos import NewVideo
from ves.errors import (
    Conflict,
    InvalidRequest,
    PayloadTooLarge,
    SourceRejected,
    UnsupportedMediaType,
    ValidationFailed,
)
from ves.ids import is_id
from ves.netguard import check_url, probe_url
from ves.settings import Settings

router = APIRouter(tags=["videos"])

_UPLOAD_MEDIA = ("video/", "application/octet-stream")


def encode_cursor(video_id: str) -> str:
    """An opaque cursor for "the videos after this one"."""
    return base64.urlsafe_b64encode(video_id.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    """The video id inside a cursor; ``InvalidRequest`` when it is not one of ours."""
    try:
        video_id = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise InvalidRequest("the cursor is not valid; use next_cursor from a listing") from exc
    if not is_id(video_id, "vid"):
        raise InvalidRequest("the cursor is not valid; use next_cursor from a listing")
    return video_id


def check_source(body: VideoCreate, settings: Settings) -> None:
    """Refuse a source the service must not or cannot fetch, before anything is stored."""
    kind = body.resolved_source_type()
    if kind == "upload":
        assert body.upload is not None
        if body.upload.size_bytes > settings.max_upload_bytes:
            raise PayloadTooLarge(
                f"size_bytes {body.upload.size_bytes} exceeds the upload limit of "
                f"{settings.max_upload_bytes} bytes"
            )
        return
    assert body.url is not None
    if not settings.probe_sources:
        check_url(body.url, allow_private=settings.allow_private_sources)
        return
    probe = probe_url(
        body.url, allow_private=settings.allow_private_sources, timeout_s=settings.source_timeout_s
    )
    if kind == "hls" and not probe.first_bytes.lstrip(b"\xef\xbb\xbf \r\n").startswith(b"#EXTM3U"):
        raise SourceRejected("the URL does not serve an HLS playlist (no #EXTM3U header)")


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
    responses=problem_responses(400, 401, 402, 413, 415, 422),
)
def add_video(
    body: VideoCreate, tenant: TenantDep, videos: VideosDep, settings: SettingsDep
) -> VideoPublic:
    limits = settings.plan(tenant.plan)
    held = UsageStore(videos.catalog).value(tenant.tenant_id, ALL, "videos")
    if held >= limits.videos:  # before contacting the source; create checks again, atomically
        raise refuse("videos", limits.videos, held)
    check_source(body, settings)
    upload = body.upload.model_dump(mode="json") if body.upload else None
    video = videos.create(
        NewVideo(tenant.tenant_id, body.title, body.resolved_source_type(), body.url, upload),
        limits,
    )
    return VideoPublic.from_video(video)


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
)
async def upload_content(
    video_id: str, request: Request, tenant: TenantDep, videos: VideosDep, settings: SettingsDep
) -> VideoPublic:
    video = await run_in_threadpool(videos.get, tenant.tenant_id, video_id)
    if video.state != "awaiting_upload" or video.upload is None:
        raise Conflict(f"video {video_id} is {video.state}, not awaiting an upload")
    content_type = request.headers.get("content-type", "application/octet-stream").lower()
    if not content_type.startswith(_UPLOAD_MEDIA):
        raise UnsupportedMediaType("send the bytes as video/* or application/octet-stream")
    dest = upload_path(settings.uploads_dir, tenant.tenant_id, video_id, video.upload["filename"])
    expect = UploadExpectation(
        size=video.upload["size_bytes"],
        sha256=video.upload.get("sha256"),
        limit=settings.max_upload_bytes,
    )
    stored = await store_upload(request.stream(), dest, expect)
    try:
        done = await run_in_threadpool(
            videos.complete_upload,
            tenant.tenant_id,
            video_id,
            path=str(stored.path),
            sha256=stored.sha256,
            size=stored.size,
        )
    except Conflict:
        stored.path.unlink(missing_ok=True)
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
    state: Annotated[str | None, Query(description="Only videos in this state.")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(description="`next_cursor` of the previous page.")] = None,
) -> VideosPublic:
    if state is not None and state not in VIDEO_STATES:
        raise ValidationFailed(
            f"unknown state {state!r}",
            errors=[{"loc": ["query", "state"], "msg": f"one of {', '.join(VIDEO_STATES)}"}],
        )
    after = decode_cursor(cursor) if cursor else None
    page = videos.list(tenant.tenant_id, state=state, limit=limit, after=after)
    next_cursor = encode_cursor(page.next_after) if page.next_after else None
    return VideosPublic(
        data=[VideoPublic.from_video(v) for v in page.videos], next_cursor=next_cursor
    )


@router.get(
    "/api/product/videos/{video_id}",
    summary="Read one video",
    description="The video record, its state and latest run (stage and progress while it runs).",
    responses=problem_responses(401, 404),
)
def get_video(video_id: str, tenant: TenantDep, videos: VideosDep) -> VideoPublic:
    return VideoPublic.from_video(videos.get(tenant.tenant_id, video_id))
