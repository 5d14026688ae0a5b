"""The steps of one export, as plain functions: choose spans, cut clips, redact, sign clips,
write the bundle. ``stage.py`` wraps each in a Prefect task; ``write_export`` runs them in turn.

Cutting copies the source's packets for each merged window (``copy.py``, ``windows.py``); where
redaction is asked, each window is then decoded, redacted and re-encoded (``cut.py``), and the
stream-copied clip of the same window, not put in the bundle, is the original whose sha256 the
manifest's ``redaction`` section keeps. ``sign_clips`` signs each finished clip on its own: an
embedded C2PA manifest (``credentials.py``), whose label the bundle lists beside the clip.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from storage.artifacts.blobs import BlobStore
from storage.artifacts.layout import COST, THUMBS, read_manifest, sha256_file
from storage.artifacts.reads import ArtifactReader
from storage.artifacts.served import evidence_of, scene_graph_of, timeline_of
from storage.catalog.records import Run
from storage.catalog.review_notes import ReviewNote
from tasks.export.bundle import BundleMeta, BundleWriter, SealedBundle, SpanClip
from tasks.export.copy import copy_clip
from tasks.export.credentials import claim_for, sign_cut_clip
from tasks.export.cut import Clip, cut_clip
from tasks.export.redact import WHAT, Redaction, Redactor, text_boxes_of
from tasks.export.select import (
    Selection,
    Span,
    select_spans,
    slice_scene_graph,
    slice_timeline,
)
from tasks.export.windows import SpanCut, Window, plan_windows
from verify.layout import clip_path, thumbnail_path
from ves.credentials import ClaimSigner
from ves.errors import InvalidRequest, SourceInvalid
from ves.signing import SigningKey

Progress = Callable[[str], None]  # a line of progress (the Prefect task's log)


def _quiet(line: str) -> None:
    """Progress nobody reads (plain calls, tests)."""


@dataclass(frozen=True)
class ExportRequest:
    """One export of a published run, with what the catalog knows beside its artifacts."""

    export_id: str
    run: Run
    source: Path  # the run's source on this machine
    source_sha256: str  # of that file, as acquired now
    provenance: Mapping[str, Any]  # how the source was obtained: kind, url, when, by which key
    selection: Selection = field(default_factory=Selection)
    audit: Sequence[Mapping[str, Any]] = ()
    notes: Mapping[str, list[ReviewNote]] = field(default_factory=dict)  # by evidence id
    extra: Mapping[str, Any] = field(default_factory=dict)
    redact: frozenset[str] = frozenset()  # "faces", "text": pixelated in thumbnails and clips
    credentials: ClaimSigner | None = None  # signs each clip's Content Credentials (C2PA)


@dataclass(frozen=True)
class Chosen:
    """What an export holds: its spans (as served, time order), each as exported (cut to the
    request's range), the windows their clips show, the run's cost report and redaction."""

    spans: list[Span]
    cuts: dict[str, SpanCut]
    windows: list[Window]
    cost: dict[str, Any]
    run_key: str
    redaction: Redaction | None


@dataclass(frozen=True)
class FinishedClip:
    """A clip ready for the bundle and what it shows: the window (its spans), the source time
    its frames cover (``clip.start_s`` is its time 0), how it was made, what was redacted."""

    window: Window
    clip: Clip
    method: str  # "copied" or "re-encoded"
    redacted: frozenset[str] = frozenset()
    c2pa_manifest: str | None = None  # the label of its embedded C2PA manifest, once signed

    @property
    def bundle_path(self) -> str:
        return clip_path(self.window.name)


def choose_spans(request: ExportRequest, reader: ArtifactReader) -> Chosen:
    """The spans the request selects and the windows of their clips.

    Raises:
        InvalidRequest: the selection picks no span, or names one the run does not have, or
            ``redact`` names something other than ``faces`` and ``text``.
        SourceInvalid: the source is not the one the run analysed.
    """
    run, path = request.run, request.run.artifacts_path or ""
    served = evidence_of(reader, run, dict(request.notes))["spans"]  # as the API shows them
    spans = select_spans(served, request.selection)
    _check_source(request, spans)
    cost = reader.document(path, COST)
    cuts = {s["evidence_id"]: request.selection.cut(s) for s in spans}
    windows = plan_windows(cuts.values(), cost.get("duration_s"), request.selection.range_s)
    redaction = _redaction(request, reader, path)
    return Chosen(spans, cuts, windows, cost, reader.run_key(path), redaction)


def cut_clips(
    request: ExportRequest, chosen: Chosen, work: Path, progress: Progress = _quiet
) -> list[FinishedClip]:
    """Stream-copy each window's clip into ``work`` (never re-encoded)."""
    clips = []
    for window in chosen.windows:
        began = time.perf_counter()
        clip = copy_clip(
            request.source, (window.start_s, window.end_s), work / f"{window.name}.mp4"
        )
        clips.append(FinishedClip(window, clip, "copied"))
        progress(
            f"clip {window.number}/{len(chosen.windows)}: {clip.start_s:.1f}-{clip.end_s:.1f} s"
            f" copied in {time.perf_counter() - began:.1f} s"
        )
    return clips


def redact_clips(
    request: ExportRequest,
    chosen: Chosen,
    copies: Sequence[FinishedClip],
    work: Path,
    progress: Progress = _quiet,
) -> list[FinishedClip]:
    """Where redaction is asked, each window decoded, redacted and re-encoded; the copied clip of
    the window is the original whose sha256 the manifest keeps (and is then deleted)."""
    if chosen.redaction is None:
        return list(copies)
    redacted = []
    for copied in copies:
        began, window, name = time.perf_counter(), copied.window, copied.bundle_path
        out = work / f"{window.name}.redacted.mp4"
        transform = chosen.redaction.clip_transform(name)
        clip = cut_clip(request.source, (window.start_s, window.end_s), out, transform)
        chosen.redaction.clip_original(name, sha256_file(copied.clip.path))
        copied.clip.path.unlink()
        redacted.append(FinishedClip(window, clip, "re-encoded", request.redact))
        progress(
            f"clip {window.number}/{len(copies)}: {clip.start_s:.1f}-{clip.end_s:.1f} s redacted"
            f" ({', '.join(sorted(request.redact))}) and re-encoded in"
            f" {time.perf_counter() - began:.1f} s"
        )
    return redacted


def sign_clips(
    request: ExportRequest,
    chosen: Chosen,
    clips: Sequence[FinishedClip],
    progress: Progress = _quiet,
) -> list[FinishedClip]:
    """Each finished clip signed on its own, in place: an embedded C2PA manifest naming the
    source, the cut, the redaction and the spans it shows (``credentials.py``); without
    ``request.credentials`` the clips are handed on as they are."""
    if request.credentials is None:
        return list(clips)
    by_id, signed = {s["evidence_id"]: s for s in chosen.spans}, []
    for finished in clips:
        began, spans = time.perf_counter(), [by_id[s.evidence_id] for s in finished.window.spans]
        claim = replace(claim_for(request, spans, finished.clip), redacted=tuple(finished.redacted))
        made = sign_cut_clip(finished.clip, claim, request.credentials)
        signed.append(replace(finished, c2pa_manifest=made.manifest_label))
        progress(
            f"clip {finished.window.number}/{len(clips)}: Content Credentials {made.manifest_label}"
            f" signed in {time.perf_counter() - began:.2f} s"
        )
    return signed


def write_bundle(
    request: ExportRequest,
    chosen: Chosen,
    clips: Sequence[FinishedClip],
    reader: ArtifactReader,
    store: BlobStore,
    key: SigningKey,
    target: Path,
) -> SealedBundle:
    """Write the bundle to ``target``: spans, thumbnails, clips, slices, records; its manifest
    signed with ``key``."""
    run, spans = request.run, chosen.spans
    with BundleWriter(target) as bundle:
        for finished in clips:
            _add_clip(bundle, finished)
        where = {s.evidence_id: f for f in clips for s in f.window.spans}
        for span in spans:
            _add_span(bundle, span, chosen, where[span["evidence_id"]], store)
        bundle.add_json("scene_graph.json", slice_scene_graph(scene_graph_of(reader, run), spans))
        bundle.add_json("timeline.json", slice_timeline(timeline_of(reader, run), spans))
        bundle.add_json(COST, chosen.cost)
        bundle.add_json("source.json", {**request.provenance, "sha256": request.source_sha256})
        bundle.add_json("run_manifest.json", read_manifest(store, chosen.run_key))
        bundle.add_jsonl("audit.jsonl", request.audit)
        notes = [n.as_dict() for s in spans for n in request.notes.get(s["evidence_id"], [])]
        bundle.add_jsonl("notes.jsonl", notes)
        meta = BundleMeta(request.export_id, run.video_id, run.run_id, extra=request.extra)
        if chosen.redaction is not None:
            meta = replace(meta, redaction=chosen.redaction.manifest())
        return bundle.close(key, meta)


def write_export(
    request: ExportRequest,
    reader: ArtifactReader,
    store: BlobStore,
    key: SigningKey,
    target: Path,
    work: Path,
) -> SealedBundle:
    """Every step in turn: the bundle of ``request`` at ``target`` (clips cut in ``work``).

    Raises:
        InvalidRequest: as ``choose_spans``.
        SourceInvalid: the source is not the one the run analysed, or does not decode.
    """
    chosen = choose_spans(request, reader)
    clips = redact_clips(request, chosen, cut_clips(request, chosen, work), work)
    clips = sign_clips(request, chosen, clips)
    return write_bundle(request, chosen, clips, reader, store, key, target)


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


def _add_clip(bundle: BundleWriter, finished: FinishedClip) -> None:
    clip, window = finished.clip, finished.window
    bundle.add_clip(
        window.name,
        clip.path,
        source_start_s=clip.start_s,
        source_end_s=clip.end_s,
        window_s=(window.start_s, window.end_s),
        method=finished.method,
        c2pa_manifest=finished.c2pa_manifest,
    )


def _add_span(
    bundle: BundleWriter, span: Span, chosen: Chosen, finished: FinishedClip, store: BlobStore
) -> None:
    """The span, its thumbnails within its exported extent (redacted when asked), and where
    it lies in its clip."""
    cut, origin = chosen.cuts[span["evidence_id"]], finished.clip.start_s
    frames = [f for f in span["frames"] if not cut.cut_to_range or cut.holds(f["t_s"])]
    names = []
    for frame in frames:
        name = frame["thumbnail_url"].rsplit("/", 1)[-1]
        names.append(thumbnail_path(name))
        data = store.get_bytes(f"{chosen.run_key}/{THUMBS}/{name}")
        if chosen.redaction is not None:
            data = chosen.redaction.thumbnail(names[-1], data, frame["t_s"])
        bundle.add_file(names[-1], data)
    original = cut.original or (None, None)
    place = SpanClip(
        finished.bundle_path,
        max(0.0, cut.start_s - origin),
        max(0.0, cut.end_s - origin),
        [f["t_s"] for f in frames],
        *original,
    )
    bundle.add_span(span, place, thumbnails=names)
