"""Playing a video: a signed URL of its review copy or stored source, served by ranges.

``GET .../media-url`` (Bearer key, audited) answers where a player fetches the video: the HLS
playlist of an HLS source, or a signed URL (``ves.media_url``), valid an hour, of the newest
run's review copy (``.../runs/{run_id}/review``) or else of an uploaded recording's bytes
(``.../source``). Both serve their bytes with HTTP range requests (``api.operations.media``) to
whoever holds the URL: a ``<video>`` element sends no ``Authorization`` header, and an API key
never goes in a URL. Their requests are not audited one by one (a player makes dozens); handing
out the URL is.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import Response

from api.audit import AuditedRoute
from api.deps import RunsDep, SettingsDep, StoreDep, TenantDep, VideosDep
from api.operations.media import (
    media_url_of,
    published_review_copy,
    source_response,
    stored_source,
)
from api.problems import problem_responses
from api.schemas.media import MediaUrlPublic
from ves.media_url import PURPOSE, check_media_token, review_scope
from ves.settings import Settings
from ves.signing import KeyRing

router = APIRouter(tags=["media"], route_class=AuditedRoute)
source_router = APIRouter(tags=["media"])

_SOURCE = "/api/media/videos/{video_id}/source"
_REVIEW = "/api/media/videos/{video_id}/runs/{run_id}/review"
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
_REVIEW_MARK = {
    "X-Review-Copy": {
        "description": "`true; original-sha256=<hex>`: these bytes are a REVIEW COPY made for "
        "playing, not the original recording, whose sha256 it names (the evidence's).",
        "schema": {"type": "string"},
    }
}
_REVIEW_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The whole review copy.",
        "content": {"video/mp4": {}},
        "headers": _BYTES_HEADERS | _REVIEW_MARK,
    },
    206: {
        "description": "The range asked for.",
        "content": {"video/mp4": {}},
        "headers": _BYTES_HEADERS | _REVIEW_MARK,
    },
    **problem_responses(403, 404, 416, 422),
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
_REVIEW_DESCRIPTION = (
    "The REVIEW COPY a run made of the video (H.264 in a faststart MP4, which every browser "
    "plays: the source's packets copied when it is H.264 already, else transcoded to at most "
    "720p with a keyframe every 2 s), for a player: the URL comes from `GET "
    "/api/product/videos/{video_id}/media-url` (`kind` `review`) and carries its own token "
    "(scoped to the tenant, this video, this run's review copy and an expiry). It is not the "
    "evidence: every answer says so in `X-Review-Copy: true; original-sha256=<hex>`, the hash "
    "of the original that evidence spans and exports refer to; `ETag` is the copy's own "
    "sha256. Its time 0 is the analysis's, so a span at 12.4 s is 12.4 s into the copy. Range "
    "requests as for the stored source (206 with `Content-Range`, 416 past the end); 403 for a "
    "token that is forged, of another video or run, or expired; 404 once the video is gone or "
    "retention deleted the run's artifacts. HEAD answers the headers alone. Example: "
    '`curl -r 0-99 -D - "$API$URL"`.'
)


_STORED_URL = (
    "/api/media/videos/vid_01m7zbsdnaq33qybzby9qpkjxt/source"
    "?token=v1.ten_01m7zbsdn8w4yq3xq5k0r2c6vd.1795748400.kq3..."
)
_REVIEW_URL = (
    "/api/media/videos/vid_01m7zbsdnaq33qybzby9qpkjxt/runs/run_01m7zc0q1g2h3j4k5m6n7p8q9r/review"
    "?token=v1.ten_01m7zbsdn8w4yq3xq5k0r2c6vd.1795748400.Zp0..."
)
_ORIGINAL = "9f2c4e0b7d1a35c8e6f4b2a9d0c7e1f3a5b8c2d4e6f8a0b1c3d5e7f9a2b4c6d8"
_MEDIA_URL_EXAMPLES: dict[str, Any] = {
    "review": {
        "summary": "A processed video: its newest run's review copy",
        "value": {
            "kind": "review",
            "url": _REVIEW_URL,
            "expires_at": "2026-11-27T03:00:00.000Z",
            "content_type": "video/mp4",
            "review_copy": True,
            "run_id": "run_01m7zc0q1g2h3j4k5m6n7p8q9r",
            "original_sha256": _ORIGINAL,
        },
    },
    "stored": {
        "summary": "An uploaded recording no run has processed yet",
        "value": {
            "kind": "stored",
            "url": _STORED_URL,
            "expires_at": "2026-11-27T03:00:00.000Z",
            "content_type": "video/mp4",
            "review_copy": False,
            "run_id": None,
            "original_sha256": _ORIGINAL,
        },
    },
    "hls": {
        "summary": "An HLS source",
        "value": {
            "kind": "hls",
            "url": "https://cams.example.com/gate/index.m3u8",
            "expires_at": None,
            "content_type": "application/vnd.apple.mpegurl",
            "review_copy": False,
            "run_id": None,
            "original_sha256": None,
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
        "Where a `<video src>` plays the video without the API key, by signed URLs valid for "
        "an hour (`expires_at`). Once a run has succeeded: its REVIEW COPY (`kind` `review`, "
        "`review_copy` true), H.264 in MP4 that every browser plays, made by the run from an "
        "upload or a URL source alike; it is for watching, the original stays the evidence "
        "(`original_sha256`). Before that, an uploaded recording's own bytes (`kind` "
        "`stored`), which a browser plays only if their format is one it knows. For an HLS "
        "source, its playlist (`kind` `hls`). A URL source no run has processed, or an upload "
        "whose bytes never arrived, has nothing to play: 409 `no_stored_source`."
    ),
    responses={
        200: {"content": {"application/json": {"examples": _MEDIA_URL_EXAMPLES}}},
        **problem_responses(401, 404, 409, 429),
    },
)
def media_url(
    video_id: str,
    tenant: TenantDep,
    videos: VideosDep,
    runs: RunsDep,
    store: StoreDep,
    settings: SettingsDep,
) -> MediaUrlPublic:
    video = videos.get(tenant.tenant_id, video_id)
    return media_url_of(video, store, runs, media_secret(settings), time.time())


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


@source_router.get(
    _REVIEW,
    summary="A run's review copy of the video, by ranges",
    description=_REVIEW_DESCRIPTION,
    response_class=Response,
    responses=_REVIEW_RESPONSES,
)
@source_router.head(
    _REVIEW,
    summary="A run's review copy of the video: headers only",
    description=_REVIEW_DESCRIPTION,
    response_class=Response,
    responses=_REVIEW_RESPONSES,
)
def media_review(
    video_id: str,
    run_id: str,
    request: Request,
    token: Annotated[str, Query(max_length=512, description="From `.../media-url`.")],
    videos: VideosDep,
    runs: RunsDep,
    store: StoreDep,
    settings: SettingsDep,
    range_header: Annotated[str | None, Header(alias="Range", max_length=200)] = None,
) -> Response:
    secret, now = media_secret(settings), time.time()
    grant = check_media_token(secret, token, video_id, now, review_scope(run_id))
    review = published_review_copy(store, runs, videos.get(grant.tenant_id, video_id), run_id)
    head = request.method == "HEAD"
    return source_response(store, review.blob, range_header, head=head, marks=review.headers())
