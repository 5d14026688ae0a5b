"""Idle-heavy clips with planted events (issue 32): what the activity gate must skip, and not miss.

A clip is a still room (a ``synthetic`` backdrop, sensor-like noise or none) in which a seeded,
KNOWN list of events happens, covering a chosen share of the time:
  - passes: boxes crossing the frame from one side to the other in 0.5 to 3 s, small
    (3-6 % of the width) or large (12-25 %), so fast or slow;
  - a walker: a person-sized box crossing a third of the frame slowly;
  - a sign (text) appearing during a still stretch and staying to the end;
  - a light switched on: the whole picture a third brighter from one frame on, to the end.
Moving events come in small bursts (one to three passes) between still stretches of random
length, as people come and go. The active share counts the moving events' time; the sign and
the light are instants.

Rendering and encoding ten minutes of 1080p frame by frame takes most of an hour here, so the
clip is cut into GOPs (2 or 10 s, fixed: no scene-cut keyframes) and only the GOPs where
something changes are rendered. Every still GOP is a stream copy of one of three GOPs encoded
once per look of the room (sign or none, light on or off), each of them its own noise, so that
still keyframes are alike, not identical. Each piece is encoded with x264's ``stitchable``
headers and closed GOPs, and the pieces are joined by stream copy with shifted timestamps, as
``benchmarks/_clips.repeat_segment`` repeats a minute. Clips are cached in benchmarks/.cache.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Literal

import av
import numpy as np

from benchmarks._clips import rendered_frames
from synthetic import GroundTruth, MovingObject, SceneSpec, TextSign, ground_truth
from synthetic.scene import Box

CACHE = Path(__file__).resolve().parent / ".cache"
FPS = 30
LIGHT_GAIN = 1.35  # the light switched on: every pixel a third brighter
STILL_VARIANTS = 3  # encoded still GOPs per look of the room, copied in turn
_SIZES = {360: 640, 720: 1280, 1080: 1920}
_NOISY_BITRATE = {360: 700_000, 720: 2_000_000, 1080: 4_000_000}
_MIN_GAP_S = 1.0  # the shortest still stretch between two events
_SIGN_TEXTS = ("EXIT 7", "NO ENTRY", "GATE B", "OPEN")
Kind = Literal["pass", "walker", "sign", "light"]


@dataclass(frozen=True)
class IdleSpec:
    """One idle-heavy clip: length, active share, GOP, B-frames, noise, size and seed."""

    seconds: int = 600
    active: float = 0.2
    gop_s: int = 2
    bframes: bool = True
    noisy: bool = True
    height: int = 1080
    seed: int = 0

    def __post_init__(self) -> None:
        """Whole GOPs only, a share that leaves room for still stretches, a known size."""
        if self.seconds % self.gop_s or not 0 < self.active <= 0.6 or self.height not in _SIZES:
            raise ValueError("seconds must be whole GOPs, active in (0, 0.6], height 360/720/1080")

    @property
    def label(self) -> str:
        length = f"{self.seconds // 60} min" if self.seconds >= 120 else f"{self.seconds} s"
        frames = "B-frames" if self.bframes else "no B"
        noise = "noisy" if self.noisy else "clean"
        return f"idle {length} {self.height}p {self.active:.0%} GOP {self.gop_s} s {frames} {noise}"

    @property
    def filename(self) -> str:
        frames, noise = "b" if self.bframes else "nob", "noisy" if self.noisy else "clean"
        return (
            f"idle-{self.height}p-{self.seconds}s-{round(self.active * 100)}pct-gop{self.gop_s}"
            f"-{frames}-{noise}-s{self.seed}.mp4"
        )

    @property
    def width(self) -> int:
        return _SIZES[self.height]


@dataclass(frozen=True)
class PlantedEvent:
    """One planted event: what, when (``end_s`` is the clip's end for a sign or a light) and,
    for a pass or the walker, the ``synthetic`` object that draws it (``name``)."""

    name: str
    kind: Kind
    start_s: float
    end_s: float

    def box_at(self, truth: GroundTruth, index: int) -> Box | None:
        """Where the event is in frame ``index`` (pixels ``x1, y1, x2, y2``), None when it is
        not in effect there."""
        t = index / truth.fps
        if self.kind in ("pass", "walker"):
            return truth.object_named(self.name).box_at(index)
        if not self.start_s <= t + 1e-9:
            return None
        if self.kind == "sign":
            return next(x.box for x in truth.texts if x.text == self.name)
        return 0.0, 0.0, float(truth.spec.width), float(truth.spec.height)


@dataclass(frozen=True)
class IdleScene:
    """An idle clip's scene (what ``synthetic`` renders) and its planted events."""

    idle: IdleSpec
    spec: SceneSpec
    events: tuple[PlantedEvent, ...]

    def truth(self) -> GroundTruth:
        return ground_truth(self.spec)

    @property
    def active_s(self) -> float:
        """The moving events' time: the clip's active share times its length."""
        return sum(e.end_s - e.start_s for e in self.events if e.kind in ("pass", "walker"))


def plant_events(idle: IdleSpec) -> IdleScene:
    """The seeded scene of ``idle``: its events laid out among still stretches."""
    rng = np.random.default_rng([idle.seed, round(idle.active * 100), idle.seconds])
    budget = idle.active * idle.seconds
    walker_s = round(float(np.clip(0.25 * budget, 4.0, 40.0)) * FPS) / FPS
    items = _items(rng, _pass_durations(rng, budget - walker_s), walker_s)
    busy = sum(d + pause for item in items for _, d, pause in item)
    spare = idle.seconds - busy - _MIN_GAP_S * (len(items) + 2)  # a gap's worth at the end
    gaps = _MIN_GAP_S + spare * rng.dirichlet(np.ones(len(items) + 1))
    objects: list[MovingObject] = []
    signs: list[TextSign] = []
    events: list[PlantedEvent] = []
    lighting: tuple[tuple[float, float], ...] = ()
    t = float(gaps[0])
    for item, gap in zip(items, gaps[1:], strict=True):
        for kind, duration, pause in item:
            name = kind if kind in ("walker", "light") else f"{kind}{len(events)}"
            if kind == "sign":
                name = _SIGN_TEXTS[idle.seed % len(_SIGN_TEXTS)]
                center = (round(idle.width * 0.78), round(idle.height * 0.1))
                signs.append(TextSign(name, t, idle.seconds, center, round(idle.height / 16)))
            elif kind == "light":
                lighting = ((t, 1.0), (t + 1 / FPS, LIGHT_GAIN))
            else:
                objects.append(_moving(rng, idle, name, kind, t, duration))
            events.append(PlantedEvent(name, kind, t, t + duration if duration else idle.seconds))
            t += duration + pause
        t += float(gap)
    spec = SceneSpec(
        width=idle.width,
        height=idle.height,
        fps=FPS,
        duration_s=idle.seconds,
        objects=tuple(objects),
        signs=tuple(signs),
        noise=3.0 if idle.noisy else 0.0,
        bitrate=_NOISY_BITRATE[idle.height] if idle.noisy else None,
        seed=idle.seed,
        lighting=lighting,
        background=idle.seed % 3,
    )
    return IdleScene(idle, spec, tuple(events))


def _pass_durations(rng: np.random.Generator, budget: float) -> list[float]:
    """Pass durations of 0.5 to 3 s (frame-quantised) adding up to about ``budget``."""
    durations: list[float] = []
    while sum(durations) < budget - 0.25:
        left = budget - sum(durations)
        durations.append(round(min(float(rng.uniform(0.5, 3.0)), max(left, 0.5)) * FPS) / FPS)
    return durations


Item = list[tuple[Kind, float, float]]  # (kind, duration, pause after it) of one burst


def _items(rng: np.random.Generator, passes: list[float], walker_s: float) -> list[Item]:
    """What happens between still stretches, in a random order: bursts of one to three
    passes (short pauses inside), the walker, the sign and the light (instants)."""
    items: list[Item] = [[("walker", walker_s, 0.0)], [("sign", 0.0, 0.0)], [("light", 0.0, 0.0)]]
    while passes:
        size = int(rng.integers(1, 4))
        chosen, passes = passes[:size], passes[size:]
        pauses = [float(rng.uniform(0.5, 2.0)) for _ in chosen[1:]] + [0.0]
        items.append([("pass", d, p) for d, p in zip(chosen, pauses, strict=True)])
    return [items[i] for i in rng.permutation(len(items))]


def _moving(
    rng: np.random.Generator, idle: IdleSpec, name: str, kind: Kind, t: float, duration: float
) -> MovingObject:
    """A pass (across the whole width, small or large) or the walker (a third of the width)."""
    w, h = idle.width, idle.height
    red, green, blue = (int(c) for c in rng.integers(20, 236, size=3))
    if kind == "walker":
        size = (round(w * 0.05), round(h * 0.22))
        y = h * 0.72
        keys = ((t, w * 0.15, y), (t + duration, w * 0.48, y))
        return MovingObject(name, (200, 60, 50), size, keys, pattern="texture", pattern_seed=7)
    side = w * (rng.uniform(0.03, 0.06) if rng.random() < 0.5 else rng.uniform(0.12, 0.25))
    size = (round(side), round(side * rng.uniform(0.6, 1.4)))
    y = float(rng.uniform(h * 0.3 + size[1] / 2, h * 0.95 - size[1] / 2))
    x0, x1 = -size[0] / 2, w + size[0] / 2
    if rng.random() < 0.5:
        x0, x1 = x1, x0
    pattern = "texture" if rng.random() < 0.5 else "flat"
    seed = int(rng.integers(0, 1000))
    keys = ((t, x0, y), (t + duration, x1, y))
    return MovingObject(name, (red, green, blue), size, keys, pattern=pattern, pattern_seed=seed)


def make_idle_clip(
    idle: IdleSpec, fresh: bool = False, cache: Path = CACHE
) -> tuple[Path, IdleScene]:
    """The cached file of ``idle`` (generated when missing or ``fresh``) and its scene."""
    scene = plant_events(idle)
    path = cache / idle.filename
    if fresh or not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.partial")
        write_idle_clip(scene, partial)
        partial.replace(path)
    return path, scene


@dataclass(frozen=True)
class Piece:
    """A run of GOPs: changing (encoded from its own frames) or still (a copy of one of the
    encoded still GOPs of its look)."""

    first_gop: int
    gops: int
    look: tuple[bool, float] | None  # None: something changes in it


def plan_pieces(scene: IdleScene) -> list[Piece]:
    """The clip's GOPs, consecutive changing ones merged, each still one with its look."""
    gop, truth = scene.idle.gop_s * FPS, scene.truth()
    pieces: list[Piece] = []
    for number in range(truth.frame_count // gop):
        looks = {_look(truth, i) for i in range(number * gop, (number + 1) * gop)}
        moving = any(truth.object_at(i) for i in range(number * gop, (number + 1) * gop))
        look = None if moving or len(looks) > 1 else looks.pop()
        if look is None and pieces and pieces[-1].look is None:
            pieces[-1] = Piece(pieces[-1].first_gop, pieces[-1].gops + 1, None)
        else:
            pieces.append(Piece(number, 1, look))
    return pieces


def _look(truth: GroundTruth, index: int) -> tuple[bool, float]:
    """How the still room looks in a frame: a sign shown or not, the light's gain."""
    return bool(truth.texts_at(index)), truth.gain_at(index)


def write_idle_clip(scene: IdleScene, path: Path) -> None:
    """Encode the changing pieces and one still GOP per look and variant, then join them.

    Each piece is encoded after a GOP of lead-in that is then dropped: a fresh x264 rate
    control spends its first half second lavishly (measured: 58 kB a frame against 16 kB in the
    half seconds of a pass at 4 Mbit/s), which, copied into every still GOP, raised the idle
    packet level the activity map learns above the passes themselves."""
    gop = scene.idle.gop_s * FPS
    pieces = plan_pieces(scene)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        encoded: dict[object, Path] = {}
        seen: dict[tuple[bool, float], int] = {}
        leads: dict[object, int] = {}
        layout: list[tuple[Path, int, int]] = []
        for piece in pieces:
            first = piece.first_gop * gop
            lead = gop if first else 0  # the GOP before, encoded and dropped (see below)
            if piece.look is None:
                key: object = piece.first_gop
                frames = range(first - lead, first + piece.gops * gop)
            else:
                variant = seen.get(piece.look, 0)
                seen[piece.look] = variant + 1
                key = (piece.look, variant % STILL_VARIANTS)
                frames = range(first - lead, first + gop)
            if key not in encoded:
                encoded[key] = Path(tmp) / f"piece-{len(encoded)}.mp4"
                _encode_piece(scene, frames, encoded[key])
                leads[key] = lead
            layout.append((encoded[key], first, leads[key]))
        join_pieces(layout, path)


def _encode_piece(scene: IdleScene, frames: range, path: Path) -> None:
    """libx264 as ``benchmarks/_clips`` sets it up, with fixed GOPs and stitchable headers."""
    spec, gop = scene.spec, scene.idle.gop_s * FPS
    options = {
        "preset": spec.preset,
        "x264-params": f"keyint={gop}:min-keyint={gop}:scenecut=0:stitchable=1",
    }
    if spec.bitrate is None:
        options["crf"] = str(spec.crf)
    if not scene.idle.bframes:
        options["bf"] = "0"
    with av.open(str(path), "w", format="mp4") as out:
        stream = out.add_stream("libx264", rate=FPS, options=options)
        stream.width, stream.height, stream.pix_fmt = spec.width, spec.height, "yuv420p"
        stream.gop_size = gop
        stream.time_base = Fraction(1, FPS)
        if spec.bitrate is not None:
            stream.bit_rate = spec.bitrate
        for frame in rendered_frames(spec, frames):
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


def join_pieces(layout: Sequence[tuple[Path, int, int]], path: Path) -> None:
    """Write each ``(piece, first frame, lead-in frames)`` at its place, its lead-in left out,
    by stream copy with shifted timestamps (every GOP starts on an IDR frame and is closed)."""
    with av.open(str(layout[0][0])) as first, av.open(str(path), "w", format="mp4") as out:
        template = first.streams.video[0]
        stream = out.add_stream_from_template(template)
        for piece, first_frame, lead in layout:
            for packet in _shifted(piece, first_frame, lead):
                packet.stream = stream
                out.mux(packet)


def _shifted(piece: Path, first_frame: int, lead: int) -> Iterator[av.Packet[av.VideoStream]]:
    """The packets of ``piece`` after its ``lead`` frames, moved to start at ``first_frame``."""
    with av.open(str(piece)) as source:
        video = source.streams.video[0]
        assert video.time_base is not None
        step = int(Fraction(first_frame - lead, FPS) / video.time_base)
        kept_from = int(Fraction(lead, FPS) / video.time_base)
        for packet in source.demux(video):
            if packet.dts is None or packet.pts is None or packet.pts < kept_from:
                continue  # the demuxer's final flush packet, or the lead-in (closed GOPs)
            packet.pts += step
            packet.dts += step
            yield packet
