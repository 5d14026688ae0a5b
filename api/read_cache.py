"""Rendered reads of published runs, kept in the API process, and the HTTP validators around them.

A published run never changes: retention is the only thing that removes its files, and it marks
the run expired in the catalog before it deletes a byte. So a route still asks the catalog on
every request (the caller's video, the run it serves now, not expired) and only then looks here;
what is kept is the costly part, the Parquet read plus the JSON rendering (a 10-minute video's
scene graph takes tens of milliseconds to read and render). Keys carry the tenant, the run id and
its artifacts path, so another tenant or a newer run of the video never meets an old entry.

Each answer carries an ``ETag`` derived from the run id, the artifact and the service version
(no artifact has to be read to answer ``If-None-Match`` with 304) and a ``Cache-Control``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from storage.catalog.records import Run
from ves import __version__

CacheKey = tuple[str, str, str, str]  # tenant id, run id, artifacts path, what


@dataclass(frozen=True)
class Rendered:
    """The body of a response and its media type."""

    body: bytes
    media_type: str

    @classmethod
    def from_document(cls, document: dict[str, Any], model: type[BaseModel] | None) -> Rendered:
        """JSON as the route's ``response_model`` renders it (validated, by alias), or as is."""
        content = (
            model.model_validate(document).model_dump(mode="json", by_alias=True)
            if model
            else document
        )
        return cls(bytes(JSONResponse(content).body), "application/json")


class ReadCache:
    """A least-recently-used map of rendered reads, bounded by the bytes of their bodies.

    Concurrent misses of one key render it once: the first caller renders while the others wait
    on that key's lock (a hundred clients asking for a new run's scene graph at once would
    otherwise read it a hundred times). ``max_bytes`` 0 keeps nothing.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[CacheKey, Rendered] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self._rendering: dict[CacheKey, threading.Lock] = {}
        self.hits = 0  # reads answered from the cache (GET /metrics: ves_read_cache_requests)
        self.misses = 0  # reads rendered (while the cache is on)

    @property
    def size_bytes(self) -> int:
        return self._size

    def get_or_render(self, key: CacheKey, render: Callable[[], Rendered]) -> Rendered:
        """The kept rendering of ``key``, or ``render()``'s, kept when it fits."""
        if self.max_bytes <= 0:
            return render()
        if (hit := self._get(key)) is not None:
            return hit
        with self._lock:
            key_lock = self._rendering.setdefault(key, threading.Lock())
        with key_lock:
            if (hit := self._get(key)) is not None:
                return hit
            with self._lock:
                self.misses += 1
            rendered = render()
            self._put(key, rendered)
        with self._lock:
            self._rendering.pop(key, None)
        return rendered

    def _get(self, key: CacheKey) -> Rendered | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            return hit

    def _put(self, key: CacheKey, rendered: Rendered) -> None:
        if len(rendered.body) > self.max_bytes:
            return
        with self._lock:
            if key not in self._entries:
                self._entries[key] = rendered
                self._size += len(rendered.body)
            while self._size > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._size -= len(dropped.body)


def cache_key(tenant_id: str, run: Run, what: str) -> CacheKey:
    return (tenant_id, run.run_id, run.artifacts_path or "", what)


def etag_of(run: Run, what: str) -> str:
    """A strong validator: a run's artifact never changes, but a new release may render it anew."""
    return f'"{run.run_id}.{what}.{__version__}"'


def matches(if_none_match: str | None, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (weak comparison, RFC 9110 13.1.2)."""
    if not if_none_match:
        return False
    tags = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in tags or etag in tags


def respond_cached(
    request: Request,
    cache: ReadCache,
    key: CacheKey,
    etag: str,
    cache_control: str,
    render: Callable[[], Rendered],
) -> Response:
    """304 when the client holds ``etag``, else the (kept) rendering, both with the validators.

    The rendering is got first even for a 304 (from the cache, normally): only what exists is
    "not modified", so a made-up thumbnail name with a matching ETag still answers 404.
    """
    headers = {"ETag": etag, "Cache-Control": cache_control}
    rendered = cache.get_or_render(key, render)
    if matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(rendered.body, media_type=rendered.media_type, headers=headers)
