"""Flows run in-process under one session-scoped Prefect test harness (a temporary server)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from storage.catalog.database import Catalog
from storage.catalog.records import Run
from storage.catalog.runs.store import RunStore
from storage.catalog.tenants import TenantStore
from storage.catalog.videos import NewVideo, VideoStore
from synthetic import GroundTruth, lobby_scene, write_video
from tests.fixtures.settings_env import export_settings
from ves.settings import Settings


@pytest.fixture(autouse=True)
def _flows_under_prefect(prefect_harness: None) -> None:
    """Every flow test runs against the session's temporary Prefect server."""


@pytest.fixture(scope="session")
def lobby(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GroundTruth]:
    path = tmp_path_factory.mktemp("media") / "lobby.mp4"
    return path, write_video(lobby_scene(), path)


QueueRun = Callable[..., Run]


@pytest.fixture
def queue_upload_run(
    settings: Settings, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> QueueRun:
    """``queue_upload_run(path, **options)``: a queued run of an uploaded recording.

    The flow reads its settings from the environment, as a worker's flow does.
    """
    export_settings(monkeypatch, settings)
    monkeypatch.setenv("VES_ALLOW_PRIVATE_SOURCES", "true")
    tenants = TenantStore(catalog)
    tenant = tenants.find_tenant("acme") or tenants.create_tenant("acme")

    def queue(path: Path, **options: object) -> Run:
        videos = VideoStore(catalog)
        video = videos.create(
            NewVideo(tenant.tenant_id, path.name, "upload", None, {"filename": path.name})
        )
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        videos.complete_upload(
            tenant.tenant_id,
            video.video_id,
            path=str(path),
            sha256=digest,
            size=path.stat().st_size,
        )
        return RunStore(catalog).create(tenant.tenant_id, video.video_id, dict(options))

    return queue
