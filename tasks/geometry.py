"""Geometry shared by the stages: zones, point-in-polygon, and the box math (centres, gaps, IoU,
unions, non-maximum suppression), written once here.

Boxes are ``x1, y1, x2, y2`` rows, in normalised frame coordinates or pixels alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

Point = tuple[float, float]
FloatT = TypeVar("FloatT", bound=np.floating[Any])
FloatArray = npt.NDArray[np.float32]


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


def inside_share(inner: npt.ArrayLike, outer: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``(len(inner), len(outer))``: share of each inner box's area inside each outer box."""
    inner, outer = np.asarray(inner, np.float64), np.asarray(outer, np.float64)
    x1 = np.maximum(inner[:, None, 0], outer[None, :, 0])
    y1 = np.maximum(inner[:, None, 1], outer[None, :, 1])
    x2 = np.minimum(inner[:, None, 2], outer[None, :, 2])
    y2 = np.minimum(inner[:, None, 3], outer[None, :, 3])
    overlap = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area = (inner[:, 2] - inner[:, 0]) * (inner[:, 3] - inner[:, 1])
    return np.asarray(overlap / np.maximum(area[:, None], 1e-9), dtype=np.float64)


@overload
def box_union(
    boxes: npt.NDArray[FloatT], groups: npt.NDArray[np.int64] | None = None
) -> npt.NDArray[FloatT]: ...
@overload
def box_union(
    boxes: Sequence[Sequence[float]], groups: npt.NDArray[np.int64] | None = None
) -> npt.NDArray[np.float64]: ...
def box_union(
    boxes: npt.ArrayLike, groups: npt.NDArray[np.int64] | None = None
) -> npt.NDArray[np.floating[Any]]:
    """The bounding box of each group of ``boxes`` ``(N, 4)``: ``(G, 4)``, in the boxes' dtype.

    Args:
        boxes: ``(N, 4)`` boxes (a float dtype is kept, so float32 boxes give float32 unions).
        groups: ``(N,)`` group of each box, every one of ``0 .. G-1`` used; None: one group of
            all ``N`` boxes, ``(1, 4)``.

    Raises:
        ValueError: when there are no boxes to unite in one group.
    """
    array = np.asarray(boxes)
    array = array if np.issubdtype(array.dtype, np.floating) else array.astype(np.float64)
    array = array.reshape(-1, 4)
    if groups is None:
        if not len(array):
            raise ValueError("box_union needs at least one box (N, 4) when groups is None")
        return np.concatenate([array[:, :2].min(axis=0), array[:, 2:].max(axis=0)])[None]
    count = int(groups.max()) + 1 if len(groups) else 0
    out = np.empty((count, 4), dtype=array.dtype)
    out[:, :2] = np.inf
    out[:, 2:] = -np.inf
    np.minimum.at(out[:, 0], groups, array[:, 0])
    np.minimum.at(out[:, 1], groups, array[:, 1])
    np.maximum.at(out[:, 2], groups, array[:, 2])
    np.maximum.at(out[:, 3], groups, array[:, 3])
    return out


def suppress_overlaps(
    boxes: npt.NDArray[np.floating[Any]],
    scores: npt.NDArray[np.floating[Any]],
    iou: float,
    class_ids: npt.NDArray[np.integer[Any]] | None = None,
) -> npt.NDArray[np.int64]:
    """Greedy non-maximum suppression: the indices of the boxes kept, best score first.

    A box is kept when its IoU with every box kept before it (higher score; ties in input
    order) is at most ``iou``.

    Args:
        boxes: ``(N, 4)`` boxes.
        scores: ``(N,)`` their scores.
        iou: largest IoU two kept boxes may have.
        class_ids: ``(N,)`` class of each box, to suppress only within a class; None: every box
            competes with every other. Each class is moved to its own stretch of the plane
            (offset by ``class id * span``, torchvision's ``batched_nms`` trick), so boxes of
            different classes never overlap and one pass handles every class.
    """
    if len(boxes) == 0:
        return np.zeros(0, dtype=np.int64)
    plane = boxes.astype(np.float64)
    if class_ids is not None:
        span = float(boxes.max() - boxes.min()) + 1.0
        plane = plane + (class_ids * span)[:, None]
    order = np.argsort(-scores, kind="stable")
    kept: list[int] = []
    while order.size:
        best, order = int(order[0]), order[1:]
        kept.append(best)
        order = order[box_iou(plane[best], plane[order])[0] <= iou]
    return np.asarray(kept, dtype=np.int64)


# When the boxes a detector found in a frame agree with a motion box (the class vote of
# ``tasks.track.classes``, and the person detector's chains of ``tasks.detect``, which must
# judge a look the way the vote will): each found box lies mostly inside it, and together
# they span most of its width.
INSIDE = 0.5  # share of the person's box inside the motion box for a look to agree
MIN_WIDTH_COVER = 0.5  # share of the motion box's width the people inside must span together


def width_cover(inner: FloatArray, outer: FloatArray) -> float:
    """Share of ``outer``'s ``(4,)`` width that the union of the ``inner`` ``(N, 4)`` boxes'
    horizontal extents (clipped to ``outer``) spans."""
    width = float(outer[2] - outer[0])
    if width <= 0 or not len(inner):
        return 0.0
    spans = np.clip(inner[:, [0, 2]], outer[0], outer[2])
    spans = spans[np.argsort(spans[:, 0])]
    covered, reach = 0.0, float(outer[0])
    for left, right in spans.tolist():
        covered += max(0.0, right - max(left, reach))
        reach = max(reach, right)
    return covered / width


def explained_rows(
    inside: npt.NDArray[np.bool_], hits: FloatArray, boxes: FloatArray
) -> npt.NDArray[np.bool_]:
    """Per box of ``boxes`` ``(B, 4)``: the ``hits`` ``(H, 4)`` inside it (``inside`` ``(H, B)``)
    span at least ``MIN_WIDTH_COVER`` of its width."""
    return np.asarray(
        [width_cover(hits[inside[:, b]], boxes[b]) >= MIN_WIDTH_COVER for b in range(len(boxes))],
        dtype=bool,
    )
