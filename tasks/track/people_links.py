"""Pass 2 of ``tasks.track.people``: LINKS that join tracklets across gaps into chains.

One global assignment joins tracklet ends to later starts, judged by motion against a walking
speed, the gap, the heights and, where both sides were seen clear of anyone in front, colours
(``link_costs``). A gap is someone hidden in view: a side whose line leaves the picture in it is
not linked (``in_picture``). A link on motion alone is made only where motion allows no other
(``sole_links``); a one-box tracklet, as often a false positive as a person glimpsed, is never
linked.

Linking is STAGED (``link_all``), solid tracklets first. Where two people cross, the detector
sees bits of each for a few frames: tracklets of a box or four, often a mixture of both people,
whose sides are too short for a velocity or a look to mean much. Linked on a par with the long
tracklets around them, one such bit can carry a chain from one person to the other. So:

1. tracklets of at least ``SIDE_ROWS`` boxes (a side's worth: ~1 s) are linked among themselves;
2. each shorter one is put into the gap of one of those links if it lies on that gap's straight
   line (each of its boxes overlaps the line's box there as much as a match), does not look
   unlike the gap's person, and fits no other gap: a bit that fits two people's gaps is
   either's and stays out. Two bits at once in one gap are two people where the link claims
   one: the link is CONTESTED, undone, and its ends stay free;
3. what is left (ends and starts still free, short tracklets not placed) is linked by the same
   rules, so a short tracklet still bridges where no solid link was made.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from tasks.detections import Detections
from tasks.geometry import box_iou
from tasks.track.appearance import BINS, look_distance
from tasks.track.people_tracklets import (
    SIDE_ROWS,
    TIME_EPS,
    PeopleConfig,
    Tracklet,
    fitted_velocity,
    side_look,
    speed_cap,
)

F64 = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
Pairs = tuple[IntArray, IntArray]  # (ends, starts): tracklet numbers of candidate links

LINK_SLACK = 0.5  # link reach beyond a walk, box heights: jitter, a half-hidden person's box
MIN_LINK_ROWS = 2  # a tracklet needs two boxes for a velocity, the least a link rests on
NO_LINK = 1.0  # the cost of leaving an end unlinked: a link at every limit at once
FORBIDDEN = 1e6  # the cost of a pair not allowed (finite: the solver needs numbers)


@dataclass(frozen=True)
class Sides:
    """Ends or starts of every tracklet (``_side``): ``t`` ``(T,)``, box ``centre`` and its
    ``velocity`` per second ``(T, 2)``, ``height`` ``(T,)``, ``look`` ``(T, BINS)``."""

    t: F64
    centre: F64
    velocity: F64
    height: F64
    look: F64


def _sides(
    tracklets: list[Tracklet], dets: Detections, clean: F64, max_speed: float, end: bool
) -> Sides:
    """The ends (``end``) or starts of every tracklet."""
    parts = [_side(tr, dets, clean, max_speed, end) for tr in tracklets]
    t, centre, velocity, height, look = (np.array([p[k] for p in parts]) for k in range(5))
    return Sides(t, centre.reshape(-1, 2), velocity.reshape(-1, 2), height, look.reshape(-1, BINS))


def _side(
    tracklet: Tracklet, dets: Detections, clean: F64, max_speed: float, end: bool
) -> tuple[float, F64, F64, float, F64]:
    """``(t, centre, velocity, height, look)`` of one tracklet's end or start: a straight-line
    fit of the box centres over its ``SIDE_ROWS`` rows there, their median height, and the
    mean of its ``SIDE_ROWS`` clean looks nearest that side."""
    pick = slice(-SIDE_ROWS, None) if end else slice(0, SIDE_ROWS)
    times = np.array(tracklet.times[pick])
    boxes = dets.boxes[tracklet.rows[pick]].astype(np.float64)
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    height = max(float(np.median(boxes[:, 3] - boxes[:, 1])), 1e-6)
    velocity = fitted_velocity(times, centres)
    velocity *= speed_cap(velocity, height, max_speed)
    t = float(times[-1] if end else times[0])
    centre = centres.mean(axis=0) + velocity * (t - times.mean())
    return t, centre, velocity, height, side_look(tracklet, clean, end)


def candidate_pairs(ends: Sides, starts: Sides, max_gap_s: float) -> Pairs:
    """Every (end, start) with the start ``0 < gap <= max_gap_s`` after the end, found in the
    starts sorted by time: a long recording has too many tracklets for a ``T x T`` matrix."""
    order = np.argsort(starts.t, kind="stable")
    first = np.searchsorted(starts.t[order], ends.t + TIME_EPS, side="right")
    last = np.searchsorted(starts.t[order], ends.t + max_gap_s + TIME_EPS, side="right")
    counts = last - first
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(np.arange(len(ends.t)), counts), order[np.repeat(first, counts) + within]


def link_costs(
    ends: Sides, starts: Sides, linkable: BoolArray, cfg: PeopleConfig
) -> tuple[IntArray, IntArray, F64]:
    """Pass 2's allowed pairs ``(end, start, cost)``: cost the mean of four terms each 0..1
    (motion, gap, size, look; an unknown look costs as much as the worst allowed, so links the
    colours confirm come first). Refused: gated pairs, tracklets not ``linkable`` ``(T,)``,
    motion-only pairs not ``sole_links``, pairs whose lines leave the picture (``in_picture``)."""
    e, s = candidate_pairs(ends, starts, cfg.max_gap_s)
    keep = linkable[e] & linkable[s]
    e, s = e[keep], s[keep]
    gap = starts.t[s] - ends.t[e]
    ahead = ends.centre[e] + ends.velocity[e] * gap[:, None]  # each side's velocity carried
    behind = starts.centre[s] - starts.velocity[s] * gap[:, None]  # over the gap, both ways
    miss = np.linalg.norm(ahead - starts.centre[s], axis=1)
    miss = (miss + np.linalg.norm(behind - ends.centre[e], axis=1)) / 2
    miss /= (ends.height[e] + starts.height[s]) / 2  # in box heights
    reach = cfg.max_speed * gap + LINK_SLACK
    size = np.abs(np.log(ends.height[e] / starts.height[s])) / np.log(cfg.max_size_ratio)
    look = _pair_looks(ends.look, starts.look, e, s) / cfg.max_look_distance
    known = ~np.isnan(look)
    allowed = (miss <= reach) & (size <= 1.0) & (~known | (look <= 1.0))
    allowed &= in_picture(ahead) & in_picture(behind)
    allowed[allowed] &= known[allowed] | sole_links(e[allowed], s[allowed], len(linkable))
    cost = np.mean([miss / reach, gap / cfg.max_gap_s, size, np.where(known, look, 1.0)], axis=0)
    return e[allowed], s[allowed], cost[allowed]


def in_picture(centres: F64) -> BoolArray:
    """Which centres ``(P, 2)`` (normalised) lie in the picture. A link claims its person was
    in view all along, hidden behind someone or something; where a side's straight line carries
    their centre out of the picture over the gap, the line says they walked out, and whoever
    comes in after is a return: re-identification's to judge (``tasks.track.identities``),
    which asks more of the colours, not a gap's."""
    return np.asarray(((centres >= 0) & (centres <= 1)).all(axis=1), dtype=bool)


def _pair_looks(ends: F64, starts: F64, e: IntArray, s: IntArray) -> F64:
    """``appearance.look_distance`` of each pair, end by end (``e`` sorted); NaN: unknown."""
    distance = np.full(len(e), np.nan)
    for pairs in np.split(np.arange(len(e)), np.flatnonzero(np.diff(e)) + 1):
        if len(pairs):
            distance[pairs] = look_distance(ends[e[pairs[0]]][None], starts[s[pairs]])[0]
    return distance


def sole_links(e: IntArray, s: IntArray, n: int) -> BoolArray:
    """Which allowed pairs ``(e, s)`` (of ``n`` tracklets) join an end and a start that have no
    other allowed pair. Where looks are unknown a link rests on motion alone, and motion that
    allows two people cannot choose: as in pass 1, the link is then left undone."""
    per_end, per_start = np.bincount(e, minlength=n), np.bincount(s, minlength=n)
    return np.asarray((per_end[e] == 1) & (per_start[s] == 1), dtype=bool)


def link_tracklets(e: IntArray, s: IntArray, cost: F64, n: int) -> dict[int, int]:
    """End -> start of the links chosen among allowed pairs ``(e, s, cost)`` of ``n``
    tracklets: one global assignment, solved per connected group of pairs (the same optimum,
    without a matrix of every end by every start)."""
    graph = coo_matrix((np.ones(len(e)), (e, n + s)), shape=(2 * n, 2 * n))
    group = connected_components(graph, directed=False)[1][e]
    order = np.argsort(group, kind="stable")
    links: dict[int, int] = {}
    for pairs in np.split(order, np.flatnonzero(np.diff(group[order])) + 1):
        if len(pairs):
            links.update(_assign(e[pairs], s[pairs], cost[pairs]))
    return links


def _assign(e: IntArray, s: IntArray, cost: F64) -> dict[int, int]:
    """Hungarian assignment over the ``(ends x starts)`` matrix of pairs ``(e, s, cost)``,
    augmented with one ``NO_LINK`` column per end; ``FORBIDDEN`` elsewhere, never taken."""
    ends, row = np.unique(e, return_inverse=True)
    starts, col = np.unique(s, return_inverse=True)
    full = np.full((len(ends), len(starts) + len(ends)), FORBIDDEN)
    full[row, col] = cost
    full[np.arange(len(ends)), len(starts) + np.arange(len(ends))] = NO_LINK
    picks, cols = linear_sum_assignment(full)
    linked = (cols < len(starts)) & (full[picks, cols] < FORBIDDEN)
    return {int(ends[p]): int(starts[c]) for p, c in zip(picks[linked], cols[linked], strict=True)}


def link_all(
    tracklets: list[Tracklet], dets: Detections, clean: F64, cfg: PeopleConfig
) -> dict[int, int]:
    """End -> start of every link among ``tracklets``, in the stages of the module docstring."""
    ends, starts = (_sides(tracklets, dets, clean, cfg.max_speed, end) for end in (True, False))
    rows = np.array([len(tr.rows) for tr in tracklets], dtype=np.int64)
    e, s, cost = link_costs(ends, starts, rows >= MIN_LINK_ROWS, cfg)
    solid = (rows[e] >= cfg.min_rows) & (rows[s] >= cfg.min_rows)
    links = link_tracklets(e[solid], s[solid], cost[solid], len(tracklets))
    links, contested = place_short(tracklets, Bits(dets, clean, rows < cfg.min_rows), links, cfg)
    free = ~np.isin(e, list(links)) & ~np.isin(s, list(links.values())) & ~np.isin(e, contested)
    links.update(link_tracklets(e[free], s[free], cost[free], len(tracklets)))
    return links


@dataclass(frozen=True)
class Bits:
    """What stage 2 reads of the rows: their boxes, clean looks ``(N, BINS)`` and which
    tracklets are ``short`` ``(T,)`` (bits)."""

    dets: Detections
    clean: F64
    short: BoolArray


def place_short(
    tracklets: list[Tracklet], bits: Bits, links: dict[int, int], cfg: PeopleConfig
) -> tuple[dict[int, int], list[int]]:
    """``links`` with the short tracklets that fit one link's gap, and no other's, put in it
    (stage 2 of the module docstring; tracklets fitting one gap follow each other in time),
    and the ends of the links undone as CONTESTED: two bits at once on a gap's line, neither
    told apart from its person by looks, are two people where the link claims one, so which of
    them the start is, places cannot tell (pass 1's contest, seen across a gap)."""
    ends = np.array(list(links), dtype=np.int64)
    gap_from = np.array([tracklets[e].times[-1] for e in ends.tolist()])
    gap_to = np.array([tracklets[links[e]].times[0] for e in ends.tolist()])
    fits: dict[int, list[int]] = {}
    for k in np.flatnonzero(bits.short).tolist():  # only the gaps around it, not links x bits
        around = ends[(gap_from < tracklets[k].times[0]) & (gap_to > tracklets[k].times[-1])]
        gaps = [e for e in around.tolist() if _fits(tracklets, bits, (e, links[e], k), cfg)]
        if len(gaps) == 1:
            fits.setdefault(gaps[0], []).append(k)
    placed, contested = dict(links), []
    for end, members in fits.items():
        members.sort(key=lambda k: tracklets[k].times[0])
        if all(tracklets[a].times[-1] < tracklets[b].times[0] for a, b in pairwise(members)):
            placed.update(pairwise([end, *members, links[end]]))
        else:
            contested.append(end)
            del placed[end]
    return placed, contested


def _fits(
    tracklets: list[Tracklet], bits: Bits, gap: tuple[int, int, int], cfg: PeopleConfig
) -> bool:
    """Whether tracklet ``k`` of ``gap`` ``(end, start, k)`` lies inside the gap from ``end``
    to ``start``, on the straight line between the gap's two boxes (every box overlapping the
    line's as much as a match), and does not look unlike the person whose gap it is."""
    end, start, k = gap
    distance = look_distance(
        side_look(tracklets[end], bits.clean, True)[None],
        side_look(tracklets[k], bits.clean, False)[None],
    )[0, 0]
    if distance > cfg.max_look_distance:  # NaN (a look unknown) refuses nothing
        return False
    dets, match_iou = bits.dets, cfg.match_iou
    before, after, bit = tracklets[end], tracklets[start], tracklets[k]
    t0, t1 = before.times[-1], after.times[0]
    if not t0 < bit.times[0] <= bit.times[-1] < t1:
        return False
    share = ((np.array(bit.times) - t0) / (t1 - t0))[:, None]
    box0 = dets.boxes[before.rows[-1]].astype(np.float64)
    box1 = dets.boxes[after.rows[0]].astype(np.float64)
    line = (1 - share) * box0 + share * box1
    overlap = np.diag(box_iou(line, dets.boxes[bit.rows].astype(np.float64)))
    return bool((overlap >= match_iou).all())
