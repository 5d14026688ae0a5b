"""A succeeded run for the fuzzer to read: without one, every read of a video's artifacts answers
409 ``not_ready`` and their 2xx models (scene graph, timeline, evidence view, cost, ask, the
thumbnails) are never checked against what the service really sends.

The fuzz tenant gets the synthetic demo clip (the one ``POST /api/public/onboarding/demo-video``
gives), registered as an upload, and the real ``process-video`` flow runs it in this process on
a temporary Prefect server (``prefect_test_harness``), as the API tests' ``executed`` fixture
does: a few seconds of the flow, plus the temporary server's start.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from unittest import mock

from flows.demo_clip import CLIP_NAME, ensure_demo_clip
from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.uploads import publish_staged, stage_copy, upload_key
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from storage.catalog.videos import NewVideo, VideoStore
from storage.catalog.webhooks.store import EVENT_TYPES, WebhookStore
from tasks.options import RunOptions
from ves.settings import Settings

SEED_DETECTOR = "motion+ocr"  # what the demo route runs: text and motion on the synthetic clip


@dataclass(frozen=True)
class SeededRun:
    """The fuzz tenant's processed video, its run and the state that run ended in."""

    video_id: str
    run_id: str
    state: str
    webhook_id: str = ""  # a webhook endpoint of the tenant, registered before the run
    delivery_id: str = ""  # its delivery of the run's run.succeeded


def seed_webhook(catalog: Catalog, tenant_id: str) -> str:
    """A webhook endpoint of the tenant for every event (a public address: nothing is sent,
    the fuzz service's orchestrator takes deliveries and sends none); its id."""
    store = WebhookStore(catalog)
    return store.create_endpoint(
        tenant_id, "https://hooks.example.com/ves", list(EVENT_TYPES), "fuzz", 10
    ).webhook_id


def with_delivery(
    catalog: Catalog, tenant_id: str, seeded: SeededRun, webhook_id: str
) -> SeededRun:
    """``seeded`` with the endpoint and the delivery its run's end wrote."""
    [delivery] = WebhookStore(catalog).deliveries(tenant_id, webhook_id, 1)
    return replace(seeded, webhook_id=webhook_id, delivery_id=delivery.delivery_id)


def _register_clip(settings: Settings, catalog: Catalog, tenant_id: str) -> str:
    """The demo clip as the tenant's uploaded video, its bytes in place; its id."""
    staged = stage_copy(ensure_demo_clip(settings.data_dir / "demo"), settings.uploads_dir)
    videos = VideoStore(catalog)
    upload = {
        "filename": CLIP_NAME,
        "size_bytes": staged.size,
        "content_type": "video/mp4",
        "sha256": staged.sha256,
    }
    video = videos.create(NewVideo(tenant_id, "Fuzz: demo clip", "upload", None, upload))
    stored = publish_staged(
        staged, open_blob_store(settings), upload_key(tenant_id, video.video_id, CLIP_NAME)
    )
    videos.complete_upload(
        tenant_id, video.video_id, path=stored.key, sha256=stored.sha256, size=stored.size
    )
    return video.video_id


def seed_succeeded_run(
    settings: Settings, catalog: Catalog, tenant_id: str, plan: str
) -> SeededRun:
    """Register the demo clip for the tenant and process it with the real flow."""
    from prefect.settings import PREFECT_LOGGING_TO_API_ENABLED, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    video_id = _register_clip(settings, catalog, tenant_id)
    limits = settings.plan(plan)
    options = RunOptions(detector=SEED_DETECTOR).resolved(settings, limits)
    params = options.model_dump(mode="json", exclude_none=True)
    run = RunStore(catalog).create(tenant_id, video_id, params, limits)
    # The flow reads Settings() from the environment as a worker does: this data folder, and
    # nothing of the shell's VES_*/AWS_* (never the operator's database or bucket).
    flow_env = {k: v for k, v in os.environ.items() if not k.startswith(("VES_", "AWS_"))}
    flow_env["VES_DATA_DIR"] = str(settings.data_dir)
    flow_env["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"  # no telemetry from a test server
    with (
        mock.patch.dict(os.environ, flow_env, clear=True),
        temporary_settings({PREFECT_LOGGING_TO_API_ENABLED: False}),
        prefect_test_harness(server_startup_timeout=180),
    ):
        process_video(ProcessVideoParams(run_id=run.run_id))  # raises when the run fails
    return SeededRun(video_id, run.run_id, RunStore(catalog).get(run.run_id).state)
