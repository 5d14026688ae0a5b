"""Choosing what an export holds: the spans the request selects, and the slices of the scene
graph and the timeline that those spans belong to."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tasks.export.windows import SpanCut, cut_span
from ves.errors import InvalidRequest

Span = dict[str, Any]


@dataclass(frozen=True)
class Selection:
    """Which spans to export: the ids given, else those overlapping ``start_s``..``end_s``
    (their clips cut to that range), else every span of the run."""

    evidence_ids: tuple[str, ...] = ()
    start_s: float | None = None
    end_s: float | None = None

    def picks(self, span: Span) -> bool:
        if self.evidence_ids:
            return span["evidence_id"] in self.evidence_ids
        after = self.start_s is None or span["end_s"] >= self.start_s
        return after and (self.end_s is None or span["start_s"] <= self.end_s)

    @property
    def range_s(self) -> tuple[float | None, float | None]:
        """The time range clips are cut to (open ends None; both None when spans are by id)."""
        return (None, None) if self.evidence_ids else (self.start_s, self.end_s)

    def cut(self, span: Span) -> SpanCut:
        """The span as exported: cut to the range when it reaches outside."""
        return cut_span(span, *self.range_s)


def select_spans(spans: Sequence[Span], selection: Selection) -> list[Span]:
    """The spans the selection picks, in time order; an unknown id or no span at all is refused."""
    unknown = set(selection.evidence_ids) - {s["evidence_id"] for s in spans}
    if unknown:
        raise InvalidRequest(f"no evidence span {', '.join(sorted(unknown))} in the run")
    chosen = [s for s in spans if selection.picks(s)]
    if not chosen:
        raise InvalidRequest("no evidence span of the run matches the selection")
    return chosen


def slice_scene_graph(graph: Mapping[str, Any], spans: Sequence[Span]) -> dict[str, Any]:
    """The objects and events the spans show, the zones and relations that touch them."""
    objects = {s["object_id"] for s in spans if s.get("object_id")}
    events = {s["event_id"] for s in spans if s.get("event_id")}
    kept_events = [
        e for e in graph["events"] if e["event_id"] in events or e["object_id"] in objects
    ]
    zones = {e.get("zone_id") for e in kept_events}
    return {
        **graph,
        "objects": [o for o in graph["objects"] if o["object_id"] in objects],
        "events": kept_events,
        "zones": [z for z in graph["zones"] if z["zone_id"] in zones],
        "relations": [
            r for r in graph["relations"] if r["subject_id"] in objects or r["object_id"] in objects
        ],
    }


def slice_timeline(timeline: Mapping[str, Any], spans: Sequence[Span]) -> dict[str, Any]:
    """The timeline's events and refresh markers within the spans' whole time range."""
    start, end = min(s["start_s"] for s in spans), max(s["end_s"] for s in spans)
    inside = [e for e in timeline["events"] if start <= e["t_s"] <= end]
    markers = [m for m in timeline["refresh_markers"] if start <= m["t_s"] <= end]
    return {**timeline, "events": inside, "refresh_markers": markers}
