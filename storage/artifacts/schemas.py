"""The one pyarrow schema of every Parquet artifact; writers cast to it, readers rely on it.

Times in the video are seconds (``*_s``, float64); boxes are normalised ``[x1, y1, x2, y2]``
(0..1) so they do not depend on the resolution a detector ran at. Bump ``SCHEMA_VERSION`` when
any schema changes; the manifest records it so readers can tell old runs from new ones.

What each table and column means is declared here, once, as ``doc`` metadata (a test checks
every column has one); ``docs/artifacts.md`` is rendered from it by
``storage.artifacts.analyst_views``.
"""

from __future__ import annotations

import pyarrow as pa

from storage.artifacts.hit_schema import HITS

SCHEMA_VERSION = 7  # 3: objects.colour, objects.colour_confidence; 4: identities (tracks, objects);
# 5: frames.held, timeline.end_s and its still rows (the activity gate); 6: hits (the search);
# 7: tracks.estimated (person tracks by detection, gaps filled)

_BOX = pa.list_(pa.float32(), 4)
_IDS = pa.list_(pa.string())


def _col(name: str, type_: pa.DataType, doc: str, *, nullable: bool = True) -> pa.Field:
    """A column and what it means (kept as the field's ``doc`` metadata)."""
    return pa.field(name, type_, nullable=nullable, metadata={"doc": doc})


def doc_of(item: pa.Field | pa.Schema) -> str:
    """The ``doc`` metadata of a column or a table ("" where there is none)."""
    doc: bytes = (item.metadata or {}).get(b"doc", b"")
    return doc.decode()


FRAMES = pa.schema(
    [
        _col(
            "sample_index",
            pa.int32(),
            "Position of the frame among the sampled ones, from 0.",
            nullable=False,
        ),
        _col("t_s", pa.float64(), "When the frame is shown in the video.", nullable=False),
        _col(
            "scene_score",
            pa.float32(),
            "How different it is from the sampled frame before: 0 same, 1 another scene.",
            nullable=False,
        ),
        _col(
            "refresh",
            pa.bool_(),
            "The world state is rebuilt here (first frame, or a scene cut).",
            nullable=False,
        ),
        _col(
            "refresh_reason",
            pa.string(),
            "'start', 'scene_change' or 'chunk_start' (a chunk of a long video began without a"
            " lead-in, docs/concepts/runs.md) where refresh, else null.",
        ),
        _col("text_look", pa.bool_(), "A full-size frame was kept for OCR.", nullable=False),
        _col(
            "held",
            pa.bool_(),
            "The frame was not decoded: the activity gate judged this stretch still (its "
            "keyframes matched and its packets stayed at the stream's idle level), and the last "
            "decoded frame stands for it (docs/concepts/activity-gate.md). Null in runs made "
            "before the gate existed.",
        ),
    ],
    metadata={"doc": "Every sampled frame: when, how much it differs from the one before."},
)

DETECTIONS = pa.schema(
    [
        _col(
            "sample_index",
            pa.int32(),
            "The sampled frame it was found in (frames.sample_index).",
            nullable=False,
        ),
        _col("t_s", pa.float64(), "When that frame is shown in the video.", nullable=False),
        _col("bbox", _BOX, "Box [x1, y1, x2, y2], normalised to 0..1.", nullable=False),
        _col("score", pa.float32(), "The detector's confidence, 0..1.", nullable=False),
        _col(
            "class",
            pa.string(),
            "What was found ('person', 'car', 'motion', 'text', ...).",
            nullable=False,
        ),
        _col(
            "detector",
            pa.string(),
            "The detector plugin that found it ('motion', 'yolo', 'ocr').",
            nullable=False,
        ),
        _col(
            "track_id",
            pa.string(),
            "The object it was assigned to ('obj_...'); null until tracked.",
        ),
        _col("text", pa.string(), "What was read (detector 'ocr', class 'text'), else null."),
    ],
    metadata={"doc": "Every box every detector found, with the track it was assigned to."},
)

_IDENTITY_DOC = (
    "The identity ('idn_...') of the thing it is: the objects of one thing that left the "
    "picture and came back share it (tasks.track.identities); null for texts and faces, and in "
    "runs of schema version 3 or older."
)

# The columns of DETECTIONS, and the identity each kept box's object belongs to.
TRACKS = pa.schema(
    [
        *DETECTIONS,
        _col("identity_id", pa.string(), _IDENTITY_DOC),
        _col(
            "estimated",
            pa.bool_(),
            "The box was not seen by a detector there: a person's box filled in between two "
            "sightings of the same person (interpolated, tasks.track.people), or a thing's "
            "share of a region of change that held several (tasks.track.merges). Null in runs "
            "of schema version 6 or older.",
        ),
    ],
    metadata={
        "doc": "The detections kept by tracking, each with the object (track_id) it belongs "
        "to and that object's identity."
    },
)

OBJECTS = pa.schema(
    [
        _col(
            "object_id",
            pa.string(),
            "Id of the object ('obj_...'), unique in the run.",
            nullable=False,
        ),
        _col(
            "class",
            pa.string(),
            "What it is: 'person' or 'face' (where those detectors ran), 'motion' (moving, not "
            "named), 'text' (read in the video) or a YOLO model's class.",
            nullable=False,
        ),
        _col(
            "confidence",
            pa.float32(),
            "Mean detector score over its detections, 0..1; for a moving object named by its "
            "looks (a person), the share of its looks that agreed.",
            nullable=False,
        ),
        _col("first_seen_s", pa.float64(), "When it was first seen.", nullable=False),
        _col("last_seen_s", pa.float64(), "When it was last seen.", nullable=False),
        _col("zones", _IDS, "Ids of the zones it was ever in (zones.zone_id).", nullable=False),
        _col(
            "attributes",
            pa.string(),
            "A JSON object: zone_names, samples, and text for class 'text'; for physical "
            "objects also size (mean box area, share of the frame), speed (frame widths a "
            "second, path over time in view), heading_x (net left-right travel, frame "
            "widths: negative is to the left), starts_at_edge and ends_at_edge (its first or "
            "last box within its own width of a side or half its height of the top or bottom: "
            "it came in or went out there; false: found or lost inside the picture).",
            nullable=False,
        ),
        _col("evidence_ids", _IDS, "Its evidence span (evidence.evidence_id).", nullable=False),
        _col("detections", pa.int32(), "How many detections its track holds.", nullable=False),
        _col(
            "colour",
            pa.string(),
            "Its dominant colour, measured from its pixels over its clean looks (CIELAB, "
            "named from a fixed list: red, orange, yellow, green, blue, purple, pink, brown, "
            "white, grey, black); null for texts and where no clean look was available.",
        ),
        _col(
            "colour_confidence",
            pa.float32(),
            "How sure the colour is, 0..1: its margin over the next named colour times the "
            "share of looks that agreed; null when colour is null.",
        ),
        _col("identity_id", pa.string(), _IDENTITY_DOC),
        _col(
            "appearance",
            pa.int32(),
            "Which of its identity's appearances this object is (1 for the first in time); "
            "null where identity_id is null.",
        ),
        _col(
            "appearances",
            pa.int32(),
            "How many objects (appearances: times it came into view) its identity has; null "
            "where identity_id is null.",
        ),
    ],
    metadata={
        "doc": "The scene graph's objects (text read in the video has class 'text'); each "
        "physical object is one appearance of an identity (identity_id)."
    },
)

ZONES = pa.schema(
    [
        _col("zone_id", pa.string(), "Id of the zone, unique in the run.", nullable=False),
        _col(
            "name", pa.string(), "Its name ('left', 'center', 'right' by default).", nullable=False
        ),
        _col(
            "polygon",
            pa.list_(pa.list_(pa.float32(), 2)),
            "Its outline [[x, y], ...], normalised to 0..1.",
            nullable=False,
        ),
    ],
    metadata={"doc": "Named zones as normalised polygons [[x, y], ...]."},
)

EVENTS = pa.schema(
    [
        _col(
            "event_id",
            pa.string(),
            "Id of the event ('evt_...'), unique in the run.",
            nullable=False,
        ),
        _col(
            "type",
            pa.string(),
            "appear, disappear, enter_zone, exit_zone, dwell, text_seen or scene_change.",
            nullable=False,
        ),
        _col(
            "t_s", pa.float64(), "When it happened (started, for events that last).", nullable=False
        ),
        _col(
            "end_s",
            pa.float64(),
            "When it ended, for events that last (dwell, text_seen); else null.",
        ),
        _col("object_id", pa.string(), "The object it is about (objects.object_id), if any."),
        _col("zone_id", pa.string(), "The zone it is about (zones.zone_id), if any."),
        _col("confidence", pa.float32(), "How sure the service is of it, 0..1.", nullable=False),
        _col(
            "evidence_ids",
            _IDS,
            "The evidence span backing it (evidence.evidence_id).",
            nullable=False,
        ),
    ],
    metadata={"doc": "The scene graph's events, exactly one row each."},
)

RELATIONS = pa.schema(
    [
        _col(
            "subject_id",
            pa.string(),
            "The object the relation is about (objects.object_id).",
            nullable=False,
        ),
        _col(
            "predicate",
            pa.string(),
            "'in_zone', 'near' or 'part_of' (a face and the person it belongs to).",
            nullable=False,
        ),
        _col(
            "object_id",
            pa.string(),
            "The zone (in_zone), the other object (near) or the whole (part_of: the person).",
            nullable=False,
        ),
        _col("start_s", pa.float64(), "When the relation starts to hold.", nullable=False),
        _col("end_s", pa.float64(), "When it stops holding.", nullable=False),
    ],
    metadata={"doc": "Relations between objects and zones over time (in_zone, near, part_of)."},
)

TIMELINE = pa.schema(
    [
        _col("t_s", pa.float64(), "When, in the video.", nullable=False),
        _col(
            "kind",
            pa.string(),
            "'event', 'refresh_marker' or 'still' (a stretch the activity gate judged still and"
            " did not decode: nothing happens there).",
            nullable=False,
        ),
        _col("event_id", pa.string(), "The event (events.event_id); null for a refresh marker."),
        _col("type", pa.string(), "The event's type; null for a refresh marker."),
        _col("object_id", pa.string(), "The event's object, if any."),
        _col("zone_id", pa.string(), "The event's zone, if any."),
        _col(
            "reason",
            pa.string(),
            "Why the world state was rebuilt ('start', 'scene_change'); markers only.",
        ),
        _col("score", pa.float32(), "The event's confidence, or the marker's scene score."),
        _col("label", pa.string(), "A readable one-line description.", nullable=False),
        _col(
            "end_s",
            pa.float64(),
            "Where a still stretch ends; null for events and markers (an event's end is in "
            "events.end_s). Null in runs made before the activity gate existed.",
        ),
    ],
    metadata={
        "doc": "Events, refresh markers and still stretches in time order, with a readable label."
    },
)

_FRAME = pa.struct(
    [
        _col("t_s", pa.float64(), "When the frame is shown in the video.", nullable=False),
        _col("bbox", _BOX, "The box drawn on the thumbnail, normalised; null where none is."),
        _col(
            "thumbnail",
            pa.string(),
            "Path of the JPEG thumbnail, relative to the run folder.",
            nullable=False,
        ),
        _col("sha256", pa.string(), "SHA-256 of the thumbnail file.", nullable=False),
    ]
)
_NOTE = pa.struct(
    [
        _col("note_id", pa.string(), "Id of the note ('note_...').", nullable=False),
        _col(
            "author",
            pa.string(),
            "Who wrote it ('system' for the service's own notes).",
            nullable=False,
        ),
        _col("text", pa.string(), "The note, e.g. why to review the span.", nullable=False),
        _col("created_at", pa.string(), "When it was written (RFC 3339, UTC).", nullable=False),
    ]
)

EVIDENCE = pa.schema(
    [
        _col("evidence_id", pa.string(), "Id of the span, unique in the run.", nullable=False),
        _col("start_s", pa.float64(), "Where the span starts in the video.", nullable=False),
        _col("end_s", pa.float64(), "Where it ends.", nullable=False),
        _col(
            "object_id",
            pa.string(),
            "The object it backs (objects.object_id); null for an event's span.",
        ),
        _col(
            "event_id",
            pa.string(),
            "The event it backs (events.event_id); null for an object's span.",
        ),
        _col("confidence", pa.float32(), "The confidence of what it backs, 0..1.", nullable=False),
        _col(
            "frames", pa.list_(_FRAME), "The frames that show it, with thumbnails.", nullable=False
        ),
        _col(
            "review_notes",
            pa.list_(_NOTE),
            "Notes for a reviewer (low confidence, fallback ...).",
            nullable=False,
        ),
        _col(
            "source_sha256",
            pa.string(),
            "SHA-256 of the source video the run read.",
            nullable=False,
        ),
        _col(
            "sha256",
            pa.string(),
            "SHA-256 of the span's canonical JSON, as the API answers it.",
            nullable=False,
        ),
    ],
    metadata={"doc": "Evidence spans with their frames, thumbnails, hashes and review notes."},
)

ARTIFACTS: dict[str, pa.Schema] = {
    "frames": FRAMES,
    "detections": DETECTIONS,
    "tracks": TRACKS,
    "objects": OBJECTS,
    "zones": ZONES,
    "events": EVENTS,
    "relations": RELATIONS,
    "timeline": TIMELINE,
    "evidence": EVIDENCE,
    "hits": HITS,
}
