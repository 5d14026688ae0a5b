"""Truth about the street clip ``vtest.avi``, derived by code from its annotation files only.

* ``testkit/data/vtest_people.json``: boxes with identity ids every 20 frames (2 s), read
  through ``testkit.mot.load_truth(by="sighting")`` (ids ``100 * person + spell``), boxes
  normalised to the frame (so the frame width is 1.0);
* ``testkit/data/vtest_identities.json``: the 12 people and their sightings (in and out times);
* ``testkit/data/vtest_attributes.json``: clothing colours and groups, read once from the
  identities' notes.

Counting people in a labelled frame follows ``testkit/mot.py``'s rule for ``difficult`` labels
(tiny, mostly hidden or cut by the edge): they are "don't care", neither required nor forbidden.
So the true count of a frame is a RANGE, from its clearly visible (non-difficult) people to all
its labelled people; a stated count is judged against that range (with the bank's tolerance).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from testkit.mot import IDENTITIES, TruthFrame, load_truth

ATTRIBUTES = IDENTITIES.parent / "vtest_attributes.json"
HEIGHT_OVER_WIDTH = 576 / 768  # boxes are normalised per axis; distances are in frame widths
WALK_SHARE = 1 / 6  # a walk in a direction: the centre moves net >= 1/6 of the frame width
STILL_SHARE = 0.03  # standing still: every centre of a run within 3 % of the frame width


@dataclass(frozen=True)
class Person:
    """One of the 12 people: id and spells in the picture ``(in_s, out_s)``."""

    id: int
    sightings: tuple[tuple[float, float], ...]

    @property
    def first_s(self) -> float:
        return self.sightings[0][0]


@dataclass(frozen=True)
class Group:
    """People the notes say walk or stand together, and when."""

    ids: frozenset[int]
    kind: str
    spans: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class StillSpan:
    """A person's centre stayed within ``STILL_SHARE`` over labels from ``start`` to ``end``."""

    person: int
    start: float
    end: float

    @property
    def length(self) -> float:
        return self.end - self.start


# One labelled position of a sighting: (t_s, centre x, centre y), in frame widths.
Point = tuple[float, float, float]


@dataclass(frozen=True)
class StreetTruth:
    frames: tuple[TruthFrame, ...]
    people: tuple[Person, ...]
    colours: dict[int, frozenset[str]]
    groups: tuple[Group, ...]
    duration_s: float

    def paths(self) -> dict[int, list[Point]]:
        """Each sighting's labelled centres in time order, keyed ``100 * person + spell``."""
        found: dict[int, list[Point]] = defaultdict(list)
        for frame in self.frames:
            for box, key in zip(frame.boxes, frame.ids, strict=True):
                x = float(box[0] + box[2]) / 2
                y = float(box[1] + box[3]) / 2 * HEIGHT_OVER_WIDTH
                found[int(key)].append((frame.t_s, x, y))
        return dict(found)


@cache
def load_street_truth(attributes: Path = ATTRIBUTES) -> StreetTruth:
    """The street's truth from the three annotation files."""
    identities = json.loads(IDENTITIES.read_text())
    people = tuple(
        Person(p["id"], tuple((float(a), float(b)) for a, b in p["sightings"]))
        for p in identities["people"]
    )
    attrs = json.loads(attributes.read_text())
    colours = {p["id"]: frozenset(p["colours"]) for p in attrs["people"]}
    groups = tuple(
        Group(frozenset(g["ids"]), g["kind"], tuple((float(a), float(b)) for a, b in g["spans"]))
        for g in attrs["groups"]
    )
    end = max(b for p in people for _, b in p.sightings)
    return StreetTruth(tuple(load_truth(by="sighting")), people, colours, groups, end)


# --- People and their walks -------------------------------------------------------------------


def n_people(truth: StreetTruth) -> int:
    return len(truth.people)


def walkers(truth: StreetTruth, direction: int) -> set[int]:
    """People with a sighting whose centre moved net >= ``WALK_SHARE`` of the frame width
    to the right (``direction`` 1) or to the left (-1), first to last labelled box."""
    return {
        key // 100
        for key, path in truth.paths().items()
        if direction * (path[-1][1] - path[0][1]) >= WALK_SHARE
    }


def n_left_to_right(truth: StreetTruth) -> int:
    return len(walkers(truth, 1))


def n_right_to_left(truth: StreetTruth) -> int:
    return len(walkers(truth, -1))


# --- How many in view -------------------------------------------------------------------------


def count_range(frame: TruthFrame) -> tuple[int, int]:
    """(clearly visible people, all labelled people) of a frame: the true count's range."""
    return int((~frame.difficult).sum()), len(frame.ids)


def frame_near(truth: StreetTruth, t: float) -> TruthFrame:
    return min(truth.frames, key=lambda f: abs(f.t_s - t))


def count_at(truth: StreetTruth, t: float) -> tuple[int, int]:
    return count_range(frame_near(truth, t))


def peak(truth: StreetTruth) -> tuple[int, int]:
    """The most people in view: (most clearly visible, most labelled) over the frames."""
    ranges = [count_range(f) for f in truth.frames]
    return max(r[0] for r in ranges), max(r[1] for r in ranges)


def peak_times(truth: StreetTruth) -> list[float]:
    """The labelled times holding the most clearly visible people."""
    top = peak(truth)[0]
    return [f.t_s for f in truth.frames if count_range(f)[0] == top]


# --- Standing still ---------------------------------------------------------------------------


def _still_end(path: Sequence[Point], start: int) -> int:
    """The last index of the run from ``start`` whose centres all lie within ``STILL_SHARE``
    of each other, over consecutive labels (no label skipped)."""
    end = start
    while end + 1 < len(path) and path[end + 1][0] - path[end][0] <= 2.5:
        nxt = path[end + 1]
        if any(math.dist(p[1:], nxt[1:]) >= STILL_SHARE for p in path[start : end + 1]):
            break
        end += 1
    return end


def still_spans(truth: StreetTruth) -> list[StillSpan]:
    """Every maximal run of a person standing still over two labels or more."""
    spans: list[StillSpan] = []
    for key, path in sorted(truth.paths().items()):
        covered = -1
        for start in range(len(path)):
            end = _still_end(path, start)
            if end > start and end > covered:
                spans.append(StillSpan(key // 100, path[start][0], path[end][0]))
                covered = end
    return spans


def stood_still(truth: StreetTruth, seconds: float) -> list[StillSpan]:
    return [s for s in still_spans(truth) if s.length >= seconds]


# --- When ---------------------------------------------------------------------------------


def first_appearance(truth: StreetTruth) -> float:
    return min(p.first_s for p in truth.people)


def last_new_person(truth: StreetTruth) -> float:
    """When the last person never seen before came into view."""
    return max(p.first_s for p in truth.people)


def first_exit(truth: StreetTruth) -> float:
    return min(b for p in truth.people for _, b in p.sightings)


def last_seen(truth: StreetTruth) -> float:
    return max(b for p in truth.people for _, b in p.sightings)


def first_in_colour(truth: StreetTruth, colour: str) -> float | None:
    """When a person wearing ``colour`` first appeared (None: nobody wears it)."""
    times = [p.first_s for p in truth.people if colour in truth.colours[p.id]]
    return min(times, default=None)


def group_spans(truth: StreetTruth) -> list[tuple[float, float]]:
    return sorted(span for g in truth.groups for span in g.spans)
