"""Recall of an idle clip's planted events in a run's artifacts (``benchmarks/_idle.py``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks._idle import FPS, IdleScene, PlantedEvent
from synthetic import GroundTruth

# RECALL. A planted event is found by a run when the run shows it at its planted place and time:
#   - a pass, the walker or the sign: some detection (any detector, any class: motion, person,
#     text) at a sampled time t within the event's time, widened by one sample interval each
#     side, whose box overlaps the event's planted box at t (at its nearest frame when t falls in
#     the widening); the sign's time runs from its appearance to the end;
#   - the light: the pipeline takes a light for no object (its scene score matches brightness
#     first), so its change is all there is: some sampled frame within one sample interval of the
#     switch, decoded (not held), whose scene score stands above every score of the sampled
#     frames in the ``LIGHT_BEFORE_S`` before it (the still room's own noise and GOP pulses).
# Its first and last seen are the first and last such times (the light's: the highest-scoring).
LIGHT_BEFORE_S = 5.0


@dataclass(frozen=True)
class Sighting:
    """When a run saw a planted event first and last."""

    first_s: float
    last_s: float


def find_events(
    scene: IdleScene,
    detections: Sequence[Mapping[str, Any]],
    frames: Sequence[Mapping[str, Any]],
    interval_s: float,
) -> dict[str, Sighting | None]:
    """Each planted event's sighting in a run's ``detections`` and ``frames`` rows (None when
    missed), as RECALL above defines it."""
    truth = scene.truth()
    found: dict[str, Sighting | None] = {}
    for event in scene.events:
        if event.kind == "light":
            found[event.name] = _light_seen(event, frames, interval_s)
        else:
            times = [float(d["t_s"]) for d in detections if _overlaps(event, truth, d, interval_s)]
            found[event.name] = Sighting(min(times), max(times)) if times else None
    return found


def _overlaps(
    event: PlantedEvent, truth: GroundTruth, detection: Mapping[str, Any], interval_s: float
) -> bool:
    """Whether ``detection`` lies on the event's place at its time (see RECALL)."""
    t = float(detection["t_s"])
    if not event.start_s - interval_s <= t <= event.end_s + interval_s:
        return False
    first = int(np.ceil(event.start_s * FPS - 1e-6))
    last = min(int(event.end_s * FPS + 1e-6), truth.frame_count - 1)
    place = event.box_at(truth, int(np.clip(round(t * FPS), first, last)))
    if place is None:
        return False
    w, h = truth.spec.width, truth.spec.height
    x1, y1, x2, y2 = (float(v) * s for v, s in zip(detection["bbox"], (w, h, w, h), strict=True))
    return min(x2, place[2]) > max(x1, place[0]) and min(y2, place[3]) > max(y1, place[1])


def _light_seen(
    event: PlantedEvent, frames: Sequence[Mapping[str, Any]], interval_s: float
) -> Sighting | None:
    """The decoded sampled frame near the switch that changed most, if it stands out."""
    start = event.start_s
    near = [
        (float(f["scene_score"]), float(f["t_s"]))
        for f in frames
        if abs(float(f["t_s"]) - start) <= interval_s + 1e-6 and not f.get("held")
    ]
    before = [
        float(f["scene_score"])
        for f in frames
        if start - LIGHT_BEFORE_S <= float(f["t_s"]) < start - interval_s - 1e-6
    ]
    score, t = max(near, default=(0.0, 0.0))
    return Sighting(t, t) if near and score > max(before, default=0.0) else None
