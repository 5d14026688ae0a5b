"""A video's stored source as a player reads it: signed URLs and HTTP range requests (RFC 9110
§14) over the blob store.

Only an uploaded recording's bytes are kept (``uploads/tenant=<t>/video=<v>/...``); a URL source
is fetched again by every run, so it has nothing to play here, and an HLS source is played from
its own playlist. Ranges are read with ``BlobStore.open_random`` (a seek, then reads), so a
player's jump to minute 40 reads from minute 40, on the local store and on S3 alike.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fastapi.responses import Response, StreamingResponse

from api.schemas.media import MediaUrlPublic
from storage.artifacts.blobs import BlobStore
from storage.catalog.records import Video
from ves.clock import to_rfc3339
from ves.errors import NoStoredSource, RangeNotSatisfiable
from ves.media_url import sign_media_token

MEDIA_URL_TTL_S = 3600
"""How long a signed media URL works: long enough to watch a clip through (every seek is a new
request with the same URL), short enough that a leaked one soon stops working."""
HLS_TYPE = "application/vnd.apple.mpegurl"
_CHUNK = 256 * 1024
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


@dataclass(frozen=True)
class StoredSource:
    """A video's bytes in the blob store: ``key``, ``size`` bytes of ``content_type``."""

    key: str
    size: int
    content_type: str
    sha256: str | None


@dataclass(frozen=True)
class ByteRange:
    """Bytes ``start`` to ``end`` (inclusive) of an object of ``size`` bytes."""

    start: int
    end: int
    size: int

    @property
    def length(self) -> int:
        return self.end - self.start + 1


def stored_source(video: Video, store: BlobStore) -> StoredSource:
    """The video's bytes in ``store``; ``NoStoredSource`` when the service keeps none."""
    key = store.key_of(video.source_path) if video.source_path else None
    if video.source_type != "upload":
        raise NoStoredSource(
            f"video {video.video_id} is read from its URL by every run; its bytes are not kept"
        )
    size = store.size(key) if key else None
    if key is None or size is None:
        raise NoStoredSource(f"video {video.video_id} has no uploaded bytes yet")
    declared = (video.upload or {}).get("content_type")
    guessed = mimetypes.guess_type(key)[0]
    return StoredSource(
        key, size, declared or guessed or "application/octet-stream", video.source_sha256
    )


def media_url_of(video: Video, store: BlobStore, secret: bytes, now: float) -> MediaUrlPublic:
    """Where a player fetches ``video``: its HLS playlist, or a signed URL of its stored bytes."""
    if video.source_type == "hls" and video.source_url:
        return MediaUrlPublic(
            kind="hls", url=video.source_url, expires_at=None, content_type=HLS_TYPE
        )
    source = stored_source(video, store)
    expires = int(now) + MEDIA_URL_TTL_S
    token = sign_media_token(secret, video.tenant_id, video.video_id, expires)
    return MediaUrlPublic(
        kind="stored",
        url=f"/api/media/videos/{video.video_id}/source?token={token}",
        expires_at=to_rfc3339(datetime.fromtimestamp(expires, UTC)),
        content_type=source.content_type,
    )


def parse_range(header: str | None, size: int) -> ByteRange | None:
    """The one range ``header`` asks of ``size`` bytes; None for the whole object.

    A header that does not parse, or asks for several ranges, is ignored (the whole object is
    answered, as RFC 9110 allows); one that parses but lies past the end raises.

    Raises:
        RangeNotSatisfiable: no byte of the range lies within the object.
    """
    match = _RANGE.match((header or "").strip())
    if not match or match.groups() == ("", ""):
        return None
    first, last = match.groups()
    if first == "":  # the last ``last`` bytes
        if int(last) == 0 or size == 0:
            raise RangeNotSatisfiable(f"range {header} of {size} bytes", size=size)
        return ByteRange(max(size - int(last), 0), size - 1, size)
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if last and int(last) < start:
        return None  # invalid: ignored
    if start >= size:
        raise RangeNotSatisfiable(f"range {header} starts past the {size} bytes", size=size)
    return ByteRange(start, end, size)


def _chunks(store: BlobStore, key: str, start: int, length: int) -> Iterator[bytes]:
    """``length`` bytes of ``key`` from ``start``, a chunk at a time (run in the threadpool)."""
    handle = store.open_random(key)
    try:
        handle.seek(start)
        while length > 0 and (block := handle.read(min(_CHUNK, length))):
            length -= len(block)
            yield block
    finally:
        handle.close()


def source_response(
    store: BlobStore, source: StoredSource, range_header: str | None, *, head: bool
) -> Response:
    """The 200 or 206 answer with ``source``'s bytes (none for HEAD)."""
    wanted = parse_range(range_header, source.size)
    headers: dict[str, Any] = {
        "Accept-Ranges": "bytes",
        "Cache-Control": "private, max-age=3600",
        "Content-Security-Policy": "sandbox",
        "X-Content-Type-Options": "nosniff",
    }
    if source.sha256:
        headers["ETag"] = f'"{source.sha256}"'
    start, length, status = 0, source.size, 200
    if wanted:
        start, length, status = wanted.start, wanted.length, 206
        headers["Content-Range"] = f"bytes {wanted.start}-{wanted.end}/{source.size}"
    headers["Content-Length"] = str(length)
    if head:
        return Response(status_code=status, headers=headers, media_type=source.content_type)
    return StreamingResponse(
        _chunks(store, source.key, start, length),
        status_code=status,
        headers=headers,
        media_type=source.content_type,
    )
