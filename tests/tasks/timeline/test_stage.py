"""The timeline: events and refresh markers in time order, each with a label a person can read."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tasks.sample.frames import still_stretches
from tasks.timeline.stage import build_timeline, refresh_markers
from tests.tasks.world_state.test_stage import STORY, STORY_FRAMES, Names, build

Row = dict[str, Any]
ZONES = [{"zone_id": "zone_door", "name": "door", "polygon": [[0, 0], [1, 0], [1, 1]]}]
OBJECTS = [
    {"object_id": "obj_1", "class": "person"},
    {"object_id": "obj_t", "class": "text", "attributes": '{"text": "EXIT \\"3\\""}'},
]


def event(kind: str, t: float = 1.0, **fields: Any) -> Row:
    return {
        "event_id": f"evt_{kind}",
        "type": kind,
        "t_s": t,
        "end_s": None,
        "object_id": "obj_1",
        "zone_id": None,
        "confidence": 0.75,
        **fields,
    }


def marker(t: float, reason: str, score: float = 0.0) -> Row:
    return {"t_s": t, "reason": reason, "score": score}


def labels(events: list[Row], markers: list[Row] | None = None) -> list[str]:
    return [r["label"] for r in build_timeline(events, markers or [], ZONES, OBJECTS)]


@pytest.mark.parametrize(
    ("row", "label"),
    [
        (event("appear"), "person obj_1 appears"),
        (event("disappear"), "person obj_1 disappears"),
        (event("enter_zone", zone_id="zone_door"), "person obj_1 enters zone door"),
        (event("exit_zone", zone_id="zone_door"), "person obj_1 leaves zone door"),
        (
            event("dwell", t=2.0, end_s=6.5, zone_id="zone_door"),
            "person obj_1 stays still for 4.5 s in zone door",
        ),
        (event("dwell", t=2.0, end_s=6.5), "person obj_1 stays still for 4.5 s"),
        (event("appear", object_id="obj_unknown"), "object obj_unknown appears"),
        (event("fell_over"), "person obj_1 fell over"),
        (event("text_seen", object_id="obj_t", end_s=6.0), 'text "EXIT \\"3\\"" seen for 5.0 s'),
        (event("text_seen", object_id="obj_t"), 'text "EXIT \\"3\\"" seen'),
    ],
    ids=lambda v: v if isinstance(v, str) else v["type"],
)
def test_event_labels(row: Row, label: str) -> None:
    assert labels([row]) == [label]


def test_scene_change_label_reads_well() -> None:
    assert labels([event("scene_change", object_id=None)]) == ["the scene changes"]


@pytest.mark.parametrize(
    ("reason", "label"),
    [
        ("start", "world state rebuilt (start)"),
        ("scene_change", "world state rebuilt (scene change)"),
    ],
)
def test_marker_labels(reason: str, label: str) -> None:
    assert labels([], [marker(0.0, reason)]) == [label]


def test_rows_are_in_time_order_events_before_markers() -> None:
    rows = build_timeline(
        [event("disappear", t=9.0), event("appear", t=1.0)],
        [marker(9.0, "scene_change", 0.8), marker(0.0, "start")],
        ZONES,
        OBJECTS,
    )
    assert [(r["t_s"], r["kind"], r["type"], r["reason"]) for r in rows] == [
        (0.0, "refresh_marker", None, "start"),
        (1.0, "event", "appear", None),
        (9.0, "event", "disappear", None),
        (9.0, "refresh_marker", None, "scene_change"),
    ]
    assert [r["score"] for r in rows] == [0.0, 0.75, 0.75, 0.8]
    assert [r["event_id"] for r in rows] == [None, "evt_appear", "evt_disappear", None]


def test_refresh_markers_are_the_refresh_rows() -> None:
    frames: list[Row] = [
        {"sample_index": 0, "t_s": 0.0, "scene_score": 0.0, "refresh": True,
         "refresh_reason": "start"},
        {"sample_index": 1, "t_s": 0.2, "scene_score": 0.1, "refresh": False,
         "refresh_reason": None},
        {"sample_index": 2, "t_s": 0.4, "scene_score": 0.9, "refresh": True,
         "refresh_reason": "scene_change"},
    ]  # fmt: skip
    assert refresh_markers(frames) == [marker(0.0, "start"), marker(0.4, "scene_change", 0.9)]


def story_timeline() -> tuple[list[Row], Names]:
    world = build(STORY, STORY_FRAMES)
    names = Names.of_world(world, STORY)
    rows = build_timeline(world.events, refresh_markers(STORY_FRAMES), world.zones, world.objects)
    return rows, names


def readable(row: Row, names: Names) -> str:
    """A label with object ids replaced by the story's names."""
    label: str = row["label"]
    for object_id, name in names.of.items():
        if object_id and object_id.startswith("obj_") and name:
            label = label.replace(f"motion {object_id}", name)
    return label


def test_story_timeline() -> None:
    rows, names = story_timeline()
    times = [r["t_s"] for r in rows]
    assert times == sorted(times)
    for a, b in itertools.pairwise(rows):
        if a["t_s"] == b["t_s"]:  # at one instant, events come before markers
            assert (a["kind"], b["kind"]) != ("refresh_marker", "event")
    assert sorted((round(r["t_s"], 3), readable(r, names)) for r in rows) == sorted(
        [
            (0.0, "world state rebuilt (start)"),
            (1.0, "walker appears"),
            (1.0, "walker enters zone left"),
            (2.0, "stander appears"),
            (2.0, "stander enters zone center"),
            (2.0, "stander stays still for 5.0 s in zone center"),
            (2.2, "walker leaves zone left"),
            (2.2, "walker enters zone center"),
            (4.0, "walker leaves zone center"),
            (4.0, "walker enters zone right"),
            (5.0, "walker leaves zone right"),
            (5.0, "walker disappears"),
            (7.0, "stander leaves zone center"),
            (7.0, "stander disappears"),
            (8.0, "pair_a appears"),
            (8.0, "pair_a enters zone left"),
            (8.0, "pair_b appears"),
            (8.0, "pair_b enters zone left"),
            (10.0, "pair_a leaves zone left"),
            (10.0, "pair_a disappears"),
            (10.0, "pair_b leaves zone left"),
            (10.0, "pair_b disappears"),
            (11.0, "the scene changes"),  # sic: see test_scene_change_label_reads_well
            (11.0, "world state rebuilt (scene change)"),
        ]
    )


def test_story_timeline_reads_in_causal_order() -> None:
    rows, names = story_timeline()
    walker = [readable(r, names) for r in rows if readable(r, names).startswith("walker")]
    assert walker == [
        "walker appears",
        "walker enters zone left",
        "walker leaves zone left",
        "walker enters zone center",
        "walker leaves zone center",
        "walker enters zone right",
        "walker leaves zone right",
        "walker disappears",
    ]


def _frame(t: float, held: bool) -> dict[str, Any]:
    return {"t_s": t, "held": held, "refresh": t == 0.0, "refresh_reason": None, "scene_score": 0.0}


def test_held_frames_make_still_rows_from_the_first_held_to_the_next_decoded() -> None:
    """A run with the activity gate: frames 1.0-2.5 s and from 4.0 s held (judged still)."""
    frames = [_frame(i * 0.5, held=(2 <= i <= 5 or i >= 8)) for i in range(10)]
    still = still_stretches(frames)
    assert still == [(1.0, 3.0), (4.0, 5.0)]  # the last one to the end of its last frame
    rows = build_timeline([], [], ZONES, OBJECTS, still)
    assert [(r["kind"], r["t_s"], r["end_s"]) for r in rows] == [
        ("still", 1.0, 3.0),
        ("still", 4.0, 5.0),
    ]
    assert rows[0]["label"] == "nothing changes for 2.0 s (judged still, not decoded)"


def test_frames_without_the_held_column_make_no_still_rows() -> None:
    """Runs made before the gate existed (or without it) have no held frames."""
    frames = [{"t_s": i * 0.5, "refresh": False} for i in range(6)]
    assert still_stretches(frames) == []
