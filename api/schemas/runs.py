"""Response model of execute (operation 3)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ExecuteAccepted(BaseModel):
    """The run was queued; follow it in the video's ``latest_run``."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "video_id": "vid_01jd3k8m2qa7x4r5t6y7v8w9z0",
                    "run_id": "run_01jd3k9a1b2c3d4e5f6g7h8j9k",
                    "state": "queued",
                }
            ]
        }
    )

    video_id: str
    run_id: str
    state: str


class StopAccepted(BaseModel):
    """A stop of a live session was taken: the session's current run, after the stop."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "video_id": "vid_01jd3k8m2qa7x4r5t6y7v8w9z0",
                    "run_id": "run_01jd3kb7c8d9e0f1g2h3j4k5m6",
                    "state": "running",
                    "stage": "window 3: following",
                }
            ]
        }
    )

    video_id: str
    run_id: str  # the session's current window run (the one named may be an earlier window)
    state: str  # running: its window closes and publishes; failed: it was queued, now stopped
    stage: str | None = None
