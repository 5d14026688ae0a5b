"""Idle-heavy scenes with planted events whose times are known exactly (issue 32's truth test).

Shared by ``tests/tasks/activity/test_map.py`` and ``benchmarks/activity.py``: a seeded
backdrop, optional sensor-like noise, and events painted at known times, encoded with a fixed
GOP by x264 or x265 (with or without B-frames, closed or open GOPs).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import numpy.typing as npt

from tasks.activity.map import ActivityMap

FPS = 15
SIZE = (320, 180)


@dataclass(frozen=True)
class Event:
    """``kind``: "pass" (a box crossing; ``speed`` crossings of the frame in its time), "sign"
    (appears and stays), "light" (a global brightness step that stays)."""

    kind: str
    t0: float
    t1: float
    size: int = 24
    y: int = 60
    speed: float = 1.0

    def paint(self, frame: npt.NDArray[np.float32], t: float) -> None:
        if self.kind == "light" and t >= self.t0:
            frame *= 1.35
        elif self.kind == "sign" and t >= self.t0:
            frame[self.y : self.y + self.size, 200 : 200 + 2 * self.size] = 235.0
        elif self.kind == "pass" and self.t0 <= t <= self.t1:
            phase = (t - self.t0) / max(self.t1 - self.t0, 1e-6) * self.speed % 1.0
            x = int(phase * (frame.shape[1] - self.size))
            frame[self.y : self.y + self.size, x : x + self.size // 2] = (20.0, 200.0, 40.0)


@dataclass(frozen=True)
class Encoding:
    """How a scene is encoded: codec, GOP length, B-frames, open GOPs, noise, frame rate."""

    gop_s: float
    bframes: bool
    noise: float
    codec: str = "libx264"
    open_gop: bool = False
    fps: int = FPS
    bitrate: int | None = None  # rate-capped (a camera's bitrate target) instead of crf

    @property
    def label(self) -> str:
        kind = "hevc" if self.codec == "libx265" else "h264"
        return (
            f"{kind} gop{self.gop_s:g}s {'B' if self.bframes else 'noB'}"
            f"{' open' if self.open_gop else ''} {'noisy' if self.noise else 'clean'}"
            f"{f' {self.bitrate // 1000} kbit/s' if self.bitrate else ''}"
        )


def _backdrop(seed: int) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    coarse = rng.uniform(60, 160, size=(SIZE[1] // 20, SIZE[0] // 20, 3)).astype(np.float32)
    return np.kron(coarse, np.ones((20, 20, 1), dtype=np.float32))


def _options(enc: Encoding) -> dict[str, str]:
    if enc.codec == "libx265":
        bf = "3" if enc.bframes else "0"
        params = f"bframes={bf}:scenecut=0:open-gop={int(enc.open_gop)}:log-level=error"
        return {"preset": "ultrafast", "crf": "26", "x265-params": params}
    options = {"preset": "veryfast", "sc_threshold": "0"}
    if enc.bitrate is None:
        options["crf"] = "23"
    else:  # a camera's rate cap: the packets stay near it whatever the picture holds
        rate = str(enc.bitrate)
        options.update({"maxrate": rate, "bufsize": str(enc.bitrate // 2), "nal-hrd": "cbr"})
    options["bf"] = "3" if enc.bframes else "0"
    if enc.open_gop:
        options["x264-params"] = "open-gop=1"
    return options


def write_scene(path: Path, seconds: float, events: list[Event], enc: Encoding) -> None:
    """An idle scene (seeded) with ``events`` painted in, encoded as ``enc`` says."""
    rng = np.random.default_rng(7)
    backdrop = _backdrop(3)
    with av.open(str(path), "w") as out:
        stream = out.add_stream(enc.codec, rate=enc.fps, options=_options(enc))
        assert isinstance(stream, av.VideoStream)  # narrows the codec name's stream type
        stream.width, stream.height, stream.pix_fmt = SIZE[0], SIZE[1], "yuv420p"
        stream.gop_size = round(enc.gop_s * enc.fps)
        stream.time_base = Fraction(1, enc.fps)
        if enc.bitrate is not None:
            stream.bit_rate = enc.bitrate
        for index in range(round(seconds * enc.fps)):
            frame = backdrop.copy()
            for event in events:
                event.paint(frame, index / enc.fps)
            if enc.noise:
                frame += rng.normal(0, enc.noise, frame.shape).astype(np.float32)
            picture = av.VideoFrame.from_ndarray(np.clip(frame, 0, 255).astype(np.uint8), "rgb24")
            picture.pts = index
            out.mux(stream.encode(picture))
        out.mux(stream.encode(None))


def seeded_events(seed: int, gop_s: float, slots: int, slot_s: float) -> list[Event]:
    """One pass per ``slot_s`` stretch: 0.5 to 3 s long, small or large, slow or fast (up to
    three crossings), at any phase of the GOP (so some lie wholly between two keyframes)."""
    rng = np.random.default_rng(seed)
    events = []
    for slot in range(slots):
        length = float(rng.uniform(0.5, 3.0))
        start = slot_s * slot + 2 * gop_s + float(rng.uniform(0.0, gop_s))
        size = int(rng.integers(12, 48))
        y = int(rng.integers(0, SIZE[1] - size))
        speed = float(rng.choice([0.5, 1.0, 3.0]))
        events.append(Event("pass", start, start + length, size=size, y=y, speed=speed))
    return events


def covered(amap: ActivityMap, event: Event, fps: int = FPS) -> bool:
    """Whether every frame time in the event's ``[t0, t1]`` lies in an active span."""
    spans = amap.active_spans()
    times = np.arange(np.ceil(event.t0 * fps), np.floor(event.t1 * fps) + 1) / fps
    return all(any(s - 1e-6 <= t < e - 1e-6 for s, e in spans) for t in times)


def located_slack(amap: ActivityMap, event: Event) -> tuple[float, float] | None:
    """How far the located raised packets fall inside the event, before any margin: (lead,
    lag) = (first raised - t0, t1 - last raised end), over the raised stretches that overlap
    the event; None when none does (the event was caught by its keyframes alone)."""
    hits = [(a, b) for a, b in amap.raised_s if a < event.t1 and b > event.t0]
    if not hits:
        return None
    return hits[0][0] - event.t0, event.t1 - hits[-1][1]


@dataclass(frozen=True)
class Case:
    """One truth scene: its encoding, length and planted events."""

    name: str
    enc: Encoding
    seconds: float
    events: tuple[Event, ...]


def _two_second_case(name: str, enc: Encoding, seed: int, extras: bool) -> Case:
    events = seeded_events(seed, enc.gop_s, slots=3, slot_s=12.0)
    if extras:  # a sign during a still stretch, then a light switched on, mid-GOP
        events += [Event("sign", 38.7, 39.2, size=16), Event("light", 46.3, 46.8)]
    return Case(name, enc, 52.0 if extras else 40.0, tuple(events))


def _ten_second_case(name: str, enc: Encoding, seed: int, extra: Event) -> Case:
    events = seeded_events(seed, enc.gop_s, slots=2, slot_s=25.0)
    return Case(name, enc, 90.0, (*events, extra))


def truth_cases() -> list[Case]:
    """The truth test's scenes: H.264 with and without B-frames, 2 s and 10 s GOPs, noisy and
    clean, one HEVC and one open-GOP stream; seeded passes plus a sign and a light."""
    return [
        _two_second_case("h264-2s-clean", Encoding(2.0, False, 0.0), 0, extras=True),
        _two_second_case("h264-2s-B-noisy", Encoding(2.0, True, 3.0), 1, extras=True),
        _ten_second_case(
            "h264-10s-B-clean", Encoding(10.0, True, 0.0), 2, Event("sign", 73.3, 73.8, size=16)
        ),
        _ten_second_case(
            "h264-10s-noisy", Encoding(10.0, False, 3.0), 3, Event("light", 77.1, 77.6)
        ),
        _two_second_case("hevc-2s-B-noisy", Encoding(2.0, True, 3.0, "libx265"), 4, extras=False),
        _two_second_case(
            "h264-2s-open-gop", Encoding(2.0, True, 3.0, open_gop=True), 5, extras=False
        ),
    ]
