"""Colour questions on every kind of run: answered where colours were measured (a video
processed in chunks too), refused only where they were not, saying why and whether executing
the video again would help."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ask.engine import answer_question
from ask.types import Citation, Coverage
from ask.world import RunWorld, Thing
from synthetic import lobby_scene
from tests.ask.bank import colour_of
from tests.ask.conftest import Processed, process_scene

COLOURS = ("red", "green", "blue")
MEASURED = {"size": 0.01, "speed": 0.05, "heading_x": 0.3}  # what runs measuring colour keep


def _world(*things: Thing) -> RunWorld:
    spans = {t.evidence_id: Citation(t.evidence_id, t.first_s, t.last_s) for t in things}
    coverage = Coverage(20.0, 100, "motion", (), None)
    known = frozenset({"motion"})
    return RunWorld("vid_01", "run_01", coverage, list(things), [], spans, [], known)


def _mover(**measured: float) -> Thing:
    return Thing("obj_01", "motion", 0.8, 8.2, 0.7, (), None, "ev_01", **measured)


def test_a_run_that_measured_no_colour_says_why_and_not_to_execute_again() -> None:
    """Its object was measured (size, speed, heading) but never seen whole inside the frame."""
    answer = answer_question(_world(_mover(**MEASURED)), "Did a red object appear?")
    assert not answer.grounded and answer.refusal_reason == "outside_detectors"
    assert "seen whole inside the frame" in answer.answer
    assert "again" not in answer.answer and "execute" not in answer.answer


def test_a_run_from_before_colours_were_measured_says_executing_again_would_measure_them() -> None:
    answer = answer_question(_world(_mover()), "What colour was the object?")
    assert not answer.grounded and answer.refusal_reason == "outside_detectors"
    assert "before colours were measured" in answer.answer
    assert "Executing the video again would measure them" in answer.answer


def test_a_run_without_objects_finds_no_coloured_one_rather_than_refusing() -> None:
    answer = answer_question(_world(), "Did a red object appear?")
    assert not answer.grounded and answer.refusal_reason == "no_evidence"


@pytest.fixture(scope="module")
def chunked_lobby(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Processed:
    """The lobby split into 4 s chunks with 2 s lead-ins: the walker and the loiterer cross
    borders (as ``tests/flows/test_process_video.py`` splits it)."""
    split = {"VES_CHUNK_S": "4", "VES_CHUNK_LEAD_S": "2"}
    return process_scene(lobby_scene(), Path(tmp_path_factory.mktemp("chunked")), variables=split)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["walker", "loiterer", "visitor"])
def test_a_colour_question_on_a_chunked_run_is_answered_with_the_true_colour(
    chunked_lobby: Processed, name: str
) -> None:
    truth = next(o for o in chunked_lobby.truth.objects if o.name == name)
    answer = answer_question(chunked_lobby.world, f"Did a {colour_of(truth)} object appear?")
    assert answer.grounded, answer.answer
    assert answer.answer.startswith(f"Yes: a {colour_of(truth)} moving object"), answer.answer
    (cited,) = answer.citations
    assert abs(chunked_lobby.evidence[cited.evidence_id][1] - truth.last_seen_s) <= 1.0


@pytest.mark.slow
def test_the_colour_of_the_object_that_waited_on_a_chunked_run_is_the_loiterers(
    chunked_lobby: Processed,
) -> None:
    answer = answer_question(chunked_lobby.world, "What colour was the object that waited?")
    assert answer.grounded, answer.answer
    said = [c for c in COLOURS if re.search(rf"\b{c}\b", answer.answer)]
    assert said == [colour_of(chunked_lobby.truth.object_named("loiterer"))], answer.answer
