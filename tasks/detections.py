"""``Detections``: the one value type for boxes found in sampled frames (columnar numpy).

Boxes are ``(N, 4) float32`` ``x1, y1, x2, y2`` in NORMALISED frame coordinates (0..1), so every
stage works the same whatever resolution a detector ran at. One row per box; rows of many frames
can live in one ``Detections`` (``frame_index`` tells which sampled frame each row belongs to).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from storage.artifacts.schemas import DETECTIONS

TEXT_CLASS = "text"  # the class of text read in the video (detector "ocr")

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
TextArray = npt.NDArray[np.object_]


def _texts(values: object, n: int) -> TextArray:
    if values is None or (isinstance(values, np.ndarray | list | tuple) and len(values) == 0):
        return np.full(n, None, dtype=object)
    array = np.empty(n, dtype=object)
    items = list(values)  # type: ignore[call-overload]
    if len(items) != n:
        raise ValueError(f"texts must have {n} entries, got {len(items)}")
    array[:] = items
    return array


def _column(values: object, dtype: type[np.generic], n: int, name: str) -> npt.NDArray[np.generic]:
    array = np.asarray(values, dtype=dtype)
    if array.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {array.shape}")
    return array


@dataclass(frozen=True)
class Detections:
    """Boxes with their scores, classes, sampled-frame index, time and (once tracked) track id.

    Attributes:
        boxes: ``(N, 4) float32`` normalised ``x1, y1, x2, y2``.
        scores: ``(N,) float32`` confidence in 0..1.
        class_ids: ``(N,) int64`` index into ``class_names``.
        frame_index: ``(N,) int64`` sampled-frame index (0, 1, 2 ... in sampling order).
        t_s: ``(N,) float32`` time of the frame in the video, seconds.
        track_ids: ``(N,) int64``, -1 until tracking assigns one.
        class_names: names of the class ids (shared by every row).
        texts: ``(N,) object``, the text read in the box (class ``text``), else None.
    """

    boxes: FloatArray
    scores: FloatArray
    class_ids: IntArray
    frame_index: IntArray
    t_s: FloatArray
    track_ids: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    class_names: tuple[str, ...] = ("motion",)
    texts: TextArray = field(default_factory=lambda: np.zeros(0, dtype=object))

    def __post_init__(self) -> None:
        boxes = np.asarray(self.boxes, dtype=np.float32).reshape(-1, 4)
        n = len(boxes)
        object.__setattr__(self, "boxes", boxes)
        object.__setattr__(self, "scores", _column(self.scores, np.float32, n, "scores"))
        object.__setattr__(self, "class_ids", _column(self.class_ids, np.int64, n, "class_ids"))
        object.__setattr__(
            self, "frame_index", _column(self.frame_index, np.int64, n, "frame_index")
        )
        object.__setattr__(self, "t_s", _column(self.t_s, np.float32, n, "t_s"))
        tracks = self.track_ids if len(self.track_ids) else np.full(n, -1, dtype=np.int64)
        object.__setattr__(self, "track_ids", _column(tracks, np.int64, n, "track_ids"))
        object.__setattr__(self, "texts", _texts(self.texts, n))

    def __len__(self) -> int:
        return len(self.boxes)

    @classmethod
    def empty(cls, class_names: tuple[str, ...] = ("motion",)) -> Detections:
        """No boxes at all."""
        z = np.zeros(0)
        return cls(np.zeros((0, 4)), z, z, z, z, class_names=class_names)  # type: ignore[arg-type]

    @classmethod
    def concatenate(cls, parts: Sequence[Detections]) -> Detections:
        """Rows of ``parts`` one after the other; all parts must share ``class_names``."""
        if not parts:
            return cls.empty()
        names = parts[0].class_names
        if any(p.class_names != names for p in parts):
            raise ValueError("cannot concatenate detections with different class_names")
        return cls(
            boxes=np.concatenate([p.boxes for p in parts]),
            scores=np.concatenate([p.scores for p in parts]),
            class_ids=np.concatenate([p.class_ids for p in parts]),
            frame_index=np.concatenate([p.frame_index for p in parts]),
            t_s=np.concatenate([p.t_s for p in parts]),
            track_ids=np.concatenate([p.track_ids for p in parts]),
            class_names=names,
            texts=np.concatenate([p.texts for p in parts]),
        )

    def select(self, mask: npt.NDArray[np.bool_] | IntArray) -> Detections:
        """The rows picked by a boolean mask or an index array."""
        return Detections(
            self.boxes[mask],
            self.scores[mask],
            self.class_ids[mask],
            self.frame_index[mask],
            self.t_s[mask],
            self.track_ids[mask],
            self.class_names,
            self.texts[mask],
        )

    def with_track_ids(self, track_ids: IntArray) -> Detections:
        """The same rows with ``track_ids`` set."""
        return Detections(
            self.boxes,
            self.scores,
            self.class_ids,
            self.frame_index,
            self.t_s,
            np.asarray(track_ids, dtype=np.int64),
            self.class_names,
            self.texts,
        )

    def class_of(self, row: int) -> str:
        """The class name of one row."""
        return self.class_names[int(self.class_ids[row])]


def detections_to_table(
    dets: Detections, detector: str, object_ids: dict[int, str] | None = None
) -> pa.Table:
    """``Detections`` as a table of the ``detections`` schema (track ids as object ids)."""
    ids = object_ids or {}
    return pa.table(
        {
            "sample_index": pa.array(dets.frame_index, pa.int32()),
            "t_s": pa.array(dets.t_s.astype(np.float64)),
            "bbox": pa.array(dets.boxes.tolist(), pa.list_(pa.float32(), 4)),
            "score": pa.array(dets.scores),
            "class": pa.array([dets.class_names[int(c)] for c in dets.class_ids], pa.string()),
            "detector": pa.array([detector] * len(dets), pa.string()),
            "track_id": pa.array([ids.get(int(t)) for t in dets.track_ids], pa.string()),
            "text": pa.array(dets.texts.tolist(), pa.string()),
        },
        schema=DETECTIONS,
    )


def track_numbers(table: pa.Table) -> dict[str, int]:
    """Object id -> track number, numbered by first appearance in a ``detections`` table."""
    names = table.column("track_id").to_pylist()
    return {name: i + 1 for i, name in enumerate(dict.fromkeys(n for n in names if n))}


def detections_from_table(table: pa.Table) -> Detections:
    """The ``Detections`` of a ``detections``-schema table; object ids become track numbers
    (see ``track_numbers``)."""
    classes = table.column("class").to_pylist()
    names = tuple(dict.fromkeys(classes)) or ("motion",)
    track_names = table.column("track_id").to_pylist()
    numbers = track_numbers(table)
    boxes = np.asarray(table.column("bbox").to_pylist(), dtype=np.float32).reshape(-1, 4)
    return Detections(
        boxes=boxes,
        scores=table.column("score").to_numpy(),
        class_ids=np.asarray([names.index(c) for c in classes], dtype=np.int64),
        frame_index=table.column("sample_index").to_numpy().astype(np.int64),
        t_s=table.column("t_s").to_numpy().astype(np.float32),
        track_ids=np.asarray([numbers.get(n, -1) if n else -1 for n in track_names], np.int64),
        class_names=names,
        texts=table.column("text").to_pylist(),
    )
