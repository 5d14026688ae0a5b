"""The export stage: one signed evidence bundle of a published run (``bundle.py``'s format).

For each selected evidence span the bundle holds the span as served (canonical JSON), its
thumbnails as published, and the clip of the merged window it lies in (``windows.py``): one clip
per window, the source's packets copied (``copy.py``), re-encoded only where redaction is asked
(``cut.py``, ``redact.py``); then the parts of the scene graph and the timeline the spans belong
to, the run's ``cost.json`` and manifest, where the source came from (``source.json``), and the
records the caller passes (the video's audit trail; the spans' review notes, which the spans also
show as the evidence view serves them, with ``published_sha256`` proving what the run
published). The source must be the one the run analysed: its sha256 is checked against the run's
before anything is cut. A time-range export cuts its clips to the range.

The steps are plain functions in ``steps.py`` (``write_export`` runs them in turn); here each is
a Prefect task of the ``export-evidence`` flow, logging its progress, so the flow run in the
Prefect UI shows them: choose spans, cut clips, redact clips (when asked), sign clips (the seam
for per-clip C2PA signatures), write the bundle. Publishing is the flow's own task.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefect import get_run_logger, task
from prefect.cache_policies import NONE

from storage.artifacts.blobs import BlobStore
from storage.artifacts.reads import ArtifactReader
from tasks.export.bundle import SealedBundle
from tasks.export.select import Selection
from tasks.export.steps import (
    Chosen,
    ExportRequest,
    FinishedClip,
    choose_spans,
    cut_clips,
    redact_clips,
    sign_clips,
    write_bundle,
    write_export,
)
from ves.signing import SigningKey

__all__ = ["ExportRequest", "Selection", "write_export"]


def _log(line: str) -> None:
    get_run_logger().info(line)


@task(name="choose-spans", cache_policy=NONE)
def choose_spans_task(request: ExportRequest, reader: ArtifactReader) -> Chosen:
    """The spans the export selects and the merged windows of their clips."""
    chosen = choose_spans(request, reader)
    cut = sum(c.cut_to_range for c in chosen.cuts.values())
    seconds = sum(w.end_s - w.start_s for w in chosen.windows)
    _log(
        f"{len(chosen.spans)} spans chosen ({cut} cut to the range), {len(chosen.windows)}"
        f" clip windows covering {seconds:.1f} s of video"
    )
    return chosen


@task(name="cut-clips", cache_policy=NONE)
def cut_clips_task(request: ExportRequest, chosen: Chosen, work: Path) -> list[FinishedClip]:
    """Each window's clip, stream-copied from the source."""
    return cut_clips(request, chosen, work, _log)


@task(name="redact-clips", cache_policy=NONE)
def redact_clips_task(
    request: ExportRequest, chosen: Chosen, copies: Sequence[FinishedClip], work: Path
) -> list[FinishedClip]:
    """Each window redacted and re-encoded (the copied clip kept only as the original's hash)."""
    return redact_clips(request, chosen, copies, work, _log)


@task(name="sign-clips", cache_policy=NONE)
def sign_clips_task(
    request: ExportRequest, chosen: Chosen, clips: Sequence[FinishedClip]
) -> list[FinishedClip]:
    """Each clip's Content Credentials (C2PA) embedded and signed (``steps.sign_clips``)."""
    return sign_clips(request, chosen, clips, _log)


@task(name="write-bundle", cache_policy=NONE)
def write_bundle_task(
    request: ExportRequest,
    chosen: Chosen,
    clips: Sequence[FinishedClip],
    reader: ArtifactReader,
    store: BlobStore,
    key: SigningKey,
    target: Path,
) -> SealedBundle:
    """The bundle written and its manifest signed with ``key``."""
    sealed = write_bundle(request, chosen, clips, reader, store, key, target)
    _log(f"bundle: {sealed.bytes} bytes, manifest sha256 {sealed.manifest_sha256}, {key.key_id}")
    return sealed
