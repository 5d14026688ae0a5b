"""A review copy that fails does not fail its run: the analysis is published, ``cost.json`` says
``none`` and why, and no half-written copy is left or listed."""

from __future__ import annotations

import json
from pathlib import Path

import av
import pytest

from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.layout import read_manifest
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from synthetic import GroundTruth
from tasks.review import stage as review_stage
from tests.flows.conftest import QueueRun
from ves.settings import Settings


def test_a_review_copy_that_fails_leaves_the_run_published_and_says_why(
    queue_upload_run: QueueRun,
    lobby: tuple[Path, GroundTruth],
    settings: Settings,
    catalog: Catalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def damaged(*_: object) -> tuple[int, int]:
        raise av.error.InvalidDataError(1094995529, "Invalid data found when processing input")

    monkeypatch.setattr(review_stage, "_copy", damaged)  # the lobby is H.264: it would be copied
    queued = queue_upload_run(lobby[0])

    published = process_video(ProcessVideoParams(run_id=queued.run_id))

    assert RunStore(catalog).get(queued.run_id).state == "succeeded"
    store = open_blob_store(settings)
    review = json.loads(store.get_bytes(f"{published}/cost.json"))["review_copy"]
    assert review["mode"] == "none" and "Invalid data" in review["reason"]
    assert (review["source_codec"], review["bytes"]) == ("h264", 0)
    names = {f["name"] for f in read_manifest(store, published)["files"]}
    assert "evidence.parquet" in names
    assert not any("review" in name for name in names)
    assert not any("review" in blob.key for blob in store.list(published))
