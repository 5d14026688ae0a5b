"""An export of a processed run carries Content Credentials on every clip: ``write_export`` with
the CA's signer (as the export flow passes it), then ``verify_bundle`` with the published roots."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.reads import ArtifactReader
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from synthetic import GroundTruth
from tasks.export.stage import ExportRequest, Selection, write_export
from tests.flows.conftest import QueueRun
from verify.bundle import verify_bundle
from verify.credentials import verify_clip_credentials
from ves.credentials import ContentCredentialsCA
from ves.settings import Settings
from ves.signing import SigningKey

pytestmark = pytest.mark.slow


def test_every_clip_of_an_export_is_trusted_under_the_published_roots(
    queue_upload_run: QueueRun,
    lobby: tuple[Path, GroundTruth],
    catalog: Catalog,
    settings: Settings,
    tmp_path: Path,
) -> None:
    path, _ = lobby
    run = queue_upload_run(path, detector="motion")
    process_video(ProcessVideoParams(run_id=run.run_id))
    run = RunStore(catalog).get(run.run_id)
    store = open_blob_store(settings)
    spans = ArtifactReader(store).rows(run.artifacts_path or "", "evidence")
    shortest = min(spans, key=lambda s: s["end_s"] - s["start_s"])  # a short clip, a quick test
    ca, key = ContentCredentialsCA.from_settings(settings), SigningKey.generate()
    request = ExportRequest(
        export_id="exp_c2pa",
        run=run,
        source=path,
        source_sha256=shortest["source_sha256"],
        provenance={"kind": "upload", "title": "lobby.mp4"},
        selection=Selection(evidence_ids=(shortest["evidence_id"],)),
        credentials=ca.signer(),
    )
    (tmp_path / "work").mkdir()
    sealed = write_export(
        request, ArtifactReader(store), store, key, tmp_path / "b.zip", tmp_path / "work"
    )

    verdict = verify_bundle(sealed.path, key.public_key_pem.encode(), ca.roots_pem())
    assert verdict.ok and verdict.checks[-1].name == "c2pa", verdict.lines()
    with zipfile.ZipFile(sealed.path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        [clip] = manifest["clips"]
        found = verify_clip_credentials(archive.read(clip["path"]), ca.roots_pem())
    [span] = manifest["spans"]
    assert found.ok and found.actions == ["c2pa.opened", "c2pa.edited"]
    assert clip["c2pa_manifest"] == found.label  # the bundle names the clip's manifest
    assert found.evidence is not None
    assert found.evidence["spans"] == [
        {"span_id": shortest["evidence_id"], "sha256": span["sha256"]}
    ]
    assert (found.evidence["run_id"], found.evidence["video_id"]) == (run.run_id, run.video_id)
    assert found.evidence["source_sha256"] == shortest["source_sha256"]
    assert found.evidence["source_start_s"] == clip["source_start_s"]
