"""Many at once, together, pace and place, on a world whose truth is written here.

Three people: A (0-10 s) and B (2-12 s) walk left to right side by side (``near`` 2-9 s); C
stands still from 5 to 20 s (a 15 s wait in zone "center") and walks off left; a tiny D rushes
through from 14 to 15 s at 10 of its own sizes a second. The most in view at once: A, B and C,
from 5.0 s until A leaves at 10.0 s.
"""

from __future__ import annotations

import dataclasses

from ask.engine import answer_question
from ask.pace import RUN_SIZES_PER_S, moved, pace
from ask.types import Citation, Coverage
from ask.world import Event, RunWorld, Thing


def _person(name: str, first: float, last: float, speed: float, heading: float) -> Thing:
    size = 0.01  # own size 0.1
    return Thing(
        f"obj_{name}", "person", first, last, 0.9, ("center",), None, f"ev_{name}",
        size=size, speed=speed, heading_x=heading, identity_id=f"idn_{name}",
    )  # fmt: skip


THINGS = [
    _person("a", 0.0, 10.0, 0.08, 0.7),  # 0.8 sizes a second: walking
    _person("b", 2.0, 12.0, 0.08, 0.7),
    _person("c", 5.0, 22.0, 0.02, -0.3),
    _person("d", 14.0, 15.0, 1.0, 0.9),  # 10 sizes a second: running
]
SPANS = {t.evidence_id: Citation(t.evidence_id, t.first_s, t.last_s) for t in THINGS}
SPANS["ev_w"] = Citation("ev_w", 5.0, 20.0)
DWELL = Event("evt_w", "dwell", 5.0, 20.0, "obj_c", "center", 0.9, "ev_w")


def world(things: list[Thing] = THINGS) -> RunWorld:
    coverage = Coverage(25.0, 125, "motion+person+ocr")
    known = frozenset({"person", "motion", "text"})
    near = [("obj_a", "obj_b", 2.0, 9.0)]
    return RunWorld("vid_1", "run_1", coverage, things, [DWELL], SPANS, ["center"], known, near)


def test_the_most_in_view_at_once_is_the_peak_of_their_times() -> None:
    for question in ("When were the most people in view, and how many?",
                     "how many people were in view at a time"):  # fmt: skip
        answer = answer_question(world(), question)
        assert answer.grounded and answer.intent == "peak"
        head = answer.claims[0]
        assert head.counts == (3,) and head.times == (5.0, 10.0)
        assert {c.evidence_id for c in head.citations} == {"ev_a", "ev_b", "ev_c"}


def test_walking_together_is_a_near_stretch_of_two_movers() -> None:
    answer = answer_question(world(), "Did people walk together?")
    assert answer.grounded and answer.answer.startswith("Yes")
    assert answer.claims[0].times == (2.0, 9.0)
    # Two who stood together did not walk together.
    still = [t if t.object_id != "obj_b" else _person("b", 2.0, 12.0, 0.0, 0.0) for t in THINGS]
    assert not answer_question(world(still), "did people walk together").grounded


def test_a_wait_longer_than_asked_is_named_with_its_length_and_zone() -> None:
    answer = answer_question(world(), "Who stood still for longer than 10 seconds, and where?")
    assert answer.grounded and answer.claims[0].durations == (15.0,)
    assert "zone center" in answer.answer
    longer = answer_question(world(), "who stood still for more than 20 s")
    assert not longer.grounded and longer.refusal_reason == "no_evidence"


def test_running_needs_a_running_pace_and_walking_needs_a_path() -> None:
    assert [round(p or 0, 1) for p in map(pace, THINGS)] == [0.8, 0.8, 0.2, 10.0]
    assert RUN_SIZES_PER_S < 10.0 and all(map(moved, THINGS))
    ran = answer_question(world(), "did anyone run?")
    assert ran.grounded and "obj_d" in ran.answer and "obj_a" not in ran.answer
    walkers = world(THINGS[:3])
    refused = answer_question(walkers, "did anyone run?")
    assert not refused.grounded and '"run"' in refused.answer


def test_a_direction_counts_people_who_went_that_way() -> None:
    answer = answer_question(world(), "How many people walked left to right?")
    assert answer.grounded and answer.claims[0].counts == (3,)  # a, b and d
    answer = answer_question(world(), "how many people walked from right to left")
    assert answer.grounded and answer.claims[0].counts == (1,)  # c


def test_a_place_word_is_the_video_and_a_part_says_the_whole_picture() -> None:
    lobby = answer_question(world(), "How many people walked through the lobby?", title="Lobby")
    plain = answer_question(world(), "How many people walked?")
    assert lobby.claims[0].counts == plain.claims[0].counts == (4,)
    door = answer_question(world(), "did someone wait by the door?")
    assert door.grounded and 'no zone named "door"' in door.answer


def test_a_person_lost_inside_the_picture_did_not_leave() -> None:
    """A's track ends at 10 s away from any edge (lost behind B, say): the first to leave the
    picture is B at 12 s, and A is not counted as leaving."""
    lost = [dataclasses.replace(t, ends_at_edge=t.object_id != "obj_a") for t in THINGS]
    answer = answer_question(world(lost), "When did the first person leave?")
    assert answer.grounded and answer.claims[0].times == (12.0,) and "obj_b" in answer.answer
    everyone = answer_question(world(THINGS), "When did the first person leave?")
    assert everyone.claims[0].times == (10.0,)  # unmeasured edges: every end is a leaving
