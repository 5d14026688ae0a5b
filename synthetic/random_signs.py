"""Random signs for ``random_scene``: sign-like words in varied looks, placed so the truth holds.

A sign reads like a real one ("GATE 4", "NO ENTRY", "OFFICE 214"), is 28..80 px high in one of
the looks of ``synthetic.signs``, lies fully inside the frame (corners included), never
overlaps another sign, and is shown for at least 2 s: from the start, from a cut or at any
time, until the end, a cut or any later time (so some stay across a cut). Objects may pass in
front of it, but never cover more than half of it for more than 1 s in total, so that what the
truth says is shown can be read. A sign that cannot be placed so is left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from synthetic.scene import PixelBox, SceneSpec, TextSign, cut_frames, object_box
from synthetic.signs import SIGN_STYLES, sign_patch

BoxArray = npt.NDArray[np.int64]

FONT_PX = (28, 80)
MIN_SHOWN_S = 2.0
MAX_COVERED_SHARE = 0.5
MAX_COVERED_S = 1.0
GAP_PX = 8  # between two signs' boxes

NUMBERED = ("GATE", "FLOOR", "PLATFORM", "LEVEL", "ZONE", "DOCK", "AISLE", "ROOM", "EXIT", "BAY")
WORDS = (
    "EXIT", "LOBBY", "OPEN", "SALE", "NO ENTRY", "PARKING", "CAFE", "TICKETS", "TOILETS", "INFO",
    "STAIRS", "LIFT", "RECEPTION", "PHARMACY", "BAKERY", "HOTEL", "CLOSED", "WAY OUT", "CHECK IN",
    "BUS STOP", "TAXI", "BAGGAGE", "SECURITY", "DEPARTURES", "ARRIVALS", "STAFF ONLY", "PUSH",
    "PULL", "WELCOME", "MUSEUM", "LIBRARY", "OFFICE", "KIOSK", "BAR",
)  # fmt: skip
_COUNT_P = (0.15, 0.35, 0.3, 0.2)  # 0..3 signs
_CORNER_P = 0.3
_FROM_START_P = 0.35
_FROM_CUT_P = 0.2
_TO_END_P = 0.3
_TO_CUT_P = 0.15
_PLACE_ATTEMPTS = 25
_TEXT_ATTEMPTS = 20


@dataclass(frozen=True)
class _Look:
    """A sign's text and appearance, and the size of its patch; time and place come later."""

    text: str
    font_px: int
    style: str
    spacing: int
    size: tuple[int, int]

    def at(self, center: tuple[int, int], first_s: float, last_s: float) -> TextSign:
        """The sign shown centred at ``center`` from ``first_s`` to ``last_s``."""
        return TextSign(self.text, first_s, last_s, center, self.font_px, self.style, self.spacing)


def _number(rng: np.random.Generator) -> str:
    """A door, gate or platform number: 1..99, or a letter and 1..29 ("B12")."""
    if rng.random() < 0.7:
        return str(int(rng.integers(1, 100)))
    return "ABCDEFGH"[int(rng.integers(0, 8))] + str(int(rng.integers(1, 30)))


def sign_text(rng: np.random.Generator) -> str:
    """A numbered place ("GATE 4"), a plain word ("NO ENTRY") or a word and digits."""
    form = rng.random()
    if form < 0.45:
        return f"{NUMBERED[int(rng.integers(0, len(NUMBERED)))]} {_number(rng)}"
    word = WORDS[int(rng.integers(0, len(WORDS)))]
    return word if form < 0.85 else f"{word} {int(rng.integers(10, 1000))}"


def _distinct_text(rng: np.random.Generator, taken: set[str]) -> str | None:
    """A sign text not yet used in the scene, or None if the draws keep repeating."""
    for _ in range(_TEXT_ATTEMPTS):
        text = sign_text(rng)
        if text not in taken:
            return text
    return None


def _fitted(rng: np.random.Generator, spec: SceneSpec, text: str) -> _Look | None:
    """A look for ``text`` (size, style, spacing) whose patch fits in the frame.

    Too wide a sign shrinks by a fifth (and halves its spacing) until it fits.
    """
    font_px = int(rng.integers(FONT_PX[0], FONT_PX[1] + 1))
    style = SIGN_STYLES[int(rng.integers(0, len(SIGN_STYLES)))]
    spacing = 0 if rng.random() < 0.65 else int(rng.integers(1, max(2, font_px // 6) + 1))
    while True:
        w, h = sign_patch(text, font_px, style, spacing).size
        if w <= spec.width and h <= spec.height:
            return _Look(text, font_px, style, spacing, (w, h))
        if font_px == FONT_PX[0] and spacing == 0:
            return None
        font_px, spacing = max(FONT_PX[0], font_px * 4 // 5), spacing // 2


def _interval(rng: np.random.Generator, spec: SceneSpec) -> tuple[int, int]:
    """First and last frame shown, at least 2 s apart, aligned to the start, end or cuts."""
    n, need = spec.frame_count, math.ceil(MIN_SHOWN_S * spec.fps - 1e-9)
    cuts = cut_frames(spec)
    draw = rng.random()
    if draw < _FROM_START_P:
        first = 0
    elif draw < _FROM_START_P + _FROM_CUT_P and cuts:
        first = cuts[int(rng.integers(0, len(cuts)))]
    else:
        first = int(rng.integers(0, n - need))
    first = min(first, n - 1 - need)
    draw, later_cuts = rng.random(), [c - 1 for c in cuts if c - 1 >= first + need]
    if draw < _TO_END_P:
        return first, n - 1
    if draw < _TO_END_P + _TO_CUT_P and later_cuts:
        return first, later_cuts[int(rng.integers(0, len(later_cuts)))]
    return first, int(rng.integers(first + need, n))


def _top_left(rng: np.random.Generator, spec: SceneSpec, size: tuple[int, int]) -> tuple[int, int]:
    """Anywhere the sign fits, or tucked into a corner 0..16 px from the edges."""
    w, h = size
    if rng.random() >= _CORNER_P:
        return int(rng.integers(0, spec.width - w + 1)), int(rng.integers(0, spec.height - h + 1))
    mx, my = (int(v) for v in rng.integers(0, 17, size=2))
    x = mx if rng.random() < 0.5 else spec.width - w - mx
    y = my if rng.random() < 0.5 else spec.height - h - my
    return int(np.clip(x, 0, spec.width - w)), int(np.clip(y, 0, spec.height - h))


def object_boxes(spec: SceneSpec) -> BoxArray:
    """Every object's pixel box per frame, shape (objects, frames, 4); absent = (0, 0, 0, 0)."""
    boxes = np.zeros((len(spec.objects), spec.frame_count, 4), np.int64)
    for k, obj in enumerate(spec.objects):
        for i in range(spec.frame_count):
            box = object_box(spec, obj, i)
            if box is not None:
                boxes[k, i] = box
    return boxes


def covered_frames(boxes: BoxArray, sign: PixelBox, first: int, last: int) -> int:
    """Frames in ``first..last`` where objects cover more than half of a sign's box.

    Overlap areas are summed over objects, an upper bound of their union, so the check is on
    the safe side when objects also overlap each other.
    """
    span = boxes[:, first : last + 1]
    iw = np.minimum(span[..., 2], sign[2]) - np.maximum(span[..., 0], sign[0])
    ih = np.minimum(span[..., 3], sign[3]) - np.maximum(span[..., 1], sign[1])
    covered = (np.clip(iw, 0, None) * np.clip(ih, 0, None)).sum(axis=0)
    area = (sign[2] - sign[0]) * (sign[3] - sign[1])
    return int((covered > MAX_COVERED_SHARE * area).sum())


def _apart(a: PixelBox, b: PixelBox) -> bool:
    """Whether two boxes are at least ``GAP_PX`` apart."""
    left, right = a[2] + GAP_PX <= b[0], b[2] + GAP_PX <= a[0]
    return left or right or a[3] + GAP_PX <= b[1] or b[3] + GAP_PX <= a[1]


def _placed(
    rng: np.random.Generator, spec: SceneSpec, look: _Look, taken: list[PixelBox], boxes: BoxArray
) -> TextSign | None:
    """Time and place a sign: apart from the other signs and not hidden for long."""
    first, last = _interval(rng, spec)
    w, h = look.size
    for _ in range(_PLACE_ATTEMPTS):
        x, y = _top_left(rng, spec, (w, h))
        box = (x, y, x + w, y + h)
        if not all(_apart(box, other) for other in taken):
            continue
        if covered_frames(boxes, box, first, last) <= MAX_COVERED_S * spec.fps:
            taken.append(box)
            return look.at((x + w // 2, y + h // 2), first / spec.fps, last / spec.fps)
    return None


def random_signs(rng: np.random.Generator, spec: SceneSpec) -> tuple[TextSign, ...]:
    """0..3 signs for ``spec``, whose objects are already final (signs avoid hiding behind them)."""
    boxes = object_boxes(spec)
    texts: set[str] = set()
    taken: list[PixelBox] = []
    signs: list[TextSign] = []
    for _ in range(int(rng.choice(len(_COUNT_P), p=_COUNT_P))):
        text = _distinct_text(rng, texts)
        look = None if text is None else _fitted(rng, spec, text)
        sign = None if look is None else _placed(rng, spec, look, taken, boxes)
        if sign is not None:
            texts.add(sign.text)
            signs.append(sign)
    return tuple(signs)
