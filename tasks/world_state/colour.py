"""An object's dominant colour, measured from its pixels and named from a small fixed vocabulary.

Why a perceptual space: RGB distances do not follow what people call "the same colour" (a dark
red and a bright red are far apart in RGB, close in hue). Pixels are converted to CIELAB, the
median over the object's clean looks is taken (the middle of its box, away from the background
its box edges hold, in looks whose box does not touch the frame's edge), and the nearest named
reference colour gives the name. The confidence is how much nearer that reference is than the
next one, times the share of looks that agreed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tasks.world_state.trajectories import Track

Frame = npt.NDArray[np.uint8]

# Reference colours (sRGB) of the names answers use; a name is only as fine as this list.
NAMED_RGB: dict[str, tuple[int, int, int]] = {
    "red": (200, 30, 30),
    "orange": (240, 130, 20),
    "yellow": (230, 210, 40),
    "green": (40, 170, 60),
    "blue": (40, 70, 210),
    "purple": (130, 50, 170),
    "pink": (240, 130, 180),
    "brown": (120, 75, 40),
    "white": (240, 240, 240),
    "grey": (128, 128, 128),
    "black": (20, 20, 20),
}
COLOUR_NAMES = tuple(NAMED_RGB)
MAX_LOOKS = 9
_EDGE = 0.01  # a box this close to the frame's edge is cut off: not a clean look
_INNER = 0.25  # keep the middle half of the box on each axis


@dataclass(frozen=True)
class Colour:
    """A measured colour: its name and how sure the measurement is (0..1)."""

    name: str
    confidence: float


def rgb_to_lab(rgb: npt.NDArray[np.floating] | npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
    """sRGB (``(..., 3)``, 0..255) to CIELAB (D65), ``(..., 3)``."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = linear @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.stack(
        [116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])],
        axis=-1,
    )


_REFERENCE_LAB = rgb_to_lab(np.array(list(NAMED_RGB.values()), dtype=np.float64))


def name_lab(lab: npt.NDArray[np.float64]) -> Colour:
    """The nearest named colour to one CIELAB value, and its margin over the next (0..1)."""
    distances = np.linalg.norm(_REFERENCE_LAB - lab, axis=1)
    order = np.argsort(distances)
    nearest, second = float(distances[order[0]]), float(distances[order[1]])
    margin = 1.0 - nearest / second if second > 0 else 1.0
    return Colour(COLOUR_NAMES[int(order[0])], margin)


def _clean_looks(track: Track) -> list[int]:
    """Rows whose box lies inside the frame, at most ``MAX_LOOKS`` spread over the track."""
    boxes = track.boxes
    inside = np.all((boxes[:, :2] > _EDGE) & (boxes[:, 2:] < 1 - _EDGE), axis=1)
    rows = np.flatnonzero(inside)
    if len(rows) > MAX_LOOKS:
        rows = rows[np.linspace(0, len(rows) - 1, MAX_LOOKS).round().astype(int)]
    return [int(r) for r in rows]


def _look_lab(frame: Frame, box: npt.NDArray[np.float32]) -> npt.NDArray[np.float64] | None:
    """The median CIELAB of the middle of ``box`` (normalised) in ``frame``."""
    h, w = frame.shape[:2]
    x1, y1, x2, y2 = (float(v) for v in box)
    dx, dy = (x2 - x1) * _INNER, (y2 - y1) * _INNER
    c1, c2 = int((x1 + dx) * w), int(np.ceil((x2 - dx) * w))
    r1, r2 = int((y1 + dy) * h), int(np.ceil((y2 - dy) * h))
    patch = frame[max(r1, 0) : min(r2, h), max(c1, 0) : min(c2, w)]
    if patch.size == 0:
        return None
    return np.median(rgb_to_lab(patch.reshape(-1, 3)), axis=0)


def measure_colour(track: Track, frame_of: Callable[[int], Frame]) -> Colour | None:
    """The dominant colour of a physical track over its clean looks (None without one)."""
    labs = [
        lab
        for row in _clean_looks(track)
        if (lab := _look_lab(frame_of(int(track.samples[row])), track.boxes[row])) is not None
    ]
    if not labs:
        return None
    overall = name_lab(np.median(np.array(labs), axis=0))
    agreeing = sum(name_lab(lab).name == overall.name for lab in labs) / len(labs)
    return Colour(overall.name, round(overall.confidence * agreeing, 3))
