"""The activity map against idle-heavy videos whose events are known exactly.

Every planted event's frames must lie in an active span; still stretches far from any event
should mostly be judged still (else the map saves nothing). Events sit anywhere in the GOP,
including wholly between two keyframes, where only the packet sizes can reveal them.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt
import pytest

from tasks.activity.map import ActivityMap, map_activity

FPS = 15
SIZE = (320, 180)


@dataclass(frozen=True)
class Event:
    """``kind``: "pass" (a box crossing), "sign" (appears and stays), "light" (gain jump)."""

    kind: str
    t0: float
    t1: float
    size: int = 24
    y: int = 60

    def paint(self, frame: npt.NDArray[np.float32], t: float) -> None:
        if self.kind == "light" and t >= self.t0:
            frame *= 1.35
        elif self.kind == "sign" and t >= self.t0:
            frame[self.y : self.y + self.size, 200 : 200 + 2 * self.size] = 235.0
        elif self.kind == "pass" and self.t0 <= t <= self.t1:
            x = int((t - self.t0) / max(self.t1 - self.t0, 1e-6) * (SIZE[0] - self.size))
            frame[self.y : self.y + self.size, x : x + self.size // 2] = (20.0, 200.0, 40.0)


def _backdrop(seed: int) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    coarse = rng.uniform(60, 160, size=(9, 16, 3)).astype(np.float32)
    return np.kron(coarse, np.ones((20, 20, 1), dtype=np.float32))


def write_scene(
    path: Path, seconds: float, events: list[Event], gop_s: float, bframes: bool, noise: float
) -> None:
    """An idle scene with ``events`` (seeded), H.264 with a fixed GOP."""
    rng = np.random.default_rng(7)
    backdrop = _backdrop(3)
    with av.open(str(path), "w") as out:
        options = {
            "preset": "veryfast",
            "crf": "23",
            "sc_threshold": "0",
            "bf": "3" if bframes else "0",
        }
        stream = out.add_stream("libx264", rate=FPS, options=options)
        stream.width, stream.height, stream.pix_fmt = SIZE[0], SIZE[1], "yuv420p"
        stream.gop_size = round(gop_s * FPS)
        stream.time_base = Fraction(1, FPS)
        for index in range(round(seconds * FPS)):
            frame = backdrop.copy()
            for event in events:
                event.paint(frame, index / FPS)
            if noise:
                frame += rng.normal(0, noise, frame.shape).astype(np.float32)
            picture = av.VideoFrame.from_ndarray(np.clip(frame, 0, 255).astype(np.uint8), "rgb24")
            picture.pts = index
            out.mux(stream.encode(picture))
        out.mux(stream.encode(None))


def covered(amap: ActivityMap, t0: float, t1: float) -> bool:
    """Whether every frame time in ``[t0, t1]`` lies in an active span."""
    spans = amap.active_spans()
    times = np.arange(np.ceil(t0 * FPS), np.floor(t1 * FPS) + 1) / FPS
    return all(any(s - 1e-6 <= t < e + 1e-6 for s, e in spans) for t in times)


def _caught_by(amap: ActivityMap, t0: float, t1: float) -> set[str]:
    return {
        r
        for s, e, r in zip(amap.starts_s, amap.ends_s, amap.reasons, strict=True)
        if s < t1 + 1e-6 and e > t0 - 1e-6
    }


# (GOP s, B-frames, noise): clean and noisy, 2 s and 10 s GOPs.
STREAMS = [(2.0, False, 0.0), (2.0, True, 3.0), (10.0, True, 0.0), (10.0, False, 3.0)]


def _events(gop_s: float) -> list[Event]:
    """A sign during a still stretch, a light, and passes big and small, slow and fast, one
    wholly between two keyframes (it starts after one and ends before the next)."""
    return [
        Event("pass", 6 * gop_s + 0.3 * gop_s, 6 * gop_s + 0.3 * gop_s + 0.5, size=30),
        Event("pass", 12 * gop_s + 0.55 * gop_s, 12 * gop_s + 0.55 * gop_s + 3.0, size=14, y=120),
        Event("sign", 20 * gop_s + 0.4 * gop_s, 20 * gop_s + 0.4 * gop_s + 0.5, size=16),
        Event("light", 30 * gop_s + 0.7 * gop_s, 30 * gop_s + 0.7 * gop_s + 0.5),
    ]


@pytest.mark.parametrize(("gop_s", "bframes", "noise"), STREAMS)
def test_every_event_lies_in_an_active_span(
    tmp_path: Path, gop_s: float, bframes: bool, noise: float
) -> None:
    events = _events(gop_s) if gop_s <= 2 else _events(gop_s)[:1]
    seconds = 40 * gop_s if gop_s <= 2 else 10 * gop_s
    path = tmp_path / "scene.mp4"
    write_scene(path, seconds, events, gop_s, bframes, noise)
    amap = map_activity(path)
    assert amap.fallback is None
    for event in events:
        assert covered(amap, event.t0, event.t1), (
            event,
            amap.reasons,
            _caught_by(amap, event.t0, event.t1),
        )
    assert amap.still_fraction > 0.4, amap.reasons


def test_a_pass_between_keyframes_is_seen_by_packet_sizes(tmp_path: Path) -> None:
    """Keyframes before and after match: only the packets can say something passed."""
    gop_s = 2.0
    event = Event("pass", 16 * gop_s + 0.6, 16 * gop_s + 1.2, size=20)
    path = tmp_path / "between.mp4"
    write_scene(path, 30 * gop_s, [event], gop_s, bframes=True, noise=3.0)
    amap = map_activity(path)
    assert "packets" in _caught_by(amap, event.t0, event.t1)
    assert covered(amap, event.t0, event.t1)


def test_no_keyframe_cadence_falls_back_to_all_active(tmp_path: Path) -> None:
    path = tmp_path / "onekey.mp4"
    write_scene(path, 8.0, [], gop_s=60.0, bframes=False, noise=0.0)
    amap = map_activity(path)
    assert amap.fallback is not None and "keyframe" in amap.fallback
    assert all(amap.active)


@pytest.mark.parametrize("seed", range(4))
def test_seeded_passes_anywhere_in_the_gop_are_all_active(tmp_path: Path, seed: int) -> None:
    """Passes of 0.5 to 3 s, small and large, slow and fast, starting at any phase of the GOP,
    on a noisy B-frame stream with 2 s GOPs: every one lies in an active span."""
    rng = np.random.default_rng(seed)
    gop_s, events = 2.0, []
    for slot in range(3):  # one event per 20 s stretch, idle between them
        length = float(rng.uniform(0.5, 3.0))
        start = 20.0 * slot + 6.0 + float(rng.uniform(0.0, gop_s))
        size = int(rng.integers(12, 40))
        events.append(Event("pass", start, start + length, size=size, y=int(rng.integers(0, 130))))
    path = tmp_path / "seeded.mp4"
    write_scene(path, 60.0, events, gop_s, bframes=True, noise=3.0)
    amap = map_activity(path)
    for event in events:
        assert covered(amap, event.t0, event.t1), (event, amap.reasons)
    assert amap.still_fraction > 0.3, amap.reasons
