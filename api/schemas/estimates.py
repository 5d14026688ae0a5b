"""Response model of a dry run of execute: the run's estimate (docs/how-to/estimates.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tasks.decode.header import HeaderReason

_EXAMPLE: dict[str, Any] = {
    "video_id": "vid_01jd3k8m2qa7x4r5t6y7v8w9z0",
    "dry_run": True,
    "estimate": {
        "duration_s": 60.0,
        "duration_known": True,
        "duration_from": "header",
        "frames_decoded": 1500,
        "frames_analysed": 300,
        "chunks": 1,
        "stages": {
            "decode": 0.12,
            "sample": 2.1,
            "detect": 4.4,
            "track": 0.16,
            "world_state": 0.29,
            "timeline": 0.03,
            "evidence": 0.7,
            "cost": 0.01,
        },
        "compute_s": 7.81,
        "wall_s": 9.33,
        "model": {"source": "fitted", "runs_used": 14, "fitted_at": "2026-11-25T22:41:07.120Z"},
        "units": {"video_minutes": 1.0},
        "price": {"per_video_minute": 0.05, "amount": 0.05, "currency": "USD"},
        "header": {
            "reason": None,
            "detail": None,
            "size_bytes": 7512345,
            "bitrate_bps": 1001646,
            "fps": 25.0,
            "width": 1280,
            "height": 720,
            "keyframe_interval_s": 2.0,
            "live": False,
            "bytes_read": 262144,
            "read_s": 0.041,
        },
    },
    "plan": {
        "name": "sandbox",
        "left": {
            "executions": 48,
            "processed_s": 3480.0,
            "storage_bytes": 2147000000,
            "videos": 23,
        },
    },
    "caps": {"max_cost": None, "max_compute_s": 5.0, "stops_at_s": 38.5, "minimum_compute_s": 1.9},
    "would_be_refused": None,
}


DurationFrom = Literal["previous_run", "probe", "header", "playlist", "live_window", "bound"]


class EstimateModel(BaseModel):
    """Where the figures come from."""

    source: Literal["fitted", "fallback"] = Field(
        description="`fitted` on this installation's runs of the detector mode, or the "
        "documented `fallback` constants (fewer than `VES_COST_MODEL_MIN_RUNS` runs)."
    )
    runs_used: int = Field(description="Runs of the detector mode the stages were fitted on.")
    fitted_at: str | None = Field(description="When the newest of those runs was recorded.")


class EstimatePrice(BaseModel):
    per_video_minute: float = Field(description="`VES_PRICE_PER_VIDEO_MINUTE`.")
    amount: float = Field(description="What the run would be billed (never above `max_cost`).")
    currency: str = "USD"


class EstimateHeader(BaseModel):
    """The read of a URL's container header (or an HLS playlist) the estimate rests on."""

    reason: HeaderReason | None = Field(
        description="None: the length was read. Else why not, and the estimate is for the "
        "bound: `unreachable` (no answer, an HTTP error), `refused` (the address guard: a "
        "private, loopback or link-local address), `not_video`, `too_large` (the header is not "
        "within `VES_HEADER_MAX_BYTES`), `timeout` (not within `VES_SOURCE_TIMEOUT_S`), "
        "`no_duration` (the container does not declare it, e.g. MPEG-TS), `live` (a live "
        "playlist has no end: the estimate is for one window)."
    )
    detail: str | None = Field(description="The reason in words.")
    size_bytes: int | None = Field(description="The file's length as the server declares it.")
    bitrate_bps: float | None = Field(
        description="Bits per second: the size over the length (HLS: the first segment's)."
    )
    fps: float | None
    width: int | None
    height: int | None
    keyframe_interval_s: float | None = Field(
        description="Median seconds between keyframes (an MP4's index; else the packets read)."
    )
    live: bool = Field(description="A live HLS playlist (no `#EXT-X-ENDLIST`).")
    bytes_read: int = Field(description="Media bytes fetched to read the header.")
    read_s: float = Field(description="Seconds the read took.")


class Estimate(BaseModel):
    """What the run would process, the compute and time it would take, and its price."""

    duration_s: float = Field(
        description="Seconds of video to process, after `max_duration_s`, the plan's "
        "`max_video_s`, `VES_MAX_DURATION_S` and `max_cost`."
    )
    duration_known: bool = Field(
        description="False when the video's length is not known before a run (the header of a "
        "URL source could not be read, a live stream): the estimate is then for the bound."
    )
    duration_from: DurationFrom = Field(
        description="Where the length, frame rate and picture size come from: an earlier run of "
        "the video, a probe of the uploaded file, the container header of a URL source (read "
        "by byte ranges), an HLS VOD playlist (the sum of its `#EXTINF`), a live stream's "
        "window (`window_s`), or (unknown: `header.reason` says why) the bound, at 25 fps "
        "1280x720 where the header did not say."
    )
    frames_decoded: int
    frames_analysed: int
    chunks: int = Field(description="Chunks sampled side by side (1: one pass).")
    stages: dict[str, float] = Field(description="Expected compute seconds per stage.")
    compute_s: float = Field(description="Their sum.")
    wall_s: float = Field(description="Expected seconds from execute to success (no queue).")
    model: EstimateModel
    units: dict[str, float] = Field(description="`video_minutes` billed.")
    price: EstimatePrice
    header: EstimateHeader | None = Field(
        None,
        description="The header read of a URL or HLS source never processed (None when an "
        "earlier run or an uploaded file told the length).",
    )


class PlanLeft(BaseModel):
    name: str
    left: dict[str, float] = Field(
        description="What the plan has left: `executions` and `processed_s` this month, "
        "`storage_bytes`, `videos`."
    )


class EstimateCaps(BaseModel):
    max_cost: float | None
    max_compute_s: float | None
    stops_at_s: float | None = Field(
        description="Where the caps are expected to stop the run (None: it processes it all)."
    )
    minimum_compute_s: float = Field(
        description="The least `max_compute_s` accepted: the estimate for one second of video."
    )


class DryRunEstimate(BaseModel):
    """A dry run's answer: nothing was queued, nothing counted."""

    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE]})

    video_id: str
    dry_run: Literal[True] = True
    estimate: Estimate
    plan: PlanLeft
    caps: EstimateCaps
    would_be_refused: dict[str, Any] | None = Field(
        None,
        description="The problem detail (RFC 9457) execute would answer now, e.g. 402 "
        "`plan_limit_exceeded`; None when it would be accepted.",
    )
