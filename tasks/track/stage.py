"""Stage "track": the physical detector's boxes are tracked (``tasks.track.bytetrack``,
ByteTrack-style), text rows come tracked by the OCR, and motion tracks that are only a sign
appearing are dropped. Where the ``person`` detector ran, each motion track takes the class its
looks agree on (``tasks.track.classes``); faces are tracked as objects of their own. Each
physical track is an appearance of an identity (``tasks.track.identities``): the tracks of one
thing that left and came back share one ``identity_id``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from storage.artifacts.layout import read_rows, read_table, write_table
from tasks.context import RunContext
from tasks.detect.detectors.person import PERSON_CLASS
from tasks.detect.text_tracks import explained_by_text
from tasks.detections import Detections, detections_from_table, detections_to_table
from tasks.geometry import INSIDE, inside_share
from tasks.sample.frames import Frame, frame_name, read_rgb
from tasks.track.appearance import detection_looks
from tasks.track.bytetrack import BoolArray, TrackerConfig
from tasks.track.classes import MIN_SHARE, join_classes
from tasks.track.continuity import ids_across_cuts
from tasks.track.identities import identify_tracks
from tasks.track.people import track_people
from tasks.track.sequence import track_detections, tracked_boxes
from ves.ids import new_id

F64 = npt.NDArray[np.float64]
FrameAt = Callable[[int], Frame | None] | None

# A thing seen for less than this is no object of the scene graph: on random scenes such
# tracks were fragments (the sliver a moving object uncovers, a blob split off at a crossing).
MIN_TRACK_S = 1.0
# Faces are looked for only where something moves and are often seen briefly (a head turns):
# half a second of agreeing looks is a face worth reporting (and redacting).
MIN_FACE_TRACK_S = 0.5


def _rows(table: pa.Table, detector: str) -> pa.Table:
    return table.filter(pc.equal(table.column("detector"), detector))


def held_rows(tracks: Detections, people: Detections) -> BoolArray:
    """Per row of the motion ``tracks``: whether a person of its frame and the region are one
    thing's boxes. Either lies mostly inside the other: the person's box inside the region (the
    region is the person and what moved with them) or the region inside the person's box (the
    part of the person that changed: a top half moving over a backdrop the colour of their
    legs, swinging arms; the network's box is the whole person, head to feet)."""
    holds = np.zeros(len(tracks), bool)
    for index in np.intersect1d(tracks.frame_index, people.frame_index):
        rows = np.flatnonzero(tracks.frame_index == index)
        found = people.boxes[people.frame_index == index]
        person_inside = inside_share(found, tracks.boxes[rows]) >= INSIDE
        region_inside = inside_share(tracks.boxes[rows], found).T >= INSIDE
        holds[rows] = (person_inside | region_inside).any(axis=0)
    return holds


def without_people(tracks: Detections, estimated: BoolArray, people: Detections) -> BoolArray:
    """Which rows of the motion ``tracks`` to keep: a motion track most of whose seen rows hold
    a tracked person (``held_rows``) was that person's region, and the person track is the
    object; regions that held nobody stay ``motion`` objects (a cart, a door, a vehicle)."""
    keep = np.ones(len(tracks), bool)
    if not len(people) or not len(tracks):
        return keep
    holds = held_rows(tracks, people)
    for track_id in np.unique(tracks.track_ids):
        rows = (tracks.track_ids == track_id) & ~estimated
        if rows.any() and holds[rows].mean() >= MIN_SHARE:
            keep[tracks.track_ids == track_id] = False
    return keep


def face_tracks(table: pa.Table) -> pa.Table | None:
    """The faces found, tracked into objects of class ``face`` (None without face rows)."""
    faces = _rows(table, "face")
    if not faces.num_rows:
        return None
    tracked = track_detections(
        detections_from_table(faces), TrackerConfig(min_track_s=MIN_FACE_TRACK_S)
    )
    ids = {int(t): new_id("obj") for t in np.unique(tracked.track_ids)}
    return with_identities(detections_to_table(tracked, "face", ids), None)


def with_identities(
    table: pa.Table, identities: list[str] | None, estimated: BoolArray | None = None
) -> pa.Table:
    """A ``detections``-schema table with each row's ``identity_id`` (all null when None: texts
    and faces are no appearances of a thing) and whether its box is ``estimated``."""
    values: list[str | None] = [None] * table.num_rows if identities is None else [*identities]
    table = table.append_column("identity_id", pa.array(values, pa.string()))
    flags = np.zeros(table.num_rows, bool) if estimated is None else estimated
    return table.append_column("estimated", pa.array(flags, pa.bool_()))


def thumbnail_reader(frames_dir: str | Path) -> Callable[[int], Frame | None]:
    """The sampled frame ``i``'s thumbnail (RGB) from the sample stage's folder, None when it
    is not there. Thumbnails, not the analysis frames: chunked and live runs join thumbnails
    only, and identities must not depend on how a video was cut."""

    def read(index: int) -> Frame | None:
        path = Path(frames_dir) / frame_name(index)
        return read_rgb(path) if path.exists() else None

    return read


# A scene cut scoring at least this is another place for certain (tasks.sample.scene_score:
# cuts of random scenes score 0.46 to 1.0); under it, down to the sample stage's threshold, it
# may be the same place in a new look (an infrared switch scored 0.31 and 0.34), and the
# tracker's word stands there.
CERTAIN_CUT_SCORE = 0.45


def scene_cuts(frames: Sequence[Mapping[str, Any]]) -> list[float]:
    """Times of the sampled frames that follow a certain scene cut (``refresh_reason``
    'scene_change' scoring at least ``CERTAIN_CUT_SCORE``; a chunk's start is no cut)."""
    return [
        float(row["t_s"])
        for row in frames
        if row["refresh_reason"] == "scene_change" and row["scene_score"] >= CERTAIN_CUT_SCORE
    ]


def _kept(
    tracks: Detections, estimated: BoolArray, keep: npt.NDArray[np.bool_]
) -> tuple[Detections, BoolArray]:
    return tracks.select(keep), estimated[keep]


def _ended_at_cuts(
    tracks: Detections, estimated: BoolArray, cuts_s: Sequence[float]
) -> tuple[Detections, BoolArray]:
    """Tracks that do not carry on across a certain cut at ``cuts_s`` split there
    (``tasks.track.continuity``), parts too short to be objects dropped."""
    ids = ids_across_cuts(tracks, cuts_s, MIN_TRACK_S)
    return tracks.select(ids >= 0).with_track_ids(ids[ids >= 0]), estimated[ids >= 0]


def _not_text(
    tracks: Detections, estimated: BoolArray, table: pa.Table
) -> tuple[Detections, BoolArray]:
    """Without the tracks that are text: a sign appearing is change to motion, and a sign's
    letters can look like a standing figure to the person network; where the OCR read text in
    the box on most of its frames, the text object tells the story."""
    text_rows = _rows(table, "ocr")
    if not text_rows.num_rows:
        return tracks, estimated
    drop = explained_by_text(tracks, detections_from_table(text_rows))
    return _kept(tracks, estimated, ~np.isin(tracks.track_ids, drop))


def looks_by_detector(
    table: pa.Table, names: Sequence[str], frame_at: FrameAt
) -> dict[str, F64 | None]:
    """The look of every row of each detector of ``names``, in the order of its rows, read in
    ONE pass over the sampled pictures (each thumbnail decoded once, not once per detector)."""
    if frame_at is None:
        return dict.fromkeys(names)
    detector = np.asarray(table.column("detector").to_pylist(), dtype=object)
    wanted = np.isin(detector, list(names))
    looks = detection_looks(detections_from_table(table.filter(wanted)), frame_at)
    return {name: looks[detector[wanted] == name].astype(np.float64) for name in names}


def motion_tracks(
    table: pa.Table, physical: str, looks: F64 | None, cuts_s: Sequence[float]
) -> tuple[Detections, BoolArray]:
    """The ``physical`` detector's rows tracked (regions of change, or a YOLO model's boxes),
    ended at certain cuts; motion tracks that are only text appearing are dropped."""
    dets = detections_from_table(_rows(table, physical))
    tracked = tracked_boxes(dets, TrackerConfig(min_track_s=MIN_TRACK_S), looks=looks)
    tracks, estimated = _ended_at_cuts(*tracked, cuts_s)
    return _not_text(tracks, estimated, table) if physical == "motion" else (tracks, estimated)


def people_tracks(
    table: pa.Table, looks: F64 | None, cuts_s: Sequence[float], frame_times: F64
) -> tuple[Detections, BoolArray]:
    """The person detector's boxes tracked by detection over the whole recording
    (``tasks.track.people``), ended at certain cuts, signs read as text dropped."""
    dets = detections_from_table(_rows(table, PERSON_CLASS))
    tracked = track_people(dets, frame_times, None if looks is None else looks.astype(np.float32))
    return _not_text(*_ended_at_cuts(*tracked, cuts_s), table)


def _physical_parts(
    table: pa.Table, physical: str, frame_at: FrameAt, cuts_s: Sequence[float], frame_times: F64
) -> list[tuple[str, Detections, BoolArray]]:
    """``(detector, tracks, estimated)`` of every kind of physical object: the physical
    detector's tracks and, where the person detector ran with ``motion``, the person tracks
    (the motion tracks that were only people's regions of change dropped)."""
    with_people = physical == "motion" and _rows(table, PERSON_CLASS).num_rows > 0
    names = (physical, PERSON_CLASS) if with_people else (physical,)
    looks = looks_by_detector(table, names, frame_at)
    tracks, estimated = motion_tracks(table, physical, looks[physical], cuts_s)
    if not with_people:
        return [(physical, tracks, estimated)]
    people = people_tracks(table, looks[PERSON_CLASS], cuts_s, frame_times)
    return [
        (physical, *_kept(tracks, estimated, without_people(tracks, estimated, people[0]))),
        (PERSON_CLASS, *people),
    ]


def _identified(
    parts: list[tuple[str, Detections, BoolArray]], frame_at: FrameAt
) -> list[pa.Table]:
    """Each part as a ``tracks`` table with object ids and identities (one numbering over all
    parts, so a person and a moving thing are never one identity's tracks by accident)."""
    offset, renumbered = 0, []
    for _, tracks, _ in parts:
        renumbered.append(tracks.with_track_ids(tracks.track_ids + offset))
        offset += int(tracks.track_ids.max(initial=0))
    joined = join_classes(renumbered)
    numbers = identify_tracks(joined, frame_at)
    identity_ids = {n: new_id("idn") for n in sorted(set(numbers.values()))}
    out = []
    for (detector, _, estimated), tracks in zip(parts, renumbered, strict=True):
        object_ids = {int(t): new_id("obj") for t in np.unique(tracks.track_ids)}
        identities = [identity_ids[numbers[int(t)]] for t in tracks.track_ids]
        table = detections_to_table(tracks, detector, object_ids)
        out.append(with_identities(table, identities, estimated))
    return out


def track_table(
    table: pa.Table,
    physical: str,
    frame_at: FrameAt = None,
    cuts_s: Sequence[float] = (),
    frame_times: F64 | None = None,
) -> tuple[pa.Table, int]:
    """``tracks.parquet`` from ``detections.parquet`` (the pure core of the stage).

    The ``physical`` detector's rows are tracked (with each box's colours when ``frame_at``
    gives the sampled frames' pictures, see ``tasks.track.appearance``), and a track that does
    not carry on across a scene cut at ``cuts_s`` is ended there (``tasks.track.continuity``);
    where the person detector ran, its boxes are tracked by detection over the whole recording
    (``tasks.track.people``, gaps filled on the sampled frames of ``frame_times``) and the
    motion tracks that were only those people's regions are dropped; text rows come tracked by
    the OCR and are kept as they are; motion tracks that are only text appearing are dropped;
    physical tracks are linked into identities by their looks; faces are tracked on their own.
    """
    if frame_times is None:
        frame_times = np.unique(table.column("t_s").to_numpy()).astype(np.float64)
    parts = _physical_parts(table, physical, frame_at, cuts_s, frame_times)
    tables = _identified(parts, frame_at)
    tables.append(with_identities(_rows(table, "ocr"), None))
    faces = face_tracks(table)
    if faces is not None:
        tables.append(faces)
    count = sum(len(set(part.column("track_id").to_pylist())) for part in tables)
    return pa.concat_tables(tables), count


@task(name="track", cache_policy=NONE)
def track_task(ctx: RunContext, physical: str, frames_dir: str | None = None) -> int:
    """Track the detections (with the looks of the sampled frames in ``frames_dir`` when
    given); writes ``tracks.parquet`` with object ids; returns the track count."""
    ctx.report("track")
    out = ctx.layout.out_dir
    table = read_table(out, "detections")
    frame_at = None if frames_dir is None else thumbnail_reader(frames_dir)
    frames = read_rows(out, "frames")
    times = np.asarray([row["t_s"] for row in sorted(frames, key=lambda r: r["sample_index"])])
    tracks, count = track_table(table, physical, frame_at, scene_cuts(frames), times)
    write_table(out, "tracks", tracks)
    get_run_logger().info("%d tracks from %d boxes", count, table.num_rows)
    return count
