"""The world state against hand-made tracks whose behaviour is known exactly.

A story at 5 fps over 15 s with the default zones (left, center, right thirds):

* ``walker`` crosses left -> center -> right during 1.0-5.0 s (never still);
* ``stander`` stands in the center during 2.0-7.0 s (one 5 s dwell);
* ``pair_a`` and ``pair_b`` walk side by side, 0.02 apart, in the left third during 8.0-10.0 s;
* the scene changes at 11.0 s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from tasks.detections import Detections
from tasks.geometry import default_zones
from tasks.world_state.stage import WorldConfig, WorldState, build_world_state, evidence_id_for

FPS = 5.0
STEP = 1 / FPS
CONFIG = WorldConfig(default_zones(), STEP)
Row = dict[str, Any]


@dataclass(frozen=True)
class Walk:
    """A box seen on ``samples`` consecutive sampled frames from ``first``, moving per sample."""

    name: str
    track_id: int
    first: int
    samples: int
    centre: tuple[float, float]
    velocity: tuple[float, float] = (0.0, 0.0)
    size: tuple[float, float] = (0.06, 0.2)
    score: float = 0.9

    def box(self, k: int) -> tuple[float, float, float, float]:
        cx = self.centre[0] + self.velocity[0] * k
        cy = self.centre[1] + self.velocity[1] * k
        w, h = self.size
        return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)

    @property
    def last(self) -> int:
        return self.first + self.samples - 1


def to_detections(walks: Sequence[Walk]) -> Detections:
    rows = [(w, k) for w in walks for k in range(w.samples)]
    return Detections(
        boxes=np.array([w.box(k) for w, k in rows]),
        scores=np.array([w.score for w, _ in rows]),
        class_ids=np.zeros(len(rows), dtype=np.int64),
        frame_index=np.array([w.first + k for w, k in rows]),
        t_s=np.array([(w.first + k) * STEP for w, k in rows]),
        track_ids=np.array([w.track_id for w, _ in rows]),
    )


def frame_rows(count: int, cuts: dict[int, float] | None = None) -> list[Row]:
    """Sampled-frame rows as the sample stage writes them; ``cuts``: sample -> scene score."""
    cuts = cuts or {}
    return [
        {
            "sample_index": i,
            "t_s": i * STEP,
            "scene_score": cuts.get(i, 0.0),
            "refresh": i == 0 or i in cuts,
            "refresh_reason": "start" if i == 0 else ("scene_change" if i in cuts else None),
        }
        for i in range(count)
    ]


WALKER = Walk("walker", 1, 5, 21, (0.1, 0.2), (0.04, 0.0))
STANDER = Walk("stander", 2, 10, 26, (0.5, 0.7))
PAIR_A = Walk("pair_a", 3, 40, 11, (0.05, 0.3), (0.025, 0.0))
PAIR_B = Walk("pair_b", 4, 40, 11, (0.05, 0.52), (0.025, 0.0))
STORY = (WALKER, STANDER, PAIR_A, PAIR_B)
STORY_FRAMES = frame_rows(76, {55: 0.8})  # 0.0 .. 15.0 s, a cut at 11.0 s


def build(walks: Sequence[Walk], frames: list[Row], cfg: WorldConfig = CONFIG) -> WorldState:
    return build_world_state(to_detections(walks), frames, cfg)


@dataclass(frozen=True)
class Names:
    """Readable names for the ids a world state made up (objects by their first box)."""

    of: dict[str | None, str | None]

    @classmethod
    def of_world(cls, world: WorldState, walks: Sequence[Walk]) -> Names:
        names: dict[str | None, str | None] = {None: None}
        names |= {z["zone_id"]: z["name"] for z in world.zones}
        spans = {s.evidence_id: s for s in world.spans}
        for obj in world.objects:
            (_, _, box) = spans[obj["evidence_ids"][0]].frames[0]
            assert box is not None
            (walk,) = (w for w in walks if np.allclose(box, w.box(0), atol=1e-6))
            names[obj["object_id"]] = walk.name
        return cls(names)

    def events(
        self, world: WorldState
    ) -> list[tuple[str, float, float | None, str | None, str | None]]:
        return sorted(
            (
                e["type"],
                round(e["t_s"], 3),
                None if e["end_s"] is None else round(e["end_s"], 3),
                self.of[e["object_id"]],
                self.of[e["zone_id"]],
            )
            for e in world.events
        )

    def relations(
        self, world: WorldState
    ) -> list[tuple[str, str | None, str | None, float, float]]:
        return sorted(
            (
                r["predicate"],
                self.of[r["subject_id"]],
                self.of[r["object_id"]],
                round(r["start_s"], 3),
                round(r["end_s"], 3),
            )
            for r in world.relations
        )


@pytest.fixture(scope="module")
def story() -> tuple[WorldState, Names]:
    world = build(STORY, STORY_FRAMES)
    return world, Names.of_world(world, STORY)


STORY_EVENTS = sorted(
    [
        ("appear", 1.0, None, "walker", None),
        ("enter_zone", 1.0, None, "walker", "left"),
        ("exit_zone", 2.2, None, "walker", "left"),
        ("enter_zone", 2.2, None, "walker", "center"),
        ("exit_zone", 4.0, None, "walker", "center"),
        ("enter_zone", 4.0, None, "walker", "right"),
        ("exit_zone", 5.0, None, "walker", "right"),
        ("disappear", 5.0, None, "walker", None),
        ("appear", 2.0, None, "stander", None),
        ("enter_zone", 2.0, None, "stander", "center"),
        ("dwell", 2.0, 7.0, "stander", "center"),
        ("exit_zone", 7.0, None, "stander", "center"),
        ("disappear", 7.0, None, "stander", None),
        ("appear", 8.0, None, "pair_a", None),
        ("enter_zone", 8.0, None, "pair_a", "left"),
        ("exit_zone", 10.0, None, "pair_a", "left"),
        ("disappear", 10.0, None, "pair_a", None),
        ("appear", 8.0, None, "pair_b", None),
        ("enter_zone", 8.0, None, "pair_b", "left"),
        ("exit_zone", 10.0, None, "pair_b", "left"),
        ("disappear", 10.0, None, "pair_b", None),
        ("scene_change", 11.0, None, None, None),
    ]
)
STORY_RELATIONS = sorted(
    [
        ("in_zone", "walker", "left", 1.0, 2.0),
        ("in_zone", "walker", "center", 2.2, 3.8),
        ("in_zone", "walker", "right", 4.0, 5.0),
        ("in_zone", "stander", "center", 2.0, 7.0),
        ("in_zone", "pair_a", "left", 8.0, 10.0),
        ("in_zone", "pair_b", "left", 8.0, 10.0),
        ("near", "pair_a", "pair_b", 8.0, 10.0),
    ]
)


def test_story_events(story: tuple[WorldState, Names]) -> None:
    world, names = story
    assert names.events(world) == STORY_EVENTS
    times = [e["t_s"] for e in world.events]
    assert times == sorted(times)


def test_only_the_stander_dwells(story: tuple[WorldState, Names]) -> None:
    world, names = story
    dwells = [e for e in world.events if e["type"] == "dwell"]
    assert [(names.of[e["object_id"]], e["t_s"], e["end_s"]) for e in dwells] == [
        ("stander", 2.0, 7.0)
    ]


def test_story_relations(story: tuple[WorldState, Names]) -> None:
    world, names = story
    assert names.relations(world) == STORY_RELATIONS


def test_story_objects(story: tuple[WorldState, Names]) -> None:
    world, names = story
    rows = {
        names.of[o["object_id"]]: (
            o["class"],
            round(o["first_seen_s"], 3),
            round(o["last_seen_s"], 3),
            [names.of[z] for z in o["zones"]],
            o["detections"],
        )
        for o in world.objects
    }
    assert rows == {
        "walker": ("motion", 1.0, 5.0, ["left", "center", "right"], 21),
        "stander": ("motion", 2.0, 7.0, ["center"], 26),
        "pair_a": ("motion", 8.0, 10.0, ["left"], 11),
        "pair_b": ("motion", 8.0, 10.0, ["left"], 11),
    }
    assert [o["confidence"] for o in world.objects] == pytest.approx([0.9] * 4)
    assert [z["name"] for z in world.zones] == ["left", "center", "right"]


def test_every_claim_cites_a_span_that_exists(story: tuple[WorldState, Names]) -> None:
    world, _ = story
    spans = {s.evidence_id: s for s in world.spans}
    assert len(spans) == len(world.spans) == len(world.objects) + len(world.events)
    for obj in world.objects:
        (evidence_id,) = obj["evidence_ids"]
        assert evidence_id == evidence_id_for(obj["object_id"])
        span = spans[evidence_id]
        assert (span.object_id, span.event_id) == (obj["object_id"], None)
        assert (span.start_s, span.end_s) == (obj["first_seen_s"], obj["last_seen_s"])
    for event in world.events:
        (evidence_id,) = event["evidence_ids"]
        span = spans[evidence_id]
        assert (span.event_id, span.object_id) == (event["event_id"], event["object_id"])
        assert span.frames


@pytest.mark.parametrize(
    ("kind", "name", "window"),
    [
        ("appear", "walker", (0.8, 1.2)),  # one sample either side of an instant
        ("dwell", "stander", (2.0, 7.0)),  # a lasting event spans exactly its interval
        ("scene_change", None, (10.8, 11.2)),
    ],
)
def test_span_windows(
    story: tuple[WorldState, Names], kind: str, name: str | None, window: tuple[float, float]
) -> None:
    world, names = story
    spans = {s.evidence_id: s for s in world.spans}
    (event,) = (e for e in world.events if e["type"] == kind and names.of[e["object_id"]] == name)
    span = spans[event["evidence_ids"][0]]
    assert (span.start_s, span.end_s) == pytest.approx(window)


def test_span_frames_pick_the_right_samples(story: tuple[WorldState, Names]) -> None:
    world, names = story
    spans = {s.evidence_id: s for s in world.spans}
    (walker,) = (o for o in world.objects if names.of[o["object_id"]] == "walker")
    picks = spans[walker["evidence_ids"][0]].frames
    assert [(sample, round(t, 3)) for sample, t, _ in picks] == [(5, 1.0), (15, 3.0), (25, 5.0)]
    assert all(box is not None for _, _, box in picks)
    (cut,) = (e for e in world.events if e["type"] == "scene_change")
    assert spans[cut["evidence_ids"][0]].frames == ((54, 54 * STEP, None), (55, 55 * STEP, None))


# --- smaller, targeted cases ------------------------------------------------------------------

LOW = "low confidence ({:.2f}): review before relying on it"
SHORT = "short track: seen for under a second, may be noise"


@pytest.mark.parametrize(
    ("samples", "score", "notes"),
    [
        (21, 0.9, ()),
        (21, 0.3, (LOW.format(0.3),)),
        (21, 0.5, ()),  # the threshold itself is not low
        (5, 0.9, (SHORT,)),  # 0.8 s
        (6, 0.9, ()),  # exactly 1.0 s is not short
        (2, 0.2, (LOW.format(0.2), SHORT)),
    ],
)
def test_review_notes(samples: int, score: float, notes: tuple[str, ...]) -> None:
    world = build([Walk("x", 1, 5, samples, (0.5, 0.5), score=score)], frame_rows(50))
    spans = {s.evidence_id: s for s in world.spans}
    (obj,) = world.objects
    assert spans[obj["evidence_ids"][0]].notes == notes
    (appear,) = (e for e in world.events if e["type"] == "appear")
    assert spans[appear["evidence_ids"][0]].notes == notes
    others = [e for e in world.events if e["type"] != "appear"]
    assert others and all(not spans[e["evidence_ids"][0]].notes for e in others)


@pytest.mark.parametrize(
    ("last_sample", "leaves"),
    [(75, False), (74, False), (73, True), (60, True)],  # last frame is 75 (15.0 s)
)
def test_a_track_running_to_the_end_does_not_disappear(last_sample: int, leaves: bool) -> None:
    walk = Walk("x", 1, 40, last_sample - 40 + 1, (0.5, 0.5))  # still for 4 s or more
    world = build([walk], frame_rows(76))
    kinds = sorted(e["type"] for e in world.events)
    expected = ["appear", "dwell", "enter_zone"] + (["disappear", "exit_zone"] if leaves else [])
    assert kinds == sorted(expected)


def test_scene_changes_come_from_the_frame_rows() -> None:
    world = build([], frame_rows(60, {30: 0.8, 50: 0.45}))
    assert [(e["type"], e["t_s"], e["confidence"]) for e in world.events] == [
        ("scene_change", 30 * STEP, 0.8),
        ("scene_change", 50 * STEP, 0.45),
    ]
    assert [(m["t_s"], m["reason"], m["score"]) for m in world.refresh_markers] == [
        (0.0, "start", 0.0),
        (30 * STEP, "scene_change", 0.8),
        (50 * STEP, "scene_change", 0.45),
    ]
    assert all(e["object_id"] is None and e["zone_id"] is None for e in world.events)
    assert world.objects == world.relations == []


@pytest.mark.parametrize(
    ("gap", "samples", "near"),
    [
        (0.0, 11, True),  # touching
        (0.029, 11, True),
        (0.031, 11, False),  # just over near_gap = 0.03
        (0.02, 5, False),  # close for only 0.8 s
        (0.02, 6, True),  # close for exactly 1.0 s (near_min_s)
    ],
)
def test_near_needs_closeness_for_long_enough(gap: float, samples: int, near: bool) -> None:
    """Two boxes 0.06 wide walking down side by side, ``gap`` apart horizontally."""
    a = Walk("a", 1, 10, samples, (0.2, 0.2), (0.0, 0.04))
    b = Walk("b", 2, 10, samples, (0.2 + 0.06 + gap, 0.2), (0.0, 0.04))
    world = build([a, b], frame_rows(40))
    nears = [(r["start_s"], r["end_s"]) for r in world.relations if r["predicate"] == "near"]
    end = (10 + samples - 1) * STEP
    assert nears == ([pytest.approx((2.0, end))] if near else [])


def test_objects_keep_the_ids_the_track_stage_gave_them() -> None:
    world = build_world_state(
        to_detections([WALKER, STANDER]),
        STORY_FRAMES,
        CONFIG,
        {1: "obj_walker", 2: "obj_stander"},
    )
    assert sorted(o["object_id"] for o in world.objects) == ["obj_stander", "obj_walker"]
    assert {s.evidence_id for s in world.spans} >= {"ev_walker", "ev_stander"}


def test_two_brief_passes_are_not_near() -> None:
    still = Walk("still", 1, 5, 31, (0.2, 0.5))
    samples = np.arange(5, 36)
    distance = np.minimum(np.abs(samples - 10), np.abs(samples - 30))  # close at 10 and 30
    centre_x = 0.2 + 0.06 + 0.01 + 0.04 * distance  # edge gap 0.01 + 0.04 per sample away
    passer = Detections(
        boxes=np.stack([centre_x - 0.03, np.full(31, 0.4), centre_x + 0.03, np.full(31, 0.6)], 1),
        scores=np.full(31, 0.9),
        class_ids=np.zeros(31, dtype=np.int64),
        frame_index=samples,
        t_s=samples * STEP,
        track_ids=np.full(31, 2),
    )
    tracks = Detections.concatenate([to_detections([still]), passer])
    world = build_world_state(tracks, frame_rows(50), CONFIG)
    assert [r for r in world.relations if r["predicate"] == "near"] == []


def test_a_track_that_ends_at_the_edge_went_out_and_one_lost_inside_did_not() -> None:
    """The exit walks out through the right side (its last box 0.02 from it, under its own
    width 0.06); the stander vanishes mid-picture (lost from view, not gone); the entrant comes
    in at the left side."""
    exit_ = Walk("exit", 7, 0, 11, (0.5, 0.5), (0.045, 0.0))  # last centre 0.95, box to 0.98
    entrant = Walk("entrant", 8, 0, 11, (0.04, 0.5), (0.02, 0.0))  # first box from 0.01
    world = build((exit_, STANDER, entrant), frame_rows(76))
    names = Names.of_world(world, (exit_, STANDER, entrant))
    edges = {
        names.of[o["object_id"]]: (
            json.loads(o["attributes"])["starts_at_edge"],
            json.loads(o["attributes"])["ends_at_edge"],
        )
        for o in world.objects
    }
    assert edges == {
        "exit": (False, True),
        "stander": (False, False),
        "entrant": (True, False),
    }
