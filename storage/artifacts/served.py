"""What the API and the MCP tools read from a video's published runs, shaped as they answer it.

Every read starts from the newest readable run of the caller's video (``newest_run``: 409
``not_ready`` before one succeeded, or once its artifacts expired) and shapes that run's rows
(DuckDB, through ``ArtifactReader``) into the documents of operations 4 to 6 and 8. The REST
routes and the MCP tools both call these, so they cannot answer differently.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from storage.artifacts.layout import COST
from storage.artifacts.names import name_objects
from storage.artifacts.reads import ArtifactReader
from storage.artifacts.spans import served_span
from storage.catalog.records import Run
from storage.catalog.review_notes import ReviewNote, ReviewNoteStore
from storage.catalog.runs.store import RunStore
from storage.catalog.videos import VideoStore
from ves.errors import NotFound, NotReady


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


def chosen_run(
    videos: VideoStore,
    runs: RunStore,
    reader: ArtifactReader,
    tenant_id: str,
    video_id: str,
    run_id: str,
) -> Run:
    """The run ``run_id`` of the tenant's video, when it succeeded and is wholly published.

    Raises:
        NotFound: no such video for this tenant, or no such run of it.
        NotReady: the run has not succeeded, or its artifacts expired or are gone.
    """
    videos.get(tenant_id, video_id)
    try:
        run = runs.get(run_id)
    except NotFound:
        run = None
    if run is None or run.tenant_id != tenant_id or run.video_id != video_id:
        raise NotFound(f"no run {run_id} of video {video_id}")
    if run.state != "succeeded" or run.artifacts_path is None or run.expired_at is not None:
        raise NotReady(f"run {run_id} is {run.state}; its artifacts are not readable")
    try:
        reader.verify(run.artifacts_path)
    except NotReady as exc:
        raise NotReady(f"the artifacts of run {run_id} are gone; execute it again") from exc
    return run


@dataclass(frozen=True)
class RunViews:
    """The documents of one tenant's videos, read from their newest readable runs."""

    videos: VideoStore
    runs: RunStore
    reader: ArtifactReader

    def run_of(self, tenant_id: str, video_id: str, run_id: str | None = None) -> Run:
        """The video's newest readable run, or its run ``run_id`` when given."""
        if run_id is not None:
            return chosen_run(self.videos, self.runs, self.reader, tenant_id, video_id, run_id)
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
    names = name_objects(objects)
    for obj in objects:
        obj["attributes"] = json.loads(obj["attributes"])
        obj["name"] = names[obj["object_id"]]
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
    names = names_of(reader, run)
    events = [
        {
            "t_s": r["t_s"],
            "event_id": r["event_id"],
            "type": r["type"],
            "object_id": r["object_id"],
            "object_name": names.get(r["object_id"] or ""),
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
    path = run.artifacts_path or ""
    rows = reader.rows(path, "evidence", order_by="start_s")
    notes = notes or {}
    about = about_of(reader, run, rows)
    spans = [
        served_span(
            r,
            run.video_id,
            run.run_id,
            _in_span(notes.get(r["evidence_id"], [])),
            about.get(r["evidence_id"]),
        )
        for r in rows
    ]
    return {"video_id": run.video_id, "run_id": run.run_id, "spans": spans}


def names_of(reader: ArtifactReader, run: Run) -> dict[str, str]:
    """Every object's name in a run (``storage.artifacts.names``), by object id."""
    return name_objects(reader.rows(run.artifacts_path or "", "objects"))


def about_of(
    reader: ArtifactReader, run: Run, spans: list[dict[str, Any]] | None = None
) -> dict[str, str]:
    """The name of what each evidence span is about, by evidence id: its object's, or for an
    event's span the name of the event's object (spans of scene events have none). ``spans``:
    the run's evidence rows when already read."""
    return {ev: name for ev, (_, name) in subjects_of(reader, run, spans).items()}


def subjects_of(
    reader: ArtifactReader, run: Run, spans: list[dict[str, Any]] | None = None
) -> dict[str, tuple[str, str]]:
    """What each evidence span is about, by evidence id: ``(object_id, name)`` of its object,
    or of its event's object (spans of scene events are left out)."""
    path = run.artifacts_path or ""
    names = names_of(reader, run)
    of_event = {e["event_id"]: e["object_id"] for e in reader.rows(path, "events")}
    about: dict[str, tuple[str, str]] = {}
    for span in spans if spans is not None else reader.span_subjects(path):
        object_id = span["object_id"] or of_event.get(span["event_id"] or "")
        if object_id in names:
            about[span["evidence_id"]] = (object_id, names[object_id])
    return about


def name_citations(
    reader: ArtifactReader, runs: RunStore, citations: list[dict[str, Any]], run: Run | None = None
) -> list[dict[str, Any]]:
    """Ask citations with ``object_id`` and ``object_name`` of what each cited span is about
    (null for a scene event's span); each citation's run is ``run`` or its own ``run_id``."""
    subjects: dict[str, dict[str, tuple[str, str]]] = {}
    named = []
    for cite in citations:
        of = run or runs.get(cite["run_id"])
        if of.run_id not in subjects:
            subjects[of.run_id] = subjects_of(reader, of)
        object_id, name = subjects[of.run_id].get(cite["evidence_id"], (None, None))
        named.append(cite | {"object_id": object_id, "object_name": name})
    return named


def name_hits(
    reader: ArtifactReader, runs: RunStore, hits: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Search hits with the ``object_name`` of their object (null without one, and for a run
    whose artifacts went away since the search read its hits: the hit is still answered)."""
    names: dict[str, dict[str, str]] = {}
    named = []
    for hit in hits:
        if hit.get("object_id") and hit["run_id"] not in names:
            try:
                names[hit["run_id"]] = names_of(reader, runs.get(hit["run_id"]))
            except NotReady:
                names[hit["run_id"]] = {}
        of_run = names.get(hit["run_id"], {})
        named.append(hit | {"object_name": of_run.get(hit.get("object_id") or "")})
    return named


def tracks_of(
    reader: ArtifactReader, run: Run, start_s: float = 0.0, end_s: float | None = None
) -> dict[str, Any]:
    """Each object's tracked boxes from ``start_s`` to ``end_s`` (None: the end), as columns
    (compact for a player drawing them): ``t_s``, ``bbox`` (normalised [x1, y1, x2, y2]) and
    ``estimated``."""
    path = run.artifacts_path or ""
    objects = reader.rows(path, "objects", order_by="first_seen_s")
    names = name_objects(objects)
    rows: dict[str, dict[str, list[Any]]] = {}
    until = math.inf if end_s is None else end_s
    for r in reader.track_rows(path, start_s, until):
        columns = rows.setdefault(r["track_id"], {"t_s": [], "bbox": [], "estimated": []})
        columns["t_s"].append(round(r["t_s"], 4))
        columns["bbox"].append([round(float(v), 4) for v in r["bbox"]])
        columns["estimated"].append(r["estimated"])
    tracked = [
        {
            "object_id": o["object_id"],
            "name": names[o["object_id"]],
            "class": o["class"],
            "identity_id": o["identity_id"],
            "rows": rows[o["object_id"]],
        }
        for o in objects
        if o["object_id"] in rows
    ]
    return {
        "video_id": run.video_id,
        "run_id": run.run_id,
        "start_s": start_s,
        "end_s": end_s,
        "objects": tracked,
    }


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
