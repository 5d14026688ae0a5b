"""Plans: what a tenant may use. The ``sandbox`` plan is what strangers get (API.md, op. 9).

Plans live in settings (``VES_PLANS``, JSON: ``{"sandbox": {...}, "team": {...}}``); a plan not
named there falls back to ``sandbox``'s limits, so a tenant is never unlimited by accident.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

GiB = 1024**3

LIMIT_NAMES = (
    "videos",
    "executions_per_month",
    "processed_s_per_month",
    "max_video_s",
    "concurrent_runs",
    "asks_per_day",
    "searches_per_day",
    "storage_bytes",
    "retention_days",
    "live_window_s",
    "live_window_max_s",
)


class PlanLimits(BaseModel):
    """The limits of one plan (sandbox defaults from API.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    videos: int = Field(25, ge=0, description="Videos registered, in all.")
    executions_per_month: int = Field(50, ge=0, description="Executions per calendar month.")
    processed_s_per_month: float = Field(
        3600.0, ge=0, description="Seconds of video processed per calendar month."
    )
    max_video_s: float = Field(600.0, gt=0, description="Longest stretch of one video processed.")
    concurrent_runs: int = Field(2, ge=1, description="Runs queued or running at once.")
    asks_per_day: int = Field(200, ge=0, description="Questions asked per UTC day.")
    searches_per_day: int = Field(
        2000, ge=0, description="Workspace searches per UTC day (`GET /api/product/search`)."
    )
    storage_bytes: int = Field(2 * GiB, ge=0, description="Bytes of published artifacts kept.")
    retention_days: int = Field(7, ge=1, description="Days a run's artifacts are kept.")
    bill_failed_runs: bool = Field(
        False,
        description=(
            "Whether a failed run's processed seconds count; by default only succeeded runs "
            "count, so a source that turns out broken costs nothing."
        ),
    )
    # Live HLS (issue 17): the window of a live stream one run processes.
    live_window_s: float = Field(
        60.0, gt=0, description="Seconds of a live HLS stream one window processes, by default."
    )
    live_window_max_s: float = Field(
        300.0, gt=0, description="The longest window of a live HLS stream `window_s` may ask."
    )


DEFAULT_PLANS = {"sandbox": PlanLimits()}
