"""Operation 3: execute a video (queue a run and hand it to the orchestrator)."""

from __future__ import annotations

from typing import Annotated

from anyio import to_thread
from fastapi import APIRouter, Body, Request, status
from fastapi.responses import JSONResponse

from api.audit import AuditedRoute, note_ids
from api.deps import CatalogDep, RunsDep, SettingsDep, StoreDep, SubmitterDep, TenantDep
from api.operations.estimates import estimate_run
from api.operations.runs import queue_run
from api.problems import problem_responses
from api.schemas.estimates import DryRunEstimate
from api.schemas.runs import ExecuteAccepted, StopAccepted
from storage.catalog.runs.live import LiveRunStore
from tasks.options import RunOptions

router = APIRouter(tags=["runs"], route_class=AuditedRoute)

# OpenAPI links from a queued run to where it is followed and read (execute -> read): clients
# and the stateful fuzzer (stress/fuzz/run.py) follow them.
_READS = {
    "GetVideo": ("get_video_api_product_videos__video_id__get", "The run's stage and progress."),
    "SceneGraph": ("scene_graph_api_product_videos__video_id__scene_graph_get", "Once succeeded."),
    "Timeline": ("timeline_api_product_videos__video_id__timeline_get", "Once succeeded."),
    "EvidenceView": (
        "evidence_view_api_product_videos__video_id__evidence_view_get",
        "Once succeeded.",
    ),
    "Cost": ("cost_api_product_videos__video_id__cost_get", "Once succeeded."),
    "Ask": ("ask_video_api_product_videos__video_id__ask_post", "Once succeeded."),
}
EXECUTE_LINKS = {
    name: {
        "operationId": operation_id,
        "parameters": {"video_id": "$response.body#/video_id"},
        "description": description,
    }
    for name, (operation_id, description) in _READS.items()
}

EXECUTE_EXAMPLES = {
    "default": {"summary": "The service's defaults (motion + people + OCR)", "value": {}},
    "faces": {
        "summary": "Also find faces (linked to their person)",
        "value": {"detector": "motion+person+face+ocr"},
    },
    "text": {
        "summary": "Read text, two frames a second, first two minutes",
        "value": {"detector": "motion+ocr", "sample_fps": 2, "max_duration_s": 120},
    },
    "live": {
        "summary": "A live HLS stream: 30 s windows from the live edge, until stopped",
        "value": {"window_s": 30, "follow": True},
    },
    "yolo": {
        "summary": "Name objects with a YOLO model from the models folder",
        "value": {"detector": "yolo+ocr", "yolo_model": "yolov8n.onnx"},
    },
    "dry_run": {
        "summary": "Estimate the run (compute, wall time, price, plan left); run nothing",
        "value": {"dry_run": True, "max_compute_s": 30},
    },
    "capped": {
        "summary": "Hard caps: stop at 0.25 of price or 20 compute seconds, publish what was done",
        "value": {"max_cost": 0.25, "max_compute_s": 20},
    },
}


@router.post(
    "/api/product/videos/{video_id}/execute",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Execute a video",
    description=(
        "Queue a run of the bounded, CPU-first processing (decode, sample, detect, track, world "
        "state, timeline, evidence, cost) and return at once; processing never runs inside the "
        "request. Follow the run in the video's `latest_run` (`stage`, `progress`). A video that "
        "is already `queued` or `running` answers 409 `conflict`. The body is optional. "
        "`detector` chooses what is detected: `motion` (whatever moves) plus any of `+person` "
        "(people: a learned pedestrian detector on onnxruntime, tracked by detection), `+face` "
        "(faces: CenterFace, linked to their person by `part_of`) and `+ocr` (text); the "
        "default is `motion+person+ocr`; `yolo` (a YOLO ONNX model's classes) with `+face` / "
        "`+ocr`. A model that is missing or fails makes the run fall back (a YOLO run to motion), "
        "which `cost.json`'s `fallback` and every evidence span's notes then say. Beyond the "
        "plan's `concurrent_runs` the run is still accepted: it waits `queued`, its place in "
        "line in the video's `latest_run.queue_position`, until one of the workspace's runs "
        "ends (another workspace's line never holds it back). When `VES_MAX_QUEUED_RUNS` runs "
        "of the workspace wait already: 429 `rate_limited` with `Retry-After`. 402 "
        "`plan_limit_exceeded` (with `limit`, `value` and `used`) when what the plan buys is "
        "used up (executions or processed seconds this month, storage), or when "
        "`max_duration_s` exceeds the plan's `max_video_s`; longer videos are processed up to "
        'that bound. `"dry_run": true` answers 200 with the run\'s estimate instead and runs '
        "nothing: seconds of video, frames, compute per stage, wall time (from a cost model "
        "fitted on this installation's runs, `model.source` `fitted` or `fallback`), price and "
        "what the plan has left, and the 402 execute would answer (`would_be_refused`). A URL "
        "or HLS video never processed is measured first by a bounded, address-guarded read of "
        "its container header or playlist (`duration_from` `header` or `playlist`); when that "
        "fails the estimate is for the bound and `header.reason` says why. "
        "`max_cost` and `max_compute_s` are hard caps: the run stops there, publishes what it "
        "processed and is billed that only (`cost.json`: `truncated`, `truncation.reason`); a "
        "`max_compute_s` below the estimate of the run's first second is refused (422, with "
        "`minimum`). A live HLS stream (a playlist without `#EXT-X-ENDLIST`) is processed "
        "in a window of `window_s` from its live edge (the plan's `live_window_s` by default, at "
        "most its `live_window_max_s`: 402 beyond it), then published; with `follow: true` "
        "window after window, each published as it closes (the run of each window succeeds and "
        "the next window's run starts at once), until `POST .../runs/{run_id}/stop`, the "
        "plan's processed seconds run out, `max_duration_s` is reached, or the stream ends."
    ),
    response_model=ExecuteAccepted,
    responses={
        200: {"model": DryRunEstimate, "description": "A dry run's estimate (nothing queued)."},
        202: {"description": "The queued run.", "links": EXECUTE_LINKS},
        **problem_responses(400, 401, 402, 404, 409, 413, 415, 422, 429, 503),
    },
)
async def execute_video(
    video_id: str,
    request: Request,
    tenant: TenantDep,
    runs: RunsDep,
    submitter: SubmitterDep,
    settings: SettingsDep,
    store: StoreDep,
    options: Annotated[RunOptions | None, Body(openapi_examples=EXECUTE_EXAMPLES)] = None,
) -> ExecuteAccepted | JSONResponse:
    if options is not None and options.dry_run:
        estimate = await to_thread.run_sync(
            estimate_run, runs.catalog, store, settings, tenant, video_id, options
        )
        return JSONResponse(estimate.model_dump(mode="json"), status_code=status.HTTP_200_OK)
    run = await queue_run(tenant, video_id, options, runs, submitter, settings)
    note_ids(request, run_id=run.run_id)
    return ExecuteAccepted(video_id=video_id, run_id=run.run_id, state=run.state)


@router.post(
    "/api/product/videos/{video_id}/runs/{run_id}/stop",
    status_code=status.HTTP_202_ACCEPTED,
    summary="Stop a live session",
    description=(
        "Stop the live HLS session the run belongs to (any window's run of the session may be "
        "named). A running window closes at once with what it has, is published, and its run "
        "ends `succeeded`; no further window starts. A queued run ends at once (`failed`, "
        "code `stopped`: nothing was processed or billed). 404 `not_found` for a run that is "
        "not one of this video's in this workspace; 409 `conflict` when the session has "
        "already ended, or the run is not of a live HLS stream."
    ),
    responses={202: {"description": "The stop was taken."}, **problem_responses(401, 404, 409)},
)
async def stop_run(
    video_id: str, run_id: str, request: Request, tenant: TenantDep, catalog: CatalogDep
) -> StopAccepted:
    live = LiveRunStore(catalog)
    run = await to_thread.run_sync(live.request_stop, tenant.tenant_id, video_id, run_id)
    note_ids(request, run_id=run.run_id)
    return StopAccepted(video_id=video_id, run_id=run.run_id, state=run.state, stage=run.stage)
