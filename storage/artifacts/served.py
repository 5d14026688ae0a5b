"""What the API and the MCP tools read from a video's published runs, shaped as they answer it.

Every read starts from the newest readable run of the caller's video (``newest_run``: 409
``not_ready`` before one succeeded, or once its artifacts expired) and shapes that run's rows
(DuckDB, through ``ArtifactReader``) into the documents of operations 4 to 6 and 8. The REST
routes and the MCP tools both call these, so they cannot answer differently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from storage.artifacts.layout import COST
from storage.artifacts.reads import ArtifactReader
from storage.artifacts.spans import served_span
from storage.catalog.records import Run
from storage.catalog.review_notes import ReviewNote, ReviewNoteStore
from storage.catalog.runs.store import RunStore
from storage.catalog.videos import VideoStore
from ves.errors import NotReady


def newest_run(
    videos: VideoStore, runs: RunStore, reader: ArtifactReader, tenant_id: str, video_id: str
) -> Run:
    """The newest succeeded run of the tenant's video whose artifacts are wholly published.

    Raises:
        NotFound: no such video for this tenant.
        NotReady: no run succeeded yet, or its artifacts expired, are gone or incomplete.
    """
    video = videos.get(tenant_id, video_id)
    run = runs.latest_succeeded(tenant_id, video_id)
    if video.state == "expired" or run is None or run.artifacts_path is None:
        raise NotReady(
            f"video {video_id} is {video.state}; artifacts are ready once a run has succeeded"
            + (" (they expired: execute it again)" if video.state == "expired" else "")
        )
    try:
        reader.verify(run.artifacts_path)
    except NotReady as exc:
        raise NotReady(f"the artifacts of video {video_id} are gone; execute it again") from exc
    return run


@dataclass(frozen=True)
class RunViews:
    """The documents of one tenant's videos, read from their newest readable runs."""

    videos: VideoStore
    runs: RunStore
    reader: ArtifactReader

    def run_of(self, tenant_id: str, video_id: str) -> Run:
        return newest_run(self.videos, self.runs, self.reader, tenant_id, video_id)

    def scene_graph(self, tenant_id: str, video_id: str) -> dict[str, Any]:
        return scene_graph_of(self.reader, self.run_of(tenant_id, video_id))

    def timeline(self, tenant_id: str, video_id: str) -> dict[str, Any]:
        return timeline_of(self.reader, self.run_of(tenant_id, video_id))

    @property
    def notes(self) -> ReviewNoteStore:
        return ReviewNoteStore(self.runs.catalog)

    def evidence(self, tenant_id: str, video_id: str) -> dict[str, Any]:
        run = self.run_of(tenant_id, video_id)
        return evidence_of(self.reader, run, self.notes.for_run(run.run_id))

    def cost(self, tenant_id: str, video_id: str) -> dict[str, Any]:
        run = self.run_of(tenant_id, video_id)
        return self.reader.document(run.artifacts_path or "", COST)


def scene_graph_of(reader: ArtifactReader, run: Run) -> dict[str, Any]:
    """Objects, zones, events and relations of a run (operation 4)."""
    path = run.artifacts_path or ""
    objects = reader.rows(path, "objects", order_by="first_seen_s")
    for obj in objects:
        obj["attributes"] = json.loads(obj["attributes"])
    return {
        "video_id": run.video_id,
        "run_id": run.run_id,
        "objects": objects,
        "zones": reader.rows(path, "zones"),
        "events": reader.rows(path, "events", "t_s"),
        "relations": reader.rows(path, "relations", "start_s"),
    }


def timeline_of(reader: ArtifactReader, run: Run) -> dict[str, Any]:
    """Events in time order, refresh markers and still stretches of a run (operation 5)."""
    path = run.artifacts_path or ""
    rows = reader.rows(path, "timeline", order_by="t_s")
    events = [
        {
            "t_s": r["t_s"],
            "event_id": r["event_id"],
            "type": r["type"],
            "object_id": r["object_id"],
            "zone_id": r["zone_id"],
            "confidence": r["score"],
            "label": r["label"],
        }
        for r in rows
        if r["kind"] == "event"
    ]
    markers = [
        {"t_s": r["t_s"], "reason": r["reason"], "score": r["score"]}
        for r in rows
        if r["kind"] == "refresh_marker"
    ]
    still = [
        {"start_s": r["t_s"], "end_s": r["end_s"], "reason": r["reason"]}
        for r in rows
        if r["kind"] == "still"
    ]
    duration = reader.document(path, COST)["duration_s"]
    return {
        "video_id": run.video_id,
        "run_id": run.run_id,
        "duration_s": duration,
        "events": events,
        "refresh_markers": markers,
        "still": still,
    }


def evidence_of(
    reader: ArtifactReader, run: Run, notes: dict[str, list[ReviewNote]] | None = None
) -> dict[str, Any]:
    """The evidence spans of a run with their hashes (operation 6), each with people's
    ``notes`` of it (by evidence id, oldest first) added as
    ``storage.artifacts.spans.served_span`` says."""
    rows = reader.rows(run.artifacts_path or "", "evidence", order_by="start_s")
    notes = notes or {}
    spans = [
        served_span(r, run.video_id, run.run_id, _in_span(notes.get(r["evidence_id"], [])))
        for r in rows
    ]
    return {"video_id": run.video_id, "run_id": run.run_id, "spans": spans}


def _in_span(notes: list[ReviewNote]) -> list[dict[str, Any]]:
    """People's notes as a span's ``review_notes`` show them (the span and run are implied)."""
    return [
        {
            "note_id": n.note_id,
            "author": n.author,
            "text": n.text,
            "created_at": n.created_at,
            "verdict": n.verdict,
            "supersedes": n.supersedes,
        }
        for n in notes
    ]
