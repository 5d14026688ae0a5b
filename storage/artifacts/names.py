"""The one name a person reads for each object of a run, the same on every page and answer.

Raw ids (``obj_stcqh1``) tell a reviewer nothing; the run measured what each thing is, so the
name says it: people are ``person N``, numbered per identity in order of first appearance (every
appearance of one person shares N, so "person 3" who left and came back is still "person 3");
faces ``face N``; a text is what was read, quoted (``"GATE 7"``), or ``text N`` where nothing was
read; any other mover is its colour and class word (``red object``, ``blue car``), with `` N``
added when two different things would share that name, and ``object N`` without a colour.

Names are computed here from ``objects.parquet`` rows only, so the scene graph, timeline,
evidence view, tracks, Ask citations and search hits cannot name one object two ways.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

# Classes numbered per identity whatever else is known of them.
_NUMBERED = ("person", "face")


def name_objects(objects: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Each object's name, by object id.

    Args:
        objects: rows of ``objects.parquet`` (``object_id``, ``class``, ``first_seen_s``,
            ``colour``, ``identity_id``, ``attributes`` as a JSON string or a dict).

    Returns:
        ``{object_id: name}``; objects of one identity share their name.
    """
    groups = _by_thing(objects)
    named = _numbered({key: _base_name(rows[0]) for key, rows in groups.items()})
    return {row["object_id"]: named[key] for key, rows in groups.items() for row in rows}


def _by_thing(objects: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Objects grouped by the thing they are (an identity, else the object itself), the groups
    in order of their first appearance."""
    groups: defaultdict[str, list[Mapping[str, Any]]] = defaultdict(list)
    ordered = sorted(objects, key=lambda o: (o["first_seen_s"], o["object_id"]))
    for row in ordered:
        groups[row.get("identity_id") or row["object_id"]].append(row)
    return dict(groups)


def _base_name(row: Mapping[str, Any]) -> tuple[str, bool]:
    """The name before numbering, and whether it is a bare word that is always numbered (a
    person, a face, a text with nothing read, a mover without colour)."""
    kind = row["class"]
    if kind in _NUMBERED:
        return kind, True
    if kind == "text":
        read = str(_attributes(row).get("text") or "").strip()
        return (f'"{read}"', False) if read else ("text", True)
    word = "object" if kind == "motion" else kind
    colour = row.get("colour")
    return (f"{colour} {word}", False) if colour else (word, True)


def _numbered(bases: Mapping[str, tuple[str, bool]]) -> dict[str, str]:
    """Numbers added where needed: always to bare words (``person 1``), and to a coloured name
    or a read text only when two things share it; numbers count in order of appearance."""
    shared = Counter(base for base, _ in bases.values())
    seen: Counter[str] = Counter()
    named: dict[str, str] = {}
    for key, (base, bare) in bases.items():  # groups are in order of first appearance
        seen[base] += 1
        named[key] = f"{base} {seen[base]}" if bare or shared[base] > 1 else base
    return named


def _attributes(row: Mapping[str, Any]) -> dict[str, Any]:
    attributes = row.get("attributes") or {}
    if isinstance(attributes, str):
        loaded: dict[str, Any] = json.loads(attributes)
        return loaded
    return dict(attributes)
