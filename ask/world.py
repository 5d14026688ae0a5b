"""What one succeeded run knows, loaded from its artifacts (DuckDB, through ``storage``).

Published runs never change, so a run's knowledge is loaded once and kept (a few hundred runs
at most, each a few MB even for an hour of video).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ask.types import Citation, Coverage
from storage.artifacts.layout import COST
from storage.artifacts.reads import ArtifactReader
from ves.detector_mode import DetectorMode

TEXT = "text"
PARTS = frozenset({"face"})  # classes that are part of another object (a face of a person)


@dataclass(frozen=True)
class Thing:
    """A scene-graph object: physical (``motion``, a YOLO class) or a text read in the video."""

    object_id: str
    cls: str
    first_s: float
    last_s: float
    confidence: float
    zones: tuple[str, ...]  # zone names
    text: str | None
    evidence_id: str
    colour: str | None = None  # measured dominant colour (runs since schema version 3)
    colour_confidence: float = 0.0
    size: float | None = None  # mean box area, share of the frame
    speed: float | None = None  # frame widths a second, over its time in view
    heading_x: float | None = None  # net left-right travel, frame widths (negative: left)
    identity_id: str | None = None  # the thing it is an appearance of (schema version 4)
    ends_at_edge: bool | None = None  # its last box at the picture's edge (None: not measured)
    starts_at_edge: bool | None = None  # its first box at the picture's edge

    @property
    def seen_s(self) -> float:
        return self.last_s - self.first_s


@dataclass(frozen=True)
class Event:
    event_id: str
    type: str
    t_s: float
    end_s: float | None
    object_id: str | None
    zone: str | None  # zone name
    confidence: float
    evidence_id: str


@dataclass
class RunWorld:
    """The run's objects, events and evidence spans, indexed for answering."""

    video_id: str
    run_id: str
    coverage: Coverage
    things: list[Thing]
    events: list[Event]
    spans: dict[str, Citation]
    zones: list[str]
    classes_known: frozenset[str]  # what the run's detectors can name
    # (object id, object id, start s, end s): two objects' boxes close together (relations)
    near: list[tuple[str, str, float, float]] = field(default_factory=list)
    # object id -> (zone name, start s, end s): when it was in each zone (relations in_zone)
    in_zone: dict[str, list[tuple[str, float, float]]] = field(default_factory=dict)
    by_id: dict[str, Thing] = field(default_factory=dict)
    confidence: dict[str, float] = field(default_factory=dict)  # evidence id -> confidence
    # event type -> its events in time order: a question about one kind of event scans only it
    events_by_type: dict[str, list[Event]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {t.object_id: t for t in self.things}
        self.events_by_type = {}
        for event in self.events:
            self.events_by_type.setdefault(event.type, []).append(event)
        self.confidence = {t.evidence_id: t.confidence for t in self.things}
        self.confidence |= {e.evidence_id: e.confidence for e in self.events}

    @property
    def physical(self) -> list[Thing]:
        """Whole things of the scene: not texts, and not parts of another thing (faces)."""
        return [t for t in self.things if t.cls != TEXT and t.cls not in PARTS]

    @property
    def texts(self) -> list[Thing]:
        return [t for t in self.things if t.cls == TEXT]

    def went_out(self, thing: Thing) -> bool:
        """Whether the thing left the picture (its last box at the edge) or was in view to the
        end, rather than lost from view inside the picture (hidden, or no longer found)."""
        return thing.ends_at_edge is not False or self.coverage.duration_s - thing.last_s < 1.0

    def cite(self, evidence_id: str) -> Citation:
        return self.spans[evidence_id]

    def reads_text(self) -> bool:
        return DetectorMode.parse(self.coverage.detector_mode).reads_text


def _known_classes(cost: dict[str, Any], things: list[Thing]) -> frozenset[str]:
    names = {t.cls for t in things}
    yolo = cost.get("detectors", {}).get("yolo", {})
    names |= set(yolo.get("classes", []))
    mode = DetectorMode.parse(cost.get("detector_mode", "motion"))
    names |= set(mode.classes())
    if mode.classes_by_motion:
        names.add("motion")
    return frozenset(names)


def _thing(o: dict[str, Any], zones: dict[str, str]) -> Thing:
    attributes = json.loads(o["attributes"])
    return Thing(
        o["object_id"],
        o["class"],
        o["first_seen_s"],
        o["last_seen_s"],
        float(o["confidence"]),
        tuple(zones[z] for z in o["zones"] if z in zones),
        attributes.get("text"),
        o["evidence_ids"][0],
        o.get("colour"),
        float(o.get("colour_confidence") or 0.0),
        attributes.get("size"),
        attributes.get("speed"),
        attributes.get("heading_x"),
        o.get("identity_id"),
        attributes.get("ends_at_edge"),
        attributes.get("starts_at_edge"),
    )


def load_world(reader: ArtifactReader, run_dir: str | Path, video_id: str, run_id: str) -> RunWorld:
    """Read a published run's knowledge."""
    zones = {z["zone_id"]: z["name"] for z in reader.rows(run_dir, "zones")}
    things = [_thing(o, zones) for o in reader.rows(run_dir, "objects", order_by="first_seen_s")]
    events = [
        Event(
            e["event_id"],
            e["type"],
            e["t_s"],
            e["end_s"],
            e["object_id"],
            zones.get(e["zone_id"] or ""),
            float(e["confidence"]),
            e["evidence_ids"][0],
        )
        for e in reader.rows(run_dir, "events", order_by="t_s")
    ]
    spans = {
        s["evidence_id"]: Citation(s["evidence_id"], s["start_s"], s["end_s"])
        for s in reader.span_times(run_dir)
    }
    cost = reader.document(run_dir, COST)
    still = tuple(
        (float(s["start_s"]), float(s["end_s"])) for s in cost["frames"].get("skipped_spans", [])
    )
    relations = reader.rows(run_dir, "relations")
    near = [
        (r["subject_id"], r["object_id"], float(r["start_s"]), float(r["end_s"]))
        for r in relations
        if r["predicate"] == "near"
    ]
    in_zone: dict[str, list[tuple[str, float, float]]] = {}
    for r in relations:
        if r["predicate"] == "in_zone" and r["object_id"] in zones:
            stretch = (zones[r["object_id"]], float(r["start_s"]), float(r["end_s"]))
            in_zone.setdefault(r["subject_id"], []).append(stretch)
    gate = cost.get("activity_gate") or {}
    coverage = Coverage(
        float(cost["processed_s"]),
        int(cost["frames"]["analysed"]),
        str(cost["detector_mode"]),
        still,
        gate.get("sure_event_s"),  # set in keyframe mode only
    )
    return RunWorld(
        video_id,
        run_id,
        coverage,
        things,
        events,
        spans,
        sorted(set(zones.values())),
        _known_classes(cost, things),
        near,
        in_zone,
    )


class WorldCache:
    """Loaded runs by artifact folder, least recently used dropped first."""

    def __init__(self, reader: ArtifactReader, size: int = 64) -> None:
        self.reader, self.size = reader, size
        self._worlds: OrderedDict[str, RunWorld] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, run_dir: str | Path, video_id: str, run_id: str) -> RunWorld:
        key = str(run_dir)
        with self._lock:
            if key in self._worlds:
                self._worlds.move_to_end(key)
                return self._worlds[key]
        world = load_world(self.reader, run_dir, video_id, run_id)
        with self._lock:
            self._worlds[key] = world
            while len(self._worlds) > self.size:
                self._worlds.popitem(last=False)
        return world
