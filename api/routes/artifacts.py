"""Operations 4, 5, 6 and 8: a video's artifacts, read with DuckDB from its newest succeeded run
(``storage.views``, shared with the MCP tools).

Before any run succeeded they answer 409 ``not_ready`` with the video's state. The routes are
plain functions: FastAPI runs them in its threadpool, where catalog and DuckDB reads belong.
Thumbnails need the same Bearer key as everything else and are served only from a run of the
caller's video: streamed from the blob store, or, when the operator turned presigning on
(``VES_S3_PRESIGN``), answered with a 307 to a short-lived presigned URL of the object store so
the bytes do not pass through the API.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, RedirectResponse, Response, StreamingResponse

from api.deps import ReaderDep, RunsDep, StoreDep, TenantDep, VideosDep, ViewsDep
from api.problems import problem_responses
from api.schemas.artifacts import EvidenceView, SceneGraph, Timeline
from storage.artifacts import THUMBS
from ves.errors import BlobNotFound, NotFound, NotReady

router = APIRouter(tags=["artifacts"])

_THUMB_NAME = re.compile(r"^ev_[0-9a-z]+_[0-9]{1,3}\.jpg$")
_ARTIFACT_ERRORS = problem_responses(401, 404, 409)
_PRESIGN_EXPIRES_S = 300
_THUMB_HEADERS = {"Cache-Control": "private"}


@router.get(
    "/api/product/videos/{video_id}/scene-graph",
    summary="Scene graph (world state)",
    description="Objects, zones, events and relations of the newest succeeded run, each with the "
    "evidence ids that back it. Text read in the video is an object of class `text`.",
    responses=_ARTIFACT_ERRORS,
    response_model=SceneGraph,
    response_model_by_alias=True,
)
def scene_graph(video_id: str, tenant: TenantDep, views: ViewsDep) -> dict[str, Any]:
    return views.scene_graph(tenant.tenant_id, video_id)


@router.get(
    "/api/product/videos/{video_id}/timeline",
    summary="Timeline",
    description="Events in time order and the refresh markers (where the world state was "
    "rebuilt: the start, scene changes).",
    responses=_ARTIFACT_ERRORS,
    response_model=Timeline,
)
def timeline(video_id: str, tenant: TenantDep, views: ViewsDep) -> dict[str, Any]:
    return views.timeline(tenant.tenant_id, video_id)


@router.get(
    "/api/product/videos/{video_id}/evidence-view",
    summary="Evidence view",
    description="Evidence spans with their frames (thumbnail with the box drawn, its sha256), "
    "review notes and the span's own sha256 (canonical JSON, sorted keys, without `sha256`).",
    responses=_ARTIFACT_ERRORS,
    response_model=EvidenceView,
)
def evidence_view(video_id: str, tenant: TenantDep, views: ViewsDep) -> dict[str, Any]:
    return views.evidence(tenant.tenant_id, video_id)


@router.get(
    "/api/product/videos/{video_id}/cost",
    summary="Cost report (cost.json)",
    description=(
        "The newest succeeded run's `cost.json`: `detector_mode` (what ran, e.g. `motion+ocr`; "
        "after a fallback, what the run fell back to), `fallback {used, reason}`, `detectors` "
        "(per plugin: frames it looked at, boxes, seconds), duration, processed seconds, compute "
        "per stage, frames decoded/sampled/analysed, retention and cost."
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
            }
        },
        **_ARTIFACT_ERRORS,
    },
)
def cost(video_id: str, tenant: TenantDep, views: ViewsDep) -> JSONResponse:
    return JSONResponse(views.cost(tenant.tenant_id, video_id))


@router.get(
    "/api/product/videos/{video_id}/runs/{run_id}/thumbs/{name}",
    summary="Evidence thumbnail",
    description="A JPEG of an evidence frame (as linked from the evidence view), or a 307 to a "
    "short-lived presigned URL of it when the service runs on an object store with presigning on.",
    responses={
        200: {"content": {"image/jpeg": {}}},
        307: {"description": "Fetch the JPEG from the presigned URL in `Location`."},
        **problem_responses(401, 404),
    },
    response_class=StreamingResponse,
)
def thumbnail(
    video_id: str,
    run_id: str,
    name: str,
    tenant: TenantDep,
    videos: VideosDep,
    runs: RunsDep,
    reader: ReaderDep,
    store: StoreDep,
) -> Response:
    videos.get(tenant.tenant_id, video_id)  # 404 unless the caller owns the video
    run = runs.get(run_id)
    if run.video_id != video_id or not _THUMB_NAME.match(name) or run.artifacts_path is None:
        raise NotFound(f"no thumbnail {name}")
    try:
        reader.verify(run.artifacts_path)  # never a frame of half a run
        key = f"{reader.run_key(run.artifacts_path)}/{THUMBS}/{name}"
        if (url := store.presign(key, _PRESIGN_EXPIRES_S)) and store.exists(key):
            return RedirectResponse(url, status_code=307, headers=_THUMB_HEADERS)
        chunks = store.iter_bytes(key)
        first = next(chunks, b"")  # a missing object fails here, before the response starts
    except (NotReady, BlobNotFound) as exc:
        raise NotFound(f"no thumbnail {name}") from exc
    return StreamingResponse(
        _prepend(first, chunks), media_type="image/jpeg", headers=_THUMB_HEADERS
    )


def _prepend(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest
