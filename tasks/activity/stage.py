"""The ``map-activity`` task: a run's activity gate, from the activity map of its video file.

With ``skip_still`` on (the run option, else ``VES_SKIP_STILL``), the run maps its file's activity
(``tasks.activity.map``) before sampling and the sample stage decodes only the active spans
(``tasks.sample.gate``). Where the stream has no usable keyframe cadence the map falls back:
every frame is decoded, as without the gate, and ``cost.json`` says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from tasks.activity.map import ActivityMap, Cue, map_activity
from tasks.context import RunContext
from tasks.decode.stage import SourceInfo
from tasks.sample.gate import Gate

STILL_REASON = "keyframes matched and packets stayed at the stream's idle level"
CUE_WHY = {
    "packets": (
        "the default: judged from packet sizes and keyframes, which holds where a stream's"
        " packets rise with activity; where they do not, or the stream cannot be judged, the"
        " map falls back (see fallback) and everything is decoded"
    ),
    "keyframes": (
        "asked for (skip_still: keyframes): stillness judged from keyframes alone, for streams"
        " whose packet sizes do not follow activity; an event shorter than sure_event_s can be"
        " missed between two keyframes"
    ),
}


def still_reason(summary: dict[str, Any]) -> str:
    """Why a stretch was judged still, as cost.json and the timeline say it."""
    if summary.get("cue") == "keyframes":
        sure = summary.get("sure_event_s")
        return (
            f"keyframes matched (keyframe mode: an event shorter than {sure:g} s, the longest"
            " GOP, can lie between two keyframes unseen)"
            if sure
            else "keyframes matched (keyframe mode)"
        )
    return STILL_REASON


@dataclass(frozen=True)
class GatePlan:
    """What the gate decided for a run: the gate (None: every frame is decoded) and the
    ``activity_gate`` block of ``cost.json``."""

    gate: Gate | None
    summary: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def off(cls) -> GatePlan:
        return cls(None, {"used": False, "fallback": None})


def plan_gate(activity: ActivityMap) -> GatePlan:
    """The gate of a video from its activity map (pure)."""
    summary: dict[str, Any] = {
        "used": activity.fallback is None,
        "cue": activity.cue,
        "why": CUE_WHY[activity.cue],
        "sure_event_s": activity.sure_event_s,
        "fallback": activity.fallback,
        "map_s": round(activity.cost_s, 3),
        "still_fraction": round(activity.still_fraction, 4),
        "idle_level": activity.idle_level,
    }
    if activity.fallback is not None or not activity.starts_s:
        summary["still_fraction"] = 0.0
        return GatePlan(None, summary)
    gate = Gate.of_spans(activity.active_spans(), list(activity.starts_s), activity.ends_s[-1])
    return GatePlan(gate, summary)


def gate_for(path: Path, cue: Cue = "packets") -> GatePlan:
    """Map ``path``'s activity (judged by ``cue``) and plan its gate."""
    return plan_gate(map_activity(path, cue=cue))


@task(name="map-activity", cache_policy=NONE)
def map_activity_task(ctx: RunContext, source: SourceInfo) -> GatePlan:
    """Map the video's activity (packets and keyframes only) when the run skips still stretches."""
    if ctx.still_cue is None:
        return GatePlan.off()
    plan = gate_for(Path(source.path), ctx.still_cue)
    logger = get_run_logger()
    if plan.gate is None:
        logger.warning("activity gate off for this video: %s", plan.summary["fallback"])
    else:
        logger.info(
            "activity map in %.2f s: %.0f %% of the video judged still, %d decode ranges",
            plan.summary["map_s"],
            100 * plan.summary["still_fraction"],
            len(plan.gate.ranges),
        )
    return plan


def gate_summary(plan: GatePlan, still_spans: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """``cost.json``'s ``activity_gate`` block: whether the gate ran (or why it fell back) and
    what the map cost; and the stretches whose sampled frames were held (judged still)."""
    reason = still_reason(plan.summary)
    skipped = [
        {"start_s": round(a, 3), "end_s": round(b, 3), "reason": reason} for a, b in still_spans
    ]
    return {**plan.summary, "skipped_spans": skipped}
