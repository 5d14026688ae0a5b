"""A video as a player reads it: signed URLs and HTTP range requests (RFC 9110 §14) over the
blob store.

What plays, first found first: an HLS source's own playlist; the REVIEW COPY of the newest
succeeded run (``review.mp4`` among its artifacts, ``tasks/review``: H.264 in MP4, which every
browser plays, made for a URL source too, whose bytes the run fetched); an uploaded recording's
stored bytes (``uploads/tenant=<t>/video=<v>/...``), as uploaded. A URL source without a run's
review copy has nothing to play. The original stays the evidence: a review copy is marked as
such in the answer and on its bytes (``X-Review-Copy``, with the original's sha256). Ranges
are read with ``BlobStore.open_random`` (a seek, then reads), so a player's jump to minute 40
reads from minute 40, on the local store and on S3 alike.
"""

from __future__ import annotations

import json
import mimetypes
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fastapi.responses import Response, StreamingResponse

from api.schemas.media import MediaUrlPublic
from storage.artifacts.blobs import BlobStore
from storage.artifacts.layout import COST, REVIEW_COPY, read_manifest
from storage.catalog.records import Run, Video
from storage.catalog.runs.store import RunStore
from ves.clock import to_rfc3339
from ves.errors import BlobNotFound, NoStoredSource, NotFound, NotReady, RangeNotSatisfiable
from ves.media_url import review_scope, sign_media_token

MEDIA_URL_TTL_S = 3600
"""How long a signed media URL works: long enough to watch a clip through (every seek is a new
request with the same URL), short enough that a leaked one soon stops working."""
HLS_TYPE = "application/vnd.apple.mpegurl"
REVIEW_TYPE = "video/mp4"
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


@dataclass(frozen=True)
class ReviewCopyBlob:
    """A run's review copy in the blob store (its own sha256 in ``blob``), and the sha256 of the
    original it was made from."""

    run_id: str
    blob: StoredSource
    original_sha256: str | None

    def headers(self) -> dict[str, str]:
        """The header that marks its bytes as a review copy, wherever they go."""
        original = f"; original-sha256={self.original_sha256}" if self.original_sha256 else ""
        return {"X-Review-Copy": f"true{original}"}


def review_copy_of(store: BlobStore, run: Run) -> ReviewCopyBlob | None:
    """The review copy ``run`` published, if it is wholly there; None otherwise (no copy
    made, a run published before review copies, or its artifacts gone)."""
    if run.state != "succeeded" or not run.artifacts_path:
        return None
    try:
        manifest = read_manifest(store, run.artifacts_path)
        key = f"{run.artifacts_path}/{REVIEW_COPY}"
        entry = next((f for f in manifest["files"] if f["name"] == REVIEW_COPY), None)
        if entry is None or store.size(key) != int(entry["bytes"]):
            return None
        made = json.loads(store.get_bytes(f"{run.artifacts_path}/{COST}")).get("review_copy")
    except (NotReady, BlobNotFound):
        return None
    blob = StoredSource(key, int(entry["bytes"]), REVIEW_TYPE, entry["sha256"])
    return ReviewCopyBlob(run.run_id, blob, (made or {}).get("source_sha256"))


def published_review_copy(
    store: BlobStore, runs: RunStore, video: Video, run_id: str
) -> ReviewCopyBlob:
    """The review copy of ``video``'s run ``run_id``, as a review URL names it.

    Raises:
        NotFound: no such run of the video, or its review copy is gone (retention) or was
            never made.
    """
    gone = NotFound(f"run {run_id} of video {video.video_id} has no review copy (any more)")
    try:  # an unknown run and another tenant's or video's answer alike: nothing told apart
        run = runs.get(run_id)
    except NotFound:
        raise gone from None
    mine = run.video_id == video.video_id and run.tenant_id == video.tenant_id
    made = review_copy_of(store, run) if mine else None
    if made is None:
        raise gone
    return made


def stored_source(video: Video, store: BlobStore) -> StoredSource:
    """The video's bytes in ``store``; ``NoStoredSource`` when the service keeps none."""
    key = store.key_of(video.source_path) if video.source_path else None
    if video.source_type != "upload":
        raise NoStoredSource(
            f"video {video.video_id} is read from its URL by every run; its bytes are not kept,"
            " and no run has made its review copy yet (execute it)"
        )
    size = store.size(key) if key else None
    if key is None or size is None:
        raise NoStoredSource(f"video {video.video_id} has no uploaded bytes yet")
    declared = (video.upload or {}).get("content_type")
    guessed = mimetypes.guess_type(key)[0]
    return StoredSource(
        key, size, declared or guessed or "application/octet-stream", video.source_sha256
    )


def media_url_of(
    video: Video, store: BlobStore, runs: RunStore, secret: bytes, now: float
) -> MediaUrlPublic:
    """Where a player fetches ``video``: its HLS playlist, a signed URL of its newest run's
    review copy, or one of its stored bytes (the module's docstring says why in this order)."""
    if video.source_type == "hls" and video.source_url:
        return MediaUrlPublic(
            kind="hls", url=video.source_url, expires_at=None, content_type=HLS_TYPE
        )
    expires = int(now) + MEDIA_URL_TTL_S
    expires_at = to_rfc3339(datetime.fromtimestamp(expires, UTC))
    run = runs.latest_succeeded(video.tenant_id, video.video_id)
    review = review_copy_of(store, run) if run is not None else None
    if review is not None:
        scope = review_scope(review.run_id)
        token = sign_media_token(secret, video.tenant_id, video.video_id, expires, scope)
        return MediaUrlPublic(
            kind="review",
            url=f"{review_path(video.video_id, review.run_id)}?token={token}",
            expires_at=expires_at,
            content_type=REVIEW_TYPE,
            review_copy=True,
            run_id=review.run_id,
            original_sha256=review.original_sha256,
        )
    source = stored_source(video, store)
    token = sign_media_token(secret, video.tenant_id, video.video_id, expires)
    return MediaUrlPublic(
        kind="stored",
        url=f"/api/media/videos/{video.video_id}/source?token={token}",
        expires_at=expires_at,
        content_type=source.content_type,
        original_sha256=source.sha256,
    )


def review_path(video_id: str, run_id: str) -> str:
    """The path of a run's review copy (its URL adds the token)."""
    return f"/api/media/videos/{video_id}/runs/{run_id}/review"


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
    store: BlobStore,
    source: StoredSource,
    range_header: str | None,
    *,
    head: bool,
    marks: dict[str, str] | None = None,
) -> Response:
    """The 200 or 206 answer with ``source``'s bytes (none for HEAD), with ``marks`` among its
    headers (``ReviewCopyBlob.headers``)."""
    wanted = parse_range(range_header, source.size)
    headers: dict[str, Any] = {
        **(marks or {}),
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
