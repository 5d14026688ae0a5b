"""Merged windows: padded spans that overlap or touch share one clip; a time range cuts spans
and windows to it."""

from __future__ import annotations

import pytest

from tasks.export.windows import SpanCut, cut_span, plan_windows


def _cuts(*spans: tuple[str, float, float]) -> list[SpanCut]:
    return [SpanCut(e, a, b) for e, a, b in spans]


@pytest.mark.parametrize(
    ("spans", "duration", "windows"),
    [
        ([("a", 5.0, 7.0)], 60.0, [(4.0, 8.0, ["a"])]),
        ([("a", 0.2, 1.0)], 60.0, [(0.0, 2.0, ["a"])]),
        ([("a", 58.5, 59.9)], 60.0, [(57.5, 60.0, ["a"])]),
        ([("a", 1.0, 2.0), ("b", 4.0, 5.0)], 60.0, [(0.0, 6.0, ["a", "b"])]),  # touch: 3.0
        ([("a", 1.0, 2.0), ("b", 4.1, 5.0)], 60.0, [(0.0, 3.0, ["a"]), (3.1, 6.0, ["b"])]),
        ([("b", 10.0, 12.0), ("a", 0.0, 48.0)], 60.0, [(0.0, 49.0, ["a", "b"])]),  # inside
    ],
)
def test_padded_spans_that_overlap_or_touch_share_a_window(
    spans: list[tuple[str, float, float]],
    duration: float,
    windows: list[tuple[float, float, list[str]]],
) -> None:
    planned = plan_windows(_cuts(*spans), duration)
    got = [(w.start_s, w.end_s, [s.evidence_id for s in w.spans]) for w in planned]
    assert got == [(pytest.approx(a), pytest.approx(b), ids) for a, b, ids in windows]
    assert [w.name for w in planned] == [f"window_0{i}" for i in range(1, len(windows) + 1)]


def test_a_time_range_cuts_the_spans_and_their_windows_to_it() -> None:
    """The lobby's EXIT 12 span (0-48 s) asked for 20-24 s: its clip shows 20-24 s only."""
    long_span = cut_span({"evidence_id": "exit", "start_s": 0.0, "end_s": 48.0}, 20.0, 24.0)
    inside = cut_span({"evidence_id": "in", "start_s": 21.0, "end_s": 22.0}, 20.0, 24.0)
    assert (long_span.start_s, long_span.end_s, long_span.original) == (20.0, 24.0, (0.0, 48.0))
    assert long_span.cut_to_range and not inside.cut_to_range
    (window,) = plan_windows([long_span, inside], 60.0, (20.0, 24.0))
    assert (window.start_s, window.end_s) == (20.0, 24.0)
    assert long_span.holds(20.0) and long_span.holds(24.0) and not long_span.holds(19.9)


def test_an_open_range_cuts_on_one_side_only() -> None:
    span = cut_span({"evidence_id": "a", "start_s": 3.0, "end_s": 9.0}, None, 5.0)
    assert (span.start_s, span.end_s, span.original) == (3.0, 5.0, (3.0, 9.0))
    (window,) = plan_windows([span], 60.0, (None, 5.0))
    assert (window.start_s, window.end_s) == (2.0, 5.0)
