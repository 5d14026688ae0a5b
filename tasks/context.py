"""What every stage of one run needs: ids, settings, options, folders, and progress reporting."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from storage.artifacts.blobs import BlobStore, open_blob_store
from storage.artifacts.layout import RunLayout
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import VideoStore
from tasks.options import RunOptions
from ves.detector_mode import DetectorMode
from ves.plans import PlanLimits
from ves.settings import Settings

# Share of the whole run each stage takes (sampling decodes the video, so it dominates).
STAGE_WEIGHTS = {
    "decode": 0.05,
    "sample": 0.52,
    "detect": 0.15,
    "review_copy": 0.03,  # copied in a moment, or transcoded (tasks/review)
    "track": 0.04,
    "world_state": 0.04,
    "timeline": 0.02,
    "evidence": 0.12,
    "cost": 0.02,
    "publish": 0.01,  # the manifest written and the folder put in place
}
_STAGE_START = {
    stage: sum(list(STAGE_WEIGHTS.values())[:i]) for i, stage in enumerate(STAGE_WEIGHTS)
}


@dataclass(frozen=True)
class SourceRef:
    """Where a video's bytes are: a URL, an HLS playlist, or an uploaded file."""

    kind: str
    url: str | None
    path: str | None
    sha256: str | None = None  # known for uploads: verified when the bytes arrived


BUDGET_MARGIN = 1.25  # a compute budget's allowance on the model's estimate of what follows


@dataclass(frozen=True)
class ComputeBudget:
    """A run's ``max_compute_s``, asked once per sampled frame (docs/how-to/estimates.md).

    Sampling may keep one more frame while the compute spent since the run's first stage plus
    what the stages after sampling are expected to take for the frames kept stays within the
    cap; the expectation comes from the cost model, times ``margin`` (it is an estimate, the cap
    is not).
    """

    cap_s: float
    started_at: float  # time.perf_counter() when the run's first stage began
    fixed_s: float  # the stages after sampling, whatever was sampled
    per_frame_s: float  # and per frame sampled
    margin: float = BUDGET_MARGIN

    def allows(self, frames: int) -> bool:
        """Whether a run that has sampled ``frames`` frames may sample one more."""
        spent = time.perf_counter() - self.started_at
        ahead = (self.fixed_s + self.per_frame_s * (frames + 1)) * self.margin
        return spent + ahead <= self.cap_s


@dataclass(frozen=True)
class RunContext:
    """One run's identity and environment, handed to every task (small, never frames)."""

    settings: Settings
    run_id: str
    tenant_id: str
    video_id: str
    source: SourceRef
    options: RunOptions
    plan: PlanLimits = field(default_factory=PlanLimits)  # the tenant's plan
    budget: ComputeBudget | None = None  # set by the flow for a run with max_compute_s

    @property
    def layout(self) -> RunLayout:
        return RunLayout(self.settings.work_root, self.tenant_id, self.video_id, self.run_id)

    @property
    def store(self) -> BlobStore:
        """Where the run's source may be and where it publishes (shared by every worker)."""
        return open_blob_store(self.settings)

    @property
    def runs(self) -> RunStore:
        return RunStore(Catalog.from_settings(self.settings, migrate=False))

    @property
    def sample_fps(self) -> float:
        return self.options.sample_fps or self.settings.sample_fps

    @property
    def skip_still(self) -> bool:
        """Whether the run skips decoding still stretches (the activity gate)."""
        return self.still_cue is not None

    @property
    def still_cue(self) -> Literal["packets", "keyframes"] | None:
        """What the activity gate judges stillness by: ``"packets"`` (the default: where a
        stream's packet sizes follow activity; elsewhere it decodes everything), ``"keyframes"``
        (asked for: keyframes alone), or None (the gate is off)."""
        chosen = self.options.skip_still
        mode = self.settings.skip_still if chosen is None else chosen
        if mode == "keyframes":
            return "keyframes"
        return "packets" if mode else None

    @property
    def max_duration_s(self) -> float:
        chosen = self.options.max_duration_s or self.settings.max_duration_s
        bound = min(chosen, self.settings.max_duration_s, self.plan.max_video_s)
        return min(bound, self.cost_bound_s or math.inf)

    @property
    def cost_bound_s(self) -> float | None:
        """The seconds of video ``max_cost`` buys (None: no such cap)."""
        return self.options.cost_bound_s(self.settings.price_per_video_minute)

    @property
    def detector_mode(self) -> DetectorMode:
        """The detector mode asked for (what ran, after any fallback, is in ``cost.json``)."""
        return DetectorMode.parse(self.options.detector or self.settings.detector)

    @property
    def yolo_model(self) -> Path | None:
        """The YOLO model of the run: the one execute named (in the models folder), else the
        service's."""
        if self.options.yolo_model:
            return self.settings.models_root / self.options.yolo_model
        return self.settings.yolo_model

    def report(self, stage: str, fraction: float = 0.0) -> None:
        """Record that ``stage`` is ``fraction`` done (shown as the run's stage and progress)."""
        progress = _STAGE_START[stage] + STAGE_WEIGHTS[stage] * min(max(fraction, 0.0), 1.0)
        self.runs.progress(self.run_id, stage, progress)


def load_context(settings: Settings, run_id: str) -> RunContext:
    """The context of a run from the catalog."""
    catalog = Catalog.from_settings(settings, migrate=False)
    run = RunStore(catalog).get(run_id)
    video = VideoStore(catalog).get(run.tenant_id, run.video_id)
    source = SourceRef(video.source_type, video.source_url, video.source_path, video.source_sha256)
    options = RunOptions.model_validate(run.params)
    plan = settings.plan(TenantStore(catalog).get_tenant(run.tenant_id).plan)
    return RunContext(settings, run.run_id, run.tenant_id, run.video_id, source, options, plan)


def beat_every_s(settings: Settings) -> float:
    """How often a run beats: every 10 s, and well within the reaper's timeout whatever it is
    set to (a 10 s beat against an 8 s timeout let a busy stage be reaped while it ran)."""
    return min(10.0, settings.heartbeat_timeout_s / 4)


@contextmanager
def heartbeat(ctx: RunContext, every_s: float | None = None) -> Iterator[None]:
    """Beat for the run in a thread while the block runs, so the reaper knows it is alive
    (every ``every_s``; by default ``beat_every_s``)."""
    every = beat_every_s(ctx.settings) if every_s is None else every_s
    with beating(lambda: ctx.runs.beat(ctx.run_id), every, f"heartbeat-{ctx.run_id}"):
        yield


@contextmanager
def beating(beat: Callable[[], None], every_s: float, name: str) -> Iterator[None]:
    """Call ``beat`` every ``every_s`` in a thread while the block runs (a run's or an export's
    sign of life for the reaper)."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            beat()

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)
