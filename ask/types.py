"""The values an answer is made of: claims, each with the evidence that carries it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Citation:
    """An evidence span of the run (operation 6), named by an answer."""

    evidence_id: str
    start_s: float
    end_s: float

    def as_dict(self) -> dict[str, Any]:
        return {"evidence_id": self.evidence_id, "start_s": self.start_s, "end_s": self.end_s}


@dataclass(frozen=True)
class Claim:
    """One sentence about the video and what backs it.

    Attributes:
        text: the sentence, as the answer says it.
        citations: the spans that carry it (at least one).
        times: every time (seconds) the sentence states; each must fall in a cited span.
        counts: every count the sentence states; a count must equal the number of distinct
            cited spans it counts (``counted``).
        counted: how many distinct cited spans the count is about.
        durations: every length of time the sentence states; each must be the gap between two
            of its ``times``.
    """

    text: str
    citations: tuple[Citation, ...]
    times: tuple[float, ...] = ()
    counts: tuple[int, ...] = ()
    counted: int | None = None
    durations: tuple[float, ...] = ()


@dataclass(frozen=True)
class Coverage:
    """What the run examined: absence of evidence is only as good as this.

    ``still_spans``: the stretches the activity gate judged still from their keyframes and
    packets and did not decode (``cost.json`` ``frames.skipped_spans``; none without the gate).
    ``sure_event_s``: in keyframe mode (stillness judged from keyframes alone), the shortest
    event the gate was sure to see; None when packet sizes were read too.
    """

    duration_s: float
    frames_analysed: int
    detector_mode: str
    still_spans: tuple[tuple[float, float], ...] = ()
    sure_event_s: float | None = None

    def still_within(self, window: tuple[float, float] | None = None) -> list[tuple[float, float]]:
        """The still stretches cut to ``window`` (the whole video when None)."""
        lo, hi = window if window is not None else (0.0, self.duration_s)
        cut = [(max(a, lo), min(b, hi)) for a, b in self.still_spans]
        return [(a, b) for a, b in cut if b - a > 1e-6]

    def sentence(self, window: tuple[float, float] | None = None) -> str:
        """What was examined; with the stretches of ``window`` (or of the video) that were
        judged still rather than decoded, so that "nothing happened" says how it was known."""
        said = (
            f"Examined: {fmt_time(self.duration_s)} of video, {self.frames_analysed} frames "
            f"analysed, detectors {self.detector_mode}."
        )
        still = self.still_within(window)
        if not still:
            return said
        total = sum(b - a for a, b in still)
        listed = ", ".join(f"{fmt_time(a)} to {fmt_time(b)}" for a, b in still[:4])
        more = f" and {len(still) - 4} more" if len(still) > 4 else ""
        where = "of that stretch" if window is not None else "of the video"
        if self.sure_event_s is not None:
            return (
                f"{said} {fmt_time(total)} {where} ({listed}{more}) was judged still from its "
                "keyframes alone (keyframe mode) and not decoded: an event shorter than "
                f"{self.sure_event_s:g} s between two keyframes there could have gone unseen."
            )
        return (
            f"{said} {fmt_time(total)} {where} ({listed}{more}) was judged still from its "
            "keyframes and packet sizes and not decoded: nothing there changed at the motion "
            "detector's sensitivity."
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "duration_s": self.duration_s,
            "frames_analysed": self.frames_analysed,
            "detector_mode": self.detector_mode,
            "judged_still_s": round(sum(b - a for a, b in self.still_spans), 3),
            "sure_event_s": self.sure_event_s,
        }


@dataclass(frozen=True)
class Answer:
    """What ``POST .../ask`` returns (plus the run and the coverage)."""

    question: str
    answer: str
    grounded: bool
    confidence: float
    citations: tuple[Citation, ...] = ()
    refusal_reason: str | None = None
    claims: tuple[Claim, ...] = field(default=(), compare=False)
    intent: str = "unknown"
    phrased_by: str = "rules"
    interpreted: dict[str, Any] | None = field(default=None, compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "grounded": self.grounded,
            "confidence": round(self.confidence, 3),
            "citations": [c.as_dict() for c in self.citations],
            "refusal_reason": self.refusal_reason,
            "interpreted": self.interpreted,
        }


def fmt_time(seconds: float) -> str:
    """A time as the answers write it: ``4.0 s`` under a minute, else ``1:05.2``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}:{rest:04.1f}"
