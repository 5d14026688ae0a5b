"""The one pyarrow schema of every Parquet artifact; writers cast to it, readers rely on it.

Times in the video are seconds (``*_s``, float64); boxes are normalised ``[x1, y1, x2, y2]``
(0..1) so they do not depend on the resolution a detector ran at. Bump ``SCHEMA_VERSION`` when
any schema changes; the manifest records it so readers can tell old runs from new ones.
"""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = 2

_BOX = pa.list_(pa.float32(), 4)
_IDS = pa.list_(pa.string())

FRAMES = pa.schema(
    [
        pa.field("sample_index", pa.int32(), nullable=False),
        pa.field("t_s", pa.float64(), nullable=False),
        pa.field("scene_score", pa.float32(), nullable=False),
        pa.field("refresh", pa.bool_(), nullable=False),
        pa.field("refresh_reason", pa.string()),  # "start" | "scene_change" where refresh
        pa.field("text_look", pa.bool_(), nullable=False),  # a full-size frame was kept for OCR
    ],
    metadata={"doc": "Every sampled frame: when, how much it differs from the one before."},
)

DETECTIONS = pa.schema(
    [
        pa.field("sample_index", pa.int32(), nullable=False),
        pa.field("t_s", pa.float64(), nullable=False),
        pa.field("bbox", _BOX, nullable=False),
        pa.field("score", pa.float32(), nullable=False),
        pa.field("class", pa.string(), nullable=False),
        pa.field("detector", pa.string(), nullable=False),
        pa.field("track_id", pa.string()),  # null until tracked; "obj_..." afterwards
        pa.field("text", pa.string()),  # what was read (detector "ocr", class "text"), else null
    ],
    metadata={"doc": "Every box every detector found, with the track it was assigned to."},
)

OBJECTS = pa.schema(
    [
        pa.field("object_id", pa.string(), nullable=False),
        pa.field("class", pa.string(), nullable=False),
        pa.field("confidence", pa.float32(), nullable=False),
        pa.field("first_seen_s", pa.float64(), nullable=False),
        pa.field("last_seen_s", pa.float64(), nullable=False),
        pa.field("zones", _IDS, nullable=False),
        pa.field("attributes", pa.string(), nullable=False),  # a JSON object
        pa.field("evidence_ids", _IDS, nullable=False),
        pa.field("detections", pa.int32(), nullable=False),
    ],
    metadata={"doc": "The scene graph's objects (text read in the video has class 'text')."},
)

ZONES = pa.schema(
    [
        pa.field("zone_id", pa.string(), nullable=False),
        pa.field("name", pa.string(), nullable=False),
        pa.field("polygon", pa.list_(pa.list_(pa.float32(), 2)), nullable=False),
    ],
    metadata={"doc": "Named zones as normalised polygons [[x, y], ...]."},
)

EVENTS = pa.schema(
    [
        pa.field("event_id", pa.string(), nullable=False),
        pa.field("type", pa.string(), nullable=False),
        pa.field("t_s", pa.float64(), nullable=False),
        pa.field("end_s", pa.float64()),  # for events that last (dwell)
        pa.field("object_id", pa.string()),
        pa.field("zone_id", pa.string()),
        pa.field("confidence", pa.float32(), nullable=False),
        pa.field("evidence_ids", _IDS, nullable=False),
    ],
    metadata={"doc": "The scene graph's events, exactly one row each."},
)

RELATIONS = pa.schema(
    [
        pa.field("subject_id", pa.string(), nullable=False),
        pa.field("predicate", pa.string(), nullable=False),
        pa.field("object_id", pa.string(), nullable=False),
        pa.field("start_s", pa.float64(), nullable=False),
        pa.field("end_s", pa.float64(), nullable=False),
    ],
    metadata={"doc": "Relations between objects and zones over time (in_zone, near ...)."},
)

TIMELINE = pa.schema(
    [
        pa.field("t_s", pa.float64(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),  # "event" | "refresh_marker"
        pa.field("event_id", pa.string()),
        pa.field("type", pa.string()),
        pa.field("object_id", pa.string()),
        pa.field("zone_id", pa.string()),
        pa.field("reason", pa.string()),
        pa.field("score", pa.float32()),
        pa.field("label", pa.string(), nullable=False),
    ],
    metadata={"doc": "Events and refresh markers in time order, with a readable label."},
)

_FRAME = pa.struct(
    [
        pa.field("t_s", pa.float64(), nullable=False),
        pa.field("bbox", _BOX),
        pa.field("thumbnail", pa.string(), nullable=False),  # path relative to the run folder
        pa.field("sha256", pa.string(), nullable=False),
    ]
)
_NOTE = pa.struct(
    [
        pa.field("note_id", pa.string(), nullable=False),
        pa.field("author", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("created_at", pa.string(), nullable=False),
    ]
)

EVIDENCE = pa.schema(
    [
        pa.field("evidence_id", pa.string(), nullable=False),
        pa.field("start_s", pa.float64(), nullable=False),
        pa.field("end_s", pa.float64(), nullable=False),
        pa.field("object_id", pa.string()),
        pa.field("event_id", pa.string()),
        pa.field("confidence", pa.float32(), nullable=False),
        pa.field("frames", pa.list_(_FRAME), nullable=False),
        pa.field("review_notes", pa.list_(_NOTE), nullable=False),
        pa.field("source_sha256", pa.string(), nullable=False),
        pa.field("sha256", pa.string(), nullable=False),  # canonical JSON of the API span
    ],
    metadata={"doc": "Evidence spans with their frames, thumbnails, hashes and review notes."},
)

ARTIFACTS: dict[str, pa.Schema] = {
    "frames": FRAMES,
    "detections": DETECTIONS,
    "tracks": DETECTIONS,  # the detections kept by tracking, with their object id
    "objects": OBJECTS,
    "zones": ZONES,
    "events": EVENTS,
    "relations": RELATIONS,
    "timeline": TIMELINE,
    "evidence": EVIDENCE,
}
