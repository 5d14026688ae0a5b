"""Texts read at a few looks become texts seen over time, against KNOWN truth.

The glances are a flat grey background with a little seeded noise; a text is a bright rectangle
drawn at a known normalised box over a known stretch of frames (sampled every 0.2 s), and an
occluder is a dark one drawn over it. Each expected instance is derived from those stretches.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import pytest

from tasks.detect.text_tracks import (
    Box,
    Glances,
    Reading,
    TextInstance,
    TextTrackConfig,
    normalised,
    text_instances,
)

FRAMES = 60
HEIGHT, WIDTH = 60, 80
TIMES = [i / 5 for i in range(FRAMES)]  # 0.2 s steps
ONE_SCENE = [0] * FRAMES
EXIT_BOX: Box = (0.25, 0.25, 0.5, 0.5)
FAR_BOX: Box = (0.7, 0.6, 0.95, 0.9)
SHOWN = range(10, 41)  # the text is on frames 10..40
LONG_HIDE = range(20, 35)  # an occluder in front of it for 3.0 s


def blank(seed: int = 0) -> Glances:
    rng = np.random.default_rng(seed)
    return (100 + rng.integers(-1, 2, (FRAMES, HEIGHT, WIDTH))).astype(np.uint8)


def draw(glances: Glances, box: Box, frames: range, level: int = 220) -> Glances:
    """A flat rectangle at a normalised box on ``frames`` (in place; returns the glances)."""
    x1, x2 = round(box[0] * WIDTH), round(box[2] * WIDTH)
    y1, y2 = round(box[1] * HEIGHT), round(box[3] * HEIGHT)
    glances[frames.start : frames.stop, y1:y2, x1:x2] = level
    return glances


def sign(box: Box = EXIT_BOX, frames: range = SHOWN) -> Glances:
    return draw(blank(), box, frames)


def read(looks: Sequence[int], text: str = "EXIT 3", box: Box = EXIT_BOX) -> list[Reading]:
    return [Reading(look, box, text, 0.9) for look in looks]


def spans(instances: Sequence[TextInstance]) -> list[tuple[int, int]]:
    """Each instance's first and last frame, checking it holds every frame in between."""
    for inst in instances:
        assert inst.samples == set(range(min(inst.samples), max(inst.samples) + 1))
    return [(min(inst.samples), max(inst.samples)) for inst in instances]


# normalised


@pytest.mark.parametrize(
    ("text", "expected"),
    [("EXIT 3", "exit3"), ("  Exit\t3\n", "exit3"), ("E X I T", "exit"), ("Straße", "strasse")],
)
def test_normalised_ignores_case_and_spaces(text: str, expected: str) -> None:
    assert normalised(text) == expected


# text_instances


@pytest.mark.parametrize("looks", [(25,), (10,), (40,), (15, 35), (12, 25, 38)])
def test_text_read_once_or_more_is_one_instance_over_the_frames_it_is_shown(
    looks: tuple[int, ...],
) -> None:
    # Read twice or more, each scan stops at the next reading's look: the same frames result.
    instances = text_instances(read(looks), sign(), TIMES, ONE_SCENE)

    assert spans(instances) == [(SHOWN.start, SHOWN.stop - 1)]
    assert instances[0].text == "EXIT 3"
    assert instances[0].box == EXIT_BOX


@pytest.mark.parametrize("look", [15, 30])
def test_an_occluder_shorter_than_max_gap_s_is_bridged(look: int) -> None:
    hidden = range(20, 25)  # 1.0 s of the 2.0 s allowed
    glances = draw(sign(), EXIT_BOX, hidden, level=20)
    assert TIMES[hidden.stop] - TIMES[hidden.start - 1] < TextTrackConfig().max_gap_s

    instances = text_instances(read([look]), glances, TIMES, ONE_SCENE)

    assert spans(instances) == [(SHOWN.start, SHOWN.stop - 1)]  # frames behind it count


BEFORE_LONG_HIDE = (SHOWN.start, LONG_HIDE.start - 1)
AFTER_LONG_HIDE = (LONG_HIDE.stop, SHOWN.stop - 1)


@pytest.mark.parametrize(
    ("looks", "expected"),
    [
        ((15, 38), [BEFORE_LONG_HIDE, AFTER_LONG_HIDE]),
        ((15,), [BEFORE_LONG_HIDE]),
        ((38,), [AFTER_LONG_HIDE]),
    ],
)
def test_an_occluder_longer_than_max_gap_s_splits_or_ends_the_interval(
    looks: tuple[int, ...], expected: list[tuple[int, int]]
) -> None:
    glances = draw(sign(), EXIT_BOX, LONG_HIDE, level=20)
    assert TIMES[LONG_HIDE.stop] - TIMES[LONG_HIDE.start - 1] > TextTrackConfig().max_gap_s

    instances = text_instances(read(looks), glances, TIMES, ONE_SCENE)

    assert spans(instances) == expected


def test_a_scene_change_stops_the_scan_even_when_the_pixels_are_the_same() -> None:
    cut = 30
    scene = [0] * cut + [1] * (FRAMES - cut)

    instances = text_instances(read([25]), sign(), TIMES, scene)

    assert spans(instances) == [(SHOWN.start, cut - 1)]


def test_readings_on_both_sides_of_a_cut_whose_spans_touch_are_one_instance() -> None:
    cut = 30
    scene = [0] * cut + [1] * (FRAMES - cut)

    instances = text_instances(read([25, 35]), sign(), TIMES, scene)

    assert spans(instances) == [(SHOWN.start, SHOWN.stop - 1)]


def test_two_texts_at_two_places_at_the_same_time_are_two_instances() -> None:
    glances = draw(sign(), FAR_BOX, SHOWN)
    readings = read([25]) + read([25], "PUSH", FAR_BOX)

    instances = text_instances(readings, glances, TIMES, ONE_SCENE)

    assert sorted((inst.text, inst.box) for inst in instances) == [
        ("EXIT 3", EXIT_BOX),
        ("PUSH", FAR_BOX),
    ]
    assert spans(instances) == [(SHOWN.start, SHOWN.stop - 1)] * 2


def test_the_same_text_at_two_far_apart_places_is_two_instances() -> None:
    glances = draw(sign(), FAR_BOX, range(20, 50))
    readings = read([25]) + read([25], box=FAR_BOX)

    instances = text_instances(readings, glances, TIMES, ONE_SCENE)

    assert {inst.box: spans([inst])[0] for inst in instances} == {
        EXIT_BOX: (SHOWN.start, SHOWN.stop - 1),
        FAR_BOX: (20, 49),
    }
    assert [inst.text for inst in instances] == ["EXIT 3", "EXIT 3"]


@pytest.mark.parametrize(
    "readings",
    [
        [(25, "EXIT 3", 0.9), (25, "EXlT 3", 0.6)],  # one look, two readings
        [(15, "EXlT 3", 0.6), (25, "EXIT 3", 0.9), (35, "EXlT 3", 0.6)],  # 1.2 beats 0.9
        [(15, "EXIT 3", 0.7), (25, "EXlT 3", 0.9), (35, "EXIT 3", 0.7)],  # 1.4 beats 0.9
    ],
)
def test_an_ocr_slip_at_the_same_place_and_time_is_one_instance_named_by_total_score(
    readings: list[tuple[int, str, float]],
) -> None:
    totals: defaultdict[str, float] = defaultdict(float)
    for _, text, score in readings:
        totals[text] += score
    best_total = max(totals, key=lambda text: totals[text])
    scores = [score for _, _, score in readings]

    instances = text_instances(
        [Reading(look, EXIT_BOX, text, score) for look, text, score in readings],
        sign(),
        TIMES,
        ONE_SCENE,
    )

    assert spans(instances) == [(SHOWN.start, SHOWN.stop - 1)]
    assert instances[0].text == best_total
    assert instances[0].score == pytest.approx(sum(scores) / len(scores))


@pytest.mark.parametrize(
    "parts",
    [
        [(25, "TAXI", (0.25, 0.25, 0.37, 0.5)), (25, "564", (0.4, 0.25, 0.5, 0.5))],
        [(15, "TAXI", (0.25, 0.25, 0.37, 0.5)), (35, "564", (0.4, 0.25, 0.5, 0.5))],
    ],
)
def test_words_read_apart_join_the_whole_text_at_their_place(
    parts: list[tuple[int, str, Box]],
) -> None:
    """Widely spaced letters make the OCR read a sign's words on their own at some looks; the
    words inside the whole text's box are that text, named by the whole reading."""
    readings = [Reading(25, EXIT_BOX, "TAXI 564", 0.8)]
    readings += [Reading(look, box, text, 0.95) for look, text, box in parts]

    instances = text_instances(readings, sign(), TIMES, ONE_SCENE)

    assert [inst.text for inst in instances] == ["TAXI 564"]
    assert spans(instances) == [(SHOWN.start, SHOWN.stop - 1)]


@pytest.mark.parametrize("gain", [0.75, 1.15])
def test_a_light_switched_on_or_off_does_not_end_a_text(gain: float) -> None:
    glances = sign()
    glances[30:] = np.clip(glances[30:].astype(np.float32) * gain, 0, 255).astype(np.uint8)

    instances = text_instances(read([25]), glances, TIMES, ONE_SCENE)

    assert spans(instances) == [(SHOWN.start, SHOWN.stop - 1)]


def test_a_faint_text_ends_when_it_goes() -> None:
    """Text with no plate changes its region by a few levels only; it still ends on time."""
    glances = draw(blank(), EXIT_BOX, SHOWN, level=108)

    instances = text_instances(read([25]), glances, TIMES, ONE_SCENE)

    assert spans(instances) == [(SHOWN.start, SHOWN.stop - 1)]


def test_a_reading_half_hidden_by_a_passer_by_is_the_same_text() -> None:
    """One place shows one text at a time: "DNE 46" read at the place of "ZONE 46" while a
    passer-by hid its first letter is a slip of it, not a second text."""
    readings = [Reading(15, EXIT_BOX, "ZONE 46", 0.9), Reading(25, EXIT_BOX, "ZONE 46", 0.9)]
    readings.append(Reading(20, (0.28, 0.25, 0.5, 0.5), "DNE 46", 0.8))

    instances = text_instances(readings, sign(), TIMES, ONE_SCENE)

    assert [inst.text for inst in instances] == ["ZONE 46"]
