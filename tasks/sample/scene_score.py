"""How different two consecutive sampled frames are: where the world state must be rebuilt."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

_HIST_STEP = 4  # grey levels per histogram bin
# How much of the frame must change for a cut (chosen on the tuning seeds of
# benchmarks/scene_cuts.py: cuts changed 61 to 88 % of the pixels by more than 8 levels, a sign
# plate its own share, at most 31 %, a moving object at most 11 %):
_CHANGED = 8.0  # grey levels (at a median of 128) a pixel must move by to count as changed
_LOCAL = 0.35  # a change over at most this share of the frame is local: no cut
_WHOLE = 0.6  # a change over at least this share may score up to 1
_LOCAL_CAP = 0.2  # the most a local change scores (under scene_cut_threshold, 0.3)
_DARK = 8  # pixels darker than this carry no gain
TINY_WIDTH = 64  # scene scores are computed on a frame about this wide


def tiny_step(thumb_width: int) -> int:
    """Every how many thumbnail pixels the tiny frame takes one (in both directions)."""
    return max(1, thumb_width // TINY_WIDTH)


def tiny_grey(rgb: npt.NDArray[np.uint8], step: int) -> npt.NDArray[np.uint8]:
    """The tiny grey frame scored: every ``step``-th pixel of the thumbnail, its channels'
    mean."""
    return np.asarray(rgb[::step, ::step].mean(axis=2), dtype=np.uint8)


def scene_score(previous: npt.NDArray[np.uint8] | None, tiny: npt.NDArray[np.uint8]) -> float:
    """How different two consecutive sampled frames are, 0 (same) to 1 (another scene).

    Two measures, and the score is the smaller:

    * how much the picture changed: both frames are brought to the same mean brightness (a
      light switched on or an auto-exposure step is no cut), then the larger of the mean
      absolute difference and the earth mover's distance between the grey histograms, both
      scaled so that 32 grey levels is a certain cut;
    * how much of the frame changed (``_extent``): a cut changes most of it, a sign, an object
      or a plate appearing only its own part. A change over less than ``_LOCAL`` of the frame
      scores at most ``_LOCAL_CAP``, under the scene-change threshold (0.3); the cap rises to 1
      as the changed part grows to ``_WHOLE``.

    Matching the mean alone let a light plate on a dark scene rescale the whole frame: a plate
    of 2 % of the frame scored 0.34 to 0.44 and of 5 % or more up to 1.0, a false cut.
    Measured with ``benchmarks/scene_cuts.py`` on held-out seeds (docs/measured/perception.md):
    the 186 cut pairs of 200 random scenes score 0.46 to 1.0, exactly as before (65 to 89 % of
    their pixels changed); lighting steps of 15 to 35 % 0.01 to 0.16, drifts <= 0.15, an
    infrared switch <= 0.28; signs appearing or going <= 0.2 (31 of 382 were >= 0.3 before),
    and plates of up to 30 % of a still frame, light on dark or dark on light, 0.2 (before: from
    2 % of a dark frame >= 0.3, from 5 % up to 1.0).
    """
    if previous is None:
        return 0.0
    a, b = _same_brightness(previous), _same_brightness(tiny)
    mad = float(np.mean(np.abs(a.astype(np.int16) - b.astype(np.int16)))) / 32.0
    h1 = np.bincount(a.ravel() // _HIST_STEP, minlength=256 // _HIST_STEP)
    h2 = np.bincount(b.ravel() // _HIST_STEP, minlength=256 // _HIST_STEP)
    moved = np.abs(np.cumsum(h1) / max(1, a.size) - np.cumsum(h2) / max(1, b.size))
    change = min(1.0, max(mad, float(moved.sum()) * _HIST_STEP / 32.0))
    rise = min(1.0, max(0.0, (_extent(previous, tiny) - _LOCAL) / (_WHOLE - _LOCAL)))
    return min(change, _LOCAL_CAP + (1.0 - _LOCAL_CAP) * rise)


def _extent(previous: npt.NDArray[np.uint8], tiny: npt.NDArray[np.uint8]) -> float:
    """The share of pixels that changed by more than ``_CHANGED`` grey levels, once the gain
    between the frames is matched on the pixels that did not change.

    The gain is the median ratio of the two frames' pixels (over pixels not near black): a
    change over less than half the frame cannot move it, unlike the mean. Differences are
    then scaled to a median brightness of 128, as the means are in ``scene_score``.
    """
    a, b = previous.astype(np.float32), tiny.astype(np.float32)
    lit = (a >= _DARK) & (b >= _DARK)
    if np.count_nonzero(lit) * 4 >= a.size:
        gain = float(np.median(b[lit] / a[lit]))
    else:  # mostly black: the means (+1, so a black frame stays black)
        gain = (float(b.mean()) + 1.0) / (float(a.mean()) + 1.0)
    level = float(np.median(b))
    scale = 128.0 / level if level >= 1.0 else 1.0
    a *= gain
    a -= b
    np.abs(a, out=a)
    return float(np.count_nonzero(a * scale > _CHANGED)) / max(1, a.size)


def _same_brightness(tiny: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """``tiny`` scaled to a mean of 128 (a black frame stays black)."""
    mean = float(tiny.mean())
    if mean < 1.0:
        return tiny
    return np.asarray(np.clip(tiny.astype(np.float32) * (128.0 / mean), 0, 255), dtype=np.uint8)
