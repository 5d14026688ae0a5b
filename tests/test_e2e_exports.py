"""An export through the real topology, as `make run` starts it: `ves serve` (Prefect server,
process worker, API) in its own processes. A lobby upload is executed, its evidence exported
through the `export-evidence` deployment on the worker, downloaded over HTTP, and verified by
`ves verify` offline against the key the API publishes."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from synthetic import lobby_scene, write_video
from testkit.live_server import free_port
from testkit.service import (
    create_key,
    own_env,
    register_upload,
    start_service,
    stop_service,
    wait_for_banner,
    wait_state,
    wait_video,
)
from tests.cli.test_verify import run_verify

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

FINAL = {"succeeded", "failed"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    data = tmp_path_factory.mktemp("exports-data")
    env = {
        **own_env(),
        "VES_DATA_DIR": str(data),
        "VES_PORT": str(free_port()),
        "VES_PREFECT_PORT": str(free_port()),
        "VES_LOG_LEVEL": "warning",
    }
    process = start_service(env)
    try:
        wait_for_banner(process)
        headers = {"Authorization": f"Bearer {create_key(env, 'e2e-exports')}"}
        url = f"http://127.0.0.1:{env['VES_PORT']}"
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            yield client
    finally:
        stop_service(process)


def test_an_export_made_by_the_worker_verifies_offline(
    client: httpx.Client, tmp_path: Path
) -> None:
    write_video(lobby_scene(), tmp_path / "lobby.mp4")
    video_id = register_upload(client, tmp_path / "lobby.mp4", "lobby")
    assert client.post(f"/api/product/videos/{video_id}/execute").status_code == 202
    assert wait_video(client, video_id, FINAL)["state"] == "succeeded"

    accepted = client.post(f"/api/product/videos/{video_id}/exports", json={"redact": ["text"]})
    assert accepted.status_code == 202, accepted.text
    url = f"/api/product/videos/{video_id}/exports/{accepted.json()['export_id']}"
    export = wait_state(client, url, FINAL)
    assert export["state"] == "succeeded", export["error"]

    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "evidence.zip").write_bytes(client.get(export["bundle"]["download_url"]).content)
    keys = client.get("/api/public/signing-keys").json()["keys"]
    (folder / "service.pem").write_text(keys[0]["public_key_pem"])
    checked = run_verify(folder, "evidence.zip", "--public-key", "service.pem")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.splitlines()[-1] == "VERIFIED: every check holds"
    with zipfile.ZipFile(folder / "evidence.zip") as archive:
        source = json.loads(archive.read("source.json"))
    assert source["source_type"] == "upload" and source["uploaded_at"]
    assert source["registered_by_key"] and source["uploaded_by_key"] == source["registered_by_key"]
