"""Stage "track": the physical detector's boxes are tracked (``tasks.track.bytetrack``,
ByteTrack-style), text rows come tracked by the OCR, and motion tracks that are only a sign
appearing are dropped.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from storage.artifacts import read_table, write_table
from tasks.context import RunContext
from tasks.detect.text_tracks import explained_by_text
from tasks.detections import detections_from_table, detections_to_table
from tasks.track.bytetrack import TrackerConfig, track_detections
from ves.ids import new_id

# A thing seen for less than this is no object of the scene graph: on random scenes such
# tracks were fragments (the sliver a moving object uncovers, a blob split off at a crossing).
MIN_TRACK_S = 1.0


def track_table(table: pa.Table, physical: str) -> tuple[pa.Table, int]:
    """``tracks.parquet`` from ``detections.parquet`` (the pure core of the stage).

    The ``physical`` detector's rows are tracked; text rows come tracked by the OCR and are kept
    as they are; motion tracks that are only text appearing are dropped.
    """
    by = table.column("detector")
    dets = detections_from_table(table.filter(pc.equal(by, physical)))
    text_rows = table.filter(pc.equal(by, "ocr"))
    tracks = track_detections(dets, TrackerConfig(min_track_s=MIN_TRACK_S))
    if physical == "motion" and text_rows.num_rows:
        drop = explained_by_text(tracks, detections_from_table(text_rows))
        tracks = tracks.select(~np.isin(tracks.track_ids, drop))
    object_ids = {int(t): new_id("obj") for t in np.unique(tracks.track_ids)}
    tracked = detections_to_table(tracks, physical, object_ids)
    texts = len(set(text_rows.column("track_id").to_pylist()))
    return pa.concat_tables([tracked, text_rows]), len(object_ids) + texts


@task(name="track", cache_policy=NONE)
def track_task(ctx: RunContext, physical: str) -> int:
    """Track the detections; writes ``tracks.parquet`` with object ids; returns the track count."""
    ctx.report("track")
    out = ctx.layout.out_dir
    table = read_table(out, "detections")
    tracks, count = track_table(table, physical)
    write_table(out, "tracks", tracks)
    get_run_logger().info("%d tracks from %d boxes", count, table.num_rows)
    return count
