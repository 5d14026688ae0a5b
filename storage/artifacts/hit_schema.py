"""The schema of ``hits.parquet``: what the workspace search reads, one row per thing found.

Kept apart from ``schemas`` (which registers it) so the table of artifacts stays readable; how the
rows are made from a run's objects, events, zones and evidence is ``storage.artifacts.hits``.
"""

from __future__ import annotations

import pyarrow as pa

_IDS = pa.list_(pa.string())

_COLUMNS: list[tuple[str, pa.DataType, bool, str]] = [
    ("hit_id", pa.string(), False, "The object's or the event's id: unique in the run."),
    (
        "kind",
        pa.string(),
        False,
        "'object' (a physical object), 'text' (a text read in the video) or 'event'.",
    ),
    ("event_type", pa.string(), True, "The event's type (events.type); null for objects."),
    ("object_id", pa.string(), True, "The object (objects.object_id); null for a scene change."),
    ("event_id", pa.string(), True, "The event (events.event_id); null for objects."),
    (
        "class",
        pa.string(),
        True,
        "The object's class (objects.class), for an event that of its object; null for a "
        "scene change.",
    ),
    (
        "identity_id",
        pa.string(),
        True,
        "The object's identity (objects.identity_id: the same thing seen again is one "
        "identity); null for texts, scene changes and runs before identities.",
    ),
    ("text", pa.string(), True, "What was read, for texts and their text_seen events."),
    (
        "text_norm",
        pa.string(),
        True,
        "The text case-folded with every space removed: what text searches compare.",
    ),
    (
        "zones",
        pa.list_(pa.string()),
        False,
        "Names of the zones: every zone an object was ever in; an event's own zone.",
    ),
    ("confidence", pa.float32(), False, "The object's or the event's confidence, 0..1."),
    ("start_s", pa.float64(), False, "Where it starts in the video (first seen, event time)."),
    ("end_s", pa.float64(), False, "Where it ends (last seen; an instant event ends at start_s)."),
    ("evidence_ids", _IDS, False, "The evidence spans backing it (evidence.evidence_id)."),
    (
        "thumbnail",
        pa.string(),
        True,
        "The first frame's thumbnail of its first span, relative to the run folder.",
    ),
]

HITS = pa.schema(
    [pa.field(name, t, nullable, metadata={"doc": doc}) for name, t, nullable, doc in _COLUMNS],
    metadata={
        "doc": "What the workspace search finds, one row per object, text and event, each with "
        "its class, text, zones, time span, evidence and thumbnail (derived from objects, "
        "events, zones and evidence when the run is written)."
    },
)
