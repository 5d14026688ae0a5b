"""Times and windows in a question: "between 0:05 and 0:10", "the first 30 s", "after 1:00",
"at 12 seconds"; and a time no window takes ("5 seconds after the cut"), which the reader
refuses rather than drop."""

from __future__ import annotations

import re

from ask.vocabulary import TIME


def parse_time(match: re.Match[str], offset: int = 1) -> float:
    """Seconds of a ``TIME`` match (groups: minutes, seconds of a clock; or a number + unit)."""
    minutes, seconds, number = match.group(offset), match.group(offset + 1), match.group(offset + 2)
    if minutes is not None:
        return int(minutes) * 60 + float(seconds)
    unit = match.string[match.end(offset + 2) : match.end()].strip()
    return float(number) * (60.0 if unit.startswith("min") else 1.0)


_BETWEEN = re.compile(rf"\b(?:between|from)\s+{TIME}\s*(?:and|to|-|until|till)\s+{TIME}")
_FIRST_N = re.compile(rf"\b(?:first|opening)\s+{TIME}")
_AFTER = re.compile(rf"\bafter\s+{TIME}")
_BEFORE = re.compile(rf"\bbefore\s+{TIME}")
_AT = re.compile(rf"\b(?:at|around|near)\s+{TIME}")
_UNIT = re.compile(r"\d\s*(?:s|sec|second)")
_NUMBER_LEFT = re.compile(r"\d[\d:.]*(?:\s*(?:s|sec|secs|seconds?|min|mins|minutes?)\b)?")


def window_matches(q: str) -> tuple[tuple[float, float] | None, list[re.Match[str]]]:
    """The time window a question names, if any, and the matches that name it."""
    between = _BETWEEN.search(q)
    if between:
        a, b = parse_time(between, 1), parse_time(between, 4)
        return (min(a, b), max(a, b)), [between]
    first_n = _FIRST_N.search(q)
    if first_n:
        return (0.0, parse_time(first_n, 1)), [first_n]
    after, before = _AFTER.search(q), _BEFORE.search(q)
    if after or before:
        start = parse_time(after, 1) if after else 0.0
        end = parse_time(before, 1) if before else float("inf")
        return (start, end), [m for m in (after, before) if m]
    at = _AT.search(q)
    if at and (at.group(1) or _UNIT.search(at.group(0))):
        t = parse_time(at, 1)
        return (max(0.0, t - 1.0), t + 1.0), [at]
    return None, []


def find_window(q: str) -> tuple[float, float] | None:
    """The time window a question names, if any."""
    return window_matches(q)[0]


def unplaced_time(q: str) -> str | None:
    """A time or number ``q`` writes that no window takes ("5 seconds after the cut", "since
    0:30"): dropping it would answer another question."""
    _, matches = window_matches(q)
    for m in sorted(matches, key=lambda m: m.start(), reverse=True):
        q = q[: m.start()] + " " + q[m.end() :]
    left = _NUMBER_LEFT.search(q)
    return left.group(0).strip() if left else None


def at_a_moment(q: str) -> bool:
    """Whether the window ``q`` names is a moment ("at 0:31"), not a stretch: "how many people
    were there at 0:31" asks who was in view then, not who came into view."""
    _, matches = window_matches(q)
    return bool(matches) and matches[0].re is _AT
