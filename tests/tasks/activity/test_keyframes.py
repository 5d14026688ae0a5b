"""Keyframe mode (issue 42) on a rate-capped stream, where packet sizes do not follow activity.

A camera's rate cap keeps every packet near the cap, so the packet cue cannot place an event
between keyframes and falls back to decoding everything. Asked for, keyframe mode judges each
GOP by its keyframes alone: every event at least as long as the longest GOP must lie in an
active span, the map says that length (``sure_event_s``), and the still stretches say what the
mode cannot see.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tasks.activity.keyframes import keyframe_judgement, sure_event_s
from tasks.activity.map import ActivityMap, map_activity
from tasks.activity.spans import PacketStats
from tasks.activity.stage import plan_gate, still_reason
from testkit.activity_scenes import Encoding, Event, covered, write_scene

pytestmark = pytest.mark.slow

GOP_S = 2.0
CAPPED = Encoding(GOP_S, True, 3.0, bitrate=120_000)  # noisy 320x180 at 120 kbit/s


def _events(seed: int, shortest: float, longest: float) -> list[Event]:
    """One pass every 14 s, at any phase of the GOP, ``shortest`` to ``longest`` long."""
    rng = np.random.default_rng(seed)
    events = []
    for slot in range(6):
        start = 14.0 * slot + 4.0 + float(rng.uniform(0.0, GOP_S))
        length = float(rng.uniform(shortest, longest))
        size, y = int(rng.integers(16, 40)), int(rng.integers(0, 120))
        events.append(Event("pass", start, start + length, size=size, y=y))
    return events


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Event]]:
    events = _events(42, GOP_S, 1.5 * GOP_S)
    path = tmp_path_factory.mktemp("capped") / "capped.mkv"
    write_scene(path, 88.0, events, CAPPED)
    return path, events


def test_the_packet_cue_falls_back_on_a_rate_capped_stream(
    capped: tuple[Path, list[Event]],
) -> None:
    amap = map_activity(capped[0])
    assert amap.fallback is not None and "do not follow activity" in amap.fallback
    assert plan_gate(amap).gate is None  # everything is decoded


def test_keyframe_mode_sees_every_event_of_a_gop_or_longer(
    capped: tuple[Path, list[Event]],
) -> None:
    path, events = capped
    amap = map_activity(path, cue="keyframes")
    assert amap.fallback is None and amap.cue == "keyframes"
    assert amap.sure_event_s == pytest.approx(GOP_S)
    for event in events:
        assert covered(amap, event), (event, amap.active_spans())
    assert amap.still_fraction > 0.25, amap.reasons
    plan = plan_gate(amap)
    assert plan.gate is not None
    assert plan.summary["cue"] == "keyframes" and plan.summary["sure_event_s"] == GOP_S
    assert "shorter than 2 s" in still_reason(plan.summary)


def _gops(count: int) -> list[PacketStats]:
    return [PacketStats(2.0 * i, frames=30, last_s=2.0 * i + 1.9) for i in range(count)]


def test_a_changed_keyframe_makes_its_gop_and_one_each_side_active() -> None:
    """Keyframe 3 differs from keyframe 2: the change lies in GOP 2 (4-6 s); GOPs 1 to 3 and
    the keyframe after them are decoded, and the first keyframe, nothing else."""
    gops = _gops(8)
    changed = [i == 3 for i in range(8)]
    reasons, spans = keyframe_judgement(gops, changed, 0.1)
    assert reasons[:4] == ["first", "still", "keyframe", "still"]
    assert spans == [(0.0, pytest.approx(0.1)), (2.0, pytest.approx(8.1))]
    assert sure_event_s(gops, 0.1) == pytest.approx(2.0)


def test_the_still_reason_says_what_keyframe_mode_can_miss() -> None:
    assert "idle level" in still_reason({"cue": "packets"})
    said = still_reason({"cue": "keyframes", "sure_event_s": 10.0})
    assert "keyframe mode" in said and "shorter than 10 s" in said
    assert isinstance(ActivityMap.__dataclass_fields__["cue"].default, str)
