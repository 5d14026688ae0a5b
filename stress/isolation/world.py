"""Two tenants for the isolation matrix: each with a video processed by the real flow (so every
artifact, thumbnail and evidence id exists) and a video still awaiting its upload.

Tenant A's ids are what tenant B must never tell apart from unknown ids; B's own ids let the
matrix mix its ids with A's (B's video with A's run, say), which is where a check on one id but
not the other would show. The caller provides the Prefect server (a test harness) and sets
``VES_DATA_DIR`` (and ``VES_DATABASE_URL``) to the settings' values, as a worker's environment
does: the flow reads its settings from there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from api.operations.videos import encode_cursor
from flows.process_video import ProcessVideoParams, process_video
from storage.catalog.database import Catalog
from storage.catalog.exports import Export, ExportStore
from storage.catalog.records import Run
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from storage.catalog.webhooks.store import EVENT_TYPES, WebhookStore
from synthetic import MovingObject, SceneSpec, write_video
from testkit.submitters import QuietSubmitter
from ves.errors import Unavailable
from ves.ids import new_id

DETECTOR = "motion"  # the cheapest mode that still makes evidence with thumbnails


@dataclass(frozen=True)
class TenantWorld:
    """One tenant's key and ids (a published video and its run, a video awaiting an upload)."""

    name: str
    tenant_id: str
    key: str
    title: str
    video_id: str
    run_id: str
    upload_video_id: str
    evidence_id: str = ""
    thumb: str = ""  # a thumbnail's file name, as the evidence view links it
    export_id: str = ""  # a queued export of the video's run
    webhook_id: str = ""  # a webhook endpoint, registered before the run
    delivery_id: str = ""  # its delivery of the run's run.succeeded
    webhook_secret: str = ""

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}

    def secrets(self) -> dict[str, str]:
        """Everything another tenant must never read back, by what it is."""
        return {
            "tenant_id": self.tenant_id,
            "key": self.key,
            "title": self.title,
            "video_id": self.video_id,
            "run_id": self.run_id,
            "upload_video_id": self.upload_video_id,
            "evidence_id": self.evidence_id,
            "thumb": self.thumb,
            "export_id": self.export_id,
            "webhook_id": self.webhook_id,
            "delivery_id": self.delivery_id,
            "webhook_secret": self.webhook_secret,
        }


def clip_scene() -> SceneSpec:
    """Four seconds, one box crossing the frame: a run with objects, events and thumbnails."""
    path = ((0.2, -20, 120), (3.8, 340, 120))
    return SceneSpec(
        duration_s=4.0, objects=(MovingObject("crosser", (210, 40, 40), (24, 40), path),)
    )


def make_tenant(catalog: Catalog, clip: Path, name: str) -> TenantWorld:
    """A tenant with a key, a processed video (real flow, in this process) and an upload slot."""
    tenants, videos = TenantStore(catalog), VideoStore(catalog)
    tenant = tenants.create_tenant(name)
    key = tenants.create_key(tenant.tenant_id)[1]
    title = f"isolation {name} {tenant.tenant_id[-8:]}"
    upload = {"filename": "clip.mp4", "size_bytes": clip.stat().st_size}
    video = videos.create(NewVideo(tenant.tenant_id, title, "upload", None, upload))
    digest = hashlib.sha256(clip.read_bytes()).hexdigest()
    videos.complete_upload(
        tenant.tenant_id, video.video_id, path=str(clip), sha256=digest, size=clip.stat().st_size
    )
    hooks = WebhookStore(catalog)
    hook = hooks.create_endpoint(
        tenant.tenant_id, "https://hooks.example.com/ves", list(EVENT_TYPES), None, 10
    )
    runs = RunStore(catalog)
    run = runs.create(tenant.tenant_id, video.video_id, {"detector": DETECTOR})
    process_video(ProcessVideoParams(run_id=run.run_id))
    if runs.get(run.run_id).state != "succeeded":
        raise RuntimeError(f"the run of {name}'s clip did not succeed: {runs.get(run.run_id)}")
    waiting = videos.create(NewVideo(tenant.tenant_id, title, "upload", None, upload))
    export = ExportStore(catalog).create(tenant.tenant_id, video.video_id, run.run_id, None, {})
    return TenantWorld(
        name,
        tenant.tenant_id,
        key,
        title,
        video.video_id,
        run.run_id,
        waiting.video_id,
        export_id=export.export_id,
        webhook_id=hook.webhook_id,
        delivery_id=hooks.deliveries(tenant.tenant_id, hook.webhook_id, 1)[0].delivery_id,
        webhook_secret=hook.secret,
    )


def with_evidence(world: TenantWorld, base_url: str) -> TenantWorld:
    """``world`` with an evidence id and a thumbnail name read, as its owner, from the API."""
    path = f"/api/product/videos/{world.video_id}/evidence-view"
    response = httpx.get(base_url + path, headers=world.headers, timeout=30)
    response.raise_for_status()
    span = next(s for s in response.json()["spans"] if s["frames"])
    thumb = span["frames"][0]["thumbnail_url"].rsplit("/", 1)[-1]
    return TenantWorld(**{**world.__dict__, "evidence_id": span["evidence_id"], "thumb": thumb})


def make_tenants(catalog: Catalog, work_dir: Path) -> tuple[TenantWorld, TenantWorld]:
    """Tenants A and B, each with a processed clip (evidence ids are filled in later, from the
    API: ``with_evidence``)."""
    clip = work_dir / "isolation-clip.mp4"
    if not clip.exists():
        work_dir.mkdir(parents=True, exist_ok=True)
        write_video(clip_scene(), clip)
    return make_tenant(catalog, clip, "tenant-a"), make_tenant(catalog, clip, "tenant-b")


class RefusingSubmitter(QuietSubmitter):
    """The orchestrator of the matrix's API: B's calls must never queue a run, so one that did
    answers 503 instead of 404 and the cell fails."""

    async def submit(self, run: Run, *, concurrency: int) -> str:
        raise Unavailable(f"the isolation matrix queued run {run.run_id}")

    async def submit_export(self, export: Export) -> str:
        raise Unavailable(f"the isolation matrix queued export {export.export_id}")


@dataclass(frozen=True)
class Choice:
    """A value for a path parameter or tool argument: one of A's (with ``control``, its unknown
    twin) or one of B's own; ``tag`` names it in the report (``A``, ``A-upload``, ``B``)."""

    value: str
    control: str
    tag: str

    @property
    def of_a(self) -> bool:
        return self.tag != "B"


def _unknown(value: str) -> str:
    """An id nobody has, of the same kind, length and creation time as ``value`` (``ves.ids``:
    10 characters of time, then 16 random ones), so it sorts where ``value`` sorts: a listing
    after it must be the same page."""
    head = len(value.partition("_")[0]) + 1 + 10
    fresh = new_id(value.partition("_")[0])
    return value[:head] + fresh[head : head + 16] + value[head + 16 :]  # a thumbnail's "_0.jpg"


def _cursors(a: TenantWorld) -> list[Choice]:
    """A listing's cursor made from A's video id, and from its unknown twin."""
    return [Choice(encode_cursor(a.video_id), encode_cursor(_unknown(a.video_id)), "A")]


def _choices(b_value: str, **a_values: str) -> list[Choice]:
    theirs = [Choice(value, _unknown(value), tag) for tag, value in a_values.items()]
    return [*theirs, Choice(b_value, b_value, "B")]


# Values of each path parameter (and tool argument) by its name: A's ids, then B's own.
FILLERS: dict[str, Callable[[TenantWorld, TenantWorld], list[Choice]]] = {
    "video_id": lambda a, b: _choices(b.video_id, A=a.video_id, **{"A-upload": a.upload_video_id}),
    "run_id": lambda a, b: _choices(b.run_id, A=a.run_id),
    "name": lambda a, b: _choices(b.thumb, A=a.thumb),  # a thumbnail's file name
    "evidence_id": lambda a, b: _choices(b.evidence_id, A=a.evidence_id),
    "export_id": lambda a, b: _choices(b.export_id, A=a.export_id),
    "webhook_id": lambda a, b: _choices(b.webhook_id, A=a.webhook_id),
    "delivery_id": lambda a, b: _choices(b.delivery_id, A=a.delivery_id),
    "cursor": lambda a, b: _cursors(a),
}
# Parameters that name no record of their own: the control need not be "not found".
NOT_RECORDS = {"cursor"}
