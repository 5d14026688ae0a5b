"""A redacted export of a really processed lobby run (mode ``motion+ocr``): it verifies offline,
its thumbnails differ from the published ones only inside the regions it lists, those regions
are the signs shown at the thumbnail's time (``synthetic`` truth), and the manifest keeps
the unredacted originals' hashes."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from PIL import Image

from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.reads import ArtifactReader
from storage.catalog.database import Catalog
from storage.catalog.records import Run
from storage.catalog.runs.store import RunStore
from synthetic import GroundTruth
from tasks.export.copy import copy_clip
from tasks.export.redact import JPEG_QUALITY, pixelate
from tasks.export.stage import ExportRequest, Selection, write_export
from tests.flows.conftest import QueueRun
from verify.bundle import verify_bundle
from ves.settings import Settings
from ves.signing import SigningKey

pytestmark = pytest.mark.slow


def _pixels(jpeg: bytes) -> np.ndarray[Any, np.dtype[np.int16]]:
    return np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB"), np.int16)


def _redone(jpeg: bytes, boxes: list[list[int]]) -> bytes:
    """The published thumbnail pixelated in ``boxes`` only, encoded as the export does."""
    rgb = np.array(Image.open(io.BytesIO(jpeg)).convert("RGB"))
    for x1, y1, x2, y2 in boxes:
        pixelate(rgb, (x1, y1, x2, y2))
    out = io.BytesIO()
    Image.fromarray(rgb).save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


def _covers(region: list[int], box: tuple[float, ...]) -> bool:
    return bool(region[0] <= box[0] + 2 and region[1] <= box[1] + 2) and bool(
        region[2] >= box[2] - 2 and region[3] >= box[3] - 2
    )


@pytest.fixture
def text_run(catalog: Catalog, queue_upload_run: QueueRun, lobby: tuple[Path, GroundTruth]) -> Run:
    queued = queue_upload_run(lobby[0], detector="motion+ocr")
    process_video(ProcessVideoParams(run_id=queued.run_id))
    run = RunStore(catalog).get(queued.run_id)
    assert run.state == "succeeded", run
    return run


def _export_text_redacted(
    settings: Settings, run: Run, source: Path, folder: Path, selection: Selection | None = None
) -> tuple[Path, SigningKey, ArtifactReader, str]:
    store, key = open_blob_store(settings), SigningKey.generate()
    request = ExportRequest(
        export_id="exp_redacted",
        run=run,
        source=source,
        source_sha256=hashlib.sha256(source.read_bytes()).hexdigest(),
        provenance={"kind": "upload"},
        selection=selection or Selection(),
        redact=frozenset({"text"}),
    )
    (folder / "work").mkdir()
    reader = ArtifactReader(store)
    sealed = write_export(request, reader, store, key, folder / "b.zip", folder / "work")
    return sealed.path, key, reader, reader.run_key(run.artifacts_path or "")


@pytest.fixture
def redacted(
    settings: Settings, text_run: Run, lobby: tuple[Path, GroundTruth], tmp_path: Path
) -> tuple[Path, SigningKey, ArtifactReader, str]:
    return _export_text_redacted(settings, text_run, lobby[0], tmp_path)


def test_a_text_redacted_export_verifies_and_changes_only_the_shown_signs(
    redacted: tuple[Path, SigningKey, ArtifactReader, str], lobby: tuple[Path, GroundTruth]
) -> None:
    bundle, key, reader, run_key = redacted
    assert verify_bundle(bundle, key.public_key_pem.encode()).ok
    with zipfile.ZipFile(bundle) as archive:
        section = json.loads(archive.read("manifest.json"))["redaction"]
        files = {name: archive.read(name) for name in section["files"]}
    assert section["applied"] == ["text"] and section["method"]["kind"] == "pixelate"
    thumbs = {p: e for p, e in section["files"].items() if p.startswith("thumbnails/")}
    assert thumbs and len(thumbs) < len(section["files"])  # clips are redacted too
    truth = lobby[1]
    for path, entry in thumbs.items():
        original = reader.store.get_bytes(f"{run_key}/thumbs/{path.rsplit('/', 1)[-1]}")
        assert hashlib.sha256(original).hexdigest() == entry["original_sha256"]
        shown = [s for s in truth.texts if s.start_s - 0.5 <= entry["t_s"] <= s.end_s + 0.5]
        boxes = [r["box"] for r in entry["regions"]]
        assert len(boxes) == len(shown), (entry, shown)
        assert all(any(_covers(b, tuple(s.box)) for b in boxes) for s in shown), (boxes, shown)
        assert files[path] == _redone(original, boxes), path  # the original, pixelated there
        diff = np.abs(_pixels(files[path]) - _pixels(original)).max(axis=2)
        for x1, y1, x2, y2 in boxes:
            assert (diff[y1:y2, x1:x2] > 8).mean() > 0.2, path  # letters pixelated away


def test_a_redacted_clip_keeps_its_originals_hash_and_each_frames_regions(
    redacted: tuple[Path, SigningKey, ArtifactReader, str], lobby: tuple[Path, GroundTruth]
) -> None:
    with zipfile.ZipFile(redacted[0]) as archive:
        section = json.loads(archive.read("manifest.json"))["redaction"]
    clips = {p: e for p, e in section["files"].items() if p.startswith("clips/")}
    exit_sign = next(s for s in lobby[1].texts if s.text == "EXIT 3")
    for entry in clips.values():
        assert len(entry["original_sha256"]) == 64
        for frame in entry["frames"]:
            assert len(frame["sha256"]) == 64
            during = exit_sign.start_s - 0.5 <= frame["t_s"] <= exit_sign.end_s + 0.5
            assert len(frame["regions"]) == 1 + during, frame  # LOBBY always, EXIT 3 in 4-9 s


def test_a_redacted_clips_original_is_the_stream_copy_of_its_window(
    redacted: tuple[Path, SigningKey, ArtifactReader, str],
    lobby: tuple[Path, GroundTruth],
    tmp_path: Path,
) -> None:
    """The hash the manifest keeps is that of the window's stream copy, which anyone holding
    the source makes again byte for byte."""
    with zipfile.ZipFile(redacted[0]) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert {c["method"] for c in manifest["clips"]} == {"re-encoded"}
    for clip in manifest["clips"]:
        again = copy_clip(lobby[0], tuple(clip["window_s"]), tmp_path / "again.mp4")
        entry = manifest["redaction"]["files"][clip["path"]]
        assert hashlib.sha256(again.path.read_bytes()).hexdigest() == entry["original_sha256"]
        assert "stream-copied" in entry["original"]


def test_a_redacted_time_range_re_encodes_that_range_only(
    settings: Settings, text_run: Run, lobby: tuple[Path, GroundTruth], tmp_path: Path
) -> None:
    """5-7 s of the lobby, text redacted: LOBBY's span (the whole video) is cut to the range,
    and only its 21 frames are redacted and re-encoded, each at its source time."""
    bundle, key, _, _ = _export_text_redacted(
        settings, text_run, lobby[0], tmp_path, Selection(start_s=5.0, end_s=7.0)
    )
    assert verify_bundle(bundle, key.public_key_pem.encode()).ok
    with zipfile.ZipFile(bundle) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        (clip,) = manifest["clips"]
        frames = _clip_times(archive.read(clip["path"]))
    assert clip["window_s"] == [5.0, 7.0] and clip["method"] == "re-encoded"
    assert [round(clip["source_start_s"] + t, 3) for t in frames] == [
        round(5.0 + i / 10, 3) for i in range(21)
    ]
    redacted_frames = manifest["redaction"]["files"][clip["path"]]["frames"]
    assert [f["t_s"] for f in redacted_frames] == pytest.approx([5.0 + i / 10 for i in range(21)])
    assert any(s["cut_to_range"] for s in manifest["spans"])


def _clip_times(data: bytes) -> list[float]:
    with av.open(io.BytesIO(data)) as container:
        return [float(f.time) for f in container.decode(video=0) if f.time is not None]
