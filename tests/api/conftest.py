"""API fixtures: a media server serving a small real video and an HLS copy, and an API whose
runs really process (the real flow, in a thread of this process)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.app import create_app
from flows.export_evidence import ExportParams, export_evidence
from flows.process_video import ProcessVideoParams, process_video
from flows.webhooks import DeliveryParams, deliver_webhook
from storage.catalog.database import Catalog
from storage.catalog.exports import Export
from storage.catalog.records import Run
from storage.catalog.tenants import TenantStore
from storage.catalog.webhooks.store import Delivery
from synthetic import SceneSpec, lobby_scene, write_video
from testkit.hls import write_hls
from testkit.live_server import serve_app
from testkit.media_server import MediaServer
from testkit.submitters import QuietSubmitter
from tests.api.helpers import add_video, wait_done
from tests.fixtures.settings_env import export_settings
from ves.errors import Unavailable
from ves.settings import Settings


class InlineSubmitter(QuietSubmitter):
    """Test double of the Prefect submitter: runs the flow at once, in a thread."""

    def __init__(self) -> None:
        self.down = False
        self.threads: list[threading.Thread] = []

    async def submit(self, run: Run, *, concurrency: int) -> str:
        if self.down:
            raise Unavailable("the orchestrator cannot take the run now (test)")
        thread = threading.Thread(target=self._process, args=(run.run_id,), daemon=True)
        thread.start()
        self.threads.append(thread)
        return str(uuid.uuid4())

    async def submit_export(self, export: Export) -> str:
        if self.down:
            raise Unavailable("the orchestrator cannot take the export now (test)")
        thread = threading.Thread(target=self._export, args=(export.export_id,), daemon=True)
        thread.start()
        self.threads.append(thread)
        return str(uuid.uuid4())

    async def submit_delivery(self, delivery: Delivery, *, swept: bool = False) -> str:
        """Send the delivery's next attempt at once, in a thread (the reaper hands over only
        those that are due)."""
        params = DeliveryParams(delivery_id=delivery.delivery_id, attempt=delivery.attempts + 1)
        thread = threading.Thread(target=deliver_webhook, args=(params,), daemon=True)
        thread.start()
        self.threads.append(thread)
        return str(uuid.uuid4())

    @staticmethod
    def _export(export_id: str) -> None:
        try:
            export_evidence(ExportParams(export_id=export_id))
        except Exception:  # the flow records the failure on the export; tests read it there
            return

    @staticmethod
    def _process(run_id: str) -> None:
        try:
            process_video(ProcessVideoParams(run_id=run_id))
        except Exception:  # the flow records the failure on the run; tests read it there
            return


@pytest.fixture(scope="module")
def lobby_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lobby")
    write_video(lobby_scene(), root / "lobby.mp4")
    (root / "junk.mp4").write_bytes(b"this is not a video at all" * 100)
    return root


@pytest.fixture
def lobby_media(lobby_root: Path) -> Iterator[MediaServer]:
    with MediaServer(lobby_root) as server:
        yield server


@pytest.fixture
def submitter() -> InlineSubmitter:
    return InlineSubmitter()


@pytest.fixture
def processing(
    prefect_harness: None,
    settings: Settings,
    catalog: Catalog,
    submitter: InlineSubmitter,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Any]:
    """``processing("acme")``: a client of that tenant on an API whose runs really process."""
    export_settings(monkeypatch, settings)
    monkeypatch.setenv("VES_ALLOW_PRIVATE_SOURCES", "true")
    tenants = TenantStore(catalog)
    with serve_app(create_app(settings, catalog, submitter)) as url:
        clients: list[httpx.Client] = []

        def client_of(name: str) -> httpx.Client:
            tenant = tenants.find_tenant(name) or tenants.create_tenant(name)
            key = tenants.create_key(tenant.tenant_id)[1]
            client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"})
            clients.append(client)
            return client

        yield client_of
        for client in clients:
            client.close()
    for thread in submitter.threads:
        thread.join(timeout=120)


@pytest.fixture
def executed(processing: Any, lobby_media: MediaServer) -> tuple[httpx.Client, str, dict[str, Any]]:
    client = processing("acme")
    video_id = add_video(client, lobby_media.url("lobby.mp4"))
    accepted = client.post(f"/api/product/videos/{video_id}/execute")
    assert accepted.status_code == 202, accepted.text
    body = accepted.json()
    assert body["state"] == "queued" and body["video_id"] == video_id
    video = wait_done(client, video_id)
    assert video["state"] == "succeeded", video["latest_run"]
    assert video["latest_run"]["run_id"] == body["run_id"]
    assert video["latest_run"]["progress"] == 1.0
    assert video["source_sha256"] is None or len(video["source_sha256"]) == 64
    return client, video_id, video


@pytest.fixture(scope="session")
def media_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("media")
    write_video(SceneSpec(duration_s=2.0), root / "clip.mp4")
    write_hls(root / "clip.mp4", root / "hls")
    (root / "not-a-playlist.m3u8").write_text("<html>hello</html>")
    return root


@pytest.fixture
def media(media_root: Path) -> Iterator[MediaServer]:
    with MediaServer(media_root) as server:
        yield server
