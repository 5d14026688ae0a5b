"""Held frames cost nothing (issue 42): detections carried onto the still stretch's sampled times.

A sampled time inside a still stretch is not decoded (``tasks.sample.gate``): the sample stage
keeps the last decoded frame's pictures for it (``Sampler.hold_until``), marked ``held``. The
picture is the same, so every detector would see the same thing there; instead of running them
again, the detect stage runs them on the decoded frames only and gives each held frame a copy of
its source frame's rows (the last decoded frame before it), at the held frame's own index and
time. Tracks, dwells and identities then carry on through the stretch as they did when every
held frame went through the detectors.

The OCR is the exception: it reads only the frames kept for text (never a held one) and follows
each text over every sampled frame through the glances, which held frames share with their
source; it gets every frame, as before, at the cost of comparing glances.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from tasks.detections import Detections


def held_sources(frames: Sequence[Mapping[str, Any]]) -> dict[int, int]:
    """Each held frame's source: ``{held sample index: the last decoded sample index before it}``.

    A held frame with no decoded frame before it (never made by the sampler) is left out.
    """
    sources: dict[int, int] = {}
    last: int | None = None
    for row in frames:
        index = int(row["sample_index"])
        if not row.get("held"):
            last = index
        elif last is not None:
            sources[index] = last
    return sources


Row = TypeVar("Row", bound=Mapping[str, Any])


def analysed(frames: Sequence[Row]) -> list[Row]:
    """The frames the detectors look at: every frame that was decoded (none held)."""
    return [row for row in frames if not row.get("held")]


def carry_to_held(
    found: Detections, sources: Mapping[int, int], times: Mapping[int, float]
) -> Detections:
    """``found`` with each held frame's copy of its source frame's rows (at the held frame's
    index and time ``times[index]``), every row in frame order."""
    if not sources or not len(found):
        return found
    held = np.fromiter(sources.keys(), np.int64, len(sources))
    source = np.fromiter(sources.values(), np.int64, len(sources))
    order = np.argsort(found.frame_index, kind="stable")
    indices = found.frame_index[order]
    first = np.searchsorted(indices, source, side="left")
    last = np.searchsorted(indices, source, side="right")
    counts = last - first
    if not counts.sum():
        return found
    rows = np.concatenate([order[a:b] for a, b in zip(first, last, strict=True)])
    t_s = np.asarray([times[int(h)] for h in held], np.float32)
    copies = replace(
        found.select(rows), frame_index=np.repeat(held, counts), t_s=np.repeat(t_s, counts)
    )
    merged = Detections.concatenate([found, copies])
    return merged.select(np.argsort(merged.frame_index, kind="stable"))
