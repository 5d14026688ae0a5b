"""Users' words (issue 44): what the reader takes from everyday phrasings, and what it refuses
rather than drop. Each case states the reading the engine must make; the banks
(``tests/ask/words_bank.py``, ``tests/ask/street_bank.py``) judge the answers against truth."""

from __future__ import annotations

import pytest

from ask.intent import Intent, parse_question
from ask.plain import plain

PEOPLE = frozenset({"motion", "person", "text"})
ZONES = ["left", "center", "right"]


def read(question: str) -> Intent:
    return parse_question(question, PEOPLE, ZONES, ("lobby",))


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("did anything move up", "up"),  # vertical travel is not measured
        ("did someone wait at zone B", "zone b"),  # a zone the run does not have
        ("was anyone in the exit zone", "exit zone"),
        ("did anything stop in zone east", "east"),
        ("how many doors does the room have", "doors"),  # the place itself: no detector
        ("what colour are the walls", "walls"),  # and not "corrected" into "walks"
        ("how many exits does the hall have", "exits"),
        ("how many camera views does the video have", "views"),  # changes are counted, not views
        ("did the red one show up a second time", "again"),  # returns are not answered
        ("how many objects were red or blue", "blue"),  # one colour is read, not two
        ("did anyone fight", "fight"),  # not "might" (a short filler is no correction)
        ("how many people entered from the right", "from the right"),  # where from: not measured
        ("at what time does the last person to arrive first appear", "first ... last"),
        ("were there more than 5 people at once", "more"),  # a length needs its unit
    ],
)
def test_a_word_that_would_change_the_answer_is_refused_by_name(question: str, word: str) -> None:
    intent = read(question)
    assert (intent.kind, intent.unknown_word) == ("not_understood", word)


@pytest.mark.parametrize(
    ("question", "what"),
    [
        ("how many women walked by", "age or gender"),
        ("did the camera move", "how the camera moved"),
        ("when was this filmed", "when or where it was recorded"),
        ("did anyone carry a suitcase", "suitcase"),  # unseen, beside a person word
    ],
)
def test_what_no_detector_sees_is_unsupported(question: str, what: str) -> None:
    intent = read(question)
    assert (intent.kind, intent.unsupported) == ("unsupported", what)


@pytest.mark.parametrize(
    ("question", "kind", "subject", "action", "min_s"),
    [
        ("who stayed put longer than five secs", "unknown", "object", "dwell", 5.0),
        ("anyone not moving for longer than 7s? where", "zone", "person", "dwell", 7.0),
        ("who waited more than half a minute", "unknown", "object", "dwell", 30.0),
        ("whats the headcount", "count", "person", None, None),
        ("when was the street at its busiest", "peak", "object", None, None),
        ("do people walk in twos", "together", "person", "appear", None),
        ("when does the camera flip over to the other view", "when", "scene_change", None, None),
        ("rundown of what came and went", "summary", "object", None, None),
    ],
)
def test_everyday_phrasings_are_read(
    question: str, kind: str, subject: str, action: str | None, min_s: float | None
) -> None:
    intent = read(question)
    assert intent.unknown_word is None, intent
    assert (intent.subject, intent.action, intent.qualifiers.min_s) == (subject, action, min_s)
    if kind != "unknown":
        assert intent.kind == kind


def test_a_point_in_time_asks_who_was_there() -> None:
    intent = read("how many ppl on screen 3 seconds in")
    assert (intent.kind, intent.subject, intent.presence) == ("count", "person", True)
    assert intent.window == (2.0, 4.0)


def test_the_longest_wait_is_not_the_longest_stay() -> None:
    assert read("who stood the longest").still
    assert not read("which one hung around the longest").still  # stayed: in view the longest
    assert read("which one hung around the longest").qualifiers.order == "longest"


def test_after_the_switch_to_another_view_is_after_the_cut() -> None:
    intent = read("after the switch to another view how many new things appeared")
    assert intent.qualifiers.anchor == "after_cut" and intent.new


@pytest.mark.parametrize(
    ("said", "meant"),
    [
        ("anybody stood still over fifteen seconds", "anybody stood still over 15 seconds"),
        ("count the ones that went rightwards", "count the ones that went rightwards"),
        ("who stood around for a while", "who stood  "),
        ("people walking left-to-right", "people walking left to right"),
        ("the biggest crowd", "the most crowded"),
    ],
)
def test_plain_rewrites_keep_the_meaning(said: str, meant: str) -> None:
    assert plain(said) == meant
