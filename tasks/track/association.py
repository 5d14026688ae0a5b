"""Matching boxes to tracks: IoU, the centre-distance fallback, and Hungarian assignment.

Used by the tracker (``tasks.track.bytetrack``, whose module docstring explains the gate). Boxes are
``(N, 4)`` float64 ``x1, y1, x2, y2`` in normalised frame units.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment

from tasks.geometry import box_iou

F64 = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Pairs = tuple[IntArray, IntArray]

# The centre fallback never reaches less than 2% of the frame (~6 px at 320 wide): a box of a
# few pixels jitters by its own size.
_CENTRE_FLOOR = 0.02


def _centre_affinity(a: F64, b: F64, gate: float, reach: F64) -> F64:
    """Up to ``gate / 2`` for centres within ``reach`` ``(A,)`` times the larger box side."""
    centre_a, centre_b = (a[:, :2] + a[:, 2:]) / 2, (b[:, :2] + b[:, 2:]) / 2
    distance = np.linalg.norm(centre_a[:, None] - centre_b[None], axis=2)
    side_a, side_b = (a[:, 2:] - a[:, :2]).max(axis=1), (b[:, 2:] - b[:, :2]).max(axis=1)
    radius = np.maximum(reach[:, None] * np.maximum(side_a[:, None], side_b[None]), _CENTRE_FLOOR)
    return np.asarray(gate / 2 * np.clip(1.0 - distance / radius, 0.0, None), dtype=np.float64)


def box_affinity(a: F64, b: F64, gate: float, reach: F64 | None = None) -> F64:
    """``(A, B)`` match scores: IoU where it passes ``gate``, else the centre fallback; 0 = no.

    ``reach`` ``(A,)``: how far (in larger box sides) each box of ``a`` may be from a box of
    ``b`` for the fallback; half a side when not given.
    """
    iou = box_iou(a, b)
    reach = np.full(len(a), 0.5) if reach is None else reach
    return np.where(iou >= gate, iou, _centre_affinity(a, b, gate, reach))


def assign_pairs(affinity: F64) -> Pairs:
    """Hungarian assignment maximising total affinity, keeping only pairs that passed the gate.

    All weights are >= 0, so dropping the zero pairs of an optimal full assignment leaves an
    optimal matching of the gated pairs.
    """
    rows, cols = linear_sum_assignment(affinity, maximize=True)
    ok = affinity[rows, cols] > 0
    return rows[ok].astype(np.int64), cols[ok].astype(np.int64)


def no_pairs() -> Pairs:
    """No matches at all."""
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
