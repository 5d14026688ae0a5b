"""Stage 8, cost: ``cost.json``, what the run did and what it costs, in API.md's shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from prefect import task
from prefect.cache_policies import NONE

from storage.artifacts.layout import COST, write_json
from tasks.context import RunContext
from ves.clock import to_rfc3339, utc_now


@dataclass(frozen=True)
class CostInputs:
    """Everything ``cost.json`` reports, gathered by the flow."""

    video_id: str
    run_id: str
    detector_mode: str
    fallback_reason: str | None
    duration_s: float
    processed_s: float
    stages: dict[str, float]
    frames_decoded: int
    frames_sampled: int
    frames_analysed: int
    retention_days: int
    price_per_video_minute: float
    truncated: bool = False
    truncation: dict[str, Any] | None = None  # why: {reason, at_s, cap} (flows/costing.py)
    max_cost: float | None = None  # the run's caps (docs/how-to/estimates.md)
    max_compute_s: float | None = None
    detectors: dict[str, dict[str, Any]] = field(default_factory=dict)
    frames_held: int = 0  # sampled times the last decoded frame stood for (still stretches)
    frames_skipped: int = 0  # frames the activity gate did not decode
    activity_gate: dict[str, Any] = field(default_factory=lambda: {"used": False})
    review_copy: dict[str, Any] | None = None  # tasks/review: ReviewCopy.as_cost()


def build_cost(inputs: CostInputs) -> dict[str, Any]:
    """The ``cost.json`` document (the pure core of the stage)."""
    minutes = round(inputs.processed_s / 60.0, 4)
    amount = round(minutes * inputs.price_per_video_minute, 4)
    if inputs.max_cost is not None:  # rounding never bills past the cap
        amount = min(amount, inputs.max_cost)
    expires = utc_now() + timedelta(days=inputs.retention_days)
    return {
        "video_id": inputs.video_id,
        "run_id": inputs.run_id,
        "detector_mode": inputs.detector_mode,
        "fallback": {"used": inputs.fallback_reason is not None, "reason": inputs.fallback_reason},
        "detectors": inputs.detectors,
        "duration_s": round(inputs.duration_s, 3),
        "processed_s": round(inputs.processed_s, 3),
        "truncated": inputs.truncated,
        "truncation": inputs.truncation,
        "caps": {"max_cost": inputs.max_cost, "max_compute_s": inputs.max_compute_s},
        "stages": {name: round(seconds, 4) for name, seconds in inputs.stages.items()},
        "frames": {
            "decoded": inputs.frames_decoded,
            "sampled": inputs.frames_sampled,
            "analysed": inputs.frames_analysed,
            "held": inputs.frames_held,
            "skipped": inputs.frames_skipped,
            "skipped_spans": inputs.activity_gate.get("skipped_spans", []),
        },
        "activity_gate": {k: v for k, v in inputs.activity_gate.items() if k != "skipped_spans"},
        "review_copy": inputs.review_copy,
        "retention": {"days": inputs.retention_days, "expires_at": to_rfc3339(expires)},
        "cost": {
            "units": minutes,
            "unit": "video_minute",
            "amount": amount,
            "currency": "USD",
        },
    }


@task(name="cost", cache_policy=NONE)
def cost_task(ctx: RunContext, inputs: CostInputs) -> dict[str, Any]:
    """Write ``cost.json``; returns it (the flow also shows it in the Prefect UI)."""
    ctx.report("cost")
    document = build_cost(inputs)
    write_json(ctx.layout.out_dir / COST, document)
    return document
