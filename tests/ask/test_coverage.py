"""Absence of evidence says how it was known: a stretch judged still by the activity gate is
named in the coverage sentence of an answer that finds nothing there."""

from __future__ import annotations

from ask.engine import answer_question
from ask.types import Citation, Coverage
from ask.world import RunWorld, Thing


def _world(still: tuple[tuple[float, float], ...], sure_s: float | None = None) -> RunWorld:
    thing = Thing("obj_01", "motion", 0.8, 8.2, 0.7, (), None, "ev_01")
    return RunWorld(
        "vid_01",
        "run_01",
        Coverage(60.0, 300, "motion", still, sure_s),
        [thing],
        [],
        {"ev_01": Citation("ev_01", 0.8, 8.2)},
        [],
        frozenset({"motion"}),
    )


def test_nothing_between_x_and_y_says_the_stretch_was_judged_still_from_its_keyframes() -> None:
    world = _world(((12.0, 40.0), (50.0, 60.0)))
    answer = answer_question(world, "what happened between 0:20 and 0:45")
    assert not answer.grounded
    assert (
        "20.0 s of that stretch (20.0 s to 40.0 s) was judged still from its keyframes"
        in answer.answer
    )
    assert world.coverage.as_dict()["judged_still_s"] == 38.0  # what the API's coverage says


def test_a_question_over_the_whole_video_names_every_still_stretch() -> None:
    answer = answer_question(_world(((12.0, 40.0), (50.0, 60.0))), "did anything stop")
    assert (
        "38.0 s of the video (12.0 s to 40.0 s, 50.0 s to 1:00.0) was judged still" in answer.answer
    )


def test_without_the_gate_the_coverage_sentence_is_unchanged() -> None:
    answer = answer_question(_world(()), "what happened between 0:20 and 0:45")
    assert "judged still" not in answer.answer
    assert answer.answer.endswith("detectors motion.")


def test_keyframe_mode_says_the_shortest_event_it_was_sure_to_see() -> None:
    """Judged from keyframes alone, "nothing happened" is only as sure as the longest GOP."""
    world = _world(((12.0, 40.0),), sure_s=2.0)
    answer = answer_question(world, "what happened between 0:20 and 0:45")
    assert not answer.grounded
    assert "judged still from its keyframes alone (keyframe mode)" in answer.answer
    assert "an event shorter than 2 s between two keyframes" in answer.answer
    assert world.coverage.as_dict()["sure_event_s"] == 2.0
