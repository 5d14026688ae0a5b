"""Operation 10: a demo workspace for a newcomer, without an account.

One request makes a ``sandbox`` tenant, its first API key and a synthetic demo video, and executes
the video at once, so a newcomer sees every artifact without an account or a recording of their
own. The route needs no key, so it is rate-limited per client address, and that check comes
before anything is created.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from typing import Annotated

from fastapi import APIRouter, Body, Request, Response, status
from starlette.concurrency import run_in_threadpool

from api.audit import DEMO_KEY, AuditedRoute, act_as, note_ids
from api.auth import client_address
from api.deps import CatalogDep, SettingsDep, SubmitterDep
from api.operations.runs import submit_run
from api.problems import problem_responses
from api.schemas.onboarding import DemoCreate, DemoWorkspace
from flows.demo_clip import CLIP_NAME, ensure_demo_clip
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.uploads import StagedUpload, publish_staged, stage_copy, upload_key
from storage.catalog.database import Catalog
from storage.catalog.rate_limits import RateLimit, RateLimiter
from storage.catalog.records import Run, Tenant
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from tasks.options import RunOptions
from ves.plans import PlanLimits
from ves.settings import Settings

router = APIRouter(tags=["onboarding"], route_class=AuditedRoute)

DEMO_TITLE = "Demo: lobby camera (synthetic)"
# The demo shows text and motion whatever the service's default detector is (a YOLO model would
# find nothing in synthetic boxes).
DEMO_DETECTOR = "motion+ocr"

DEMO_EXAMPLES = {
    "anonymous": {"summary": "No body: a workspace named demo-<id>", "value": {}},
    "named": {
        "summary": "With a name (the email is checked, not stored)",
        "value": {"name": "Ada", "email": "ada@example.com"},
    },
}


@dataclass(frozen=True)
class _Workspace:
    """What ``_create_workspace`` made, before the run is handed over."""

    tenant: Tenant
    api_key: str
    run: Run


def demo_rate_limit(settings: Settings) -> RateLimit:
    """The demo route's limit per client address."""
    return RateLimit("demo", settings.demo_rate_limit, settings.demo_rate_window_s)


@router.post(
    "/api/public/onboarding/demo-video",
    status_code=status.HTTP_201_CREATED,
    summary="Create a demo workspace",
    description=(
        "No key needed. Creates a `sandbox` workspace with its first API key and a synthetic demo "
        "video (moving figures, two signs with text, a scene cut), and executes that video at "
        "once: follow it with the key at `GET /api/product/videos/{video_id}`. **The key is shown "
        "only in this answer.** `dashboard_url` opens the dashboard on the demo video; it holds "
        "no key, the person pastes the key to sign in. The body is optional: `name` (1 to 80 "
        "characters) goes into the workspace's name; `email` is checked for shape and not stored. "
        "Limited per client address (`VES_DEMO_RATE_LIMIT` per `VES_DEMO_RATE_WINDOW_S`, by "
        "default 3 per 10 minutes): above it 429 `rate_limited` with `Retry-After`."
    ),
    responses=problem_responses(415, 422, 429, 503),
)
async def create_demo_workspace(
    request: Request,
    response: Response,
    settings: SettingsDep,
    catalog: CatalogDep,
    submitter: SubmitterDep,
    body: Annotated[DemoCreate | None, Body(openapi_examples=DEMO_EXAMPLES)] = None,
) -> DemoWorkspace:
    limiter = RateLimiter(catalog)
    await run_in_threadpool(limiter.acquire, demo_rate_limit(settings), client_address(request))
    made = await run_in_threadpool(_create_workspace, settings, catalog, body or DemoCreate())
    concurrency = settings.plan("sandbox").concurrent_runs
    act_as(request, replace(made.tenant, key_id=DEMO_KEY))  # the demo video's first record
    note_ids(request, video_id=made.run.video_id, run_id=made.run.run_id)
    await submit_run(made.run, RunStore(catalog), submitter, concurrency)
    response.headers["Cache-Control"] = "no-store"  # the answer holds a key
    return DemoWorkspace(
        tenant_id=made.tenant.tenant_id,
        tenant_name=made.tenant.name,
        api_key=made.api_key,
        video_id=made.run.video_id,
        run_id=made.run.run_id,
        state=made.run.state,
        dashboard_url=f"{settings.base_url}/dashboard?video={made.run.video_id}",
    )


def _create_workspace(settings: Settings, catalog: Catalog, body: DemoCreate) -> _Workspace:
    """Tenant, key, demo video with its bytes in place, and a queued run of it.

    The clip is made ready first, so a failure there leaves no half-made workspace behind.
    """
    clip = ensure_demo_clip(settings.data_dir / "demo")
    staged = stage_copy(clip, settings.uploads_dir)
    try:
        tenants = TenantStore(catalog)
        tenant = tenants.create_tenant(_workspace_name(body.name))
        api_key = tenants.create_key(tenant.tenant_id)[1]
        limits = settings.plan(tenant.plan)
        video_id = _store_demo_video(settings, catalog, tenant.tenant_id, staged, limits)
    finally:
        staged.path.unlink(missing_ok=True)  # already gone once published
    options = RunOptions(detector=DEMO_DETECTOR).resolved(settings, limits)
    params = options.model_dump(mode="json", exclude_none=True)
    run = RunStore(catalog).create(tenant.tenant_id, video_id, params, limits)
    return _Workspace(tenant, api_key, run)


def _workspace_name(name: str | None) -> str:
    """``demo-<12 hex>``, with the person's name after it when given.

    The random part keeps names unique (tenant names are), so a stranger can neither collide
    with nor probe for an existing tenant's name.
    """
    base = f"demo-{secrets.token_hex(6)}"
    return f"{base} ({name})" if name else base


def _store_demo_video(
    settings: Settings, catalog: Catalog, tenant_id: str, staged: StagedUpload, limits: PlanLimits
) -> str:
    """Register the demo as an uploaded recording and publish its bytes; return its id."""
    videos = VideoStore(catalog)
    upload = {
        "filename": CLIP_NAME,
        "size_bytes": staged.size,
        "content_type": "video/mp4",
        "sha256": staged.sha256,
    }
    video = videos.create(NewVideo(tenant_id, DEMO_TITLE, "upload", None, upload), limits)
    key = upload_key(tenant_id, video.video_id, CLIP_NAME)
    stored = publish_staged(staged, open_blob_store(settings), key)
    videos.complete_upload(
        tenant_id, video.video_id, path=stored.key, sha256=stored.sha256, size=stored.size
    )
    return video.video_id
