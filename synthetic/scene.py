"""Scene specs, their ground truth's types, and where things are in a frame (the truth itself
is derived in ``synthetic.truth``)."""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from synthetic.lighting import (
    Keyframes,
    LightingChange,
    check_lighting,
    gain_at,
)
from synthetic.patterns import OBJECT_PATTERNS
from synthetic.photos import BACKDROP_PHOTOS, SPRITE_PHOTOS
from synthetic.shapes import SHAPES, Mask, shape_mask
from synthetic.signs import SIGN_STYLES, sign_patch

Box = tuple[float, float, float, float]
PixelBox = tuple[int, int, int, int]
Frame = npt.NDArray[np.uint8]

_EPS = 1e-9


@dataclass(frozen=True)
class MovingObject:
    """A rectangle moving linearly between ``(t_s, x, y)`` centre keyframes.

    It exists only for ``t`` in ``[keyframes[0].t, keyframes[-1].t]``; two
    consecutive keyframes at the same position model a stop (a dwell).
    ``pattern`` is its surface: "flat" (one colour), "gradient" or "texture"
    (from ``color`` to a darker tone of it, shaped by ``pattern_seed``); a ``sprite`` (a photo
    of ``synthetic.photos``, cropped by ``pattern_seed``) replaces it. ``shape`` other than
    "box" draws only a moving outline inside the box (``synthetic.shapes``); ``shadow`` is the
    offset of a soft shadow from the box's bottom centre (no part of the object); objects that
    share an ``identity`` are one thing seen in several appearances (default: its own name).
    """

    name: str
    color: tuple[int, int, int]
    size: tuple[int, int]
    keyframes: tuple[tuple[float, float, float], ...]
    pattern: str = "flat"
    pattern_seed: int = 0
    shape: str = "box"
    sprite: str | None = None
    shadow: tuple[int, int] | None = None
    identity: str | None = None

    def __post_init__(self) -> None:
        """Reject specs whose truth would be ill-defined."""
        times = [k[0] for k in self.keyframes]
        if not times or times != sorted(times):
            raise ValueError(f"{self.name}: keyframes must be non-empty and sorted by time")
        if min(self.size) <= 0 or not all(0 <= c <= 255 for c in self.color):
            raise ValueError(f"{self.name}: size must be positive and color in 0..255")
        if self.pattern not in OBJECT_PATTERNS:
            raise ValueError(f"{self.name}: pattern must be one of {OBJECT_PATTERNS}")
        if self.shape not in SHAPES or self.sprite not in (None, *SPRITE_PHOTOS):
            raise ValueError(f"{self.name}: shape must be one of {SHAPES}, sprite a sprite photo")


@dataclass(frozen=True)
class TextSign:
    """A sign shown for ``start_s <= t <= end_s``, centred at ``center``.

    ``style`` picks the look (see ``synthetic.signs``): "plate" is dark
    text on a light plate; ``letter_spacing`` adds pixels between characters.
    """

    text: str
    start_s: float
    end_s: float
    center: tuple[int, int]
    font_px: int = 40
    style: str = "plate"
    letter_spacing: int = 0

    def __post_init__(self) -> None:
        """Reject empty text, reversed intervals, bad font sizes and unknown styles."""
        if not self.text or self.end_s < self.start_s or self.font_px <= 0:
            raise ValueError(f"invalid sign {self.text!r}")
        if self.style not in SIGN_STYLES or self.letter_spacing < 0:
            raise ValueError(f"sign {self.text!r}: style must be one of {SIGN_STYLES}")


@dataclass(frozen=True)
class SceneSpec:
    """Everything needed to render and encode a synthetic scene.

    ``lighting`` holds ``(t_s, gain)`` keyframes (see ``synthetic.lighting``);
    ``background`` shifts which backdrop look (palette and texture) segment 0 uses;
    ``backdrop_photo`` replaces the looks by crops of a photo (``synthetic.photos``);
    from ``infrared_from_s`` on, the camera sees in infrared: every frame is grey (a picture
    change, not a cut: whatever moves keeps moving).
    """

    width: int = 320
    height: int = 240
    fps: int = 10
    duration_s: float = 10.0
    objects: tuple[MovingObject, ...] = ()
    signs: tuple[TextSign, ...] = ()
    scene_cuts: tuple[float, ...] = ()
    noise: float = 0.0
    bitrate: int | None = None
    seed: int = 0
    crf: int = 20
    preset: str = "veryfast"
    lighting: Keyframes = ()
    background: int = 0
    backdrop_photo: str | None = None
    infrared_from_s: float | None = None

    def __post_init__(self) -> None:
        """Reject sizes yuv420p cannot hold, cuts outside the video, bad lighting."""
        if self.width < 16 or self.height < 16 or self.width % 2 or self.height % 2:
            raise ValueError("width and height must be even and >= 16")
        if self.fps <= 0 or self.duration_s <= 0 or self.noise < 0:
            raise ValueError("fps and duration_s must be positive, noise >= 0")
        cuts = list(self.scene_cuts)
        if cuts != sorted(cuts) or any(not 0 < f < self.frame_count for f in cut_frames(self)):
            raise ValueError("scene_cuts must be sorted and fall between two frames")
        check_lighting(self.lighting)
        if self.background < 0 or self.backdrop_photo not in (None, *BACKDROP_PHOTOS):
            raise ValueError("background must be >= 0, backdrop_photo a backdrop photo")

    @property
    def frame_count(self) -> int:
        """Number of frames: ``round(duration_s * fps)``."""
        return max(1, round(self.duration_s * self.fps))


@dataclass(frozen=True)
class ObjectTruth:
    """Where one object is, frame by frame (boxes clipped to the frame).

    Boxes are geometric: an object passing behind another keeps its full box. A non-rigid
    object's box is the tight box of its outline in that frame; a shadow is never in the box.
    ``identity`` names the thing this appearance is of (its own name unless it returns).
    """

    name: str
    color: tuple[int, int, int]
    size: tuple[int, int]
    first_seen_s: float
    last_seen_s: float
    boxes: Mapping[int, Box]
    dwell_intervals: tuple[tuple[float, float], ...]
    pattern: str = "flat"
    identity: str = ""

    def __post_init__(self) -> None:
        """An appearance of no named identity is its own identity."""
        if not self.identity:
            object.__setattr__(self, "identity", self.name)

    def box_at(self, frame_index: int) -> Box | None:
        """Return the visible box at a frame, or None when not visible."""
        return self.boxes.get(frame_index)

    def is_dwelling(self, t: float) -> bool:
        """Tell whether the object stands still at time ``t``."""
        return any(a - _EPS <= t <= b + _EPS for a, b in self.dwell_intervals)


@dataclass(frozen=True)
class TextTruth:
    """A sign's text, frame-quantised shown interval, plate box and look.

    "Shown" ignores occlusion: a sign an object passes in front of is still shown.
    """

    text: str
    start_s: float
    end_s: float
    box: Box
    font_px: int = 40
    style: str = "plate"


@dataclass(frozen=True)
class GroundTruth:
    """What a rendered scene contains, derived from its spec alone.

    ``dont_care`` holds the people pictured in a backdrop photo (``synthetic.photos``), one
    ``ObjectTruth`` each, in every frame of the segments whose backdrop shows them: they are
    real pictures of people but no objects of the scene, so, like PETS' difficult labels,
    scoring neither requires them nor counts what is found on them (``synthetic.scoring``).
    """

    spec: SceneSpec
    frame_count: int
    duration_s: float
    objects: tuple[ObjectTruth, ...]
    texts: tuple[TextTruth, ...]
    scene_cuts: tuple[float, ...]
    cut_frames: tuple[int, ...]
    lighting: Keyframes = ()
    lighting_changes: tuple[LightingChange, ...] = ()
    dont_care: tuple[ObjectTruth, ...] = ()

    @property
    def fps(self) -> int:
        """Frame rate of the scene."""
        return self.spec.fps

    def gain_at(self, frame_index: int) -> float:
        """Brightness gain of a frame (1 without lighting); not an event, not a cut."""
        return gain_at(self.lighting, frame_index / self.spec.fps)

    def object_at(self, frame_index: int) -> list[ObjectTruth]:
        """Return the objects visible in a frame."""
        return [o for o in self.objects if frame_index in o.boxes]

    def texts_at(self, frame_index: int) -> list[TextTruth]:
        """Return the signs shown in a frame."""
        t = frame_index / self.spec.fps
        return [x for x in self.texts if x.start_s - _EPS <= t <= x.end_s + _EPS]

    @property
    def identities(self) -> tuple[str, ...]:
        """The distinct things seen, in order of their first appearance in ``objects``."""
        return tuple(dict.fromkeys(o.identity for o in self.objects))

    def object_named(self, name: str) -> ObjectTruth:
        """Return an object's truth by name (KeyError if absent)."""
        for obj in self.objects:
            if obj.name == name:
                return obj
        raise KeyError(name)

    def segment_of(self, frame_index: int) -> int:
        """Return the index of the scene segment a frame belongs to."""
        return bisect.bisect_right(self.cut_frames, frame_index)


def cut_frames(spec: SceneSpec) -> tuple[int, ...]:
    """First frame index of each new segment (first frame at or after a cut)."""
    return tuple(math.ceil(c * spec.fps - _EPS) for c in spec.scene_cuts)


def position_at(obj: MovingObject, t: float) -> tuple[float, float] | None:
    """Interpolate an object's centre at ``t``; None outside its lifetime."""
    times = [k[0] for k in obj.keyframes]
    if t < times[0] - _EPS or t > times[-1] + _EPS:
        return None
    i = min(max(bisect.bisect_right(times, t) - 1, 0), len(times) - 1)
    if i == len(times) - 1:
        return obj.keyframes[i][1], obj.keyframes[i][2]
    (t0, x0, y0), (t1, x1, y1) = obj.keyframes[i], obj.keyframes[i + 1]
    a = 0.0 if t1 <= t0 else (t - t0) / (t1 - t0)
    return x0 + a * (x1 - x0), y0 + a * (y1 - y0)


def clip_box(x1: int, y1: int, x2: int, y2: int, spec: SceneSpec) -> PixelBox | None:
    """Clip a pixel box to the frame; None when nothing remains."""
    box = (max(x1, 0), max(y1, 0), min(x2, spec.width), min(y2, spec.height))
    return box if box[2] > box[0] and box[3] > box[1] else None


def object_place(spec: SceneSpec, obj: MovingObject, index: int) -> tuple[int, int] | None:
    """Unclipped top-left pixel of an object in a frame, or None outside its lifetime."""
    pos = position_at(obj, index / spec.fps)
    if pos is None:
        return None
    w, h = obj.size
    return math.floor(pos[0] - w / 2 + 0.5), math.floor(pos[1] - h / 2 + 0.5)


def frame_ms(spec: SceneSpec, index: int) -> int:
    """A frame's time in whole milliseconds (the clock of non-rigid outlines)."""
    return round(index * 1000 / spec.fps)


def object_mask(spec: SceneSpec, obj: MovingObject, index: int) -> Mask | None:
    """The object's outline in a frame, over its whole box; None when it fills the box."""
    return shape_mask(obj.shape, obj.size, frame_ms(spec, index))


def _mask_box(mask: Mask, x0: int, y0: int, spec: SceneSpec) -> PixelBox | None:
    """Tight pixel box of the part of ``mask`` (placed at ``x0, y0``) inside the frame."""
    h, w = mask.shape
    box = clip_box(x0, y0, x0 + w, y0 + h, spec)
    if box is None:
        return None
    x1, y1, x2, y2 = box
    part = mask[y1 - y0 : y2 - y0, x1 - x0 : x2 - x0]
    rows, cols = np.flatnonzero(part.any(axis=1)), np.flatnonzero(part.any(axis=0))
    if not rows.size:
        return None
    return x1 + int(cols[0]), y1 + int(rows[0]), x1 + int(cols[-1]) + 1, y1 + int(rows[-1]) + 1


def object_box(spec: SceneSpec, obj: MovingObject, index: int) -> PixelBox | None:
    """Pixel box an object covers in a frame (its outline's, if not a box), or None."""
    place = object_place(spec, obj, index)
    if place is None:
        return None
    x1, y1 = place
    mask = object_mask(spec, obj, index)
    if mask is not None:
        return _mask_box(mask, x1, y1, spec)
    return clip_box(x1, y1, x1 + obj.size[0], y1 + obj.size[1], spec)


def shadow_place(spec: SceneSpec, obj: MovingObject, index: int) -> PixelBox | None:
    """Unclipped ``(x, y, w, h)`` of an object's shadow patch in a frame, or None.

    The shadow is an ellipse a little wider than the object and a quarter as tall, centred at
    the box's bottom centre moved by ``obj.shadow``.
    """
    place = object_place(spec, obj, index)
    if place is None or obj.shadow is None:
        return None
    w, h = obj.size
    sw, sh = round(w * 1.1), max(6, round(h * 0.25))
    cx, cy = place[0] + w / 2 + obj.shadow[0], place[1] + h + obj.shadow[1]
    return math.floor(cx - sw / 2 + 0.5), math.floor(cy - sh / 2 + 0.5), sw, sh


def sign_shown(spec: SceneSpec, sign: TextSign, index: int) -> bool:
    """Tell whether a sign is on screen in a frame."""
    t = index / spec.fps
    return sign.start_s - _EPS <= t <= sign.end_s + _EPS


def sign_place(spec: SceneSpec, sign: TextSign) -> tuple[int, int, PixelBox | None]:
    """Plate origin (may be off-frame) and plate box clipped to the frame."""
    w, h = sign_patch(sign.text, sign.font_px, sign.style, sign.letter_spacing).size
    x0, y0 = sign.center[0] - w // 2, sign.center[1] - h // 2
    return x0, y0, clip_box(x0, y0, x0 + w, y0 + h, spec)
