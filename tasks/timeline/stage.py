"""Stage 6, timeline: events and refresh markers in time order, each with a readable label."""

from __future__ import annotations

import json
from typing import Any

from prefect import task
from prefect.cache_policies import NONE

from storage.artifacts.layout import read_rows, write_rows
from tasks.activity.stage import STILL_REASON
from tasks.context import RunContext
from tasks.detections import TEXT_CLASS
from tasks.sample.frames import still_stretches
from tasks.world_state.stage import event_order

_VERBS = {
    "appear": "appears",
    "disappear": "disappears",
    "enter_zone": "enters",
    "exit_zone": "leaves",
    "dwell": "stays still",
    "scene_change": "changes",
}


def _text_label(event: dict[str, Any], texts: dict[str, str]) -> str:
    said = texts.get(event.get("object_id") or "", "")
    label = f"text {json.dumps(said, ensure_ascii=False)} seen"
    if event.get("end_s") is not None:
        label += f" for {event['end_s'] - event['t_s']:.1f} s"
    return label


def _label(event: dict[str, Any], zone_names: dict[str, str], classes: dict[str, str]) -> str:
    subject = event.get("object_id")
    who = f"{classes.get(subject, 'object')} {subject}" if subject else "the scene"
    verb = _VERBS.get(event["type"], event["type"].replace("_", " "))
    zone = zone_names.get(event.get("zone_id") or "", "")
    text = f"{who} {verb}" + (f" zone {zone}" if zone and event["type"] != "dwell" else "")
    if event["type"] == "dwell" and event.get("end_s") is not None:
        text += f" for {event['end_s'] - event['t_s']:.1f} s" + (f" in zone {zone}" if zone else "")
    return text


def _said(obj: dict[str, Any]) -> str:
    attributes = obj["attributes"]
    if isinstance(attributes, str):
        attributes = json.loads(attributes)
    return str(attributes.get("text", ""))


_COLUMNS = ("event_id", "type", "object_id", "zone_id", "reason", "score", "end_s")


def _row(t_s: float, kind: str, label: str, **given: Any) -> dict[str, Any]:
    """A timeline row: the columns its kind does not set are null."""
    return {"t_s": t_s, "kind": kind, "label": label, **dict.fromkeys(_COLUMNS), **given}


def build_timeline(
    events: list[dict[str, Any]],
    refresh_markers: list[dict[str, Any]],
    zones: list[dict[str, Any]],
    objects: list[dict[str, Any]],
    still: list[tuple[float, float]] | None = None,
    still_reason: str = STILL_REASON,
) -> list[dict[str, Any]]:
    """Timeline rows (the pure core of the stage), sorted by time, events before markers, and
    the ``still`` stretches (the activity gate's, judged still for ``still_reason``)."""
    events = sorted(events, key=event_order)
    zone_names = {z["zone_id"]: z["name"] for z in zones}
    classes = {o["object_id"]: o["class"] for o in objects}
    texts = {o["object_id"]: _said(o) for o in objects if o["class"] == TEXT_CLASS}
    rows = [
        _row(
            e["t_s"],
            "event",
            _text_label(e, texts) if e["type"] == "text_seen" else _label(e, zone_names, classes),
            event_id=e["event_id"],
            type=e["type"],
            object_id=e.get("object_id"),
            zone_id=e.get("zone_id"),
            score=e["confidence"],
        )
        for e in events
    ]
    rows += [
        _row(
            m["t_s"],
            "refresh_marker",
            f"world state rebuilt ({m['reason'].replace('_', ' ')})",
            reason=m["reason"],
            score=m["score"],
        )
        for m in refresh_markers
    ]
    rows += [
        _row(
            start,
            "still",
            f"nothing changes for {end - start:.1f} s (judged still, not decoded)",
            reason=f"judged still: {still_reason}; not decoded",
            end_s=end,
        )
        for start, end in still or []
    ]
    # Events keep the causal order the world state gave them; markers follow events at a time.
    return sorted(rows, key=lambda r: (r["t_s"], r["kind"] != "event"))


def refresh_markers(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The refresh markers among the sampled frames."""
    return [
        {"t_s": f["t_s"], "reason": f["refresh_reason"], "score": f["scene_score"]}
        for f in frames
        if f["refresh"]
    ]


@task(name="timeline", cache_policy=NONE)
def timeline_task(ctx: RunContext, still_reason: str = STILL_REASON) -> int:
    """Build the timeline; writes ``timeline.parquet``; returns its row count. ``still_reason``:
    why the activity gate judged its still stretches still (keyframe mode says what it can
    miss)."""
    ctx.report("timeline")
    out = ctx.layout.out_dir

    frames = read_rows(out, "frames")
    rows = build_timeline(
        read_rows(out, "events"),
        refresh_markers(frames),
        read_rows(out, "zones"),
        read_rows(out, "objects"),
        still_stretches(frames),
        still_reason,
    )
    write_rows(out, "timeline", rows)
    return len(rows)
