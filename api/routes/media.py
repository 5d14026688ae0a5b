"""Playing a video: a signed URL of its stored source, and that source served by ranges.

``GET .../media-url`` (Bearer key, audited) answers where a player fetches the video: the HLS
playlist of an HLS source, or a signed URL (``ves.media_url``) of an uploaded recording's bytes,
valid an hour. ``GET /api/media/videos/{video_id}/source?token=...`` serves those bytes with
HTTP range requests (``api.operations.media``) to whoever holds the URL: a ``<video>`` element
sends no ``Authorization`` header, and an API key never goes in a URL. Its requests are not
audited one by one (a player makes dozens); handing out the URL is.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import Response

from api.audit import AuditedRoute
from api.deps import SettingsDep, StoreDep, TenantDep, VideosDep
from api.operations.media import media_url_of, source_response, stored_source
from api.problems import problem_responses
from api.schemas.media import MediaUrlPublic
from ves.media_url import PURPOSE, check_media_token
from ves.settings import Settings
from ves.signing import KeyRing

router = APIRouter(tags=["media"], route_class=AuditedRoute)
source_router = APIRouter(tags=["media"])

_SOURCE = "/api/media/videos/{video_id}/source"
_BYTES_HEADERS: dict[str, Any] = {
    name: {"description": text, "schema": {"type": "string"}}
    for name, text in {
        "Accept-Ranges": "`bytes`: ask for any part with `Range: bytes=a-b`.",
        "Content-Range": "On a 206, the part sent: `bytes 0-99/48213004`.",
        "ETag": "The source's sha256, quoted, when it is known.",
    }.items()
}
_SOURCE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The whole source.",
        "content": {"video/mp4": {}},
        "headers": _BYTES_HEADERS,
    },
    206: {
        "description": "The range asked for.",
        "content": {"video/mp4": {}},
        "headers": _BYTES_HEADERS,
    },
    **problem_responses(403, 404, 409, 416, 422),
}
_SOURCE_DESCRIPTION = (
    "The bytes of an uploaded recording, for a player: the URL comes from `GET "
    "/api/product/videos/{video_id}/media-url` and carries its own token (scoped to the tenant, "
    "this video and an expiry), so no `Authorization` header is needed. Range requests as RFC "
    "9110 says: `Range: bytes=0-99`, `bytes=100-` or `bytes=-50` answer 206 with "
    "`Content-Range`; a range past the end answers 416 with `Content-Range: bytes */SIZE`; "
    "several ranges, or a header that does not parse, answer the whole file (200). 403 for a "
    "token that is forged, of another video or expired; 404 once the video is gone. HEAD "
    'answers the headers alone. Example: `curl -r 0-99 "$API$URL"`.'
)


_STORED_URL = (
    "/api/media/videos/vid_01m7zbsdnaq33qybzby9qpkjxt/source"
    "?token=v1.ten_01m7zbsdn8w4yq3xq5k0r2c6vd.1795748400.kq3..."
)
_MEDIA_URL_EXAMPLES: dict[str, Any] = {
    "stored": {
        "summary": "An uploaded recording",
        "value": {
            "kind": "stored",
            "url": _STORED_URL,
            "expires_at": "2026-11-27T03:00:00.000Z",
            "content_type": "video/mp4",
        },
    },
    "hls": {
        "summary": "An HLS source",
        "value": {
            "kind": "hls",
            "url": "https://cams.example.com/gate/index.m3u8",
            "expires_at": None,
            "content_type": "application/vnd.apple.mpegurl",
        },
    },
}


def media_secret(settings: Settings) -> bytes:
    """The HMAC key of media URLs, derived from the service's signing key."""
    return KeyRing.from_settings(settings).active().derive_secret(PURPOSE)


@router.get(
    "/api/product/videos/{video_id}/media-url",
    summary="Where a player fetches the video",
    description=(
        "For an uploaded recording, a signed URL of its bytes (`kind` `stored`, valid for an "
        "hour: `expires_at`) that a `<video src>` can play without the API key; for an HLS "
        "source, its playlist (`kind` `hls`). A URL source's bytes are not kept: 409 "
        "`no_stored_source`, as for an upload whose bytes never arrived."
    ),
    responses={
        200: {"content": {"application/json": {"examples": _MEDIA_URL_EXAMPLES}}},
        **problem_responses(401, 404, 409, 429),
    },
)
def media_url(
    video_id: str, tenant: TenantDep, videos: VideosDep, store: StoreDep, settings: SettingsDep
) -> MediaUrlPublic:
    video = videos.get(tenant.tenant_id, video_id)
    return media_url_of(video, store, media_secret(settings), time.time())


@source_router.get(
    _SOURCE,
    summary="A video's stored source, by ranges",
    description=_SOURCE_DESCRIPTION,
    response_class=Response,
    responses=_SOURCE_RESPONSES,
)
@source_router.head(
    _SOURCE,
    summary="A video's stored source: headers only",
    description=_SOURCE_DESCRIPTION,
    response_class=Response,
    responses=_SOURCE_RESPONSES,
)
def media_source(
    video_id: str,
    request: Request,
    token: Annotated[str, Query(max_length=512, description="From `.../media-url`.")],
    videos: VideosDep,
    store: StoreDep,
    settings: SettingsDep,
    range_header: Annotated[str | None, Header(alias="Range", max_length=200)] = None,
) -> Response:
    grant = check_media_token(media_secret(settings), token, video_id, time.time())
    source = stored_source(videos.get(grant.tenant_id, video_id), store)
    return source_response(store, source, range_header, head=request.method == "HEAD")
