"""Long videos in chunks on a Dask cluster: the same evidence as on Prefect's thread pool.

``tests/flows/test_process_video.py`` checks every truth of the lobby with the lobby split into
five chunks on the default runner. Here the same split runs as Prefect tasks on a local Dask
cluster of two worker processes (prefect-dask), and must publish what the thread pool publishes:
the same frames, objects (times to the frame), texts and timeline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.blobs import open_blob_store
from storage.artifacts.reads import ArtifactReader
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from synthetic import GroundTruth
from tests.flows.conftest import QueueRun
from ves.settings import Settings

pytestmark = pytest.mark.slow

SPLIT = {"VES_CHUNK_S": "4", "VES_CHUNK_LEAD_S": "2"}  # borders at 4, 8, 12 and 16 s


def _publish(
    queue: QueueRun, path: Path, catalog: Catalog, env: pytest.MonkeyPatch, **runner: str
) -> str:
    for name, value in {**SPLIT, **runner}.items():
        env.setenv(name, value)
    run = queue(path)
    published = process_video(ProcessVideoParams(run_id=run.run_id))
    finished = RunStore(catalog).get(run.run_id)
    assert finished.state == "succeeded", finished.error_message
    return published


def _evidence(reader: ArtifactReader, run_dir: str) -> dict[str, Any]:
    objects = reader.rows(Path(run_dir), "objects", order_by="first_seen_s")
    return {
        "frames": [r["t_s"] for r in reader.rows(Path(run_dir), "frames")],
        "objects": [
            (o["class"], o["first_seen_s"], o["last_seen_s"], json.loads(o["attributes"]))
            for o in objects
        ],
        "timeline": [(r["t_s"], r["type"]) for r in reader.rows(Path(run_dir), "timeline")],
    }


def test_chunks_on_dask_processes_publish_what_threads_publish(
    queue_upload_run: QueueRun,
    lobby: tuple[Path, GroundTruth],
    catalog: Catalog,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, truth = lobby
    reader = ArtifactReader(open_blob_store(settings))
    threads = _publish(queue_upload_run, path, catalog, monkeypatch, VES_TASK_RUNNER="threads")
    dask = _publish(
        queue_upload_run,
        path,
        catalog,
        monkeypatch,
        VES_TASK_RUNNER="dask",
        VES_CHUNK_WORKERS="2",
    )
    assert _evidence(reader, dask) == _evidence(reader, threads)
    cost = reader.document(Path(dask), "cost.json")
    assert "join" in cost["stages"]  # it was split
    movers = [o for o in _evidence(reader, dask)["objects"] if o[0] != "text"]
    assert len(movers) == len(truth.objects)
