"""Worlds of real runs: synthetic videos with KNOWN truth, processed once by the real flow."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from ask.world import RunWorld, load_world
from flows.process_video import ProcessVideoParams, process_video
from storage.artifacts.reads import ArtifactReader
from storage.catalog.database import Catalog
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from synthetic import GroundTruth, SceneSpec, ground_truth, lobby_scene, write_video
from tests.fixtures.settings_env import export_settings
from tests.tasks.detect.test_ocr import two_signs
from ves.settings import Settings


@dataclass(frozen=True)
class Processed:
    """A synthetic video's truth, what its succeeded run knows, and its evidence table read
    straight from ``evidence.parquet`` (id -> (start_s, end_s)), to check citations against."""

    truth: GroundTruth
    world: RunWorld
    evidence: dict[str, tuple[float, float]]


def _queue_upload(catalog: Catalog, path: Path, title: str | None = None) -> tuple[str, str]:
    """A queued run of an uploaded recording (titled ``title``, else its file name):
    (run id, video id)."""
    tenants = TenantStore(catalog)
    tenant = tenants.find_tenant("acme") or tenants.create_tenant("acme")
    videos = VideoStore(catalog)
    video = videos.create(
        NewVideo(tenant.tenant_id, title or path.name, "upload", None, {"filename": path.name})
    )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    videos.complete_upload(
        tenant.tenant_id, video.video_id, path=str(path), sha256=digest, size=path.stat().st_size
    )
    return RunStore(catalog).create(tenant.tenant_id, video.video_id, {}).run_id, video.video_id


def process_scene(
    spec: SceneSpec,
    root: Path,
    title: str | None = None,
    *,
    variables: Mapping[str, str] | None = None,
) -> Processed:
    """Render ``spec``, upload it (titled ``title``, by default the file's name), run the real
    process-video flow and load the run's world.

    The flow reads its settings from the environment, as a worker's flow does (``variables``
    add to them, e.g. ``VES_CHUNK_S``); the variables are set only while it runs
    (module-scoped fixtures cannot use ``monkeypatch``).
    """
    settings = Settings(data_dir=root / "data", allow_private_sources=True)
    catalog = Catalog.from_settings(settings)
    path = root / "video.mp4"
    truth = write_video(spec, path)
    assert truth == ground_truth(spec)
    run_id, video_id = _queue_upload(catalog, path, title)
    with pytest.MonkeyPatch.context() as env:
        export_settings(env, settings)
        env.setenv("VES_ALLOW_PRIVATE_SOURCES", "true")
        for name, value in (variables or {}).items():
            env.setenv(name, value)
        published = process_video(ProcessVideoParams(run_id=run_id))
    finished = RunStore(catalog).get(run_id)
    assert finished.state == "succeeded", finished.error_message
    reader, run_dir = ArtifactReader(), settings.data_dir / published  # a local store key
    evidence = {
        row["evidence_id"]: (row["start_s"], row["end_s"])
        for row in reader.rows(run_dir, "evidence")
    }
    return Processed(truth, load_world(reader, run_dir, video_id, run_id), evidence)


@pytest.fixture(scope="module")
def lobby_world(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Processed:
    """The lobby: three movers (one dwells), "LOBBY" and "EXIT 3", a cut at 12 s."""
    return process_scene(lobby_scene(), tmp_path_factory.mktemp("lobby"))


@pytest.fixture(scope="module")
def signs_world(prefect_harness: None, tmp_path_factory: pytest.TempPathFactory) -> Processed:
    """Two signs ("OPEN DAILY" all along, "SALE 50%" 10-25 s) and two walkers, no cut."""
    return process_scene(two_signs(), tmp_path_factory.mktemp("signs"))
