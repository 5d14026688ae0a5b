"""The ``export-evidence`` flow: one export of a video's run into a signed bundle.

It takes the export (``queued`` -> ``running``), fetches the video's source again (an upload from
the blob store, a URL or an HLS stream through the same SSRF guard and bounds as a run) and
checks it is the file the run analysed, gathers the spans' review notes and the video's audit
records, then runs the export's steps as Prefect tasks (``tasks.export.stage``), so that its flow
run in the Prefect UI shows them with their progress: ``choose-spans``, ``cut-clips`` (stream
copies, one per merged window), ``redact-clips`` (only when redaction is asked), ``sign-clips``
(the seam where each clip will carry its own C2PA signature), ``write-bundle`` (signed with the
service's key) and ``publish`` (into the blob store). It then records the bundle's size, sha256
and signing key (``succeeded``). Any failure ends the export ``failed`` with a reason, leaving no
bundle; the heartbeat beats throughout.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NONE
from pydantic import BaseModel

from flows.webhook_dispatch import hand_over
from storage.artifacts.blobs import BlobStore, open_blob_store
from storage.artifacts.layout import sha256_file
from storage.artifacts.reads import ArtifactReader
from storage.catalog.audit import AuditLog
from storage.catalog.database import Catalog
from storage.catalog.exports import Bundle, Export, ExportStore, bundle_folder, bundle_key
from storage.catalog.records import Run, Video
from storage.catalog.review_notes import ReviewNoteStore
from storage.catalog.runs.store import RunStore
from storage.catalog.videos import VideoStore
from tasks.context import SourceRef, beating
from tasks.decode.stage import acquire_source
from tasks.export.bundle import SealedBundle
from tasks.export.stage import (
    ExportRequest,
    Selection,
    choose_spans_task,
    cut_clips_task,
    redact_clips_task,
    sign_clips_task,
    write_bundle_task,
)
from ves.credentials import ContentCredentialsCA
from ves.errors import Conflict, VesError
from ves.settings import Settings
from ves.signing import KeyRing


class ExportParams(BaseModel):
    export_id: str


@flow(name="export-evidence", persist_result=False, log_prints=False)
def export_evidence(params: ExportParams) -> str:
    """Make the bundle of one queued export."""
    logger = get_run_logger()
    settings = Settings()
    exports = ExportStore(Catalog.from_settings(settings, migrate=False))
    if not exports.start(params.export_id):
        logger.warning("export %s is no longer queued; nothing to do", params.export_id)
        return "skipped"
    export = exports.get(params.export_id)
    work = settings.work_root / "exports" / export.export_id
    store = open_blob_store(settings)
    every_s = min(10.0, settings.heartbeat_timeout_s / 4)  # well within the reaper's timeout
    try:
        with beating(
            lambda: exports.beat(export.export_id), every_s, f"heartbeat-{export.export_id}"
        ):
            bundle = make_bundle(settings, exports.catalog, export, store, work)
    except BaseException as exc:
        exports.fail(export.export_id, *_failure_of(exc))
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not exports.succeed(export.export_id, bundle):
        store.delete_prefix(
            bundle_folder(bundle.key)
        )  # failed meanwhile: its bundle must not outlive that
        return "withdrawn"
    hand_over(exports.catalog)  # its export.ready webhooks, sent by their own flow runs
    logger.info("export %s: %d bytes, sha256 %s", export.export_id, bundle.size, bundle.sha256)
    return bundle.key


def make_bundle(
    settings: Settings, catalog: Catalog, export: Export, store: BlobStore, work: Path
) -> Bundle:
    """Write the export's bundle and put it in the store under ``bundle_key``."""
    run = RunStore(catalog).get(export.run_id)
    if run.state != "succeeded" or run.expired_at:
        raise Conflict(f"run {run.run_id} is no longer kept; execute the video again, then export")
    video = VideoStore(catalog).get(export.tenant_id, export.video_id)
    ref = SourceRef(video.source_type, video.source_url, video.source_path, video.source_sha256)
    (work / "scratch").mkdir(parents=True, exist_ok=True)
    fetched = acquire_source(ref, work / "scratch", settings, store)
    source, sha = fetched.path, fetched.sha256
    signing_key = KeyRing.from_settings(settings).active()
    audit = AuditLog(catalog)
    records = audit.video_records(export.tenant_id, export.video_id)
    request = ExportRequest(
        export_id=export.export_id,
        run=run,
        source=source,
        source_sha256=sha,
        provenance=provenance(video, run, records),
        selection=selection_of(export.params),
        redact=frozenset(export.params.get("redact") or ()),
        credentials=ContentCredentialsCA.from_settings(settings).signer(),
        notes=ReviewNoteStore(catalog).for_run(run.run_id),
        audit=records,
        extra={
            "tenant_id": export.tenant_id,
            "requested_by": export.key_id,
            "audit_head": asdict(audit.head(export.tenant_id)),  # note it: truncation shows
            **export.params,
        },
    )
    reader = ArtifactReader(store)
    chosen = choose_spans_task(request, reader)
    clips = cut_clips_task(request, chosen, work)
    if chosen.redaction is not None:
        clips = redact_clips_task(request, chosen, clips, work)
    clips = sign_clips_task(request, chosen, clips)
    sealed = write_bundle_task(
        request, chosen, clips, reader, store, signing_key, work / "bundle.zip"
    )
    return publish_task(store, export, sealed)


@task(name="publish", cache_policy=NONE)
def publish_task(store: BlobStore, export: Export, sealed: SealedBundle) -> Bundle:
    """Put the bundle in the blob store under ``bundle_key``."""
    key = bundle_key(export.tenant_id, export.video_id, export.export_id)
    store.put_file(sealed.path, key)
    bundle = Bundle(key, sealed.path.stat().st_size, sha256_file(sealed.path), sealed.key_id)
    get_run_logger().info("published %s: %d bytes", key, bundle.size)
    return bundle


def selection_of(params: Mapping[str, Any]) -> Selection:
    return Selection(
        tuple(params.get("evidence_ids") or ()), params.get("start_s"), params.get("end_s")
    )


def provenance(video: Video, run: Run, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """How the source was obtained, as the catalog and the audit trail know it (the key that
    registered the video and the one that uploaded its bytes, when they are on record)."""
    by_action = {r["action"]: r for r in records if int(r["outcome"]) < 400}
    added = by_action.get("POST /api/videos/add") or by_action.get("mcp:add_video") or {}
    uploaded = by_action.get("PUT /api/videos/{video_id}/content") or {}
    return {
        "registered_by_key": added.get("key_id"),
        "uploaded_by_key": uploaded.get("key_id"),
        "uploaded_at": uploaded.get("at"),
        "video_id": video.video_id,
        "source_type": video.source_type,
        "url": video.source_url,
        "upload": video.upload,
        "registered_at": video.created_at,
        "source_sha256_recorded": video.source_sha256,
        "source_bytes_recorded": video.source_bytes,
        "analysed_by_run": run.run_id,
        "run_started_at": run.started_at,
        "run_finished_at": run.finished_at,
    }


def _failure_of(exc: BaseException) -> tuple[str, str]:
    if isinstance(exc, VesError) and type(exc) is not VesError:
        return exc.code, exc.detail
    return "internal", "an internal error stopped the export; it has been logged"
