"""Free text read as a search: each query becomes the filters it means, or a 422 that says what
was understood; never a guess."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from search.reader import Vocabulary, read_query, read_text
from ves.errors import NotUnderstood

RUNS = Vocabulary(frozenset({"person", "motion", "text"}), ("center", "left", "right"))
TODAY = date(2026, 11, 27)  # a Friday


@pytest.mark.parametrize(
    ("q", "searched"),
    [
        ("GATE 7 after 20 s", {"finds": "text", "text": "GATE 7", "start_s": 20.0}),
        ("EXIT 3", {"finds": "text", "text": "EXIT 3"}),  # capitals only: still a text
        ('"exit 3"', {"finds": "text", "text": "exit 3"}),
        ("every time GATE 7 was shown", {"finds": "text", "text": "GATE 7"}),
        ("people in the left zone", {"finds": "object", "classes": ["person"], "zones": ["left"]}),
        (
            "when did someone enter the left zone",
            {"finds": "event", "event_types": ["enter_zone"], "zones": ["left"]},
        ),
        (
            "stopped over 5 minutes",
            {"finds": "event", "event_types": ["dwell"], "min_dwell_s": 300},
        ),
        (
            "which videos have an object that stayed longer than 1:30",
            {"event_types": ["dwell"], "min_dwell_s": 90},
        ),
        ("scene changes", {"finds": "event", "event_types": ["scene_change"]}),
        (
            "people between 0:10 and 0:40",
            {"classes": ["person"], "start_s": 10.0, "end_s": 40.0},
        ),
        (
            "all people in the left zone after 22:00 on 2026-11-20",
            {
                "recorded_after": "2026-11-20T22:00:00.000Z",
                "recorded_before": "2026-11-21T00:00:00.000Z",
            },
        ),
        (
            "people yesterday",
            {
                "recorded_after": "2026-11-26T00:00:00.000Z",
                "recorded_before": "2026-11-27T00:00:00.000Z",
            },
        ),
        (
            "people last week",
            {
                "recorded_after": "2026-11-16T00:00:00.000Z",
                "recorded_before": "2026-11-23T00:00:00.000Z",
            },
        ),
        ("people after 1:30", {"start_s": 90.0}),  # no day: a time in the video, as Ask reads it
    ],
)
def test_queries_become_the_filters_they_mean(q: str, searched: dict[str, Any]) -> None:
    interpreted = read_query(q, RUNS, TODAY).checked().interpreted()
    assert {k: interpreted.get(k) for k in searched} == searched, interpreted


@pytest.mark.parametrize(
    ("q", "why", "understood"),
    [
        ("did a helicopter land", "helicopter", {}),
        ("what is the weather like", "does not read as a search", {}),
        ("gate 7", "does not read as a search", {}),  # a text in lower case needs its quotes
        ("red people", "colour", {"subject": "person"}),
        ("people after 22:00 last week", "one day", {"recorded_after": "2026-11-16T00:00:00.000Z"}),
        ("on 2026-11-20", "nothing to search for", {"recorded_after": "2026-11-20T00:00:00.000Z"}),
        ("people on 2026-13-45", "not a date", {}),
    ],
)
def test_what_cannot_be_read_is_refused_with_what_was_understood(
    q: str, why: str, understood: dict[str, Any]
) -> None:
    with pytest.raises(NotUnderstood) as refused:
        read_query(q, RUNS, TODAY)
    assert why in refused.value.detail
    for key, value in understood.items():
        assert refused.value.interpreted.get(key) == value, refused.value.interpreted


def test_a_reading_keeps_asks_intent_for_the_workspace_ask() -> None:
    reading = read_text("How many people were seen across all videos yesterday?", RUNS, TODAY)
    assert reading.intent.kind == "count" and reading.filters is not None
    assert reading.filters.classes == ("person",)
