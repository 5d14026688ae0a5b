"""Workspaces of published runs made without processing video: known objects, texts and events,
written as a run writes them (its tables, ``hits.parquet``, a manifest, published to the blob
store) and recorded in the catalog as a succeeded run of a registered video.

The search tests plant what they must find; ``benchmarks/search.py`` plants thousands of runs of
realistic size (``realistic_run``).
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlalchemy import Connection

from storage.artifacts.blobs import BlobStore
from storage.artifacts.hits import HitSummary, derive_hits, summarize
from storage.artifacts.layout import RunLayout, publish, to_table, write_table
from storage.catalog import tables
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from storage.catalog.search_index import index_published
from storage.catalog.usage import ALL, add, month_of
from storage.catalog.videos import NewVideo, VideoStore
from ves.clock import now_rfc3339
from ves.ids import new_id

Rows = list[dict[str, Any]]
PROCESSED_S = 60.0  # what a planted run counts as processed
ZONES: Rows = [
    {"zone_id": "zone_left", "name": "left", "polygon": [[0, 0], [0.33, 0], [0.33, 1], [0, 1]]},
    {"zone_id": "zone_center", "name": "center", "polygon": [[0.33, 0], [0.67, 0], [0.67, 1]]},
    {"zone_id": "zone_right", "name": "right", "polygon": [[0.67, 0], [1, 0], [1, 1], [0.67, 1]]},
]


@dataclass
class PlantedRun:
    """A run's scene graph as rows; ``thing``/``text``/``event`` add rows with their spans."""

    objects: Rows = field(default_factory=list)
    events: Rows = field(default_factory=list)
    evidence: Rows = field(default_factory=list)

    def _span(self, start_s: float, end_s: float, **backs: str | None) -> str:
        evidence_id = f"ev_{len(self.evidence) + 1:04d}"
        frame = {
            "t_s": start_s,
            "bbox": None,
            "thumbnail": f"thumbs/{evidence_id}.jpg",
            "sha256": "0" * 64,
        }
        self.evidence.append(
            {
                "evidence_id": evidence_id,
                "start_s": start_s,
                "end_s": end_s,
                "object_id": backs.get("object_id"),
                "event_id": backs.get("event_id"),
                "confidence": 0.9,
                "frames": [frame],
                "review_notes": [],
                "source_sha256": "0" * 64,
                "sha256": "0" * 64,
            }
        )
        return evidence_id

    def thing(
        self,
        cls: str,
        first_s: float,
        last_s: float,
        *,
        zones: tuple[str, ...] = (),
        text: str | None = None,
        confidence: float = 0.8,
        identity: str | None = None,
    ) -> str:
        """An object (class ``text`` with ``text`` for a text read) and its appear/disappear
        events; returns its id."""
        object_id = f"obj_{len(self.objects) + 1:04d}"
        attributes = {"zone_names": [z.removeprefix("zone_") for z in zones], "samples": 5}
        self.objects.append(
            {
                "object_id": object_id,
                "class": cls,
                "confidence": confidence,
                "first_seen_s": first_s,
                "last_seen_s": last_s,
                "zones": list(zones),
                "attributes": json.dumps(attributes | ({"text": text} if text else {})),
                "evidence_ids": [self._span(first_s, last_s, object_id=object_id)],
                "detections": 5,
                "identity_id": identity,
            }
        )
        if cls == "text":
            self.event("text_seen", first_s, last_s, object_id=object_id)
        else:
            self.event("appear", first_s, None, object_id=object_id)
            self.event("disappear", last_s, None, object_id=object_id)
        return object_id

    def event(
        self,
        kind: str,
        t_s: float,
        end_s: float | None,
        *,
        object_id: str | None = None,
        zone_id: str | None = None,
    ) -> str:
        event_id = f"evt_{len(self.events) + 1:04d}"
        span = self._span(t_s, end_s if end_s is not None else t_s, event_id=event_id)
        self.events.append(
            {
                "event_id": event_id,
                "type": kind,
                "t_s": t_s,
                "end_s": end_s,
                "object_id": object_id,
                "zone_id": zone_id,
                "confidence": 0.85,
                "evidence_ids": [span],
            }
        )
        return event_id


def plant_run(
    catalog: Catalog,
    store: BlobStore,
    tenant_id: str,
    run: PlantedRun,
    *,
    title: str = "clip",
    recorded_at: str | None = None,
    video_id: str | None = None,
    with_hits: bool = True,
) -> tuple[str, str]:
    """Publish ``run`` as a succeeded run of a new video (or another run of ``video_id``);
    ``with_hits=False`` writes it as runs were written before ``hits.parquet``. Returns the
    video and run ids."""
    if video_id is None:
        new = NewVideo(
            tenant_id, title, "url", "https://media.example.com/a.mp4", None, recorded_at
        )
        video_id = VideoStore(catalog).create(new).video_id
    runs = RunStore(catalog)
    record = runs.create(tenant_id, video_id, {})
    assert runs.start(record.run_id)
    with tempfile.TemporaryDirectory() as work:
        layout = RunLayout(Path(work), tenant_id, video_id, record.run_id)
        write_planted(layout.out_dir, run, with_hits=with_hits)
        key = publish(layout, store)
    assert runs.succeed(record.run_id, key, processed_s=PROCESSED_S, artifacts_bytes=1)
    if with_hits:  # as the flow does once the run succeeded; older runs are indexed when met
        index_published(catalog, store, tenant_id, video_id, record.run_id, key)
    return video_id, record.run_id


def write_planted(out_dir: Path, run: PlantedRun, *, with_hits: bool = True) -> pa.Table:
    """Write ``run``'s tables (and its ``hits.parquet``) into a fresh ``out_dir``, as the
    pipeline's stages do; returns its hits (derived even when not written)."""
    out_dir.mkdir(parents=True)
    tables = {
        "objects": to_table("objects", run.objects),
        "events": to_table("events", run.events),
        "zones": to_table("zones", ZONES),
        "evidence": to_table("evidence", run.evidence),
    }
    for name, table in tables.items():
        write_table(out_dir, name, table)
    hits = derive_hits(tables)
    if with_hits:
        write_table(out_dir, "hits", hits)
    return hits


@dataclass(frozen=True)
class BulkVideo:
    """One video for ``plant_many``: its run's scene graph, title and recorded time."""

    run: PlantedRun
    title: str = "clip"
    recorded_at: str | None = None


def plant_many(
    catalog: Catalog, store: BlobStore, tenant_id: str, videos: Iterable[BulkVideo]
) -> list[tuple[str, str]]:
    """``plant_run`` for many new videos at once: the same files (published one run at a time)
    and the same catalog rows (videos, succeeded runs, their search index rows, the tenant's
    usage) inserted in one transaction, about ten times faster than one ``plant_run`` each.
    Webhook events are not written (a planted workspace has no subscriptions). Returns each
    video's video and run ids, in order."""
    planted: list[_Planted] = []
    with tempfile.TemporaryDirectory() as work:
        for video in videos:
            ids = (new_id("vid"), new_id("run"))
            layout = RunLayout(Path(work), tenant_id, *ids)
            hits = write_planted(layout.out_dir, video.run)
            key = publish(layout, store)
            planted.append(_Planted(video, *ids, key, summarize(hits, has_file=True)))
    with catalog.write(lock=tenant_id) as conn:
        _insert_planted(conn, tenant_id, planted)
    return [(p.video_id, p.run_id) for p in planted]


@dataclass(frozen=True)
class _Planted:
    video: BulkVideo
    video_id: str
    run_id: str
    key: str
    summary: HitSummary


def _insert_planted(conn: Connection, tenant_id: str, planted: list[_Planted]) -> None:
    """The catalog rows ``plant_run`` leaves for each planted video, in bulk."""
    if not planted:
        return
    now = now_rfc3339()
    tenant = {"tenant_id": tenant_id}
    conn.execute(
        tables.videos.insert(),
        [
            {
                **tenant,
                "video_id": p.video_id,
                "title": p.video.title,
                "source_type": "url",
                "source_url": "https://media.example.com/a.mp4",
                "state": "succeeded",
                "recorded_at": p.video.recorded_at,
                "created_at": now,
                "updated_at": now,
            }
            for p in planted
        ],
    )
    done = {"created_at": now, "started_at": now, "finished_at": now, "heartbeat_at": now}
    conn.execute(
        tables.runs.insert(),
        [
            {**tenant, **done, "run_id": p.run_id, "video_id": p.video_id, "state": "succeeded"}
            | {"progress": 1.0, "params_json": "{}", "artifacts_path": p.key, "artifacts_bytes": 1}
            for p in planted
        ],
    )
    conn.execute(
        tables.search_runs.insert(),
        [
            {**tenant, "run_id": p.run_id, "video_id": p.video_id, "indexed_at": now}
            | p.summary.as_columns()
            for p in planted
        ],
    )
    count = len(planted)
    for period, metric, amount in (
        (ALL, "videos", count),
        (month_of(now), "executions", count),
        (month_of(now), "processed_s", PROCESSED_S * count),
        (ALL, "storage_bytes", count),
    ):
        add(conn, tenant_id, period, metric, float(amount))


WORDS = ("GATE", "EXIT", "DOCK", "BAY", "LOT", "PLATFORM", "LANE", "DOOR")
CLASSES = ("person", "person", "person", "motion", "motion", "face", "car")


def realistic_run(rng: random.Random, duration_s: float = 600.0) -> PlantedRun:
    """A 10-minute camera clip's scene graph as processed runs have it: about 60 objects (people,
    moving things, faces), 8 texts, their appear/disappear/zone/dwell events and a few cuts."""
    run = PlantedRun()
    for _ in range(rng.randint(40, 80)):
        first = rng.uniform(0, duration_s - 5)
        last = min(duration_s, first + rng.expovariate(1 / 30))
        zones = tuple(rng.sample([z["zone_id"] for z in ZONES], rng.randint(1, 2)))
        obj = run.thing(rng.choice(CLASSES), first, last, zones=zones, confidence=rng.random())
        for zone in zones:
            run.event("enter_zone", first, None, object_id=obj, zone_id=zone)
        if last - first > 60 and rng.random() < 0.5:
            run.event("dwell", first + 5, last, object_id=obj)
    for _ in range(rng.randint(4, 12)):
        first = rng.uniform(0, duration_s - 5)
        text = f"{rng.choice(WORDS)} {rng.randint(1, 99)}"
        run.thing("text", first, min(duration_s, first + rng.uniform(1, 40)), text=text)
    for _ in range(rng.randint(0, 4)):
        run.event("scene_change", rng.uniform(0, duration_s), None)
    return run
