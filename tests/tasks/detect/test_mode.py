"""The detector mode: every mode there is, split once, and what each part implies."""

from __future__ import annotations

import pytest

from tasks.detect.detectors.mode import MODES, DetectorMode


@pytest.mark.parametrize(
    ("text", "physical", "extras", "reads_text", "needs_model"),
    [
        ("motion", "motion", (), False, False),
        ("motion+ocr", "motion", ("ocr",), True, False),
        ("yolo", "yolo", (), False, True),
        ("yolo+ocr", "yolo", ("ocr",), True, True),
    ],
)
def test_each_mode_says_what_it_implies(
    text: str, physical: str, extras: tuple[str, ...], reads_text: bool, needs_model: bool
) -> None:
    mode = DetectorMode.parse(text)
    assert (mode.physical, mode.extras) == (physical, extras)
    assert (mode.reads_text, mode.needs_model) == (reads_text, needs_model)
    assert mode.classes_by_motion == (physical == "motion")
    assert str(mode) == text and mode.parts == (physical, *extras)


def test_every_mode_round_trips() -> None:
    assert [str(DetectorMode.parse(m)) for m in MODES] == list(MODES)


@pytest.mark.parametrize(
    "text", ["radar", "ocr", "ocr+motion", "motion+", "", "MOTION", "yolo+yolo"]
)
def test_an_unknown_mode_is_refused_naming_the_modes(text: str) -> None:
    with pytest.raises(ValueError, match="motion, motion\\+ocr, yolo, yolo\\+ocr"):
        DetectorMode.parse(text)


@pytest.mark.parametrize(
    ("ran", "expected"),
    [
        (["motion"], "motion"),
        (["motion", "ocr"], "motion+ocr"),
        (["motion", "yolo"], "yolo"),
        (["motion", "yolo", "ocr"], "yolo+ocr"),
    ],
)
def test_the_mode_of_the_plugins_that_ran_prefers_yolo(ran: list[str], expected: str) -> None:
    assert str(DetectorMode.of_plugins(ran)) == expected


def test_what_a_mode_sees_is_said_in_words() -> None:
    assert DetectorMode.parse("motion").sees() == "things that move"
    assert DetectorMode.parse("yolo+ocr").sees() == (
        "the classes of its YOLO model and where they move and text shown in the video"
    )
