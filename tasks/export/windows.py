"""Which source windows an export's clips show: one clip per merged window.

Each selected span is widened by ``PAD_S`` on each side (within the video, and within the
request's time range when it has one); widened spans that overlap or touch merge into one window,
and each window is one clip. So frames that several spans share are cut once (the lobby's spans
overlap: one text span covers 48 s), and each span names its clip and where it lies in it.

A time-range export is that range: a span that reaches outside ``start_s``..``end_s`` is cut to
it (``SpanCut.original`` keeps the span's own start and end), and no window reaches outside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PAD_S = 1.0  # a span's clip shows this much before and after it


@dataclass(frozen=True)
class SpanCut:
    """A span as exported: ``start_s``..``end_s`` in source time, cut to the request's range
    when it reached outside (``original`` is then the span's own start and end)."""

    evidence_id: str
    start_s: float
    end_s: float
    original: tuple[float, float] | None = None

    @property
    def cut_to_range(self) -> bool:
        return self.original is not None

    def holds(self, t_s: float) -> bool:
        return self.start_s - 1e-6 <= t_s <= self.end_s + 1e-6


@dataclass(frozen=True)
class Window:
    """One clip's source window and the spans it shows, in time order."""

    number: int  # 1-based, in time order
    start_s: float
    end_s: float
    spans: tuple[SpanCut, ...]

    @property
    def name(self) -> str:
        return f"window_{self.number:02d}"


def cut_span(
    span: Mapping[str, Any], start_s: float | None = None, end_s: float | None = None
) -> SpanCut:
    """The span's extent within the range ``start_s``..``end_s`` (either may be open)."""
    own = (float(span["start_s"]), float(span["end_s"]))
    start = own[0] if start_s is None else max(own[0], start_s)
    end = own[1] if end_s is None else min(own[1], end_s)
    cut = (start, end) != own
    return SpanCut(span["evidence_id"], start, max(start, end), own if cut else None)


def plan_windows(
    spans: Iterable[SpanCut],
    duration_s: float | None,
    range_s: tuple[float | None, float | None] = (None, None),
    pad_s: float = PAD_S,
) -> list[Window]:
    """The merged windows of ``spans`` (see the module's docstring), numbered in time order."""
    low = max(0.0, range_s[0] or 0.0)
    highs = [h for h in (duration_s, range_s[1]) if h]
    padded = sorted(
        ((max(low, s.start_s - pad_s), min([s.end_s + pad_s, *highs]), s) for s in spans),
        key=lambda w: (w[0], w[1], w[2].evidence_id),
    )
    merged: list[tuple[float, float, list[SpanCut]]] = []
    for start, end, span in padded:
        if merged and start <= merged[-1][1] + 1e-9:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end), [*merged[-1][2], span])
        else:
            merged.append((start, end, [span]))
    return [Window(i, a, b, tuple(s)) for i, (a, b, s) in enumerate(merged, start=1)]
