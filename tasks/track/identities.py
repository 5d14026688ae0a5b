"""Re-identification: the tracks of one thing that left and came back become one IDENTITY.

A track ends when its thing leaves the picture (or is hidden long enough); when the thing comes
back, the tracker starts a new track, so a person who walks out and back in is two objects.
Counting things ("how many different people?") needs identities; counting passes ("how many
times did someone come in?") needs the tracks, which are the identity's APPEARANCES.

Each track gets a SUMMARY of what it looks like: the mean colour histogram
(``tasks.track.appearance``, HSV) of the upper and of the lower half of its clean boxes (boxes
that overlap no other track's box in the same sampled thumbnail: a box holding two things looks
like neither), and its boxes' median width-to-height ratio. Two tracks are alike when both
halves' Bhattacharyya distances are within ``LINK_DISTANCE`` and their shapes within
``ASPECT_RATIO`` of each other (a box of two people walking side by side is twice as wide as one
of either, and is not the same thing). The halves keep a dark coat over blue jeans apart from
blue jeans under a dark coat's colours mixed another way.

PERSON tracks (the person detector's tight boxes) are looked at by anatomy instead: the torso
and the legs, without head, feet and the space around the limbs (``clothes_boxes``). A person
also has a pace: two tracks are one person only if the later begins within a walk of where the
earlier ended in the time between (``plausible``: a track that begins mid-picture half a second
after one left at the far edge is someone else), and looks may differ up to
``RETURN_DISTANCE`` rather than ``LINK_DISTANCE`` only where the later began where the earlier
ended (``returned``): a link beyond colours alone needs a plausible time and place too.

Linking is greedy and conservative: pairs of tracks of the same class that are never in view at
the same time are taken most alike first, and two identities join only when every track of one
is ``plausible`` with every track of the other (one thing is in one place at a time). A track
with too few clean looks (``MIN_CLEAN_LOOKS``) keeps an identity of its own.

The looks are read from the sampled THUMBNAILS, which whole, chunked and live runs all keep, so
a video gives the same identities however it was cut. How ``LINK_DISTANCE`` was chosen (on the
street clip and synthetic TUNING seeds, never the held-out ones) is in
``benchmarks/identities.py`` and docs/measured/perception.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.track.appearance import BINS, INNER, Frame, box_looks, clean_rows, look_distance
from tasks.track.people import LINK_SLACK, PeopleConfig

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]

# Most a half's look distance may be for two tracks to be one thing: the largest threshold
# (in steps of 0.05) at which at most 5 % of pairs of DIFFERENT things look alike, on the street
# clip and on synthetic tuning seeds (benchmarks/identities.py; at 0.25 the street's people in
# view together pass 6.2 %, things of different synthetic scenes 5.2 %).
LINK_DISTANCE = 0.2
ASPECT_RATIO = 1.35  # most two tracks' median width/height may differ by, as a factor
MIN_CLEAN_LOOKS = 3  # fewer clean looks than this: too little seen to recognise it again
# Clean looks read per track, spread over its time in view: a mean of this many is as steady as
# one of hundreds, and the thumbnails read (the cost) stop growing with the video's length.
LOOKS_PER_TRACK = 32

# PERSON tracks (the person detector's class) have TIGHT boxes: the box is the person from hair
# to soles, so what the clothes are is known by anatomy (a standing adult is ~8 heads tall, the
# legs part at about half the height). Their looks are the torso and the legs, without the head
# (hair and skin, alike on everyone, front or back as the person turns) and the feet (shoes, the
# ground and the shadow under them, where a box's jitter lands).
PERSON = "person"  # the person detector's class (tasks.detect.detectors.person.PERSON_CLASS)
HEAD = 1 / 8  # share of a person box's height from the top that is the head
WAIST = 1 / 2  # where the legs part: coat above, trousers below
FEET = 7 / 8  # below this share of the height: feet, ground, shadow (as tall as the head)
# Central shares of the box's width: a box is as wide as the swinging arms and the stride, the
# torso is ~0.15 (side on) to ~0.25 (facing) heights wide in a box ~0.3 heights wide, and the
# legs meet only near the waist (the rest of a stride's width is the ground between them).
TORSO_WIDTH = 0.6
LEGS_WIDTH = 0.5
# One walk for people everywhere: the tracker's fastest plausible walk and link slack, in box
# heights (``tasks.track.people``). A person ends one track and begins the next no further apart
# than a walk in the gap allows (one thing in one place at a time, moving no faster than a walk).
WALK = PeopleConfig().max_speed
# A person came back WHERE they left (the same way out and in, or from behind the same
# obstacle) when the next track begins within a second's walk (and the slack) of where the
# last ended: a stride or two either way along the exit.
RETURN_REACH = WALK * 1.0 + LINK_SLACK
# Most a person's two tracks' looks may differ by when time and place agree (a return): the
# rule that chose ``LINK_DISTANCE`` (the largest threshold, in steps of 0.05, at which at most
# 5 % of pairs of different things look alike), applied to the torso and legs of tight person
# boxes: on the street clip's person tracks in view together (surely different people, no
# labels) 0.3 lets 4.3 % through, 0.35 8.5 %. Not the tracker's 0.35 (``PeopleConfig``): in a
# street most people leave and come back by the same few exits, so a return narrows the
# candidates far less than a walk over a 3 s gap does.
RETURN_DISTANCE = 0.3


@dataclass(frozen=True)
class TrackSummary:
    """What one track looks like and when it was in view.

    Attributes:
        track_id: the track's number.
        class_name: its class (only tracks of one class can be one thing).
        first_s, last_s: when it was first and last seen.
        upper, lower: ``(BINS,)`` mean colour histograms of its boxes' upper and lower halves
            over its clean looks (zeros when it had none).
        aspect: median width / height of its boxes (in frame units).
        clean_looks: how many of its clean boxes were looked at (``looked_rows``).
        first_box, last_box: ``(4,)`` its first and last boxes (where it came and went).
    """

    track_id: int
    class_name: str
    first_s: float
    last_s: float
    upper: F64
    lower: F64
    aspect: float
    clean_looks: int
    first_box: F64
    last_box: F64

    @property
    def known(self) -> bool:
        """Seen cleanly often enough to be recognised."""
        return self.clean_looks >= MIN_CLEAN_LOOKS


def half_boxes(boxes: npt.ArrayLike) -> tuple[F32, F32]:
    """The upper and lower halves ``(N, 4)`` of ``(N, 4)`` boxes."""
    upper = np.array(boxes, dtype=np.float32).reshape(-1, 4)
    lower = upper.copy()
    middle = (upper[:, 1] + upper[:, 3]) / 2
    upper[:, 3], lower[:, 1] = middle, middle
    return upper, lower


def clothes_boxes(boxes: npt.ArrayLike) -> tuple[F32, F32]:
    """The torso and legs ``(N, 4)`` of tight ``(N, 4)`` person boxes (``HEAD`` ... ``FEET``)."""
    box = np.array(boxes, dtype=np.float64).reshape(-1, 4)
    corner, size = np.tile(box[:, :2], 2), np.tile(box[:, 2:] - box[:, :2], 2)
    parts = []
    for top, bottom, share in ((HEAD, WAIST, TORSO_WIDTH), (WAIST, FEET, LEGS_WIDTH)):
        side = (1 - share) / 2
        parts.append((corner + np.array([side, top, 1 - side, bottom]) * size).astype(np.float32))
    return parts[0], parts[1]


def looked_rows(tracks: Detections) -> npt.NDArray[np.bool_]:
    """Which rows of ``tracks`` to look at: clean ones (their box overlaps no other box of its
    frame), at most ``LOOKS_PER_TRACK`` a track, evenly spread over its rows."""
    clean = np.zeros(len(tracks), dtype=bool)
    for index in np.unique(tracks.frame_index):
        rows = np.flatnonzero(tracks.frame_index == index)
        clean[rows] = clean_rows(tracks.boxes[rows])
    chosen = np.zeros(len(tracks), dtype=bool)
    for track_id in np.unique(tracks.track_ids):
        rows = np.flatnonzero(clean & (tracks.track_ids == track_id))
        picks = np.linspace(0, len(rows) - 1, min(len(rows), LOOKS_PER_TRACK)).round()
        chosen[rows[picks.astype(np.int64)]] = True
    return chosen


def half_looks(tracks: Detections, frame_at: Callable[[int], Frame | None]) -> tuple[F64, F64]:
    """``(N, BINS)`` looks of the upper and lower halves of the rows of ``tracks`` that
    ``looked_rows`` picks, each in its thumbnail; zeros (unknown) for every other row and for
    rows whose frame ``frame_at`` has no picture of."""
    upper, lower = np.zeros((len(tracks), BINS)), np.zeros((len(tracks), BINS))
    chosen = looked_rows(tracks)
    for index in np.unique(tracks.frame_index[chosen]):
        rows = np.flatnonzero(chosen & (tracks.frame_index == index))
        frame = frame_at(int(index))
        if frame is None:
            continue
        person = np.array([tracks.class_of(int(r)) == PERSON for r in rows], dtype=bool)
        for part, (cut, inner) in ((person, _PERSON_CUT), (~person, _LOOSE_CUT)):
            if part.any():
                top, bottom = cut(tracks.boxes[rows[part]])
                upper[rows[part]] = box_looks(frame, top, inner)
                lower[rows[part]] = box_looks(frame, bottom, inner)
    return upper, lower


# How each kind of box is cut into its two looks, and the inner share of each part counted:
# a person box by anatomy and whole; a loose motion box in halves, its rim (background) left out.
_PERSON_CUT = (clothes_boxes, 1.0)
_LOOSE_CUT = (half_boxes, INNER)


def summarise_tracks(tracks: Detections, upper: F64, lower: F64) -> list[TrackSummary]:
    """One summary per track of ``tracks``, from each row's half looks (``half_looks``)."""
    summaries = []
    for track_id in np.unique(tracks.track_ids[tracks.track_ids >= 0]):
        rows = np.flatnonzero(tracks.track_ids == track_id)
        clean = rows[(upper[rows].sum(axis=1) > 0) & (lower[rows].sum(axis=1) > 0)]
        boxes = tracks.boxes[rows].astype(np.float64)
        sizes = np.maximum(boxes[:, 2:] - boxes[:, :2], 1e-6)
        summaries.append(
            TrackSummary(
                track_id=int(track_id),
                class_name=tracks.class_of(int(rows[0])),
                first_s=float(tracks.t_s[rows].min()),
                last_s=float(tracks.t_s[rows].max()),
                upper=_mean_look(upper[clean]),
                lower=_mean_look(lower[clean]),
                aspect=float(np.median(sizes[:, 0] / sizes[:, 1])),
                clean_looks=len(clean),
                first_box=boxes[int(np.argmin(tracks.t_s[rows]))],
                last_box=boxes[int(np.argmax(tracks.t_s[rows]))],
            )
        )
    return summaries


def _mean_look(looks: F64) -> F64:
    """The mean of ``(N, BINS)`` histograms, summing to 1 (zeros without any)."""
    if not len(looks):
        return np.zeros(BINS)
    mean = looks.mean(axis=0)
    return np.asarray(mean / mean.sum(), dtype=np.float64)


def summary_distance(a: TrackSummary, b: TrackSummary) -> float:
    """How unalike two summaries look: the larger of their halves' look distances (0..1; 1
    when either is not known)."""
    if not (a.known and b.known):
        return 1.0
    halves = [
        look_distance(x[None], y[None])[0, 0] for x, y in ((a.upper, b.upper), (a.lower, b.lower))
    ]
    return float(max(halves))


def alike(a: TrackSummary, b: TrackSummary, max_distance: float = LINK_DISTANCE) -> bool:
    """Whether two tracks could be one thing seen twice: same class, a plausible time and place
    (``plausible``), similar shape, and looks within ``max_distance`` (a person who came back
    where they left: within ``RETURN_DISTANCE``)."""
    shape = max(a.aspect, b.aspect) / max(min(a.aspect, b.aspect), 1e-6)
    return (
        a.class_name == b.class_name
        and plausible(a, b)
        and shape <= ASPECT_RATIO
        and summary_distance(a, b) <= _look_limit(a, b, max_distance)
    )


def plausible(a: TrackSummary, b: TrackSummary) -> bool:
    """Whether one thing could have made both tracks: never in view at the same time, and, for
    people, the later begins within a walk (``WALK``, ``LINK_SLACK``) of where the earlier
    ended. Other things (a car, a cart, a motion region's loose box) have no known pace."""
    if _overlap(a, b):
        return False
    if a.class_name != PERSON or b.class_name != PERSON:
        return True
    earlier, later = sorted((a, b), key=lambda s: s.first_s)
    return _apart(earlier, later) <= WALK * (later.first_s - earlier.last_s) + LINK_SLACK


def returned(a: TrackSummary, b: TrackSummary) -> bool:
    """Whether, of two people's tracks, the later began where the earlier ended (within
    ``RETURN_REACH``): out and back in the same way."""
    earlier, later = sorted((a, b), key=lambda s: s.first_s)
    people = a.class_name == PERSON and b.class_name == PERSON
    return people and _apart(earlier, later) <= RETURN_REACH


def _apart(earlier: TrackSummary, later: TrackSummary) -> float:
    """How far the later track's first box is from the earlier's last, in their mean height."""
    first, last = later.first_box, earlier.last_box
    height = max((first[3] - first[1] + last[3] - last[1]) / 2, 1e-6)
    return float(np.hypot(*((first[:2] + first[2:]) - (last[:2] + last[2:])) / 2) / height)


def _look_limit(a: TrackSummary, b: TrackSummary, max_distance: float) -> float:
    """The most two tracks' looks may differ by to be linked: ``max_distance``, or
    ``RETURN_DISTANCE`` for a person who came back where they left."""
    return max(max_distance, RETURN_DISTANCE) if returned(a, b) else max_distance


def _overlap(a: TrackSummary, b: TrackSummary) -> bool:
    return a.first_s <= b.last_s and b.first_s <= a.last_s


def link_identities(
    summaries: Sequence[TrackSummary], max_distance: float = LINK_DISTANCE
) -> dict[int, int]:
    """Track number -> identity number (1, 2, ... by first appearance), linking alike tracks
    most alike first; two identities join only when each track of one is ``plausible`` with
    each of the other."""
    members = {s.track_id: [s] for s in summaries}
    owner = {s.track_id: s.track_id for s in summaries}
    pairs = [
        (summary_distance(a, b), a.track_id, b.track_id)
        for i, a in enumerate(summaries)
        for b in summaries[i + 1 :]
        if alike(a, b, max_distance)
    ]
    for _, a, b in sorted(pairs):
        ia, ib = owner[a], owner[b]
        if ia == ib or not all(plausible(x, y) for x in members[ia] for y in members[ib]):
            continue
        members[ia].extend(members.pop(ib))
        for member in members[ia]:
            owner[member.track_id] = ia
    return _numbered(members)


def _numbered(members: dict[int, list[TrackSummary]]) -> dict[int, int]:
    """Identity numbers from 1 in order of each identity's first appearance."""
    ordered = sorted(members.values(), key=lambda group: min(s.first_s for s in group))
    return {s.track_id: n for n, group in enumerate(ordered, 1) for s in group}


def identify_tracks(
    tracks: Detections, frame_at: Callable[[int], Frame | None] | None
) -> dict[int, int]:
    """Track number -> identity number for every track of ``tracks`` (the pure core the track
    stage calls): linked by their looks in the thumbnails ``frame_at`` gives, or each track an
    identity of its own without pictures."""
    if frame_at is None:
        numbers = np.unique(tracks.track_ids[tracks.track_ids >= 0])
        return {int(t): n for n, t in enumerate(numbers, 1)}
    upper, lower = half_looks(tracks, frame_at)
    return link_identities(summarise_tracks(tracks, upper, lower))
