"""The check every answer passes before it is said: no claim without the evidence that carries it.

A claim passes when:
* it cites at least one span, and every span it cites exists in THIS run with the same times;
* every time it states falls inside one of its cited spans (a claim about 4.0 s cannot cite a
  span of 10 to 12 s);
* every count it states equals the number of distinct spans it cites for that count;
* every duration it states is the gap between two of its times;
* every number written in its sentence (outside quoted text and ids) is one of its stated times,
  counts or durations, as written (``4.0 s``, ``1:05.2``, ``3``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ask.types import Citation, Claim

# Answers write times to a tenth of a second: a time said within this of a span is in it.
TIME_TOLERANCE_S = 0.051
_QUOTED = re.compile(r"\"[^\"]*\"")
_IDS = re.compile(r"\b[a-z]+_[0-9a-z]+\b")
_CLOCK = re.compile(r"\b(\d+):(\d{2}(?:\.\d+)?)")
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]|\.\d)")


def written_numbers(text: str) -> list[float]:
    """Every number a sentence writes, clock times as seconds; quoted text and ids skipped."""
    bare = _IDS.sub(" ", _QUOTED.sub(" ", text))
    numbers = [int(m.group(1)) * 60 + float(m.group(2)) for m in _CLOCK.finditer(bare)]
    bare = _CLOCK.sub(" ", bare)
    return numbers + [float(m.group(1)) for m in _NUMBER.finditer(bare)]


def _inside(t: float, spans: Iterable[Citation]) -> bool:
    return any(c.start_s - TIME_TOLERANCE_S <= t <= c.end_s + TIME_TOLERANCE_S for c in spans)


def claim_problems(claim: Claim, spans: dict[str, Citation]) -> list[str]:
    """Why ``claim`` may not be said (empty when it may), checked against the run's ``spans``."""
    problems = []
    if not claim.citations:
        problems.append("cites nothing")
    for cite in claim.citations:
        known = spans.get(cite.evidence_id)
        if known is None or (known.start_s, known.end_s) != (cite.start_s, cite.end_s):
            problems.append(f"cites {cite.evidence_id}, which is not a span of this run")
    problems += [
        f"time {t} is outside its spans" for t in claim.times if not _inside(t, claim.citations)
    ]
    distinct = len({c.evidence_id for c in claim.citations})
    problems += [
        f"count {n} but {distinct} spans"
        for n in claim.counts
        if n != claim.counted or n != distinct
    ]
    gaps = {round(b - a, 1) for a in claim.times for b in claim.times if b >= a}
    problems += [
        f"duration {d} is no gap of its times" for d in claim.durations if round(d, 1) not in gaps
    ]
    allowed = [*claim.times, *claim.counts, *claim.durations]
    for number in written_numbers(claim.text):
        if not any(abs(number - a) <= TIME_TOLERANCE_S for a in allowed):
            problems.append(f"writes {number}, which it does not carry")
    return problems


def passing(claims: Sequence[Claim], spans: dict[str, Citation]) -> tuple[list[Claim], list[str]]:
    """The claims that pass, and the problems of those that do not."""
    kept, problems = [], []
    for claim in claims:
        found = claim_problems(claim, spans)
        if found:
            problems += [f"{claim.text!r}: {p}" for p in found]
        else:
            kept.append(claim)
    return kept, problems
