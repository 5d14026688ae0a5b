"""Exports of a really processed run (the lobby, mode ``motion``): the bundle verifies offline,
each span's clip holds its thumbnails' times, the slices hold what the spans show, and a source
that changed since the run, or a selection that picks nothing, is refused."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
import zipfile
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from flows.export_evidence import ExportParams, export_evidence
from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.reads import ArtifactReader
from storage.artifacts.spans import canonical_sha256, published_form
from storage.catalog.database import Catalog
from storage.catalog.exports import ExportStore
from storage.catalog.records import Run
from storage.catalog.review_notes import NewNote, ReviewNoteStore
from storage.catalog.runs.store import RunStore
from synthetic import GroundTruth
from tasks.export.stage import ExportRequest, Selection, write_export
from tests.flows.conftest import QueueRun
from verify.bundle import verify_bundle
from ves.errors import InvalidRequest, SourceInvalid
from ves.settings import Settings
from ves.signing import SigningKey

pytestmark = pytest.mark.slow


@pytest.fixture
def processed(
    queue_upload_run: QueueRun, lobby: tuple[Path, GroundTruth], catalog: Catalog
) -> tuple[Run, Path, str]:
    path, _ = lobby
    run = queue_upload_run(path, detector="motion")
    process_video(ProcessVideoParams(run_id=run.run_id))
    done = RunStore(catalog).get(run.run_id)
    assert done.state == "succeeded", done
    return done, path, hashlib.sha256(path.read_bytes()).hexdigest()


def _export(
    settings: Settings, processed: tuple[Run, Path, str], tmp_path: Path, **request: object
) -> tuple[Path, SigningKey]:
    run, source, sha = processed
    key = SigningKey.generate()
    store = open_blob_store(settings)
    made = ExportRequest(
        export_id="exp_test",
        run=run,
        source=source,
        source_sha256=str(request.pop("sha", sha)),
        provenance={"kind": "upload", "obtained_at": run.created_at, "key_id": "key_1"},
        **request,  # type: ignore[arg-type]
    )
    (tmp_path / "work").mkdir(exist_ok=True)
    sealed = write_export(
        made, ArtifactReader(store), store, key, tmp_path / "b.zip", tmp_path / "work"
    )
    return sealed.path, key


def test_an_export_of_every_span_verifies_with_the_services_key(
    settings: Settings, catalog: Catalog, processed: tuple[Run, Path, str], tmp_path: Path
) -> None:
    run = processed[0]
    first = ArtifactReader(open_blob_store(settings)).rows(run.artifacts_path or "", "evidence")[0]
    notes = ReviewNoteStore(catalog)
    note = notes.add(
        NewNote(
            run.tenant_id,
            run.video_id,
            run.run_id,
            first["evidence_id"],
            "key_1",
            "at the door",
            "confirmed",
        )
    )
    bundle, key = _export(
        settings,
        processed,
        tmp_path,
        audit=[{"seq": 1, "action": "GET evidence"}],
        notes=notes.for_run(run.run_id),
    )

    verdict = verify_bundle(bundle, key.public_key_pem.encode())
    assert verdict.ok, verdict.lines()
    with zipfile.ZipFile(bundle) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        graph = json.loads(archive.read("scene_graph.json"))
        names = set(archive.namelist())
        audit = [json.loads(line) for line in archive.read("audit.jsonl").splitlines()]
        noted = [json.loads(line) for line in archive.read("notes.jsonl").splitlines()]
    spans = manifest["spans"]
    assert audit == [{"seq": 1, "action": "GET evidence"}]
    assert noted == [note.as_dict()]
    with zipfile.ZipFile(bundle) as archive:
        noted_span = json.loads(archive.read(f"spans/{first['evidence_id']}.json"))
    assert noted_span["verdict"] == "confirmed"
    assert canonical_sha256(published_form(noted_span)) == noted_span["published_sha256"]
    assert spans and all(s["clip"] in names for s in spans)
    assert len(manifest["clips"]) < len(spans)  # overlapping spans share a clip
    shown = {json.loads(zipfile.ZipFile(bundle).read(s["path"])).get("object_id") for s in spans}
    assert {o["object_id"] for o in graph["objects"]} == shown - {None}
    assert all(s["thumbnail_times_s"] for s in spans)  # every span has times its clip holds
    assert {c["method"] for c in manifest["clips"]} == {"copied"}
    _assert_clips_are_the_source(bundle, processed[1], manifest["clips"])


def _frames(data: bytes | Path) -> list[tuple[float, np.ndarray[Any, Any]]]:
    with av.open(io.BytesIO(data) if isinstance(data, bytes) else str(data)) as container:
        return [(float(f.time), f.to_ndarray(format="rgb24")) for f in container.decode(video=0)]


def _assert_clips_are_the_source(bundle: Path, source: Path, clips: list[dict[str, Any]]) -> None:
    """Each clip's frame at ``t`` is, pixel for pixel, the source's frame at start + ``t``."""
    by_frame = {round(t * 10): rgb for t, rgb in _frames(source)}  # the lobby is 10 fps
    with zipfile.ZipFile(bundle) as archive:
        for clip in clips:
            frames = _frames(archive.read(clip["path"]))
            assert frames[0][0] == 0.0 and clip["source_start_s"] >= clip["window_s"][0] - 1e-6
            for t, rgb in frames:
                assert np.array_equal(rgb, by_frame[round((clip["source_start_s"] + t) * 10)])
            assert clip["source_end_s"] == pytest.approx(clip["source_start_s"] + frames[-1][0])


def test_a_time_range_exports_only_the_spans_that_overlap_it(
    settings: Settings, processed: tuple[Run, Path, str], tmp_path: Path
) -> None:
    """...and cuts their clips to it: a span reaching outside says so, with its own times."""
    bundle, key = _export(
        settings, processed, tmp_path, selection=Selection(start_s=5.0, end_s=8.0)
    )
    assert verify_bundle(bundle, key.public_key_pem.encode()).ok
    with zipfile.ZipFile(bundle) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        spans = {s["evidence_id"]: json.loads(archive.read(s["path"])) for s in manifest["spans"]}
    assert spans and all(s["start_s"] <= 8.0 and s["end_s"] >= 5.0 for s in spans.values())
    for entry in manifest["spans"]:
        own = spans[entry["evidence_id"]]
        outside = own["start_s"] < 5.0 or own["end_s"] > 8.0
        assert entry["cut_to_range"] == outside
        if outside:
            assert (entry["original_start_s"], entry["original_end_s"]) == (
                own["start_s"],
                own["end_s"],
            )
        assert all(5.0 <= t <= 8.0 for t in entry["thumbnail_times_s"])
    assert any(e["cut_to_range"] for e in manifest["spans"])
    for clip in manifest["clips"]:
        assert clip["window_s"][0] >= 5.0 and clip["window_s"][1] <= 8.0
    _assert_clips_are_the_source(bundle, processed[1], manifest["clips"])


def test_a_changed_source_or_an_empty_selection_is_refused_and_leaves_no_bundle(
    settings: Settings, processed: tuple[Run, Path, str], tmp_path: Path
) -> None:
    with pytest.raises(SourceInvalid, match="sha256 changed"):
        _export(settings, processed, tmp_path, sha="0" * 64)
    with pytest.raises(InvalidRequest, match="no evidence span ev_nope"):
        _export(settings, processed, tmp_path, selection=Selection(evidence_ids=("ev_nope",)))
    with pytest.raises(InvalidRequest, match="matches the selection"):
        _export(settings, processed, tmp_path, selection=Selection(start_s=500.0))
    assert not (tmp_path / "b.zip").exists()


def test_the_export_flow_shows_its_steps_as_tasks_with_their_progress(
    catalog: Catalog, processed: tuple[Run, Path, str], caplog: pytest.LogCaptureFixture
) -> None:
    """The Prefect UI's view of an export: each step a task run, the clips' progress logged."""
    run = processed[0]
    export = ExportStore(catalog).create(
        run.tenant_id, run.video_id, run.run_id, None, {"start_s": 5.0, "end_s": 8.0}
    )
    caplog.set_level(logging.INFO, logger="prefect.task_runs")
    state = export_evidence(ExportParams(export_id=export.export_id), return_state=True)
    assert state.is_completed(), state
    assert ExportStore(catalog).get(export.export_id).state == "succeeded"
    flow_run_id = state.state_details.flow_run_id
    assert flow_run_id is not None
    only_this = FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id]))
    with get_client(sync_client=True) as client:
        tasks = client.read_task_runs(flow_run_filter=only_this)
    names = {t.name.rsplit("-", 1)[0] for t in tasks}
    assert names == {"choose-spans", "cut-clips", "sign-clips", "write-bundle", "publish"}
    assert all(t.state is not None and t.state.is_completed() for t in tasks)
    # The tests keep logs off the API (tests/conftest.py): the same records, as logged.
    lines = [r.getMessage() for r in caplog.records if r.name == "prefect.task_runs"]
    copied = r"clip 1/\d+: [\d.]+-[\d.]+ s copied in [\d.]+ s"
    assert any(re.fullmatch(copied, m) for m in lines), lines
    assert any("cut to the range" in m for m in lines), lines
