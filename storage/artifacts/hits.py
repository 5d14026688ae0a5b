"""A run's hits: what the workspace search finds in it, derived once from its scene graph.

Every object (``kind`` 'object', or 'text' for a text read in the video) and every event becomes
one row carrying what a search filters on and what a hit shows: class, text, zone names, time
span, confidence, the evidence spans that back it and one thumbnail. The rows are written beside
the other artifacts as ``hits.parquet`` when a run is written (``write_hits``), so a search over a
thousand videos reads one small file per run, not four. Runs written before the file existed are
derived the same way on the fly (``read_hits``).

``summarize`` gives the catalog's search index what it prunes runs on before any file is read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from storage.artifacts.blobs import BlobStore
from storage.artifacts.layout import artifact_path, read_manifest, to_table, write_table
from storage.artifacts.schemas import ARTIFACTS

SOURCES = ("objects", "events", "zones", "evidence")
Rows = list[dict[str, Any]]


def normalize_text(text: str) -> str:
    """A text as searches compare it: case-folded, with every space removed ("Gate 7" and
    "GATE7" are the same)."""
    return "".join(text.split()).casefold()


def _thumbnails(evidence: Rows) -> dict[str, str]:
    """Each span's first frame's thumbnail, by evidence id."""
    return {
        span["evidence_id"]: span["frames"][0]["thumbnail"] for span in evidence if span["frames"]
    }


def _object_row(obj: dict[str, Any], zone_names: dict[str, str]) -> dict[str, Any]:
    text = json.loads(obj["attributes"] or "{}").get("text") if obj["class"] == "text" else None
    return {
        "hit_id": obj["object_id"],
        "kind": "text" if obj["class"] == "text" else "object",
        "event_type": None,
        "object_id": obj["object_id"],
        "event_id": None,
        "class": obj["class"],
        "identity_id": obj.get("identity_id"),
        "text": text,
        "text_norm": normalize_text(text) if text else None,
        "zones": sorted({zone_names.get(z, z) for z in obj["zones"] or ()}),
        "confidence": obj["confidence"],
        "start_s": obj["first_seen_s"],
        "end_s": obj["last_seen_s"],
        "evidence_ids": list(obj["evidence_ids"] or ()),
    }


def _event_row(
    event: dict[str, Any], objects: dict[str, dict[str, Any]], zone_names: dict[str, str]
) -> dict[str, Any]:
    obj = objects.get(event["object_id"] or "")
    text = obj["text"] if obj is not None else None
    zone = event["zone_id"]
    return {
        "hit_id": event["event_id"],
        "kind": "event",
        "event_type": event["type"],
        "object_id": event["object_id"],
        "event_id": event["event_id"],
        "class": obj["class"] if obj is not None else None,
        "identity_id": obj["identity_id"] if obj is not None else None,
        "text": text,
        "text_norm": normalize_text(text) if text else None,
        "zones": [zone_names.get(zone, zone)] if zone else [],
        "confidence": event["confidence"],
        "start_s": event["t_s"],
        "end_s": event["end_s"] if event["end_s"] is not None else event["t_s"],
        "evidence_ids": list(event["evidence_ids"] or ()),
    }


def derive_hits(tables: dict[str, pa.Table]) -> pa.Table:
    """The hits of one run from its ``objects``, ``events``, ``zones`` and ``evidence`` (any of
    them may be missing: a run that saw nothing has no hits)."""
    rows = {name: tables[name].to_pylist() if name in tables else [] for name in SOURCES}
    zone_names = {z["zone_id"]: z["name"] for z in rows["zones"]}
    thumbs = _thumbnails(rows["evidence"])
    objects = [_object_row(o, zone_names) for o in rows["objects"]]
    by_id = {o["object_id"]: o for o in objects}
    events = [_event_row(e, by_id, zone_names) for e in rows["events"]]
    hits = objects + events
    for hit in hits:
        hit["thumbnail"] = next((thumbs[e] for e in hit["evidence_ids"] if e in thumbs), None)
    return to_table("hits", hits)


def write_hits(out_dir: Path) -> Path:
    """Derive ``hits.parquet`` from the run's tables in ``out_dir`` (after the evidence stage)."""
    tables = {
        name: pq.read_table(artifact_path(out_dir, name))
        for name in SOURCES
        if artifact_path(out_dir, name).exists()
    }
    return write_table(out_dir, "hits", derive_hits(tables))


def holds_hits(store: BlobStore, key: str) -> bool:
    """Whether the published run at ``key`` was written with its ``hits.parquet``."""
    return any(f["name"] == "hits.parquet" for f in read_manifest(store, key)["files"])


def read_hits(store: BlobStore, key: str) -> pa.Table:
    """The hits of the published run at ``key``: its file, or derived from its tables for a run
    written before the file existed."""
    names = {f["name"] for f in read_manifest(store, key)["files"]}
    if "hits.parquet" in names:
        return store.read_parquet(f"{key}/hits.parquet").cast(ARTIFACTS["hits"])
    tables = {
        n: store.read_parquet(f"{key}/{n}.parquet") for n in SOURCES if f"{n}.parquet" in names
    }
    return derive_hits(tables)


@dataclass(frozen=True)
class HitSummary:
    """What a run holds, for pruning runs before their files are read: sets of classes, event
    types, zone names and normalised texts, how many hits, and the highest confidence of each
    kind and class of hit (so a search by relevance reads the runs that can rank first)."""

    classes: frozenset[str]
    event_types: frozenset[str]
    zones: frozenset[str]
    texts: frozenset[str]
    hits: int
    has_file: bool
    last_s: float | None = None  # the latest end of a hit (None: no hits, or not known)
    longest_dwell_s: float | None = None  # the longest dwell event (None: none, or not known)
    # The highest confidence by ``top_key(kind, class)`` (None: not known, indexed before 0019).
    top_confidence: dict[str, float] | None = None

    def as_columns(self) -> dict[str, Any]:
        """The catalog's columns: each set as its sorted members between newlines (so a member
        is searched as ``\\n<member>\\n``)."""
        return {
            "classes": _joined(self.classes),
            "event_types": _joined(self.event_types),
            "zones": _joined(self.zones),
            "texts": _joined(self.texts),
            "hits": self.hits,
            "has_file": 1 if self.has_file else 0,
            "last_s": self.last_s,
            "longest_dwell_s": self.longest_dwell_s,
            "top_confidence": (
                None if self.top_confidence is None else json.dumps(self.top_confidence)
            ),
        }

    @classmethod
    def from_columns(cls, row: Any) -> HitSummary:
        return cls(
            classes=_split(row.classes),
            event_types=_split(row.event_types),
            zones=_split(row.zones),
            texts=_split(row.texts),
            hits=int(row.hits),
            has_file=bool(row.has_file),
            last_s=row.last_s,
            longest_dwell_s=row.longest_dwell_s,
            top_confidence=None if row.top_confidence is None else json.loads(row.top_confidence),
        )


def top_key(kind: str, hit_class: str | None) -> str:
    """The key of ``HitSummary.top_confidence`` for hits of one kind and class."""
    return f"{kind}\t{hit_class or ''}"


def tops(hits: pa.Table) -> dict[str, float]:
    """The highest confidence of each kind and class of hit in ``hits``."""
    best: dict[str, float] = {}
    columns = hits.select(["kind", "class", "confidence"]).to_pydict()
    for kind, hit_class, confidence in zip(*columns.values(), strict=True):
        key = top_key(kind, hit_class)
        best[key] = max(confidence, best.get(key, confidence))
    return best


def _joined(members: frozenset[str]) -> str:
    return "\n" + "\n".join(sorted(members)) + "\n" if members else "\n"


def _split(text: str) -> frozenset[str]:
    return frozenset(text.split("\n")[1:-1])  # as ``_joined`` wrote it: "\n" or "\na\nb\n"


def summarize(hits: pa.Table, *, has_file: bool) -> HitSummary:
    """The summary the catalog keeps of a run's hits."""
    columns = hits.select(["class", "event_type", "zones", "text_norm"]).to_pydict()
    spans = hits.select(["event_type", "start_s", "end_s"]).to_pylist()
    dwells = [h["end_s"] - h["start_s"] for h in spans if h["event_type"] == "dwell"]
    return HitSummary(
        classes=frozenset(c for c in columns["class"] if c),
        event_types=frozenset(t for t in columns["event_type"] if t),
        zones=frozenset(z for zones in columns["zones"] for z in zones or ()),
        texts=frozenset(t for t in columns["text_norm"] if t),
        hits=hits.num_rows,
        has_file=has_file,
        last_s=max((h["end_s"] for h in spans), default=None),
        longest_dwell_s=max(dwells, default=None),
        top_confidence=tops(hits),
    )
