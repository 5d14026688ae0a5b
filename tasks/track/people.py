"""Offline tracking of people: tracking by detection over the whole recording.

The track stage's tracker (``tasks.track.bytetrack``) decides frame by frame, as a live run
must. Over a finished recording what comes after is known too, so people are tracked in passes:

1. TRACKLETS (``tasks.track.people_tracklets``): boxes matched to each tracklet's
   constant-velocity prediction (Hungarian on IoU, gated by colours), ByteTrack-style:
   confident boxes first, then weak ones to the tracklets left; only a confident box starts one.
2. LINKING (``tasks.track.people_links``): global assignments join tracklet ends to later
   starts across gaps, judged by motion against a walking speed, the gap, the heights and,
   where both sides were seen with no one in front, colours (``tasks.track.appearance``); solid
   tracklets first, the short bits seen where people cross only where they fit one gap.
   A gap is someone hidden in view: a side whose line leaves the picture in it is not linked.
3. SHARED BOXES WITH HINDSIGHT (``unshared``): a box lying over where another chain, unseen
   there, is known to be (between its sightings) holds both people, as pass 1's shared boxes:
   neither keeps it.
4. FILLING (``filled_rows``): short gaps get a box on every sampled frame on the straight line
   between the sightings, ESTIMATED, score 0 (the detector did not see it: a consumer that
   filters by score drops it). Longer gaps stay holes. Weak tracks are then dropped.

The rule that shapes it all: a track never jumps from one person to another. A switch puts a
person where they never were, in evidence; a track cut in two costs a count, and
re-identification (``tasks.track.identities``) can still join it. So where one box could
continue two tracklets predicted at the same place (people crossing) and colours cannot tell
them apart, both end there, and linking, which sees both sides, decides who is who.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt

from tasks.detections import Detections
from tasks.geometry import inside_share
from tasks.track.appearance import BINS, unoccluded_rows
from tasks.track.people_links import LINK_SLACK, link_all
from tasks.track.people_tracklets import (
    TIME_EPS,
    PeopleConfig,
    Tracklet,
    build_tracklets,
    frame_groups,
)

__all__ = ["DEFAULT", "LINK_SLACK", "PeopleConfig", "track_people"]
DEFAULT = PeopleConfig()

# A box holding this share of another person's known place holds part of them: more than half.
SHARED_SHARE = 0.5
F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


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
    links = link_all(tracklets, dets, clean, cfg)
    chains = unshared(chain_rows(tracklets, links), dets, times, cfg.max_fill_s)
    chains = [rows for rows in chains if _kept(dets, rows, times, cfg)]
    chains.sort(key=lambda rows: int(rows[0]))  # rows are in time order: first appearance
    parts = [_track(dets, rows, n, times, cfg.max_fill_s) for n, rows in enumerate(chains, 1)]
    out = Detections.concatenate([dets.select(np.zeros(0, dtype=np.int64))] + [d for d, _ in parts])
    estimated = np.concatenate([np.zeros(0, dtype=bool)] + [e for _, e in parts])
    order = np.lexsort((out.track_ids, out.frame_index))
    return out.select(order), estimated[order]


def _canonical(dets: Detections, times: F64, looks: F32 | None) -> tuple[Detections, F64]:
    """The rows sorted by frame and box (no result depends on the input's order), and their
    clean looks ``(N, BINS)``: zeros where unknown or hidden in part by a box standing in front
    (``appearance.unoccluded_rows``)."""
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
        clean[rows] = unoccluded_rows(dets.boxes[rows])
    return dets, np.where(clean[:, None], raw, 0.0)


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


def unshared(
    chains: list[IntArray], dets: Detections, times: F64, max_fill: float
) -> list[IntArray]:
    """The chains without their SHARED rows: a box lying over where another chain, unseen
    there, is known to be (``SHARED_SHARE`` of that chain's filled box inside it). It is pass 1's
    shared box seen with hindsight: where one person passes behind another, the detector sees
    one box for two, and pass 1, which knew only the past, gave it to the one it could follow
    (the other's tracklet had just ended). Linking shows the other was there all along, so the
    box is either of them or both: neither keeps it as a sighting, and filling bridges both."""
    row_chain = np.full(len(dets), -1, dtype=np.int64)
    for number, rows in enumerate(chains):
        row_chain[rows] = number
    groups, shared = frame_groups(dets), np.zeros(len(dets), dtype=bool)
    for number, rows in enumerate(chains):
        sources, frames, boxes = filled_rows(rows, dets, times, max_fill)
        for frame, box in zip(frames[sources < 0].tolist(), boxes[sources < 0], strict=True):
            there = groups.get(frame, np.zeros(0, dtype=np.int64))
            there = there[(row_chain[there] >= 0) & (row_chain[there] != number)]
            covers = inside_share(box[None], dets.boxes[there])[0] >= SHARED_SHARE
            shared[there[covers]] = True
    return [rows[~shared[rows]] for rows in chains if (~shared[rows]).any()]


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
