"""Zones in a question: the run's zone names ("left", "the middle"), and zones a question names
that the run does not have ("zone B", "the exit zone"), which the reader refuses by name."""

from __future__ import annotations

import re

_SAME_ZONE = {"center": r"center|centre|middle"}  # the default zone and the words people use


def zone_named(q: str, zones: list[str]) -> str | None:
    """The run's zone the question names, if any ("the middle" is "center")."""
    for zone in sorted(zones, key=len, reverse=True):
        words = _SAME_ZONE.get(zone.lower(), re.escape(zone.lower()))
        named = re.search(rf"\b(?:{words})\b", q)
        # "left" is also a verb and "right" an adverb ("right after the cut"): either is the
        # zone only when it reads as a place.
        side = zone.lower()
        place = side not in {"left", "right"} or re.search(
            rf"\b{side} (?:zone|area|side|third|part)\b|\bzone {side}\b|\bthe {side}\b", q
        )
        if named and place:
            return zone
    return None


_ZONE_LETTER = re.compile(r"\b(zone|area|region|section) ([a-z]|\d{1,3})\b")
_ZONE_WORD = re.compile(r"\b(?:(the|a|an|this|that) )?([a-z]+)(?= (zone|area|region|section)s?\b)")
# Words before "zone" that name none: the sides, articles, and (unless after an article: "the
# exit zone") the verbs and prepositions of "exited zone left", "in zone left".
_NO_ZONE_NAME = frozenset(
    re.findall(
        r"\S+",
        "which what any each every same other one another its their middle centre center left"
        " right side",
    )
)
_NO_ZONE_NAME_BARE = _NO_ZONE_NAME | frozenset(
    re.findall(
        r"\S+",
        "the a an that this in on at into to from of near by through inside within enter entered"
        " enters entering exit exits exited leave leaves stop stopped waited stood stayed was were"
        " is are",
    )
)


def unknown_zone(q: str, zones: list[str]) -> str | None:
    """A zone the question names that the run does not have ("zone B", "the exit zone")."""
    names = {z.lower() for z in zones}
    for m in _ZONE_LETTER.finditer(q):
        if m.group(2) not in names:
            return m.group(0)
    for m in _ZONE_WORD.finditer(q):
        word, article = m.group(2), m.group(1)
        ignored = _NO_ZONE_NAME if article else _NO_ZONE_NAME_BARE
        if word not in names and word not in ignored:
            return f"{word} {m.group(3)}"
    return None
