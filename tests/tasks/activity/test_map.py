"""Issue 32's truth test for the activity gate: idle-heavy scenes whose events are known exactly.

Every planted event's whole time range must lie in an active span; the still fraction per case
is recorded (``-rA`` shows it) and must stay worth having. Events sit anywhere in the GOP,
including wholly between two keyframes, where only the packet sizes can reveal them. The scenes
are in ``testkit.activity_scenes`` (``benchmarks/activity.py --truth`` measures the same ones).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tasks.activity.map import map_activity
from testkit.activity_scenes import (
    Case,
    Encoding,
    Event,
    covered,
    truth_cases,
    write_scene,
)

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("case", truth_cases(), ids=lambda case: case.name)
def test_every_planted_event_lies_in_an_active_span(
    tmp_path: Path, case: Case, record_property: Callable[[str, object], None]
) -> None:
    path = tmp_path / "scene.mkv"
    write_scene(path, case.seconds, list(case.events), case.enc)
    amap = map_activity(path)
    record_property("still_fraction", round(amap.still_fraction, 3))
    print(f"{case.name}: still {amap.still_fraction:.0%}")
    if case.enc.open_gop:  # its recovery points do not decode alone: all active, and why
        assert amap.fallback is not None and "open GOP" in amap.fallback
        assert amap.active_spans() == [(amap.starts_s[0], amap.ends_s[-1])]
        return
    assert amap.fallback is None
    for event in case.events:
        assert covered(amap, event), (event, amap.active_spans(), amap.raised_s, amap.reasons)
    assert amap.still_fraction > 0.2, amap.reasons  # event-dense scenes: 5 events in 52 s


def test_a_pass_between_keyframes_is_located_by_packet_sizes(tmp_path: Path) -> None:
    """Keyframes before and after match: only the packets can say something passed, and they
    say where, so the span ends within a margin of the pass, not at the GOP's end."""
    enc = Encoding(10.0, True, 3.0)
    event = Event("pass", 52.0, 52.6, size=20)
    path = tmp_path / "between.mkv"
    write_scene(path, 90.0, [event], enc)
    amap = map_activity(path)
    assert covered(amap, event)
    (span,) = [s for s in amap.active_spans() if s[0] <= event.t0 < s[1]]
    assert span[0] == pytest.approx(50.0) and span[1] < event.t1 + 2 * amap.margin_s + 0.5
    assert "packets" in amap.reasons


def test_the_summary_is_json_and_the_spans_tile_the_video(tmp_path: Path) -> None:
    path = tmp_path / "scene.mkv"
    write_scene(path, 30.0, [Event("pass", 12.3, 13.5)], Encoding(2.0, True, 3.0))
    amap = map_activity(path)
    summary = json.loads(json.dumps(amap.to_dict()))
    assert summary["fallback"] is None and summary["gops"]
    pieces = sorted(
        [(s, e) for s, e in amap.active_spans()] + [(s, e) for s, e, _ in amap.still_spans()]
    )
    assert pieces[0][0] == amap.starts_s[0] and pieces[-1][1] == amap.ends_s[-1]
    assert all(a[1] == pytest.approx(b[0]) for a, b in itertools.pairwise(pieces))
    assert all(s in amap.starts_s for s, _ in amap.active_spans())


@pytest.mark.parametrize(
    ("seconds", "enc", "words"),
    [
        (8.0, Encoding(60.0, False, 0.0), "keyframe(s)"),
        (65.0, Encoding(62.0, False, 0.0, fps=5), "a GOP of 62 s"),
    ],
    ids=["one-keyframe", "a-62-s-GOP"],
)
def test_no_keyframe_cadence_falls_back_to_all_active(
    tmp_path: Path, seconds: float, enc: Encoding, words: str
) -> None:
    path = tmp_path / "scene.mkv"
    write_scene(path, seconds, [], enc)
    amap = map_activity(path)
    assert amap.fallback is not None and words in amap.fallback
    assert all(amap.active) and amap.still_fraction == 0.0
    assert amap.active_spans() == [(amap.starts_s[0], amap.ends_s[-1])]


def test_a_file_cut_short_is_decoded_whole_for_the_sample_stage_to_judge(tmp_path: Path) -> None:
    """The map reads every packet first: a file cut short must not fail the run there as
    "corrupt"; the map falls back, and the sample stage says the file is truncated."""
    whole = tmp_path / "whole.mp4"
    write_scene(whole, 20.0, [Event("pass", 12.3, 13.5)], Encoding(2.0, True, 3.0))
    cut = tmp_path / "cut.mp4"
    data = whole.read_bytes()
    cut.write_bytes(data[: len(data) * 55 // 100])
    amap = map_activity(cut)
    assert amap.fallback is not None and "could not be read to its end" in amap.fallback
    assert not amap.spans and amap.still_fraction == 0.0
