"""Operations 4, 5, 6 and 8: a video's artifacts, read with DuckDB from its newest succeeded run
(``storage.artifacts.served``, shared with the MCP tools).

Before any run succeeded they answer 409 ``not_ready`` with the video's state. The routes are
plain functions: FastAPI runs them in its threadpool, where catalog and DuckDB reads belong.
Thumbnails need the same Bearer key as everything else and are served only from a run of the
caller's video: streamed from the blob store, or, when the operator turned presigning on
(``VES_S3_PRESIGN``), answered with a 307 to a short-lived presigned URL of the object store so
the bytes do not pass through the API.

Every answer of a published run carries an ``ETag`` and answers ``If-None-Match`` with 304; its
rendering is kept in the process (``api.read_cache``) after the catalog said, on this request,
that the run is still the caller's and still served. The documents say ``no-cache`` (the URL
names the video, whose newest run may change: revalidate, a 304 is cheap); a thumbnail's URL
names its run, so it may be kept an hour.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel

from api.audit import AuditedRoute, note_ids
from api.deps import ReadCacheDep, ReaderDep, RunsDep, StoreDep, TenantDep, VideosDep, ViewsDep
from api.problems import problem_responses
from api.read_cache import ReadCache, Rendered, cache_key, etag_of, respond_cached
from api.schemas.artifacts import CostReport, EvidenceView, SceneGraph, Timeline, Tracks
from storage.artifacts.layout import COST, THUMBS
from storage.artifacts.served import (
    RunViews,
    evidence_of,
    scene_graph_of,
    timeline_of,
    tracks_of,
)
from storage.catalog.records import Run
from ves.errors import BlobNotFound, NotFound, NotReady, ValidationFailed

router = APIRouter(tags=["artifacts"], route_class=AuditedRoute)

_THUMB_NAME = re.compile(r"^ev_[0-9a-z]+_[0-9]{1,3}\.jpg$")
_VALIDATOR_HEADERS: dict[str, Any] = {
    "ETag": {
        "description": "The run, artifact and release this answer renders; send it back in "
        "`If-None-Match` to get a 304 while it is current.",
        "required": True,
        "schema": {"type": "string"},
    },
    "Cache-Control": {
        "description": "How long the answer may be kept.",
        "schema": {"type": "string"},
    },
}
_NOT_MODIFIED: dict[str, Any] = {
    "description": "Not modified: `If-None-Match` named the current `ETag`; no body.",
    "headers": _VALIDATOR_HEADERS,
}
_ARTIFACT_ERRORS: dict[int | str, dict[str, Any]] = {
    200: {"headers": _VALIDATOR_HEADERS},
    304: _NOT_MODIFIED,
    **problem_responses(401, 404, 409),
}
_PRESIGN_EXPIRES_S = 300
_THUMB_HEADERS = {"Cache-Control": "private, max-age=3600"}
_DOCUMENT_CACHING = "private, no-cache"


@router.get(
    "/api/product/videos/{video_id}/scene-graph",
    summary="Scene graph (world state)",
    description="Objects, zones, events and relations of the newest succeeded run, each with the "
    "evidence ids that back it. Text read in the video is an object of class `text`. Each "
    "physical object is one appearance of an identity (`identity_id`, with `appearance` and "
    "`appearances`): a thing that left the picture and came back is two objects of one "
    "identity, so distinct `identity_id`s count different things and objects count appearances.",
    responses=_ARTIFACT_ERRORS,
    response_model=SceneGraph,
    response_model_by_alias=True,
)
def scene_graph(
    video_id: str, request: Request, tenant: TenantDep, views: ViewsDep, cache: ReadCacheDep
) -> Response:
    return _document(request, tenant.tenant_id, video_id, views, cache, "scene-graph")


@router.get(
    "/api/product/videos/{video_id}/timeline",
    summary="Timeline",
    description="Events in time order and the refresh markers (where the world state was "
    "rebuilt: the start, scene changes).",
    responses=_ARTIFACT_ERRORS,
    response_model=Timeline,
)
def timeline(
    video_id: str, request: Request, tenant: TenantDep, views: ViewsDep, cache: ReadCacheDep
) -> Response:
    return _document(request, tenant.tenant_id, video_id, views, cache, "timeline")


@router.get(
    "/api/product/videos/{video_id}/evidence-view",
    summary="Evidence view",
    description="Evidence spans with their frames (thumbnail with the box drawn, its sha256), "
    "review notes and the span's own sha256 (canonical JSON, sorted keys, without `sha256`). "
    "`review_notes` holds the service's notes (`author` `system`) and then people's, oldest "
    "first, each with its `verdict` and the note it `supersedes`; the span's `verdict` is its "
    "newest person's note's (null without one). People's notes are not part of the published "
    "run, so `published_sha256` keeps the hash the run published (proven by its manifest): it "
    "is the sha256 of the span without `sha256`, `published_sha256`, `verdict` and the notes "
    "that carry a `verdict`; `sha256` covers the span as served. A new note changes the ETag.",
    responses=_ARTIFACT_ERRORS,
    response_model=EvidenceView,
)
def evidence_view(
    video_id: str, request: Request, tenant: TenantDep, views: ViewsDep, cache: ReadCacheDep
) -> Response:
    run = views.run_of(tenant.tenant_id, video_id)
    notes = views.notes.for_run(run.run_id)  # append-only: their count names the view's state
    count = sum(len(span) for span in notes.values())
    what = f"evidence-view.notes-{count}" if count else "evidence-view"
    return _respond(
        request,
        cache,
        (tenant.tenant_id, run, what),
        lambda: Rendered.from_document(evidence_of(views.reader, run, notes), EvidenceView),
    )


@router.get(
    "/api/product/videos/{video_id}/cost",
    summary="Cost report (cost.json)",
    description=(
        "The newest succeeded run's `cost.json`: `detector_mode` (what ran, e.g. `motion+ocr`; "
        "after a fallback, what the run fell back to), `fallback {used, reason}`, `detectors` "
        "(per plugin: frames it looked at, boxes, seconds), duration, processed seconds, compute "
        "per stage, frames decoded/sampled/analysed (with the activity gate also held, skipped "
        "and `skipped_spans`; `activity_gate` says whether it ran or why it fell back), "
        "retention and cost."
    ),
    responses={
        200: {
            "content": {
                "application/json": {
                    "example": {
                        "video_id": "vid_01m7zbsdnaq33qybzby9qpkjxt",
                        "run_id": "run_01m7zbsdnepf3bap3vrzhkr8he",
                        "detector_mode": "motion",
                        "fallback": {
                            "used": True,
                            "reason": "yolo: yolo model models/absent.onnx does not exist",
                        },
                        "detectors": {
                            "motion": {"frames": 100, "boxes": 148, "seconds": 0.3},
                        },
                        "duration_s": 20.0,
                        "processed_s": 20.0,
                        "truncated": False,
                        "stages": {"decode": 0.01, "sample": 0.4, "detect": 0.3},
                        "frames": {"decoded": 200, "sampled": 100, "analysed": 100},
                        "retention": {"days": 7, "expires_at": "2026-11-28T10:00:00Z"},
                        "cost": {
                            "units": 0.3333,
                            "unit": "video_minute",
                            "amount": 0.0,
                            "currency": "USD",
                        },
                    }
                }
            },
            "headers": _VALIDATOR_HEADERS,
        },
        304: _NOT_MODIFIED,
        **problem_responses(401, 404, 409),
    },
    response_model=CostReport,
)
def cost(
    video_id: str, request: Request, tenant: TenantDep, views: ViewsDep, cache: ReadCacheDep
) -> Response:
    return _document(request, tenant.tenant_id, video_id, views, cache, "cost")


@router.get(
    "/api/product/videos/{video_id}/tracks",
    summary="Tracked boxes (to draw over the player)",
    description="Every object's tracked boxes of the newest succeeded run (or of the run "
    "`run_id`), read from `tracks.parquet`: per object its `name` (as the scene graph names "
    "it) and its rows as columns `t_s`, `bbox` (normalised [x1, y1, x2, y2]) and `estimated` "
    "(filled in, not seen: drawn dashed by the dashboard). Boxes exist at sampled frames only; "
    "between two rows a player interpolates linearly. `start_s` and `end_s` keep the rows "
    "shown in that window (inclusive). 404 for an unknown video or run (or another tenant's), "
    "409 before a run succeeded (or for a run that did not), 422 for a window that ends "
    "before it starts.",
    responses={
        200: {"headers": _VALIDATOR_HEADERS},
        304: _NOT_MODIFIED,
        **problem_responses(401, 404, 409, 422),
    },
    response_model=Tracks,
    response_model_by_alias=True,
)
def tracks(
    video_id: str,
    request: Request,
    tenant: TenantDep,
    views: ViewsDep,
    cache: ReadCacheDep,
    run_id: str | None = Query(None, description="A succeeded run of the video."),
    start_s: float = Query(0.0, ge=0, description="Keep rows shown from this time (s)."),
    end_s: float | None = Query(None, ge=0, description="Keep rows shown up to this time (s)."),
) -> Response:
    if end_s is not None and end_s < start_s:
        raise ValidationFailed(
            f"end_s {end_s} is before start_s {start_s}",
            errors=[
                {"loc": ["query", "end_s"], "msg": "must not be before start_s", "type": "window"}
            ],
        )
    run = views.run_of(tenant.tenant_id, video_id, run_id)
    what = f"tracks.{start_s!r}-{end_s!r}"
    return _respond(
        request,
        cache,
        (tenant.tenant_id, run, what),
        lambda: Rendered.from_document(tracks_of(views.reader, run, start_s, end_s), Tracks),
    )


# What each document route reads from a run, and the response model that renders it.
_DOCUMENTS: dict[str, tuple[Callable[[RunViews, Run], dict[str, Any]], type[BaseModel] | None]] = {
    "scene-graph": (lambda views, run: scene_graph_of(views.reader, run), SceneGraph),
    "timeline": (lambda views, run: timeline_of(views.reader, run), Timeline),
    "cost": (lambda views, run: views.reader.document(run.artifacts_path or "", COST), None),
}


def _document(
    request: Request, tenant_id: str, video_id: str, views: RunViews, cache: ReadCache, what: str
) -> Response:
    """The document ``what`` of the video's newest readable run (asked of the catalog on every
    request: 404, 409 and expiry answer exactly as without the cache)."""
    run = views.run_of(tenant_id, video_id)
    read, model = _DOCUMENTS[what]
    return _respond(
        request,
        cache,
        (tenant_id, run, what),
        lambda: Rendered.from_document(read(views, run), model),
    )


def _respond(
    request: Request, cache: ReadCache, of: tuple[str, Run, str], render: Callable[[], Rendered]
) -> Response:
    """A document of (tenant id, run, what) with its validators, kept in ``cache``; the run is
    noted for the request's audit record."""
    tenant_id, run, what = of
    note_ids(request, run_id=run.run_id)
    key, etag = cache_key(tenant_id, run, what), etag_of(run, what)
    return respond_cached(request, cache, key, etag, _DOCUMENT_CACHING, render)


@router.get(
    "/api/product/videos/{video_id}/runs/{run_id}/thumbs/{name}",
    summary="Evidence thumbnail",
    description="A JPEG of an evidence frame (as linked from the evidence view), or a 307 to a "
    "short-lived presigned URL of it when the service runs on an object store with presigning on.",
    responses={
        200: {"content": {"image/jpeg": {}}, "headers": _VALIDATOR_HEADERS},
        304: _NOT_MODIFIED,
        307: {
            "description": "Fetch the JPEG from the presigned URL in `Location`.",
            "headers": {
                "Location": {
                    "description": "The presigned URL (valid 5 minutes).",
                    "required": True,
                    "schema": {"type": "string", "format": "uri"},
                }
            },
        },
        **problem_responses(401, 404),
    },
    response_class=Response,
)
def thumbnail(
    video_id: str,
    run_id: str,
    name: str,
    request: Request,
    tenant: TenantDep,
    videos: VideosDep,
    runs: RunsDep,
    reader: ReaderDep,
    store: StoreDep,
    cache: ReadCacheDep,
) -> Response:
    videos.get(tenant.tenant_id, video_id)  # 404 unless the caller owns the video
    try:
        run: Run | None = runs.get(run_id)
    except NotFound:  # answered as any other missing thumbnail: a run id tells nothing
        run = None
    if (
        run is None
        or run.tenant_id != tenant.tenant_id
        or run.video_id != video_id
        or not _THUMB_NAME.match(name)
        or run.artifacts_path is None
        or run.expired_at is not None  # retention expires the row before deleting the files
    ):
        raise NotFound(f"no thumbnail {name}")
    try:
        reader.verify(run.artifacts_path)  # never a frame of half a run
        key = f"{reader.run_key(run.artifacts_path)}/{THUMBS}/{name}"
        if (url := store.presign(key, _PRESIGN_EXPIRES_S)) and store.exists(key):
            return RedirectResponse(url, status_code=307, headers=_THUMB_HEADERS)
        return respond_cached(
            request,
            cache,
            cache_key(tenant.tenant_id, run, f"{THUMBS}/{name}"),
            etag_of(run, name),
            _THUMB_HEADERS["Cache-Control"],
            lambda: Rendered(store.get_bytes(key), "image/jpeg"),
        )
    except (NotReady, BlobNotFound) as exc:
        raise NotFound(f"no thumbnail {name}") from exc
