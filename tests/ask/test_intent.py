"""Reading questions: shape, subject, action, zone, window, quoted text, refusals."""

from __future__ import annotations

import pytest

from ask.intent import Intent, parse_question
from ask.windows import find_window

KNOWN = frozenset({"motion", "text"})
ZONES = ["left", "center", "right"]


def read(question: str, known: frozenset[str] = KNOWN) -> Intent:
    return parse_question(question, known, ZONES)


@pytest.mark.parametrize(
    ("question", "kind", "subject", "action"),
    [
        ("How many objects appeared?", "count", "object", "appear"),
        ("how many people showed up", "count", "object", "appear"),
        ("How many texts were read?", "count", "text", None),
        ("How many times did the scene change?", "count", "scene_change", None),
        ("When did the first object appear?", "first", "object", "appear"),
        ("When did the last object disappear?", "last", "object", "disappear"),
        ("When did the scene cut happen?", "when", "scene_change", None),
        ("How long did the object stay still?", "duration", "object", "dwell"),
        ("Did anyone linger?", "exists", "object", "dwell"),
        ("Did anyone enter the right zone?", "exists", "object", "enter_zone"),
        ("Which zone did an object wait in?", "zone", "object", "dwell"),
        ("What text is visible?", "text", "text", "appear"),
        ("What does the sign say?", "text", "text", None),
        ("What happened between 0:04 and 0:06?", "between", "object", None),
        ("What changed at the scene change?", "change", "scene_change", None),
        # leaving or entering with no zone named is going out of or coming into view
        ("When did the first object leave the frame?", "first", "object", "disappear"),
        ("When did the last object leave?", "last", "object", "disappear"),
        ("Did anything exit the left zone?", "exists", "object", "exit_zone"),
        ("Who left the zone?", "unknown", "object", "exit_zone"),
        # "the left zone" is a place, not a leaving (it was read as exit_zone before)
        ("Was anyone in the left zone?", "exists", "object", None),
        ("What caption is shown?", "text", "text", None),
        ("What labels can be seen?", "text", "text", "appear"),
        ("What happened in the first 3 seconds?", "between", "object", None),
        ("How long did the loitering last?", "duration", "object", "dwell"),
    ],
)
def test_shapes_subjects_and_actions(question: str, kind: str, subject: str, action: str) -> None:
    intent = read(question)
    assert (intent.kind, intent.subject, intent.action) == (kind, subject, action)


@pytest.mark.parametrize(
    ("question", "window"),
    [
        ("what happened between 0:04 and 0:06", (4.0, 6.0)),
        ("what happened between 10 and 5 seconds", (5.0, 10.0)),
        ("what happened from 1:00 to 1:30.5", (60.0, 90.5)),
        ("what appeared in the first 10 seconds", (0.0, 10.0)),
        ("did anything appear after 50 s", (50.0, float("inf"))),
        ("what was there before 2 minutes", (0.0, 120.0)),
        ("what happened at 12 s", (11.0, 13.0)),
        ("how many objects appeared", None),
    ],
)
def test_time_windows_in_seconds_and_mm_ss(question: str, window: tuple[float, float]) -> None:
    assert find_window(question) == window


@pytest.mark.parametrize(
    ("question", "quoted"),
    [
        ("When was 'EXIT 3' visible?", "EXIT 3"),
        ('Was "Open Daily" shown?', "Open Daily"),
        ("How long was EXIT 3 visible?", "EXIT 3"),
        ("Is there a sign saying PIZZA?", "PIZZA"),
    ],
)
def test_a_quoted_or_capitalised_text_is_about_text(question: str, quoted: str) -> None:
    intent = read(question)
    assert (intent.quoted, intent.subject) == (quoted, "text")
    assert intent.action != "exit_zone"  # EXIT in a sign is no verb


def test_the_left_zone_and_the_verb_left() -> None:
    assert read("did anyone enter the left zone").zone == "left"
    assert read("when did the object that left appear").zone is None


@pytest.mark.parametrize(
    ("question", "kind", "unsupported"),
    [
        ("Did a helicopter land?", "unsupported", "helicopter"),
        ("How many dogs are there?", "unsupported", "dogs"),
        ("What colour is the car?", "unsupported", "car"),
        ("Who is the person in the lobby?", "unsupported", "identity"),
        ("What did they say?", "unsupported", "sound"),
        ("Why did the person stop?", "unsupported", "intent"),
        ("What is the capital of France?", "off_topic", None),
        ("Write me a poem", "off_topic", None),
    ],
)
def test_refusals(question: str, kind: str, unsupported: str | None) -> None:
    intent = read(question)
    assert (intent.kind, intent.unsupported) == (kind, unsupported)


def test_a_class_the_runs_model_knows_is_a_subject() -> None:
    intent = read("How many cars appeared?", frozenset({"car", "person", "text"}))
    assert (intent.kind, intent.subject) == ("count", "car")
    assert read("How many cars appeared?").kind == "unsupported"  # motion cannot name cars


PEOPLE_RUN = frozenset({"motion", "person", "face", "text"})  # motion+person+face+ocr


@pytest.mark.parametrize(
    ("question", "kind", "action"),
    [
        ("How many people appeared?", "count", "appear"),
        ("How many persons entered the left zone?", "count", "enter_zone"),
        ("When did the first pedestrian appear?", "first", "appear"),
        ("Did anyone linger?", "exists", "dwell"),
        ("How many visitors exited the right zone?", "count", "exit_zone"),
    ],
)
def test_people_are_the_person_class_where_a_person_detector_ran(
    question: str, kind: str, action: str
) -> None:
    intent = read(question, PEOPLE_RUN)
    assert (intent.kind, intent.subject, intent.action) == (kind, "person", action)
    assert read(question).subject == "object"  # motion alone: moving objects, with a caveat


def test_faces_are_a_subject_only_where_the_face_detector_ran() -> None:
    assert read("How many faces appeared?", PEOPLE_RUN).subject == "face"
    refused = read("How many faces appeared?", frozenset({"motion", "person", "text"}))
    assert (refused.kind, refused.unsupported) == ("unsupported", "faces")
    assert read("How many cars appeared?", PEOPLE_RUN).kind == "unsupported"


@pytest.mark.parametrize(
    ("question", "kind", "action", "negation"),
    [
        ("how many objects never stopped", "count", "dwell", "never"),
        ("which objects did not stop", "list", "dwell", "not"),
        ("how many things didn't wait", "count", "dwell", "didn't"),
        # a leading negative auxiliary asks for confirmation: no negation
        ("didn't the blue one wait?", "exists", "dwell", None),
        ("wasn't there a yellow object", "exists", "appear", None),
    ],
)
def test_negations_are_read_not_dropped(
    question: str, kind: str, action: str | None, negation: str | None
) -> None:
    intent = read(question)
    assert (intent.kind, intent.action, intent.negation) == (kind, action, negation)


@pytest.mark.parametrize(
    ("question", "kind", "subject"),
    [
        ("red object seen?", "exists", "object"),  # terse: no shape word
        ("signs?", "text", "text"),
        ("scene change time", "when", "scene_change"),
        ("HOW MANY OBJECTS WERE THERE", "count", "object"),  # capitals name no text here
        ("how many objects appaered", "count", "object"),  # two letters swapped
        ("give me a quick summary of the footage", "summary", "object"),
        ("what's going on around 0:42", "between", "object"),
    ],
)
def test_terse_shouted_and_misspelt_questions(question: str, kind: str, subject: str) -> None:
    intent = read(question)
    assert (intent.kind, intent.subject, intent.quoted) == (kind, subject, None)


def test_a_quick_object_is_not_a_quick_summary() -> None:
    assert read("did a quick object appear").kind == "not_understood"


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("did something appear 5 seconds after the cut", "5 seconds"),  # an offset, not a window
        ("how many objects appeared since 0:30", "since"),
        ("how many objects appeared after the blue one left", "after"),
        ("which zone did the green object end in", "end"),
        ("what happened at the start", "start"),
        ("did the blue object move slowly", "slowly"),
        ("did every object stop?", "every"),  # one that did is no "yes"
        ("did only the blue one wait", "only"),
    ],
)
def test_a_qualifier_the_reader_cannot_compute_is_named_not_dropped(
    question: str, word: str
) -> None:
    intent = read(question)
    assert (intent.kind, intent.unknown_word) == ("not_understood", word)


@pytest.mark.parametrize(
    ("question", "moving", "pace"),
    [
        ("did anybody walk through the lobby?", True, None),
        ("how many things crossed the room", True, None),
        ("did the blue object move quickly", False, "quickly"),
        ("anyone running?", False, "running"),
        ("did someone wait by the door", False, None),
    ],
)
def test_motion_words_are_read_as_moving_or_a_pace(
    question: str, moving: bool, pace: str | None
) -> None:
    intent = read(question)
    assert intent.unknown_word is None
    assert (intent.moving, intent.pace) == (moving, pace)


@pytest.mark.parametrize(
    ("question", "setting", "part"),
    [
        ("How many different objects moved through the lobby?", ("lobby",), None),
        ("did anyone cross the street", ("street",), None),
        ("did someone wait by the door?", (), "door"),
        ("how many objects were in the left zone", (), None),  # a zone, read as one
    ],
)
def test_place_words_are_the_video_or_a_named_part(
    question: str, setting: tuple[str, ...], part: str | None
) -> None:
    intent = read(question)
    assert intent.kind != "not_understood", intent
    assert (intent.place.setting, intent.place.part) == (setting, part)


def test_a_title_word_is_the_place_and_a_longer_than_is_a_least_length() -> None:
    known = frozenset({"motion", "person"})
    intent = parse_question("who waited longer than 4 s at the atrium?", known, [], ("atrium",))
    assert intent.kind != "not_understood" and intent.place.setting == ("atrium",)
    assert intent.qualifiers.min_s == 4.0 and intent.action == "dwell"


def test_walking_left_to_right_heads_right() -> None:
    assert read("how many people walked left to right").qualifiers.direction == "right"
    assert read("how many went from right to left").qualifiers.direction == "left"


def test_the_picture_switching_to_another_view_is_a_scene_change() -> None:
    intent = read("At what moment does the picture switch to another view?")
    assert (intent.kind, intent.subject) == ("when", "scene_change")
