"""Geometry in normalised frame coordinates: zones, point-in-polygon, box centres, gaps and IoU."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Point = tuple[float, float]


@dataclass(frozen=True)
class ZoneSpec:
    """A named zone as a normalised polygon (at least three points)."""

    name: str
    polygon: tuple[Point, ...]

    def __post_init__(self) -> None:
        if len(self.polygon) < 3:
            raise ValueError(f"zone {self.name!r} needs at least 3 points")


def default_zones() -> tuple[ZoneSpec, ...]:
    """Three vertical bands (left, centre, right): useful with no site knowledge at all."""
    bands = (("left", 0.0, 1 / 3), ("center", 1 / 3, 2 / 3), ("right", 2 / 3, 1.0))
    return tuple(
        ZoneSpec(name, ((x1, 0.0), (x2, 0.0), (x2, 1.0), (x1, 1.0))) for name, x1, x2 in bands
    )


def box_centres(boxes: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``(N, 4)`` boxes -> ``(N, 2)`` centres."""
    return np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2], axis=1)


def points_in_polygon(
    points: npt.NDArray[np.float32], polygon: tuple[Point, ...]
) -> npt.NDArray[np.bool_]:
    """Even-odd rule, vectorised over points; points on the left/top edge count as inside."""
    x, y = points[:, 0], points[:, 1]
    inside = np.zeros(len(points), dtype=bool)
    vertices = list(polygon)
    for (x1, y1), (x2, y2) in zip(vertices, vertices[1:] + vertices[:1], strict=True):
        crosses = (y1 > y) != (y2 > y)
        with np.errstate(divide="ignore", invalid="ignore"):
            x_at = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
        inside ^= crosses & (x < x_at)
    return inside


def box_gap(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> float:
    """Distance between two boxes' edges (0 when they touch or overlap)."""
    dx = max(0.0, float(max(a[0], b[0]) - min(a[2], b[2])))
    dy = max(0.0, float(max(a[1], b[1]) - min(a[3], b[3])))
    return float(np.hypot(dx, dy))


def box_iou(a: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """IoU ``(A, B)`` of every ``x1, y1, x2, y2`` box of ``a`` ``(A, 4)`` with every box of ``b``
    ``(B, 4)``; 0 where the union is empty (degenerate boxes count as empty)."""
    a64 = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b64 = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    top_left = np.maximum(a64[:, None, :2], b64[None, :, :2])
    bottom_right = np.minimum(a64[:, None, 2:], b64[None, :, 2:])
    inter = np.prod(np.clip(bottom_right - top_left, 0.0, None), axis=2)
    area_a = np.prod(np.clip(a64[:, 2:] - a64[:, :2], 0.0, None), axis=1)
    area_b = np.prod(np.clip(b64[:, 2:] - b64[:, :2], 0.0, None), axis=1)
    union = area_a[:, None] + area_b[None, :] - inter
    return np.asarray(np.divide(inter, union, out=np.zeros_like(inter), where=union > 0))
