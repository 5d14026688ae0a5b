"""Stage 5, world state: tracks become objects, zones, events and relations.

Every claim the world state makes is planned with the evidence span that will back it (one span
per object, one per event), so the evidence stage only has to draw and hash, and every id the
scene graph cites exists by construction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from storage.artifacts.layout import read_rows, read_table, write_rows
from tasks.context import RunContext
from tasks.detections import TEXT_CLASS, Detections, detections_from_table, track_numbers
from tasks.geometry import ZoneSpec, points_in_polygon
from tasks.sample.frames import Frames
from tasks.track.classes import ClassVote
from tasks.world_state.appearances import identities_of, number_appearances
from tasks.world_state.colour import Frame, measure_colour
from tasks.world_state.motion import measured_motion
from tasks.world_state.parts import FACE_CLASS, class_attributes, class_votes, part_of
from tasks.world_state.trajectories import (
    FramePick,
    Track,
    dwell_runs,
    near_times,
    split_tracks,
    stretches,
    true_runs,
    zone_membership,
)
from ves.ids import new_id


@dataclass(frozen=True)
class WorldConfig:
    """How tracks are read as behaviour."""

    zones: tuple[ZoneSpec, ...]
    sample_step_s: float
    dwell_s: float = 3.0
    dwell_radius: float = 0.03  # normalised: how far a centre may wander and still be "still"
    near_gap: float = 0.03
    near_min_s: float = 1.0
    short_track_s: float = 1.0
    low_confidence: float = 0.5


@dataclass(frozen=True)
class SpanPlan:
    """An evidence span to produce: its time, subject, frames and system review notes."""

    evidence_id: str
    start_s: float
    end_s: float
    object_id: str | None
    event_id: str | None
    confidence: float
    frames: tuple[FramePick, ...]
    notes: tuple[str, ...] = ()


@dataclass
class WorldState:
    """The scene graph's tables (as rows of their schemas) and the spans backing them."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    zones: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    refresh_markers: list[dict[str, Any]] = field(default_factory=list)
    spans: list[SpanPlan] = field(default_factory=list)


# Events at the same instant read in causal order: an object appears, leaves one zone, enters
# the next, ... and disappears last.
_CAUSAL_ORDER = {
    "scene_change": 0,
    "appear": 1,
    "exit_zone": 2,
    "enter_zone": 3,
    "dwell": 4,
    "text_seen": 5,
    "disappear": 6,
}


def event_order(event: dict[str, Any]) -> tuple[float, int, str]:
    """Sort key of events: time, then causal order of their types."""
    return event["t_s"], _CAUSAL_ORDER.get(event["type"], 5), event["type"]


def evidence_id_for(subject_id: str) -> str:
    """The id of the span backing an object or an event (``obj_x`` -> ``ev_x``)."""
    return "ev_" + subject_id.split("_", 1)[1]


class _Builder:
    """Accumulates rows and span plans while tracks are read."""

    def __init__(
        self,
        cfg: WorldConfig,
        last_sample_t: float,
        object_ids: dict[int, str],
        votes: dict[str, ClassVote],
        frame_of: Callable[[int], Frame] | None = None,
    ) -> None:
        self.cfg, self.last_sample_t, self.object_ids = cfg, last_sample_t, object_ids
        self.votes, self.frame_of = votes, frame_of
        self.world = WorldState()
        self.zone_ids = {z.name: new_id("zone") for z in cfg.zones}

    def event(
        self,
        kind: str,
        t: float,
        conf: float,
        frames: tuple[FramePick, ...],
        *,
        object_id: str | None = None,
        zone: str | None = None,
        end_s: float | None = None,
        notes: tuple[str, ...] = (),
    ) -> None:
        event_id = new_id("evt")
        evidence_id = evidence_id_for(event_id)
        start = t if end_s is not None else max(0.0, t - self.cfg.sample_step_s)
        stop = end_s if end_s is not None else t + self.cfg.sample_step_s
        self.world.events.append(
            {
                "event_id": event_id,
                "type": kind,
                "t_s": t,
                "end_s": end_s,
                "object_id": object_id,
                "zone_id": self.zone_ids.get(zone) if zone else None,
                "confidence": conf,
                "evidence_ids": [evidence_id],
            }
        )
        self.world.spans.append(
            SpanPlan(evidence_id, start, stop, object_id, event_id, conf, frames, notes)
        )

    def at_end(self, t: float) -> bool:
        return t >= self.last_sample_t - 1.5 * self.cfg.sample_step_s


def _object_notes(track: Track, conf: float, cfg: WorldConfig) -> tuple[str, ...]:
    notes = []
    if conf < cfg.low_confidence:
        notes.append(f"low confidence ({conf:.2f}): review before relying on it")
    if float(track.t[-1] - track.t[0]) < cfg.short_track_s:
        notes.append("short track: seen for under a second, may be noise")
    return tuple(notes)


def _add_object(b: _Builder, track: Track) -> str:
    object_id = b.object_ids.get(track.track_id) or new_id("obj")
    vote = b.votes.get(object_id)
    seen = float(np.mean(track.scores))
    # A named object's confidence is how sure its class is: the share of looks that agreed.
    conf = vote.share if vote is not None and vote.name == track.class_name else seen
    first, last = float(track.t[0]), float(track.t[-1])
    mid = len(track.t) // 2
    notes = _object_notes(track, conf, b.cfg)
    evidence_id = evidence_id_for(object_id)
    zones = [z.name for z in b.cfg.zones if zone_membership(track, z).any()]
    attributes = {"zone_names": zones, "samples": len(track.t)} | class_attributes(vote, seen)
    colour = None
    if track.class_name != FACE_CLASS:
        attributes |= measured_motion(track)
        colour = measure_colour(track, b.frame_of) if b.frame_of is not None else None
    b.world.objects.append(
        {
            "object_id": object_id,
            "class": track.class_name,
            "confidence": conf,
            "first_seen_s": first,
            "last_seen_s": last,
            "zones": [b.zone_ids[z] for z in zones],
            "attributes": json.dumps(attributes),
            "evidence_ids": [evidence_id],
            "detections": len(track.t),
            "colour": colour.name if colour else None,
            "colour_confidence": colour.confidence if colour else None,
        }
    )
    picks = tuple(dict.fromkeys([track.pick(0), track.pick(mid), track.pick(len(track.t) - 1)]))
    b.world.spans.append(SpanPlan(evidence_id, first, last, object_id, None, conf, picks, notes))
    b.event("appear", first, conf, (track.pick(0),), object_id=object_id, notes=notes)
    if not b.at_end(last):
        b.event("disappear", last, conf, (track.pick(len(track.t) - 1),), object_id=object_id)
    return object_id


def _add_text(b: _Builder, track: Track) -> str:
    """A text read in the video: an object of class ``text`` and one ``text_seen`` event that
    lasts while it stays (``end_s``), each backed by its span."""
    object_id = b.object_ids.get(track.track_id) or new_id("obj")
    conf = float(np.mean(track.scores))
    first, last = float(track.t[0]), float(track.t[-1])
    zones = [z.name for z in b.cfg.zones if zone_membership(track, z).any()]
    evidence_id = evidence_id_for(object_id)
    b.world.objects.append(
        {
            "object_id": object_id,
            "class": TEXT_CLASS,
            "confidence": conf,
            "first_seen_s": first,
            "last_seen_s": last,
            "zones": [b.zone_ids[z] for z in zones],
            "attributes": json.dumps(
                {"text": track.text, "zone_names": zones, "samples": len(track.t)}
            ),
            "evidence_ids": [evidence_id],
            "detections": len(track.t),
            "colour": None,
            "colour_confidence": None,
        }
    )
    end = len(track.t) - 1
    picks = tuple(dict.fromkeys([track.pick(0), track.pick(end)]))
    notes = (f"low OCR confidence ({conf:.2f}): check the text",) if conf < 0.8 else ()
    b.world.spans.append(SpanPlan(evidence_id, first, last, object_id, None, conf, picks, notes))
    b.event("text_seen", first, conf, picks, object_id=object_id, end_s=last, notes=notes)
    return object_id


def _add_zone_events(b: _Builder, track: Track, object_id: str) -> None:
    conf = float(np.mean(track.scores))
    for zone in b.cfg.zones:
        for first, last in true_runs(zone_membership(track, zone)):
            b.event(
                "enter_zone",
                float(track.t[first]),
                conf,
                (track.pick(first),),
                object_id=object_id,
                zone=zone.name,
            )
            leaves = last + 1 if last + 1 < len(track.t) else last
            if last + 1 < len(track.t) or not b.at_end(float(track.t[last])):
                b.event(
                    "exit_zone",
                    float(track.t[leaves]),
                    conf,
                    (track.pick(leaves),),
                    object_id=object_id,
                    zone=zone.name,
                )
            b.world.relations.append(
                {
                    "subject_id": object_id,
                    "predicate": "in_zone",
                    "object_id": b.zone_ids[zone.name],
                    "start_s": float(track.t[first]),
                    "end_s": float(track.t[last]),
                }
            )


def _add_dwells(b: _Builder, track: Track, object_id: str) -> None:
    for first, last in dwell_runs(track, b.cfg.dwell_radius, b.cfg.dwell_s):
        centre = track.centres[first : first + 1]
        zone = next((z.name for z in b.cfg.zones if points_in_polygon(centre, z.polygon)[0]), None)
        conf = float(np.mean(track.scores[first : last + 1]))
        b.event(
            "dwell",
            float(track.t[first]),
            conf,
            (track.pick(first), track.pick(last)),
            object_id=object_id,
            zone=zone,
            end_s=float(track.t[last]),
        )


def _add_near(b: _Builder, tracks: list[Track], ids: list[str]) -> None:
    """``near`` relations: each stretch where two objects' boxes stay close for ``near_min_s``."""
    max_gap = 1.5 * b.cfg.sample_step_s
    for i, a in enumerate(tracks):
        for j in range(i + 1, len(tracks)):
            for start, end in stretches(near_times(a, tracks[j], b.cfg.near_gap), max_gap):
                if end - start >= b.cfg.near_min_s:
                    b.world.relations.append(
                        {
                            "subject_id": ids[i],
                            "predicate": "near",
                            "object_id": ids[j],
                            "start_s": start,
                            "end_s": end,
                        }
                    )


def _add_refreshes(b: _Builder, frames: Sequence[dict[str, Any]]) -> None:
    previous: dict[str, Any] | None = None
    for row in frames:
        if row["refresh"]:
            marker = {
                "t_s": row["t_s"],
                "reason": row["refresh_reason"],
                "score": row["scene_score"],
            }
            b.world.refresh_markers.append(marker)
            if row["refresh_reason"] == "scene_change" and previous is not None:
                picks = (
                    (previous["sample_index"], previous["t_s"], None),
                    (row["sample_index"], row["t_s"], None),
                )
                b.event("scene_change", row["t_s"], float(row["scene_score"]), picks)
        previous = row


def build_world_state(
    tracks: Detections,
    frames: Sequence[dict[str, Any]],
    cfg: WorldConfig,
    object_ids: dict[int, str] | None = None,
    votes: dict[str, ClassVote] | None = None,
    frame_of: Callable[[int], Frame] | None = None,
    identities: dict[str, str] | None = None,
) -> WorldState:
    """The world state of a run (the pure core of the stage).

    ``object_ids`` names the objects of track numbers (as the track stage published them);
    ``votes`` says, by object id, how the person detector's looks voted (``parts.class_votes``);
    ``frame_of`` gives a sampled frame (RGB) by sample index, to measure objects' colours;
    ``identities`` gives each physical object's identity id (``appearances.identities_of``).
    """
    last_t = float(frames[-1]["t_s"]) if frames else 0.0
    b = _Builder(cfg, last_t, object_ids or {}, votes or {}, frame_of)
    b.world.zones = [
        {"zone_id": b.zone_ids[z.name], "name": z.name, "polygon": [list(p) for p in z.polygon]}
        for z in cfg.zones
    ]
    split = split_tracks(tracks)
    physical, ids, faces = [], [], []
    for track in split:
        if track.class_name == TEXT_CLASS:
            _add_text(b, track)
            continue
        object_id = _add_object(b, track)
        if track.class_name == FACE_CLASS:  # a part of a person: no zones, dwells or nearness
            faces.append((track, object_id))
            continue
        _add_zone_events(b, track, object_id)
        _add_dwells(b, track, object_id)
        physical.append(track)
        ids.append(object_id)
    _add_near(b, physical, ids)
    people = [(t, i) for t, i in zip(physical, ids, strict=True) if t.class_name == "person"]
    b.world.relations.extend(part_of(faces, people))
    _add_refreshes(b, frames)
    number_appearances(b.world.objects, identities or {})
    b.world.events.sort(key=event_order)
    return b.world


@task(name="world_state", cache_policy=NONE)
def world_state_task(ctx: RunContext, frames: Frames | None = None) -> list[SpanPlan]:
    """Build the world state; writes objects, zones, events and relations; returns the spans.

    ``frames`` are the sampled frames at the analysis size (their pixels give colours), in one
    pass or joined from chunks or live windows alike.
    """
    ctx.report("world_state")
    out = ctx.layout.out_dir
    rows = read_rows(out, "frames")
    table = read_table(out, "tracks")
    tracks = detections_from_table(table)
    numbered = {number: object_id for object_id, number in track_numbers(table).items()}
    step = 1.0 / ctx.sample_fps
    cfg = WorldConfig(ctx.options.zone_specs(), step, dwell_s=ctx.settings.dwell_s)
    votes = class_votes(table, read_table(out, "detections"))
    frame_of = frames.__getitem__ if frames is not None and len(frames) else None
    world = build_world_state(tracks, rows, cfg, numbered, votes, frame_of, identities_of(table))
    for name in ("objects", "zones", "events", "relations"):
        write_rows(out, name, getattr(world, name))
    get_run_logger().info(
        "%d objects, %d events, %d relations",
        len(world.objects),
        len(world.events),
        len(world.relations),
    )
    return world.spans
