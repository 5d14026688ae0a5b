"""Registering and listing videos (operations 1 and 2), shared by the routes and the MCP tools."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from api.schemas.videos import HTTP_URL_PATTERN, VideoCreate, VideoPublic, VideosPublic
from storage.catalog.records import VIDEO_STATES, Tenant
from storage.catalog.usage import ALL, UsageStore, refuse
from storage.catalog.videos import NewVideo, VideoStore
from ves.errors import InvalidRequest, PayloadTooLarge, SourceRejected, ValidationFailed
from ves.ids import is_id
from ves.netguard import check_url, probe_url
from ves.settings import Settings


def encode_cursor(after: str) -> str:
    """An opaque cursor for "the items after this one" (a video id, an audit record's seq)."""
    return base64.urlsafe_b64encode(after.encode()).decode().rstrip("=")


def _is_video_id(value: str) -> bool:
    return is_id(value, "vid")


def decode_cursor(cursor: str, valid: Callable[[str], bool] = _is_video_id) -> str:
    """The value inside a cursor; ``InvalidRequest`` when it is not one of ours (``valid``)."""
    try:
        after = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise InvalidRequest("the cursor is not valid; use next_cursor from a listing") from exc
    if not valid(after):
        raise InvalidRequest("the cursor is not valid; use next_cursor from a listing")
    return after


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
        if body.url is not None and not re.match(HTTP_URL_PATTERN, body.url):
            raise SourceRejected("url is not an http(s) URL; an upload may leave it out")
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


def register_video(
    body: VideoCreate, tenant: Tenant, videos: VideoStore, settings: Settings
) -> VideoPublic:
    """Register the tenant's video within its plan, once its source passed the checks."""
    limits = settings.plan(tenant.plan)
    held = UsageStore(videos.catalog).value(tenant.tenant_id, ALL, "videos")
    if held >= limits.videos:  # before contacting the source; create checks again, atomically
        raise refuse("videos", limits.videos, held)
    check_source(body, settings)
    upload = body.upload.model_dump(mode="json") if body.upload else None
    kind = body.resolved_source_type()
    new = NewVideo(tenant.tenant_id, body.title, kind, body.url, upload, body.recorded_time())
    video = videos.create(new, limits)
    return VideoPublic.from_video(video)


def list_page(
    tenant: Tenant, videos: VideoStore, state: str | None, limit: int, cursor: str | None
) -> VideosPublic:
    """One page of the tenant's videos, newest first, optionally in one state."""
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
