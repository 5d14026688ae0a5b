"""A run's estimate before it runs (execute's ``dry_run``), and the check of ``max_compute_s``.

The estimate reads what the service knows of the video before running it: an earlier run's
measured source (the ``run_costs`` table), else a probe of an uploaded file's header, else a
bounded, SSRF-guarded read of a URL's container header or an HLS playlist
(``tasks.decode.header``). When none says the length (the header could not be read, or a live
stream has no end), it is made for the run's bound (a live stream's: one window) at an assumed
25 fps 1280x720, and says why. It writes nothing: the audit record of the request is the only
trace a dry run leaves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from api.problems import problem_body
from api.schemas.estimates import (
    DryRunEstimate,
    DurationFrom,
    Estimate,
    EstimateCaps,
    EstimateHeader,
    EstimateModel,
    EstimatePrice,
    PlanLeft,
)
from storage.artifacts.blobs import BlobStore
from storage.catalog.database import Catalog
from storage.catalog.records import Tenant, Video
from storage.catalog.runs.admission import check_plan
from storage.catalog.runs.costs import RunCostStore
from storage.catalog.usage import UsageStore
from storage.catalog.videos import VideoStore
from tasks.context import BUDGET_MARGIN
from tasks.cost.model import CostModel, Workload, fit_model
from tasks.decode.header import HeaderLimits, SourceHeader, read_header
from tasks.decode.stage import probe_video
from tasks.options import MIN_CAPPED_S, RunOptions, live_window
from ves.clock import now_rfc3339
from ves.errors import PlanLimitExceeded, ValidationFailed, VesError
from ves.plans import PlanLimits
from ves.settings import Settings

ASSUMED_FPS, ASSUMED_SIZE = 25.0, (1280, 720)  # a source not known before its first run
ASSUMED_BYTES_PER_S = 250_000.0  # 2 Mbit/s: a typical 720p camera stream


@dataclass(frozen=True)
class KnownSource:
    """What is known of a video's source before a run: length (None: unknown), rate and size."""

    duration_s: float | None
    fps: float
    width: int
    height: int
    found: DurationFrom
    splittable: bool = True  # an HLS stream (MPEG-TS) is never split into chunks
    bytes_per_s: float = ASSUMED_BYTES_PER_S
    header: SourceHeader | None = None  # the header read of a URL or HLS source, if one was

    @classmethod
    def from_header(cls, header: SourceHeader, splittable: bool) -> KnownSource:
        """What a header read found; the assumed rate and size stand in for what it did not."""
        width, height = header.width or ASSUMED_SIZE[0], header.height or ASSUMED_SIZE[1]
        rate = header.bitrate_bps / 8 if header.bitrate_bps else ASSUMED_BYTES_PER_S
        found: DurationFrom = header.found or ("live_window" if header.live else "bound")
        fps = header.fps or ASSUMED_FPS
        return cls(header.duration_s, fps, width, height, found, splittable, rate, header)


def known_source(
    catalog: Catalog, store: BlobStore | None, settings: Settings, video: Video
) -> KnownSource:
    """The video's source as an earlier run measured it, else as its uploaded file's header or
    its URL's header (or HLS playlist) says."""
    sample = RunCostStore(catalog).last_of_video(video.tenant_id, video.video_id)
    splittable = video.source_type != "hls"
    if sample is not None:
        return KnownSource(
            sample.duration_s,
            sample.source_fps,
            sample.width,
            sample.height,
            "previous_run",
            splittable,
            sample.source_bytes / sample.duration_s if sample.duration_s else ASSUMED_BYTES_PER_S,
        )
    local = _uploaded_file(store, video)
    if local is not None:
        try:
            duration, width, height, fps, _, _ = probe_video(local, settings)
            rate = local.stat().st_size / duration if duration else ASSUMED_BYTES_PER_S
            return KnownSource(duration, fps, width, height, "probe", True, rate)
        except VesError:
            pass  # the run will say what is wrong with it; the estimate uses the bound
    if video.source_type in ("url", "hls") and video.source_url:
        header = read_header(video.source_url, video.source_type, header_limits(settings))
        return KnownSource.from_header(header, splittable)
    return KnownSource(None, ASSUMED_FPS, *ASSUMED_SIZE, "bound", splittable)


def header_limits(settings: Settings) -> HeaderLimits:
    """The bounds of a dry run's header read: the service's address policy and picture bounds,
    ``VES_HEADER_MAX_BYTES`` within ``VES_SOURCE_TIMEOUT_S``."""
    return HeaderLimits(
        settings.header_max_bytes,
        settings.source_timeout_s,
        settings.allow_private_sources,
        settings.max_width,
        settings.max_height,
    )


def _uploaded_file(store: BlobStore | None, video: Video) -> Path | None:
    if store is None or video.source_type != "upload" or not video.source_path:
        return None
    key = store.key_of(video.source_path)
    local = Path(video.source_path) if key is None else store.local_path(key)
    return local if local is not None and local.is_file() else None


def _bound_s(options: RunOptions, settings: Settings, limits: PlanLimits) -> float:
    chosen = options.max_duration_s or settings.max_duration_s
    bound = min(chosen, settings.max_duration_s, limits.max_video_s)
    return min(bound, options.cost_bound_s(settings.price_per_video_minute) or math.inf)


def workload_of(
    source: KnownSource, options: RunOptions, settings: Settings, limits: PlanLimits
) -> Workload:
    """What the run would process (``options`` resolved: the detector mode is filled in)."""
    bound = _bound_s(options, settings, limits)
    if source.found == "live_window":  # a live stream is processed one window at a time
        bound = min(bound, live_window(options.window_s, limits))
    duration = min(source.duration_s or bound, bound)
    chunks = 1
    if (
        source.splittable
        and settings.chunk_s > 0
        and duration > settings.chunk_s
        and options.max_compute_s is None
    ):
        chunks = max(2, round(duration / settings.chunk_s))
    sample_fps = options.sample_fps or settings.sample_fps
    mode = str(options.detector)
    return Workload(
        duration,
        source.fps,
        source.width,
        source.height,
        sample_fps,
        mode,
        chunks,
        source.bytes_per_s,
    )


def capped_compute_s(model: CostModel, work: Workload, duration_s: float) -> float:
    """The compute the cap is checked against when sampling stops at ``duration_s``: what was
    spent, plus the stages after sampling with the budget's margin (``tasks.context``)."""
    part = Workload(**{**work.__dict__, "duration_s": duration_s, "chunks": 1})
    stages = model.stage_seconds(part)
    fixed, per_frame = model.downstream(part)
    ahead = (fixed + per_frame * part.frames_analysed) * BUDGET_MARGIN
    return stages["decode"] + stages["sample"] + ahead


def stops_at_s(model: CostModel, work: Workload, cap_s: float) -> float | None:
    """Where ``max_compute_s`` is expected to stop sampling (None: not before the end)."""
    if capped_compute_s(model, work, work.duration_s) <= cap_s:
        return None
    low, high = 0.0, work.duration_s
    for _ in range(40):
        middle = (low + high) / 2
        fits = capped_compute_s(model, work, middle) <= cap_s
        low, high = (middle, high) if fits else (low, middle)
    return round(low, 3)


def model_for(catalog: Catalog, settings: Settings, detector_mode: str) -> CostModel:
    samples = RunCostStore(catalog).newest(settings.cost_model_runs)
    return fit_model(samples, detector_mode, settings.cost_model_min_runs)


def check_compute_cap(
    catalog: Catalog, settings: Settings, tenant: Tenant, video_id: str, options: RunOptions
) -> None:
    """Refuse a ``max_compute_s`` below the estimate for ``MIN_CAPPED_S`` of the video (422).

    Raises:
        ValidationFailed: naming the minimum.
    """
    cap = options.max_compute_s
    if cap is None:
        return
    video = VideoStore(catalog).get(tenant.tenant_id, video_id)
    work = workload_of(
        known_source(catalog, None, settings, video), options, settings, settings.plan(tenant.plan)
    )
    minimum = capped_compute_s(
        model_for(catalog, settings, work.detector_mode), work, min(MIN_CAPPED_S, work.duration_s)
    )
    if cap >= minimum:
        return
    message = (
        f"max_compute_s {cap:g} s does not cover the start of the run: its estimate for the "
        f"first {MIN_CAPPED_S:g} s of video is {minimum:.2f} s (max_compute_s >= {minimum:.2f})"
    )
    error = {"loc": ["body", "max_compute_s"], "msg": message, "minimum": round(minimum, 3)}
    raise ValidationFailed(message, errors=[error])


def plan_left(catalog: Catalog, tenant: Tenant, limits: PlanLimits) -> dict[str, float]:
    """What the tenant's plan has left this month (and held in all)."""
    usage = UsageStore(catalog).of(tenant.tenant_id, now_rfc3339())
    return {
        "executions": max(limits.executions_per_month - usage.executions, 0),
        "processed_s": round(max(limits.processed_s_per_month - usage.processed_s, 0.0), 3),
        "storage_bytes": max(limits.storage_bytes - usage.storage_bytes, 0),
        "videos": max(limits.videos - usage.videos, 0),
    }


def refusal(catalog: Catalog, tenant: Tenant, limits: PlanLimits) -> PlanLimitExceeded | None:
    """The 402 execute would answer now, read without counting anything."""
    with catalog.read() as conn:
        try:
            check_plan(conn, tenant.tenant_id, now_rfc3339(), limits)
        except PlanLimitExceeded as exc:
            return exc
    return None


def price_of(work: Workload, settings: Settings, options: RunOptions) -> dict[str, Any]:
    """The price the run would be billed, as ``cost.json`` computes it (capped by max_cost)."""
    minutes = round(work.duration_s / 60.0, 4)
    amount = round(minutes * settings.price_per_video_minute, 4)
    if options.max_cost is not None:
        amount = min(amount, options.max_cost)
    return {"per_video_minute": settings.price_per_video_minute, "amount": amount}


def estimate_run(
    catalog: Catalog,
    store: BlobStore | None,
    settings: Settings,
    tenant: Tenant,
    video_id: str,
    options: RunOptions,
) -> DryRunEstimate:
    """The dry run's answer for the tenant's video (nothing is written).

    Raises:
        NotFound: no such video for this tenant.
        ValidationFailed, PlanLimitExceeded: the options themselves are refused, as execute's.
    """
    limits = settings.plan(tenant.plan)
    chosen = options.resolved(settings, limits)
    video = VideoStore(catalog).get(tenant.tenant_id, video_id)
    source = known_source(catalog, store, settings, video)
    work = workload_of(source, chosen, settings, limits)
    model = model_for(catalog, settings, work.detector_mode)
    stages = model.stage_seconds(work)
    refused = refusal(catalog, tenant, limits)
    estimate = Estimate(
        duration_s=round(work.duration_s, 3),
        duration_known=source.duration_s is not None,
        duration_from=source.found,
        frames_decoded=work.frames_decoded,
        frames_analysed=work.frames_analysed,
        chunks=work.chunks,
        stages={name: round(seconds, 3) for name, seconds in stages.items()},
        compute_s=round(sum(stages.values()), 3),
        wall_s=round(model.wall_s(work, stages), 3),
        model=EstimateModel(
            source=model.source, runs_used=model.runs_used, fitted_at=model.fitted_at
        ),
        units={"video_minutes": round(work.duration_s / 60.0, 4)},
        price=EstimatePrice(**price_of(work, settings, chosen)),
        header=_header_of(source.header),
    )
    return DryRunEstimate(
        video_id=video_id,
        estimate=estimate,
        plan=PlanLeft(name=tenant.plan, left=plan_left(catalog, tenant, limits)),
        caps=_caps(model, work, chosen),
        would_be_refused=problem_body(refused, None) if refused else None,
    )


def _header_of(header: SourceHeader | None) -> EstimateHeader | None:
    if header is None:
        return None
    return EstimateHeader(**{name: getattr(header, name) for name in EstimateHeader.model_fields})


def _caps(model: CostModel, work: Workload, options: RunOptions) -> EstimateCaps:
    cap = options.max_compute_s
    first = min(MIN_CAPPED_S, work.duration_s)
    return EstimateCaps(
        max_cost=options.max_cost,
        max_compute_s=cap,
        stops_at_s=stops_at_s(model, work, cap) if cap is not None else None,
        minimum_compute_s=round(capped_compute_s(model, work, first), 3),
    )
