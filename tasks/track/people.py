"""Offline tracking of people: tracking by detection over the whole recording.

The track stage's tracker (``tasks.track.bytetrack``) decides frame by frame, as a live run
must. Over a finished recording what comes after is known too, so people are tracked in passes:

1. TRACKLETS (``tasks.track.people_tracklets``): boxes matched to each tracklet's
   constant-velocity prediction (Hungarian on IoU, gated by colours), ByteTrack-style:
   confident boxes first, then weak ones to the tracklets left; only a confident box starts one.
2. LINKING (``link_costs``, ``link_tracklets``): one global assignment joins tracklet ends to
   later starts across gaps, judged by motion against a walking speed, the gap, the heights
   and, where both sides were seen clear of other boxes, colours (``tasks.track.appearance``).
   A gap is someone hidden in view: a side whose line leaves the picture in it is not linked.
3. FILLING (``filled_rows``): short gaps get a box on every sampled frame on the straight line
   between the sightings, ESTIMATED, score 0 (the detector did not see it: a consumer that
   filters by score drops it). Longer gaps stay holes. Weak tracks are then dropped.

The rule that shapes it all: a track never jumps from one person to another. A switch puts a
person where they never were, in evidence; a track cut in two costs a count, and
re-identification (``tasks.track.identities``) can still join it. So where one box could
continue two tracklets predicted at the same place (people crossing) and colours cannot tell
them apart, both end there, and linking, which sees both sides, decides who is who. A link on
motion alone is made only where motion allows no other (``sole_links``); a one-box tracklet, as
often a false positive as a person glimpsed, is never linked.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from scipy.optimize import linear_sum_assignment
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from tasks.detections import Detections
from tasks.track.appearance import BINS, clean_rows, look_distance
from tasks.track.people_tracklets import (
    SIDE_ROWS,
    TIME_EPS,
    PeopleConfig,
    Tracklet,
    build_tracklets,
    fitted_velocity,
    frame_groups,
    side_look,
    speed_cap,
)

__all__ = ["DEFAULT", "PeopleConfig", "track_people"]
DEFAULT = PeopleConfig()

F32 = npt.NDArray[np.float32]
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


def track_people(
    dets: Detections,
    frame_times: F64,
    looks: F32 | None = None,
    cfg: PeopleConfig = DEFAULT,
) -> tuple[Detections, BoolArray]:
    """Follow each person through the whole recording (the passes of the module docstring).

    Args:
        dets: the person detector's rows (normalised boxes) of sampled frames, in any order.
        frame_times: ``(F,)`` increasing time of EVERY sampled frame (index = ``frame_index``),
            frames without rows too: the tracker's clock and the frames gaps are filled on.
        looks: optional ``(N, appearance.BINS)`` colour histogram of each row
            (``appearance.box_looks``; zeros where unknown).
        cfg: the settings.

    Returns:
        The kept tracks' rows in time order (then id), ``track_ids`` 1, 2, 3 ... by first
        appearance, ``t_s`` from ``frame_times``; and which rows are ESTIMATED (filled in a gap,
        score 0). The result does not depend on the order of the input rows.

    Raises:
        ValueError: ``frame_times`` not increasing, ``frame_index`` outside it, bad ``looks``.
    """
    times = np.asarray(frame_times, dtype=np.float64).reshape(-1)
    dets, clean = _canonical(dets, times, looks)
    tracklets = build_tracklets(dets, clean, times, cfg)
    ends, starts = (_sides(tracklets, dets, clean, cfg.max_speed, end) for end in (True, False))
    linkable = np.array([len(tr.rows) >= MIN_LINK_ROWS for tr in tracklets], dtype=bool)
    links = link_tracklets(*link_costs(ends, starts, linkable, cfg), len(tracklets))
    chains = [rows for rows in chain_rows(tracklets, links) if _kept(dets, rows, times, cfg)]
    chains.sort(key=lambda rows: int(rows[0]))  # rows are in time order: first appearance
    parts = [_track(dets, rows, n, times, cfg.max_fill_s) for n, rows in enumerate(chains, 1)]
    out = Detections.concatenate([dets.select(np.zeros(0, dtype=np.int64))] + [d for d, _ in parts])
    estimated = np.concatenate([np.zeros(0, dtype=bool)] + [e for _, e in parts])
    order = np.lexsort((out.track_ids, out.frame_index))
    return out.select(order), estimated[order]


def _canonical(dets: Detections, times: F64, looks: F32 | None) -> tuple[Detections, F64]:
    """The rows sorted by frame and box (no result depends on the input's order), and their
    clean looks ``(N, BINS)``: zeros where unknown or overlapping another box of the frame."""
    if (np.diff(times) <= 0).any():
        raise ValueError("frame_times must increase")
    if len(dets) and not 0 <= dets.frame_index.min() <= dets.frame_index.max() < len(times):
        raise ValueError(f"frame_index must lie in 0..{len(times) - 1} (len(frame_times))")
    raw = np.zeros((len(dets), BINS)) if looks is None else np.asarray(looks, dtype=np.float64)
    if raw.shape != (len(dets), BINS):
        raise ValueError(f"looks must have shape ({len(dets)}, {BINS}), got {raw.shape}")
    order = np.lexsort((dets.scores, *dets.boxes.T[::-1], dets.frame_index))
    dets, raw = dets.select(order), raw[order]
    clean = np.zeros(len(dets), dtype=bool)
    for rows in frame_groups(dets).values():
        clean[rows] = clean_rows(dets.boxes[rows])
    return dets, np.where(clean[:, None], raw, 0.0)


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


def chain_rows(tracklets: list[Tracklet], links: dict[int, int]) -> list[IntArray]:
    """The rows of each chain of linked tracklets (a tracklet alone is one), in time order."""
    chains = []
    for head in sorted(set(range(len(tracklets))) - set(links.values())):
        members = [head]
        while members[-1] in links:
            members.append(links[members[-1]])
        times = np.concatenate([tracklets[m].times for m in members])
        # Links go forward in time only, so no chain is in two places at once.
        assert (np.diff(times) > 0).all(), "a chain of tracklets overlaps itself in time"
        chains.append(np.concatenate([tracklets[m].rows for m in members]).astype(np.int64))
    return chains


def _kept(dets: Detections, rows: IntArray, times: F64, cfg: PeopleConfig) -> bool:
    """Whether a chain's seen rows make a track: long enough, often enough, once confident."""
    seen = times[dets.frame_index[rows]]
    lasting = float(seen.max() - seen.min()) >= cfg.min_track_s - TIME_EPS
    confident = float(dets.scores[rows].max()) >= cfg.track_score
    return lasting and confident and len(rows) >= cfg.min_rows


def filled_rows(
    rows: IntArray, dets: Detections, times: F64, max_fill_s: float
) -> tuple[IntArray, IntArray, F64]:
    """Pass 3 for one chain: ``(source, frame, box)`` of its seen rows (``source`` = the row)
    and, in each gap of up to ``max_fill_s``, one box per sampled frame on the straight line
    between the gap's two boxes (``source`` -1: estimated)."""
    frames, boxes = dets.frame_index[rows], dets.boxes[rows].astype(np.float64)
    span = np.arange(frames[0], frames[-1] + 1)
    after = np.searchsorted(frames, span)  # the first seen frame at or after each frame
    seen = frames[after] == span
    before = np.where(seen, after, after - 1)
    t_a, t_b = times[frames[before]], times[frames[after]]
    share = ((times[span] - t_a) / np.maximum(t_b - t_a, TIME_EPS))[:, None]
    kept = seen | (t_b - t_a <= max_fill_s + TIME_EPS)
    filled = (1 - share) * boxes[before] + share * boxes[after]
    return np.where(seen, rows[before], -1)[kept], span[kept], filled[kept]


def _track(
    dets: Detections, rows: IntArray, number: int, times: F64, max_fill_s: float
) -> tuple[Detections, BoolArray]:
    """One chain as track ``number``, filled; estimated rows: score 0, no text."""
    sources, frames, boxes = filled_rows(rows, dets, times, max_fill_s)
    estimated = sources < 0
    base = dets.select(
        sources[np.maximum.accumulate(np.where(estimated, 0, np.arange(len(sources))))]
    )
    texts = base.texts.copy()
    texts[estimated] = None
    track = replace(
        base,
        boxes=boxes.astype(np.float32),
        scores=np.where(estimated, 0.0, base.scores).astype(np.float32),
        frame_index=frames,
        t_s=times[frames].astype(np.float32),
        track_ids=np.full(len(frames), number, dtype=np.int64),
        texts=texts,
    )
    return track, estimated
