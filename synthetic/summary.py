"""The perception figures over many scenes: each scene's ``SceneScore`` pooled into a ``Summary``.

Precision and recall pool every scene's objects (not a mean of per-scene ratios); timing errors
are percentiles over every matched object; identity figures are over the scenes whose run
carried identities (``synthetic.scoring`` says how each scene is scored).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from synthetic.scoring import SceneScore


@dataclass(frozen=True)
class Summary:
    """The benchmark's figures over many scenes (see ``summarise``)."""

    scenes: int
    object_precision: float
    object_recall: float
    count_exact: float
    phantoms_per_100: float
    text_recall: float
    text_precision: float
    text_in_time: float
    first_p50_s: float
    first_p95_s: float
    last_p50_s: float
    last_p95_s: float
    id_switches: int
    idf1: float
    ask_exact: float
    named_person: float
    named_person_objects: int  # physical objects named ``person``: none of a synthetic scene is one
    dont_care_found: int = 0  # things found on the truth's don't-care regions (not scored)
    identity_scenes: int = 0  # scenes whose run carried identities (the next two are over them)
    identities_exact: float = 0.0
    returns_recognised: str = ""  # "k of n" truth identities seen twice or more

    def rows(self) -> list[tuple[str, str, str]]:
        """(figure, value, target) rows for a table."""
        return [
            ("object precision (interval IoU >= 0.5)", f"{self.object_precision:.3f}", ""),
            ("object recall", f"{self.object_recall:.3f}", ""),
            ("scenes with the exact object count", f"{self.count_exact:.1%}", ">= 95%"),
            ("phantom objects per 100 scenes", f"{self.phantoms_per_100:.1f}", "<= 1"),
            ("text recall", f"{self.text_recall:.1%}", ">= 97%"),
            ("text precision", f"{self.text_precision:.1%}", ""),
            ("texts with first/last seen within 1 s", f"{self.text_in_time:.1%}", ""),
            (
                "first seen error p50 / p95 (s)",
                f"{self.first_p50_s:.2f} / {self.first_p95_s:.2f}",
                "p95 <= 0.5",
            ),
            (
                "last seen error p50 / p95 (s)",
                f"{self.last_p50_s:.2f} / {self.last_p95_s:.2f}",
                "p95 <= 0.5",
            ),
            ("identity switches", str(self.id_switches), ""),
            ("IDF1", f"{self.idf1:.3f}", ">= 0.95"),
            ('"How many objects appeared?" exact', f"{self.ask_exact:.1%}", ""),
            ("objects named person (no blob is one)", f"{self.named_person:.1%}", "~0"),
            ("non-person objects named person (count)", str(self.named_person_objects), "0"),
            ("things found on don't-care regions (not scored)", str(self.dont_care_found), ""),
            *self._identity_rows(),
        ]

    def _identity_rows(self) -> list[tuple[str, str, str]]:
        """The identity figures, or one row saying why there are none."""
        if not self.identity_scenes:
            return [("distinct identities (the run has no identity_id)", "not scored", "")]
        return [
            ("scenes with the exact distinct identities", f"{self.identities_exact:.1%}", ""),
            ("returns recognised as one identity", self.returns_recognised, ""),
        ]


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 1.0


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else 0.0


def summarise(scores: Sequence[SceneScore]) -> Summary:
    """Pool every scene's counts (precision and recall over all objects, not per scene)."""
    total = sum
    firsts = [e for s in scores for e in s.first_errors_s]
    lasts = [e for s in scores for e in s.last_errors_s]
    matched = total(s.matched_objects for s in scores)
    texts = total(s.matched_texts for s in scores)
    return Summary(
        scenes=len(scores),
        object_precision=_ratio(matched, total(s.predicted_objects for s in scores)),
        object_recall=_ratio(matched, total(s.truth_objects for s in scores)),
        count_exact=_ratio(total(s.count_exact for s in scores), len(scores)),
        phantoms_per_100=100 * _ratio(total(s.phantoms for s in scores), len(scores)),
        text_recall=_ratio(texts, total(s.truth_texts for s in scores)),
        text_precision=_ratio(texts, total(s.predicted_texts for s in scores)),
        text_in_time=_ratio(total(s.texts_in_time for s in scores), texts),
        first_p50_s=_percentile(firsts, 50),
        first_p95_s=_percentile(firsts, 95),
        last_p50_s=_percentile(lasts, 50),
        last_p95_s=_percentile(lasts, 95),
        id_switches=total(s.id_switches for s in scores),
        idf1=_ratio(
            2 * total(s.idtp for s in scores),
            total(s.truth_boxes + s.tracked_boxes for s in scores),
        ),
        ask_exact=_ratio(total(s.ask_exact for s in scores), len(scores)),
        named_person=_ratio(
            total(s.named_person for s in scores), total(s.predicted_objects for s in scores)
        )
        if any(s.predicted_objects for s in scores)
        else 0.0,
        named_person_objects=total(s.named_person for s in scores),
        dont_care_found=total(s.dont_care_found for s in scores),
        **_identity_summary(scores),
    )


def _identity_summary(scores: Sequence[SceneScore]) -> dict[str, Any]:
    """Summary fields of the scenes whose run carried identities."""
    scored = [s for s in scores if s.predicted_identities is not None]
    recognised = sum(s.returns_recognised or 0 for s in scored)
    return {
        "identity_scenes": len(scored),
        "identities_exact": _ratio(sum(bool(s.identities_exact) for s in scored), len(scored)),
        "returns_recognised": f"{recognised} of {sum(s.returns for s in scored)}",
    }
