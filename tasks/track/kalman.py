"""A batched, time-aware constant-velocity Kalman filter for boxes (used by the track stage).

State per track: ``cx, cy, w, h`` and their velocities, in normalised frame units and units
per SECOND. Sampling rates vary (and frames without detections may be skipped), so every step
takes the elapsed time ``dt`` instead of assuming one frame per step; process noise is the exact
discretisation of white-noise acceleration, so predicting in one jump of ``2 * dt`` gives the
same result as two jumps of ``dt``.

All functions work on every track at once: ``mean`` is ``(T, 8)`` and ``cov`` is ``(T, 8, 8)``.
Noise scales with each box's size (its larger side) so that a small far-away object and a big
near one are filtered alike.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]

STATE_DIM = 8
MEASURE_DIM = 4

# A detector's box (centre and size) is typically within ~5% of the box size of the truth.
_MEASURE_STD = 0.05
# White-noise acceleration, in box sizes per s^2 per sqrt(s). Low on purpose: velocity is then
# averaged over many samples, and a steady velocity is what tells two crossing objects apart.
# The price, lagging behind sudden stops, turns and starts, is paid by the tracker's match on
# the last seen box (see ``tasks.track.bytetrack``). Tuned on crossings and on the lobby scene.
_ACCEL_STD = 0.25
# A new track's velocity is unknown: allow about two box sizes per second either way.
_INIT_VELOCITY_STD = 2.0
# A one-pixel sliver at the frame edge must not get (near) zero noise and an overconfident filter.
_MIN_SIZE = 0.01
_MIN_BOX_SIDE = 1e-4
_EYE4 = np.eye(MEASURE_DIM)


def measure_boxes(boxes: npt.NDArray[np.floating]) -> F64:
    """Turn ``(N, 4)`` ``x1, y1, x2, y2`` boxes into ``(N, 4)`` ``cx, cy, w, h`` measurements."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    size = b[:, 2:] - b[:, :2]
    return np.concatenate([b[:, :2] + size / 2, size], axis=1)


def boxes_of(mean: F64) -> F64:
    """Boxes ``(T, 4)`` ``x1, y1, x2, y2`` of states ``(T, 8)``; sizes kept above zero."""
    centre, size = mean[:, :2], np.maximum(mean[:, 2:4], _MIN_BOX_SIDE)
    return np.concatenate([centre - size / 2, centre + size / 2], axis=1)


def _scale(size: F64) -> F64:
    """Noise scale ``(T,)`` of boxes whose ``w, h`` are ``size`` ``(T, 2)``."""
    return np.asarray(np.maximum(size.max(axis=1), _MIN_SIZE), dtype=np.float64)


def initiate(measurements: F64) -> tuple[F64, F64]:
    """Start tracks at ``(N, 4)`` measurements: zero velocity, uncertain about it."""
    n = len(measurements)
    mean = np.concatenate([measurements, np.zeros((n, MEASURE_DIM))], axis=1)
    std = np.concatenate(
        [np.full(MEASURE_DIM, 2 * _MEASURE_STD), np.full(MEASURE_DIM, _INIT_VELOCITY_STD)]
    )
    scale = _scale(measurements[:, 2:4])
    cov = np.eye(STATE_DIM)[None] * (std[None, :, None] * scale[:, None, None]) ** 2
    return mean, cov


def _transition(dt: float) -> F64:
    """Constant-velocity transition over ``dt`` seconds."""
    f = np.eye(STATE_DIM)
    f[:MEASURE_DIM, MEASURE_DIM:] = dt * _EYE4
    return f


def _process_noise(dt: float, scale: F64) -> F64:
    """``(T, 8, 8)`` white-noise-acceleration covariance accumulated over ``dt`` seconds."""
    block = np.array([[dt**3 / 3, dt**2 / 2], [dt**2 / 2, dt]])
    q = np.kron(block, _EYE4)
    return q[None] * (_ACCEL_STD * scale[:, None, None]) ** 2


def predict(mean: F64, cov: F64, dt: float) -> tuple[F64, F64]:
    """Advance every track by ``dt >= 0`` seconds."""
    f = _transition(dt)
    q = _process_noise(dt, _scale(mean[:, 2:4]))
    return mean @ f.T, f @ cov @ f.T + q


def correct(mean: F64, cov: F64, measurements: F64) -> tuple[F64, F64]:
    """Fold ``(T, 4)`` measurements into the ``T`` tracks they were matched to."""
    r = (_MEASURE_STD * _scale(measurements[:, 2:4]))[:, None, None] ** 2 * _EYE4
    innovation_cov = cov[:, :MEASURE_DIM, :MEASURE_DIM] + r
    # K = P H^T S^-1; S is symmetric so K^T = solve(S, H P).
    gain = np.linalg.solve(innovation_cov, cov[:, :MEASURE_DIM, :]).transpose(0, 2, 1)
    innovation = measurements - mean[:, :MEASURE_DIM]
    new_mean = mean + np.einsum("tij,tj->ti", gain, innovation)
    new_cov = cov - gain @ cov[:, :MEASURE_DIM, :]
    return new_mean, (new_cov + new_cov.transpose(0, 2, 1)) / 2


def stop_resizing(mean: F64, rows: npt.NDArray[np.bool_]) -> F64:
    """Zero the size velocities of ``rows``: a box unseen for a while keeps its last size."""
    out = mean.copy()
    out[rows, MEASURE_DIM + 2 :] = 0.0
    return out
