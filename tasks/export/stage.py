"""The export stage: one signed evidence bundle of a published run (``bundle.py``'s format).

For each selected evidence span the bundle holds the span as served (canonical JSON), its
thumbnails as published, and a clip cut from the source around it (``cut.py``: every frame of
the window at its source time, so each thumbnail's time is a frame of the clip); then the parts
of the scene graph and the timeline the spans belong to, the run's ``cost.json`` and manifest,
where the source came from (``source.json``), and the records the caller passes (the video's
audit trail; the spans' review notes, which the spans also show as the evidence view serves them,
with ``published_sha256`` proving what the run published). The source must be the one the run
analysed: its sha256 is checked against the run's before anything is cut. When the request asks
to ``redact`` faces or text, every thumbnail and clip frame is redacted (``redact.py``) and the
manifest's ``redaction`` section keeps the unredacted originals' hashes and what was pixelated.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from storage.artifacts.blobs import BlobStore
from storage.artifacts.layout import COST, THUMBS, read_manifest
from storage.artifacts.reads import ArtifactReader
from storage.artifacts.served import evidence_of, scene_graph_of, timeline_of
from storage.catalog.records import Run
from storage.catalog.review_notes import ReviewNote
from tasks.export.bundle import BundleMeta, BundleWriter, SealedBundle
from tasks.export.credentials import claim_for, sign_cut_clip
from tasks.export.cut import Clip, clip_window, cut_clip
from tasks.export.layout import clip_path, thumbnail_path
from tasks.export.redact import WHAT, Redaction, Redactor, text_boxes_of
from ves.credentials import ClaimSigner
from ves.errors import InvalidRequest, SourceInvalid
from ves.signing import SigningKey

Span = dict[str, Any]


@dataclass(frozen=True)
class Selection:
    """Which spans to export: the ids given, else those overlapping ``start_s``..``end_s``,
    else every span of the run."""

    evidence_ids: tuple[str, ...] = ()
    start_s: float | None = None
    end_s: float | None = None

    def picks(self, span: Span) -> bool:
        if self.evidence_ids:
            return span["evidence_id"] in self.evidence_ids
        after = self.start_s is None or span["end_s"] >= self.start_s
        return after and (self.end_s is None or span["start_s"] <= self.end_s)


@dataclass(frozen=True)
class ExportRequest:
    """One export of a published run, with what the catalog knows beside its artifacts."""

    export_id: str
    run: Run
    source: Path  # the run's source on this machine
    source_sha256: str  # of that file, as acquired now
    provenance: Mapping[str, Any]  # how the source was obtained: kind, url, when, by which key
    selection: Selection = Selection()
    audit: Sequence[Mapping[str, Any]] = ()
    notes: Mapping[str, list[ReviewNote]] = field(default_factory=dict)  # by evidence id
    extra: Mapping[str, Any] = field(default_factory=dict)
    redact: frozenset[str] = frozenset()  # "faces", "text": pixelated in thumbnails and clips
    credentials: ClaimSigner | None = None  # signs each clip's Content Credentials (C2PA)


def select_spans(spans: Sequence[Span], selection: Selection) -> list[Span]:
    """The spans the selection picks, in time order; an unknown id or no span at all is refused."""
    unknown = set(selection.evidence_ids) - {s["evidence_id"] for s in spans}
    if unknown:
        raise InvalidRequest(f"no evidence span {', '.join(sorted(unknown))} in the run")
    chosen = [s for s in spans if selection.picks(s)]
    if not chosen:
        raise InvalidRequest("no evidence span of the run matches the selection")
    return chosen


def slice_scene_graph(graph: Mapping[str, Any], spans: Sequence[Span]) -> dict[str, Any]:
    """The objects and events the spans show, the zones and relations that touch them."""
    objects = {s["object_id"] for s in spans if s.get("object_id")}
    events = {s["event_id"] for s in spans if s.get("event_id")}
    kept_events = [
        e for e in graph["events"] if e["event_id"] in events or e["object_id"] in objects
    ]
    zones = {e.get("zone_id") for e in kept_events}
    return {
        **graph,
        "objects": [o for o in graph["objects"] if o["object_id"] in objects],
        "events": kept_events,
        "zones": [z for z in graph["zones"] if z["zone_id"] in zones],
        "relations": [
            r for r in graph["relations"] if r["subject_id"] in objects or r["object_id"] in objects
        ],
    }


def slice_timeline(timeline: Mapping[str, Any], spans: Sequence[Span]) -> dict[str, Any]:
    """The timeline's events and refresh markers within the spans' whole time range."""
    start, end = min(s["start_s"] for s in spans), max(s["end_s"] for s in spans)
    inside = [e for e in timeline["events"] if start <= e["t_s"] <= end]
    markers = [m for m in timeline["refresh_markers"] if start <= m["t_s"] <= end]
    return {**timeline, "events": inside, "refresh_markers": markers}


def write_export(
    request: ExportRequest,
    reader: ArtifactReader,
    store: BlobStore,
    key: SigningKey,
    target: Path,
    work: Path,
) -> SealedBundle:
    """Write the bundle of ``request`` to ``target`` (signed with ``key``; clips cut in
    ``work``).

    Raises:
        InvalidRequest: the selection picks no span, or names one the run does not have, or
            ``redact`` names something other than ``faces`` and ``text``.
        SourceInvalid: the source is not the one the run analysed, or does not decode.
    """
    run, path = request.run, request.run.artifacts_path or ""
    served = evidence_of(reader, run, dict(request.notes))["spans"]  # as the API shows them
    spans = select_spans(served, request.selection)
    _check_source(request, spans)
    cost = reader.document(path, COST)
    redaction = _redaction(request, reader, path)
    with BundleWriter(target) as bundle:
        for span in spans:
            _add_span(bundle, span, request, store, reader.run_key(path), cost, work, redaction)
        bundle.add_json("scene_graph.json", slice_scene_graph(scene_graph_of(reader, run), spans))
        bundle.add_json("timeline.json", slice_timeline(timeline_of(reader, run), spans))
        bundle.add_json(COST, cost)
        bundle.add_json("source.json", {**request.provenance, "sha256": request.source_sha256})
        bundle.add_json("run_manifest.json", read_manifest(store, reader.run_key(path)))
        bundle.add_jsonl("audit.jsonl", request.audit)
        notes = [n.as_dict() for s in spans for n in request.notes.get(s["evidence_id"], [])]
        bundle.add_jsonl("notes.jsonl", notes)
        meta = BundleMeta(request.export_id, run.video_id, run.run_id, extra=request.extra)
        if redaction is not None:
            meta = replace(meta, redaction=redaction.manifest())
        return bundle.close(key, meta)


def _redaction(request: ExportRequest, reader: ArtifactReader, path: str) -> Redaction | None:
    """The export's redaction, with the run's text objects where text is redacted."""
    if not request.redact:
        return None
    if unknown := set(request.redact) - WHAT:
        raise InvalidRequest(f"cannot redact {', '.join(sorted(unknown))}: only faces and text")
    texts = text_boxes_of(reader.rows(path, "tracks")) if "text" in request.redact else []
    return Redaction(Redactor(frozenset(request.redact), texts))


def _check_source(request: ExportRequest, spans: Sequence[Span]) -> None:
    analysed = {s["source_sha256"] for s in spans if s.get("source_sha256")}
    if analysed and analysed != {request.source_sha256}:
        raise SourceInvalid(
            "the source is no longer the video the run analysed (its sha256 changed);"
            " execute the video again, then export that run"
        )


def _add_span(
    bundle: BundleWriter,
    span: Span,
    request: ExportRequest,
    store: BlobStore,
    run_key: str,
    cost: Mapping[str, Any],
    work: Path,
    redaction: Redaction | None = None,
) -> None:
    names = []
    for frame in span["frames"]:
        name = frame["thumbnail_url"].rsplit("/", 1)[-1]
        names.append(thumbnail_path(name))
        data = store.get_bytes(f"{run_key}/{THUMBS}/{name}")
        if redaction is not None:
            data = redaction.thumbnail(names[-1], data, frame["t_s"])
        bundle.add_file(names[-1], data)
    bundle.add_span(span, thumbnails=names)
    window = clip_window(span["start_s"], span["end_s"], cost.get("duration_s"))
    clip = _cut(request.source, window, work / f"{span['evidence_id']}.mp4", redaction)
    if request.credentials is not None:  # Content Credentials (tasks/export/credentials.py)
        sign_cut_clip(clip, claim_for(request, [span], clip), request.credentials)
    times = [f["t_s"] for f in span["frames"]]
    bundle.add_clip(
        span["evidence_id"],
        clip.path,
        source_start_s=clip.start_s,
        source_end_s=clip.end_s,
        thumbnail_times_s=times,
    )


def _cut(source: Path, window: tuple[float, float], out: Path, redaction: Redaction | None) -> Clip:
    """The clip of ``window``, redacted when asked; the unredacted cut of the same window is
    written from the same decode only to record its sha256 (the original the redaction can be
    checked against)."""
    if redaction is None:
        return cut_clip(source, window, out)
    name = clip_path(out.stem)
    original = out.with_name(f"{out.stem}.original.mp4")
    transform = redaction.clip_transform(name)
    clip = cut_clip(source, window, out, transform=transform, plain_out=original)
    redaction.clip_original(name, hashlib.sha256(original.read_bytes()).hexdigest())
    original.unlink()
    return clip
