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
import pyarrow as pa
import pyarrow.compute as pc
from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from storage.artifacts.layout import read_rows, read_table, write_table
from tasks.context import RunContext
from tasks.detect.detectors.person import PERSON_CLASS, PersonConfig
from tasks.detect.text_tracks import explained_by_text
from tasks.detections import Detections, detections_from_table, detections_to_table
from tasks.sample.frames import Frame, frame_name, read_rgb
from tasks.track.appearance import detection_looks
from tasks.track.bytetrack import BoolArray, TrackerConfig
from tasks.track.classes import apply_votes, vote_classes
from tasks.track.continuity import ids_across_cuts
from tasks.track.identities import identify_tracks
from tasks.track.sequence import track_detections, tracked_boxes
from ves.ids import new_id

# A thing seen for less than this is no object of the scene graph: on random scenes such
# tracks were fragments (the sliver a moving object uncovers, a blob split off at a crossing).
MIN_TRACK_S = 1.0
# Faces are looked for only where something moves and are often seen briefly (a head turns):
# half a second of agreeing looks is a face worth reporting (and redacting).
MIN_FACE_TRACK_S = 0.5


def _rows(table: pa.Table, detector: str) -> pa.Table:
    return table.filter(pc.equal(table.column("detector"), detector))


def named_tracks(tracks: Detections, table: pa.Table, estimated: BoolArray) -> Detections:
    """Motion tracks with the class the person detector's looks agree on (unchanged without
    any person rows). Only the boxes the detector gave vote: an ``estimated`` row (a track's
    share of a merged region) is where the tracker put a thing, and the person detector looked
    at the whole region, not at it."""
    people = _rows(table, PERSON_CLASS)
    if not people.num_rows or not len(tracks):
        return tracks
    found = detections_from_table(people)
    votes = vote_classes(tracks.select(~estimated), found, PERSON_CLASS, PersonConfig().min_height)
    return apply_votes(tracks, votes)


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


def with_identities(table: pa.Table, identities: list[str] | None) -> pa.Table:
    """A ``detections``-schema table with each row's ``identity_id`` (all null when None: texts
    and faces are no appearances of a thing)."""
    values: list[str | None] = [None] * table.num_rows if identities is None else [*identities]
    return table.append_column("identity_id", pa.array(values, pa.string()))


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


def track_table(
    table: pa.Table,
    physical: str,
    frame_at: Callable[[int], Frame | None] | None = None,
    cuts_s: Sequence[float] = (),
) -> tuple[pa.Table, int]:
    """``tracks.parquet`` from ``detections.parquet`` (the pure core of the stage).

    The ``physical`` detector's rows are tracked (with each box's colours when ``frame_at``
    gives the sampled frames' pictures, see ``tasks.track.appearance``), and a track that does
    not carry on across a scene cut at ``cuts_s`` is ended there (``tasks.track.continuity``);
    text rows come tracked by the OCR and are kept as they are; motion tracks that are only
    text appearing are dropped; motion tracks are named by the person detector's looks and
    linked into identities by their looks in the same pictures; faces are tracked on their own.
    """
    dets = detections_from_table(_rows(table, physical))
    text_rows = _rows(table, "ocr")
    looks = None if frame_at is None else detection_looks(dets, frame_at).astype(np.float64)
    tracks, estimated = tracked_boxes(dets, TrackerConfig(min_track_s=MIN_TRACK_S), looks=looks)
    ids = ids_across_cuts(tracks, cuts_s, MIN_TRACK_S)
    tracks, estimated = tracks.select(ids >= 0).with_track_ids(ids[ids >= 0]), estimated[ids >= 0]
    if physical == "motion" and text_rows.num_rows:
        drop = explained_by_text(tracks, detections_from_table(text_rows))
        kept = ~np.isin(tracks.track_ids, drop)
        tracks, estimated = tracks.select(kept), estimated[kept]
    if physical == "motion":
        tracks = named_tracks(tracks, table, estimated)
    object_ids = {int(t): new_id("obj") for t in np.unique(tracks.track_ids)}
    numbers = identify_tracks(tracks, frame_at)
    identity_ids = {n: new_id("idn") for n in sorted(set(numbers.values()))}
    identities = [identity_ids[numbers[int(t)]] for t in tracks.track_ids]
    parts = [
        with_identities(detections_to_table(tracks, physical, object_ids), identities),
        with_identities(text_rows, None),
    ]
    faces = face_tracks(table)
    if faces is not None:
        parts.append(faces)
    count = sum(len(set(part.column("track_id").to_pylist())) for part in parts)
    return pa.concat_tables(parts), count


@task(name="track", cache_policy=NONE)
def track_task(ctx: RunContext, physical: str, frames_dir: str | None = None) -> int:
    """Track the detections (with the looks of the sampled frames in ``frames_dir`` when
    given); writes ``tracks.parquet`` with object ids; returns the track count."""
    ctx.report("track")
    out = ctx.layout.out_dir
    table = read_table(out, "detections")
    frame_at = None if frames_dir is None else thumbnail_reader(frames_dir)
    cuts = scene_cuts(read_rows(out, "frames"))
    tracks, count = track_table(table, physical, frame_at, cuts)
    write_table(out, "tracks", tracks)
    get_run_logger().info("%d tracks from %d boxes", count, table.num_rows)
    return count
