"""Redaction against known face places, shared by the redaction tests and the benchmark.

lfw_subset's 100 faces are pasted on grey canvases at seeded random places (``face_truth``);
a face counts as redacted when at least ``COVERED`` of its true box's pixels were changed.
``thumbnail`` shrinks the canvas as the sample stage makes thumbnails (area averaging), so a
50 px face on a 1280 px canvas becomes a 12.5 px face in a 320 px thumbnail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from testkit.face_truth import LFW_FACES, Frame, paste, photo

Redact = Callable[[Frame], Frame]
COVERED = 0.9  # share of a face box's pixels that must change for it to count as redacted


@dataclass(frozen=True)
class RedactionScore:
    """``recall``: share of faces redacted; ``collateral``: share of the pixels outside the
    faces that changed; ``faces``: how many were tried."""

    recall: float
    collateral: float
    faces: int


def thumbnail(
    image: Frame, place: tuple[int, int, int, int], width: int
) -> tuple[Frame, tuple[int, int, int, int]]:
    """``image`` shrunk to ``width`` wide (area averaging) and ``place`` in its pixels (the
    pixels the face covers at least half of)."""
    scale = width / image.shape[1]
    small = cv2.resize(image, (width, round(image.shape[0] * scale)), interpolation=cv2.INTER_AREA)
    x1, y1, x2, y2 = (round(v * scale) for v in place)
    return np.asarray(small, np.uint8), (x1, y1, x2, y2)


def score_redaction(
    redact: Redact,
    side: int,
    canvas: int,
    thumb_width: int | None = None,
    faces: int = LFW_FACES,
    seed: int = 0,
) -> RedactionScore:
    """Redaction recall and collateral on the first ``faces`` of lfw_subset pasted at ``side``
    pixels on a ``canvas`` square (then shrunk to ``thumb_width`` when given)."""
    crops = photo("lfw_subset")[:faces]
    rng = np.random.default_rng(seed)
    redacted, outside_changed, outside = 0, 0, 0
    for crop in crops:
        image, place = paste(crop, side, canvas, rng)
        if thumb_width:
            image, place = thumbnail(image, place, thumb_width)
        changed = np.any(redact(image) != image, axis=2)
        x1, y1, x2, y2 = place
        redacted += changed[y1:y2, x1:x2].mean() >= COVERED
        inside = changed[y1:y2, x1:x2].sum()
        outside_changed += int(changed.sum() - inside)
        outside += changed.size - (x2 - x1) * (y2 - y1)
    return RedactionScore(redacted / len(crops), outside_changed / outside, len(crops))
