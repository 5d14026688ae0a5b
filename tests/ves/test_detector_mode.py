"""The detector mode: every mode there is, split once, and what each part implies."""

from __future__ import annotations

import pytest

from ves.detector_mode import MODES, DetectorMode


@pytest.mark.parametrize(
    ("text", "physical", "extras", "reads_text", "needs_model"),
    [
        ("motion", "motion", (), False, False),
        ("motion+ocr", "motion", ("ocr",), True, False),
        ("yolo", "yolo", (), False, True),
        ("yolo+ocr", "yolo", ("ocr",), True, True),
        ("motion+person+ocr", "motion", ("person", "ocr"), True, False),
        ("yolo+face", "yolo", ("face",), False, True),
    ],
)
def test_each_mode_says_what_it_implies(
    text: str, physical: str, extras: tuple[str, ...], reads_text: bool, needs_model: bool
) -> None:
    mode = DetectorMode.parse(text)
    assert (mode.physical, mode.extras) == (physical, extras)
    assert (mode.reads_text, mode.needs_model) == (reads_text, needs_model)
    assert mode.classes_by_motion == (physical == "motion" and "person" not in extras)
    assert str(mode) == text and mode.parts == (physical, *extras)


def test_every_mode_round_trips() -> None:
    assert [str(DetectorMode.parse(m)) for m in MODES] == list(MODES)


@pytest.mark.parametrize(
    "text",
    [
        *["radar", "ocr", "ocr+motion", "motion+", "", "MOTION", "yolo+yolo", "motion+ocr+ocr"],
        *["yolo+person", "person", "motion+car"],
    ],
)
def test_an_unknown_mode_is_refused_naming_the_modes(text: str) -> None:
    with pytest.raises(ValueError, match=r"motion, motion\+person, .*yolo\+face\+ocr"):
        DetectorMode.parse(text)


def test_extras_may_come_in_any_order_and_are_written_in_one() -> None:
    assert str(DetectorMode.parse("motion+ocr+face+person")) == "motion+person+face+ocr"
    assert len(MODES) == 12 and "yolo+person" not in MODES  # a YOLO model's classes win


def test_the_classes_a_mode_can_name() -> None:
    assert DetectorMode.parse("motion+person+face+ocr").classes() == ("person", "face", "text")
    assert DetectorMode.parse("motion").classes() == ()


@pytest.mark.parametrize(
    ("ran", "expected"),
    [
        (["motion"], "motion"),
        (["motion", "ocr"], "motion+ocr"),
        (["motion", "yolo"], "yolo"),
        (["motion", "yolo", "ocr"], "yolo+ocr"),
        (["motion", "person", "ocr"], "motion+person+ocr"),
    ],
)
def test_the_mode_of_the_plugins_that_ran_prefers_yolo(ran: list[str], expected: str) -> None:
    assert str(DetectorMode.of_plugins(ran)) == expected


def test_what_a_mode_sees_is_said_in_words() -> None:
    assert DetectorMode.parse("motion").sees() == "things that move"
    assert DetectorMode.parse("yolo+ocr").sees() == (
        "the classes of its YOLO model and where they move and text shown in the video"
    )
    assert DetectorMode.parse("motion+person+ocr").sees() == (
        "things that move, people and text shown in the video"
    )
