"""The process-video flow on a synthetic lobby with KNOWN truth: three objects (one dwells),
two signs, one scene cut. Assertions compare the published artifacts with that truth."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from prefect.exceptions import TerminationSignal

from flows.outcome import failure_of
from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import BlobStore, open_blob_store
from storage.artifacts.reads import ArtifactReader
from storage.artifacts.spans import canonical_sha256, span_document
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from synthetic import GroundTruth
from tests.ask.bank import colour_of
from tests.flows.conftest import QueueRun
from ves.settings import Settings

pytestmark = pytest.mark.slow


@pytest.fixture
def store(settings: Settings) -> BlobStore:
    return open_blob_store(settings)


@pytest.fixture
def reader(store: BlobStore) -> ArtifactReader:
    return ArtifactReader(store)


# The lobby whole, and split into 4 s chunks with 2 s lead-ins (keyframes every 2 s): borders at
# 4, 8, 12 (the scene cut) and 16 s. Both walkers and both signs cross borders, "EXIT 3" appears
# on one; every truth below must hold either way.
CHUNKED = {"VES_CHUNK_S": "4", "VES_CHUNK_LEAD_S": "2"}
LEAD_FRAMES = 4 * 2 * 10  # four lead-ins of 2 s at 10 fps, decoded twice


@pytest.fixture(params=["whole", "chunks", "whole-gated", "chunks-gated", "whole-keyframes"])
def split(request: pytest.FixtureRequest) -> str:
    """How the lobby is processed: whole or in chunks, with the activity gate (its default cue,
    or keyframe mode) or without."""
    return str(request.param)


@pytest.fixture
def lobby_run(
    queue_upload_run: QueueRun,
    lobby: tuple[Path, GroundTruth],
    catalog: Catalog,
    split: str,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[Path, GroundTruth, str]:
    path, truth = lobby
    for name, value in (CHUNKED if split.startswith("chunks") else {"VES_CHUNK_S": "0"}).items():
        monkeypatch.setenv(name, value)
    gate = "keyframes" if split.endswith("keyframes") else str(split.endswith("gated")).lower()
    monkeypatch.setenv("VES_SKIP_STILL", gate)
    run = queue_upload_run(path)
    published = process_video(ProcessVideoParams(run_id=run.run_id))
    finished = RunStore(catalog).get(run.run_id)
    assert finished.state == "succeeded", finished.error_message
    assert finished.artifacts_path == published
    return Path(published), truth, run.video_id  # the run's key in the store


def _objects(reader: ArtifactReader, run_dir: Path) -> list[dict[str, Any]]:
    return reader.rows(run_dir, "objects", order_by="first_seen_s")


def test_every_object_is_found_with_truthful_first_and_last_times(
    lobby_run: tuple[Path, GroundTruth, str], reader: ArtifactReader
) -> None:
    run_dir, truth, _ = lobby_run
    objects = [o for o in _objects(reader, run_dir) if o["class"] != "text"]
    movers = [o for o in objects if o["last_seen_s"] - o["first_seen_s"] >= 1.0]
    for expected in truth.objects:
        match = [
            o
            for o in movers
            if abs(o["first_seen_s"] - expected.first_seen_s) <= 1.0
            and abs(o["last_seen_s"] - expected.last_seen_s) <= 1.0
        ]
        assert len(match) == 1, (
            expected.name,
            [(o["first_seen_s"], o["last_seen_s"]) for o in movers],
        )


@pytest.mark.parametrize("split", ["whole", "chunks", "chunks-gated"])
def test_every_object_has_the_colour_the_scene_gives_it(
    lobby_run: tuple[Path, GroundTruth, str], reader: ArtifactReader
) -> None:
    """Colour is measured however the video was sampled: in chunks, each joined frame's pixels
    are read from its chunk (the walker and the loiterer cross borders)."""
    run_dir, truth, _ = lobby_run
    movers = [o for o in _objects(reader, run_dir) if o["class"] != "text"]
    for expected in truth.objects:
        (found,) = [
            o
            for o in movers
            if abs(o["first_seen_s"] - expected.first_seen_s) <= 1.0
            and abs(o["last_seen_s"] - expected.last_seen_s) <= 1.0
        ]
        assert found["colour"] == colour_of(expected), (expected.name, found["colour"])
        assert found["colour_confidence"] > 0.3, (expected.name, found["colour_confidence"])


def test_the_dwelling_object_keeps_one_id_and_its_dwell_is_an_event(
    lobby_run: tuple[Path, GroundTruth, str], reader: ArtifactReader
) -> None:
    run_dir, truth, _ = lobby_run
    loiterer = truth.object_named("loiterer")
    (dwell_start, dwell_end) = loiterer.dwell_intervals[0]
    covering = [
        o
        for o in _objects(reader, run_dir)
        if o["class"] != "text"
        and o["first_seen_s"] <= dwell_start
        and o["last_seen_s"] >= dwell_end
    ]
    assert len(covering) == 1
    events = reader.rows(run_dir, "events", order_by="t_s")
    dwells = [
        e for e in events if e["type"] == "dwell" and e["object_id"] == covering[0]["object_id"]
    ]
    assert len(dwells) == 1
    assert abs(dwells[0]["t_s"] - dwell_start) <= 1.0
    assert abs(dwells[0]["end_s"] - dwell_end) <= 1.0


def test_every_sign_is_a_text_object_with_its_true_interval(
    lobby_run: tuple[Path, GroundTruth, str], reader: ArtifactReader
) -> None:
    run_dir, truth, _ = lobby_run
    texts = [o for o in _objects(reader, run_dir) if o["class"] == "text"]
    read = {json.loads(o["attributes"])["text"]: o for o in texts}
    assert set(read) == {sign.text for sign in truth.texts}
    last_sample = truth.duration_s - 0.2
    for sign in truth.texts:
        obj = read[sign.text]
        assert abs(obj["first_seen_s"] - sign.start_s) <= 0.5, sign
        assert abs(obj["last_seen_s"] - min(sign.end_s, last_sample)) <= 0.5, sign
    events = reader.rows(run_dir, "events", order_by="t_s")
    seen = {e["object_id"]: e for e in events if e["type"] == "text_seen"}
    assert set(seen) == {o["object_id"] for o in texts}
    for obj in texts:
        assert (seen[obj["object_id"]]["t_s"], seen[obj["object_id"]]["end_s"]) == (
            obj["first_seen_s"],
            obj["last_seen_s"],
        )
    labels = [r["label"] for r in reader.rows(run_dir, "timeline") if r["type"] == "text_seen"]
    assert any("EXIT 3" in label for label in labels), labels


def test_the_scene_cut_is_a_refresh_marker_and_an_event(
    lobby_run: tuple[Path, GroundTruth, str], reader: ArtifactReader
) -> None:
    run_dir, truth, _ = lobby_run
    timeline = reader.rows(run_dir, "timeline", order_by="t_s")
    markers = [
        r for r in timeline if r["kind"] == "refresh_marker" and r["reason"] == "scene_change"
    ]
    assert [round(m["t_s"]) for m in markers] == [round(c) for c in truth.scene_cuts]
    assert all(abs(m["t_s"] - c) <= 1.0 for m, c in zip(markers, truth.scene_cuts, strict=True))
    events = reader.rows(run_dir, "events")
    assert sum(e["type"] == "scene_change" for e in events) == len(truth.scene_cuts)


def test_every_citation_exists_and_every_span_verifies(
    lobby_run: tuple[Path, GroundTruth, str], reader: ArtifactReader
) -> None:
    run_dir, _, video_id = lobby_run
    spans = {s["evidence_id"]: s for s in reader.rows(run_dir, "evidence")}
    cited = [e for o in reader.rows(run_dir, "objects") for e in o["evidence_ids"]]
    cited += [e for ev in reader.rows(run_dir, "events") for e in ev["evidence_ids"]]
    assert cited and set(cited) <= set(spans)
    run_id = run_dir.name.removeprefix("run=")
    for span in spans.values():
        document = span_document(span, video_id, run_id)
        assert canonical_sha256(document) == span["sha256"]
        for frame in span["frames"]:
            data = reader.store.get_bytes(f"{run_dir.as_posix()}/{frame['thumbnail']}")
            assert data[:2] == b"\xff\xd8"  # a JPEG
            assert hashlib.sha256(data).hexdigest() == frame["sha256"]


def test_the_manifest_lists_every_file_and_cost_tells_the_truth(
    lobby_run: tuple[Path, GroundTruth, str], reader: ArtifactReader, settings: Settings, split: str
) -> None:
    run_dir, truth, _ = lobby_run
    manifest = reader.document(run_dir, "manifest.json")
    names = {f["name"] for f in manifest["files"]}
    for table in (
        "frames",
        "detections",
        "tracks",
        "objects",
        "zones",
        "events",
        "relations",
        "timeline",
        "evidence",
    ):
        assert f"{table}.parquet" in names
    assert "cost.json" in names
    cost = reader.document(run_dir, "cost.json")
    assert cost["detector_mode"] == "motion+person+ocr"
    assert cost["fallback"] == {"used": False, "reason": None}
    lead = LEAD_FRAMES if split.startswith("chunks") else 0  # decoded and looked at twice
    analysed = cost["frames"]["sampled"] - cost["frames"]["held"]  # held: no detector ran
    assert cost["frames"]["analysed"] == analysed
    assert cost["detectors"]["motion"]["frames"] == analysed + lead // 2
    assert 1 <= cost["detectors"]["ocr"]["frames"] <= 12  # a bounded number of looks
    # The person detector looked where things moved; the lobby's walkers are coloured blobs.
    assert 0 < cost["detectors"]["person"]["frames"] <= cost["frames"]["sampled"] + lead // 2
    assert {o["class"] for o in reader.rows(run_dir, "objects")} <= {"motion", "text"}
    assert abs(cost["duration_s"] - truth.duration_s) < 0.2
    frames, gate = cost["frames"], cost["activity_gate"]
    if split.endswith("gated"):
        # The lobby is busy from end to end: too few idle GOPs to learn the stream's idle
        # level from, so the gate decodes everything and says why.
        assert gate["used"] is False and "idle level" in gate["fallback"]
        assert frames["decoded"] == truth.frame_count + lead
        assert frames["skipped"] == frames["held"] == 0
    elif split.endswith("keyframes"):
        # Keyframes alone need no idle level: the GOPs whose keyframes all match are held, and
        # the run says what keyframe mode cannot see (an event shorter than a 2 s GOP).
        assert gate["used"] is True and gate["cue"] == "keyframes"
        assert gate["sure_event_s"] == pytest.approx(2.0)
        assert frames["decoded"] + frames["skipped"] >= truth.frame_count
        assert all("keyframe mode" in s["reason"] for s in frames["skipped_spans"])
    else:
        assert frames["decoded"] == truth.frame_count + lead
        assert frames["skipped"] == frames["held"] == 0 and frames["skipped_spans"] == []
        assert gate == {"used": False, "fallback": None}  # off: no cue, nothing mapped
    assert cost["frames"]["sampled"] == pytest.approx(truth.duration_s * 5, abs=2)
    assert set(cost["stages"]) == {
        "decode",
        "sample",
        "detect",
        "track",
        "world_state",
        "timeline",
        "evidence",
        "review_copy",
    } | ({"join"} if split.startswith("chunks") else set())
    run_id = run_dir.name.removeprefix("run=")
    assert not (settings.work_root / run_id).exists()  # scratch is gone
    _check_review_copy(reader, run_dir)


def _check_review_copy(reader: ArtifactReader, run_dir: Path) -> None:
    """The review copy is published with the run, listed and hashed, and cost.json says how."""
    review = reader.document(run_dir, "cost.json")["review_copy"]
    # The lobby is H.264 in MP4: copied, in any split of the analysis.
    assert (review["mode"], review["source_codec"]) == ("copy", "h264"), review
    assert (review["width"], review["height"]) == (320, 240)  # the lobby's own size
    listed = {f["name"]: f for f in reader.document(run_dir, "manifest.json")["files"]}
    data = reader.store.get_bytes(f"{run_dir.as_posix()}/review.mp4")
    assert listed["review.mp4"]["bytes"] == review["bytes"] == len(data)
    assert listed["review.mp4"]["sha256"] == hashlib.sha256(data).hexdigest()
    assert review["source_sha256"] == reader.rows(run_dir, "evidence")[0]["source_sha256"]
    assert 0 < data.find(b"moov") < data.find(b"mdat")  # faststart


@pytest.mark.parametrize("stop", [TerminationSignal(15), KeyboardInterrupt(), SystemExit(143)])
def test_a_flow_stopped_by_a_signal_says_so_not_internal_error(stop: BaseException) -> None:
    """The worker or the service stopped under a run (found by the kill trials: a killed worker's
    run ended ``internal``, as if the code had broken)."""
    failure = failure_of(stop, "fr-1")
    assert failure.code == "processing_stopped"
    assert "was stopped" in failure.message and "execute the video again" in failure.message
