"""Response models of operation 9 (billing state)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class PlanPublic(BaseModel):
    name: str = Field(examples=["sandbox"])
    limits: dict[str, Any] = Field(
        examples=[
            {
                "videos": 25,
                "executions_per_month": 50,
                "processed_s_per_month": 3600.0,
                "max_video_s": 600.0,
                "concurrent_runs": 2,
                "asks_per_day": 200,
                "searches_per_day": 2000,
                "storage_bytes": 2147483648,
                "retention_days": 7,
                "bill_failed_runs": False,
            }
        ]
    )


class UsagePublic(BaseModel):
    period_start: str = Field(description="First day of the period (UTC).", examples=["2026-11-01"])
    period_end: str = Field(description="Last day of the period (UTC).", examples=["2026-11-30"])
    videos: int = Field(description="Videos registered.")
    executions: int = Field(description="Executions this period.")
    processed_s: float = Field(description="Seconds of video processed by succeeded runs.")
    asks: int = Field(description="Questions asked today (UTC).")
    asks_this_month: int
    searches: int = Field(0, description="Workspace searches today (UTC).")
    storage_bytes: int = Field(
        description="Bytes kept now: published artifacts and evidence bundles (until they expire)."
    )
    active_runs: int = Field(description="Runs queued or running now.")


class BillingState(BaseModel):
    plan: PlanPublic
    usage: UsagePublic
    remaining: dict[str, float] = Field(
        description="What is left of each limit: videos, executions, processed_s, asks (today), "
        "searches (today), storage_bytes, concurrent_runs."
    )
    status: Literal["active", "limited"]
    exhausted: list[str] = Field(description="The limits used up (when status is limited).")
